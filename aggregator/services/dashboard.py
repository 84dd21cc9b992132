"""Read-only views for the web dashboard: what the pages show, without HTTP or HTML.

Every function here only reads (the catalog, the stored counts, the document) and returns
plain Python values; the pages (rldp.aggregator.http.dashboard) lay them out. The audit shown
for a mechanism is recomputed from its document with the same exact audit that admitted it
when it was published (:func:`rldp.shared.audit.audit_document`), and cached by id: a
document never changes under its id.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgpack
import numpy as np

from rldp.aggregator.design import methods_for
from rldp.aggregator.storage import MechanismRecord
from rldp.aggregator.storage.activity import received_since
from rldp.shared.audit import audit_document
from rldp.shared.claims import audit_text, claim_text, record_audited_text
from rldp.shared.collection import Window, drift_contamination, drift_policy
from rldp.shared.document import mechanism_matrix, public_distribution
from rldp.shared.notions import NOTIONS, lookup

from .designs import COUPLING_COSTS, COUPLING_TARGETS, DESIGN_NOTIONS
from .estimates import window_counts
from .mechanisms import LRU

if TYPE_CHECKING:
    from .core import AggregatorService

__all__ = [
    "COUPLING_COSTS",
    "COUPLING_TARGETS",
    "DESIGN_METHODS",
    "DESIGN_NOTIONS",
    "NOTION_CHOICES",
    "NotionChoice",
    "RECENT_SECONDS",
    "MechanismRow",
    "mechanism_rows",
    "mechanism_view",
    "estimate_view",
    "collection_estimate_view",
    "collection_view",
]

#: The design methods a design job accepts (the form's choices): the rldp ones first, then those of the
#: other notions (a method the chosen notion lacks is refused with the notion's list).
DESIGN_METHODS = tuple(dict.fromkeys(name for notion in DESIGN_NOTIONS for name in methods_for(notion)))


@dataclass(frozen=True)
class NotionChoice:
    """What the design form offers for one notion: its name and claim, its methods, the one offered first."""

    name: str
    title: str
    help: str
    methods: tuple[str, ...]
    recommended: str
    claim: tuple[str, ...]


#: Per designable notion, in the order they are offered (the notion table's, rldp first).
NOTION_CHOICES = tuple(
    NotionChoice(
        name,
        NOTIONS[name].title,
        NOTIONS[name].help,
        tuple(methods_for(name)),
        NOTIONS[name].recommended or next(iter(methods_for(name))),
        NOTIONS[name].claim,
    )
    for name in DESIGN_NOTIONS
)

#: The recent period whose reports the mechanisms list counts, seconds.
RECENT_SECONDS = 24 * 3600

#: The audits shown, by mechanism id (immutable content: no invalidation).
_AUDITS: LRU[str, dict[str, Any]] = LRU(64)

MechanismRow = dict[str, Any]


def _reports(service: AggregatorService, record: MechanismRecord) -> dict[str, Any]:
    """Reports received: the total and, for a mechanism that collects by window, the latest window's."""
    total = int(service.storage.counts(record.id, record.outputs).sum())
    windows = window_counts(service.storage, service.catalog, record)
    latest = windows[0] if windows else None
    return {"total": total, "latest_window": latest, "windows": windows}


def mechanism_rows(service: AggregatorService, now: float | None = None) -> list[MechanismRow]:
    """Every published mechanism, newest first, with its report counts (``reports``: see
    :func:`_reports`) and ``recent``, the reports received in the last :data:`RECENT_SECONDS`."""
    now = time.time() if now is None else now
    recent = received_since(service.storage, now - RECENT_SECONDS)
    rows = []
    for record in reversed(service.catalog.list()):
        window = service.catalog.window(record.id)
        rows.append(
            {
                "record": record,
                "claim": claim_text(service.catalog.claim(record.id)),
                "audited": record_audited_text(record.notion, record.epsilon_audited),
                # Its claim is judged by the audited δ at the claimed ε (distp), not by the stored ε.
                "by_delta": lookup(record.notion).judged_by_delta,
                "reports": _reports(service, record),
                "recent": recent.get(record.id, 0),
                "collection": None if window is None else window.text,
            }
        )
    return rows


def _audit(doc: Mapping[str, Any]) -> dict[str, Any]:
    cached = _AUDITS.get(doc["id"])
    if cached is None:
        cached = _AUDITS.put(doc["id"], audit_document(doc).to_dict())
    return cached


