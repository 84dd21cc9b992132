"""The demo's traffic figure with and without the apps' state files (issue 35, "What to build" 4: the demo's
traffic figure back within 2× of the stateless one).

The demo's own path (``rldp.demo.run.users.simulate_users``): a fresh local aggregator started as ``rldp demo``
starts it (SQLite, its writer process), a windowed GRR mechanism on sex × race, N one-record users split over
the demo's worker processes, each submitting calls of 10,000 records over HTTP. Stateful: every worker's apps
keep a state file, as ``Client(url)`` does by default (memo, window ledger, privacy budget, outbox), each record
its own owner. Stateless, the baseline: ``Client(url, state_path=None)``, each record privatised afresh.
The two alternate, best of 3 each (other processes' load affects both alike), on one server.

Lines (``name value unit``):
  demo_traffic_stateful_rate    reports/s, apps with state files (the demo's figure)
  demo_traffic_stateless_rate   reports/s, apps without state
  demo_traffic_ratio            stateless rate / stateful rate (the issue asks ≤ 2)

Run: python bench/bench_demo_traffic.py [--quick] [--users=N]
"""

from __future__ import annotations

import sys

import numpy as np

from rldp.aggregator.design import design
from rldp.demo.run.config import DemoConfig
from rldp.demo.run.server import aggregator, publish
from rldp.demo.run.users import simulate_users
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.tables import Table

SEX = ("Female", "Male")
RACE = ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White")


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    users = int(next((a.split("=", 1)[1] for a in argv if a.startswith("--users=")), 0)) or (
        50_000 if quick else 100_000  # the demo's default: 100,000 users
    )
    cfg = DemoConfig(users=users, progress=False)
    alphabet = Alphabet(Attribute("sex", SEX), [Attribute("race", RACE)])
    rng = np.random.default_rng(1)
    table = Table.from_columns({"sex": rng.choice(SEX, users), "race": rng.choice(RACE, users)})
    doc = design(
        "grr",
        alphabet=alphabet,
        public_distribution=np.full(alphabet.shape, 1 / alphabet.size),
        epsilon=1.0,
        radius=float("inf"),
        window="P1D",
    )
    best = {"stateful": 0.0, "stateless": 0.0}
    with aggregator(cfg) as (url, token):
        publish(url, token, doc)
        for round_ in range(3):
            for kind in ("stateful", "stateless"):
                run = simulate_users(
                    cfg, url, doc["id"], table, ("sex", "race"), stream=round_, stateless=kind == "stateless"
                )
                if run["accepted"] != users:
                    print(f"# {kind}: {run['accepted']:,} of {users:,} reports accepted", file=sys.stderr)
                    return 1
                best[kind] = max(best[kind], run["reports_per_second"])
    print(f"demo_traffic_stateful_rate {best['stateful']:.0f} reports/s")
    print(f"demo_traffic_stateless_rate {best['stateless']:.0f} reports/s")
    print(f"demo_traffic_ratio {best['stateless'] / best['stateful']:.2f} stateless/stateful (target <= 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
