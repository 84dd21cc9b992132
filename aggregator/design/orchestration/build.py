"""Design, audit and package: the entry points of mechanism design.

    doc = design("polyopt", alphabet=..., public_distribution=P̂, epsilon=1.0, n=32561, beta=0.05)

Methods (see :data:`~.registry.METHODS`): ``grr`` (GRR on X, the LDP baseline), ``srr``
([LZG24, Def 4]), ``ir`` / ``cr`` (the papers' theorems), ``ir-calibrated`` /
``cr-calibrated`` (the same families tuned to the exact audit), ``polyopt`` ([LZG24, Thm 3]
without the s₁ = s₂ rows), ``polyopt-paper`` ([LZG24, Def 3] exactly as printed), ``nr``
(the non-robust optimum of [LZG24, Sec 8], i.e. PolyOpt with B = 0).

Every document carries its audit; everything except ``nr`` is audited against the
requested uncertainty set and refused (DesignError) if the audit fails. ``nr`` claims
only (ε, {P̂})-RLDP (radius 0), which its audit checks; the leakage it would have over
the requested set is recorded as ``audit.epsilon_requested_set``.

``notion="distp"`` claims (ε, δ)-distribution privacy [KM19, Def 3] between every pair of
conditionals P_U|θ over the same uncertainty set instead: the privacy block is
``{"notion": "distp", "epsilon": ε, "delta": δ, "uncertainty": {…}}`` and the document is audited by
the registered distp audit (:func:`rldp.shared.audit.audit_document`), whose result (the robust δ at
ε, δ at P̂, …) is the document's ``audit``. Methods: ``coupling`` ([KM19, Defs 16, 18]) and every
robust RLDP method (:data:`~.registry.NOTION_METHODS`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from rldp import __version__
from rldp.shared.audit import audit_rldp, audit_validated
from rldp.shared.collection import DEFAULT_WINDOW
from rldp.shared.document import build_document
from rldp.shared.information import entropy, mutual_information
from rldp.shared.notions import NOTIONS
from rldp.shared.provenance import check_document_provenance, validate_provenance
from rldp.shared.records import Alphabet
from rldp.shared.uncertainty import UncertaintySet

from ..primitives.errors import DesignError, PolyOptTooLarge, SolverError
from ..primitives.options import DEFAULT_TIME_BUDGET, DesignRequest, ValidatedRequest, check_solver_options
from ..solvers.per_report import add_per_report_layer
from ..solvers.task import TASK_UNITS, task_error
from .pilot_tuning import PilotTuning, apply_tuning
from .registry import METHODS, TASK_METHODS, methods_for
from .request import bind_alphabet, check_design_size, validate_parameters, validate_request

__all__ = ["design", "design_document", "design_validated", "design_matrix", "run_designer", "validate_parameters"]


def run_designer(
    method: str, uncertainty: UncertaintySet, options: ValidatedRequest
) -> tuple[np.ndarray, dict[str, Any]]:
    """(Q, parameters) of the registered designer for ``method`` (under ``options.notion``), not
    audited; a solver's failure becomes a DesignError, and outputs that never occur are dropped."""
    try:
        q, params = methods_for(options.notion)[method](uncertainty, options)
    except SolverError as exc:
        hint = " (use solver='cg' for large alphabets)" if isinstance(exc, PolyOptTooLarge) else ""
        raise DesignError(f"{method}: {exc}{hint}") from exc
    keep = q.sum(axis=1) > 0  # drop outputs that never occur
    return q[keep], params


def design_matrix(
    method: str, uncertainty: UncertaintySet, epsilon: float, **options: Any
) -> tuple[np.ndarray, dict[str, Any]]:
    """The raw designer: (matrix Q[y, x], parameters) for ``method`` at level ε (nats).

    ``options`` (methods polyopt, polyopt-paper, nr only): ``solver`` "auto" (exact vertex
    enumeration on small alphabets, column generation otherwise), "exact" or "cg";
    ``time_budget`` seconds for column generation (anytime: the best certified mechanism
    when it ends); ``progress`` a callable receiving a dict per round (iteration, seconds,
    information, columns, upper_bound); ``warm_start`` matrices of earlier designs on the
    same data whose rows seed the search (e.g. the design at a smaller ε: its rows lie in
    Γ_ε, so the result is never below it — sweeps over ε stay non-decreasing). Other
    methods check the options and ignore them.

    Not audited: :func:`design` audits before it returns a document.
    """
    check_solver_options(options)
    if not METHODS[method].takes_solver:
        options = {}
    request = DesignRequest(
        method=method, epsilon=epsilon, radius=uncertainty.radius, order=uncertainty.order, **options
    )
    return run_designer(method, uncertainty, validate_request(request))  # once: the public entry


