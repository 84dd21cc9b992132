"""Recent activity for the dashboard: how many reports each mechanism received lately.

Read-only, from the batches' ``received`` times (one grouped query over the batches received
since then; there is no index on ``received``, so it reads every batch row of the store once).
"""

from __future__ import annotations

from .base import Storage

__all__ = ["received_since"]


def received_since(storage: Storage, since: float) -> dict[str, int]:
    """``{mechanism id: reports in the batches received at or after ``since`` (Unix seconds)}``;
    mechanisms without such batches are absent."""
    with storage._guard(), storage._connection() as conn:
        rows = conn.execute(
            storage._sql(
                "SELECT mechanism, COALESCE(SUM(n), 0) FROM rldp_batches WHERE received >= ? GROUP BY mechanism"
            ),
            (since,),
        ).fetchall()
    return {str(row[0]): int(row[1]) for row in rows}
