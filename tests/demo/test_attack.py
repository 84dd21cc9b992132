"""The averaging attack of `rldp demo` (rldp.demo.run.attack): memoisation holds an aggregator that
links a user's reports to what one report tells; fresh draws let it read S.

Fixed seeds throughout; every tolerance is a number of standard errors of a mean over the
users (a mean of n independent Bernoulli variables has sd ≤ 1/(2√n)).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest

from rldp.aggregator.design import design, grr_matrix

pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")
from rldp.demo import cli as demo_cli
from rldp.demo.datasets import load_adult
from rldp.demo.run import DemoConfig
from rldp.demo.run.attack import (
    ATTACK_WINDOWS,
    AveragingAttacker,
    attack_users,
    map_rule_accuracy,
    one_report_bayes_accuracy,
    run_averaging_attack,
)
from rldp.demo.run.server import aggregator, publish
from rldp.shared.records import Alphabet

Z = 4.0  # standard errors allowed: a false alarm has probability < 1e-4 per check
NAMES = ("sex", "race")


def _sd_bound(n: int) -> float:
    return 1 / (2 * math.sqrt(n))


def _sample(q: np.ndarray, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One y ~ Q(·|x) per entry of x (inversion), for tests that need no SDK."""
    cdf = np.cumsum(q[:, x], axis=0)
    return (rng.random(x.size)[None, :] > cdf).sum(axis=0).clip(max=q.shape[0] - 1)


def test_one_report_formulas():
    rng = np.random.default_rng(11)
    q = rng.dirichlet(np.ones(7), size=6).T  # |Y| = 7, |X| = 6 = 2 × 3, columns sum to 1
    joint = rng.dirichlet(np.ones(6)).reshape(2, 3)
    prior = rng.dirichlet(np.ones(6)).reshape(2, 3)
    bayes = one_report_bayes_accuracy(q, joint)
    # Brute force: the best of all |S|^|Y| maps y -> s.
    scores = (q.reshape(7, 2, 3) * joint[None]).sum(axis=2)
    best = max(sum(scores[y, (m >> y) & 1] for y in range(7)) for m in range(2**7))
    assert bayes == pytest.approx(best, abs=1e-12)
    assert map_rule_accuracy(q, joint, joint) == pytest.approx(bayes, abs=1e-12)  # the true prior: optimal
    assert map_rule_accuracy(q, prior, joint) <= bayes + 1e-12  # any other prior: no better


def test_the_attacker_is_the_map_rule_and_averages_fresh_draws():
    rng = np.random.default_rng(12)
    q = grr_matrix(6, 1.0)
    joint = np.array([[0.1, 0.2, 0.05], [0.3, 0.15, 0.2]])
    n = 20_000
    x = rng.choice(6, size=n, p=joint.ravel())
    s = x // 3
    fresh, memo = AveragingAttacker(q, joint, n), AveragingAttacker(q, joint, n)
    first = _sample(q, x, rng)
    accuracy = {"fresh": [], "memo": []}
    for _ in range(ATTACK_WINDOWS):
        fresh.observe(_sample(q, x, rng))
        memo.observe(first)
        accuracy["fresh"].append(np.mean(fresh.guess() == s))
        accuracy["memo"].append(np.mean(memo.guess() == s))
    bayes = one_report_bayes_accuracy(q, joint)  # the prior is the truth: the attacker is optimal
    assert abs(accuracy["fresh"][0] - bayes) <= Z * _sd_bound(n)
    assert abs(accuracy["memo"][-1] - bayes) <= Z * _sd_bound(n)
    assert accuracy["fresh"][-1] > bayes + 0.15  # GRR's columns all differ: averaging reads S
    assert np.all(np.diff(accuracy["fresh"][::5]) > -Z * _sd_bound(n))  # more reports never hurt (much)
    with pytest.raises(ValueError, match="observe"):
        AveragingAttacker(q, joint, 3).guess()


@pytest.fixture(scope="module")
def published():
    """The demo's mechanism (PolyOpt, S = sex, U = race, ε = 1) on the demo's aggregator."""
    public = load_adult("data")
    alphabet = Alphabet.from_table(public, "sex", ["race"])
    p_hat = alphabet.empirical_distribution(public)
    doc = design("polyopt", alphabet=alphabet, public_distribution=p_hat, epsilon=1.0, n=public.n_rows, beta=0.05)
    with aggregator(DemoConfig(progress=False)) as (url, token):
        publish(url, token, doc)
        yield url, doc, alphabet


