"""A design job from few public rows is accepted with a warning (issue 27 rough edge: 5 public rows were
designed without a word), the same one ``rldp design`` prints: the count, the threshold and the radius."""

from __future__ import annotations

from rldp.aggregator.services.designs import design_request
from rldp.shared.divergence import confidence_radius

BODY = {"sensitive": "sex", "released": ["colour"], "epsilon": 1.0, "method": "grr"}


def _csv(rows: int) -> str:
    cells = ["Female,red", "Male,red", "Male,blue", "Female,blue"]
    return "sex,colour\n" + "\n".join(cells[i % 4] for i in range(rows)) + "\n"


def test_few_public_rows_give_the_job_a_warning_with_the_radius() -> None:
    _, summary = design_request({**BODY, "csv": _csv(5)})
    (warning,) = summary["warnings"]
    assert "only 5 public rows for 4 cells" in warning and "fewer than 100" in warning
    assert f"radius {confidence_radius(5, 0.05, 4):.3g} nats" in warning  # 0.941
    _, summary = design_request({**BODY, "csv": _csv(5), "radius": 0.01, "beta": None})
    assert "the radius given is 0.01" in summary["warnings"][0]


def test_enough_public_rows_give_no_warning() -> None:
    _, summary = design_request({**BODY, "csv": _csv(100)})
    assert "warnings" not in summary
