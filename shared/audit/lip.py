"""The notions ``lip`` [LTS20, Def 2] and ``alip`` [ZDS23, Def 3]: exact audits at P̂ and over F″.

Both read the document's P̂ (the joint, P_S included) and its uncertainty set; radius 0 states the
guarantee at P̂ only (then the audit is exactly the paper's definition), a positive radius over
F″ ⊇ F (:func:`~rldp.shared.audit.secret.robust_lip_leakage`, exact over F″). ``extra`` reports
both sides: ``epsilon_lower``/``epsilon_upper`` (audited, over the document's scope), the same at
P̂ (``..._at_p_hat``), where each worst lift occurs (``worst_lower``/``worst_upper``: output y and
value s) and the ``scope``; ``worst`` is the location of the side that leaks more.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..document import epsilon, mechanism_matrix
from ..tolerances import AUDIT_TOLERANCE
from ..uncertainty import UncertaintySet
from .base import AuditResult
from .rldp import confidence_shortfall, document_uncertainty
from .secret import LipLeakage, lip_leakage, robust_lip_leakage, scope

__all__ = ["audit_lip", "audit_alip", "LipAudit", "AlipAudit", "epsilon_bounds"]


def _leakages(matrix: Any, uncertainty: UncertaintySet) -> tuple[LipLeakage, LipLeakage]:
    at_p_hat = lip_leakage(matrix, uncertainty.public_distribution)
    robust = at_p_hat if uncertainty.radius == 0 else robust_lip_leakage(matrix, uncertainty)
    return robust, at_p_hat


def _extra(robust: LipLeakage, at_p_hat: LipLeakage, radius: float) -> dict[str, Any]:
    return {
        "epsilon_lower": robust.lower,
        "epsilon_upper": robust.upper,
        "epsilon_lower_at_p_hat": at_p_hat.lower,
        "epsilon_upper_at_p_hat": at_p_hat.upper,
        "worst_lower": robust.worst_lower,
        "worst_upper": robust.worst_upper,
        "scope": scope(radius),
    }


def _where(leak: LipLeakage, side: str) -> str:
    w = leak.worst_lower if side == "lower" else leak.worst_upper
    return f"output {w.get('output')}, s={w.get('s')}"


def audit_alip(matrix: Any, uncertainty: UncertaintySet, epsilon_lower: float, epsilon_upper: float) -> AuditResult:
    """Audit an (ε_l, ε_u)-ALIP claim [ZDS23, Def 3] over the scope of ``uncertainty``.

    ``epsilon`` of the result is max(audited ε_lower, ε_upper), ``claimed`` max(ε_l, ε_u).
    """
    robust, at_p_hat = _leakages(matrix, uncertainty)
    reasons = []
    where = scope(uncertainty.radius)
    if robust.lower > epsilon_lower + AUDIT_TOLERANCE:
        reasons.append(
            f"audited min-lift epsilon_lower {robust.lower:.12g} exceeds the claimed {epsilon_lower:.12g} "
            f"({_where(robust, 'lower')}, {where})"
        )
    if robust.upper > epsilon_upper + AUDIT_TOLERANCE:
        reasons.append(
            f"audited max-lift epsilon_upper {robust.upper:.12g} exceeds the claimed {epsilon_upper:.12g} "
            f"({_where(robust, 'upper')}, {where})"
        )
    worst = robust.worst_lower if robust.lower > robust.upper else robust.worst_upper
    extra = _extra(robust, at_p_hat, uncertainty.radius)
    extra["epsilon_lower_claimed"], extra["epsilon_upper_claimed"] = float(epsilon_lower), float(epsilon_upper)
    claimed = max(float(epsilon_lower), float(epsilon_upper))
    return AuditResult("alip", robust.epsilon, claimed, not reasons, worst, tuple(reasons), extra)


def audit_lip(matrix: Any, uncertainty: UncertaintySet, epsilon: float) -> AuditResult:
    """Audit an ε-LIP claim [LTS20, Def 2]: (ε, ε)-ALIP, reported as notion ``lip``."""
    result = audit_alip(matrix, uncertainty, epsilon, epsilon)
    extra = {k: v for k, v in result.extra.items() if not k.endswith("_claimed")}
    reasons = tuple(
        r.replace("min-lift epsilon_lower", "LIP epsilon (min-lift side)").replace(
            "max-lift epsilon_upper", "LIP epsilon (max-lift side)"
        )
        for r in result.reasons
    )
    return AuditResult("lip", result.epsilon, float(epsilon), result.passed, result.worst, reasons, extra)


def epsilon_bounds(doc: Mapping[str, Any]) -> tuple[float, float]:
    """(ε_l, ε_u) an ``alip`` document claims (``privacy.epsilon_lower``, ``privacy.epsilon_upper``)."""
    privacy = doc["privacy"]
    return float(privacy["epsilon_lower"]), float(privacy["epsilon_upper"])


def _with_confidence(result: AuditResult, doc: Mapping[str, Any], uset: UncertaintySet, params: Any) -> AuditResult:
    reason = confidence_shortfall(uset, params)
    if reason is None:
        return result
    return AuditResult(
        result.notion, result.epsilon, result.claimed, False, result.worst, (*result.reasons, reason), result.extra
    )


class LipAudit:
    """Notion ``"lip"``: ε-LIP w.r.t. S at P̂ (radius 0) or over F″ ⊇ F; n and β as for ``rldp``."""

    name = "lip"
    supports_per_report = False

    def audit_document(self, doc: Mapping[str, Any]) -> AuditResult:
        uset, params = document_uncertainty(doc)
        return _with_confidence(audit_lip(mechanism_matrix(doc), uset, epsilon(doc)), doc, uset, params)


class AlipAudit:
    """Notion ``"alip"``: (ε_l, ε_u)-ALIP w.r.t. S at P̂ (radius 0) or over F″ ⊇ F."""

    name = "alip"
    supports_per_report = False

    def audit_document(self, doc: Mapping[str, Any]) -> AuditResult:
        uset, params = document_uncertainty(doc)
        lower, upper = epsilon_bounds(doc)
        return _with_confidence(audit_alip(mechanism_matrix(doc), uset, lower, upper), doc, uset, params)
