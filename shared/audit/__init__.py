"""Privacy audits: the worst-case ε a mechanism really gives, computed from its matrix.

The single home of every privacy check in rldp: designers, the server and the client all
call these functions. :func:`audit_document` validates a document and dispatches on its
``privacy.notion`` through the notion registry (:mod:`.registry`); an unknown notion is
refused with :class:`~rldp.shared.errors.UnknownNotion`.

Notions registered here: ``rldp`` (:mod:`.rldp`, [LZG24, Def 1, Thm 1]), ``ldp``
(:mod:`.ldp`: w.r.t. X [LZG24, Def 2], or with an uncertainty set w.r.t. S over F [LTS20, Def 1]),
``lip`` and ``alip`` (:mod:`.lip`, :mod:`.secret`: [LTS20, Def 2], [ZDS23, Def 3]), ``srlip``
(:mod:`.srlip`, [LTS20, Def 3]) and ``distp`` (:mod:`.distp`, (ε, δ)-distribution privacy
between the distributions P_U|s [KM19, Def 3, Def 15]). A document with a per-report layer makes a second claim, one
report's ε₁, which the same notion audit checks on R·Q (:mod:`.per_report`).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from ..document import matrix_shape, matrix_spec, notion, per_report_layer, validate_document
from ..notions import NOTIONS
from ..tolerances import AUDIT_TOLERANCE
from .base import AuditResult, joint_matrix
from .distp import (
    audit_distp,
    distp_delta,
    distp_epsilon,
    robust_distp_delta,
    robust_distp_epsilon,
    smallest_delta,
    smallest_epsilon,
)
from .ldp import ldp_epsilon
from .lip import audit_alip, audit_lip
from .per_report import LayeredAuditResult, audit_with_layer, composed_document
from .registry import NotionAudit, notion_audit, notions, register
from .rldp import all_distributions_epsilon, audit_rldp, realised_epsilon, rldp_epsilon
from .secret import (
    LipLeakage,
    lip_epsilons,
    lip_leakage,
    robust_lip_epsilons,
    robust_lip_leakage,
    robust_secret_ldp_epsilon,
    secret_ldp_epsilon,
)
from .srlip import SRLIP_MAX_ENTRIES, robust_srlip_leakage, srlip_leakage

__all__ = [
    "AUDIT_TOLERANCE",
    "AuditResult",
    "LayeredAuditResult",
    "composed_document",
    "NotionAudit",
    "audit_document",
    "audit_validated",
    "dense_audit_entries",
    "audit_rldp",
    "rldp_epsilon",
    "ldp_epsilon",
    "all_distributions_epsilon",
    "realised_epsilon",
    "audit_distp",
    "smallest_delta",
    "smallest_epsilon",
    "distp_delta",
    "distp_epsilon",
    "robust_distp_delta",
    "robust_distp_epsilon",
    "joint_matrix",
    "secret_ldp_epsilon",
    "robust_secret_ldp_epsilon",
    "LipLeakage",
    "lip_leakage",
    "lip_epsilons",
    "robust_lip_leakage",
    "robust_lip_epsilons",
    "audit_lip",
    "audit_alip",
    "srlip_leakage",
    "robust_srlip_leakage",
    "SRLIP_MAX_ENTRIES",
    "register",
    "notion_audit",
    "notions",
]

# Every notion is audited by the class it names (a new notion adds no line here): "module:Class" in this
# package, or "package.module:Class" anywhere (a notion registered from outside rldp).
for _entry in NOTIONS.values():
    _module, _class = _entry.audit.split(":")
    register(getattr(import_module(_module if "." in _module else f"{__name__}.{_module}"), _class)())


def audit_document(doc: Mapping[str, Any]) -> AuditResult:
    """Validate a mechanism document and audit it against the guarantee it claims.

    The audit is the one registered for the document's ``privacy.notion``; raises
    :class:`~rldp.shared.errors.DocumentError` for a malformed document and
    :class:`~rldp.shared.errors.UnknownNotion` for a notion this version cannot audit.
    With a per-report layer (``collection.per_report``) the same audit also checks R·Q
    against the single-report ε₁ and the document passes only if both pass
    (:class:`LayeredAuditResult`, :mod:`.per_report`); a notion whose audit does not
    declare ``supports_per_report`` is refused (DocumentError).
    """
    return audit_validated(validate_document(doc))


def audit_validated(doc: Mapping[str, Any]) -> AuditResult:
    """:func:`audit_document` of a document :func:`~rldp.shared.document.validate_document` (or
    :func:`~rldp.shared.document.build_document`) has already checked: the same audit, without checking
    the document again."""
    return audit_with_layer(notion_audit(notion(doc)), doc)


def dense_audit_entries(doc: Mapping[str, Any]) -> int:
    """How many float64 entries auditing a *validated* document expands from a compact matrix: 0 when the
    matrix is a list of rows (already as large in the document) or its notion's audit reads the form's
    structure (``structured_forms``: GRR by its two values), else |Y|·|X| (with a per-report layer, R·Q too).

    Why: a compact form stands for far more memory than its bytes (GRR: K² entries in 4 numbers); a
    reader checks this against its own limit before auditing (the client: MAX_DENSE_AUDIT_ENTRIES).
    """
    spec = matrix_spec(doc)
    if spec is None:
        return 0
    b, a = matrix_shape(spec)
    layer = per_report_layer(doc)
    if layer is not None:  # R·Q is audited densely, and Q is expanded to compose it
        return b * a + int(layer.matrix.shape[0]) * a
    structured = getattr(notion_audit(notion(doc)), "structured_forms", ())
    return 0 if spec.get("form") in structured else b * a
