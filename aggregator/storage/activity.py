"""Recent activity for the dashboard: how many reports each mechanism received lately.

Read-only, from the batches' ``received`` times (one grouped query over the batches received
since then, through the index ``rldp_batches_received`` of schema version 3: it reads only the
recent batches, not every row of the store). The range is two-sided on purpose: with
``received >= ?`` alone SQLite's planner (without range statistics) prefers walking the primary
key in GROUP BY order over the index, i.e. it reads every row again.
"""

from __future__ import annotations

import math

from .base import Storage
from .rows import LIVE

__all__ = ["RECEIVED_SINCE_SQL", "received_since"]

#: Reports per mechanism in the batches received in [since, until].
RECEIVED_SINCE_SQL = (
    "SELECT mechanism, COALESCE(SUM(n), 0) FROM rldp_batches WHERE received >= ? AND received <= ?"
    f" AND {LIVE} GROUP BY mechanism"
)


def received_since(storage: Storage, since: float, until: float = math.inf) -> dict[str, int]:
    """``{mechanism id: reports in the batches received at or after ``since`` and at or before
    ``until`` (Unix seconds; by default no upper bound)}``; mechanisms without such batches are absent."""
    with storage._guard(), storage._connection() as conn:
        rows = conn.execute(storage._sql(RECEIVED_SINCE_SQL), (since, until)).fetchall()
    return {str(row[0]): int(row[1]) for row in rows}
