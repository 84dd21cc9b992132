"""Publishing a mechanism document: read it, check its id, audit it, store it.

Every document the aggregator serves went through :func:`publish_document`, whether it
was uploaded (POST /v1/mechanisms) or designed here (a design job): the id must be the
hash of the content and the exact privacy audit (:func:`rldp.shared.audit.audit_document`)
must confirm the ε the document claims. A document that records its provenance must agree with
itself (P̂ × n are the counts it hashes), and when the service is configured with public data
(PUBLIC_DATA) every document's P̂, n, radius and counts hash must match one of those tables
(:mod:`rldp.shared.provenance`): an aggregator's operator cannot publish a mechanism whose
guarantee rests on a misstated P̂ or an inflated n.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from rldp.aggregator.storage import MechanismRecord, Storage
from rldp.shared.audit import audit_document
from rldp.shared.document import DocumentView, from_json, from_msgpack, report_matrix, to_msgpack
from rldp.shared.errors import AuditError, DocumentError, DocumentSyntaxError, IdMismatch, one_line
from rldp.shared.parameters import DEFAULT_MAX_BETA
from rldp.shared.pilot import PILOT_SOURCE, pilot_mismatches, validate_pilot_provenance
from rldp.shared.provenance import PublicDataError, check_document_provenance, check_public_data, stated_beta
from rldp.shared.tables import Table

from .errors import AuditFailed, BodySyntaxError, DocumentIdMismatch, InvalidDocument, PublicDataMismatch
from .events import ServiceEvents

__all__ = ["read_document", "publish_document", "check_public_data_claims"]

log = logging.getLogger("rldp.service")


def read_document(body: bytes, kind: str) -> dict[str, Any]:
    """Parse and validate a document sent as ``kind`` ("json" or "msgpack").

    Raises :class:`BodySyntaxError` (not JSON / msgpack at all), :class:`DocumentIdMismatch`
    or :class:`InvalidDocument`, each saying what was wrong.
    """
    try:
        return from_msgpack(body) if kind == "msgpack" else from_json(body)
    except DocumentSyntaxError as exc:
        raise BodySyntaxError(
            f"the body cannot be read as a mechanism document: {one_line(exc)}", exc.encoding
        ) from exc
    except IdMismatch as exc:
        raise DocumentIdMismatch(
            f"id mismatch: the document says {exc.stated} but its content hashes to "
            f"{exc.computed}: the document was changed after its id was computed"
        ) from exc
    except DocumentError as exc:  # UnknownNotion included: this server cannot audit that claim
        raise InvalidDocument(f"invalid mechanism document: {one_line(exc)}") from exc


def check_public_data_claims(
    doc: Mapping[str, Any], public_data: Mapping[str, Table] | None, *, max_beta: float = DEFAULT_MAX_BETA
) -> str | None:
    """Refuse a document whose claims about its public data do not hold (:class:`PublicDataMismatch`).

    Its confidence level β must be at most ``max_beta`` (MAX_BETA): β → 1 shrinks the confidence set
    to a point, so a radius "at β = 0.999999" is no confidence set at all. Its provenance, if any, must
    agree with its own P̂ and n. With ``public_data`` ({name: table}, the PUBLIC_DATA configuration) the
    document must match one table — the one its provenance names if configured, else any — with its
    radius at least the confidence radius at min(its β, ``max_beta``); returns that table's name (None
    without public data).
    """
    beta = stated_beta(doc)  # the uncertainty set's, or a pilot's
    if beta is not None and beta > max_beta:
        raise PublicDataMismatch(
            f"the document's confidence set is at significance level beta = {beta:g}, above this "
            f"service's ceiling {max_beta:g} (MAX_BETA): a larger beta is a smaller set than the service accepts; "
            f"design with beta <= {max_beta:g}"
        )
    own = check_document_provenance(doc)
    if not own.passed:
        raise PublicDataMismatch(f"the document's provenance contradicts its own P̂ and n: {own.summary()}")
    if not public_data:
        return None
    named = str(own.provenance["name"]) if own.provenance is not None else ""
    candidates = {named: public_data[named]} if named in public_data else dict(public_data)
    differences = []
    for name, table in candidates.items():
        try:
            check = check_public_data(doc, table, beta=min(beta or max_beta, max_beta))
        except PublicDataError as exc:
            differences.append(f"{name}: {one_line(exc)}")
            continue
        if check.passed:
            return name
        differences.append(f"{name}: {check.summary()}")
    raise PublicDataMismatch(
        "the document's claims do not match the public data this service checks against (PUBLIC_DATA): "
        + " | ".join(differences),
        public_data=sorted(candidates),
    )


def check_pilot_claims(storage: Storage, doc: Mapping[str, Any]) -> None:
    """Refuse (:class:`PublicDataMismatch`) a document whose P̂ came from a pilot this service cannot vouch for.

    A pilot provenance (``{"source": "pilot", …}``: docs/design.md, "P̂ from a private pilot") names the
    pilot mechanism and the pilot's output counts. Here, as ``rldp audit --pilot`` does offline, the pilot
    must be published on this service; P̂ and the radius are recomputed from the stated counts and the
    pilot's stored matrix (:func:`rldp.shared.pilot.pilot_mismatches`: the centre must agree, the radius
    must be at least the recomputed one); and the stated counts must be ones this service could have
    seen: reports are only ever added, so no output may claim more than the service has stored for the
    pilot. Nothing for a document without a pilot provenance."""
    prov = doc.get("provenance")
    if not isinstance(prov, Mapping) or prov.get("source") != PILOT_SOURCE:
        return
    try:
        stated = validate_pilot_provenance(prov)
    except DocumentError as exc:
        raise PublicDataMismatch(f"the document's pilot provenance is invalid: {one_line(exc)}") from exc
    pilot_id = str(stated["pilot_mechanism"])
    raw = storage.get_document(pilot_id)
    if raw is None:
        raise PublicDataMismatch(
            f"the document's P̂ comes from pilot {pilot_id}, which is not published here: its confidence set cannot "
            "be checked; publish the pilot first",
            mechanism=pilot_id,
        )
    pilot = from_msgpack(raw)
    matrix = report_matrix(pilot)
    counts = np.asarray(stated["counts"], dtype=np.int64)
    if counts.shape != (matrix.shape[0],):
        raise PublicDataMismatch(
            f"the pilot provenance has {counts.size} counts; pilot {pilot_id[:16]}… has {matrix.shape[0]} outputs",
            mechanism=pilot_id,
        )
    stored = storage.counts(pilot_id, matrix.shape[0])
    if np.any(counts > stored):
        y = int(np.argmax(counts - stored))
        raise PublicDataMismatch(
            f"the pilot provenance counts {int(counts[y])} reports of output {y}; this service has stored only "
            f"{int(stored[y])} for pilot {pilot_id[:16]}…: counts it never received",
            mechanism=pilot_id,
        )
    differences = pilot_mismatches(doc, matrix, pilot_id)
    if differences:
        raise PublicDataMismatch(
            "the document's P̂ or radius does not follow from its pilot's counts: "
            + "; ".join(m[3] for m in differences),
            mechanism=pilot_id,
        )


def publish_document(
    storage: Storage,
    body: bytes,
    kind: str,
    events: ServiceEvents | None = None,
    *,
    public_data: Mapping[str, Table] | None = None,
    max_beta: float = DEFAULT_MAX_BETA,
) -> tuple[MechanismRecord, bool]:
    """Validate, audit, check against the public data and store a document; (record, created).

    Idempotent: publishing a stored id again changes nothing (``created`` False; a retired
    mechanism stays retired). Refusals raise the :mod:`~rldp.aggregator.services.errors`
    types of :func:`read_document`, :class:`AuditFailed` or :class:`PublicDataMismatch`
    (:func:`check_public_data_claims`, with ``public_data`` = config["PUBLIC_DATA"]); nothing
    is stored then.
    """
    doc = read_document(body, kind)
    try:
        audit = audit_document(doc)
    except DocumentError as exc:
        raise InvalidDocument(f"invalid mechanism document: {one_line(exc)}") from exc
    except (AuditError, ValueError) as exc:  # parameters that do not admit the audit
        raise AuditFailed(f"the document cannot be audited: {one_line(exc)}") from exc
    epsilon_audited = None if math.isinf(audit.epsilon) else float(audit.epsilon)
    view = DocumentView.of(doc)  # validated by the audit: read as typed fields from here
    if not audit.passed:
        raise AuditFailed(
            "the mechanism leaks more than it claims: " + "; ".join(audit.reasons),
            epsilon=view.epsilon,
            epsilon_audited=epsilon_audited,
        )
    check_public_data_claims(doc, public_data, max_beta=max_beta)
    check_pilot_claims(storage, doc)
    alpha = view.alphabet
    record = MechanismRecord(
        id=view.id,
        method=view.method,
        notion=view.notion,
        epsilon=view.epsilon,
        epsilon_audited=epsilon_audited,
        sensitive=alpha.sensitive.name,
        released=tuple(a.name for a in alpha.released),
        outputs=view.outputs,  # |Y'| with a per-report layer: what reports are (Q never expanded)
        size=alpha.size,
        status="active",
        published=time.time(),
    )
    created, stored = storage.publish(record, to_msgpack(doc))
    if created:
        if events is not None:
            events.published(stored)
        log.info("published mechanism %s (%s, epsilon %g)", stored.id, stored.method, stored.epsilon)
    return stored, created
