"""The averaging attack: what the client's memoisation buys when a record is reported every window.

An app reports the same record x = (s, u) once per window. An aggregator that can link a
user's reports (by network identity, say) and has seen T of them guesses S by the posterior

    P(s | y_1..y_T) ∝ Σ_u P̂(s, u) · L(y_1..y_T | s, u),
    L(y_1..y_T | x) = (1 − ρ) Π_t Q(y_t | x) + ρ Q(y_1 | x) 1[y_1 = … = y_T]

with P̂ the public distribution the mechanism document carries. With a latent S (the privacy
funnel: the mechanism reads U only) Q(y | s, u) = Q(y | u), and the same rule is the posterior on S
through the mechanism over U; averaging then reads u, and S as far as u tells it. L is the exact likelihood
for an aggregator that does not know whether a user's app memoises (probability ρ = ½) or
draws afresh: Bayes-optimal for that population, and one rule applied unchanged to both
kinds of stream (a rule told which client sent what would be tautological). Why it matters:

* without memoisation (:meth:`rldp.client.Mechanism.privatize` each window) the reports are
  independent draws of Q(·|x); the log-likelihoods add up, the true x pulls away from every
  other column of Q and S is read almost surely after a few dozen windows;
* with memoisation (``Client(url, state_path=...)``, :meth:`rldp.client.Client.privatize`)
  every report repeats the first draw, and no rule can do better than the Bayes optimum from
  one report, Σ_y max_s Σ_u Q(y | s, u) P(s, u) (and the RLDP guarantee [LZG24, Def 1]
  bounds what one y tells about s).

Memoisation is per randomiser (:func:`rldp.shared.document.randomiser_key`: Q, the per-report layer,
the alphabet), not per document, so a collection the operator rotates every day by re-publishing its
design re-sends every record's first draw each day; :func:`run_rotation_attack` runs the same attack
across such rotations (one mechanism a day). Days whose documents are other randomisers (a redesign) are
fresh draws, and there only the client's privacy budget stands between the aggregator and the
fresh-draw curve: a per-day budget renews, the default's lifetime cap does not
(:data:`rldp.client.DEFAULT_BUDGET`).

Everything runs through the real SDK: the mechanism is downloaded and verified by a
:class:`~rldp.client.Client`, memoised draws live in its state file. Users, draws and the
attack use a fixed seed, so the figures are the same on every run.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rldp.client import DEFAULT_BUDGET, Client, Mechanism, PrivacyBudget, PrivacyBudgetExceeded
from rldp.shared.tables import Table

from ..datasets import load_adult
from .config import ATTACK_USERS
from .console import progress_bar

__all__ = [
    "ATTACK_SEED",
    "ATTACK_USERS",
    "ATTACK_WINDOWS",
    "MEMO_PRIOR",
    "AveragingAttacker",
    "AttackResult",
    "RotationResult",
    "attack_users",
    "one_report_bayes_accuracy",
    "over_sensitive_and_released",
    "map_rule_accuracy",
    "run_averaging_attack",
    "run_rotation_attack",
]

ATTACK_SEED = 20_240_601  # users and draws of the attack: the same figures on every run
ATTACK_WINDOWS = 30  # reports per user (e.g. one a day for a month)
MEMO_PRIOR = 0.5  # ρ: the aggregator's prior that a user's app memoises
DAY = 86_400.0  # seconds: the simulated time between two windows


def _log(values: np.ndarray) -> np.ndarray:
    """log with log 0 = −inf (an impossible output or cell rules the input out)."""
    with np.errstate(divide="ignore"):
        out: np.ndarray = np.log(np.asarray(values, dtype=float))
    return out


class AveragingAttacker:
    """The aggregator's guess of each user's S from every report it has linked to them.

    ``q``: Q (|Y| × |X|, columns x = s·|U| + u); ``prior``: P̂ of shape (|S|, |U|);
    ``users``: how many users it follows. :meth:`observe` one window's reports (one y per
    user, in the same order every window), :meth:`guess` the MAP S of the module docstring.
    Cost per window: one gather of log Q rows and one add over users × |X| (no Python loop
    over users).
    """

    def __init__(self, q: np.ndarray, prior: np.ndarray, users: int, memo_prior: float = MEMO_PRIOR) -> None:
        if not 0.0 <= memo_prior <= 1.0:
            raise ValueError(f"memo_prior must be a probability in [0, 1]; got {memo_prior!r}")
        self.shape = tuple(np.shape(prior))
        self.log_q = _log(q)
        self.log_prior = _log(np.ravel(prior))
        self.log_fresh = float(_log(np.array(1.0 - memo_prior)))
        self.log_memo = float(_log(np.array(memo_prior)))
        self.windows = 0
        self.independent = np.zeros((users, self.log_q.shape[1]))  # Σ_t log Q(y_t | x)
        self.first = np.zeros_like(self.independent)  # log Q(y_1 | x)
        self.first_y = np.zeros(users, dtype=np.int64)
        self.constant = np.ones(users, dtype=bool)  # y_1 = … = y_T so far

    def observe(self, ys: np.ndarray) -> None:
        """Add one window's reports (``ys[i]``: user i's y)."""
        ys = np.asarray(ys, dtype=np.int64)
        rows = self.log_q[ys]
        if self.windows == 0:
            self.first, self.first_y = rows, ys.copy()
        else:
            self.constant &= ys == self.first_y
        self.independent += rows
        self.windows += 1

    def log_likelihood(self) -> np.ndarray:
        """log L(y_1..y_T | x) per user and x (users × |X|)."""
        memoised = np.where(self.constant[:, None], self.first, -np.inf)
        out: np.ndarray = np.logaddexp(self.log_fresh + self.independent, self.log_memo + memoised)
        return out

    def guess(self) -> np.ndarray:
        """argmax_s Σ_u P̂(s, u) L(y_1..y_T | s, u) per user (index into S)."""
        if self.windows == 0:
            raise ValueError("the attacker has seen no reports yet: observe() a window first")
        joint = self.log_likelihood() + self.log_prior
        top = joint.max(axis=1, keepdims=True)
        top[~np.isfinite(top)] = 0.0  # no x explains the reports: every s scores 0, the first is guessed
        with np.errstate(invalid="ignore"):
            weights = np.exp(joint - top).reshape(-1, *self.shape)  # the largest term is 1: no underflow of the max
        return weights.sum(axis=2).argmax(axis=1)


def over_sensitive_and_released(q: np.ndarray, shape: tuple[int, ...], latent: bool) -> np.ndarray:
    """Q as a function of x = (s, u), columns s·|U| + u: Q itself, or with a latent S (the mechanism
    reads U only) Q(y | s, u) = Q(y | u) for every s. The attack's Bayes rule then weighs each u by
    P̂(s, u), i.e. the posterior P̂(s | y_1..y_T) through the mechanism over U [LTS20, Sec II]."""
    q = np.asarray(q, dtype=float)
    return np.tile(q, (1, int(shape[0]))) if latent else q


def one_report_bayes_accuracy(q: np.ndarray, joint: np.ndarray) -> float:
    """Σ_y max_s Σ_u Q(y | s, u) P(s, u): the best any rule does from one report when records follow P.

    (P(s, y) = Σ_u Q(y|s,u) P(s,u); guessing the s that maximises it for each y is optimal.)
    """
    shape = np.shape(joint)
    scores = (np.asarray(q, dtype=float).reshape(-1, *shape) * np.asarray(joint, dtype=float)[None]).sum(axis=2)
    return float(scores.max(axis=1).sum())


def map_rule_accuracy(q: np.ndarray, prior: np.ndarray, joint: np.ndarray) -> float:
    """The accuracy, when records follow ``joint``, of guessing from one report the s that
    maximises Σ_u Q(y | s, u) P̂(s, u) (the attacker's rule at T = 1, with the public prior):
    its expected accuracy on users whose empirical distribution is ``joint``."""
    shape = np.shape(prior)
    q3 = np.asarray(q, dtype=float).reshape(-1, *shape)
    guess = (q3 * np.asarray(prior, dtype=float)[None]).sum(axis=2).argmax(axis=1)  # ŝ(y)
    scores = (q3 * np.asarray(joint, dtype=float)[None]).sum(axis=2)  # P(s, y)
    return float(scores[np.arange(scores.shape[0]), guess].sum())


def attack_users(names: Sequence[str], users: int = ATTACK_USERS, seed: int = ATTACK_SEED) -> Table:
    """``users`` rows of the Adult test split (the demo's user population), chosen with ``seed``."""
    population = load_adult("test")
    picked = np.random.default_rng(seed).choice(population.n_rows, size=users, replace=users > population.n_rows)
    return Table.from_columns({name: np.asarray(population.column(name))[picked] for name in names})


@dataclass(frozen=True)
class AttackResult:
    """Accuracy of the attack after T = 1..windows reports, and the one-report references."""

    users: int
    windows: int
    seed: int
    fresh: list[float]  # accuracy after T windows without memoisation (index T − 1)
    memoised: list[float]  # the same with the SDK's memoisation
    one_report_bayes: float  # Σ_y max_s Σ_u Q(y|s,u) P(s,u), P = these users' distribution
    one_report_rule: float  # the attacker's one-report rule (prior P̂), expected on these users
    no_report: float  # max_s P(s): guessing the most common S without any report
    seconds: float

    def as_dict(self) -> dict[str, object]:
        return {
            "users": self.users,
            "windows": self.windows,
            "seed": self.seed,
            "memo_prior": MEMO_PRIOR,
            "fresh": self.fresh,
            "memoised": self.memoised,
            "one_report_bayes": self.one_report_bayes,
            "one_report_rule": self.one_report_rule,
            "no_report": self.no_report,
            "seconds": self.seconds,
        }


class _Days:
    """A clock for the client that the simulation moves forward one window at a time."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def run_averaging_attack(
    url: str,
    mechanism_id: str,
    users: Table,
    names: Sequence[str],
    *,
    windows: int = ATTACK_WINDOWS,
    seed: int = ATTACK_SEED,
    progress: bool = False,
) -> AttackResult:
    """Report each user's record every window, with and without memoisation, and attack both.

    The mechanism comes from the aggregator at ``url`` through the SDK (downloaded, id and
    audit checked). Without memoisation each window is ``Mechanism.privatize`` (fresh
    draws); with it, ``Client(url, state_path=...).privatize(id, records, owners=user ids)``
    on a state file in a temporary folder. Nothing is sent: the attacker sees the outputs.
    """
    if windows < 1:
        raise ValueError(f"windows must be ≥ 1; got {windows!r}")
    started = time.perf_counter()
    records = {name: np.asarray(users.column(name)) for name in names}
    n = users.n_rows
    owners = np.arange(n)  # user ids (the SDK stores their decimal text)
    fresh_rng, memo_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    clock = _Days(start=0.0)
    with tempfile.TemporaryDirectory(prefix="rldp-attack-") as folder:
        client = Client(url, state_path=Path(folder) / "state.sqlite3", rng=memo_rng, clock=clock)
        try:
            mech = client.mechanism(mechanism_id)  # downloaded and verified by the SDK
            prior = np.asarray(mech.document["public_distribution"], dtype=float)
            q = over_sensitive_and_released(mech.matrix, prior.shape, mech.alphabet.latent)
            x = mech.alphabet.encode_joint(records)  # s·|U| + u, S read from the records even when latent
            s_true = x // prior.shape[1]
            truth = np.bincount(x, minlength=prior.size).reshape(prior.shape) / n
            attackers = {kind: AveragingAttacker(q, prior, n) for kind in ("fresh", "memoised")}
            curves: dict[str, list[float]] = {kind: [] for kind in attackers}
            with progress_bar(progress, windows, "averaging attack", unit="windows") as shown:
                for _ in range(windows):
                    attackers["fresh"].observe(mech.privatize(records, rng=fresh_rng))
                    attackers["memoised"].observe(client.privatize(mechanism_id, records, owners=owners))
                    for kind, attacker in attackers.items():
                        curves[kind].append(float(np.mean(attacker.guess() == s_true)))
                    clock.now += DAY
                    shown.update()
        finally:
            client.close()
    return AttackResult(
        users=n,
        windows=windows,
        seed=seed,
        fresh=curves["fresh"],
        memoised=curves["memoised"],
        one_report_bayes=one_report_bayes_accuracy(q, truth),
        one_report_rule=map_rule_accuracy(q, prior, truth),
        no_report=float(truth.sum(axis=1).max()),
        seconds=time.perf_counter() - started,
    )


@dataclass(frozen=True)
class RotationResult:
    """The attack across daily rotations: accuracy after each day, and the days the apps reported."""

    users: int
    days: int
    reported: int  # days on which the apps reported (the others were refused by the budget)
    draws: int  # of those, the days whose reports were new draws (the others re-sent a memoised draw)
    accuracy: list[float]  # after day t (index t − 1), over every report seen so far
    one_report_bayes: float
    one_report_rule: float


def _one_design(mechs: Sequence[Mechanism]) -> tuple[Mechanism, np.ndarray]:
    """The first mechanism and its P̂, once every other one is checked to be it re-published (the same Q and P̂)."""
    mech = mechs[0]
    prior = np.asarray(mech.document["public_distribution"], dtype=float)
    for other in mechs[1:]:
        same_prior = np.array_equal(np.asarray(other.document["public_distribution"], dtype=float), prior)
        if not (np.array_equal(other.matrix, mech.matrix) and same_prior):
            raise ValueError(f"mechanism {other.id} is not {mech.id} re-published (another Q or P̂)")
    return mech, prior


def run_rotation_attack(
    url: str,
    mechanism_ids: Sequence[str],
    users: Table,
    names: Sequence[str],
    *,
    privacy_budget: PrivacyBudget | None = DEFAULT_BUDGET,
    seed: int = ATTACK_SEED,
) -> RotationResult:
    """Day t, the collection's mechanism is ``mechanism_ids[t]``; every user's app reports its record
    under it through ``Client(url, state_path=..., privacy_budget=...)`` (memoised, budgeted), and the
    attacker links each user's reports across days.

    The mechanisms must share one matrix and public distribution (the same design re-published, as an
    operator rotating without cause would): the attacker knows Q. Documents of one randomiser re-send the
    first day's draw; a document of another randomiser (the same Q under another key: a stand-in for a
    redesign) is a fresh draw. A day whose draws the budget refuses
    (:class:`~rldp.client.PrivacyBudgetExceeded`: nothing is drawn or sent) adds no report; every user
    has one record and the same spending, so a day is refused for all or for none. ``draws`` counts the days
    whose reports differ from every earlier day's (new draws of every user's record).
    """
    if not mechanism_ids:
        raise ValueError("mechanism_ids must name at least one mechanism (one per day)")
    records = {name: np.asarray(users.column(name)) for name in names}
    n = users.n_rows
    clock = _Days(start=0.0)
    with tempfile.TemporaryDirectory(prefix="rldp-rotations-") as folder:
        client = Client(
            url,
            state_path=Path(folder) / "state.sqlite3",
            privacy_budget=privacy_budget,
            rng=np.random.default_rng(seed),
            clock=clock,
        )
        try:
            mechs = [client.mechanism(mid) for mid in mechanism_ids]
            mech, prior = _one_design(mechs)
            x = mech.alphabet.encode(records)
            s_true = x // prior.shape[1]
            attacker = AveragingAttacker(mech.matrix, prior, n)
            accuracy: list[float] = []
            seen: set[bytes] = set()
            for day in mechs:
                try:
                    ys = client.privatize(day.id, records, owners=np.arange(n))
                    attacker.observe(ys)
                    seen.add(ys.tobytes())
                except PrivacyBudgetExceeded:
                    pass  # refused before anything was drawn: the aggregator gets nothing today
                accuracy.append(float(np.mean(attacker.guess() == s_true)) if attacker.windows else float("nan"))
                clock.now += DAY
        finally:
            client.close()
    truth = np.bincount(x, minlength=mech.size).reshape(prior.shape) / n
    return RotationResult(
        users=n,
        days=len(mechs),
        reported=attacker.windows,
        draws=len(seen),
        accuracy=accuracy,
        one_report_bayes=one_report_bayes_accuracy(mech.matrix, truth),
        one_report_rule=map_rule_accuracy(mech.matrix, prior, truth),
    )
