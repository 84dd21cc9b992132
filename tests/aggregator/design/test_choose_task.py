"""``--method auto`` with a task on U (issue 38): the certified design with the least error for that task is kept
(randomised response on U alone, or a calibrated IR), not the one with the highest NMI."""

from __future__ import annotations

import numpy as np
import pytest

from rldp.aggregator.design import DesignRequest, auto_methods, best_method, design_auto
from rldp.aggregator.design.orchestration.choose import task_error_of
from rldp.shared.attributes import Attribute
from rldp.shared.audit import audit_document
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet

ALPHA = Alphabet(Attribute("sex", ("F", "M")), [Attribute.binned("age", NumericSpec((17, 25, 35, 50, 90)))])
# Age says something about sex here: releasing it as it is would leak more than the claim.
P_HAT = np.array([[0.18, 0.15, 0.1, 0.07], [0.07, 0.1, 0.15, 0.18]])


@pytest.mark.parametrize("task", ["distribution", "mean"])
def test_auto_keeps_the_least_task_error(task: str) -> None:
    request = DesignRequest(method="grr", epsilon=1.0, radius=0.01, window=None, task=task)
    best, docs, cut = design_auto(request, alphabet=ALPHA, public_distribution=P_HAT)
    assert not cut and set(docs) <= set(auto_methods("rldp"))
    errors = {m: task_error_of(d) for m, d in docs.items()}
    finite = {m: e for m, e in errors.items() if e is not None}
    assert best_method(docs) == min(finite, key=finite.__getitem__)
    assert task_error_of(best) == min(finite.values())
    # The rule differs from NMI's: the design NMI would keep (srr here) has a larger error for the task.
    nmi_rule = best_method({m: {**d, "parameters": {}} for m, d in docs.items()})  # the joint task's rule
    assert nmi_rule != best_method(docs) and task_error_of(docs[nmi_rule]) > 1.5 * task_error_of(best)
    assert best["parameters"]["task"]["task"] == task
    assert audit_document(best).passed and best["audit"]["epsilon"] >= 0.99 * 1.0


def test_a_task_error_that_is_not_identified_is_chosen_last() -> None:
    def doc(nmi: float, error: float | None) -> dict:
        block = {"task": "distribution", "chosen": "m", "per_report_error": {"m": error}}
        return {"utility": {"nmi": nmi}, "parameters": {"task": block}}

    assert best_method({"none": doc(0.9, None), "big": doc(0.5, 3.0), "small": doc(0.1, 1.0)}) == "small"
    assert best_method({"x": doc(0.2, 1.0), "y": doc(0.4, 1.0)}) == "y"  # ties: the higher NMI
