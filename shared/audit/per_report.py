"""The per-report layer's audit: R·Q against the single-report ε₁, by the notion's own audit.

A document with ``collection.per_report`` = (R, ε₁) makes two claims. The memoised mechanism Q
is ε-private however many reports are sent (``privacy.epsilon``, audited as always: every
report is a post-processing of the one memoised Y). One report, distributed as R·Q, is
ε₁-private. The second claim is audited by the same notion audit on the composed document —
matrix R·Q, epsilon ε₁, every other field (P̂, the uncertainty set) unchanged — so the
single-report guarantee means exactly what the long-run one means. A notion audit declares
that it can audit a composed matrix (``supports_per_report``); a per-report layer under any
other notion is refused, since the audit could not state both guarantees.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..document import PerReport, mechanism_matrix, per_report_layer
from ..errors import DocumentError
from .base import AuditResult
from .registry import NotionAudit

__all__ = ["LayeredAuditResult", "composed_document", "audit_with_layer"]

#: How a reason of the single-report audit is introduced in the combined result.
PER_REPORT_REASON = "per-report guarantee (collection.per_report.epsilon)"


@dataclass(frozen=True)
class LayeredAuditResult(AuditResult):
    """The audit of a document with a per-report layer.

    ``epsilon``, ``claimed``, ``worst`` and ``extra`` are the long-run audit's (Q against
    ``privacy.epsilon``); ``passed`` holds when both audits pass; ``reasons`` are both audits'
    reasons, the single-report ones introduced by "per-report guarantee"; ``per_report`` is
    the audit of R·Q against ε₁.
    """

    per_report: AuditResult | None = None

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["per_report"] = None if self.per_report is None else self.per_report.to_dict()
        return out


def composed_document(doc: Mapping[str, Any], layer: PerReport) -> dict[str, Any]:
    """The document a single report answers to: matrix R·Q, ``privacy.epsilon`` = ε₁, no layer.

    Not a publishable document (its id is the original's); only the notion audit reads it.
    """
    privacy = {**doc["privacy"], "epsilon": layer.epsilon}
    collection = {k: v for k, v in doc.get("collection", {}).items() if k != "per_report"}
    composed = layer.matrix @ mechanism_matrix(doc)
    return {**doc, "matrix": composed.tolist(), "privacy": privacy, "collection": collection}


def audit_with_layer(audit: NotionAudit, doc: Mapping[str, Any]) -> AuditResult:
    """Audit a *validated* document: Q against ε and, with a per-report layer, R·Q against ε₁.

    Without a layer this is ``audit.audit_document(doc)`` unchanged. With one, a
    :class:`LayeredAuditResult`; DocumentError when the notion's audit does not declare
    ``supports_per_report``.
    """
    long_run = audit.audit_document(doc)
    layer = per_report_layer(doc)
    if layer is None:
        return long_run
    if not getattr(audit, "supports_per_report", False):
        raise DocumentError(
            f"privacy notion {audit.name!r} cannot audit a per-report layer (collection.per_report): its audit "
            "does not declare supports_per_report, so the single-report guarantee could not be stated"
        )
    single = audit.audit_document(composed_document(doc, layer))
    reasons = (*long_run.reasons, *(f"{PER_REPORT_REASON}: {reason}" for reason in single.reasons))
    passed = bool(long_run.passed) and bool(single.passed)
    return LayeredAuditResult(
        long_run.notion,
        long_run.epsilon,
        long_run.claimed,
        passed,
        long_run.worst,
        reasons,
        long_run.extra,
        per_report=single,
    )
