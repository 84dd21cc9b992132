"""The rules of a design request, checked once: :func:`validate_request`, and its JSON form.

Every boundary that starts a design goes through here: ``rldp design`` builds a
:class:`~.options.DesignRequest` from its flags, the service from its JSON body
(:func:`request_from_json`), a design process receives :meth:`~.options.DesignRequest.to_wire`,
and :func:`~.build.design_document` validates what it is given. Single-field ranges come from
:mod:`rldp.shared.parameters` (one validator per kind of parameter); the cross-field rules live
in :func:`validate_request` alone. Each refusal is a :class:`~.errors.DesignParameterError` naming
the field, which the service answers as a 422 for that parameter and the CLI prints in one line.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rldp.shared.collection import window_choice
from rldp.shared.document import MAX_SYMBOLS
from rldp.shared.errors import ValidationError, one_line
from rldp.shared.notions import NOTIONS
from rldp.shared.parameters import (
    check_beta,
    check_count,
    check_delta,
    check_design_epsilon,
    check_number,
    check_order,
    check_radius,
    describe,
)
from rldp.shared.records import Alphabet

from ..primitives.errors import DesignError, DesignParameterError
from ..primitives.options import (
    DEFAULT_BETA,
    DesignRequest,
    ValidatedRequest,
    check_solver_options,
    request_fields,
    seal_request,
)
from ..solvers.coupling import TARGET_RULES
from ..solvers.optimal_transport import COST_RULES, check_distribution, cost_matrix
from .kinds import field_kind
from .registry import ALL_METHODS, NOTION_METHODS, TRANSPORT_METHODS, methods_for

__all__ = [
    "MAX_DESIGN_SYMBOLS",
    "check_design_size",
    "validate_request",
    "bind_alphabet",
    "bind_public_rows",
    "validated_from_wire",
    "request_from_json",
    "check_transport",
    "validate_parameters",
]

# The largest alphabet |X| = |S|·|U| rldp designs for from data: every designer holds |Y| × |X| float
# matrices (GRR: |X| × |X|; column generation: up to 20·|X| + 2000 columns of |X|), so at 8,192 symbols
# one dense matrix is 512 MiB. The same bound every reader of a document holds it to (one constant).
MAX_DESIGN_SYMBOLS = MAX_SYMBOLS

#: The same tolerance as the document check of ε = max(ε_l, ε_u) for alip.
_ALIP_EPSILON_TOL = 1e-12
_err = DesignParameterError


def _notion(request: DesignRequest) -> str:
    entry = NOTIONS.get(request.notion) if isinstance(request.notion, str) else None
    if entry is None or not entry.designable:
        raise _err(
            f"notion must be one of {', '.join(NOTION_METHODS)}; got {describe(request.notion)}", parameter="notion"
        )
    return entry.name


def _method(method: Any, notion: str) -> str:
    methods = methods_for(notion)
    if method is None:
        raise _err(f"a design needs a method; methods for {notion}: {', '.join(methods)}", parameter="method")
    if isinstance(method, str) and method in methods:
        return method
    if method not in ALL_METHODS:
        raise _err(
            f"unknown method {describe(method)}; choose one of: {', '.join(methods)} (notion {notion})",
            parameter="method",
        )
    others = [name for name, designers in NOTION_METHODS.items() if method in designers]
    raise _err(
        f"method {method!r} does not design for notion {notion!r} (it does for {', '.join(others)}); "
        f"methods for {notion}: {', '.join(methods)}",
        parameter="method",
    )


def _claim(request: DesignRequest, notion: str) -> dict[str, Any]:
    """ε (ε_l, ε_u for alip; δ for distp) by the notion's claim fields [the notion table]."""
    claim = NOTIONS[notion].claim
    out: dict[str, Any] = {}
    for name in ("epsilon_lower", "epsilon_upper", "delta"):
        value = getattr(request, name)
        if value is not None and name not in claim:
            takes = " and ".join(claim)
            raise _err(f"{name} applies to notion {_owner(name)} only; notion {notion} takes {takes}", parameter=name)
    if "epsilon_lower" in claim:
        for name in ("epsilon_lower", "epsilon_upper"):
            if getattr(request, name) is None:
                raise _err(
                    f"notion {notion} needs epsilon_lower and epsilon_upper (ε_l, ε_u: finite numbers > 0, nats); "
                    f"{name} is missing",
                    parameter=name,
                )
            out[name] = check_design_epsilon(getattr(request, name), name, error=_err)
        top = max(out["epsilon_lower"], out["epsilon_upper"])
        if (
            request.epsilon is not None
            and abs(check_number(request.epsilon, "epsilon", error=_err) - top) > _ALIP_EPSILON_TOL
        ):
            raise _err(
                f"epsilon for notion {notion} is max(epsilon_lower, epsilon_upper) = {top:g} (or leave it out); "
                f"got {describe(request.epsilon)}",
                parameter="epsilon",
            )
        out["epsilon"] = top
        return out
    if request.epsilon is None:
        raise _err(f"notion {notion} needs epsilon (a finite number > 0, nats)", parameter="epsilon")
    out["epsilon"] = check_design_epsilon(request.epsilon, error=_err)
    if "delta" in claim and request.delta is not None:
        out["delta"] = check_delta(request.delta, error=_err)
    return out


