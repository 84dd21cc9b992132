"""What ``rldp demo`` runs: its configuration and the methods it considers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rldp.shared.errors import ValidationError
from rldp.shared.parameters import check_epsilon

__all__ = [
    "ATTACK_USERS",
    "CERTIFIED",
    "CURVE_EPSILONS",
    "DEFAULT_SEED",
    "DEMO_NOTIONS",
    "QUICK_CURVE_EPSILONS",
    "DemoConfig",
]

# Methods whose document certifies (ε, F)-RLDP; NR only protects P̂ itself.
CERTIFIED = ("polyopt", "polyopt-paper", "ir-calibrated", "cr-calibrated", "ir", "cr", "srr", "grr")
# Notions the demo can run: RLDP, and ε-LDP w.r.t. S / ε-LIP [LTS20, Defs 1-2] (one ε each).
DEMO_NOTIONS = ("rldp", "ldp", "lip")
# The ε grid of the privacy–utility plot (nats).
CURVE_EPSILONS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)
QUICK_CURVE_EPSILONS = (0.5, 1.0, 2.0)
MAX_WORKERS = 64
# The demo's seed unless --seed: its figures (all but timings) are the same on every run, as the README prints them.
DEFAULT_SEED = 0
DESIGN_TIME_BUDGET = 60.0  # = rldp.aggregator.design's DEFAULT_TIME_BUDGET (this module imports rldp.shared only)
# Users the averaging attack follows (rldp.demo.run.attack): a few seconds on two cores.
ATTACK_USERS = 5_000


@dataclass
class DemoConfig:
    """One demo run; the fields are the options of ``rldp demo``."""

    sensitive: str = "sex"
    released: tuple[str, ...] = ("race",)
    epsilon: float = 1.0
    notion: str = "rldp"  # the claim the published document makes
    latent: bool = False  # S is not an input of the mechanism (the privacy funnel)
    method: str = "auto"  # "auto": the best identifiable certified method
    users: int = 100_000
    workers: int = 2
    server: str | None = None
    admin_token: str | None = None
    batch_size: int = 10_000
    beta: float = 0.05
    out: Path = Path("demo-output")
    seed: int = DEFAULT_SEED  # users, their draws, the GRR comparison: the same figures on every run
    quick: bool = False
    progress: bool = True
    curves: bool = True
    attack: bool = True  # the averaging attack (:mod:`.attack`); ``--no-attack`` skips it
    pilot: bool = True  # the no-public-data path (:mod:`.no_public_data`); ``--no-pilot`` skips it
    attack_users: int = ATTACK_USERS
    time_budget: float = DESIGN_TIME_BUDGET  # seconds per design by column generation (the product's default)

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon, "--epsilon")
        if int(self.users) != self.users or self.users < 1:
            raise ValidationError(f"--users must be a positive integer; got {self.users!r}")
        if int(self.workers) != self.workers or not 1 <= self.workers <= MAX_WORKERS:
            raise ValidationError(f"--workers must be an integer in [1, {MAX_WORKERS}]; got {self.workers!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValidationError(f"--seed must be an integer ≥ 0; got {self.seed!r}")
        if int(self.attack_users) != self.attack_users or self.attack_users < 1:
            raise ValidationError(f"attack_users must be a positive integer; got {self.attack_users!r}")
        if not (
            isinstance(self.time_budget, (int, float)) and math.isfinite(self.time_budget) and self.time_budget > 0
        ):
            raise ValidationError(f"--time-budget must be a number of seconds > 0; got {self.time_budget!r}")
        if self.notion not in DEMO_NOTIONS:
            raise ValidationError(f"--notion must be one of {', '.join(DEMO_NOTIONS)}; got {self.notion!r}")
        if not 0 < self.beta < 1:
            raise ValidationError(f"beta must be in (0, 1); got {self.beta!r}")  # DemoConfig(beta=…): no flag
        if self.server is not None and not self.server.startswith(("http://", "https://")):
            raise ValidationError(f"--server must be an http(s) URL; got {self.server!r}")
        self.out = Path(self.out)
