"""The published mechanisms: look-ups, documents and the caches in front of storage.

A published mechanism never changes under its id (the id is the hash of its content), so
whatever is derived from it (its number of outputs, its collection window, its encoded
document, its parsed matrix) is cached without invalidation; only its status
(active/retired) is always read from storage.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

import msgpack
import numpy as np

from rldp.aggregator.storage import MechanismRecord, Storage
from rldp.shared.audit import ldp_epsilon
from rldp.shared.claims import claim_fields
from rldp.shared.collection import Window, collection_window
from rldp.shared.document import DocumentView, json_compatible, public_distribution, report_matrix
from rldp.shared.document import alphabet as document_alphabet
from rldp.shared.errors import DocumentError
from rldp.shared.records import Alphabet
from rldp.shared.reports import describe_value

from .errors import InvalidDocument, UnknownMechanism
from .labels import check_label

__all__ = ["MECHANISM_ID", "LRU", "MechanismCatalog", "document_json"]

#: A mechanism id: the SHA-256 (hex) of the document's content.
MECHANISM_ID = re.compile(r"[0-9a-f]{64}")


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A small thread-safe LRU map for immutable per-mechanism data."""

    def __init__(self, size: int = 256) -> None:
        self._data: OrderedDict[K, V] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        return None

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._size:
                self._data.popitem(last=False)
        return value


