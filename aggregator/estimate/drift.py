"""Drift watch: does the reporting population still lie in the uncertainty set F the claim rests on?

A robust claim — ``rldp``, ``distp``, ``lip``, ``alip``, ``srlip``, and ``ldp`` with an uncertainty
set — holds for every population P in F = {P : D_α(P̂ ‖ P) ≤ B} [LZG24, eq 10], and for no other
population in particular. :func:`watch` reads the report counts c_y of one mechanism and gives:

**(a) The realised ε* shown** [LZG24, Sec 8.3]: ε*(θ) = max_{y, s₁ ≠ s₂} log(P(y|s₁)/P(y|s₂)) with
P(y|s) = Σ_u Q(y|s,u) θ_u|s (:func:`rldp.shared.audit.realised_epsilon`). For ``rldp`` and ``ldp`` over F
it is the notion's own ε at that population; for ``distp`` it bounds the ε at every δ; for ``lip``/``alip``
both lifts P(y|s)/P(y) and P(y)/P(y|s) are at most e^{ε*} (P(y) is a mixture of the P(y|s′)). For
``srlip`` (drift applies at radius 0 only) it is the LDP-w.r.t.-S leakage, not the side-channel lifts the
notion also bounds. Three figures (:mod:`.realised`): a calibrated point — ε* at the maximum a-posteriori
θ under κ = 100 pseudo-reports from P̂, not the plug-in at the maximum-likelihood θ̂, which unresolved rare
cells bias far upwards; none when Q's rank < |X| (not identified) — and the 95 % interval [L, U] below.

**The interval over the estimate's 95 % confidence region.**
The region is the box of the per-cell intervals made simultaneous by Bonferroni: each cell's
interval widened about θ̂ by z_{1−0.05/(2|X|)} / z_{0.975} (for a non-identifiable Q the
partial-identification intervals come from one simultaneous box for P_Y already and are used as
they are). The box contains the true θ with probability ≥ 95 % (asymptotically, like the intervals).
Over a box the blocks θ_s· of different s vary independently and P(y|s) depends only on θ_s·, so
max over the box of P(y|s₁)/P(y|s₂) = max_box P(y|s₁) / min_box P(y|s₂) exactly. Each is a
linear-fractional maximum Σ a_u x_u / Σ x_u over l ≤ x ≤ h, attained at a threshold vertex
(x_u = h_u for the j largest a_u, l_u for the rest), so the j = 0…|U| candidates give it exactly
(:func:`~.realised.box_ratio_max`; the watch finds the same vertex by Dinkelbach's iteration,
:func:`~.realised.box_ratio_extremes`, which sorts nothing). The box ignores Σθ = 1, which only enlarges it: U, the maximum over
the box, is ≥ ε*(θ) with probability ≥ 95 %. L = max_{y,s₁≠s₂} log(min_box P(y|s₁) / max_box P(y|s₂))
≤ min over the box of ε* (a max of mins is ≤ the min of the max), so L ≤ ε*(θ) ≤ U on the same event.

**(b) The decision: anytime-valid evidence, robust to forged reports** (:mod:`.evidence`). The watch
looks after every batch for a collection's whole life, at reports anyone can upload, so it rejects
only when log E = n·min_{C_γ} KL(q̂ ‖ m) − ρ_K(n) ≥ ln(1/a_w): up to a fraction γ (the contamination
budget) of the reports may be forged, every look is counted (Ville's inequality), and the w-th window
of a mechanism is tested at a_w = a/(w(w + 1)) so that Σ_w a_w = a over its life. A window is judged
only once it holds ``min_reports`` reports. ``p_value`` is min(1, w(w + 1)/E): ≤ a exactly when rejected.

**(c) The one-look statistic** (:func:`projection_statistic`), shown beside it for a single look. With q̂ = c/n and f(P) = KL(q̂ ‖ QP),

    T = 2n · (min_{P ∈ F} f(P) − min_{P ∈ Δ} f(P)),

the likelihood ratio of "θ ∈ F" against "θ anywhere". Under H0 the true θ is in F, so the first
minimum is ≤ f(θ), and the second is ≥ the minimum over the affine hull of the simplex; hence
T ≤ 2n (f(θ) − min_aff f), the likelihood ratio of the simple hypothesis θ against a model whose
image {Qθ'} has dimension r − 1 (r = rank Q), which is asymptotically χ²_{r−1} (Wilks). So
P(T > χ²_{r−1, 1−a}) ≤ a asymptotically for every θ ∈ F: the false-alarm rate is at most a
(conservative inside F, where T is usually 0). The p-value is P(χ²_{r−1} ≥ T).

Both minimisations are convex (f is convex in P, and F is convex: D_α is convex in its second
argument [vEH14, Thm 12]). The computed T must not exceed the true one, so:
the second minimum is replaced by f at a point of Δ (≥ it; the estimate θ̂ or the solver's point),
and the first by a certified lower bound, f(P) + min_{R ∈ F} ∇f(P)·(R − P) ≤ min_F f for any P
(convexity), whose inner minimum is the Rényi ball's support function — the same Lagrange search as
the exact audit, rounded downwards (:meth:`UncertaintySet.extremes`). The solver (an interior-point
method, :mod:`.ball_fit`) only decides how tight that bound is, i.e. the test's power, never its validity.

A latent S: the reports identify P_U only. H0 implies D_α(P̂_U ‖ P_U) ≤ D_α(P̂ ‖ P) ≤ B (data
processing), so the same test runs on the U marginal; ε* is then not identified (it depends on
P_U|s, which the reports do not reveal) and is reported as None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rldp.shared.collection import DEFAULT_CONTAMINATION as _DEFAULT_CONTAMINATION
from rldp.shared.collection import DRIFT_MIN_REPORTS
from rldp.shared.document import alphabet as document_alphabet
from rldp.shared.document import epsilon as document_epsilon
from rldp.shared.document import (
    mechanism_matrix,
    notion,
    per_report_layer,
    public_distribution,
    report_matrix,
    uncertainty_parameters,
)
from rldp.shared.errors import ValidationError
from rldp.shared.notions import lookup
from rldp.shared.uncertainty import UncertaintySet

from .ball_fit import ball_fit, certified_lower_bound, kl_value
from .estimator import estimate_distribution
from .evidence import evidence as anytime_evidence
from .evidence import spent_significance
from .realised import realised, realised_text
from .result import Estimate

__all__ = [
    "DEFAULT_CONTAMINATION",
    "DEFAULT_MIN_REPORTS",
    "DRIFT_SIGNIFICANCE",
    "Drift",
    "drift_scope",
    "projection_statistic",
    "watch",
]

#: The test's default significance level a: the false-alarm rate it allows over a mechanism's whole life.
DRIFT_SIGNIFICANCE = 0.05
#: The default contamination budget γ and fewest reports judged (rldp.shared.collection, where they are defined).
DEFAULT_CONTAMINATION = _DEFAULT_CONTAMINATION
DEFAULT_MIN_REPORTS = DRIFT_MIN_REPORTS


@dataclass(frozen=True)
class Drift:
    """The drift watch's answer for one mechanism's reports (see the module docstring)."""

    notion: str
    claimed_epsilon: float
    realised_epsilon: float | None  # the calibrated point (.realised; None: S latent or Q's rank < |X|)
    realised_epsilon_upper: float | None  # U: ≥ ε* over the 95 % region
    statistic: float  # T, the one-look likelihood-ratio statistic
    dof: int  # r − 1
    one_look_p_value: float  # P(χ²_{r−1} ≥ T): valid for a single look only
    significance: float  # a
    n: int
    claim_text: str
    contamination: float = 0.0  # γ
    min_reports: int = 0  # the fewest reports a window is judged with
    sequence: int = 1  # w: the mechanism's w-th window (tested at a / (w (w + 1)))
    log_evalue: float = 0.0  # log E (.evidence), certified from below
    threshold: float = 0.0  # ln(1 / a_w)
    realised_epsilon_lower: float | None = None  # L: ≤ ε* over the 95 % region

    @property
    def judged(self) -> bool:
        """Whether the window holds enough reports to be judged (``min_reports``)."""
        return self.n >= self.min_reports

    @property
    def rejected(self) -> bool:
        """Whether H0 (the honest reports come from F, up to γ of them forged) is rejected: anytime-valid
        at level a over every look and every window of the mechanism."""
        return self.judged and self.log_evalue >= self.threshold

    @property
    def p_value(self) -> float:
        """min(1, w(w + 1)/E): ≤ a exactly when rejected; 1 while the window is not judged."""
        if not self.judged:
            return 1.0
        return min(1.0, math.exp(min(0.0, -self.log_evalue) + math.log(self.sequence * (self.sequence + 1))))

    @property
    def statement(self) -> str:
        """One plain line saying what the numbers mean."""
        star = realised_text(self.realised_epsilon, self.realised_epsilon_lower, self.realised_epsilon_upper)
        if not self.judged:
            return (
                f"not judged yet: {self.n} reports of the {self.min_reports} a window needs before the watch "
                f"decides; {star}"
            )
        if self.rejected:
            return (
                f"the reporting population no longer looks like P̂ (anytime p = {self.p_value:.2g} ≤ "
                f"{self.significance:g}, with up to {self.contamination:g} of the reports forged): "
                f"the claim {self.claim_text} may not hold for it; {star}"
            )
        return f"no evidence that the reporting population left F around P̂ (anytime p = {self.p_value:.2g}); {star}"

    def to_dict(self) -> dict[str, Any]:
        """The API's ``drift`` object (JSON-ready: an infinite bound is null)."""
        return {
            "notion": self.notion,
            "claimed_epsilon": self.claimed_epsilon,
            "claim": self.claim_text,
            "realised_epsilon": _finite(self.realised_epsilon),
            "realised_epsilon_lower": _finite(self.realised_epsilon_lower),
            "realised_epsilon_upper": _finite(self.realised_epsilon_upper),
            "statistic": self.statistic,
            "dof": self.dof,
            "one_look_p_value": self.one_look_p_value,
            "p_value": self.p_value,
            "log_evalue": self.log_evalue,
            "threshold": self.threshold,
            "rejected": self.rejected,
            "judged": self.judged,
            "alpha": self.significance,
            "contamination": self.contamination,
            "min_reports": self.min_reports,
            "sequence": self.sequence,
            "n": self.n,
            "statement": self.statement,
        }


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _num(value: float) -> str:
    return "∞" if not math.isfinite(value) else f"{value:.3g}"


