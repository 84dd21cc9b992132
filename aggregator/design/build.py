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
from rldp.shared.audit import audit_document, audit_rldp
from rldp.shared.document import build_document
from rldp.shared.information import entropy, mutual_information
from rldp.shared.provenance import check_document_provenance, validate_provenance
from rldp.shared.records import Alphabet
from rldp.shared.uncertainty import UncertaintySet

from .errors import DesignError, PolyOptTooLarge, SolverError
from .funnel.claim import FUNNEL_NOTIONS
from .options import DEFAULT_TIME_BUDGET, DesignOptions, check_solver_options
from .parameters import check_bounds, check_transport, validate_parameters
from .registry import METHODS, methods_for

__all__ = ["design", "design_document", "design_matrix", "run_designer", "validate_parameters"]


def run_designer(method: str, uncertainty: UncertaintySet, options: DesignOptions) -> tuple[np.ndarray, dict]:
    """(Q, parameters) of the registered designer for ``method`` (under ``options.notion``), not
    audited; a solver's failure becomes a DesignError, and outputs that never occur are dropped."""
    try:
        q, params = methods_for(options.notion)[method](uncertainty, options)
    except SolverError as exc:
        hint = " (use solver='cg' for large alphabets)" if isinstance(exc, PolyOptTooLarge) else ""
        raise DesignError(f"{method}: {exc}{hint}") from exc
    keep = q.sum(axis=1) > 0  # drop outputs that never occur
    return q[keep], params


def design_matrix(method: str, uncertainty: UncertaintySet, epsilon: float, **options: Any) -> tuple[np.ndarray, dict]:
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
    validate_parameters(method, epsilon, radius=uncertainty.radius, order=uncertainty.order)
    check_solver_options(options)
    if not METHODS[method].takes_solver:
        options = {}
    opts = DesignOptions(
        epsilon=float(epsilon), radius=uncertainty.radius, beta=None, order=uncertainty.order, **options
    )
    return run_designer(method, uncertainty, opts)


def design(
    method: str,
    *,
    alphabet: Alphabet,
    public_distribution: Any,
    epsilon: float | None = None,
    radius: float | None = None,
    beta: float | None = 0.05,
    n: int | None = None,
    order: float = 2.0,
    extra: dict | None = None,
    solver: str = "auto",
    time_budget: float = DEFAULT_TIME_BUDGET,
    progress: Callable[[dict], None] | None = None,
    warm_start: Any = None,
    provenance: Mapping[str, Any] | None = None,
    notion: str = "rldp",
    delta: float | None = None,
    target: Any = None,
    cost: Any = None,
    epsilon_lower: float | None = None,
    epsilon_upper: float | None = None,
) -> dict:
    """Design, audit and package a mechanism as a document (docs/design.md).

    ``notion`` may also be ``"ldp"`` (ε-LDP w.r.t. S over F), ``"lip"`` (ε-LIP) or ``"alip"``
    ((ε_l, ε_u)-ALIP with ``epsilon_lower``/``epsilon_upper``; ``epsilon`` defaults to their max); the
    methods are those of :mod:`.funnel` (``optimal``, ``grr``, ``oue``, ``cr``, the watchdog family).

    ``notion`` is the claim: ``"rldp"`` (default) or ``"distp"`` with ``delta`` ∈ [0, 1) (default 0).
    ``target`` and ``cost`` apply to ``coupling`` (see :class:`DesignOptions`).

    The uncertainty set is F = {P : D_α(P̂‖P) ≤ B} with B = ``radius`` if given, else the
    (1 − β)-confidence radius for ``n`` public records ([LZG24, eq. 9]). ``solver``,
    ``warm_start``, ``time_budget`` (seconds) and ``progress`` apply to polyopt,
    polyopt-paper and nr (see :func:`design_matrix`); the solver's record (iterations,
    seconds, columns, upper bound) lands in the document's ``parameters``.

    ``provenance`` records which public data gave P̂ (the document's ``provenance`` field,
    :mod:`rldp.shared.provenance`); from counts: ``public = PublicCounts.from_table(table,
    alphabet, name="adult.csv")``, then ``public_distribution=public.distribution, n=public.n,
    provenance=public.provenance()``. ``n`` defaults to its n; a provenance that does not
    describe P̂ and n (P̂ × n are not the counts it hashes) is refused (DesignError).
    """
    if provenance is not None:
        provenance = validate_provenance(provenance)
        n = provenance["n"] if n is None else n
    if epsilon is None and notion == "alip":
        check_bounds(notion, None, epsilon_lower, epsilon_upper)
        epsilon = max(float(epsilon_lower or 0), float(epsilon_upper or 0))
    options = DesignOptions(
        epsilon=epsilon,  # type: ignore[arg-type]  # checked by validate_parameters
        radius=radius,
        beta=beta,
        n=n,
        order=order,
        solver=solver,
        time_budget=time_budget,
        progress=progress,
        warm_start=warm_start,
        extra=extra,
        notion=notion,
        delta=delta,
        target=target,
        cost=cost,
        epsilon_lower=epsilon_lower,
        epsilon_upper=epsilon_upper,
    )
    return design_document(
        method, alphabet=alphabet, public_distribution=public_distribution, options=options, provenance=provenance
    )