def design(
    method: str,
    *,
    alphabet: Alphabet,
    public_distribution: Any,
    epsilon: float | None = None,
    radius: float | None = None,
    beta: float | None = None,
    n: int | None = None,
    order: float = 2.0,
    extra: dict[str, Any] | None = None,
    solver: str = "auto",
    time_budget: float = DEFAULT_TIME_BUDGET,
    progress: Callable[[dict[str, Any]], None] | None = None,
    warm_start: Any = None,
    provenance: Mapping[str, Any] | None = None,
    notion: str = "rldp",
    delta: float | None = None,
    target: Any = None,
    cost: Any = None,
    epsilon_lower: float | None = None,
    epsilon_upper: float | None = None,
    window: str | None = DEFAULT_WINDOW,
) -> dict[str, Any]:
    """Design, audit and package a mechanism as a document (docs/design.md): the keyword form of
    :func:`design_document` (one :class:`~.options.DesignRequest`), for notebooks.

    ``notion`` is the claim (:data:`rldp.shared.notions.NOTIONS`): ``"rldp"`` (default); ``"distp"``
    with ``delta`` ∈ [0, 1) (default 0); ``"ldp"`` (ε-LDP w.r.t. S over F), ``"lip"`` (ε-LIP) or
    ``"alip"`` ((ε_l, ε_u)-ALIP with ``epsilon_lower``/``epsilon_upper``; ``epsilon`` defaults to their
    max), whose methods are those of :mod:`.funnel`. ``target`` and ``cost`` apply to ``coupling``.

    The uncertainty set is F = {P : D_α(P̂‖P) ≤ B} with B = ``radius`` if given, else the
    (1 − β)-confidence radius for ``n`` public records ([LZG24, eq. 9]; β = 0.05 unless given).
    ``solver``, ``warm_start``, ``time_budget`` (seconds) and ``progress`` apply to polyopt,
    polyopt-paper and nr (see :func:`design_matrix`); the solver's record (iterations,
    seconds, columns, upper bound) lands in the document's ``parameters``.

    ``provenance`` records which public data gave P̂ (the document's ``provenance`` field,
    :mod:`rldp.shared.provenance`); from counts: ``public = PublicCounts.from_table(table,
    alphabet, name="adult.csv")``, then ``public_distribution=public.distribution, n=public.n,
    provenance=public.provenance()``. ``n`` defaults to its n; a provenance that does not
    describe P̂ and n (P̂ × n are not the counts it hashes) is refused (DesignError).

    ``window`` is the collection window (:data:`rldp.shared.collection.DEFAULT_WINDOW`, one day, unless
    asked otherwise; None or ``"none"`` for none): clients send at most one report per owner and window.
    """
    if provenance is not None:
        provenance = validate_provenance(provenance)
        n = provenance["n"] if n is None else n
    request = DesignRequest(
        method=method,
        notion=notion,
        epsilon=epsilon,
        epsilon_lower=epsilon_lower,
        epsilon_upper=epsilon_upper,
        delta=delta,
        radius=radius,
        beta=beta,
        n=n,
        order=order,
        solver=solver,
        time_budget=time_budget,
        target=target,
        cost=cost,
        progress=progress,
        warm_start=warm_start,
        extra=extra,
        window=window,
    )
    return design_document(request, alphabet=alphabet, public_distribution=public_distribution, provenance=provenance)


def design_document(
    request: DesignRequest,
    *,
    alphabet: Alphabet,
    public_distribution: Any,
    provenance: Mapping[str, Any] | None = None,
    box: tuple[np.ndarray, np.ndarray] | None = None,
    tuning: PilotTuning | None = None,
) -> dict[str, Any]:
    """Design, audit and package the mechanism ``request`` asks for, over ``alphabet`` with the public
    estimate P̂ = ``public_distribution`` (and the provenance of P̂; ``box`` (ℓ, u) narrows the uncertainty set
    to the ball ∩ box, a pilot's F; ``tuning``, for a design over a pilot's F: what utility is optimised for
    instead of P̂, and how a rank-deficient design stays identifiable, :mod:`.pilot_tuning`). Every notion is
    packaged and
    audited the same way: the privacy block from the notion's claim fields, then the notion's
    registered exact audit (:func:`rldp.shared.audit.audit_document`); a failed audit is a DesignError.
    The request's ``window`` becomes the document's collection window, and its ``per_report_epsilon``
    a per-report layer (:func:`.per_report.add_per_report_layer`).

    A :class:`~.options.ValidatedRequest` (what :func:`.request.validate_request` returns) is taken as it is;
    any other request is validated here, once, for this alphabet."""
    if not (isinstance(request, ValidatedRequest) and request.validated):
        request = validate_request(replace(request, latent=alphabet.latent), released_size=alphabet.n_released)
    return design_validated(
        request,
        alphabet=alphabet,
        public_distribution=public_distribution,
        provenance=provenance,
        box=box,
        tuning=tuning,
    )