def _owner(name: str) -> str:
    return next(n.name for n in NOTIONS.values() if n.designable and name in n.claim)


def _uncertainty(request: DesignRequest, beta_ceiling: float | None) -> dict[str, Any]:
    """radius or β (not both; β defaults to DEFAULT_BETA), n when β gives the radius, the order α."""
    out: dict[str, Any] = {"order": check_order(request.order, error=_err)}
    if request.radius is not None:
        if request.beta is not None:
            raise _err("give either radius or beta, not both", parameter="radius")
        return {**out, "radius": check_radius(request.radius, error=_err), "beta": None, "n": _n(request, False)}
    beta = DEFAULT_BETA if request.beta is None else request.beta
    return {**out, "radius": None, "beta": check_beta(beta, ceiling=beta_ceiling, error=_err), "n": _n(request, True)}


def _n(request: DesignRequest, needed: bool) -> int | None:
    if request.n is None:
        if needed:
            raise _err("n (number of public records) is needed to derive the radius from beta", parameter="n")
        return None
    return check_count(request.n, "n (number of public records)", error=_err)


def validate_request(
    request: DesignRequest, *, released_size: int | None = None, beta_ceiling: float | None = None
) -> ValidatedRequest:
    """Check every field and every cross-field rule of ``request``; the request normalised (numbers as
    floats, ε of alip = max(ε_l, ε_u), β = 0.05 unless a radius is given, the window in canonical form: None for "none")
    as a :class:`~.options.ValidatedRequest`, which the design functions take without checking it again.

    ``released_size`` (|U|, once the data is known) also checks the coupling's target and cost;
    ``beta_ceiling`` (a service's trust bound) refuses a larger β. DesignParameterError naming the field.
    """
    notion = _notion(request)
    claim = _claim(request, notion)
    method = _method(request.method, notion)
    uncertainty = _uncertainty(request, beta_ceiling)
    try:
        check_solver_options(
            {"solver": request.solver, "time_budget": request.time_budget, "progress": request.progress}
        )
    except DesignError as exc:
        raise _err(one_line(exc), parameter="solver" if "solver" in str(exc) else "time_budget") from None
    designer = methods_for(notion)[method]
    if not isinstance(request.latent, bool):
        raise _err(f"latent must be true or false; got {describe(request.latent)}", parameter="latent")
    if request.latent and not designer.supports_latent:
        allowed = ", ".join(name for name, d in methods_for(notion).items() if d.supports_latent)
        raise _err(
            f"method {method!r} needs the sensitive attribute as an input of the mechanism; with a latent S "
            f"(the mechanism reads the released attributes only) use one of: {allowed}",
            parameter="latent",
        )
    per_report = request.per_report_epsilon
    if per_report is not None:
        per_report = check_design_epsilon(per_report, "per_report_epsilon", error=_err)
        if not per_report < claim["epsilon"]:
            raise _err(
                f"per_report_epsilon must be below epsilon = {claim['epsilon']:g}; got {describe(per_report)}",
                parameter="per_report_epsilon",
            )
    try:
        window = window_choice(request.window)
    except ValidationError as exc:
        raise _err(f"window: {one_line(exc)}", parameter="window") from None
    check_transport(method, request.target, request.cost, released_size)
    other = _by_kind(request)
    checked = replace(
        request,
        **other,
        method=method,
        notion=notion,
        **claim,
        **uncertainty,
        per_report_epsilon=per_report,
        window=window,
        time_budget=float(request.time_budget),
    )
    return seal_request(checked, released_size)


