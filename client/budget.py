"""The privacy budget: how much ε each owner may spend on new draws, per period and over its lifetime.

Every first use of a mechanism for a new record value of an owner is a fresh draw, and it
spends that mechanism's audited ε; a memoised repeat draws nothing and spends nothing. The
ledger of spending is the memo itself (each memo row keeps the ε it spent and when), so the
draw and its charge are one row, committed together. A call whose new draws would take an
owner over the budget — in the current period, or over its lifetime — raises
:class:`PrivacyBudgetExceeded` before anything is drawn, stored or sent.

What the bound means: the sum of the ε of every fresh draw of one owner, over all mechanisms
and (for the lifetime cap) over the whole life of the state file. For ε-LDP mechanisms this is
sequential composition: everything the aggregator ever receives about the owner's records is
``lifetime``-LDP. Across notions (RLDP protects S, LDP all of X) it is the ledger the app limits,
not a composed guarantee. Each audited ε is known to ``AUDIT_TOLERANCE`` (the audit's own
accuracy), so a call passes when spent + asked ≤ cap + AUDIT_TOLERANCE per draw: three draws of
a mechanism audited at 1 + 1e-12 fit a budget of 3.

When the lifetime cap is reached, reports of what is already memoised still go out (the same Y
under a randomiser already drawn, free) — including every rotation of a collection that re-publishes
the same design under a new document id (the memo is keyed by the randomiser: Q, the per-report layer
and the alphabet, :func:`rldp.shared.document.randomiser_key`); a real redesign (another Q) or a
changed record is refused for good (``exc.per is None``): no later day lifts it. The ledger lives in the
state file, so deleting that file resets it (and re-randomises every record): an app must not.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass

import numpy as np

from rldp.shared.collection import Window
from rldp.shared.errors import ValidationError
from rldp.shared.parameters import check_epsilon
from rldp.shared.tolerances import AUDIT_TOLERANCE

from .errors import PrivacyBudgetExceeded
from .memo import Keys
from .state import fill_keys

__all__ = ["DEFAULT_BUDGET", "PrivacyBudget", "PrivacyBudgetExceeded", "budget_for", "charge"]


@dataclass(frozen=True)
class PrivacyBudget:
    """At most ``epsilon`` (nats) of new draws per owner per period ``per``, and at most ``lifetime`` in all.

    ``per``: an ISO 8601 duration (``"P1D"``, ``"P1W"``, ``"PT6H"``; periods aligned on the
    Unix epoch in UTC like collection windows) or None: then ``epsilon`` is itself the lifetime
    total. ``lifetime``: with a period, the cap on the owner's total over every period (≥
    ``epsilon``); None: no cap beyond the period's (the total grows without bound).
    """

    epsilon: float
    per: str | None = None
    lifetime: float | None = None

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon, "privacy budget epsilon")  # finite: for no budget, give none
        if self.per is not None:
            try:
                Window.parse(self.per)
            except ValidationError as exc:
                raise ValueError(f"privacy budget period: {exc}") from None
        if self.lifetime is not None:
            check_epsilon(self.lifetime, "privacy budget lifetime")
            if self.per is None:
                raise ValueError(
                    "privacy budget lifetime needs a period: without per=..., epsilon is already the lifetime total"
                )
            if self.lifetime < self.epsilon:
                raise ValueError(
                    f"privacy budget lifetime ({self.lifetime:g}) must be at least the budget per period "
                    f"({self.epsilon:g} per {self.per})"
                )

    def period_start(self, now: float) -> float:
        """The Unix start of the period that contains ``now`` (−inf for a lifetime budget)."""
        if self.per is None:
            return -math.inf
        seconds = Window.parse(self.per).seconds
        return float(int(now // seconds) * seconds)

    @property
    def total(self) -> float:
        """The owner's cap over its whole life: ``lifetime``, ``epsilon`` without a period, else inf."""
        if self.per is None:
            return self.epsilon
        return self.lifetime if self.lifetime is not None else math.inf


