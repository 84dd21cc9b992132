"""Retention and inventory: prune report batches received before a date; what a store holds.

:func:`prune` removes the reports of the batches *received* (committed: ``rldp_batches.received``,
Unix seconds) before a cutoff, for every mechanism or some, and subtracts them from the counts
in the same transaction, so estimates never see half a prune.

A pruned batch leaves a **tombstone**: its row keeps the idempotency key (mechanism, batch id),
its size, digest and window, but its payload is emptied and its encoding set to
:data:`PRUNED`. Why: a client that re-sends a pruned batch (a retry after a long outage, a
device replaying its queue) is answered "duplicate", as before the prune, instead of having
its reports counted a second time; the same id with other reports is still a conflict. The
cost is one small row (~100 bytes) per pruned batch. Every reader of batches skips tombstones
(``encoding <> 'pruned'``). No schema change: the columns are those of version 4; the prune
reads ``rldp_batches`` through its existing index on ``received`` (version 3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rldp.shared.reports import batch_counts

from .rows import LIVE, PRUNED

if TYPE_CHECKING:  # the storage calls nothing here; these functions take it as an argument
    from .base import Storage

__all__ = ["PRUNED", "LIVE", "Inventory", "prune", "inventory", "inventory_of"]


@dataclass(frozen=True)
class Inventory:
    """What a store holds: mechanisms (id → status), live batches and reports per mechanism,
    collections, design jobs and the schema version."""

    schema: str | None
    mechanisms: dict[str, str]
    reports: dict[str, tuple[int, int]] = field(default_factory=dict)  # id → (batches, reports)
    collections: int = 0
    jobs: int = 0

    @property
    def empty(self) -> bool:
        return not self.mechanisms and not self.reports and not self.collections and not self.jobs

    def lines(self) -> list[str]:
        """A human summary: one line in all, then one line per mechanism."""
        total = sum(n for _, n in self.reports.values())
        batches = sum(b for b, _ in self.reports.values())
        out = [
            f"{len(self.mechanisms)} mechanisms, {batches} batches, {total} reports, "
            f"{self.collections} collections, {self.jobs} design jobs (schema version {self.schema})"
        ]
        for mid, status in self.mechanisms.items():
            b, n = self.reports.get(mid, (0, 0))
            out.append(f"  {mid}  {status:8s} {n} reports in {b} batches")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "mechanisms": {
                mid: {
                    "status": s,
                    "batches": self.reports.get(mid, (0, 0))[0],
                    "reports": self.reports.get(mid, (0, 0))[1],
                }
                for mid, s in self.mechanisms.items()
            },
            "collections": self.collections,
            "jobs": self.jobs,
        }


def inventory_of(conn: Any) -> Inventory:
    """The :class:`Inventory` read on a DB-API connection (any dialect: no parameters)."""

    def rows(sql: str) -> list[Any]:
        return list(conn.execute(sql).fetchall())

    schema = rows("SELECT value FROM rldp_meta WHERE key = 'schema'")
    mechanisms = {str(r[0]): str(r[1]) for r in rows("SELECT id, status FROM rldp_mechanisms ORDER BY published, id")}
    reports = {
        str(r[0]): (int(r[1]), int(r[2]))
        for r in rows(
            f"SELECT mechanism, COUNT(*), COALESCE(SUM(n), 0) FROM rldp_batches WHERE {LIVE} GROUP BY mechanism"
        )
    }
    return Inventory(
        schema=str(schema[0][0]) if schema else None,
        mechanisms=mechanisms,
        reports=reports,
        collections=int(rows("SELECT COUNT(*) FROM rldp_collections")[0][0]),
        jobs=int(rows("SELECT COUNT(*) FROM rldp_jobs")[0][0]),
    )


def inventory(storage: Storage) -> Inventory:
    """What ``storage`` holds now (one read transaction's view on SQLite; one statement each on PostgreSQL)."""
    with storage._guard(), storage._connection() as conn:
        return inventory_of(conn)


#: Batches pruned per transaction: a SQLite prune holds the write lock (uploads wait) only this long at a time.
PRUNE_CHUNK = 2000


def prune(
    storage: Storage, before: float, mechanisms: Sequence[str] | None = None, *, dry_run: bool = False
) -> dict[str, tuple[int, int]]:
    """Remove the reports of the batches received before ``before`` (Unix seconds), of
    ``mechanisms`` (None: every mechanism); ``{mechanism id: (batches, reports)}`` removed (or,
    with ``dry_run``, that would be). In transactions of at most :data:`PRUNE_CHUNK` batches,
    each all or nothing: its batches become tombstones and their reports leave the counts
    together, so the counts always equal the live batches."""
    if mechanisms is not None and not mechanisms:
        return {}
    only = "" if mechanisms is None else f" AND mechanism IN ({', '.join('?' * len(mechanisms))})"
    args: list[Any] = [before, *(mechanisms or ())]
    where = f"WHERE received < ? AND {LIVE}{only}"
    if dry_run:
        with storage._guard(), storage._connection() as conn:
            found = conn.execute(
                storage._sql(
                    f"SELECT mechanism, COUNT(*), COALESCE(SUM(n), 0) FROM rldp_batches {where} GROUP BY mechanism"
                ),
                args,
            ).fetchall()
        return {str(r[0]): (int(r[1]), int(r[2])) for r in found}
    removed: dict[str, tuple[int, int]] = {}
    while True:
        done = _prune_chunk(storage, where, args, removed)
        if done < PRUNE_CHUNK:
            return removed


def _prune_chunk(storage: Storage, where: str, args: list[Any], removed: dict[str, tuple[int, int]]) -> int:
    """Prune up to PRUNE_CHUNK batches in one transaction (adding them to ``removed``); how many."""
    # PostgreSQL writers run concurrently: lock the rows read, so a second prune waits and then skips them.
    lock = " FOR UPDATE" if storage.dialect == "postgresql" else ""
    seen = 0
    with storage.write_transaction() as conn:
        outputs = {str(r[0]): int(r[1]) for r in conn.execute("SELECT id, outputs FROM rldp_mechanisms").fetchall()}
        cur = conn.execute(
            storage._sql(
                f"SELECT mechanism, batch, window_label, n, encoding, payload FROM rldp_batches {where}"
                f" LIMIT {PRUNE_CHUNK}{lock}"
            ),
            args,
        )
        totals: dict[tuple[str, str], np.ndarray] = {}
        keys: dict[str, list[str]] = {}
        for mechanism, batch, window, n, encoding, payload in cur.fetchall():
            seen += 1
            counts = batch_counts(encoding, bytes(payload), outputs[mechanism])
            acc = totals.get((mechanism, window))
            totals[mechanism, window] = counts if acc is None else acc + counts
            keys.setdefault(mechanism, []).append(batch)
            b, r = removed.get(mechanism, (0, 0))
            removed[mechanism] = (b + 1, r + int(n))
        for mechanism, batches in keys.items():
            for start in range(0, len(batches), 500):  # by key: exactly the rows counted above
                part = batches[start : start + 500]
                conn.execute(
                    storage._sql(
                        f"UPDATE rldp_batches SET encoding = ?, payload = ? WHERE mechanism = ?"
                        f" AND batch IN ({', '.join('?' * len(part))})"
                    ),
                    [PRUNED, b"", mechanism, *part],
                )
        for (mechanism, window), counts in sorted(totals.items(), key=lambda kv: kv[0]):
            storage._upsert_counts(conn, mechanism, window, -counts)  # subtracted from this writer's shard
    return seen
