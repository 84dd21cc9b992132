"""One design request: its fields, its rules (checked once, naming the field), its wire form."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rldp.aggregator.design import (
    DesignParameterError,
    DesignRequest,
    request_fields,
    request_from_json,
    validate_request,
    validated_from_wire,
)
from rldp.aggregator.design.primitives.errors import DesignError
from rldp.shared.audit.registry import notions as audited_notions
from rldp.shared.notions import DESIGN_NOTIONS, NOTIONS


def _valid(**fields) -> DesignRequest:
    return validate_request(DesignRequest(**{"method": "grr", "epsilon": 1.0, "n": 1000, **fields}))


def test_defaults_are_applied_once() -> None:
    request = _valid()
    assert request.beta == 0.05 and request.radius is None and request.order == 2.0 and request.notion == "rldp"
    assert _valid(radius=0.1, n=None).beta is None


@pytest.mark.parametrize(
    ("fields", "parameter", "message"),
    [
        ({"epsilon": 0.0}, "epsilon", "epsilon must be a finite number > 0"),
        ({"epsilon": True}, "epsilon", "epsilon must be a finite number > 0"),
        ({"epsilon": math.nan}, "epsilon", "epsilon must be"),
        ({"epsilon": None}, "epsilon", "notion rldp needs epsilon"),
        ({"radius": 0.1, "beta": 0.05}, "radius", "either radius or beta, not both"),
        ({"beta": 1.0}, "beta", "beta must be a significance level in (0, 1)"),
        ({"radius": -1.0, "n": None}, "radius", "radius must be a number ≥ 0"),
        ({"order": 0}, "order", "order must be a finite number > 0"),
        ({"n": None}, "n", "n (number of public records) is needed"),
        ({"n": 2.5}, "n (number of public records)", "must be an integer ≥ 1"),
        ({"delta": 0.1}, "delta", "delta applies to notion distp only"),
        ({"notion": "distp", "method": "grr", "delta": 1.0}, "delta", "delta must be a number in [0, 1)"),
        ({"epsilon_lower": 0.5}, "epsilon_lower", "applies to notion alip only"),
        (
            {"notion": "alip", "method": "grr", "epsilon": None, "epsilon_lower": 0.5},
            "epsilon_upper",
            "epsilon_upper is missing",
        ),
        (
            {"notion": "alip", "method": "grr", "epsilon": 2.0, "epsilon_lower": 0.5, "epsilon_upper": 1.0},
            "epsilon",
            "max(epsilon_lower, epsilon_upper) = 1",
        ),
        ({"notion": "srlip"}, "notion", "notion must be one of"),
        ({"method": "simplex"}, "method", "unknown method 'simplex'"),
        ({"method": "coupling"}, "method", "does not design for notion 'rldp'"),
        ({"per_report_epsilon": 1.0}, "per_report_epsilon", "must be below epsilon = 1"),
        ({"window": "P0D"}, "window", "window:"),
        ({"solver": "simplex"}, "solver", "solver must be one of"),
        ({"time_budget": -1}, "time_budget", "time_budget must be"),
        ({"target": "uniform"}, "target", "target applies to method coupling only"),
        ({"latent": True, "method": "polyopt"}, "latent", "use one of: grr"),
        ({"epsilon": 1e9}, "epsilon", "epsilon must be at most 700 nats"),
        (
            {"notion": "alip", "epsilon": None, "epsilon_lower": 0.5, "epsilon_upper": 800.0},
            "epsilon_upper",
            "epsilon_upper must be at most 700 nats",
        ),
    ],
)
def test_every_rule_refuses_naming_the_field(fields: dict, parameter: str, message: str) -> None:
    with pytest.raises(DesignParameterError) as info:
        _valid(**fields)
    assert info.value.parameter == parameter
    assert message in str(info.value)
    assert isinstance(info.value, DesignError)  # callers that catch the design's error keep working


def test_the_largest_epsilon_designed_for_keeps_the_grr_audit_finite_and_exact() -> None:
    """--method grr --epsilon 1e9 failed its audit ("audited epsilon inf"): e^-ε underflows. The bound
    refused above is one where GRR's audit is finite and passes, on a small and a large alphabet."""
    from rldp.aggregator.design import grr_matrix
    from rldp.shared.audit import audit_rldp
    from rldp.shared.parameters import MAX_DESIGN_EPSILON
    from rldp.shared.uncertainty import UncertaintySet

    for shape in ((2, 5), (15, 16)):
        uset = UncertaintySet(np.full(shape, 1.0 / (shape[0] * shape[1])), 0.01)
        audited = audit_rldp(grr_matrix(uset.public_distribution.size, MAX_DESIGN_EPSILON), uset, MAX_DESIGN_EPSILON)
        assert audited.passed and math.isfinite(audited.epsilon), audited.epsilon
        beyond = audit_rldp(grr_matrix(uset.public_distribution.size, 750.0), uset, 750.0)
        assert not math.isfinite(beyond.epsilon)  # why there is a bound at all
    assert _valid(epsilon=MAX_DESIGN_EPSILON).epsilon == MAX_DESIGN_EPSILON


