"""What the Python client does with one conformance case: the reference every client must match.

Used by ``generate.py`` (to write the expected results) and by ``tests/client/test_conformance.py``
(to check that the Python client still gives them). Each function runs the client's own code path:
a document as ``Client.mechanism`` handles a download (``from_json``/``from_msgpack``, then
``Mechanism.from_document`` with the expected id and the policy), a record through
``Alphabet.encode``, a sampler through ``rldp.client.grr.sampler_for`` with an injected source.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from typing import Any

import numpy as np

from rldp.client import Mechanism, MechanismRejected, VerificationPolicy
from rldp.client.alias import AliasTable
from rldp.client.grr import GrrSampler, sampler_for
from rldp.shared.audit import LayeredAuditResult, audit_document
from rldp.shared.document import from_json, from_msgpack, randomiser_bytes
from rldp.shared.errors import RldpError
from rldp.shared.provenance import check_public_data
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table

__all__ = [
    "document_outcome",
    "document_message",
    "randomiser_outcome",
    "encode_outcome",
    "sampler_outcome",
    "alias_outcome",
    "rule_of",
    "number",
    "Units",
]

#: How a MechanismRejected names the rule that refused the document (the message's stable part).
_RULES = (
    ("invalid or tampered document", "document"),
    ("the server returned a different mechanism", "expected_id"),
    ("is not pinned", "pinned"),
    ("above the allowed maximum", "max_epsilon"),
    ("above max_beta", "max_beta"),
    ("below min_radius", "min_radius"),
    ("narrowed by a pilot's box", "confidence_box"),
    ("max_public_n", "max_public_n"),
    ("cannot be audited", "audit_error"),
    ("privacy audit failed", "audit"),
)


def rule_of(exc: MechanismRejected) -> str:
    """The rule a MechanismRejected names (see ``_RULES``)."""
    text = str(exc)
    for needle, rule in _RULES:
        if needle in text:
            return rule
    raise AssertionError(f"unclassified refusal: {text}")


def number(value: float | None) -> float | str | None:
    """A float for a case file: JSON has no infinity, so it is the string "inf"."""
    if value is None:
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(value)


def policy_from(spec: dict[str, Any] | None) -> VerificationPolicy | None:
    if spec is None:
        return None
    extra = {"max_beta": spec["max_beta"]} if "max_beta" in spec else {}  # absent: the default (0.05)
    return VerificationPolicy(
        **extra,
        max_epsilon=spec.get("max_epsilon"),
        pinned=spec.get("pinned"),
        min_radius=spec.get("min_radius"),
        max_public_n=spec.get("max_public_n"),
        beta=spec.get("beta", 0.05),
    )


def document_bytes(case: dict[str, Any]) -> bytes:
    if "document" in case:
        return str(case["document"]).encode("utf-8")
    return base64.b64decode(case["document_base64"])


def _audit_values(doc: dict[str, Any]) -> dict[str, Any]:
    result = audit_document(doc)
    out: dict[str, Any] = {"notion": result.notion, "epsilon": number(result.epsilon), "passed": bool(result.passed)}
    extra = result.extra or {}
    for key in ("delta", "epsilon_lower", "epsilon_upper"):
        if key in extra:
            out[key] = number(float(extra[key]))
    if isinstance(result, LayeredAuditResult) and result.per_report is not None:
        out["per_report_epsilon"] = number(result.per_report.epsilon)
        out["per_report_passed"] = bool(result.per_report.passed)
    return out


def document_outcome(case: dict[str, Any]) -> dict[str, Any]:
    """The Python client's verdict on a document case: verdict, error class, rule, id, audited values."""
    data = document_bytes(case)
    try:
        doc = from_json(data) if case["encoding"] == "json" else from_msgpack(data)
    except RldpError as exc:
        return {"verdict": "rejected", "error": type(exc).__name__, "rule": "document", "id": None}
    out: dict[str, Any] = {"id": doc["id"], "format": doc["format"]}
    try:
        mech = Mechanism.from_document(doc, expected_id=case.get("expected_id"), policy=policy_from(case.get("policy")))
    except MechanismRejected as exc:
        out.update(verdict="rejected", error="MechanismRejected", rule=rule_of(exc))
        if out["rule"] in (
            "audit",
            "pinned",
            "max_epsilon",
            "max_beta",
            "min_radius",
            "max_public_n",
            "confidence_box",
            "expected_id",
        ):
            out["audit"] = _audit_values(doc)
        return out
    out.update(verdict="accepted", error=None, rule=None, audit=_audit_values(doc))
    out["mechanism"] = {
        "outputs": mech.outputs,
        "memo_outputs": mech.memo_outputs,
        "inputs": mech.size,
        "window": None if mech.window is None else mech.window.text,
        "epsilon_audited": number(mech.epsilon_audited),
        "epsilon_per_report_audited": number(mech.epsilon_per_report_audited),
    }
    return out


