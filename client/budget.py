"""The privacy budget: how much ε each owner may spend on new draws per period.

Every first use of a mechanism for a new record value of an owner is a fresh draw, and it
spends that mechanism's audited ε; a memoised repeat draws nothing and spends nothing. The
ledger of spending is the memo itself (each memo row keeps the ε it spent and when), so the
draw and its charge are one row, committed together. A call whose new draws would take an
owner over the budget in the current period raises :class:`PrivacyBudgetExceeded` before
anything is stored or sent.

The accounting is the sum of the ε spent: for ε-LDP mechanisms this is sequential
composition; across notions (RLDP protects S, LDP all of X) it is the ledger the app limits,
not a composed guarantee. Each audited ε is known to ``AUDIT_TOLERANCE`` (the audit's own
accuracy), so a call passes when spent + asked ≤ budget + AUDIT_TOLERANCE per draw: three
draws of a mechanism audited at 1 + 1e-12 fit a budget of 3.
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
    """At most ``epsilon`` (nats) of new draws per owner per period ``per``.

    ``per``: an ISO 8601 duration (``"P1D"``, ``"P1W"``, ``"PT6H"``; periods aligned on the
    Unix epoch in UTC like collection windows) or None for a lifetime budget.
    """

    epsilon: float
    per: str | None = None

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon, "privacy budget epsilon")  # finite: for no budget, give none
        if self.per is not None:
            try:
                Window.parse(self.per)
            except ValidationError as exc:
                raise ValueError(f"privacy budget period: {exc}") from None

    def period_start(self, now: float) -> float:
        """The Unix start of the period that contains ``now`` (−inf for a lifetime budget)."""
        if self.per is None:
            return -math.inf
        seconds = Window.parse(self.per).seconds
        return float(int(now // seconds) * seconds)


#: ``Client(url)``'s budget unless it is given (``privacy_budget=None`` turns budgeting off):
#: 4 nats of new draws per owner per UTC day. Memoisation makes repeats free, so what this bounds
#: is what memoisation cannot: a collection's rotations and changed records, each a fresh draw of
#: the whole record. 4 nats a day leaves room for a rotation and a changed record of the ε ≈ 1–2
#: mechanisms rldp designs, and refuses (PrivacyBudgetExceeded, nothing sent) an operator who
#: rotates a collection every hour, which without a budget would hand the aggregator a fresh
#: draw of every user's record each time (the averaging attack of the demo). A per-day budget
#: is how deployed LDP systems bound a device's spending; an app that needs another sets its own.
DEFAULT_BUDGET = PrivacyBudget(epsilon=4.0, per="P1D")


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


def _spent(conn: sqlite3.Connection, owners: list[str], since: float) -> tuple[np.ndarray, np.ndarray]:
    """(ε spent, draws) per owner since ``since``."""
    spent, draws = np.zeros(len(owners)), np.zeros(len(owners), dtype=np.int64)
    index = {owner: i for i, owner in enumerate(owners)}
    fill_keys(conn, ((owner, 0) for owner in owners))
    rows = conn.execute(
        "SELECT k.owner, SUM(m.epsilon), COUNT(*) FROM temp.keys AS k JOIN memo AS m"
        " ON m.owner = k.owner AND m.created >= ? GROUP BY k.owner",
        (since,),
    ).fetchall()
    for owner, eps, count in rows:
        spent[index[owner]], draws[index[owner]] = float(eps), int(count)
    return spent, draws


def charge(conn: sqlite3.Connection, budget: PrivacyBudget | None, new: Keys, epsilon: float, now: float) -> None:
    """Refuse (PrivacyBudgetExceeded) if the new draws ``new`` (ε each) exceed an owner's budget.

    Called inside the write transaction that stores them: the check and the charge are atomic
    across processes sharing the state file.
    """
    if budget is None or not len(new):
        return
    asked_draws = np.bincount(new.owner, minlength=len(new.owners))
    involved = np.flatnonzero(asked_draws)
    names = [new.owners[i] for i in involved.tolist()]
    spent, draws = _spent(conn, names, budget.period_start(now))
    asked = asked_draws[involved] * epsilon
    over = spent + asked > budget.epsilon + AUDIT_TOLERANCE * (draws + asked_draws[involved])
    if over.any():
        i = int(np.argmax(over))
        raise PrivacyBudgetExceeded(budget.epsilon, budget.per, float(spent[i]), float(asked[i]), names[i])
