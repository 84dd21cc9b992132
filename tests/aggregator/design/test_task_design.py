"""Design for the question asked (DesignRequest.task): the task's error, randomised response on U alone
calibrated to the exact audit, and the choice between it and a utility-optimising method's design."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rldp.aggregator.design import DesignRequest, design_document, released_rr, task_error
from rldp.aggregator.design.primitives.errors import DesignError, DesignParameterError
from rldp.shared.attributes import Attribute
from rldp.shared.audit import audit_document, audit_rldp
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet
from rldp.shared.uncertainty import UncertaintySet

SPEC = NumericSpec((0, 10, 20, 40, 80))
ALPHA = Alphabet(Attribute("sex", ("F", "M")), [Attribute.binned("age", SPEC)])
# U says something about S: the design must keep noise on U.
P_HAT = np.array([[0.20, 0.15, 0.10, 0.05], [0.05, 0.10, 0.15, 0.20]])


def test_released_rr_is_tight_and_passes_the_exact_audit() -> None:
    uset = UncertaintySet(P_HAT, 0.01, 2.0)
    q, params = released_rr(uset, 1.0)
    assert q.shape == (4, 8)
    assert np.allclose(q[:, :4], q[:, 4:])  # the report reads U only
    audit = audit_rldp(q, uset, 1.0)
    assert audit.passed
    assert audit.epsilon >= 0.99  # tight: the largest δ the audit passes
    q_more, _ = released_rr(uset, 1.0 + 0.05)
    assert not audit_rldp(q_more, uset, 1.0).passed  # a larger δ leaks more than the claim


def test_task_error_of_the_identity_is_the_sampling_error() -> None:
    q = np.eye(8)
    sd_mean = math.sqrt(2 / math.pi) * float(np.sqrt(np.cov(SPEC.midpoints(), aweights=P_HAT.sum(axis=0), ddof=0)))
    assert task_error("mean", q, P_HAT, False, np.asarray(SPEC.edges)) == pytest.approx(sd_mean)
    assert task_error("joint", q, P_HAT, False, None) is None
    # a mechanism whose reports say nothing of U: not identifiable
    assert task_error("distribution", np.full((1, 8), 1.0), P_HAT, False, None) == math.inf


def _design(method: str, task: str, epsilon: float = 1.0) -> dict:
    request = DesignRequest(method=method, epsilon=epsilon, radius=0.01, task=task, solver="exact")
    return design_document(request, alphabet=ALPHA, public_distribution=P_HAT)


def test_distribution_task_keeps_the_better_design_and_audits_it() -> None:
    doc = _design("polyopt", "distribution")
    task = doc["parameters"]["task"]
    assert task["asked"] == "polyopt" and task["task"] == "distribution"
    errors = task["per_report_error"]
    chosen = task["chosen"]
    others = [e for m, e in errors.items() if m != chosen]
    assert all(e is None or errors[chosen] <= e for e in others)
    assert doc["method"] == chosen
    assert audit_document(doc).passed
    joint = _design("polyopt", "joint")
    assert "task" not in joint["parameters"] and joint["method"] == "polyopt"


def test_mean_task_needs_a_numeric_u() -> None:
    alpha = Alphabet(Attribute("sex", ("F", "M")), [Attribute("colour", ("r", "g", "b", "y"))])
    request = DesignRequest(method="rr-released", epsilon=1.0, radius=0.01, task="mean")
    with pytest.raises(DesignError, match="numeric"):
        design_document(request, alphabet=alpha, public_distribution=P_HAT)


def test_unknown_task_is_refused() -> None:
    with pytest.raises(DesignParameterError, match="task must be one of joint, distribution, mean"):
        _design("grr", "median")


def test_latent_released_rr() -> None:
    alpha = Alphabet(Attribute("sex", ("F", "M")), [Attribute.binned("age", SPEC)], latent=True)
    request = DesignRequest(method="rr-released", epsilon=0.5, radius=0.01, task="distribution")
    doc = design_document(request, alphabet=alpha, public_distribution=P_HAT)
    assert audit_document(doc).passed and doc["audit"]["epsilon"] >= 0.99 * 0.5
