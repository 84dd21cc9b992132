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

The exact solver's vertex enumeration (cddlib, floating point) is followed by a few rounds of
column-generation pricing seeded with the vertices and the other designs' rows (``_polish``):
at large ε cddlib misses vertices or returns points just outside Γ, which made the LP fall
below GRR/SRR, fail, or fail the audit; every row is now verified against Γ (repaired if
needed) and the LP never ends below a certified baseline. If enumeration or its LP fails,
column generation alone takes over (``parameters.fallback`` says why). ``warm_start`` seeds
the search with earlier designs' rows (e.g. at a smaller ε), which keeps ε sweeps monotone.

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
# ``auto`` enumerates vertices exactly (then polishes, see _polish) up to this many symbols:
# 3×3 ~0.2 s, 2×5 ~0.7 s, 5×2 ~2 s — the Adult pairs sex/race and race/sex get the proven
# optimum; 3×4 takes 7-37 s, where column generation is within 0.5 % in about a second.
AUTO_EXACT_MAX_SYMBOLS = 10
# NR's cone has |U|^|S|·(2^|S| − 2) + … vertices; enumerate it exactly below this estimate.
AUTO_EXACT_NR_MAX_VERTICES = 5000
DEFAULT_TIME_BUDGET = 60.0  # seconds, for the column-generation solver
# Exact enumeration is followed by column-generation pricing seeded with its vertices (see
# _polish); this caps that step (it converges in well under a second up to 12 symbols).
POLISH_MAX_SECONDS = 10.0
_OPTIONS = ("solver", "time_budget", "progress", "warm_start")


def _warm_rows(options: dict, size: int) -> list[np.ndarray]:
    """The ``warm_start`` option: matrices (|Y|, |X|) of earlier designs on the same data
    (e.g. at a smaller ε: Γ_ε ⊆ Γ_ε' for ε ≤ ε', so their rows are certified here and the
    result is never below them). Rows outside the cone are mixed into it, never trusted."""
    warm = options.get("warm_start")
    if warm is None:
        return []
    mats = [warm] if isinstance(warm, np.ndarray) else list(warm)
    out = []
    for m in mats:
        arr = np.asarray(m, dtype=float)
        if arr.ndim not in (1, 2) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise DesignError("warm_start must be non-negative, finite matrices (|Y|, |X|) of earlier designs")
        if arr.shape[-1] != size:
            raise DesignError(f"warm_start matrices must have |X| = {size} columns (one per symbol); "
                              f"got shape {arr.shape}")
        out.append(np.atleast_2d(arr))
    return out


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
        try:
            rows.append(METHODS[name](uset, eps)[0])
        except (ValueError, RuntimeError):  # a seed is optional: a designer that cannot run here is skipped
            continue
    return rows


def _cg_result_params(res, solver_name: str) -> dict:
    params: dict[str, Any] = {
        "solver": solver_name, "iterations": res.iterations, "seconds": res.seconds, "columns": res.columns,
        "status": res.status, "converged": res.converged, "lp_value": res.lp_value,
    }
    return params


def _polish(res_rows: list[np.ndarray], p: np.ndarray, low: np.ndarray, design_eps: float, eps: float,
            same_sensitive: bool, budget: float, nr: bool):
    """Column-generation pricing seeded with the exact vertices and other certified rows.

    cddlib runs in floating point: at large ε it can miss vertices (the LP optimum is then
    too low, even below GRR/SRR whose rows lie in the cone) or return points just outside Γ
    (the mechanism then fails the exact audit). The master LP of Theorem 3 over the vertices,
    the seed rows (GRR, SRR, robust GRR, other designs) and whatever pricing finds, with every
    column verified (and repaired) against Γ, is never below any of them and is certified.
    NR uses its exact pricer (a proven Lagrangian bound)."""
    from .polyopt_cg import solve_nr_cg, solve_polyopt_cg

    if nr and np.all(p.sum(axis=1) > 0):
        return solve_nr_cg(p, design_eps, time_budget=budget, bound_epsilon=eps, extra_rows=res_rows, coarsen=False)
    return solve_polyopt_cg(p, low, design_eps, same_sensitive=same_sensitive, time_budget=budget,
                            extra_rows=res_rows, bound_epsilon=eps, coarsen=False)


