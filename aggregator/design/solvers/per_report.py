"""The per-report layer of a mechanism: how much of the memoised output one report keeps.

RAPPOR's instantaneous response for rldp documents. The client memoises Y ~ Q(·|x) once per
(owner, mechanism, record value) and sends, on every report, a fresh y' ~ R(·|Y): any number of
reports reveal no more than Y (the document's ε, the long-run guarantee), and one report
reveals at most ε₁, the audited guarantee of R·Q (``collection.per_report``,
:mod:`rldp.shared.audit.per_report`).

R keeps Y with probability λ and otherwise sends a draw from a fixed distribution m over the
outputs: R = λI + (1 − λ)·m·1ᵀ. Two choices of m (``family``):

* ``"public"`` (the default): m = Q·P̂, the distribution of outputs under the public estimate —
  a replaced report looks like a typical user's. On Adult sex/race (PolyOpt, ε = 1, ε₁ = 0.5)
  one report keeps NMI 0.139, against 0.029 for GRR; among m ∝ (Q·P̂)^γ, γ = 1 is the best.
* ``"grr"``: m uniform, i.e. GRR on Y at ε_R = log(1 + |Y|λ/(1 − λ)) ([LZG24, eq. 56]).

The family is closed under composition: R_a·R_b = ab·I + (1 − ab)·m·1ᵀ, so a smaller λ is a
larger one followed by another such R — a post-processing, which no notion audit (ε-LDP,
(ε, F)-RLDP) lets leak more. The audited ε of R·Q is therefore nondecreasing in λ, and a
bisection on λ with the exact audit finds the largest λ (the least noise, the most utility per
report) whose R·Q passes at ε₁(1 − DESIGN_MARGIN), the margin every designer keeps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from rldp.shared.audit import audit_validated, composed_document, notion_audit
from rldp.shared.document import (
    REQUIRED_FIELDS,
    PerReport,
    alphabet,
    build_document,
    epsilon,
    mechanism_matrix,
    notion,
    public_distribution,
    validate_document,
)
from rldp.shared.information import mutual_information, normalized_mutual_information
from rldp.shared.parameters import check_epsilon
from rldp.shared.tolerances import DESIGN_MARGIN

from ..primitives.errors import DesignError, DesignParameterError
from .search import largest_feasible

__all__ = ["PER_REPORT_FAMILIES", "PER_REPORT_STEPS", "per_report_matrix", "add_per_report_layer"]

#: The distributions a replaced report is drawn from (see the module docstring).
PER_REPORT_FAMILIES = ("public", "grr")
#: Bisection steps on λ ∈ [0, 1]: 2⁻⁴⁰ ≈ 1e-12, far below any utility difference.
PER_REPORT_STEPS = 40


def _inputs(doc: Mapping[str, Any]) -> np.ndarray:
    """P̂ over the mechanism's inputs (over U alone when S is latent), flattened."""
    p_hat = public_distribution(doc)
    return (p_hat.sum(axis=0) if alphabet(doc).latent else p_hat).reshape(-1)


def per_report_matrix(
    document: Mapping[str, Any], per_report_epsilon: float, family: str = "public"
) -> tuple[np.ndarray, dict[str, Any]]:
    """(R, parameters): R = λI + (1 − λ)·m·1ᵀ at the largest λ whose R·Q passes the document's notion
    audit at ``per_report_epsilon`` (with the design margin); parameters ``{"family", "keep": λ}`` and,
    for ``"grr"``, ``"epsilon"``: ε_R.

    DesignError when ε₁ is not a finite number in (0, privacy.epsilon), for an unknown family, when
    the notion's audit cannot audit a per-report layer, or when Q alone already passes at ε₁ (a layer
    would add no noise; design at ε₁ instead).
    """
    return _per_report_matrix(validate_document(document), per_report_epsilon, family)


