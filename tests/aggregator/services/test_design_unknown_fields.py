"""A design request's body holds only the fields the service reads: a misspelt field ("radus",
"planned_report") was silently ignored, so the job designed something else than asked. Now it is a 422 naming
the field and what is expected; the OpenAPI schema says the same (``additionalProperties: false``) and lists
exactly the fields the service accepts — ``planned_reports`` among them (the job chooses U's bins by the rule)."""

from __future__ import annotations

import pytest

from rldp.aggregator.services.designs import design_body_fields, design_request
from rldp.aggregator.services.errors import InvalidParameter

BODY = {
    "sensitive": "sex",
    "released": ["colour"],
    "epsilon": 1.0,
    "method": "grr",
    "csv": "sex,colour\nF,red\nM,blue\n",
}


@pytest.mark.parametrize(
    ("field", "needle"),
    [("radus", "unknown field 'radus'; expected only: csv,"), ("planned_report", "unknown field 'planned_report'")],
)
def test_a_field_the_service_does_not_read_is_refused_by_name(field: str, needle: str) -> None:
    with pytest.raises(InvalidParameter) as info:
        design_request({**BODY, field: 0.1})
    assert needle in str(info.value) and info.value.fields["parameter"] == field


def test_every_field_the_service_reads_is_accepted_and_the_schema_lists_exactly_them() -> None:
    from rldp.aggregator.http.schemas import SCHEMAS

    schema = SCHEMAS["DesignRequest"]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(design_body_fields())
    assert "planned_reports" in schema["properties"]
    design_request(
        {**BODY, "names": None, "public_name": "census", "beta": 0.05, "notion": "rldp", "planned_reports": 500}
        | {"names": ["sex", "colour"], "csv": "F,red\nM,blue\n"}
    )