def document_message(case: dict[str, Any]) -> str | None:
    """The message of the error reading a document case's bytes gives, or for a case with a policy the message
    of its refusal (None when the document is read and accepted)."""
    data = document_bytes(case)
    try:
        doc = from_json(data) if case["encoding"] == "json" else from_msgpack(data)
        if "policy" in case:
            Mechanism.from_document(doc, policy=policy_from(case["policy"]))
    except RldpError as exc:
        return str(exc)
    return None


def typed(value: Any) -> Any:
    """A ``"typed"`` case's records as Python reads them: ``{"int": digits}`` → int, ``{"float": repr}`` →
    float (``"nan"``, ``"inf"``, ``"-0.0"``: what JSON cannot write), everything else as it is."""
    if isinstance(value, dict) and set(value) == {"int"}:
        return int(value["int"])
    if isinstance(value, dict) and set(value) == {"float"}:
        return float(value["float"])
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return value


def encode_outcome(case: dict[str, Any]) -> dict[str, Any]:
    """Records → indices (``Alphabet.encode``; one record: ``encode_one``), or the error class."""
    try:
        alpha = Alphabet.from_dict(case["alphabet"])
        records = typed(case["records"]) if case.get("typed") else case["records"]
        if case["shape"] == "one":
            indices = [alpha.encode_one(records)]
        elif case["shape"] == "tuples":
            indices = alpha.encode([tuple(r) for r in records]).tolist()
        else:  # "objects" (a list of dicts) or "columns" (a dict of lists)
            indices = alpha.encode(records).tolist()
    except RldpError as exc:
        return {"error": type(exc).__name__, "indices": None}
    return {"error": None, "indices": [int(i) for i in indices]}


class Units:
    """An injected random source whose doubles are exactly u·2⁻⁵³ for given 53-bit integers u."""

    def __init__(self, u: list[int]) -> None:
        self.u = list(u)
        self.at = 0

    def random(self, n: int) -> np.ndarray:
        chunk = self.u[self.at : self.at + n]
        if len(chunk) != n:
            raise AssertionError("the case's random integers ran out")
        self.at += n
        return np.array(chunk, dtype=np.float64) * (1.0 / (1 << 53))


def sampler_outcome(matrix: np.ndarray, spec: dict[str, Any] | None, xs: list[int], us: list[int]) -> dict[str, Any]:
    """The tables ``sampler_for`` builds for Q (thresholds, alias or GRR masses) and y for each (x, u)."""
    sampler = sampler_for(matrix, spec)
    ys = sampler.sample(np.array(xs, dtype=np.int64), Units(us)).tolist()
    out: dict[str, Any] = {"ys": [int(y) for y in ys]}
    if isinstance(sampler, GrrSampler):
        m_d, m_o, total = sampler.masses
        out.update(kind="grr", masses=[str(m_d), str(m_o), str(total)], scale_bits=sampler.scale_bits)
        return out
    thresholds = np.asarray(sampler.thresholds, dtype=np.uint64)
    out["thresholds_sha256"] = hashlib.sha256(np.ascontiguousarray(thresholds, dtype="<u8").tobytes()).hexdigest()
    if thresholds.size <= 4096:
        out["thresholds"] = [[str(int(t)) for t in row] for row in thresholds]
    if sampler.alias is not None:
        table = np.ascontiguousarray(sampler.alias.table, dtype="<u8")
        out.update(
            kind="alias", alias_bits=sampler.alias.bits, alias_sha256=hashlib.sha256(table.tobytes()).hexdigest()
        )
    else:
        out["kind"] = "inversion"
    return out


