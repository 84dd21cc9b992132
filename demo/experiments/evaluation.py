"""Designing and measuring mechanisms for one public estimate P̂ (runs inside worker processes).

A *task* is a dict (picklable, so it crosses to ``spawn`` workers): :func:`adult_task` for
a P̂ from the Adult data, :func:`synthetic_task` for a synthetic draw (:func:`synthetic_draw`).
Both return one record per (β, method, ε) from :func:`evaluate`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rldp.aggregator.design import EXACT_MAX_SYMBOLS, NON_ROBUST, SOLVER_METHODS, DesignError, design_matrix
from rldp.shared.audit import realised_epsilon, rldp_epsilon
from rldp.shared.divergence import confidence_radius, renyi_divergence
from rldp.shared.errors import one_line
from rldp.shared.information import entropy, mutual_information
from rldp.shared.tolerances import AUDIT_TOLERANCE
from rldp.shared.uncertainty import UncertaintySet

from .config import BETA, JEFFREYS, ORDER

__all__ = ["synthetic_draw", "solver_options", "evaluate", "adult_task", "synthetic_task"]


def synthetic_draw(seed: int, shape: tuple[int, int], n: int, index: int) -> tuple[np.ndarray, np.ndarray]:
    """(P*, P̂) for synthetic draw ``index`` ([LZG24, Sec 8.2], [LZG21, Sec V]).

    P* ~ Dirichlet(½, …, ½) over X = S × U (the Jeffreys prior), and P̂ is the empirical
    distribution of n i.i.d. samples from P*. Both have shape (|S|, |U|). The generator is
    seeded by (seed, |S|, |U|, n, index), so a draw is the same in every experiment and
    for any number of worker processes.
    """
    a1, a2 = shape
    rng = np.random.default_rng([int(seed), int(a1), int(a2), int(n), int(index)])
    p_star = rng.dirichlet(np.full(a1 * a2, JEFFREYS))
    p_hat = rng.multinomial(int(n), p_star) / float(n)
    return p_star.reshape(shape), p_hat.reshape(shape)


def solver_options(method: str, n_symbols: int, solver: str, time_budget: float) -> dict[str, Any]:
    """design_matrix options for the vertex-based designers (PolyOpt, NR).

    ``exact``: vertex enumeration, the paper's method (infeasible beyond 12 symbols: those
    designs fail and are omitted, as in the paper); ``cg``: column generation with
    ``time_budget`` seconds (anytime, so the result depends on the machine's speed);
    ``auto``: exact up to 12 symbols, column generation above.
    """
    if method not in SOLVER_METHODS:
        return {}
    if solver == "auto":
        solver = "exact" if n_symbols <= EXACT_MAX_SYMBOLS else "cg"
    return {"solver": "exact"} if solver == "exact" else {"solver": "cg", "time_budget": float(time_budget)}


def _design(
    method: str, uset: UncertaintySet, epsilon: float, options: Mapping[str, Any]
) -> tuple[np.ndarray | None, dict[str, Any], str | None, float]:
    """(matrix or None, parameters, failure reason or None, seconds). Failures of the
    solvers (exact PolyOpt beyond 12 symbols, an infeasible LP, cddlib's floating-point
    inconsistencies at large ε) are reported, not raised, so one bad point does not lose
    an hour of draws; anything else is a bug and propagates."""
    start = time.perf_counter()
    try:
        q, params = design_matrix(method, uset, epsilon, **options)
    except (RuntimeError, DesignError) as exc:
        return None, {}, f"{type(exc).__name__}: {one_line(exc)}", time.perf_counter() - start
    return q, params, None, time.perf_counter() - start


def evaluate(
    p_hat: np.ndarray,
    n: int,
    betas: Sequence[float],
    methods: Sequence[str],
    epsilons: Sequence[float],
    base: Mapping[str, Any],
    *,
    p_star: np.ndarray | None = None,
    solver: str = "exact",
    time_budget: float = 30.0,
) -> list[dict[str, Any]]:
    """Design every (β, method, ε) for public estimate P̂ and measure it.

    Per design: the exact robust ε over the (1 − β) confidence set (``eps_audited``; for NR
    its leakage over the set it does not protect) — a certified design above its ε is
    recorded as failed —, I_P̂(X;Y) (``mi``, nats) and NMI = I_P̂/H_P̂ (``nmi``,
    [LZG24, Sec 8]); with P* given, I_P*(X;Y) (``mi_true``), I_P*/H_P* (``nmi_true``) and
    the realised ε* (``eps_star``, [LZG24, Sec 8.3]).
    PolyOpt and NR use ``solver`` (see :func:`solver_options`); column generation also
    records its proven upper bound on I_P̂ as ``nmi_upper_bound``; each of their designs is
    warm-started with the method's design at the previous, smaller ε (its rows lie in Γ_ε).
    The uncertainty set is built once per β and shared by all methods.
    """
    h_hat = entropy(p_hat)
    h_star = entropy(p_star) if p_star is not None else None
    out: list[dict[str, Any]] = []
    for beta in betas:
        uset = UncertaintySet.from_confidence(p_hat, int(n), float(beta), ORDER)
        for method in methods:
            previous: tuple[float, np.ndarray] | None = None
            for eps in epsilons:
                rec: dict[str, Any] = dict(base, beta=float(beta), method=method, epsilon=float(eps))
                options = solver_options(method, p_hat.size, solver, time_budget)
                q, params = _design_into(rec, method, uset, float(eps), options, previous)
                if q is not None:
                    previous = (float(eps), q)
                    if _passes_audit(rec, q, uset, method, float(eps)):
                        _measure(rec, q, params, p_hat, h_hat, p_star, h_star)
                out.append(rec)
    return out


def _design_into(
    rec: dict[str, Any],
    method: str,
    uset: UncertaintySet,
    eps: float,
    options: dict[str, Any],
    previous: tuple[float, np.ndarray] | None,
) -> tuple[np.ndarray | None, dict[str, Any]]:
    """Design ``method`` at ``eps``: (its matrix or None, its parameters); its time, solver and any failure recorded."""
    if options and previous is not None and previous[0] < eps:
        # Γ_ε grows with ε: the design at the smaller ε seeds this one, so the
        # curve never drops because an anytime solver stopped early.
        options = dict(options, warm_start=previous[1])
    q, params, failure, seconds = _design(method, uset, eps, options)
    rec["seconds"] = seconds
    if options:
        rec["solver"] = options["solver"]
    if q is None:
        rec["failed"] = failure
    return q, params


def _passes_audit(rec: dict[str, Any], q: np.ndarray, uset: UncertaintySet, method: str, eps: float) -> bool:
    """The exact robust audit [LZG24, Thm 1]. A certified method whose design fails it counts as a failed design:
    design() would refuse to publish it."""
    rec["eps_audited"] = rldp_epsilon(q, uset)[0]
    if method not in NON_ROBUST and rec["eps_audited"] > eps + AUDIT_TOLERANCE:
        rec["audit_excess"] = rec["eps_audited"] - eps
        rec["failed"] = (
            "AuditFailed: the design's audited epsilon exceeds the claimed epsilon "
            f"by more than {AUDIT_TOLERANCE:g} nats (design() would refuse it)"
        )
        return False
    return True


def _measure(
    rec: dict[str, Any],
    q: np.ndarray,
    params: Mapping[str, Any],
    p_hat: np.ndarray,
    h_hat: float,
    p_star: np.ndarray | None,
    h_star: float | None,
) -> None:
    """Add the utility (under P̂, and under P* if known) and the realised ε* to ``rec``."""
    mi = mutual_information(q, p_hat)
    rec["mi"] = mi
    rec["nmi"] = mi / h_hat if h_hat > 0 else 0.0
    bound = params.get("upper_bound")
    if bound is not None and h_hat > 0:
        rec["nmi_upper_bound"] = min(float(bound) / h_hat, 1.0)
    if p_star is not None:
        mi_true = mutual_information(q, p_star)
        rec["mi_true"] = mi_true
        rec["nmi_true"] = mi_true / h_star if h_star else 0.0
        rec["eps_star"] = realised_epsilon(q, p_star)


def adult_task(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Evaluate the designs for one P̂ of the Adult data (``spec["p_hat"]``)."""
    return evaluate(
        np.asarray(spec["p_hat"]),
        spec["n"],
        spec["betas"],
        spec["methods"],
        spec["epsilons"],
        spec["base"],
        solver=spec["solver"],
        time_budget=spec["time_budget"],
    )


def synthetic_task(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Evaluate the designs for one synthetic draw; with ``truth`` also under P*, with
    ``membership`` also whether P* lies in the confidence set."""
    shape, n = tuple(spec["shape"]), int(spec["n"])
    p_star, p_hat = synthetic_draw(spec["seed"], shape, n, spec["draw"])
    base = dict(spec["base"], draw=int(spec["draw"]))
    if spec.get("membership"):
        # Is P* in the (1 − β) confidence set F = {P : D₂(P̂‖P) ≤ B} ([LZG24, eq. 9])?
        radius = confidence_radius(n, BETA, p_hat.size, ORDER)
        div = float(renyi_divergence(p_hat.ravel(), p_star.ravel(), ORDER))
        base.update(
            divergence=div, radius=radius, in_F=bool(div <= radius), empty_cells=int(np.count_nonzero(p_hat == 0))
        )
    return evaluate(
        p_hat,
        n,
        spec["betas"],
        spec["methods"],
        spec["epsilons"],
        base,
        p_star=p_star if spec.get("truth") else None,
        solver=spec["solver"],
        time_budget=spec["time_budget"],
    )