def test_alip_epsilon_is_the_max_of_its_bounds() -> None:
    request = _valid(notion="alip", method="grr", epsilon=None, epsilon_lower=0.5, epsilon_upper=1.5)
    assert request.epsilon == 1.5


def test_beta_ceiling_is_a_trust_bound() -> None:
    with pytest.raises(DesignParameterError, match="at most 0.05"):
        validate_request(DesignRequest(method="grr", epsilon=1.0, n=10, beta=0.5), beta_ceiling=0.05)


def test_wire_form_round_trips_and_refuses_unknown_fields() -> None:
    request = _valid(notion="distp", method="coupling", delta=0.1, radius=math.inf, n=None, target="uniform")
    again = DesignRequest.from_wire(request.to_wire())
    assert again == DesignRequest(**{f.name: getattr(request, f.name) for f in dataclasses.fields(DesignRequest)})
    assert validated_from_wire(request.to_wire()) == request and validated_from_wire(request.to_wire()).validated
    with pytest.raises(DesignError, match="unknown design request field"):
        DesignRequest.from_wire({**request.to_wire(), "surprise": 1})


def test_json_never_sets_n_and_checks_types_by_kind() -> None:
    request = request_from_json({"method": "grr", "epsilon": 1, "n": 10**9, "radius": "inf"})
    assert request.n is None and math.isinf(request.radius)
    with pytest.raises(DesignParameterError) as info:
        request_from_json({"method": "grr", "epsilon": "1"})
    assert info.value.parameter == "epsilon"
    with pytest.raises(DesignParameterError) as info:
        request_from_json({"method": "grr", "epsilon": 1, "latent": "yes"})
    assert info.value.parameter == "latent"


def test_every_field_declares_a_kind_and_help() -> None:
    for field in request_fields():
        assert field.kind and field.help, field.name


def test_the_notion_table_agrees_with_the_audits_and_the_designers() -> None:
    from rldp.aggregator.design import NOTION_METHODS

    assert set(NOTIONS) == set(audited_notions()), "every notion in the table has an exact audit, and back"
    assert tuple(NOTION_METHODS) == DESIGN_NOTIONS
    for name in DESIGN_NOTIONS:
        assert NOTION_METHODS[name], f"notion {name} has no designer"


def test_design_refuses_an_oversized_alphabet_before_any_matrix() -> None:
    from rldp.aggregator.design import MAX_DESIGN_SYMBOLS, design
    from rldp.shared.records import Alphabet

    values = [str(i) for i in range(MAX_DESIGN_SYMBOLS // 2 + 1)]
    alphabet = Alphabet.from_dict(
        {"sensitive": {"name": "s", "values": ["a", "b"]}, "released": [{"name": "u", "values": values}]}
    )
    p_hat = np.full((2, len(values)), 1 / (2 * len(values)))
    with pytest.raises(DesignParameterError, match="symbols"):
        design("grr", alphabet=alphabet, public_distribution=p_hat, epsilon=1.0, n=100)


def test_no_field_escapes_validation() -> None:
    """Every field is checked: by a rule of validate_request, or by its kind's validator (a new option)."""
    from rldp.aggregator.design import field_kind
    from rldp.aggregator.design.orchestration.request import _RULED

    unchecked = [
        f.name
        for f in request_fields()
        if f.name not in _RULED and field_kind(f.kind).check is None and f.kind != "local"
    ]
    assert not unchecked


def test_a_design_collects_by_day_unless_none_is_asked() -> None:
    """Windows by default (issue 24): P1D unless ``none`` (any case) or None; a bad duration names 'none'."""
    assert DesignRequest().window == "P1D" and _valid().window == "P1D"
    assert _valid(window="PT6H").window == "PT6H"
    for none in ("none", "None", " NONE ", None):
        assert _valid(window=none).window is None, none
    with pytest.raises(DesignParameterError, match="or 'none' for no windows") as info:
        _valid(window="1 day")
    assert info.value.parameter == "window"
    # JSON: absent is the default, null and "none" are none (what POST /v1/designs and the dashboard send)
    body = {"method": "grr", "epsilon": 1.0}
    assert validate_request(request_from_json(body, n=10)).window == "P1D"
    assert validate_request(request_from_json({**body, "window": None}, n=10)).window is None
    assert validate_request(request_from_json({**body, "window": "none"}, n=10)).window is None
    assert DesignRequest.from_wire(_valid(window=None).to_wire()).window is None  # crosses to the design process
