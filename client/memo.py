"""Memoisation: each owner's record value gets one Y per mechanism, drawn once and reused.

Why: an app that reports the same record every day and draws a fresh Y each time hands the
aggregator n independent draws of Q(·|x), from which it can read S with near certainty. With
the memo, every later report of the same (owner, mechanism, x) sends the Y drawn the first
time, so any number of reports reveals no more than one; a record that changes to a new
value gets its own draw (the permanent randomised response of RAPPOR). Entries are keyed by
the mechanism's randomiser key (:func:`rldp.shared.document.randomiser_key`: a hash of Q, the
per-report layer and the input alphabet), not its document id: a collection's rotation that
re-publishes the same design under a new id re-sends the memoised Y (and spends nothing), while a
draw is never reused under another Q. Rows drawn before state format 3 are keyed by their document
id; :func:`adopt` moves them to the randomiser key once the client verifies that document again. With a
per-report layer (RAPPOR's instantaneous response) the memo still holds Y, and each report
sends a fresh y' ~ R(·|Y) (:meth:`rldp.client.mechanism.Mechanism.report_from`).

Keys are owners × encoded record values; this module works on the *unique* keys of a call
(:class:`Keys`, from ``np.unique``), never per record, so memoising 10⁶ records of one owner
costs a few vectorised passes and one small query.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from .errors import StateFileError
from .state import fill_keys, mechanism_key

__all__ = [
    "Keys",
    "owner_codes",
    "present_values",
    "unique_keys",
    "lookup",
    "insert",
    "legacy_key",
    "legacy_documents",
    "adopt",
]

# Up to this many distinct owners are looked up one owner at a time (a range scan each);
# more go through a temporary table of keys and one join.
_PER_OWNER_QUERIES = 4
# More distinct owners: one range scan between the first and last owner when it holds at most this many
# rows per key (:func:`_range_lookup`), else a temporary table of keys and one join.
_RANGE_FACTOR = 4


def owner_codes(owners: object, n: int) -> tuple[list[str], np.ndarray]:
    """(unique owner names, each record's index into them) for ``owners`` given per record.

    ``owners``: None or one string (every record is that owner's; None is the device's
    single owner, ``""``), or a sequence of n strings or integers (integers become their
    decimal text). ValueError for anything else or a length that does not match.
    """
    if owners is None or isinstance(owners, str):
        return [owners or ""], np.zeros(n, dtype=np.int64)
    arr = np.asarray(owners)
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(f"owners must give one owner per record ({n}); got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "Uiu":
        raise ValueError(f"owners must be strings (or integers), one per record; got dtype {arr.dtype}")
    names, codes = np.unique(arr.astype(str), return_inverse=True)
    return [str(v) for v in names.tolist()], codes.reshape(-1).astype(np.int64)


@dataclass(frozen=True)
class Keys:
    """The unique (owner, x) pairs of a call: ``owners[owner[k]]`` and ``x[k]`` for key k."""

    owners: list[str]
    owner: np.ndarray
    x: np.ndarray

    def __len__(self) -> int:
        return int(self.x.size)

    def subset(self, mask: np.ndarray) -> Keys:
        return Keys(self.owners, self.owner[mask], self.x[mask])


def present_values(x: np.ndarray, size: int) -> np.ndarray:
    """The distinct values of x (sorted), found by counting (no sort); ValueError outside [0, size)."""
    try:
        counts: np.ndarray = np.bincount(x, minlength=size)
    except ValueError:
        counts = np.zeros(size + 1, dtype=np.int64)  # a negative index: reported below like one too large
    if counts.size > size:
        raise ValueError(f"record indices must be integers in [0, {size}); got {int(x.min())}..{int(x.max())}")
    return np.flatnonzero(counts)


def unique_keys(owners: list[str], codes: np.ndarray, x: np.ndarray, size: int) -> tuple[Keys, np.ndarray]:
    """(the unique keys, each record's key index) for records x (in [0, size)) of owners ``codes``."""
    uniq, inverse = np.unique(codes * size + x, return_inverse=True)
    return Keys(owners, uniq // size, uniq % size), inverse.reshape(-1)


def _integer_rows(rows: list[Any], path: str, mechanism: str) -> np.ndarray:
    """Rows of two integers ≥ 0 as an (n, 2) int64 array; StateFileError when the file holds anything
    else (a value edited by hand: text, a float, a blob, a negative y)."""
    stored = np.array(rows)  # numpy picks int64 only when every value is an integer
    if stored.dtype.kind not in "iu" or stored.ndim != 2 or stored.shape[1] != 2 or int(stored.min()) < 0:
        raise StateFileError(
            path, f"is corrupt: the memo of randomiser {mechanism} holds a value that is not an output"
        )
    return stored.astype(np.int64, copy=False)


def _range_lookup(conn: sqlite3.Connection, mechanism: str, mech: int, keys: Keys, ys: np.ndarray, path: str) -> bool:
    """Fill ``ys`` from the memo rows whose owner lies between the keys' first and last owner, when
    there are at most ``_RANGE_FACTOR`` × as many as keys (False: too many, use the join).

    The rows come from one range scan of the primary key (owner first) and are matched in numpy, so keys of
    owners that are new (a first report: an empty range) or few rows per owner cost no per-key
    SQL. SQLite compares text by its UTF-8 bytes, which orders like numpy's code points.
    """
    used = np.flatnonzero(np.bincount(keys.owner, minlength=len(keys.owners)))  # sorted, without a sort
    names = [keys.owners[i] for i in used.tolist()]
    where = "FROM memo WHERE owner >= ? AND owner <= ? AND mech = ?"
    args = (min(names), max(names), mech)  # Python orders str by code point, as UTF-8 bytes order
    limit = _RANGE_FACTOR * len(keys) + 1
    count = conn.execute(f"SELECT COUNT(*) FROM (SELECT 1 {where} LIMIT ?)", (*args, limit)).fetchone()
    if int(count[0]) >= limit:
        return False
    if not count[0]:
        return True
    rows = conn.execute(f"SELECT owner, x, y {where}", args).fetchall()
    rank = {name: j for j, name in enumerate(names)}  # exact string keys (numpy's str would drop trailing NULs)
    codes = np.fromiter((rank.get(row[0], -1) for row in rows), dtype=np.int64, count=len(rows))
    stored = _integer_rows([row[1:] for row in rows], path, mechanism)
    width = int(keys.x.max()) + 1
    known = (codes >= 0) & (stored[:, 0] < width)  # rows of other owners in the range, or of other values
    position = np.zeros(len(keys.owners), dtype=np.int64)
    position[used] = np.arange(used.size)
    wanted = position[keys.owner] * width + keys.x  # each key as one integer
    have = codes[known] * width + stored[known, 0]
    order = np.argsort(wanted, kind="stable")
    pos = np.minimum(np.searchsorted(wanted[order], have), wanted.size - 1)
    hit = wanted[order][pos] == have
    ys[order[pos[hit]]] = stored[known, 1][hit]
    return True


def lookup(conn: sqlite3.Connection, mechanism: str, keys: Keys, outputs: int, path: str) -> np.ndarray:
    """The memoised y of each key (int64), −1 where there is none yet."""
    ys = np.full(len(keys), -1, dtype=np.int64)
    mech = mechanism_key(conn, mechanism) if len(keys) else None
    if mech is None:  # nothing was ever drawn under this mechanism
        return ys
    if len(keys.owners) <= _PER_OWNER_QUERIES:
        for code, owner in enumerate(keys.owners):
            mine = np.flatnonzero(keys.owner == code)
            if not mine.size:
                continue
            rows = conn.execute("SELECT x, y FROM memo WHERE owner = ? AND mech = ?", (owner, mech)).fetchall()
            if not rows:
                continue
            stored = _integer_rows(rows, path, mechanism)
            order = np.argsort(stored[:, 0])
            xs_sorted = stored[order, 0]
            at = np.minimum(np.searchsorted(xs_sorted, keys.x[mine]), xs_sorted.size - 1)
            found = xs_sorted[at] == keys.x[mine]
            ys[mine[found]] = stored[order, 1][at[found]]
    elif not _range_lookup(conn, mechanism, mech, keys, ys, path):
        fill_keys(conn, zip([keys.owners[i] for i in keys.owner.tolist()], keys.x.tolist(), strict=True))
        rows = conn.execute(
            "SELECT k.rowid, m.y FROM temp.keys AS k JOIN memo AS m ON m.owner = k.owner AND m.mech = ? AND m.x = k.x",
            (mech,),
        ).fetchall()
        if rows:
            found = _integer_rows(rows, path, mechanism)
            ys[found[:, 0] - 1] = found[:, 1]
    if ys.size and int(ys.max()) >= outputs:
        raise StateFileError(
            path, f"is corrupt: a memoised output of randomiser {mechanism} is ≥ its {outputs} outputs"
        )
    return ys


def insert(
    conn: sqlite3.Connection, mechanism: str, keys: Keys, ys: np.ndarray, epsilon: float, created: float
) -> None:
    """Store new draws (inside the caller's write transaction; keys must not be memoised yet)."""
    names = keys.owners
    mech = mechanism_key(conn, mechanism, create=True)
    conn.executemany(  # zip and repeat in C: no Python frame per row
        "INSERT INTO memo (owner, mech, x, y, epsilon, created) VALUES (?, ?, ?, ?, ?, ?)",
        zip(
            [names[o] for o in keys.owner.tolist()],
            repeat(mech),
            keys.x.tolist(),
            ys.tolist(),
            repeat(epsilon),
            repeat(created),
        ),
    )


def legacy_key(conn: sqlite3.Connection, document_id: str) -> int | None:
    """The key of memo rows still keyed by ``document_id`` (drawn before state format 3), None if none."""
    row = conn.execute(
        "SELECT l.mech FROM legacy_memo AS l JOIN mechanisms AS k ON k.id = l.mech WHERE k.mechanism = ?",
        (document_id,),
    ).fetchone()
    return None if row is None else int(row[0])


def legacy_documents(conn: sqlite3.Connection) -> frozenset[str]:
    """The document ids whose memo rows are still keyed by them (drawn before state format 3)."""
    rows = conn.execute("SELECT k.mechanism FROM legacy_memo AS l JOIN mechanisms AS k ON k.id = l.mech").fetchall()
    return frozenset(str(row[0]) for row in rows)


def adopt(conn: sqlite3.Connection, legacy: int, randomiser: str) -> None:
    """Move the memo rows of a document keyed ``legacy`` to its randomiser key (inside a write transaction).

    A row whose (owner, x) the randomiser already holds (another document of the same randomiser drew it
    after the migration) stays where it is: never reused, and its ε still counts against the owner's budget
    (the budget sums an owner's rows under every key), so no charge is ever lost. One pass over the memo.
    """
    target = mechanism_key(conn, randomiser, create=True)
    conn.execute("UPDATE OR IGNORE memo SET mech = ? WHERE mech = ?", (target, legacy))
    conn.execute("DELETE FROM legacy_memo WHERE mech = ?", (legacy,))