@pytest.mark.slow
def test_memoisation_holds_the_attack_to_one_report(published):
    url, doc, alphabet = published
    n = 3_000
    users = attack_users(NAMES, n, seed=5)
    result = run_averaging_attack(url, doc["id"], users, NAMES, seed=6)
    assert result.users == n and len(result.fresh) == len(result.memoised) == ATTACK_WINDOWS
    q = np.asarray(doc["matrix"])
    prior = np.asarray(doc["public_distribution"])
    x = alphabet.encode({name: np.asarray(users.column(name)) for name in NAMES})
    s = x // alphabet.shape[1]
    # The attacker's guess after 30 identical reports y, for every y; each user's memoised
    # accuracy is then a Bernoulli with mean p_i = Σ_y Q(y|x_i)·1[ŝ(y) = s_i].
    replay = AveragingAttacker(q, prior, q.shape[0])
    for _ in range(ATTACK_WINDOWS):
        replay.observe(np.arange(q.shape[0]))
    hits = (replay.guess()[:, None] == s[None, :]).astype(float)  # |Y| × n
    p = (q[:, x] * hits).sum(axis=0)
    expected, sd = float(p.mean()), float(math.sqrt(np.sum(p * (1 - p))) / n)
    assert abs(result.memoised[-1] - expected) <= Z * sd, (result.memoised[-1], expected, sd)
    # ...which is the one-report level: within Z standard errors of the attacker's one-report
    # rule, and never above the Bayes optimum from one report.
    assert abs(result.memoised[-1] - result.one_report_rule) <= Z * _sd_bound(n)
    assert result.memoised[-1] <= result.one_report_bayes + Z * _sd_bound(n)
    assert abs(result.fresh[0] - result.one_report_rule) <= Z * _sd_bound(n)  # one fresh draw: the same level
    # Without memoisation the aggregator reads S for almost every user.
    assert result.fresh[-1] >= 0.9
    assert result.fresh[-1] - result.memoised[-1] >= 0.15
    # The same seeds, the same figures.
    again = run_averaging_attack(url, doc["id"], users, NAMES, seed=6)
    assert again.fresh == result.fresh and again.memoised == result.memoised


@pytest.mark.slow
def test_the_attack_runs_on_a_latent_sensitive_attribute():
    """With a latent S (the mechanism reads U only) the attacker's posterior on S goes through Q over U:
    it reads u from fresh draws and then S as well as u tells it (Σ_u max_s P(s, u)); memoised draws
    hold it at the one-report level. Issue 37: this step crashed ("cannot reshape array of size 6
    into shape (2,6)") for every `rldp demo --latent`."""
    public = load_adult("data")
    alphabet = Alphabet.from_table(public, "sex", ["race"], latent=True)
    p_hat = alphabet.empirical_distribution(public)
    doc = design("grr", alphabet=alphabet, public_distribution=p_hat, epsilon=1.0, n=public.n_rows, beta=0.05)
    with aggregator(DemoConfig(progress=False)) as (url, token):
        publish(url, token, doc)
        n = 2_000
        users = attack_users(NAMES, n, seed=5)
        result = run_averaging_attack(url, doc["id"], users, NAMES, windows=10, seed=6)
    assert len(result.fresh) == len(result.memoised) == 10
    x = alphabet.encode_joint({name: np.asarray(users.column(name)) for name in NAMES})
    truth = np.bincount(x, minlength=p_hat.size).reshape(p_hat.shape) / n
    knows_u = float(truth.max(axis=0).sum())  # the best guess of S from U itself
    assert result.fresh[-1] <= knows_u + Z * _sd_bound(n)
    assert result.memoised[-1] <= result.one_report_bayes + Z * _sd_bound(n)
    assert abs(result.memoised[-1] - result.one_report_rule) <= Z * _sd_bound(n)
    assert result.no_report == pytest.approx(float(truth.sum(axis=1).max()))


def test_no_attack_option(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(demo_cli, "run_demo", seen.append)
    for extra, attack in (([], True), (["--no-attack"], False)):
        parser = argparse.ArgumentParser()
        demo_cli.add_parser(parser.add_subparsers())
        args = parser.parse_args(["demo", "--out", str(tmp_path), *extra])
        assert args.func(args) == 0
        assert seen[-1].attack is attack
