"""A verified mechanism: the document, checked, ready to privatise records.

:meth:`Mechanism.from_document` is the only way in, and it refuses (raises
:class:`~rldp.client.errors.MechanismRejected`) a document whose id does not match its
content, whose privacy audit fails (``rldp.shared.audit.audit_document`` recomputes the
worst-case ε from the matrix), or that claims more ε than the caller accepts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from rldp.shared.audit import AuditResult, audit_document
from rldp.shared.document import DocumentError, alphabet, mechanism_matrix, validate_document
from rldp.shared.records import Alphabet

from .errors import MechanismRejected
from .sampling import ColumnSampler, RandomSource

__all__ = ["Mechanism"]


class Mechanism:
    """A mechanism document that passed verification, with its sampler.

    ``privatize(records)`` returns the output indices y to upload; the records themselves
    never leave this object.
    """

    def __init__(self, document: dict[str, Any], audit: AuditResult) -> None:
        """Use :meth:`from_document` (which verifies); this constructor trusts its input."""
        self.document = document
        self.audit = audit
        self.alphabet: Alphabet = alphabet(document)
        self.matrix: np.ndarray = mechanism_matrix(document)
        self._sampler = ColumnSampler(self.matrix)

    @classmethod
    def from_document(
        cls, document: Mapping[str, Any], *, expected_id: str | None = None, max_epsilon: float | None = None
    ) -> Mechanism:
        """Verify a document (id, audit, optional ε ceiling) and wrap it.

        ``expected_id``: the id the caller asked for (a server must not substitute another
        valid mechanism). ``max_epsilon``: refuse mechanisms claiming a larger ε (nats).
        """
        claimed_id = document.get("id") if isinstance(document, Mapping) else None
        label = expected_id or (claimed_id if isinstance(claimed_id, str) else "<no id>")
        try:
            doc = validate_document(document)
        except DocumentError as exc:
            raise MechanismRejected(label, f"invalid or tampered document: {exc}") from None
        if expected_id is not None and doc["id"] != expected_id:
            raise MechanismRejected(label, f"the server returned a different mechanism ({doc['id']})")
        try:
            result = audit_document(doc)
        except ValueError as exc:
            raise MechanismRejected(label, f"cannot be audited: {exc}") from None
        if not result.passed:
            raise MechanismRejected(label, "privacy audit failed: " + "; ".join(result.reasons), result.reasons)
        eps = float(doc["privacy"]["epsilon"])
        if max_epsilon is not None and eps > max_epsilon:
            raise MechanismRejected(label, f"claims epsilon {eps:g}, above the allowed maximum {max_epsilon:g}")
        return cls(doc, result)

    # -- properties
    @property
    def id(self) -> str:
        """The content id (sha256 hex) the document was verified against."""
        return str(self.document["id"])

    @property
    def method(self) -> str:
        """The designer that produced the mechanism (e.g. ``"polyopt"``)."""
        return str(self.document["method"])

    @property
    def epsilon(self) -> float:
        """The claimed ε (nats); the audit checked it."""
        return float(self.document["privacy"]["epsilon"])

    @property
    def epsilon_audited(self) -> float:
        """The ε recomputed by the audit (nats; ≤ epsilon + tolerance)."""
        return float(self.audit.epsilon)

    @property
    def notion(self) -> str:
        return str(self.document["privacy"]["notion"])

    @property
    def outputs(self) -> int:
        """|Y|: reports are integers in [0, outputs)."""
        return int(self.matrix.shape[0])

    @property
    def size(self) -> int:
        """|X|."""
        return int(self.matrix.shape[1])

    def __repr__(self) -> str:
        eps = self.audit.epsilon
        return (
            f"Mechanism({self.method}, id={self.id[:12]}…, epsilon={self.epsilon:g} "
            f"(audited {eps if math.isinf(eps) else round(eps, 6)}), {self.alphabet!r}, outputs={self.outputs})"
        )

    # -- privatisation
    def privatize(self, records: Any, rng: RandomSource | None = None) -> np.ndarray:
        """Privatise many records: output indices y (int64), one per record, in order.

        ``records``: dicts ``{"sex": "Male", "race": "White"}`` (extra keys ignored), tuples
        ``(sensitive, released...)``, a :class:`~rldp.shared.records.Table`, or a dict of
        columns. Unknown values, missing attributes or wrong tuple lengths raise
        :class:`~rldp.shared.records.RecordError` naming the value and the allowed ones.
        ``rng``: random source (default: the OS CSPRNG).
        """
        return self._sampler.sample(self.alphabet.encode(records), rng)

    def privatize_indices(self, x: Any, rng: RandomSource | None = None) -> np.ndarray:
        """Privatise records already encoded as indices x = s·|U| + u."""
        return self._sampler.sample(x, rng)

    def privatize_one(self, record: Any, rng: RandomSource | None = None) -> int:
        """Privatise one record (a dict or a tuple); returns y."""
        return int(self._sampler.sample(np.array([self.alphabet.encode_one(record)]), rng)[0])