def bind_alphabet(request: ValidatedRequest, alphabet: Alphabet) -> ValidatedRequest:
    """The validated ``request`` for the data over ``alphabet``: its released attributes' numeric specs set, and
    the coupling's target and cost checked against |U| if they were validated before |U| was known (the one
    rule that needs the data). DesignError if the request was validated for another S (latent or not)."""
    if request.latent != alphabet.latent:
        raise DesignError(
            f"the request was validated with latent={request.latent}, but the alphabet's S is "
            f"{'latent' if alphabet.latent else 'an input of the mechanism'}: validate it for this alphabet"
        )
    numeric = tuple((attr.name, attr.numeric) for attr in alphabet.released)
    if request.released_size != alphabet.n_released:
        check_transport(str(request.method), request.target, request.cost, alphabet.n_released)
    return seal_request(replace(request, released_numeric=numeric), alphabet.n_released)


def bind_public_rows(request: ValidatedRequest, n: int, alphabet: Alphabet) -> ValidatedRequest:
    """The validated ``request`` (checked before the public data was read, with a stand-in n) with n = the public
    data's row count, for ``alphabet`` (:func:`bind_alphabet`): no rule but the radius's reads n's value, and the
    radius is derived from it at design time."""
    rows = check_count(n, "n (number of public records)", error=_err)
    return bind_alphabet(seal_request(replace(request, n=rows), request.released_size), alphabet)


def validated_from_wire(data: dict[str, Any]) -> ValidatedRequest:
    """The request a design process receives from its own server: :meth:`~.options.DesignRequest.to_wire` of a
    request :func:`validate_request` returned there (the service validates at its boundary; the process it
    spawns does not check it again). Not for data from anywhere else."""
    return seal_request(DesignRequest.from_wire(data), None)


#: A column whose values are all numbers and at least this many is said to look continuous (a categorical
#: code such as education-num has 16): below it, a column with many values is as likely categorical.
_CONTINUOUS_MIN_VALUES = 50


def _looks_numeric(values: tuple[str, ...]) -> bool:
    try:
        for v in values:
            float(v)
    except ValueError:
        return False
    return True


def check_design_size(alphabet: Alphabet, where: str) -> None:
    """Refuse an alphabet too large to design for, before any matrix is allocated: name each column's
    number of values (|X| is their product) and say what would help — fewer columns, merged categories, or
    (for a column of many numbers, likely continuous) binning it."""
    if alphabet.size <= MAX_DESIGN_SYMBOLS:
        return
    attrs = alphabet.joint_attributes
    widest = max(attrs, key=lambda a: a.size)
    product = " × ".join(f"{a.name} ({a.size:,})" for a in attrs)
    if widest.size >= _CONTINUOUS_MIN_VALUES and _looks_numeric(widest.values):
        advice = (
            f"column {widest.name!r} has {widest.size:,} distinct numeric values: if it is continuous, bin it "
            f"by declaring it numeric (rldp design --numeric {widest.name} without --categorical; 'numeric' in a "
            "design request): its bins then come from the public quantiles"
        )
    else:
        advice = (
            f"the widest column, {widest.name!r}, has {widest.size:,} distinct values (a categorical column with "
            "many values, or a numeric one): release fewer columns, or merge its rare values into a new column"
            + (" (binned into ranges, if it is continuous)" if _looks_numeric(widest.values) else "")
        )
    raise DesignParameterError(
        f"{where}: the alphabet has |X| = {alphabet.size:,} symbols (> {MAX_DESIGN_SYMBOLS:,} rldp designs for): "
        f"{product}; {advice}",
        parameter="csv",
    )