#: ``Client(url)``'s budget unless it is given (``privacy_budget=None`` turns budgeting off): 4 nats
#: of new draws per owner per UTC day, and 4 nats per owner in all (the state file's lifetime).
#: Memoisation makes repeats free, and it is keyed by the randomiser (Q, per-report layer, alphabet),
#: so a collection rotated daily that re-publishes the same design re-sends the same Y every day and
#: spends nothing: the demo's averaging attack across 30 such rotations stays at its one-report level
#: (ε = 1). What this bounds is what memoisation cannot: redesigns (a new Q) and changed records, each
#: a fresh draw of the record. A per-day cap alone renews: a collection redesigned daily would hand the
#: aggregator a fresh draw of every record each day (after 30, the attack reads S for 98 % of users at
#: ε = 1). The lifetime cap stops that after ⌊4/ε⌋ draws: 4 redesigns at ε = 1 (the attack then stays at
#: its 4-report level, 0.85 against 0.71 from one report), one at ε > 2. 4 nats is 4× the ε ≈ 1 that
#: rldp designs by default: room for the README's field loop at ε = 1 (pilot → switch → redesign: 3
#: draws) and one changed record. For ε-LDP it bounds the likelihood ratio of anything the aggregator
#: ever sees about an owner by e⁴ ≈ 55. An app that needs more sets its own
#: (``dataclasses.replace(DEFAULT_BUDGET, lifetime=…)``) and should tell its users.
DEFAULT_BUDGET = PrivacyBudget(epsilon=4.0, per="P1D", lifetime=4.0)


def budget_for(budget: PrivacyBudget | None, has_state: bool) -> PrivacyBudget | None:
    """The budget a client keeps: ``budget`` checked; the default one is dropped without a state file
    (``state_path=None`` was asked for: no ledger to keep it in), any other needs one (ValueError)."""
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise ValueError(f"privacy_budget must be a PrivacyBudget; got {type(budget).__name__}")
    if budget is not None and not has_state:
        if budget is not DEFAULT_BUDGET:
            raise ValueError("privacy_budget needs a state file (state_path=None): the ledger of ε spent lives there")
        return None
    return budget


#: One range scan of the memo between the first and last owner when it holds at most this many rows per
#: owner (a first draw of new owners: an empty range), else a temporary table of the owners and a join.
_RANGE_FACTOR = 4


def _spent(conn: sqlite3.Connection, owners: list[str], since: float) -> np.ndarray:
    """Per owner (rows): ε spent and draws since ``since`` (columns 0, 1), and in all (columns 2, 3).

    The memo's primary key starts with the owner: the rows of new owners are found absent by one range scan."""
    out = np.zeros((len(owners), 4))
    sums = "SUM(CASE WHEN m.created >= ? THEN m.epsilon ELSE 0 END), SUM(m.created >= ?), SUM(m.epsilon), COUNT(*)"
    where = "FROM memo WHERE owner >= ? AND owner <= ?"
    span = (min(owners), max(owners))
    limit = _RANGE_FACTOR * len(owners) + 1
    count = int(conn.execute(f"SELECT COUNT(*) FROM (SELECT 1 {where} LIMIT ?)", (*span, limit)).fetchone()[0])
    if count == 0:
        return out
    if count < limit:
        rows = conn.execute(f"SELECT m.owner, {sums} FROM memo AS m WHERE m.owner >= ? AND m.owner <= ?"
                            " GROUP BY m.owner", (since, since, *span)).fetchall()  # fmt: skip
    else:
        fill_keys(conn, ((owner, 0) for owner in owners))
        rows = conn.execute(
            f"SELECT k.owner, {sums} FROM temp.keys AS k JOIN memo AS m ON m.owner = k.owner GROUP BY k.owner",
            (since, since),
        ).fetchall()
    index = {owner: i for i, owner in enumerate(owners)}
    for owner, *values in rows:
        i = index.get(owner)  # the range may hold owners of other calls
        if i is not None:
            out[i] = [float(v) for v in values]
    return out


def charge(conn: sqlite3.Connection, budget: PrivacyBudget | None, new: Keys, epsilon: float, now: float) -> None:
    """Refuse (PrivacyBudgetExceeded) if the new draws ``new`` (ε each) exceed an owner's budget: its
    lifetime total first (the refusal no later period lifts), then the current period's.

    Called inside the write transaction that stores them: the check and the charge are atomic
    across processes sharing the state file.
    """
    if budget is None or not len(new):
        return
    asked_draws = np.bincount(new.owner, minlength=len(new.owners))
    involved = np.flatnonzero(asked_draws)
    names = [new.owners[i] for i in involved.tolist()]
    spent = _spent(conn, names, budget.period_start(now))
    draws = asked_draws[involved]
    asked = draws * epsilon
    caps = [(budget.total, None, 2)] + ([(budget.epsilon, budget.per, 0)] if budget.per is not None else [])
    for cap, per, col in caps:
        over = spent[:, col] + asked > cap + AUDIT_TOLERANCE * (spent[:, col + 1] + draws)
        if over.any():
            i = int(np.argmax(over))
            raise PrivacyBudgetExceeded(cap, per, float(spent[i, col]), float(asked[i]), names[i])