def design_validated(
    request: ValidatedRequest,
    *,
    alphabet: Alphabet,
    public_distribution: Any,
    provenance: Mapping[str, Any] | None = None,
    box: tuple[np.ndarray, np.ndarray] | None = None,
    tuning: PilotTuning | None = None,
) -> dict[str, Any]:
    """:func:`design_document` for a request validated at the boundary (the rules are not checked again)."""
    if provenance is not None and "provenance" in (request.extra or {}):
        raise DesignError("give the provenance once: as provenance=, not also in extra")
    check_design_size(alphabet, "design")
    request = bind_alphabet(request, alphabet)
    method = str(request.method)
    p_hat = np.asarray(public_distribution, dtype=float)
    if p_hat.shape != (alphabet.n_sensitive, alphabet.n_released):
        raise DesignError(
            f"public_distribution has shape {p_hat.shape}; the alphabet needs "
            f"({alphabet.n_sensitive}, {alphabet.n_released})"
        )
    if provenance is not None:  # checked before the design: a provenance that does not describe P̂ is a lie
        draft = {**alphabet.to_dict(), "public_distribution": p_hat, "privacy": {"uncertainty": {"n": request.n}}}
        check = check_document_provenance({**draft, "provenance": provenance})
        if not check.passed:
            raise DesignError(f"the provenance does not describe this design's public data: {check.summary()}")
    if request.radius is None:
        if box is not None:
            raise DesignError("a box narrows a stated radius (a pilot's F); this request has none")
        uset = UncertaintySet.from_confidence(p_hat, int(request.n or 0), float(request.beta or 0), request.order)
    else:
        uset = UncertaintySet(
            p_hat, float(request.radius), request.order, box, None if tuning is None else tuning.objective
        )

    start = time.perf_counter()
    q, params = run_designer(method, uset, request)
    if request.task != "joint":
        method, q, params = _for_task(method, q, params, uset, request, alphabet)
    if tuning is not None:
        q, params = apply_tuning(tuning, q, params, request, alphabet)
    seconds = time.perf_counter() - start
    doc = _package(q, params, seconds, alphabet, uset, request, provenance, method)
    if request.per_report_epsilon is not None:  # one report reveals at most ε₁ (.per_report)
        doc = add_per_report_layer(doc, request.per_report_epsilon)
    return doc


def _for_task(
    method: str,
    q: np.ndarray,
    params: dict[str, Any],
    uset: UncertaintySet,
    request: ValidatedRequest,
    alphabet: Alphabet,
) -> tuple[str, np.ndarray, dict[str, Any]]:
    """The design with the least error for ``request.task`` (U's distribution or mean, in U's units): the
    method's own, or for a utility-optimising method also randomised response on U alone; both errors kept
    in ``parameters.task`` (per report at P̂; null: the statistic is not identifiable from the reports)."""
    task = request.task
    if len(alphabet.released) != 1:
        raise DesignError(f"task {task!r} needs exactly one released attribute (U); got {len(alphabet.released)}")
    spec = alphabet.released[0].numeric
    if task == "mean" and spec is None:
        raise DesignError(f"task 'mean' needs a numeric released attribute; {alphabet.released[0].name!r} is not")
    edges = None if spec is None else np.asarray(spec.edges)
    p_hat = uset.public_distribution
    errors = {method: task_error(task, q, p_hat, alphabet.latent, edges)}
    chosen = (method, q, params)
    if method in TASK_METHODS and "rr-released" in methods_for(request.notion):
        rr_q, rr_params = run_designer("rr-released", uset, request)
        errors["rr-released"] = task_error(task, rr_q, p_hat, alphabet.latent, edges)
        rr_error, own_error = errors["rr-released"], errors[method]
        if rr_error is not None and (own_error is None or rr_error < own_error):
            chosen = ("rr-released", rr_q, rr_params)
    name, q, params = chosen
    finite = {k: (v if v is not None and np.isfinite(v) else None) for k, v in errors.items()}
    block = {"task": task, "measure": TASK_UNITS[task], "per_report_error": finite, "asked": method, "chosen": name}
    return name, q, {**params, "task": block}


