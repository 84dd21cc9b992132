"""Reporting over time: memoised draws, the privacy budget and collection windows, together.

A :class:`Reporter` (one per ``Client(url, state_path=...)``) turns encoded records and their
owners into upload bodies:

* every (owner, randomiser, x) gets the Y drawn the first time (:mod:`.memo`; the randomiser key
  covers Q, the per-report layer and the alphabet, so a collection's rotation that re-publishes the
  same design re-sends it), and each new draw spends the mechanism's audited ε from the owner's budget
  (:mod:`.budget`);
* with a per-report layer (``collection.per_report`` = (R, ε₁)) every report sends y' ~ R(·|Y)
  drawn afresh from the memoised Y; the memo keeps Y, never y';
* for a mechanism with a collection window, only the first record of each owner in the call
  is reported, and only if that owner has not reported in the current window yet
  (:mod:`.ledger`); the others are *skipped*, and the batch is labelled with the window.

Draws, budget charge, ledger rows and (windowed) batches are committed in one transaction
of the state file before anything is sent, so the report that leaves is always the stored
one. The wire form of a batch is ``{"mechanism", "batch", "reports", "window"?}`` (msgpack;
:func:`make_batches`).
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import msgpack
import numpy as np

from rldp.shared.reports import batch_body

from .budget import PrivacyBudget, charge
from .ledger import PreparedBatch, mark_reported, outbox_put, unreported
from .mechanism import Mechanism
from .memo import Keys, adopt, insert, legacy_documents, legacy_key, lookup, owner_codes, present_values, unique_keys
from .sampling import RandomSource
from .state import StateFile

__all__ = ["Reporter", "Prepared", "make_batches"]


def make_batches(mechanism: str, reports: np.ndarray, batch_size: int, window: str | None) -> list[PreparedBatch]:
    """Upload bodies of at most ``batch_size`` reports, each with a fresh batch id (uuid4).

    Body: :func:`rldp.shared.reports.batch_body` (the form the server's parser reads), as msgpack.
    """
    out = []
    for start in range(0, reports.size, batch_size):
        chunk = reports[start : start + batch_size]
        batch = uuid.uuid4().hex
        body = batch_body(mechanism, batch, chunk, window)
        out.append(
            PreparedBatch(batch, mechanism, window or "", int(chunk.size), msgpack.packb(body, use_bin_type=True))
        )
    return out


@dataclass(frozen=True)
class Prepared:
    """What a call will send: its batches, the records skipped, the window label (None: no windows)."""

    batches: list[PreparedBatch]
    skipped: int = 0
    window: str | None = None


class Reporter:
    """Memoised, budgeted, windowed privatisation on one state file (see the module docstring)."""

    def __init__(self, state: StateFile, budget: PrivacyBudget | None, clock: Callable[[], float]) -> None:
        self.state = state
        self.budget = budget
        self.clock = clock
        self._current: set[str] = set()  # document ids whose memo rows are known not to need adopting
        self._no_legacy = False  # the file holds no rows keyed by a document id (none are ever added)

    def legacy_documents(self) -> frozenset[str]:
        """The document ids whose memo rows were drawn before state format 3 and are not adopted yet."""
        if self._no_legacy:
            return frozenset()
        with self.state.read() as conn:
            found = legacy_documents(conn)
        self._no_legacy = not found
        return found

    def adopt(self, mech: Mechanism) -> None:
        """Move memo rows drawn under ``mech``'s document id before state format 3 to its randomiser key, once."""
        if mech.id in self._current or self._no_legacy:
            return
        with self.state.read() as conn:
            legacy = legacy_key(conn, mech.id)
        if legacy is not None:
            with self.state.write() as conn:
                legacy = legacy_key(conn, mech.id)  # again under the write lock: another process may have done it
                if legacy is not None:
                    adopt(conn, legacy, mech.memo_key)
        self._current.add(mech.id)

    def _draw_missing(
        self,
        conn: sqlite3.Connection,
        mech: Mechanism,
        keys: Keys,
        ys: np.ndarray,
        rng: RandomSource | None,
        now: float,
    ) -> None:
        """Draw, charge and store the keys without a memoised y (inside a write transaction)."""
        missing = ys < 0
        if not missing.any():
            return
        new = keys.subset(missing)
        charge(conn, self.budget, new, mech.epsilon_audited, now)
        drawn = mech.draw_memo(new.x, rng)
        insert(conn, mech.memo_key, new, drawn, mech.epsilon_audited, now)
        ys[missing] = drawn

    def outputs(self, mech: Mechanism, keys: Keys, rng: RandomSource | None) -> np.ndarray:
        """The memoised y of each key, drawing (and storing) the missing ones."""
        with self.state.read() as conn:  # the common case: everything is memoised already
            ys = lookup(conn, mech.memo_key, keys, mech.memo_outputs, self.state.path)
            seen = self.state.version(conn)
        if (ys >= 0).all():
            return ys
        now = self.clock()
        with self.state.write() as conn:
            if self.state.version(conn) != seen:  # another process (or thread) wrote meanwhile: it may have drawn
                ys = lookup(conn, mech.memo_key, keys, mech.memo_outputs, self.state.path)
            self._draw_missing(conn, mech, keys, ys, rng, now)
        return ys

    def privatize(self, mech: Mechanism, x: np.ndarray, owners: object, rng: RandomSource | None) -> np.ndarray:
        """One report per record from its memoised y (y' ~ R(·|y) with a per-report layer; no window
        ledger: nothing is sent)."""
        self.adopt(mech)
        names, codes = owner_codes(owners, x.size)
        if len(names) == 1:  # one owner: a table over x's values, one gather (the common, fast case)
            present = present_values(x, mech.size)
            table = np.zeros(mech.size, dtype=np.int64)
            table[present] = self.outputs(mech, Keys(names, np.zeros(present.size, dtype=np.int64), present), rng)
            return mech.report_from(table.take(x), rng)
        if x.size and x.astype(np.int64, copy=False).view(np.uint64).max() >= mech.size:
            raise ValueError(f"record indices must be integers in [0, {mech.size})")
        keys, where = unique_keys(names, codes, x, mech.size)
        ys: np.ndarray = self.outputs(mech, keys, rng).take(where)
        return mech.report_from(ys, rng)

    def prepare(
        self, mech: Mechanism, x: np.ndarray, owners: object, rng: RandomSource | None, batch_size: int
    ) -> Prepared:
        """The batches a submit sends, committed (with draws, charges, ledger rows, outbox) first."""
        if mech.window is None:
            return Prepared(make_batches(mech.id, self.privatize(mech, x, owners, rng), batch_size, None))
        self.adopt(mech)
        names, codes = owner_codes(owners, x.size)
        now = self.clock()
        label = mech.window.label_at(now)
        owner_ids, first = np.unique(codes, return_index=True)  # each owner's first record in the call
        with self.state.write() as conn:
            fresh = unreported(conn, mech.id, label, [names[i] for i in owner_ids.tolist()])
            send = np.sort(first[fresh])
            keys = Keys(names, codes[send], x[send])  # one record per owner: already unique
            ys = lookup(conn, mech.memo_key, keys, mech.memo_outputs, self.state.path)
            self._draw_missing(conn, mech, keys, ys, rng, now)
            batches = make_batches(mech.id, mech.report_from(ys, rng), batch_size, label)
            for i, item in enumerate(batches):
                chunk = keys.owner[i * batch_size : (i + 1) * batch_size].tolist()
                mark_reported(conn, mech.id, label, [names[o] for o in chunk], item.batch)
                outbox_put(conn, item, now)
        return Prepared(batches, int(x.size - send.size), label)