def _exact(uset: UncertaintySet, eps: float, same_sensitive: bool, budget: float, warm: list[np.ndarray],
           nr: bool = False) -> tuple[np.ndarray, dict]:
    """Exact PolyOpt (vertex enumeration, Theorem 3), polished and certified by :func:`_polish`;
    falls back to column generation alone if enumeration or its LP fails numerically."""
    from .polyopt import PolyOptError, PolyOptTooLarge

    p = uset.public_distribution
    low = uset.lower_bounds()
    design_eps = eps * (1 - calibrate.DESIGN_MARGIN)
    start = time.perf_counter()
    params: dict[str, Any] = {"solver": "exact"}
    rows = list(warm)
    try:
        res = solve_polyopt(p, low, design_eps, same_sensitive=same_sensitive)
        rows.append(res.vertices)
        params.update(vertices=int(len(res.vertices)), information_enumeration=res.information)
    except PolyOptTooLarge:
        raise
    except PolyOptError as exc:  # numerical failure of cddlib or of the LP: column generation takes over
        params["fallback"] = f"column generation: {exc}"
    if not nr:
        rows += _seed_rows(uset, eps, start + 0.15 * budget, calibrated=False)
    res = _polish(rows, p, low, design_eps, eps, same_sensitive, min(budget, POLISH_MAX_SECONDS), nr)
    params.update(iterations=res.iterations, columns=res.columns, status=res.status, converged=res.converged,
                  lp_value=res.lp_value, seconds=time.perf_counter() - start)
    if res.upper_bound is not None:
        params.update(upper_bound=float(res.upper_bound), upper_bound_kind=res.bound_kind)
    return res.matrix, params


