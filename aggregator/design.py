"""Mechanism design: one entry point for every method, returning an audited document.

    doc = design("polyopt", alphabet=..., public_distribution=P̂, epsilon=1.0, n=32561, beta=0.05)

Methods (see :data:`METHODS`): ``grr`` (GRR on X, the LDP baseline), ``srr`` (seed 000
Def. 4), ``ir`` / ``cr`` (the papers' theorems), ``ir-calibrated`` / ``cr-calibrated``
(the same families tuned to the exact audit), ``polyopt`` (Theorem 3 without the
s₁ = s₂ rows), ``polyopt-paper`` (Definition 3 exactly as printed), ``nr`` (the
non-robust optimum of seed 000 Sec. 8, i.e. PolyOpt with B = 0).

``polyopt``, ``polyopt-paper`` and ``nr`` take a ``solver`` ("auto": exact vertex enumeration
on small alphabets, column generation (:mod:`.polyopt_cg`) otherwise; "exact"; "cg") and a
``time_budget`` in seconds; the document's ``parameters`` record the solver, its rounds,
time, columns and, where one is proved, an ``upper_bound`` on the optimum with its kind.

Every document carries its audit; everything except ``nr`` is audited against the
requested uncertainty set and refused (DesignError) if the audit fails. ``nr`` claims
only (ε, {P̂})-RLDP (radius 0), which its audit checks; the leakage it would have over
the requested set is recorded as ``audit.epsilon_requested_set``.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from rldp import __version__
from rldp.shared.audit import audit_rldp
from rldp.shared.document import build_document
from rldp.shared.records import Alphabet
from rldp.shared.uncertainty import UncertaintySet
from rldp.shared.utility import entropy, mutual_information, normalized_mutual_information

from . import calibrate
from .mechanisms import grr_matrix, srr_matrix
from .polyopt import EXACT_MAX_SYMBOLS, solve_polyopt

__all__ = ["METHODS", "SOLVERS", "DesignError", "design", "design_matrix", "validate_parameters"]


class DesignError(ValueError):
    """A design request was invalid, or its result failed the audit."""


SOLVERS = ("auto", "exact", "cg")
# ``auto`` enumerates vertices exactly up to this many symbols (3×3 takes ~0.2 s; 5×2 already
# 1-3 s and 3×4 7-37 s, where column generation is within 0.2 % in well under a second).
AUTO_EXACT_MAX_SYMBOLS = 9
# NR's cone has |U|^|S|·(2^|S| − 2) + … vertices; enumerate it exactly below this estimate.
AUTO_EXACT_NR_MAX_VERTICES = 5000
DEFAULT_TIME_BUDGET = 60.0  # seconds, for the column-generation solver
_OPTIONS = ("solver", "time_budget", "progress")


def _solver_options(options: dict) -> tuple[str, float, Callable[[dict], None] | None]:
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise DesignError(f"unknown design option(s) {', '.join(unknown)}; expected: {', '.join(_OPTIONS)}")
    solver = options.get("solver", "auto")
    if solver not in SOLVERS:
        raise DesignError(f"solver must be one of {', '.join(SOLVERS)}; got {solver!r}")
    budget = options.get("time_budget", DEFAULT_TIME_BUDGET)
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        raise DesignError(f"time_budget must be a finite number of seconds > 0; got {budget!r}")
    progress = options.get("progress")
    if progress is not None and not callable(progress):
        raise DesignError("progress must be a callable receiving a dict, or None")
    return solver, float(budget), progress


def _seed_rows(uset: UncertaintySet, eps: float, deadline: float, calibrated: bool) -> list[np.ndarray]:
    """Rows of rldp's other certified designs, offered to column generation as seed
    columns (kept where they fit Γ, mixed into it otherwise), so the result does not fall
    below them. The calibrated ones take a few seconds at 240 symbols: only with time."""
    rows = []
    names = ("grr", "srr", "ir", "cr") + (("ir-calibrated", "cr-calibrated") if calibrated else ())
    for name in names:
        if time.perf_counter() > deadline:
            break
        rows.append(METHODS[name](uset, eps)[0])
    return rows


def _cg_result_params(res, solver_name: str) -> dict:
    params: dict[str, Any] = {
        "solver": solver_name, "iterations": res.iterations, "seconds": res.seconds, "columns": res.columns,
        "status": res.status, "converged": res.converged, "lp_value": res.lp_value,
    }
    return params


def _polyopt(uset: UncertaintySet, eps: float, same_sensitive: bool, **options: Any) -> tuple[np.ndarray, dict]:
    """PolyOpt (seed 000, Thm 3) by exact vertex enumeration or by column generation.

    Rows are designed at ε(1 − DESIGN_MARGIN); upper bounds are proved at ε itself: the
    Lagrangian bound of the column-generation master (block enumeration, bounds PolyOpt
    of this variant) and the NR bound (bounds every (ε, F)-RLDP mechanism, since P̂ ∈ F).
    """
    from .polyopt_cg import solve_nr_cg, solve_polyopt_cg

    solver, budget, progress = _solver_options(options)
    p = uset.public_distribution
    design_eps = eps * (1 - calibrate.DESIGN_MARGIN)
    if solver == "exact" or (solver == "auto" and p.size <= AUTO_EXACT_MAX_SYMBOLS):
        res = solve_polyopt(p, uset.lower_bounds(), design_eps, same_sensitive=same_sensitive)
        return res.matrix, {"vertices": int(len(res.vertices)), "solver": "exact", "seconds": res.seconds,
                            "iterations": 0, "columns": int(len(res.vertices)), "optimal": True}
    start = time.perf_counter()
    deadline = start + budget
    # A small share of the budget for the seeds (other designs) and the NR bound.
    seeds = _seed_rows(uset, eps, start + 0.15 * budget, calibrated=budget >= 20.0)
    bounds: dict[str, float] = {}
    if np.all(p.sum(axis=1) > 0):
        nr = solve_nr_cg(p, design_eps, time_budget=max(min(0.05 * budget, 5.0), 0.05), bound_epsilon=eps)
        bounds["nr-lagrangian"] = float(nr.upper_bound)
    res = solve_polyopt_cg(p, uset.lower_bounds(), design_eps, same_sensitive=same_sensitive,
                           time_budget=max(deadline - time.perf_counter(), 0.05), extra_rows=seeds,
                           bound_epsilon=eps, progress=progress)
    if res.upper_bound is not None:
        bounds["polytope-lagrangian"] = float(res.upper_bound)
    bounds["entropy"] = entropy(p)  # I(X;Y) ≤ H(X) always
    params = _cg_result_params(res, "cg")
    params["seconds"] = time.perf_counter() - start
    if bounds:
        kind = min(bounds, key=bounds.get)
        params["upper_bound"] = bounds[kind]
        params["upper_bound_kind"] = kind
        params["upper_bounds"] = bounds
        params["upper_bound_note"] = (
            "nats of I_P̂(X;Y) at the claimed epsilon. nr-lagrangian: Lagrangian dual bound of the "
            "non-robust optimum (exact pricing), bounds every (epsilon, F)-RLDP mechanism. "
            "polytope-lagrangian: Lagrangian dual bound of this PolyOpt variant's LP (Theorem 3), "
            "pricing bounded by block-vertex enumeration. entropy: I(X;Y) <= H(X).")
    return res.matrix, params


def _nr(uset: UncertaintySet, eps: float, **options: Any) -> tuple[np.ndarray, dict]:
    """NR (seed 000 Sec. 8): PolyOpt for the point set {P̂}; exact enumeration or column
    generation with exact pricing (a proven bound, optimal when ``status`` is converged)."""
    from .polyopt_cg import solve_nr_cg

    solver, budget, progress = _solver_options(options)
    point = UncertaintySet(uset.public_distribution, 0.0, uset.order)
    p = point.public_distribution
    a1, a2 = p.shape
    small = p.size <= EXACT_MAX_SYMBOLS and (p.size <= AUTO_EXACT_MAX_SYMBOLS
                                            or float(a2) ** a1 * 2.0 ** a1 <= AUTO_EXACT_NR_MAX_VERTICES)
    if solver == "exact" or (solver == "auto" and small):
        return _polyopt(point, eps, same_sensitive=False, solver="exact")
    if np.any(p.sum(axis=1) <= 0):
        # An s absent from P̂ leaves its block unconstrained by P̂: the exact NR pricing does
        # not apply; the polytope solver on the point set (L = P̂_U|s) still does.
        return _polyopt(point, eps, same_sensitive=False, solver="cg", time_budget=budget, progress=progress)
    design_eps = eps * (1 - calibrate.DESIGN_MARGIN)
    res = solve_nr_cg(p, design_eps, time_budget=budget, bound_epsilon=eps, progress=progress)
    params = _cg_result_params(res, "cg")
    params.update(upper_bound=res.upper_bound, upper_bound_kind="nr-lagrangian",
                  upper_bound_note="nats of I_P̂(X;Y) at the claimed epsilon: Lagrangian dual bound of the "
                                   "non-robust optimum (exact pricing)")
    return res.matrix, params


METHODS: dict[str, Callable[..., tuple[np.ndarray, dict]]] = {
    "grr": lambda u, e: (grr_matrix(u.public_distribution.size, e), {}),
    "srr": lambda u, e: (srr_matrix(u.n_sensitive, u.n_released, e), {}),
    "ir": calibrate.ir_theorem,
    "ir-calibrated": calibrate.ir_calibrated,
    "cr": calibrate.cr_theorem,
    "cr-calibrated": calibrate.cr_calibrated,
    "polyopt": lambda u, e, **o: _polyopt(u, e, same_sensitive=False, **o),
    "polyopt-paper": lambda u, e, **o: _polyopt(u, e, same_sensitive=True, **o),
    "nr": _nr,
}
# Methods that take the solver options (solver, time_budget, progress).
SOLVER_METHODS = frozenset({"polyopt", "polyopt-paper", "nr"})
# Methods whose guarantee is only w.r.t. the point estimate P̂.
NON_ROBUST = frozenset({"nr"})


def validate_parameters(method: str, epsilon: float, *, radius: float | None = None, beta: float | None = None,
                        n: int | None = None, order: float = 2.0) -> None:
    """Check design parameters at the boundary; raise DesignError naming the bad one."""
    if method not in METHODS:
        raise DesignError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    if not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise DesignError(f"epsilon must be a finite number > 0 (nats); got {epsilon!r}")
    if not isinstance(order, (int, float)) or not math.isfinite(order) or order <= 0:
        raise DesignError(f"order (Rényi α) must be a finite number > 0; got {order!r}")
    if radius is not None and beta is not None:
        raise DesignError("give either radius or beta, not both")
    if radius is not None and (not isinstance(radius, (int, float)) or math.isnan(radius) or radius < 0):
        raise DesignError(f"radius must be ≥ 0 (nats; inf for no knowledge of P*); got {radius!r}")
    if beta is not None and (not isinstance(beta, (int, float)) or not 0 < beta < 1):
        raise DesignError(f"beta (significance level) must be in (0, 1); got {beta!r}")
    if radius is None and n is None:
        raise DesignError("n (number of public records) is needed to derive the radius from beta")
    if n is not None and (int(n) != n or n < 1):
        raise DesignError(f"n (number of public records) must be a positive integer; got {n!r}")


def design_matrix(method: str, uncertainty: UncertaintySet, epsilon: float, **options: Any) -> tuple[np.ndarray, dict]:
    """The raw designer: (matrix Q[y, x], parameters) for ``method`` at level ε (nats).

    ``options`` (methods polyopt, polyopt-paper, nr only): ``solver`` "auto" (exact vertex
    enumeration on small alphabets, column generation otherwise), "exact" or "cg";
    ``time_budget`` seconds for column generation (anytime: the best certified mechanism
    when it ends); ``progress`` a callable receiving a dict per round (iteration, seconds,
    information, columns, upper_bound).
    """
    validate_parameters(method, epsilon, radius=uncertainty.radius, order=uncertainty.order)
    if options and method not in SOLVER_METHODS:
        _solver_options(options)  # still reject bad values
        options = {}
    from .polyopt import PolyOptError
    from .polyopt_cg import CGError

    try:
        q, params = METHODS[method](uncertainty, float(epsilon), **options)
    except PolyOptError as exc:
        hint = " (use solver='cg' for large alphabets)" if "limited to" in str(exc) else ""
        raise DesignError(f"{method}: {exc}{hint}") from exc
    except CGError as exc:
        raise DesignError(f"{method}: {exc}") from exc
    keep = q.sum(axis=1) > 0  # drop outputs that never occur
    return q[keep], params


def design(method: str, *, alphabet: Alphabet, public_distribution: Any, epsilon: float,
           radius: float | None = None, beta: float | None = 0.05, n: int | None = None,
           order: float = 2.0, extra: dict | None = None, solver: str = "auto",
           time_budget: float = DEFAULT_TIME_BUDGET, progress: Callable[[dict], None] | None = None) -> dict:
    """Design, audit and package a mechanism as a document (DESIGN.md).

    The uncertainty set is F = {P : D_α(P̂‖P) ≤ B} with B = ``radius`` if given, else the
    (1 − β)-confidence radius for ``n`` public records (seed 000, eq. 9). ``solver``,
    ``time_budget`` (seconds) and ``progress`` apply to polyopt, polyopt-paper and nr (see
    :func:`design_matrix`); the solver's record (iterations, seconds, columns, upper bound)
    lands in the document's ``parameters``.
    """
    if radius is not None:
        beta = None
    validate_parameters(method, epsilon, radius=radius, beta=beta, n=n, order=order)
    _solver_options({"solver": solver, "time_budget": time_budget, "progress": progress})
    p_hat = np.asarray(public_distribution, dtype=float)
    if p_hat.shape != (alphabet.n_sensitive, alphabet.n_released):
        raise DesignError(f"public_distribution has shape {p_hat.shape}; the alphabet needs "
                          f"({alphabet.n_sensitive}, {alphabet.n_released})")
    if radius is None:
        uset = UncertaintySet.from_confidence(p_hat, int(n), float(beta), order)
    else:
        uset = UncertaintySet(p_hat, float(radius), order)

    start = time.perf_counter()
    options = {"solver": solver, "time_budget": time_budget, "progress": progress} if method in SOLVER_METHODS else {}
    q, params = design_matrix(method, uset, epsilon, **options)
    seconds = time.perf_counter() - start

    uncertainty: dict[str, Any] = uset.describe()
    if n is not None:
        uncertainty["n"] = int(n)
    if beta is not None:
        uncertainty["beta"] = float(beta)
    audit: dict[str, Any]
    if method in NON_ROBUST:
        claimed = UncertaintySet(p_hat, 0.0, order)
        result = audit_rldp(q, claimed, epsilon)
        requested = audit_rldp(q, uset, epsilon)
        uncertainty = dict(claimed.describe())
        audit = dict(result.to_dict(), epsilon_requested_set=requested.to_dict()["epsilon"],
                     requested_radius=uset.describe()["radius"])
    else:
        result = audit_rldp(q, uset, epsilon)
        audit = result.to_dict()
    if not result.passed:
        raise DesignError(f"the {method} mechanism failed its audit: {'; '.join(result.reasons)}")

    info = mutual_information(q, p_hat)
    doc_extra = {
        "parameters": params,
        "audit": audit,
        "utility": {"mutual_information": info, "nmi": normalized_mutual_information(q, p_hat),
                    "distribution": "public"},
        "design": {"seconds": seconds, "software": f"rldp {__version__}"},
    }
    doc_extra.update(extra or {})
    privacy = {"notion": "rldp", "epsilon": float(epsilon), "uncertainty": uncertainty}
    return build_document(method=method, matrix=q, alphabet=alphabet, public_distribution=p_hat,
                          privacy=privacy, extra=doc_extra)