def _audit(
    method: str, q: np.ndarray, uset: UncertaintySet, p_hat: np.ndarray, options: DesignOptions, robust: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(privacy.uncertainty, audit) of the document; DesignError if the audit fails."""
    eps = options.epsilon
    uncertainty: dict[str, Any] = uset.describe()
    if options.n is not None:
        uncertainty["n"] = int(options.n)
    if options.beta is not None:
        uncertainty["beta"] = float(options.beta)
    if robust:
        result = audit_rldp(q, uset, eps)
        audit = result.to_dict()
    else:  # the claim is (ε, {P̂})-RLDP; record what the requested set would see
        claimed = UncertaintySet(p_hat, 0.0, options.order)
        result = audit_rldp(q, claimed, eps)
        requested = audit_rldp(q, uset, eps)
        uncertainty = dict(claimed.describe())
        audit = dict(
            result.to_dict(),
            epsilon_requested_set=requested.to_dict()["epsilon"],
            requested_radius=uset.describe()["radius"],
        )
    if not result.passed:
        raise DesignError(f"the {method} mechanism failed its audit: {'; '.join(result.reasons)}")
    return uncertainty, audit


def design_document(
    method: str,
    *,
    alphabet: Alphabet,
    public_distribution: Any,
    options: DesignOptions,
    provenance: Mapping[str, Any] | None = None,
) -> dict:
    """:func:`design` with its parameters as one :class:`DesignOptions` (and the provenance of P̂)."""
    if provenance is not None and "provenance" in (options.extra or {}):
        raise DesignError("give the provenance once: as provenance=, not also in extra")
    if options.radius is not None:
        options = replace(options, beta=None)
    validate_parameters(
        method,
        options.epsilon,
        radius=options.radius,
        beta=options.beta,
        n=options.n,
        order=options.order,
        notion=options.notion,
        delta=options.delta,
        epsilon_lower=options.epsilon_lower,
        epsilon_upper=options.epsilon_upper,
    )
    options.check_solver()
    designers = methods_for(options.notion)
    designer = designers[method]
    check_transport(method, options.target, options.cost, alphabet.n_released)
    latent = alphabet.latent
    if latent and not designer.supports_latent:
        raise DesignError(
            f"method {method!r} needs the sensitive attribute as an input of the mechanism; this "
            f"alphabet's S is latent (the mechanism reads the released attributes only). Methods "
            f"that support a latent S: {', '.join(n for n, d in designers.items() if d.supports_latent)}"
        )
    p_hat = np.asarray(public_distribution, dtype=float)
    if p_hat.shape != (alphabet.n_sensitive, alphabet.n_released):
        raise DesignError(
            f"public_distribution has shape {p_hat.shape}; the alphabet needs "
            f"({alphabet.n_sensitive}, {alphabet.n_released})"
        )
    if provenance is not None:  # checked before the design: a provenance that does not describe P̂ is a lie
        draft = {**alphabet.to_dict(), "public_distribution": p_hat, "privacy": {"uncertainty": {"n": options.n}}}
        check = check_document_provenance({**draft, "provenance": provenance})
        if not check.passed:
            raise DesignError(f"the provenance does not describe this design's public data: {check.summary()}")
    if options.radius is None:
        if options.n is None or options.beta is None:
            raise DesignError("give radius, or n (public records) and beta (significance level) for the confidence set")
        uset = UncertaintySet.from_confidence(p_hat, int(options.n), float(options.beta), options.order)
    else:
        uset = UncertaintySet(p_hat, float(options.radius), options.order)
    options = replace(options, epsilon=float(options.epsilon), latent=latent)

    start = time.perf_counter()
    q, params = run_designer(method, uset, options)
    seconds = time.perf_counter() - start
    if options.notion in FUNNEL_NOTIONS or options.notion == "distp":
        return _registered_document(method, q, params, seconds, alphabet, uset, options, provenance)
    uncertainty, audit = _audit(method, q, uset, p_hat, options, designer.robust)

    privacy = {"notion": "rldp", "epsilon": options.epsilon, "uncertainty": uncertainty}
    doc_extra = _document_extra(q, params, audit, seconds, p_hat, latent, options, provenance)
    return build_document(
        method=method, matrix=q, alphabet=alphabet, public_distribution=p_hat, privacy=privacy, extra=doc_extra
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
    params: dict,
    audit: dict[str, Any] | None,
    seconds: float,
    p_hat: np.ndarray,
    latent: bool,
    options: DesignOptions,
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
    if provenance is not None:
        doc_extra["provenance"] = dict(provenance)
    return doc_extra


def _registered_document(
    method: str,
    q: np.ndarray,
    params: dict,
    seconds: float,
    alphabet: Alphabet,
    uset: UncertaintySet,
    options: DesignOptions,
    provenance: Mapping[str, Any] | None,
) -> dict:
    """Package a distp/ldp/lip/alip design: the document is audited by its notion's registered audit
    (as the service and the client will audit it) and refused (DesignError) if it fails; the result
    is its ``audit``. Privacy blocks: distp ``{notion, epsilon, delta, uncertainty}``; ldp and lip
    ``{notion, epsilon, uncertainty}``; alip ``{notion, epsilon = max(ε_l, ε_u), epsilon_lower,
    epsilon_upper, uncertainty}`` (radius 0: the guarantee is stated at P̂ only)."""
    uncertainty: dict[str, Any] = uset.describe()
    if options.n is not None:
        uncertainty["n"] = int(options.n)
    if options.beta is not None:
        uncertainty["beta"] = float(options.beta)
    privacy: dict[str, Any] = {"notion": options.notion, "epsilon": options.epsilon}
    if options.notion == "distp":
        privacy["delta"] = float(options.delta or 0.0)
    if options.notion == "alip":
        privacy["epsilon_lower"] = float(options.epsilon_lower or 0.0)
        privacy["epsilon_upper"] = float(options.epsilon_upper or 0.0)
    privacy["uncertainty"] = uncertainty
    p_hat = uset.public_distribution
    fields = _document_extra(q, params, None, seconds, p_hat, alphabet.latent, options, provenance)
    draft = build_document(
        method=method, matrix=q, alphabet=alphabet, public_distribution=p_hat, privacy=privacy, extra=fields
    )
    result = audit_document(draft)
    if not result.passed:
        raise DesignError(f"the {method} mechanism failed its audit: {'; '.join(result.reasons)}")
    fields["audit"] = result.to_dict()
    return build_document(
        method=method, matrix=q, alphabet=alphabet, public_distribution=p_hat, privacy=privacy, extra=fields
    )