def alias_outcome(thresholds: list[list[int]]) -> dict[str, Any]:
    """The packed alias table (``prob << 16 | alias``, x·2ᴸ + bucket) of integer thresholds, by numpy and by C."""
    t = np.array(thresholds, dtype=np.uint64)
    tables = [AliasTable(t, native=False)]
    try:
        tables.append(AliasTable(t, native=True))
    except Exception:  # pragma: no cover - no C accelerator
        pass
    packed = [np.ascontiguousarray(a.table, dtype="<u8") for a in tables]
    for other in packed[1:]:
        if not np.array_equal(other, packed[0]):
            raise AssertionError("the C and numpy alias tables differ")
    return {"bits": tables[0].bits, "table": [str(int(v)) for v in packed[0]]}


_HEX = re.compile(r"[0-9a-f]+")


def batch_outcome(case: dict[str, Any]) -> dict[str, Any]:
    """Upload bodies the client builds (``make_batches``, batch ids given), each checked by the
    server's parser (``parse_batch``, ``check_reports``, ``check_window``) and stored form
    (``encode_batch``); for a refused body, the parser's error class."""
    import uuid
    from unittest import mock

    import msgpack

    from rldp.client.reporting import make_batches
    from rldp.shared.collection import Window
    from rldp.shared.reports import check_reports, check_window, encode_batch, parse_batch

    window = Window.parse("P1D") if case.get("window") else None
    outputs, now = int(case["outputs"]), float(case["now"])

    def server(body: bytes) -> tuple[Any, str, Any, str]:
        data = msgpack.unpackb(body, raw=False)
        _, batch, reports = parse_batch(data, 1_000_000)
        arr = check_reports(reports, outputs)
        return data, batch, arr, check_window(data, window, now)

    if "body_base64" in case:
        try:
            server(base64.b64decode(case["body_base64"]))
        except RldpError as exc:
            return {"error": type(exc).__name__}
        return {"error": None}
    fakes = [mock.Mock(hex=i) for i in case["batch_ids"]]
    with mock.patch.object(uuid, "uuid4", side_effect=fakes):
        prepared = make_batches(
            case["mechanism"], np.array(case["reports"], dtype=np.int64), case["batch_size"], case["window"]
        )
    bodies = []
    for item in prepared:
        _, batch, arr, label = server(item.body)
        digest, encoding, payload, _ = encode_batch(arr, outputs)
        bodies.append(
            {
                "batch": batch,
                "body_base64": base64.b64encode(item.body).decode(),
                "window": label,
                "sha256": digest.hex(),
                "stored_encoding": encoding,
                "payload_base64": base64.b64encode(payload).decode(),
            }
        )
    return {"error": None, "bodies": bodies}


def public_data_outcome(case: dict[str, Any]) -> dict[str, Any]:
    """The Python client's verdict on a public-data case: ``check_public_data`` of the document against the
    case's columns (passed / failed with the mismatched fields / error), the data's n and counts hash."""
    doc = from_json(case["document"].encode("utf-8"))
    try:
        check = check_public_data(doc, Table.from_columns(case["columns"]), beta=case.get("beta"))
    except RldpError as exc:
        return {"verdict": "error", "error": type(exc).__name__, "fields": [], "n": None, "counts_sha256": None}
    return {
        "verdict": "passed" if check.passed else "failed",
        "error": None,
        "fields": [m.field for m in check.mismatches],
        "n": check.n,
        "counts_sha256": check.counts_sha256,
    }


def randomiser_outcome(case: dict[str, Any]) -> dict[str, Any]:
    """Each document of a randomiser case read and verified as a download is, and its memo key
    (``Mechanism.memo_key``); whether they are one randomiser; the first one's canonical text."""
    docs = []
    for item in case["documents"]:
        data = document_bytes(item)
        doc = from_json(data) if item["encoding"] == "json" else from_msgpack(data)
        docs.append(Mechanism.from_document(doc))
    keys = [mech.memo_key for mech in docs]
    text = randomiser_bytes(docs[0].document).decode("utf-8")
    return {"keys": keys, "same": len(set(keys)) == 1, "text": text if len(text) < 4000 else None}
