"""Public data as cell counts over a document's alphabet, and their canonical hash.

The counts of every cell of S × U (s major, the numbering of ``public_distribution``) are
what a design's P̂ is made of: P̂ = counts / n. Their *canonical form* is the UTF-8 bytes of
``{"attributes":[{"name":…,"values":[…]},…],"counts":[…],"format":"rldp.counts/1"}`` (sorted
keys, no whitespace): ``attributes`` are the alphabet's attributes over S × U, sensitive first,
each with its values in the alphabet's order; ``counts`` the integer count of every cell. Its
SHA-256 depends on the table's content only — not on CSV formatting, row order or whitespace —
and is over the joint S × U for a latent S too. Why: anyone holding the public data can
recompute it and compare it with a document's ``provenance.counts_sha256``
(:mod:`rldp.shared.provenance`). :data:`POLICY` says how rows become counts in this version:
every data row is counted, and missing markers ('?', '') are ordinary values.

numpy and the standard library only (the client uses it).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .errors import RecordError, TableError, ValidationError
from .records import Alphabet
from .tables import Table

__all__ = [
    "COUNTS_FORMAT",
    "POLICY",
    "PublicCounts",
    "PublicDataError",
    "canonical_counts",
    "counts_sha256",
    "table_counts",
]

COUNTS_FORMAT = "rldp.counts/1"
#: How this version turns public rows into counts: every data row, missing markers kept as values.
POLICY: dict[str, str] = {"filter": "none", "missing": "as-value"}
_LISTED = 10  # unknown values named per column in an error


class PublicDataError(TableError):
    """Public data that cannot be compared with a document: columns it lacks, values outside the
    document's alphabet, or a provenance policy this version does not apply."""


def _as_counts(counts: Any, shape: tuple[int, int]) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.size != shape[0] * shape[1]:
        raise ValidationError(f"counts must have {shape[0]}×{shape[1]} cells (|S| × |U|); got shape {arr.shape}")
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.rint(arr)):
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or np.any(arr < 0):
        raise ValidationError("counts must be whole numbers ≥ 0 (records per cell of S × U)")
    return arr.astype(np.int64).reshape(shape)


def canonical_counts(alphabet: Alphabet, counts: Any) -> bytes:
    """The canonical form of cell counts over the alphabet's S × U (s major), what the hash covers."""
    cells = _as_counts(counts, alphabet.shape)
    body = {
        "format": COUNTS_FORMAT,
        "attributes": [a.to_dict() for a in alphabet.joint_attributes],
        "counts": cells.ravel().tolist(),
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def counts_sha256(alphabet: Alphabet, counts: Any) -> str:
    """SHA-256 hex of :func:`canonical_counts`: the ``counts_sha256`` of a provenance."""
    return hashlib.sha256(canonical_counts(alphabet, counts)).hexdigest()


def table_counts(table: Table, alphabet: Alphabet) -> np.ndarray:
    """Counts over S × U of every row of ``table`` (:data:`POLICY`), shape (|S|, |U|).

    Raises :class:`PublicDataError` naming the columns the table lacks, or every value
    (up to 10 per column) outside the alphabet: such data is not what the document was designed from.
    """
    names = [a.name for a in alphabet.joint_attributes]
    missing = [name for name in names if name not in table.columns]
    if missing:
        raise PublicDataError(
            f"the public data has no column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} "
            f"(the document's attributes are {', '.join(names)}); its columns: {', '.join(table.columns)}"
        )
    if table.n_rows == 0:
        raise PublicDataError("the public data has no rows")
    unknown = []
    for attr in alphabet.joint_attributes:
        if attr.numeric is not None:  # every finite number has a bin (clamped); the rest is refused below
            continue
        extra = sorted(set(np.unique(table.column(attr.name)).tolist()) - set(attr.values))
        if extra:
            more = f" and {len(extra) - _LISTED} more" if len(extra) > _LISTED else ""
            unknown.append(f"{attr.name}: {', '.join(map(repr, extra[:_LISTED]))}{more}")
    if unknown:
        raise PublicDataError(
            f"the public data has values outside the document's alphabet ({'; '.join(unknown)}): "
            "it is not the data the document was designed from"
        )
    try:
        return alphabet.counts(table)
    except RecordError as exc:  # a numeric column's cell that is not a finite number
        raise PublicDataError(f"the public data has a value no bin holds: {exc}") from None


@dataclass(frozen=True, eq=False)
class PublicCounts:
    """Cell counts of public data over an alphabet's S × U (s major) and the data's name.

    ``distribution`` is P̂ = counts / n, computed as the designers compute it, bit for bit.
    """

    alphabet: Alphabet
    counts: np.ndarray
    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValidationError(f"the public data's name must be a non-empty string; got {self.name!r}")
        cells = _as_counts(self.counts, self.alphabet.shape).copy()
        if cells.sum() < 1:
            raise ValidationError("the public data has no records")
        cells.setflags(write=False)
        object.__setattr__(self, "counts", cells)

    @classmethod
    def from_table(cls, table: Table, alphabet: Alphabet, *, name: str) -> PublicCounts:
        """The counts of every row of ``table`` (:func:`table_counts`)."""
        return cls(alphabet, table_counts(table, alphabet), name)

    @property
    def n(self) -> int:
        """Number of public records."""
        return int(self.counts.sum())

    @cached_property
    def distribution(self) -> np.ndarray:
        """P̂ = counts / n, shape (|S|, |U|)."""
        p: np.ndarray = self.counts / self.n
        return p

    @cached_property
    def sha256(self) -> str:
        """:func:`counts_sha256` of these counts."""
        return counts_sha256(self.alphabet, self.counts)

    def provenance(self) -> dict[str, Any]:
        """The document's ``provenance`` field for a design from these counts."""
        return {
            "name": self.name,
            "n": self.n,
            "columns": [a.name for a in self.alphabet.joint_attributes],
            "counts_sha256": self.sha256,
            "policy": dict(POLICY),
        }
