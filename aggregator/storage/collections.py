"""Collections in the store: a stable name whose mechanism can change (schema version 4).

``rldp_collections`` holds one row per collection (its description, claim policy as JSON,
window, status); ``rldp_collection_mechanisms`` its mechanisms in order (``seq`` 0, 1, …),
each with the time it became current (``since``) and stopped being current (``until``,
NULL for the current one). Exactly one row per collection has ``until`` NULL. A rotation
closes the current row and appends the next one in the same transaction, after locking
the collection's row, so two concurrent rotations (two PostgreSQL writers) cannot both
append the same ``seq``: the second waits and then sees the first's result.

A mechanism belongs to at most one collection (its reports are that collection's): the unique index
``rldp_collection_mechanism_once`` holds it, and a creation or rotation checks it inside its write
transaction. The loser of a race (two collections taking one mechanism at once) gets
:class:`MechanismTaken` and changes nothing.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from rldp.shared.errors import RldpError

from .host import StorageHost
from .rows import StorageError

__all__ = [
    "CollectionChanged",
    "MechanismTaken",
    "ONE_COLLECTION_PER_MECHANISM",
    "check_one_collection_per_mechanism",
    "CollectionEntry",
    "CollectionPause",
    "CollectionRecord",
    "CollectionStore",
    "COLLECTION_STATEMENTS",
]


class CollectionChanged(RldpError):
    """A rotation was checked against a collection state that another request changed meanwhile."""


class MechanismTaken(RldpError):
    """A creation or rotation would put a mechanism that already belongs to a collection in another one."""

    def __init__(self, mechanism: str, collection: str | None) -> None:
        owner = f"collection {collection!r}" if collection else "another collection"
        super().__init__(f"mechanism {mechanism} already belongs to {owner}; its reports are that collection's")
        self.mechanism = mechanism
        self.collection = collection


#: Version 4's tables (also run by the 3 → 4 migration). ``collection_window`` and ``seq``:
#: WINDOW is a reserved word of PostgreSQL.
COLLECTION_STATEMENTS = [
    "CREATE TABLE IF NOT EXISTS rldp_collections ("
    " name TEXT PRIMARY KEY, description TEXT NOT NULL, policy TEXT NOT NULL, collection_window TEXT,"
    " status TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, retired DOUBLE PRECISION)",
    "CREATE TABLE IF NOT EXISTS rldp_collection_mechanisms ("
    " collection TEXT NOT NULL, seq INTEGER NOT NULL, mechanism TEXT NOT NULL,"
    " since DOUBLE PRECISION NOT NULL, until DOUBLE PRECISION, PRIMARY KEY (collection, seq))",
    "CREATE INDEX IF NOT EXISTS rldp_collection_mechanism ON rldp_collection_mechanisms (mechanism)",
    # A collection's drift policy "pause": the mechanism whose reports it stops taking, since when, why.
    # Created on open like every table here (no version bump: older stores gain it, nothing moves).
    "CREATE TABLE IF NOT EXISTS rldp_collection_pauses ("
    " collection TEXT NOT NULL, mechanism TEXT NOT NULL, since DOUBLE PRECISION NOT NULL, reason TEXT NOT NULL,"
    " PRIMARY KEY (collection, mechanism))",
]

#: A mechanism is in one collection at most (and once in it). Created on open (no version bump: an older
#: rldp works with it), after :func:`check_one_collection_per_mechanism` (an older rldp let
#: two concurrent requests put a mechanism in two collections).
ONE_COLLECTION_PER_MECHANISM = (
    "CREATE UNIQUE INDEX IF NOT EXISTS rldp_collection_mechanism_once ON rldp_collection_mechanisms (mechanism)"
)


def check_one_collection_per_mechanism(conn: Any) -> None:
    """StorageError naming a mechanism in several collections (the unique index cannot be built then)."""
    row = conn.execute(
        "SELECT mechanism, COUNT(*) FROM rldp_collection_mechanisms GROUP BY mechanism HAVING COUNT(*) > 1 LIMIT 1"
    ).fetchone()
    if row is not None:
        raise StorageError(
            f"mechanism {row[0]} is in {row[1]} collection entries (left by concurrent creations or rotations "
            "before rldp checked this in the write): a mechanism's reports must count in one collection. Keep it in one: delete its "
            "other rows of rldp_collection_mechanisms by hand (see docs/design.md, 'Hostile input'), then open "
            "the store again"
        )


_COLUMNS = "name, description, policy, collection_window, status, created, retired"


@dataclass(frozen=True)
class CollectionEntry:
    """One mechanism of a collection: when it became current, and when it stopped (None: current)."""

    mechanism: str
    since: float
    until: float | None = None


@dataclass(frozen=True)
class CollectionRecord:
    """A collection: name, description, claim policy, window (None: none), status, and its mechanisms in order."""

    name: str
    description: str
    policy: dict[str, Any]
    window: str | None
    status: str  # "active" | "retired"
    created: float
    retired: float | None
    mechanisms: tuple[CollectionEntry, ...]

    @property
    def current(self) -> str:
        """The id of the current mechanism (the last one)."""
        return self.mechanisms[-1].mechanism


@dataclass(frozen=True)
class CollectionPause:
    """A mechanism of a collection that takes no reports since ``since`` (its drift policy paused it)."""

    collection: str
    mechanism: str
    since: float
    reason: str


class CollectionStore(StorageHost):
    """Mixin of :class:`~.base.Storage`: the statements on collections (both dialects)."""

    def _collection(self, conn: Any, name: str) -> CollectionRecord | None:
        row = conn.execute(self._sql(f"SELECT {_COLUMNS} FROM rldp_collections WHERE name = ?"), (name,)).fetchone()
        if row is None:
            return None
        entries = conn.execute(
            self._sql(
                "SELECT mechanism, since, until FROM rldp_collection_mechanisms WHERE collection = ? ORDER BY seq"
            ),
            (name,),
        ).fetchall()
        return CollectionRecord(
            name=row[0],
            description=row[1],
            policy=json.loads(row[2]),
            window=row[3],
            status=row[4],
            created=float(row[5]),
            retired=None if row[6] is None else float(row[6]),
            mechanisms=tuple(CollectionEntry(str(m), float(s), None if u is None else float(u)) for m, s, u in entries),
        )

    def create_collection(
        self, name: str, description: str, policy: dict[str, Any], window: str | None, mechanism: str
    ) -> tuple[bool, CollectionRecord]:
        """Store a new collection whose first (current) mechanism is ``mechanism``, unless the name
        exists; (created, the stored collection). MechanismTaken (nothing stored) if ``mechanism`` belongs
        to another collection."""
        now = time.time()
        with self.write_transaction() as conn:
            cur = conn.execute(
                self._sql(
                    f"INSERT INTO rldp_collections ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING"
                ),
                (name, description, json.dumps(policy, sort_keys=True), window, "active", now, None),
            )
            created = cur.rowcount == 1
            if created:
                self._add_mechanism(conn, name, 0, mechanism, now)
            stored = self._collection(conn, name)
        assert stored is not None
        return created, stored

    def _unique_violations(self) -> tuple[type[BaseException], ...]:  # pragma: no cover - the backend's
        raise NotImplementedError

    def _add_mechanism(self, conn: Any, name: str, seq: int, mechanism: str, now: float) -> None:
        """Append ``mechanism`` to collection ``name`` (in the caller's write transaction), unless it belongs
        to a collection already: MechanismTaken then (the transaction rolls back). The check sees what is
        committed; a concurrent writer that checked at the same time (PostgreSQL, READ COMMITTED) is stopped
        by the unique index, its violation reported as the same MechanismTaken."""
        owner = conn.execute(
            self._sql("SELECT collection FROM rldp_collection_mechanisms WHERE mechanism = ? LIMIT 1"), (mechanism,)
        ).fetchone()
        if owner is not None:
            raise MechanismTaken(mechanism, str(owner[0]))
        try:
            conn.execute(
                self._sql(
                    "INSERT INTO rldp_collection_mechanisms (collection, seq, mechanism, since, until)"
                    " VALUES (?, ?, ?, ?, ?)"
                ),
                (name, seq, mechanism, now, None),
            )
        except self._unique_violations():
            raise MechanismTaken(mechanism, None) from None

    def get_collection(self, name: str) -> CollectionRecord | None:
        """A collection with its mechanisms, or None."""
        with self._guard(), self._connection() as conn:
            return self._collection(conn, name)

    def list_collections(self) -> list[CollectionRecord]:
        """Every collection, oldest first."""
        with self._guard(), self._connection() as conn:
            names = [r[0] for r in conn.execute("SELECT name FROM rldp_collections ORDER BY created, name").fetchall()]
            found = [self._collection(conn, name) for name in names]
        return [c for c in found if c is not None]

    def collections_of(self, mechanism: str) -> list[str]:
        """The names of the collections a mechanism belongs to (now or before)."""
        with self._guard(), self._connection() as conn:
            rows = conn.execute(
                self._sql("SELECT DISTINCT collection FROM rldp_collection_mechanisms WHERE mechanism = ?"),
                (mechanism,),
            ).fetchall()
        return sorted(str(r[0]) for r in rows)

    def rotate_collection(self, name: str, mechanism: str, expected_current: str) -> CollectionRecord | None:
        """Make ``mechanism`` the current mechanism of an active collection whose current one is
        ``expected_current``; None if the collection is unknown; raises
        when another rotation or a retirement came first (:class:`CollectionChanged`, nothing changed)
        and when ``mechanism`` belongs to a collection (:class:`MechanismTaken`, nothing changed)."""
        now = time.time()
        with self.write_transaction() as conn:
            # Lock the collection's row first: concurrent rotations queue here (PostgreSQL row lock).
            conn.execute(self._sql("UPDATE rldp_collections SET status = status WHERE name = ?"), (name,))
            record = self._collection(conn, name)
            if record is None:
                return None
            if record.status != "active" or record.current != expected_current:
                raise CollectionChanged(f"collection {name!r} was rotated or retired meanwhile; look at it again")
            conn.execute(
                self._sql("UPDATE rldp_collection_mechanisms SET until = ? WHERE collection = ? AND until IS NULL"),
                (now, name),
            )
            self._add_mechanism(conn, name, len(record.mechanisms), mechanism, now)
            return self._collection(conn, name)

    def retire_collection(self, name: str) -> CollectionRecord | None:
        """Mark a collection retired (idempotent); None if unknown."""
        with self.write_transaction() as conn:
            conn.execute(
                self._sql(
                    "UPDATE rldp_collections SET status = 'retired', retired = ? WHERE name = ? AND status <> 'retired'"
                ),
                (time.time(), name),
            )
            return self._collection(conn, name)

    def pause_mechanism(self, collection: str, mechanism: str, reason: str, *, replace: bool = False) -> bool:
        """Stop taking reports of ``mechanism`` for ``collection`` (idempotent); True if it was not paused.
        ``replace``: a pause in force takes ``reason`` instead of keeping its own."""
        conflict = "DO UPDATE SET reason = excluded.reason" if replace else "DO NOTHING"
        with self.write_transaction() as conn:
            cur = conn.execute(
                self._sql(
                    "INSERT INTO rldp_collection_pauses (collection, mechanism, since, reason) VALUES (?, ?, ?, ?)"
                    f" ON CONFLICT (collection, mechanism) {conflict}"
                ),
                (collection, mechanism, time.time(), reason),
            )
            return bool(cur.rowcount == 1)

    def resume_collection(self, collection: str) -> int:
        """Lift every pause of ``collection``; how many there were."""
        with self.write_transaction() as conn:
            cur = conn.execute(self._sql("DELETE FROM rldp_collection_pauses WHERE collection = ?"), (collection,))
            return int(cur.rowcount)

    def collection_pauses(self) -> list[CollectionPause]:
        """Every pause in force, oldest first."""
        with self._guard(), self._connection() as conn:
            rows = conn.execute(
                "SELECT collection, mechanism, since, reason FROM rldp_collection_pauses ORDER BY since"
            ).fetchall()
        return [CollectionPause(str(c), str(m), float(s), str(r)) for c, m, s, r in rows]
