"""The notion registry: one exact audit per privacy notion a document may name.

A document's ``privacy.notion`` selects its audit here, and every consumer — the
designers, the service's publish check, the client's verification, ``rldp audit`` —
goes through :func:`audit_document`, so a notion is audited the same way everywhere.
A notion is added by writing a :class:`NotionAudit` and calling :func:`register`; it opts in to
per-report layers (``collection.per_report``) by setting ``supports_per_report = True`` once its
audit means the same thing for a composed matrix R·Q as for Q.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..errors import UnknownNotion
from .base import AuditResult

__all__ = ["NotionAudit", "register", "notion_audit", "notions"]


class NotionAudit(Protocol):
    """The exact audit of one privacy notion."""

    #: The value of ``privacy.notion`` this audit answers for.
    name: str
    #: Whether ``audit_document`` can audit a composed matrix R·Q against a single-report ε₁
    #: (:mod:`.per_report`); documents with a per-report layer are refused for notions without it.
    supports_per_report: bool

    def audit_document(self, doc: Mapping[str, Any]) -> AuditResult:
        """Audit a *validated* document against the guarantee it claims."""
        ...


_REGISTRY: dict[str, NotionAudit] = {}


def register(audit: NotionAudit) -> NotionAudit:
    """Make ``audit`` the audit of notion ``audit.name`` (a name can be registered once)."""
    if audit.name in _REGISTRY and _REGISTRY[audit.name] is not audit:
        raise ValueError(f"privacy notion {audit.name!r} already has an audit ({_REGISTRY[audit.name]!r})")
    _REGISTRY[audit.name] = audit
    return audit


def notions() -> tuple[str, ...]:
    """The notions this version can audit, sorted."""
    return tuple(sorted(_REGISTRY))


def notion_audit(name: str) -> NotionAudit:
    """The audit of notion ``name``; :class:`UnknownNotion` naming the known ones otherwise."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownNotion(
            f"unknown privacy notion {name!r}; this version audits {', '.join(map(repr, notions()))}"
        ) from None