#: The fields validate_request checks by their own rules above (the rest: by their kind alone).
_RULED = frozenset(
    {"method", "notion", "epsilon", "epsilon_lower", "epsilon_upper", "delta", "radius", "beta", "n", "order"}
    | {"solver", "time_budget", "latent", "per_report_epsilon", "window", "target", "cost"}
)


def _by_kind(request: DesignRequest) -> dict[str, Any]:
    """Every other field checked by its kind's validator (a new option needs no rule of its own here)."""
    out = {}
    for f in request_fields():
        value = getattr(request, f.name)
        check = field_kind(f.kind).check
        if f.name in _RULED or value is None or check is None:
            continue
        out[f.name] = check(value, f.name, error=_err)
    return out


def check_transport(method: str, target: Any, cost: Any, released_size: int | None) -> None:
    """``target`` and ``cost`` of the coupling mechanism: a rule name (:data:`.coupling.TARGET_RULES`,
    :data:`..solvers.optimal_transport.COST_RULES`), |U| probabilities, or a |U|×|U| matrix of finite non-negative costs
    (their sizes checked once |U| = ``released_size`` is known). DesignParameterError naming the field."""
    if method not in TRANSPORT_METHODS:
        for name, value in (("target", target), ("cost", cost)):
            if value is not None:
                raise _err(
                    f"{name} applies to method {', '.join(TRANSPORT_METHODS)} only, not to {method!r}", parameter=name
                )
        return
    if isinstance(target, str):
        if target not in TARGET_RULES:
            raise _err(
                f"target must be one of {', '.join(TARGET_RULES)} or |U| probabilities; got {target!r}",
                parameter="target",
            )
    elif target is not None and released_size is not None:
        _transport(lambda: check_distribution(target, released_size, "target"), "target")
    if isinstance(cost, str) and cost not in COST_RULES:
        raise _err(f"cost must be one of {', '.join(COST_RULES)} or a |U|×|U| matrix; got {cost!r}", parameter="cost")
    if cost is not None and released_size is not None:
        _transport(lambda: cost_matrix(cost, released_size), "cost")


def _transport(check: Any, name: str) -> None:
    try:
        check()
    except DesignParameterError:
        raise
    except (DesignError, ValueError) as exc:
        raise _err(one_line(exc), parameter=name) from None


def _json_value(kind: str, name: str, value: Any) -> Any:
    """One JSON value checked for its type by the field's kind (ranges are :func:`validate_request`'s)."""
    return None if value is None else field_kind(kind).read_json(name, value)


def request_from_json(data: dict[str, Any], **known: Any) -> DesignRequest:
    """A :class:`DesignRequest` from a decoded JSON body: every field the request declares readable from
    JSON, type-checked by its kind; ``known`` are fields the caller knows better than the body (n from
    the uploaded data). Not validated: pass it to :func:`validate_request`."""
    values = {f.name: _json_value(f.kind, f.name, data[f.name]) for f in request_fields() if f.json and f.name in data}
    return DesignRequest(**{**values, **known})


def validate_parameters(
    method: str,
    epsilon: float | None,
    *,
    radius: float | None = None,
    beta: float | None = None,
    n: int | None = None,
    order: float = 2.0,
    notion: str = "rldp",
    delta: float | None = None,
    epsilon_lower: float | None = None,
    epsilon_upper: float | None = None,
) -> None:
    """The rules of :func:`validate_request` for these fields alone (the keyword form, for notebooks)."""
    validate_request(
        DesignRequest(
            method=method,
            epsilon=epsilon,
            radius=radius,
            beta=beta,
            n=n if n is not None or radius is not None else None,
            order=order,
            notion=notion,
            delta=delta,
            epsilon_lower=epsilon_lower,
            epsilon_upper=epsilon_upper,
        )
    )