def _uncertainty_block(uset: UncertaintySet, request: DesignRequest) -> dict[str, Any]:
    out: dict[str, Any] = uset.describe()
    if request.n is not None:
        out["n"] = int(request.n)
    if request.beta is not None:
        out["beta"] = float(request.beta)
    return out


def _privacy_block(request: DesignRequest, uncertainty: dict[str, Any]) -> dict[str, Any]:
    """``{notion, epsilon, <the notion's claim fields>, uncertainty}`` (the notion table's claim)."""
    privacy: dict[str, Any] = {"notion": request.notion, "epsilon": float(request.epsilon or 0.0)}
    for name in NOTIONS[request.notion].claim:
        if name != "epsilon":
            privacy[name] = float(getattr(request, name) or 0.0)
    privacy["uncertainty"] = uncertainty
    return privacy


def _package(
    q: np.ndarray,
    params: dict[str, Any],
    seconds: float,
    alphabet: Alphabet,
    uset: UncertaintySet,
    request: ValidatedRequest,
    provenance: Mapping[str, Any] | None,
    method: str,
) -> dict[str, Any]:
    """The audited document, built once: the notion's audit runs on the validated content inside
    :func:`~rldp.shared.document.build_document` and its block is hashed with the rest. A non-robust designer
    (``nr``) claims its notion at P̂ only (radius 0); what the requested set would see is recorded as
    ``audit.epsilon_requested_set`` / ``requested_radius``."""
    robust = methods_for(request.notion)[method].robust
    p_hat = uset.public_distribution
    claimed = uset if robust else UncertaintySet(p_hat, 0.0, request.order)
    uncertainty = _uncertainty_block(uset, request) if robust else dict(claimed.describe())
    privacy = _privacy_block(request, uncertainty)
    fields = _document_extra(q, params, None, seconds, p_hat, alphabet.latent, request, provenance)

    def _audit(content: Mapping[str, Any]) -> dict[str, Any]:
        result = audit_validated(content)
        if not result.passed:
            raise DesignError(f"the {method} mechanism failed its audit: {'; '.join(result.reasons)}")
        block = result.to_dict()
        if not robust:
            requested = audit_rldp(q, uset, float(request.epsilon or 0.0))
            block.update(
                epsilon_requested_set=requested.to_dict()["epsilon"], requested_radius=uset.describe()["radius"]
            )
        return block

    return build_document(
        method=method,
        matrix=q,
        alphabet=alphabet,
        public_distribution=p_hat,
        privacy=privacy,
        extra=fields,
        audit=_audit,
    )


def _pop_timings(obj: Any, path: str) -> dict[str, float]:
    """Remove every ``seconds`` entry from ``obj`` (nested dicts and lists); {dotted path: value}."""
    out: dict[str, float] = {}
    if isinstance(obj, dict):
        if "seconds" in obj:
            out[f"{path}.seconds"] = float(obj.pop("seconds"))
        for key, value in obj.items():
            out.update(_pop_timings(value, f"{path}.{key}"))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out.update(_pop_timings(value, f"{path}[{i}]"))
    return out


def _document_extra(
    q: np.ndarray,
    params: dict[str, Any],
    audit: dict[str, Any] | None,
    seconds: float,
    p_hat: np.ndarray,
    latent: bool,
    options: DesignRequest,
    provenance: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The document's fields besides the mechanism: parameters, audit, utility, design, provenance."""
    # Utility over the mechanism's input X: (S, U), or U alone when S is latent.
    p_input = p_hat.sum(axis=0) if latent else p_hat
    info = mutual_information(q, p_input)  # once: at K = 4,000 one pass over Q costs ~1 s
    h = entropy(p_input)
    doc_extra: dict[str, Any] = {
        "parameters": params,
        "utility": {
            "mutual_information": info,
            "nmi": info / h if h > 0 else 0.0,  # = normalized_mutual_information(q, p_input)
            "distribution": "public",
        },
        "design": {"software": f"rldp {__version__}"},
        # timings differ between runs of the same design: kept out of the id (equal designs, equal ids)
        "run": {"seconds": seconds, **_pop_timings(params, "parameters")},
    }
    if audit is not None:
        doc_extra["audit"] = audit
    doc_extra.update(options.extra or {})
    if options.window is not None:  # the collection window (rldp.shared.collection)
        doc_extra["collection"] = {**doc_extra.get("collection", {}), "window": options.window}
    if provenance is not None:
        doc_extra["provenance"] = dict(provenance)
    return doc_extra
