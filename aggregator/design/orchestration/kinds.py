"""The kinds of design request field, each declared once: its range check, its JSON type, its JSON Schema
and its command-line form.

A field of :class:`~..primitives.options.DesignRequest` names its kind; every boundary reads the kind
from :data:`FIELD_KINDS` (in the way scikit-learn's ``Interval``/``StrOptions`` constraints carry their
own check and text): :func:`.request.validate_request` checks a field's range by ``check``,
:func:`.request.request_from_json` its JSON type by ``read_json``, the OpenAPI document shows ``schema``
and ``rldp design`` builds the flag from ``flag``. So a new kind is one entry here, a new field of a
known kind is one line in :mod:`..primitives.options`, and the four can no longer disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from rldp.shared.arguments import checked, positive_float, positive_int
from rldp.shared.collection import DEFAULT_WINDOW
from rldp.shared.notions import DEFAULT_NOTION, DESIGN_NOTIONS
from rldp.shared.parameters import (
    MAX_DESIGN_EPSILON,
    check_beta,
    check_count,
    check_delta,
    check_design_epsilon,
    check_number,
    check_order,
    check_radius,
    describe,
)

from ..primitives.errors import DesignParameterError
from ..primitives.options import SOLVERS
from ..solvers.coupling import TARGET_RULES
from ..solvers.optimal_transport import COST_RULES
from ..solvers.task import TASKS, check_task

__all__ = ["FieldKind", "FIELD_KINDS", "field_kind"]

_err = DesignParameterError
#: A range check: (value, field name, error factory) -> the value as the request keeps it.
RangeCheck = Callable[..., Any]


@dataclass(frozen=True)
class FieldKind:
    """One kind of request field (see the module docstring)."""

    name: str
    #: The JSON Schema of a value of this kind (the OpenAPI document's request body).
    schema: Mapping[str, Any]
    #: A decoded JSON value checked for its type: the value as the request keeps it (ranges are ``check``'s).
    read_json: Callable[[str, Any], Any]
    #: The range check validate_request applies to a field of this kind that has no rule of its own (None: every
    #: field of this kind is checked by a cross-field rule of validate_request).
    check: RangeCheck | None = None
    #: argparse keywords of the flag of a field of this kind, given the flag's label (None: no command-line form).
    flag: Callable[[str], dict[str, Any]] | None = field(default=None)


def _passed(name: str, value: Any) -> Any:
    """Any JSON value: validate_request names the choices (notion, method)."""
    return value


def _number(name: str, value: Any) -> float:
    return check_number(value, name, accept=lambda v: True, expected="a number", error=_err)


def _radius(name: str, value: Any) -> float:
    return math.inf if value in ("inf", "Infinity") else _number(name, value)


def _typed(expected: str, accept: Callable[[Any], bool]) -> Callable[[str, Any], Any]:
    def read(name: str, value: Any) -> Any:
        if not accept(value):
            raise _err(f"{name} must be {expected}; got {describe(value)}", parameter=name)
        return value

    return read


def _numbers(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value
    )


def _integral(value: Any) -> bool:
    """An integer as JSON Schema has it: 32561 and 32561.0 alike (check_count takes both)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer()


def _target(name: str, value: Any) -> Any:
    if isinstance(value, str) or _numbers(value):
        return value
    raise _err(f"target must be a rule name or a list of probabilities; got {describe(value)}", parameter=name)


def _cost(name: str, value: Any) -> Any:
    if isinstance(value, str) or (isinstance(value, list) and all(_numbers(row) for row in value)):
        return value
    raise _err(f"cost must be a rule name or a square list of lists of numbers; got {describe(value)}", parameter=name)


def _seconds(value: Any, name: str, error: Any) -> float:
    return check_number(
        value, name, accept=lambda v: math.isfinite(v) and v > 0, expected="a finite number of seconds > 0", error=error
    )


def _no_json(name: str, value: Any) -> Any:
    raise _err(f"{name} is not read from a request body", parameter=name)


_string = _typed("a string", lambda v: isinstance(v, str))
_positive = {"type": "number", "exclusiveMinimum": 0}
_epsilon = {**_positive, "maximum": MAX_DESIGN_EPSILON}
#: ``--delta``: the δ of an (ε, δ)-DistP claim.
_delta_flag = checked(
    float,
    lambda value: 0 <= value < 1,
    "delta must be a number in [0, 1); got {text!r}",
    "delta must be in [0, 1); got {text!r}",
)

_KINDS = (
    FieldKind("epsilon", _epsilon, _number, check_design_epsilon, lambda label: {"type": positive_float(label)}),
    FieldKind(
        "delta",
        {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
        _number,
        check_delta,
        lambda label: {"type": _delta_flag},
    ),
    FieldKind("beta", {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}, _number, check_beta),
    FieldKind(
        "radius",
        {"oneOf": [{"type": "number", "minimum": 0}, {"type": "string", "enum": ["inf", "Infinity"]}]},
        _radius,
        check_radius,
    ),
    FieldKind("order", _positive, _number, check_order, lambda label: {"type": positive_float(label)}),
    FieldKind("seconds", _positive, _number, _seconds, lambda label: {"type": positive_float(label)}),
    FieldKind(
        "count",
        {"type": "integer", "minimum": 1},
        _typed("an integer", _integral),
        lambda value, name, error: check_count(value, name, error=error),
        lambda label: {"type": positive_int(label)},
    ),
    FieldKind("method", {"type": "string"}, _passed),
    FieldKind("notion", {"type": "string", "enum": list(DESIGN_NOTIONS), "default": DEFAULT_NOTION}, _passed),
    FieldKind(
        "solver",
        {"type": "string", "enum": list(SOLVERS), "default": "auto"},
        _string,
        flag=lambda label: {"choices": list(SOLVERS)},
    ),
    FieldKind(
        "task",
        {"type": "string", "enum": list(TASKS), "default": "joint"},
        _string,
        check_task,
        lambda label: {"choices": list(TASKS)},
    ),
    FieldKind("window", {"type": ["string", "null"], "default": DEFAULT_WINDOW}, _string),
    FieldKind("bool", {"type": "boolean", "default": False}, _typed("true or false", lambda v: isinstance(v, bool))),
    FieldKind(
        "target",
        {
            "oneOf": [
                {"type": "string", "enum": list(TARGET_RULES)},
                {"type": "array", "items": {"type": "number", "minimum": 0}},
            ]
        },
        _target,
    ),
    FieldKind(
        "cost",
        {
            "oneOf": [
                {"type": "string", "enum": list(COST_RULES)},
                {"type": "array", "items": {"type": "array", "items": {"type": "number", "minimum": 0}}},
            ]
        },
        _cost,
    ),
    # Set by the caller in-process (a progress callback, warm-start matrices): never JSON, never a flag.
    FieldKind("local", {}, _no_json),
)

#: Every kind of design request field, by name.
FIELD_KINDS: Mapping[str, FieldKind] = MappingProxyType({k.name: k for k in _KINDS})


def field_kind(name: str) -> FieldKind:
    """The kind called ``name`` (TypeError for a kind nobody declared: a programming error)."""
    try:
        return FIELD_KINDS[name]
    except KeyError:
        raise TypeError(f"no design request field kind {name!r}; declared: {', '.join(FIELD_KINDS)}") from None