def drift_scope(doc: Mapping[str, Any]) -> str | None:
    """None when the document's claim rests on an uncertainty set F (drift applies); else why not."""
    kind = notion(doc)
    privacy = doc.get("privacy") or {}
    entry = lookup(kind)  # whether its claim rests on F: the notion's (ldp only when its document has one)
    if not entry.rests_on_uncertainty(privacy):
        return (
            f"notion {kind!r} without an uncertainty set makes no assumption on the population "
            "(its claim holds for every distribution): nothing to drift from"
        )
    radius = uncertainty_parameters(doc)["radius"]
    if math.isinf(radius):
        return "the uncertainty set F is every distribution (radius null): nothing to drift from"
    return entry.drift_exemption(radius)  # srlip over F > {P̂}: audited as ε-LDP w.r.t. the input


def _claim_text(doc: Mapping[str, Any]) -> str:
    return lookup(notion(doc)).drift_claim(doc["privacy"], document_epsilon(doc))


# --------------------------------------------------------------------------- (b) the test


def projection_statistic(
    report_matrix: Any, counts: Any, ball: UncertaintySet, estimate: Any | None = None, rank: int | None = None
) -> tuple[float, int]:
    """(T, r − 1): the test statistic of H0 θ ∈ F and its χ² degrees of freedom (module docstring).

    ``report_matrix`` is the distribution of one report given x (|Y| × |X|, columns summing to 1),
    ``counts`` the reports per output, ``ball`` F over X flattened to one row (shape (1, |X|)),
    ``estimate`` a point of the simplex near the maximum-likelihood θ̂ (default: P̂). T is never
    larger than the exact statistic (a certified lower bound of min_F minus an upper bound of min_Δ).
    ``rank``: the rank r of the report matrix if known (an estimate has it), else computed (an SVD).
    """
    q = np.asarray(report_matrix, dtype=float)
    c = np.asarray(counts, dtype=float)
    if q.ndim != 2 or c.shape != (q.shape[0],):
        raise ValidationError(f"counts must have one entry per output ({q.shape[0]}); got shape {c.shape}")
    if ball.public_distribution.shape != (1, q.shape[1]):
        raise ValidationError(
            f"ball must be over the {q.shape[1]} inputs as one row; got {ball.public_distribution.shape}"
        )
    n = float(c.sum())
    if n <= 0:
        raise ValidationError("the drift test needs at least one report")
    qhat = c / n
    live = q.sum(axis=1) > 0  # outputs no input can produce carry no information
    dof = max((int(np.linalg.matrix_rank(q[live])) if rank is None else int(rank)) - 1, 0)
    p_hat = ball.public_distribution.ravel()
    theta = p_hat if estimate is None else np.clip(np.asarray(estimate, dtype=float).ravel(), 0.0, None)
    theta = theta / theta.sum()
    polished = _em(qhat, q, theta)
    point = ball_fit(qhat, q, ball, polished, n)
    bound = max(certified_lower_bound(qhat, q, point, ball), certified_lower_bound(qhat, q, p_hat, ball))
    # min over the simplex: f at any point of it is an upper bound (the estimate, or the F point).
    floor = min(kl_value(qhat, q, x) for x in (theta, polished, point))
    return max(0.0, 2.0 * n * (bound - floor)), dof