def _parameters(doc: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The document's parameters as (dotted name, value) rows: privacy claims, collection, provenance, extras."""
    # The designer's own audit record is left out: the page shows the audit recomputed here.
    skip = {"id", "matrix", "public_distribution", "sensitive", "released", "privacy", "collection", "audit"}
    rows: list[tuple[str, Any]] = [("format", doc.get("format")), ("method", doc.get("method"))]

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for key in value:
                walk(f"{prefix}.{key}", value[key])
        elif isinstance(value, list) and value and isinstance(value[0], list):
            rows.append((prefix, f"matrix {len(value)} × {len(value[0])}"))
        else:
            rows.append((prefix, value))

    walk("privacy", doc.get("privacy", {}))
    if "collection" in doc:
        walk("collection", doc["collection"])
    for key in sorted(k for k in doc if k not in skip and k not in ("format", "method")):
        walk(key, doc[key])
    return rows


def needs_public_data(doc: Mapping[str, Any]) -> bool:
    """Whether the document's claim rests on public data: False for a claim over every distribution (an
    unbounded uncertainty set: ``privacy.uncertainty.radius`` null, or none for a notion where it is
    optional — a pilot's claim) recorded without provenance. Its P̂ is then a placeholder (uniform for a
    pilot) that only the utility figures use."""
    privacy = doc.get("privacy", {})
    uset = privacy.get("uncertainty") if isinstance(privacy, Mapping) else None
    entry = NOTIONS.get(str(privacy.get("notion"))) if isinstance(privacy, Mapping) else None
    unbounded = (
        uset.get("radius") is None
        if isinstance(uset, Mapping)
        else entry is not None and entry.uncertainty == "optional"
    )
    return not unbounded or isinstance(doc.get("provenance"), Mapping)


def _summary(doc: Mapping[str, Any], alpha: Any, audit: Mapping[str, Any], q: np.ndarray) -> list[tuple[str, str]]:
    """What a person reads first about a document, as (label, text) rows: the claim in its notion's terms
    (rldp.shared.claims), the uncertainty set, the alphabet's sizes, the public data it rests on, the
    audit's verdict and the design's utility. The raw fields stay available below them."""
    privacy = doc.get("privacy", {})
    entry = NOTIONS.get(str(privacy.get("notion")))
    rows = [("Claim", f"{claim_text(privacy)} — {entry.title if entry else privacy.get('notion')}")]
    over = _over_text(privacy.get("uncertainty"), entry)
    if over:
        rows.append(("Over", over))
    rows.append(("Audit", audit_text(audit)))
    s_attr = alpha.sensitive
    rows.append(
        ("Sensitive S", f"{s_attr.name}: {s_attr.size} values" + (" (latent: never read)" if alpha.latent else ""))
    )
    released = "; ".join(f"{a.name}: {a.size} values" for a in alpha.released)
    rows.append(("Released U", released))
    rows.append(("Inputs × outputs", f"{q.shape[1]:,} × {q.shape[0]:,} (|X| = {alpha.size:,})"))
    rows.append(("Public data", _public_data_text(doc)))
    utility = doc.get("utility")
    if isinstance(utility, Mapping) and "nmi" in utility:
        rows.append(
            (
                "Utility",
                f"NMI {float(utility['nmi']):.3f} (I(X;Y) = {float(utility.get('mutual_information', 0)):.4f} nats, at P̂)",
            )
        )
    collection = doc.get("collection")
    if isinstance(collection, Mapping) and collection.get("window"):
        rows.append(("Collection", f"at most one report per user per {collection['window']} window"))
    return rows


def _over_text(uset: Any, entry: Any) -> str | None:
    """Where the claim holds: its uncertainty set in words (None: the document names none and needs one)."""
    if isinstance(uset, Mapping):
        radius = uset.get("radius")
        if radius is None:  # an unbounded ball: every distribution
            return "every distribution (unbounded radius)"
        if float(radius) == 0:
            return "at P̂ only (radius 0)"
        where = f"Rényi ball of order {float(uset.get('order', 2)):g}, radius {float(radius):.4g} nats"
        if uset.get("beta") is not None and uset.get("n") is not None:
            where += f" (a {100 * (1 - float(uset['beta'])):g} % confidence set from {int(uset['n']):,} public rows)"
        if uset.get("box") is not None:
            where += ", within the pilot's confidence box (every cell between its lower and upper bound)"
        return where
    if entry is not None and entry.uncertainty == "optional":
        return "every distribution"
    return None


def _public_data_text(doc: Mapping[str, Any]) -> str:
    """The public data the claim rests on: none needed, its name, rows and counts digest, or that none is recorded."""
    provenance = doc.get("provenance")
    if not needs_public_data(doc):
        return (
            "none needed: the claim holds for every distribution (a pilot's, say), so no P̂ enters it; the P̂ "
            "stored with it is only the reference of its utility figures"
        )
    if isinstance(provenance, Mapping):
        source = str(provenance.get("name") or provenance.get("source") or "public data")
        n = provenance.get("n")
        digest = str(provenance.get("counts_sha256") or "")[:16]
        return f"{source}" + (f", {int(n):,} rows" if n is not None else "") + (f", counts {digest}…" if digest else "")
    return "no provenance recorded: P̂ cannot be checked against its data"


def mechanism_view(service: AggregatorService, mechanism_id: str) -> dict[str, Any]:
    """One mechanism: its record, the collections it belongs to, parameters, Q with row/column labels, audit
    (worst case named), P̂.

    Raises UnknownMechanism for an id that is not published here.
    """
    record = service.catalog.get(mechanism_id)
    doc = msgpack.unpackb(service.catalog.document(record.id, "msgpack"), raw=False)
    alpha = service.catalog.parsed(record.id)[1]  # InvalidDocument for a document this version refuses
    q = mechanism_matrix(doc)
    joint_labels = alpha.labels()
    # A mechanism whose S is latent reads U only: its columns are the values of U.
    u_labels = ["|".join(rec[1:]) for rec in alpha.decode(np.arange(alpha.shape[1]))]
    columns = joint_labels if q.shape[1] == alpha.size else u_labels
    audit = _audit(doc)
    worst = dict(audit.get("worst") or {})
    sensitive = list(alpha.sensitive.values)
    named = {
        key: (sensitive[value] if key in ("s1", "s2") and 0 <= value < len(sensitive) else value)
        for key, value in worst.items()
    }
    return {
        "record": record,
        "reports": _reports(service, record),
        "collections": service.storage.collections_of(record.id),
        "parameters": _parameters(doc),
        "summary": _summary(doc, alpha, audit, q),
        "alphabet": alpha,
        "matrix": q,
        "columns": columns,
        "audit": audit,
        "claim": claim_text(doc["privacy"]),
        "verdict": audit_text(audit),
        "worst": worst,
        "worst_named": named,
        "public": public_distribution(doc),
        "public_data": needs_public_data(doc),
        "sensitive_labels": sensitive,
        "released_labels": u_labels,
    }


def estimate_view(service: AggregatorService, mechanism_id: str, args: Mapping[str, str]) -> dict[str, Any]:
    """An estimate (:meth:`AggregatorService.estimate`) plus ``l1_to_public`` = Σ|P̂_X − P̂|, the L1
    distance between the estimated joint and the document's public distribution P̂."""
    out = service.estimate(mechanism_id, args)
    _, _, p_hat = service.catalog.parsed(out["mechanism"])
    joint = np.asarray(out["joint"], dtype=float)
    out["l1_to_public"] = float(np.abs(joint - p_hat).sum())
    out["public"] = p_hat.tolist()
    return out


def collection_estimate_view(service: AggregatorService, name: str, args: Mapping[str, str]) -> dict[str, Any]:
    """A collection's estimate (:meth:`AggregatorService.estimate_collection`) plus ``public``, the P̂ of its current
    mechanism's document (the CSV's ``public`` column, as for a mechanism)."""
    out = service.estimate_collection(name, args)
    current = [m["mechanism"] for m in out["mechanisms"] if m["current"]] or [out["mechanisms"][-1]["mechanism"]]
    _, _, p_hat = service.catalog.parsed(current[0])
    out["public"] = p_hat.tolist()
    return out


def collection_view(service: AggregatorService, name: str) -> dict[str, Any]:
    """A collection's state for its estimate page: ``record``; ``pause`` (the CollectionPause of its current
    mechanism, or None); ``drift_policy`` and ``contamination`` (γ, the share of a window's reports that may be
    forged); ``mechanisms``, oldest first, each with its record, claim, where the claim holds (``over``), reports
    and whether it is current; ``windows``, the windows with reports over its mechanisms (most recent first);
    ``drift``, ``drift_window`` and ``drift_unavailable``: the watch's answer on its current mechanism, on the
    view the watch judges (the one its drift policy acts on). Raises UnknownCollection."""
    record = service.collections.get(name)
    mechanisms: list[dict[str, Any]] = []
    windows: dict[str, int] = {}
    for entry in record.mechanisms:
        mechanism = service.catalog.get(entry.mechanism)
        privacy = msgpack.unpackb(service.catalog.document(mechanism.id, "msgpack"), raw=False)["privacy"]
        mechanisms.append(
            {
                "record": mechanism,
                "since": entry.since,
                "until": entry.until,
                "current": entry.mechanism == record.current,
                "claim": claim_text(privacy),
                "notion": NOTIONS[mechanism.notion].title if mechanism.notion in NOTIONS else mechanism.notion,
                "over": _over_text(privacy.get("uncertainty"), NOTIONS.get(mechanism.notion)),
                "reports": int(service.storage.counts(mechanism.id, mechanism.outputs).sum()),
            }
        )
        if record.window is not None:
            for label, n in service.storage.windows(mechanism.id).items():
                windows[label] = windows.get(label, 0) + int(n)
    order = Window.parse(record.window).start_of if record.window is not None else str
    watched, (drift, unavailable) = service.drift.watched(service.catalog.get(record.current))
    return {
        "record": record,
        "pause": service.pauses.get(record.current),
        "drift_policy": drift_policy(record.policy),
        "contamination": drift_contamination(record.policy),
        "mechanisms": mechanisms,
        "windows": [{"window": w, "reports": windows[w]} for w in sorted(windows, key=order, reverse=True)],
        "drift": drift,
        "drift_window": watched,
        "drift_unavailable": unavailable,
    }