def document_json(doc: Any) -> bytes:
    """The compact JSON form a document is served in (UTF-8; NaN/Infinity refused; binary arrays as base64)."""
    return json.dumps(json_compatible(doc), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


class MechanismCatalog:
    """Published mechanisms by id, with caches of what never changes."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._outputs: LRU[Any, int] = LRU(4096)  # id → number of outputs
        # id → (collection window or None, claim fields): what every upload and estimate reads, kept small
        self._windows: LRU[Any, tuple[Window | None, dict[str, Any]]] = LRU(4096)
        self._documents: LRU[tuple[Any, str], bytes] = LRU(64)  # (id, "json" | "msgpack") → encoded document
        # id → (report matrix, alphabet, public distribution)
        self._parsed: LRU[str, tuple[np.ndarray, Alphabet, np.ndarray]] = LRU(32)
        self._input_epsilon: LRU[str, float] = LRU(4096)  # id → the LDP level of one report w.r.t. the whole input

    def get(self, mechanism_id: Any) -> MechanismRecord:
        """The record of a published mechanism (UnknownMechanism if there is none)."""
        if not isinstance(mechanism_id, str) or not MECHANISM_ID.fullmatch(mechanism_id):
            raise UnknownMechanism(
                f"no mechanism {describe_value(mechanism_id)} is published here; mechanism ids "
                "are 64 lowercase hex characters (see GET /v1/mechanisms)"
            )
        record = self.storage.get_mechanism(mechanism_id)
        if record is None:
            raise UnknownMechanism(
                f"no mechanism {mechanism_id} is published here (see GET /v1/mechanisms)", mechanism=mechanism_id
            )
        self._outputs.put(record.id, record.outputs)
        return record

    def outputs(self, mechanism_id: Any) -> int:
        """|Y'| of a published mechanism, the number of report outputs (cached; UnknownMechanism if none)."""
        outputs = self._outputs.get(mechanism_id)
        return self.get(mechanism_id).outputs if outputs is None else outputs

    def view(self, mechanism_id: Any) -> DocumentView:
        """The typed read-only view of a published mechanism's document (:class:`rldp.shared.document.DocumentView`;
        UnknownMechanism if there is no such mechanism). Not cached itself (it holds the alphabet and the design
        record): what the hot paths read of it, the window and the claim, is (:meth:`window`, :meth:`claim`)."""
        try:
            return DocumentView.of(msgpack.unpackb(self.document(mechanism_id, "msgpack"), raw=False))
        except DocumentError as exc:  # stored by an older rldp: a clear refusal, not a 500
            raise InvalidDocument(
                f"mechanism {mechanism_id}'s stored document cannot be read by this rldp ({exc}); "
                "retire it and publish a corrected design",
                mechanism=mechanism_id,
            ) from None

    def _facts(self, mechanism_id: Any) -> tuple[Window | None, dict[str, Any]]:
        # (collection window, the claim's numbers) read once from the document: it never changes. Only these two
        # fields, not the whole view: every upload reads them, and they are all an upload needs of the document.
        cached = self._windows.get(mechanism_id)
        if cached is None:
            doc = msgpack.unpackb(self.document(mechanism_id, "msgpack"), raw=False)
            privacy = doc.get("privacy") if isinstance(doc, dict) else None
            if not isinstance(privacy, dict):
                raise InvalidDocument(
                    f"mechanism {mechanism_id}'s stored document has no privacy object; retire it and publish a "
                    "corrected design",
                    mechanism=mechanism_id,
                )
            cached = self._windows.put(mechanism_id, (collection_window(doc), claim_fields(privacy)))
        return cached

    def window(self, mechanism_id: Any) -> Window | None:
        """The collection window of a published mechanism, None if it has none (cached;
        UnknownMechanism if there is no such mechanism)."""
        return self._facts(mechanism_id)[0]

    def claim(self, mechanism_id: Any) -> dict[str, Any]:
        """What a published mechanism claims, in its notion's terms (:func:`rldp.shared.claims.claim_fields`:
        ε, with δ for distp, ε_l and ε_u for alip); cached."""
        return dict(self._facts(mechanism_id)[1])

    def list(self) -> list[MechanismRecord]:
        """Every mechanism, oldest first."""
        return self.storage.list_mechanisms()

    def retire(self, mechanism_id: Any) -> MechanismRecord:
        """Retire a mechanism (idempotent); its document stays available."""
        self.get(mechanism_id)
        record = self.storage.retire(mechanism_id)
        if record is None:  # removed between the two calls: storage never deletes, so only by hand
            raise UnknownMechanism(f"no mechanism {mechanism_id} is published here", mechanism=mechanism_id)
        return record

    def set_label(self, mechanism_id: Any, label: Any) -> MechanismRecord:
        """Set a mechanism's label (None: clear it), checked by :func:`.labels.check_label`; its record after."""
        text = check_label(label)
        self.get(mechanism_id)
        record = self.storage.set_label(mechanism_id, text)
        if record is None:  # removed between the two calls: storage never deletes, so only by hand
            raise UnknownMechanism(f"no mechanism {mechanism_id} is published here", mechanism=mechanism_id)
        return record

    def is_published(self, mechanism_id: str) -> bool:
        """Whether a mechanism with this id exists (no exception)."""
        return bool(MECHANISM_ID.fullmatch(mechanism_id)) and self.storage.get_mechanism(mechanism_id) is not None

    def document(self, mechanism_id: Any, kind: str) -> bytes:
        """The document encoded as ``kind`` ("json" or "msgpack")."""
        cached = self._documents.get((mechanism_id, kind))
        if cached is not None:
            return cached
        if not isinstance(mechanism_id, str) or not MECHANISM_ID.fullmatch(mechanism_id):
            self.get(mechanism_id)  # raises UnknownMechanism, naming the expected form
        packed = self.storage.get_document(mechanism_id)
        if packed is None:
            raise UnknownMechanism(
                f"no mechanism {mechanism_id} is published here (see GET /v1/mechanisms)", mechanism=mechanism_id
            )
        data = document_json(msgpack.unpackb(packed, raw=False)) if kind == "json" else packed
        return self._documents.put((mechanism_id, kind), data)

    def input_epsilon(self, mechanism_id: str) -> float:
        """The LDP level of one report of a published mechanism w.r.t. its whole input (inf: none), computed
        once from its report matrix (:func:`rldp.shared.audit.ldp_epsilon`; a K × |Y| pass per mechanism)."""
        cached = self._input_epsilon.get(mechanism_id)
        if cached is not None:
            return float(cached)
        return float(self._input_epsilon.put(mechanism_id, ldp_epsilon(self.parsed(mechanism_id)[0])))

    def parsed(self, mechanism_id: str) -> tuple[np.ndarray, Alphabet, np.ndarray]:
        """(report matrix, alphabet, public distribution P̂) of a published mechanism; the report
        matrix is the distribution of one report given x (R·Q with a per-report layer, else Q)."""
        cached = self._parsed.get(mechanism_id)
        if cached is not None:
            return cached
        doc = msgpack.unpackb(self.document(mechanism_id, "msgpack"), raw=False)
        try:
            alpha = document_alphabet(doc)
        except DocumentError as exc:  # stored by an older rldp, before its alphabet's text was checked
            raise InvalidDocument(
                f"mechanism {mechanism_id} was published by an older rldp and its document is refused now ({exc}); "
                "retire it and publish a corrected design",
                mechanism=mechanism_id,
            ) from None
        return self._parsed.put(mechanism_id, (report_matrix(doc), alpha, public_distribution(doc)))