def _em(qhat: np.ndarray, q: np.ndarray, theta: np.ndarray, steps: int = 300) -> np.ndarray:
    """EM steps θ ← θ ⊙ Qᵀ(q̂/Qθ) from ``theta``: each lowers f (monotone), so f at the result is a
    tighter upper bound of min_Δ f; started inside the simplex's interior so no cell is stuck at 0.
    Stops once a step lowers f by less than 10⁻⁶ nats (2·10⁻⁶·n on the T scale of n reports is far
    below any threshold; started from the estimator's converged θ̂ that is after a step or two — the
    steps are |Y|·|X| work each, seconds at |X| = 4,000)."""
    theta = 0.99 * theta + 0.01 / theta.size
    seen = qhat > 0
    qs, hs = (q, qhat) if seen.all() else (q[seen], qhat[seen])  # no copy of Q when every output was seen
    before = math.inf
    for _ in range(steps):
        pi = np.maximum(qs @ theta, 1e-300)
        value = float(np.sum(hs * (np.log(hs) - np.log(pi))))
        if before - value < 1e-6:
            break
        before = value
        theta = theta * (qs.T @ (hs / pi))
        theta /= theta.sum()
    return theta


def _p_value(statistic: float, dof: int) -> float:
    if dof == 0 or statistic <= 0:
        return 1.0
    from scipy.stats import chi2

    return float(chi2.sf(statistic, dof))