def _polyopt(uset: UncertaintySet, eps: float, same_sensitive: bool, **options: Any) -> tuple[np.ndarray, dict]:
    """PolyOpt (seed 000, Thm 3) by exact vertex enumeration or by column generation.

    Rows are designed at ε(1 − DESIGN_MARGIN); upper bounds are proved at ε itself: the
    Lagrangian bound of the column-generation master (block enumeration, bounds PolyOpt
    of this variant) and the NR bound (bounds every (ε, F)-RLDP mechanism, since P̂ ∈ F).
    """
    from .polyopt_cg import solve_nr_cg, solve_polyopt_cg

    solver, budget, progress = _solver_options(options)
    warm = _warm_rows(options, uset.public_distribution.size)
    p = uset.public_distribution
    design_eps = eps * (1 - calibrate.DESIGN_MARGIN)
    if solver == "exact" or (solver == "auto" and p.size <= AUTO_EXACT_MAX_SYMBOLS):
        return _exact(uset, eps, same_sensitive, budget, warm)
    start = time.perf_counter()
    deadline = start + budget
    # A small share of the budget for the seeds (other designs) and the NR bound.
    seeds = _seed_rows(uset, eps, start + 0.15 * budget, calibrated=budget >= 20.0)
    bounds: dict[str, float] = {}
    if np.all(p.sum(axis=1) > 0):
        nr = solve_nr_cg(p, design_eps, time_budget=max(min(0.05 * budget, 5.0), 0.05), bound_epsilon=eps,
                         coarsen=False)
        bounds["nr-lagrangian"] = float(nr.upper_bound)
    res = solve_polyopt_cg(p, uset.lower_bounds(), design_eps, same_sensitive=same_sensitive,
                           time_budget=max(deadline - time.perf_counter(), 0.05), extra_rows=seeds + warm,
                           bound_epsilon=eps, progress=progress)
    if res.upper_bound is not None:
        bounds["polytope-lagrangian"] = float(res.upper_bound)
    bounds["entropy"] = entropy(p)  # I(X;Y) ≤ H(X) always
    params = _cg_result_params(res, "cg")
    params["seconds"] = time.perf_counter() - start
    if res.stages:
        params["stages"] = res.stages
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
    """NR (seed 000 Sec. 8): PolyOpt for the point set {P̂}; exact enumeration (polished by
    exact pricing, see :func:`_polish`) or column generation with exact pricing (a proven
    bound, optimal when ``status`` is converged). Seeded with the rows of the robust designs
    for the requested set (they are (ε, {P̂})-RLDP too, since P̂ ∈ F), so NR is never below them."""
    from .polyopt_cg import solve_nr_cg

    solver, budget, progress = _solver_options(options)
    warm = _warm_rows(options, uset.public_distribution.size)
    point = UncertaintySet(uset.public_distribution, 0.0, uset.order)
    p = point.public_distribution
    a1, a2 = p.shape
    start = time.perf_counter()
    seeds = _seed_rows(uset, eps, start + 0.15 * budget, calibrated=False) + warm
    small = p.size <= EXACT_MAX_SYMBOLS and (p.size <= AUTO_EXACT_MAX_SYMBOLS
                                            or float(a2) ** a1 * 2.0 ** a1 <= AUTO_EXACT_NR_MAX_VERTICES)
    if solver == "exact" or (solver == "auto" and small):
        return _exact(point, eps, False, budget, seeds, nr=True)
    if np.any(p.sum(axis=1) <= 0):
        # An s absent from P̂ leaves its block unconstrained by P̂: the exact NR pricing does
        # not apply; the polytope solver on the point set (L = P̂_U|s) still does.
        return _polyopt(point, eps, same_sensitive=False, solver="cg", time_budget=budget, progress=progress,
                        warm_start=seeds)
    design_eps = eps * (1 - calibrate.DESIGN_MARGIN)
    res = solve_nr_cg(p, design_eps, time_budget=max(start + budget - time.perf_counter(), 0.05), bound_epsilon=eps,
                      progress=progress, extra_rows=seeds)
    params = _cg_result_params(res, "cg")
    params.update(upper_bound=res.upper_bound, upper_bound_kind="nr-lagrangian",
                  upper_bound_note="nats of I_P̂(X;Y) at the claimed epsilon: Lagrangian dual bound of the "
                                   "non-robust optimum (exact pricing)")
    if res.stages:
        params["stages"] = res.stages
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
    information, columns, upper_bound); ``warm_start`` matrices of earlier designs on the
    same data whose rows seed the search (e.g. the design at a smaller ε: its rows lie in
    Γ_ε, so the result is never below it — sweeps over ε stay non-decreasing).
    """
    validate_parameters(method, epsilon, radius=uncertainty.radius, order=uncertainty.order)
    if options and method not in SOLVER_METHODS:
        _solver_options(options)  # still reject bad values
        options = {}
    from .polyopt import PolyOptError, PolyOptTooLarge
    from .polyopt_cg import CGError

    try:
        q, params = METHODS[method](uncertainty, float(epsilon), **options)
    except PolyOptError as exc:
        hint = " (use solver='cg' for large alphabets)" if isinstance(exc, PolyOptTooLarge) else ""
        raise DesignError(f"{method}: {exc}{hint}") from exc
    except CGError as exc:
        raise DesignError(f"{method}: {exc}") from exc
    keep = q.sum(axis=1) > 0  # drop outputs that never occur
    return q[keep], params


def design(method: str, *, alphabet: Alphabet, public_distribution: Any, epsilon: float,
           radius: float | None = None, beta: float | None = 0.05, n: int | None = None,
           order: float = 2.0, extra: dict | None = None, solver: str = "auto",
           time_budget: float = DEFAULT_TIME_BUDGET, progress: Callable[[dict], None] | None = None,
           warm_start: Any = None) -> dict:
    """Design, audit and package a mechanism as a document (DESIGN.md).

    The uncertainty set is F = {P : D_α(P̂‖P) ≤ B} with B = ``radius`` if given, else the
    (1 − β)-confidence radius for ``n`` public records (seed 000, eq. 9). ``solver``, ``warm_start``,
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
    options = ({"solver": solver, "time_budget": time_budget, "progress": progress, "warm_start": warm_start}
               if method in SOLVER_METHODS else {})
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
