"""The kinds of design request field (rldp.aggregator.design.orchestration.kinds): each kind's JSON Schema, JSON
reading, range check and flag are declared once and agree with one another."""

from __future__ import annotations

import argparse
import math
from typing import Any

import pytest

from rldp.aggregator.design import FIELD_KINDS, DesignParameterError, field_kind, request_fields

jsonschema_rs = pytest.importorskip("jsonschema_rs")  # comes with schemathesis (the test extra)

#: JSON values of every type, inside and outside every kind's range.
VALUES: tuple[Any, ...] = (
    0,
    1,
    -1,
    0.5,
    1.5,
    699.0,
    701.0,
    1e300,
    "inf",
    "Infinity",
    "-inf",
    "x",
    "",
    "joint",
    "mean",
    "auto",
    "cg",
    "best",
    "hamming",
    "P1D",
    "rldp",
    True,
    False,
    [],
    [0.5, 0.5],
    [-1.0, 2.0],
    [[0, 1], [1, 0]],
    [[0, "a"]],
    {},
)


def _accepted(kind: str, value: Any) -> bool:
    """Whether the service takes ``value`` for a field of ``kind``: its JSON type, then its range check."""
    k = field_kind(kind)
    try:
        kept = k.read_json("field", value)
        if k.check is not None:
            k.check(kept, "field", error=DesignParameterError)
    except DesignParameterError:
        return False
    return True


def test_every_request_field_has_a_declared_kind() -> None:
    assert {f.kind for f in request_fields()} <= set(FIELD_KINDS)
    with pytest.raises(TypeError, match="no design request field kind 'nope'"):
        field_kind("nope")


@pytest.mark.parametrize("kind", [k for k in FIELD_KINDS if k != "local"])
def test_what_the_schema_allows_the_service_takes(kind: str) -> None:
    """An API reader who follows the OpenAPI schema is never refused for the type or range of a single field."""
    schema = jsonschema_rs.validator_for(dict(field_kind(kind).schema))
    allowed = [v for v in VALUES if schema.is_valid(v)]
    assert allowed, f"no sample value fits the schema of {kind}"
    refused = [v for v in allowed if not _accepted(kind, v)]
    assert refused == [], f"{kind}: the schema allows {refused} but the service refuses them"


@pytest.mark.parametrize("kind", ["epsilon", "delta", "beta", "radius", "order", "seconds", "task", "bool", "count"])
def test_what_the_service_takes_the_schema_allows(kind: str) -> None:
    """For kinds checked whole by their own rules, schema and service agree both ways (notion, method, solver and
    window are named or parsed by validate_request's cross-field rules, whose messages list the choices)."""
    schema = jsonschema_rs.validator_for(dict(field_kind(kind).schema))
    taken = [v for v in VALUES if _accepted(kind, v)]
    assert [v for v in taken if not schema.is_valid(v)] == []


def test_every_flag_field_has_a_command_line_form_that_checks_its_range() -> None:
    for f in request_fields():
        if not f.flag:
            continue
        make = field_kind(f.kind).flag
        assert make is not None, f"{f.name} is a flag but its kind {f.kind} has no command-line form"
        parser = argparse.ArgumentParser(exit_on_error=False)
        label = f.name.replace("_", " ")
        parser.add_argument("--x", **make(label))
        if "choices" in make(label):
            continue
        with pytest.raises(argparse.ArgumentError, match=label):
            parser.parse_args(["--x", "-1"])


def test_radius_infinity_reads_as_inf() -> None:
    assert field_kind("radius").read_json("radius", "inf") == math.inf
    assert not _accepted("radius", "-inf")
