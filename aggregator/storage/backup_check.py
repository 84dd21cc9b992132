"""The check ``rldp restore`` runs on a backup before it writes anything: every batch payload decodes.

A stored batch (:class:`~.rows.BatchItem`) is either its packed reports (encoding ``reports``: ``n``
little-endian indices of the mechanism's report width, whose SHA-256 is the row's ``digest``) or its
per-output counts (``counts``: one uint32 per output, summing to ``n``); a pruned batch is a tombstone
(:data:`~.rows.PRUNED`, empty payload). A backup whose payload fails these (a flipped byte, a cut file,
a batch of a mechanism it does not hold) is refused, naming the first bad batch; nothing is restored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from rldp.shared.reports import report_dtype

from .rows import PRUNED, StorageError

__all__ = ["BATCH_CHECK_COLUMNS", "verify_batches", "batch_problem"]

#: The columns of rldp_batches the check reads, in the order :func:`verify_batches` takes them.
BATCH_CHECK_COLUMNS = ("mechanism", "batch", "n", "digest", "encoding", "payload")


def batch_problem(n: int, digest: bytes, encoding: str, payload: bytes, outputs: int) -> str | None:
    """Why one stored batch does not decode (None: it does)."""
    if encoding == PRUNED:
        return None if not payload else "a pruned batch holds a payload"
    if encoding == "reports":
        width = report_dtype(outputs).itemsize
        if len(payload) != n * width:
            return f"its payload has {len(payload)} bytes; {n} reports of {width} byte(s) need {n * width}"
        if hashlib.sha256(payload).digest() != bytes(digest):
            return "its payload does not match its SHA-256 digest"
        reports = np.frombuffer(payload, dtype=report_dtype(outputs))
        if reports.size and int(reports.max()) >= outputs:
            return f"it holds the report {int(reports.max())}, outside the mechanism's {outputs} outputs"
        return None
    if encoding == "counts":
        if len(payload) != 4 * outputs:
            return f"its payload has {len(payload)} bytes; the counts of {outputs} outputs need {4 * outputs}"
        total = int(np.frombuffer(payload, dtype="<u4").sum(dtype=np.int64))
        if total != n:
            return f"its counts add up to {total}, not its {n} reports"
        return None
    return f"its encoding {encoding!r} is unknown (expected reports, counts or {PRUNED})"


def verify_batches(rows: Iterable[tuple[Any, ...]], outputs: Mapping[str, int], source: str) -> int:
    """Check every batch row (:data:`BATCH_CHECK_COLUMNS`) of the backup ``source`` against its mechanism's
    number of outputs; the number checked, or StorageError naming the first bad batch."""
    checked = 0
    for mechanism, batch, n, digest, encoding, payload in rows:
        if mechanism not in outputs:
            why: str | None = "the backup holds no such mechanism"
        else:
            why = batch_problem(int(n), bytes(digest), str(encoding), bytes(payload), outputs[mechanism])
        if why is not None:
            raise StorageError(
                f"{source} is corrupt: batch {batch!r} of mechanism {mechanism}: {why}; nothing was restored "
                "(restore an intact backup)"
            )
        checked += 1
    return checked


_COPY_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _copy_field(text: str) -> str | None:
    """One field of COPY's text format, unescaped (None for ``\\N``)."""
    if text == "\\N":
        return None
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 == len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _COPY_ESCAPES:
            out.append(_COPY_ESCAPES[nxt])
            i += 2
        elif nxt == "x" and i + 2 < len(text) and text[i + 2] in "0123456789abcdefABCDEF":
            end = i + 3 + (i + 3 < len(text) and text[i + 3] in "0123456789abcdefABCDEF")
            out.append(chr(int(text[i + 2 : end], 16)))
            i = end
        elif nxt in "01234567":
            end = i + 2
            while end < min(len(text), i + 4) and text[end] in "01234567":
                end += 1
            out.append(chr(int(text[i + 1 : end], 8)))
            i = end
        else:
            out.append(nxt)
            i += 2
    return "".join(out)


def copy_rows(lines: Iterable[str], table: str) -> Iterable[dict[str, Any]]:
    """The rows of ``table`` in pg_restore's plain output (``COPY <schema>.<table> (cols) FROM stdin;`` then
    one tab-separated line per row until ``\\.``), each a dict of its unescaped text fields; bytea fields
    (``\\x…``) as bytes."""
    columns: list[str] | None = None
    for raw in lines:
        line = raw.rstrip("\n")
        if columns is None:
            head, _, rest = line.partition(" (")
            if head.startswith("COPY ") and head.split(".")[-1].strip('"') == table and rest.endswith(" FROM stdin;"):
                columns = [c.strip().strip('"') for c in rest[: -len(" FROM stdin;")].rstrip(")").split(",")]
            continue
        if line == "\\.":
            return
        row: dict[str, Any] = {}
        for name, field in zip(columns, line.split("\t"), strict=True):
            value = _copy_field(field)
            row[name] = bytes.fromhex(value[2:]) if value is not None and value.startswith("\\x") else value
        yield row
