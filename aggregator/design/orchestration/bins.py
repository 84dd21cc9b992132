"""How many bins a numeric U gets for the question asked: the k with the least *predicted* error.

For a task on U (``DesignRequest.task``: ``distribution`` or ``mean``) whose bins are not given (no
``--bins``, no ``--edges``), the bins are chosen from the public data and the request, before the design:

    k* = argmin over k ∈ :data:`CANDIDATE_BINS` of  binning error(k) + estimation error(k, n)

* **binning error** (public data only): what binning costs even without noise, with each bin's share spread
  within it as the estimate will spread it (:func:`binning_error`). ``uniform`` (the default, as
  :mod:`rldp.aggregator.estimate.numeric` spreads it): W1 between the public values and their k bins' shares
  spread uniformly (exact), or for the mean |public mean − Σ_j P̂(bin j)·midpoint_j|. ``public`` (the public
  within-bin shape, as ``rldp experiment numeric`` spreads it): the same, cross-fitted between the two halves
  of the public rows (in-sample it would be 0).
* **estimation error**: the task's expected error of the linear estimate of P(U) from n = ``planned_reports``
  reports (:data:`DEFAULT_PLANNED_REPORTS` when not given) through the design over those k bins, at P̂
  (:func:`estimation_error`: its covariance propagated to W1 or to the mean as in
  :func:`..solvers.task.task_error`, but with the mechanism's noise only — the estimate is of the reporting
  users' own distribution, so a design that adds no noise has no estimation error). EM, which the service
  runs, stays in the simplex and is no worse.

With integer values (ages, hours) the uniform spread costs about half a unit of W1 at any k (a bin's mass is
spread over the whole interval, the values sit on its integers), so the uniform rule tends to the largest
candidate; with the public shape it stops where the noise starts (docs/experiments/numeric.md).

**Which design predicts it.** Methods with a closed form or a one-dimensional search (not a solver method
and not a utility-optimising one) are designed at each k. For the utility-optimising methods (PolyOpt, NR,
IR/CR calibrated: :data:`.registry.TASK_METHODS`) and ``--method auto``, each k is predicted with
``rr-released``: the task design keeps the lesser error of the method's own design and rr-released, so
rr-released's error bounds the kept one's, and PolyOpt's column generation is not run once per candidate.
When neither applies (a solver method whose notion has no rr-released), the rule is not used: k is
:func:`rldp.shared.numeric.default_bins`. The joint task keeps :func:`~rldp.shared.numeric.default_bins` too.

The choice, both terms at every candidate and the design that predicted them are the document's ``binning``
field (covered by its id): ``k = 12: binning error 0.04, estimation error 0.03 at 10,000 reports``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rldp.shared.numeric import NumericSpec, quantile_edges
from rldp.shared.uncertainty import UncertaintySet

from ..primitives.errors import DesignError
from ..primitives.options import DesignRequest
from .build import run_designer
from .choose import AUTO
from .registry import SOLVER_METHODS, TASK_METHODS, methods_for
from .request import validate_request

__all__ = [
    "CANDIDATE_BINS",
    "DEFAULT_PLANNED_REPORTS",
    "BinCandidate",
    "BinChoice",
    "CandidateDesign",
    "SPREADS",
    "candidate_designs",
    "estimation_error",
    "evaluate",
    "pick",
    "w1_step_linear",
    "binning_error",
    "binning_line",
    "choose_bins",
    "predicting_method",
]

#: The numbers of bins the rule compares (each capped by the public data's distinct values).
CANDIDATE_BINS = (4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32)
#: The number of reports the estimation error is predicted at when the request does not plan one.
DEFAULT_PLANNED_REPORTS = 10_000
#: The tasks the rule serves (the joint task keeps the default number of bins).
RULE_TASKS = ("distribution", "mean")

#: How the binning error spreads a bin's share within it (:func:`binning_error`).
SPREADS = ("uniform", "public")
_IDENTIFIABLE = 1e-7
_SPREAD = math.sqrt(2.0 / math.pi)  # E|Z| for Z ~ N(0, 1)

#: (spec) -> (P̂ over S × bins, the public records n, whether S is latent): the caller's public data.
PublicFor = Callable[[NumericSpec], tuple[np.ndarray, int, bool]]


@dataclass(frozen=True)
class BinCandidate:
    """One candidate number of bins and its predicted errors (``estimation_error`` None: the task's
    statistic is not identifiable from that design's reports, or it could not be designed)."""

    bins: int
    binning_error: float
    estimation_error: float | None

    @property
    def total(self) -> float:
        return math.inf if self.estimation_error is None else self.binning_error + self.estimation_error


@dataclass(frozen=True)
class BinChoice:
    """The rule's choice for ``column``: its bins and every candidate's predicted errors."""

    column: str
    task: str
    planned_reports: int
    predicted_by: str
    spec: NumericSpec
    candidates: tuple[BinCandidate, ...]
    spread: str = "uniform"

    @property
    def chosen(self) -> BinCandidate:
        return next(c for c in self.candidates if c.bins == self.spec.bins)

    def line(self) -> str:
        """:func:`binning_line` of :meth:`record`."""
        return binning_line(self.record())

    def record(self) -> dict[str, Any]:
        """The document's ``binning`` field."""
        c = self.chosen
        return {
            "rule": "least predicted error: binning error + estimation error at the planned reports",
            "column": self.column,
            "task": self.task,
            "planned_reports": self.planned_reports,
            "predicted_by": self.predicted_by,
            "spread": self.spread,
            "bins": c.bins,
            "binning_error": c.binning_error,
            "estimation_error": c.estimation_error,
            "candidates": [
                {"bins": x.bins, "binning_error": x.binning_error, "estimation_error": x.estimation_error}
                for x in self.candidates
            ],
        }


def binning_line(record: dict[str, Any]) -> str:
    """``k = 12: binning error 0.04, estimation error 0.03 at 10,000 reports`` (U's units) from a document's
    ``binning`` field."""
    return (
        f"k = {record['bins']}: binning error {record['binning_error']:.3g}, estimation error "
        f"{record['estimation_error']:.3g} at {record['planned_reports']:,} reports "
        f"({record['task']}; the least predicted error of {len(record['candidates'])} candidates, "
        f"predicted with {record['predicted_by']})"
    )


def binning_error(task: str, values: np.ndarray, spec: NumericSpec, spread: str = "uniform") -> float:
    """The task's error of the k bins of ``spec`` on ``values`` alone (no noise): W1 between the values and
    their bins' shares spread within each bin (``distribution``), or the mean's bias (``mean``).

    ``spread``: ``uniform`` (as rldp's estimate spreads a bin: exact, both CDFs are constant or linear between
    the values and the edges) or ``public`` (as the public within-bin shape spreads it — zero on the public data
    itself, so cross-fitted: the rows split by parity, each half's shares spread with the other half's shape
    against that half's values, the two errors averaged)."""
    x = np.clip(np.asarray(values, dtype=float), spec.lo, spec.hi)
    if spread == "public":
        halves = (x[0::2], x[1::2])
        return (_shape_error(task, halves[1], halves[0], spec) + _shape_error(task, halves[0], halves[1], spec)) / 2
    if spread != "uniform":
        raise ValueError(f"spread must be one of {', '.join(SPREADS)}; got {spread!r}")
    edges = np.asarray(spec.edges, dtype=float)
    share = np.bincount(np.asarray(spec.bin_of(x), dtype=int), minlength=spec.bins) / x.size
    if task == "mean":
        return abs(float(x.mean()) - float(share @ ((edges[:-1] + edges[1:]) / 2)))
    cuts = np.union1d(np.unique(x), edges)
    f_emp = np.searchsorted(np.sort(x), cuts, side="right") / x.size
    f_lin = np.interp(cuts, edges, np.r_[0.0, np.cumsum(share)])
    return float(w1_step_linear(cuts, f_emp, f_lin))


def w1_step_linear(cuts: np.ndarray, f_step: np.ndarray, f_lin: np.ndarray) -> np.ndarray:
    """∫|F_lin − F_step| over [cuts_0, cuts_-1] when on each [cuts_i, cuts_i+1) F_step stays f_step[i] and
    F_lin goes linearly from f_lin[i] to f_lin[i+1] (exact; the last axis is the cuts', leading axes broadcast)."""
    d0, d1, w = f_lin[..., :-1] - f_step[..., :-1], f_lin[..., 1:] - f_step[..., :-1], np.diff(cuts)
    span = np.abs(d0) + np.abs(d1)
    crossing = (d0**2 + d1**2) / (2 * np.where(span > 0, span, 1.0))
    out: np.ndarray = np.sum(w * np.where(d0 * d1 >= 0, span / 2, crossing), axis=-1)
    return out


def _shape_error(task: str, own: np.ndarray, other: np.ndarray, spec: NumericSpec) -> float:
    """``own``'s bin shares spread with ``other``'s within-bin shape, against ``own`` (a bin ``other`` leaves
    empty: spread evenly over the distinct values both halves have in it)."""
    grid = np.unique(np.r_[own, other])
    bins = np.asarray(spec.bin_of(grid), dtype=int)
    shape = np.bincount(np.searchsorted(grid, other), minlength=grid.size).astype(float)
    totals = np.bincount(bins, weights=shape, minlength=spec.bins)
    empty = totals[bins] == 0
    shape[empty] = 1.0
    shape /= np.bincount(bins, weights=shape, minlength=spec.bins)[bins]
    own_counts = np.bincount(np.searchsorted(grid, own), minlength=grid.size) / own.size
    share = np.bincount(bins, weights=own_counts, minlength=spec.bins)
    spread = share[bins] * shape
    if task == "mean":
        return abs(float(spread @ grid) - float(own_counts @ grid))
    return float(np.abs(np.cumsum(spread) - np.cumsum(own_counts))[:-1] @ np.diff(grid))


def predicting_method(request: DesignRequest) -> str | None:
    """The method whose design predicts the estimation error (see the module docstring), None: no rule."""
    method = str(request.method)
    available = methods_for(request.notion)
    if method != AUTO and method not in SOLVER_METHODS and method not in TASK_METHODS and method in available:
        return method
    return "rr-released" if "rr-released" in available else None


@dataclass(frozen=True)
class CandidateDesign:
    """One candidate's bins, P̂ over them and the predicting design's matrix (None: it could not be designed)."""

    spec: NumericSpec
    q: np.ndarray | None
    p_hat: np.ndarray
    latent: bool


def candidate_designs(
    column: str,
    values: np.ndarray,
    request: DesignRequest,
    public_for: PublicFor,
    predictor: str,
    *,
    lo: float | None = None,
    hi: float | None = None,
    closed: str = "left",
    candidates: Sequence[int] = CANDIDATE_BINS,
) -> list[CandidateDesign]:
    """The ``predictor``'s design at each candidate number of bins. Quantiles that coincide (a spike, few
    distinct values) leave fewer bins than asked: each resulting number of bins is one candidate, the first
    candidate that gives it."""
    specs: dict[int, NumericSpec] = {}
    for k in candidates:
        spec = NumericSpec(quantile_edges(np.asarray(values, dtype=float), k, lo, hi), closed)
        specs.setdefault(spec.bins, spec)
    out = []
    for spec in specs.values():
        p_hat, n, latent = public_for(spec)
        if request.radius is None:
            uset = UncertaintySet.from_confidence(p_hat, n, float(request.beta or 0), request.order)
        else:
            uset = UncertaintySet(p_hat, float(request.radius), request.order)
        # another method than the one asked: a request of its own, validated (cheap: no data is read)
        options = validate_request(
            replace(request, method=predictor, latent=latent, released_numeric=((column, spec),), progress=None)
        )
        try:
            q: np.ndarray | None = run_designer(predictor, uset, options)[0]
        except DesignError:  # no design at this k: not a candidate
            q = None
        out.append(CandidateDesign(spec, q, p_hat, latent))
    return out


def estimation_error(task: str, design: CandidateDesign, reports: int) -> float | None:
    """The task's expected error of the linear estimate of P(U) from ``reports`` reports through the design
    (None: not identifiable). Only the mechanism's noise counts — the estimate is of the reporting users' own
    distribution: per report Cov = A (diag(Q p) − Q diag(p) Qᵀ) Aᵀ, A = M Q⁺ (M sums X onto U), p = P̂ over X;
    W1 ≈ √(2/π) Σ_j sd(F̂_j)·(w_j + w_{j+1})/2 over the inner edges, the mean √(2/π) sd(Σ_u c_u p̂_u)."""
    if design.q is None:
        return None
    q, (a1, a2) = design.q, design.p_hat.shape
    p = design.p_hat.sum(axis=0) if design.latent else design.p_hat.reshape(-1)
    m = np.eye(a2) if design.latent else np.tile(np.eye(a2), (1, a1))
    a = m @ np.linalg.pinv(q)
    if np.abs(a @ q - m).max() > _IDENTIFIABLE * max(1.0, float(np.abs(a).max())):
        return None
    qp = q * p
    cov = a @ (np.diag(qp.sum(axis=1)) - qp @ q.T) @ a.T / reports
    e = np.asarray(design.spec.edges, dtype=float)
    if task == "mean":
        mid = (e[:-1] + e[1:]) / 2
        return _SPREAD * math.sqrt(max(float(mid @ cov @ mid), 0.0))
    lower = np.tril(np.ones((a2 - 1, a2)))
    sd = np.sqrt(np.maximum(np.diag(lower @ cov @ lower.T), 0.0))
    w = np.diff(e)
    return float(_SPREAD * np.sum(sd * (w[:-1] + w[1:]) / 2))


def evaluate(
    task: str, designs: Sequence[CandidateDesign], values: np.ndarray, reports: int, spread: str = "uniform"
) -> tuple[BinCandidate, ...]:
    """Both predicted errors of every candidate design."""
    return tuple(
        BinCandidate(d.spec.bins, binning_error(task, values, d.spec, spread), estimation_error(task, d, reports))
        for d in designs
    )


def choose_bins(
    column: str,
    values: np.ndarray,
    request: DesignRequest,
    public_for: PublicFor,
    *,
    lo: float | None = None,
    hi: float | None = None,
    closed: str = "left",
    candidates: Sequence[int] = CANDIDATE_BINS,
    spread: str = "uniform",
) -> BinChoice | None:
    """The rule's bins of ``column`` (public ``values``) for ``request`` (validated; its task on U), or None
    when the rule does not apply (the joint task, or no design predicts it: see the module docstring)."""
    predictor = predicting_method(request)
    if request.task not in RULE_TASKS or predictor is None:
        return None
    planned = int(request.planned_reports or DEFAULT_PLANNED_REPORTS)
    designs = candidate_designs(
        column, values, request, public_for, predictor, lo=lo, hi=hi, closed=closed, candidates=candidates
    )
    return pick(
        column,
        request.task,
        planned,
        predictor,
        designs,
        evaluate(request.task, designs, values, planned, spread),
        spread,
    )


def pick(
    column: str,
    task: str,
    planned: int,
    predictor: str,
    designs: Sequence[CandidateDesign],
    scored: Sequence[BinCandidate],
    spread: str = "uniform",
) -> BinChoice | None:
    """The candidate with the least predicted total (ties: fewer bins); None when none is finite."""
    best = min(range(len(scored)), key=lambda i: (scored[i].total, scored[i].bins))
    if not math.isfinite(scored[best].total):
        return None
    return BinChoice(column, task, planned, predictor, designs[best].spec, tuple(scored), spread)
