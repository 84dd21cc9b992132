"""The window ledger and the outbox: at most one report per owner, mechanism and window.

For a mechanism whose document carries ``"collection": {"window": ...}``, the client
records, in the state file and in the same transaction as the draws, which owners a batch
reports for which window (``reported``) and the batch itself (``outbox``). A later call in
the same window skips those owners. The batch leaves the outbox when the server
acknowledges it (or the offline queue takes it); a batch left there by a crash or an outage
is sent again with its original batch id, so the server stores it once. A batch the server
refuses for good releases its ledger rows: the window was not counted, so those owners may
report in it again (their memoised Y, so no new randomness).
"""

from __future__ import annotations

import sqlite3
from itertools import repeat
from typing import NamedTuple

import numpy as np

from .state import fill_keys, mechanism_key

__all__ = [
    "PreparedBatch",
    "unreported",
    "mark_reported",
    "release_batch",
    "outbox_put",
    "outbox_pending",
    "outbox_remove",
]


# See :func:`unreported`.
_RANGE_FACTOR = 4


class PreparedBatch(NamedTuple):
    """One upload body: its batch id, mechanism, window label ("" for none) and report count."""

    batch: str
    mechanism: str
    window: str
    n: int
    body: bytes


def unreported(conn: sqlite3.Connection, mechanism: str, window: str, owners: list[str]) -> np.ndarray:
    """A boolean per owner: True when nothing was reported for it in this window yet.

    One range scan between the first and last owner when it holds at most ``_RANGE_FACTOR`` rows per
    owner (a first report: an empty range), matched by exact string; else a temporary table and a join.
    """
    mask = np.ones(len(owners), dtype=bool)
    mech = mechanism_key(conn, mechanism) if owners else None
    if mech is None:  # nothing was ever reported under this mechanism
        return mask
    where = "FROM reported WHERE mech = ? AND window_label = ? AND owner >= ? AND owner <= ?"
    args = (mech, window, min(owners), max(owners))
    limit = _RANGE_FACTOR * len(owners) + 1
    count = int(conn.execute(f"SELECT COUNT(*) FROM (SELECT 1 {where} LIMIT ?)", (*args, limit)).fetchone()[0])
    if count < limit:
        if count:
            index = {owner: i for i, owner in enumerate(owners)}
            done = [index[row[0]] for row in conn.execute(f"SELECT owner {where}", args) if row[0] in index]
            mask[done] = False
        return mask
    fill_keys(conn, ((owner, i) for i, owner in enumerate(owners)))
    done = conn.execute(
        "SELECT k.x FROM temp.keys AS k JOIN reported AS r ON r.mech = ? AND r.window_label = ? AND r.owner = k.owner",
        (mech, window),
    ).fetchall()
    if done:
        mask[np.array(done, dtype=np.int64).reshape(-1)] = False
    return mask


def mark_reported(conn: sqlite3.Connection, mechanism: str, window: str, owners: list[str], batch: str) -> None:
    """Record that ``batch`` reports ``owners`` for ``window`` (inside the caller's write transaction)."""
    conn.executemany(
        "INSERT INTO reported (mech, window_label, owner, batch) VALUES (?, ?, ?, ?)",
        zip(repeat(mechanism_key(conn, mechanism, create=True)), repeat(window), owners, repeat(batch)),
    )


def release_batch(conn: sqlite3.Connection, batch: str, mechanism: str, window: str) -> None:
    """Forget a batch the server refused for good: its owners have not reported in its window.

    Its rows are found within its mechanism and window (a range of the primary key): the ledger has
    no index by batch, which would cost every report a second, wide index entry for this rare case.
    """
    mech = mechanism_key(conn, mechanism)
    if mech is not None:
        conn.execute("DELETE FROM reported WHERE mech = ? AND window_label = ? AND batch = ?", (mech, window, batch))
    conn.execute("DELETE FROM outbox WHERE batch = ?", (batch,))


def outbox_put(conn: sqlite3.Connection, item: PreparedBatch, created: float) -> None:
    conn.execute(
        "INSERT INTO outbox (batch, mechanism, window_label, n, body, created) VALUES (?, ?, ?, ?, ?, ?)",
        (item.batch, item.mechanism, item.window, item.n, item.body, created),
    )


def outbox_pending(conn: sqlite3.Connection, mechanism: str | None = None) -> list[PreparedBatch]:
    """Batches not yet acknowledged (of one mechanism, or all), oldest first."""
    sql = "SELECT batch, mechanism, window_label, n, body FROM outbox"
    args: tuple[str, ...] = ()
    if mechanism is not None:
        sql, args = sql + " WHERE mechanism = ?", (mechanism,)
    rows = conn.execute(sql + " ORDER BY created, batch", args).fetchall()
    return [PreparedBatch(str(b), str(m), str(w), int(n), bytes(body)) for b, m, w, n, body in rows]


def outbox_remove(conn: sqlite3.Connection, batch: str) -> None:
    """The server acknowledged ``batch`` (or the offline queue holds it now)."""
    conn.execute("DELETE FROM outbox WHERE batch = ?", (batch,))