# --------------------------------------------------------------------------- the entry point


def _joint_box(box: tuple[np.ndarray, np.ndarray] | None, latent: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """F's box over what the reports identify, as one row: X's cells, or U's when S is latent (the sums over S,
    at most 1: P_u ≤ 1 holds anyway)."""
    if box is None:
        return None
    if latent:
        return np.minimum(box[0].sum(axis=0, keepdims=True), 1.0), np.minimum(box[1].sum(axis=0, keepdims=True), 1.0)
    return box[0].reshape(1, -1), box[1].reshape(1, -1)


def watch(
    doc: Mapping[str, Any],
    counts: Any,
    estimate: Estimate | None = None,
    significance: float = DRIFT_SIGNIFICANCE,
    *,
    contamination: float = DEFAULT_CONTAMINATION,
    min_reports: int = DEFAULT_MIN_REPORTS,
    sequence: int = 1,
    reports: np.ndarray | None = None,
) -> Drift:
    """The drift watch for a validated document and its report counts (raises ValidationError when
    the document's claim rests on no F: see :func:`drift_scope`).

    ``estimate`` is the estimate of P_X from these counts (computed by EM with delta intervals if
    None; for a latent S, of P_U with shape (1, |U|)). ``significance`` is the level a over the
    mechanism's life, ``contamination`` γ the share of forged reports tolerated, ``min_reports`` the
    fewest reports judged, ``sequence`` w the window's rank among the mechanism's windows (≥ 1).
    ``reports``: the document's report matrix (:func:`~rldp.shared.document.report_matrix`) if the caller
    has it already (the service's catalog keeps it parsed), else expanded here — 0.3 s at K = 4,000.
    """
    reason = drift_scope(doc)
    if reason is not None:
        raise ValidationError(reason)
    if not 0.0 < significance < 1.0:
        raise ValidationError(f"significance must be in (0, 1); got {significance!r}")
    if not 0.0 <= contamination < 0.5:
        raise ValidationError(f"contamination must be in [0, 0.5); got {contamination!r}")
    if int(sequence) < 1 or int(min_reports) < 0:
        raise ValidationError(f"sequence must be ≥ 1 and min_reports ≥ 0; got {sequence!r}, {min_reports!r}")
    params = uncertainty_parameters(doc)
    alpha = document_alphabet(doc)
    p_hat = public_distribution(doc)
    reports = report_matrix(doc) if reports is None else np.asarray(reports, dtype=float)
    c = np.asarray(counts, dtype=float)
    shape = (1, alpha.size) if alpha.latent else alpha.shape
    marginal = p_hat.sum(axis=0, keepdims=True) if alpha.latent else p_hat
    if estimate is None:
        estimate = estimate_distribution(reports, c, shape, prior=marginal)
    box = _joint_box(params["box"], alpha.latent)
    ball = UncertaintySet(marginal.reshape(1, -1), params["radius"], params["order"], box)
    statistic, dof = projection_statistic(reports, c, ball, estimate.joint, estimate.rank or None)
    level = spent_significance(float(significance), int(sequence))
    start = np.clip(np.asarray(estimate.joint, dtype=float).ravel(), 0.0, None)
    start = start / start.sum() if start.sum() > 0 else ball.public_distribution.ravel()
    proof = anytime_evidence(reports, c, ball, gamma=float(contamination), level=level, start=start)
    star = lower = upper = None
    if not alpha.latent:  # ε* of the memoised y's mechanism (the claim is about it), from the reports' estimate
        matrix = reports if per_report_layer(doc) is None else mechanism_matrix(doc)  # Q: expanded once
        shown = realised(matrix, reports, c, estimate, p_hat)
        star, lower, upper = shown.point, shown.lower, shown.upper
    return Drift(
        notion=notion(doc),
        claimed_epsilon=document_epsilon(doc),
        realised_epsilon=star,
        realised_epsilon_upper=upper,
        realised_epsilon_lower=lower,
        statistic=statistic,
        dof=dof,
        one_look_p_value=_p_value(statistic, dof),
        significance=float(significance),
        n=int(c.sum()),
        claim_text=_claim_text(doc),
        contamination=float(contamination),
        min_reports=int(min_reports),
        sequence=int(sequence),
        log_evalue=proof.log_evalue,
        threshold=proof.threshold,
    )