def _per_report_matrix(
    doc: Mapping[str, Any], per_report_epsilon: float, family: str
) -> tuple[np.ndarray, dict[str, Any]]:
    """:func:`per_report_matrix` of a validated document (not checked again)."""
    claimed = epsilon(doc)
    e1 = per_report_epsilon
    e1 = check_epsilon(e1, "per_report_epsilon", error=DesignParameterError)
    if not e1 < claimed:
        raise DesignError(
            f"the per-report epsilon must be a finite number > 0 and below the document's epsilon {claimed:g} "
            f"(one report must reveal less than the memoised output); got {per_report_epsilon!r}"
        )
    if family not in PER_REPORT_FAMILIES:
        raise DesignError(f"unknown per-report family {family!r}; choose one of: {', '.join(PER_REPORT_FAMILIES)}")
    audit = notion_audit(notion(doc))
    if not getattr(audit, "supports_per_report", False):
        raise DesignError(f"privacy notion {audit.name!r} cannot audit a per-report layer (supports_per_report)")
    q = mechanism_matrix(doc)
    k = q.shape[0]
    m = np.full(k, 1.0 / k) if family == "grr" else q @ _inputs(doc)
    m = m / m.sum()

    def layer(keep: float) -> np.ndarray:
        r = (1.0 - keep) * np.outer(m, np.ones(k))
        r[np.diag_indices(k)] += keep
        return r

    target = float(e1) * (1 - DESIGN_MARGIN)

    def passes(keeps: np.ndarray) -> np.ndarray:
        trials = [composed_document(doc, PerReport(layer(float(t)), float(e1))) for t in keeps]
        return np.array([audit.audit_document(trial).epsilon <= target for trial in trials])

    keep = float(largest_feasible(passes, 1, 1.0, PER_REPORT_STEPS)[0])
    if math.isinf(keep):
        raise DesignError(
            f"the memoised mechanism alone already gives epsilon {e1:g} per report; a per-report layer would add "
            "no noise (design at that epsilon instead)"
        )
    params: dict[str, Any] = {"family": family, "keep": keep}
    if family == "grr":
        params["epsilon"] = math.log1p(k * keep / (1.0 - keep))  # keep < 1: λ = 1 passing is refused above
    return layer(keep), params


def add_per_report_layer(
    document: Mapping[str, Any], per_report_epsilon: float, *, family: str = "public"
) -> dict[str, Any]:
    """The document with a per-report layer at single-report guarantee ε₁ (a new document and id).

    ``collection.per_report`` = {"matrix": R, "epsilon": ε₁} with R from :func:`per_report_matrix`
    (``family`` "public" or "grr"); also records ``parameters.per_report`` (family, λ),
    ``audit.per_report`` (the audit of R·Q) and ``utility.per_report`` (I and NMI of one report
    under P̂). Q, ``privacy`` and every other field are kept: the long-run guarantee is unchanged.
    The result passes :func:`rldp.shared.audit.audit_document` for both guarantees (DesignError
    otherwise).
    """
    doc = validate_document(document)
    r, params = _per_report_matrix(doc, per_report_epsilon, family)
    p_input = _inputs(doc)
    one_report = r @ mechanism_matrix(doc)
    extra = {k: v for k, v in doc.items() if k not in REQUIRED_FIELDS}
    layer = {"matrix": r, "epsilon": float(per_report_epsilon)}
    extra["collection"] = {**doc.get("collection", {}), "per_report": layer}
    extra["parameters"] = {**doc.get("parameters", {}), "per_report": params}
    extra["utility"] = {
        **doc.get("utility", {}),
        "per_report": {
            "mutual_information": mutual_information(one_report, p_input),
            "nmi": normalized_mutual_information(one_report, p_input),
        },
    }

    def _audit(content: Mapping[str, Any]) -> dict[str, Any]:
        result = audit_validated(content)  # the document as published, both guarantees
        if not result.passed:
            raise DesignError(f"the per-report layer failed its audit: {'; '.join(result.reasons)}")
        single = getattr(result, "per_report", None)
        return {**doc.get("audit", {}), "per_report": None if single is None else single.to_dict()}

    return build_document(  # once: the layered audit runs on the validated content and is hashed with it
        method=doc["method"],
        matrix=doc["matrix"],
        alphabet=alphabet(doc),
        public_distribution=doc["public_distribution"],
        privacy=doc["privacy"],
        extra=extra,
        audit=_audit,
    )
