"""The experiments of [KM19] (distribution privacy, the coupling mechanism): ``distp-example``, ``distp-adult``.

[KM19] has no experimental section; what it shows concretely is Example 2 with Fig 2 — a coupling of
λ₀ = (0.2, 0.5, 0.3) with λ₁ = (0.3, 0.2, 0.5) under |x − x′| (EMD 0.3) and the mechanism it defines.

* ``distp-example`` — that example computed (the optimal coupling by ``ot.emd``, the EMD, the mechanism
  A(y|x) = γ(x, y)/λ₀(x)), then what the paper argues in prose: the smallest δ at each ε of (ε, δ)-DistP
  between λ₀ and λ₁ [KM19, Def 3] for the coupling mechanism and for GRR on X, exactly at the λ's and
  over the 95 % confidence set of n = 1,000 public records per experiment (the RLDP sets: the coupling
  is exact only at P̂), and the expected loss E|X − Y| [KM19, Def 17] at each (ε, 0)-DistP guarantee.
* ``distp-adult`` — on Adult, θ = sex or race, X = relationship or occupation (P̂ from adult.data):
  the coupling mechanism (exactly private at P̂; and designed robustly over the 95 % set at (ε, 0)),
  GRR on X (ε-LDP on X, so (ε, 0)-DistP for every distribution) and the optimal ε-LDP mechanism w.r.t.
  S at P̂ (PolyOpt under notion rldp with radius 0: (ε, 0)-DistP between the P̂_X|θ ≡ ε-LDP w.r.t. S at
  P̂). Utility: I(X;Y) and the expected Hamming loss (X is nominal; Y read as X for the coupling and GRR,
  decoded by the Bayes rule for every method). Privacy: (ε, δ) audited at P̂, over the 95 % set, and
  under adult.test's distribution. The coupling uses the Hamming cost (nominal attributes).

Figures and tables: :mod:`.km19_plots`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rldp.aggregator.design import (
    DesignError,
    cost_matrix,
    design,
    design_matrix,
    expected_loss,
    grr_matrix,
    optimal_coupling,
)
from rldp.aggregator.design.solvers.coupling import design_coupling, released_information
from rldp.shared.audit import distp_delta, distp_epsilon, robust_distp_delta, robust_distp_epsilon
from rldp.shared.errors import one_line
from rldp.shared.information import entropy, mutual_information
from rldp.shared.records import Alphabet
from rldp.shared.uncertainty import UncertaintySet

from ..datasets import load_adult
from .config import BETA, N_ADULT, ORDER, Config, Result
from .evaluation import solver_options
from .stats import row

__all__ = [
    "LAMBDA0",
    "LAMBDA1",
    "EXAMPLE_N",
    "ADULT_DISTP_PAIRS",
    "decoded_loss",
    "released_information",
    "run_example",
    "run_adult",
]

LAMBDA0 = np.array([0.2, 0.5, 0.3])  # [KM19, Fig 2]: the original distribution
LAMBDA1 = np.array([0.3, 0.2, 0.5])  # … and the target
EXAMPLE_N = 1000  # public records behind the example's λ's, for the robust curves (our choice)
EXAMPLE_GRR = (1.0, 2.0)  # GRR levels whose δ(ε) curves are drawn
EXAMPLE_DELTA_EPS = tuple(float(e) for e in np.round(np.linspace(0.0, 1.5, 31), 3))
EXAMPLE_LOSS_EPS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
ADULT_DISTP_PAIRS: tuple[tuple[str, str], ...] = (
    ("sex", "relationship"),
    ("sex", "occupation"),
    ("race", "relationship"),
    ("race", "occupation"),
)
ADULT_EPS = (0.25, 0.5, 1.0, 2.0, 4.0)
ADULT_EPS_QUICK = (0.5, 1.0, 2.0)
ADULT_METHODS = ("coupling", "coupling-robust", "grr", "polyopt")
POLYOPT_BUDGET = 10.0  # seconds of column generation per PolyOpt design above 12 symbols (converges sooner)


# ----------------------------------------------------------------------------- measures


def decoded_loss(matrix: np.ndarray, p: np.ndarray, cost: np.ndarray) -> float:
    """E c(X, û(Y)) with the Bayes decoder û(y) = argmin_x̂ Σ_u P(u, y) c(u, x̂): the loss of the best
    guess of X from Y (for any output alphabet)."""
    joint = _output_joint(matrix, p)  # (|U|, |Y|)
    return float(np.min(cost.T @ joint, axis=0).sum())


def _output_joint(matrix: np.ndarray, p: np.ndarray) -> np.ndarray:
    n_theta, k = p.shape
    q = np.tile(matrix, (1, n_theta)) if matrix.shape[1] == k else matrix
    blocks = q.reshape(q.shape[0], n_theta, k)  # [y, θ, u]
    out: np.ndarray = np.einsum("ysu,su->uy", blocks, p)
    return out


# ----------------------------------------------------------------------------- distp-example


def _example_rows(name: str) -> list[dict[str, Any]]:
    c = cost_matrix("absolute", 3)
    gamma, value = optimal_coupling(LAMBDA0, LAMBDA1, c)
    key = {"panel": "coupling", "n_sensitive": 2, "n_released": 3, "method": "coupling"}
    rows = [row(name, key, "emd", value, 1)]
    mechanism = gamma / LAMBDA0[:, None]  # [x, y] = A(y | x) = γ(x, y)/λ₀(x)
    for x in range(3):
        for y in range(3):
            rows.append(row(name, key, f"gamma_{x + 1}{y + 1}", float(gamma[x, y]), 1))
            rows.append(row(name, key, f"A_{x + 1}{y + 1}", float(mechanism[x, y]), 1))
    rows.append(row(name, key, "expected_loss", 0.5 * value, 1))  # P̂_θ = ½; the λ₁ rows are the identity
    return rows


def run_example(cfg: Config) -> Result:
    """``distp-example``: Example 2 / Fig 2 of [KM19], δ vs ε and the expected loss (see the module)."""
    name = "distp-example"
    p_hat = np.vstack([LAMBDA0, LAMBDA1]) / 2
    exact, robust = UncertaintySet(p_hat, 0.0, ORDER), UncertaintySet.from_confidence(p_hat, EXAMPLE_N, BETA, ORDER)
    coupling, fig2 = design_coupling(exact, target=LAMBDA1)
    mechanisms = {"coupling": coupling, **{f"grr-{g:g}": grr_matrix(3, g) for g in EXAMPLE_GRR}}
    rows = _example_rows(name)
    for method, q in mechanisms.items():
        for eps in cfg.epsilons or EXAMPLE_DELTA_EPS:
            key = {"panel": "delta", "n_sensitive": 2, "n_released": 3, "method": method, "epsilon": eps}
            rows.append(row(name, key, "delta_p_hat", distp_delta(q, p_hat, eps)[0], 1))
            robust_key = dict(key, n=EXAMPLE_N, beta=BETA)
            rows.append(row(name, robust_key, "delta_robust", robust_distp_delta(q, robust, eps)[0], 1))
    shape = {"panel": "loss", "n_sensitive": 2, "n_released": 3}
    rows.append(row(name, dict(shape, method="coupling", epsilon=0.0), "loss", fig2["expected_loss"], 1))
    for eps in EXAMPLE_LOSS_EPS:
        grr = grr_matrix(3, eps)  # ε-LDP on X: (ε, 0)-DistP for every pair of distributions
        loss = expected_loss(grr, p_hat, "absolute")
        rows.append(row(name, dict(shape, method="grr", epsilon=eps), "loss", loss, 1))
        _, params = design_coupling(robust, leaks=_leaks_over(robust, eps))
        key = dict(shape, method="coupling-robust", epsilon=eps, n=EXAMPLE_N, beta=BETA)
        rows.append(row(name, key, "loss", params["expected_loss"], 1))
        rows.append(row(name, key, "mix", params["mix"], 1))
    titles = {
        "coupling": "[KM19, Fig 2(b)]: the optimal coupling of λ₀ and λ₁",
        "delta": "smallest δ of (ε, δ)-DistP between λ₀ and λ₁",
        "loss": "expected loss E|X − Y| at (ε, 0)-DistP",
    }
    settings = {
        "lambda0": LAMBDA0.tolist(),
        "lambda1": LAMBDA1.tolist(),
        "cost": "absolute",
        "robust_n": EXAMPLE_N,
        "beta": BETA,
        "order": ORDER,
        "grr_levels": list(EXAMPLE_GRR),
        "epsilons": list(cfg.epsilons or EXAMPLE_DELTA_EPS),
    }
    notes = [
        "P̂ = (λ₀, λ₁)/2 (θ ∈ {0, 1} equally likely); 'over F' = the 95 % confidence set of n = "
        f"{EXAMPLE_N} public records (Rényi order 2), the RLDP uncertainty set",
        "coupling-robust: the coupling designed over F at (ε, 0), mixed with the independent coupling as "
        "little as the distp audit allows (rldp.aggregator.design.solvers.coupling)",
    ]
    methods = ["coupling", "coupling-robust", *(f"grr-{g:g}" for g in EXAMPLE_GRR), "grr"]
    return Result(name, rows, [], list(titles), titles, methods, settings, notes)


def _leaks_over(uncertainty: UncertaintySet, epsilon: float) -> Callable[[np.ndarray], bool]:
    """Whether a matrix fails (ε, 0)-DistP over the set (the coupling designer's calibration test)."""

    def leaks(matrix: np.ndarray) -> bool:
        return robust_distp_delta(matrix, uncertainty, epsilon)[0] > 0.0

    return leaks


# ----------------------------------------------------------------------------- distp-adult


def _privacy(q: np.ndarray, eps: float, p_hat: np.ndarray, uset: UncertaintySet, p_test: np.ndarray) -> dict:
    return {
        "eps_p_hat": distp_epsilon(q, p_hat, 0.0)[0],
        "delta_p_hat": distp_delta(q, p_hat, eps)[0],
        "eps_robust": robust_distp_epsilon(q, uset, 0.0)[0],
        "delta_robust": robust_distp_delta(q, uset, eps)[0],
        "eps_test": distp_epsilon(q, p_test, 0.0)[0],
        "delta_test": distp_delta(q, p_test, eps)[0],
    }


def _designs(
    alphabet: Alphabet, p_hat: np.ndarray, eps: float, cfg: Config, warm: dict[str, np.ndarray]
) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """method -> (Q, outputs as released values or None) at ε for one pair."""
    common: dict[str, Any] = {
        "alphabet": alphabet,
        "public_distribution": p_hat,
        "epsilon": eps,
        "notion": "distp",
        "cost": "hamming",
    }
    exact = design("coupling", radius=0.0, **common)
    robust = design("coupling", n=N_ADULT, beta=BETA, **common)
    options = solver_options("polyopt", p_hat.size, cfg.polyopt_solver or "auto", min(cfg.time_budget, POLYOPT_BUDGET))
    if "polyopt" in warm and "solver" in options:
        options["warm_start"] = warm["polyopt"]
    polyopt, _ = design_matrix("polyopt", UncertaintySet(p_hat, 0.0, ORDER), eps, **options)
    warm["polyopt"] = polyopt
    return {
        "coupling": (np.array(exact["matrix"]), np.array(exact["parameters"]["outputs"])),
        "coupling-robust": (np.array(robust["matrix"]), np.array(robust["parameters"]["outputs"])),
        "grr": (grr_matrix(p_hat.shape[1], eps), np.arange(p_hat.shape[1])),
        "polyopt": (polyopt, None),
    }


def run_adult(cfg: Config) -> Result:
    """``distp-adult``: coupling vs GRR vs optimal ε-LDP w.r.t. S at P̂ on Adult (see the module)."""
    name = "distp-adult"
    eps_grid: Sequence[float] = cfg.epsilons or (ADULT_EPS_QUICK if cfg.quick else ADULT_EPS)
    pairs = ADULT_DISTP_PAIRS[:1] if cfg.quick else ADULT_DISTP_PAIRS
    data, test = load_adult("data"), load_adult("test")
    rows: list[dict[str, Any]] = []
    titles: dict[str, str] = {}
    notes: list[str] = []
    for s, u in pairs:
        alphabet = Alphabet.from_table(data, s, [u])
        p_hat, p_test = alphabet.empirical_distribution(data), alphabet.empirical_distribution(test)
        uset = UncertaintySet.from_confidence(p_hat, N_ADULT, BETA, ORDER)
        hamming = cost_matrix("hamming", p_hat.shape[1])
        panel = f"{s}/{u}"
        titles[panel] = f"θ = {s} ({p_hat.shape[0]}), X = {u} ({p_hat.shape[1]})"
        h_u = entropy(p_hat.sum(axis=0))
        base = {"panel": panel, "n_sensitive": p_hat.shape[0], "n_released": p_hat.shape[1], "n": N_ADULT}
        warm: dict[str, np.ndarray] = {}
        for eps in sorted(eps_grid):
            try:
                designs = _designs(alphabet, p_hat, float(eps), cfg, warm)
            except (DesignError, RuntimeError) as exc:
                notes.append(f"{panel} at ε = {eps:g}: {type(exc).__name__}: {one_line(exc)}")
                continue
            for method, (q, outputs) in designs.items():
                key = dict(base, beta=BETA, method=method, epsilon=float(eps))
                mi = released_information(q, p_hat)
                stats = {"mi_u": mi, "nmi_u": mi / h_u, "mi": mutual_information(q, _input(q, p_hat))}
                stats["loss_decoded"] = decoded_loss(q, p_hat, hamming)
                if outputs is not None:  # Y is a released value: its loss as read [KM19, Def 17]
                    stats["loss"] = expected_loss(q, p_hat, "hamming", outputs)
                stats.update(_privacy(q, float(eps), p_hat, uset, p_test))
                rows += [row(name, key, k, v, 1) for k, v in stats.items()]
    settings = {
        "epsilons": list(eps_grid),
        "pairs": [list(p) for p in pairs],
        "beta": BETA,
        "order": ORDER,
        "n": N_ADULT,
        "cost": "hamming",
        "polyopt": f"PolyOpt under notion rldp with radius 0 (≡ optimal ε-LDP w.r.t. S at P̂), column generation "
        f"above 12 symbols with {min(cfg.time_budget, POLYOPT_BUDGET):g} s",
        "test": "adult.test (16,281 rows)",
    }
    return Result(name, rows, [], list(titles), titles, list(ADULT_METHODS), settings, notes)


def _input(q: np.ndarray, p_hat: np.ndarray) -> np.ndarray:
    """The distribution of what the mechanism reads: P̂ over S × U, or P̂_U when S is latent."""
    return p_hat.sum(axis=0) if q.shape[1] == p_hat.shape[1] else p_hat
