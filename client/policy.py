"""What an app accepts from a mechanism document: pinned ids, an ε ceiling, confidence-set floors.

The audit a client re-runs is relative to the document's own P̂, n and radius: an aggregator
that lies about its public data (inflates n, hence shrinks the radius, or shifts P̂) can
publish a document that passes verification while its guarantee does not hold for the real
population. :class:`VerificationPolicy` closes that loop in one place:

* ``pinned`` — the content ids the app accepts. The app developer audits a mechanism against
  the public data once (``rldp audit --public-data``) and ships its id; since the id is the
  SHA-256 of the document's content, a server cannot substitute another document under it.
* ``max_epsilon`` — refuse a document that claims a larger ε.
* ``min_radius`` — refuse a confidence set smaller than the app accepts: radius B < min_radius
  (in the document's own divergence, Rényi of its order α).
* ``max_beta`` — refuse a confidence set at a significance level above it (default 0.05, as the
  service's MAX_BETA): β → 1 shrinks F to a point whatever n is, so β is part of the trust check.
* ``max_public_n`` — the most public samples the app believes exist. Refused: a document that
  states n > max_public_n, and one whose radius is below the (1 − β)-confidence radius of
  max_public_n samples [LZG24, eq 9] at β = ``beta`` (0.05, rldp design's default) — the
  tightest set that much public data can support, whether or not the document states n.

The floors bound how far a lying aggregator can shrink F without pinning; a shifted P̂ with an
honest-looking radius is caught only by pinning. A pilot's F is also narrowed by its confidence box
(``privacy.uncertainty.box``), which no radius floor bounds: with a floor set and no pin, such a document is
refused (pin it after ``rldp audit --pilot``). Documents of notion ``ldp`` have no
uncertainty set (their guarantee holds for every distribution) and pass both floors, as does
an unbounded radius (``null``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rldp.shared.divergence import confidence_radius
from rldp.shared.parameters import DEFAULT_MAX_BETA, check_beta, check_count, check_epsilon, check_number
from rldp.shared.provenance import stated_beta
from rldp.shared.tolerances import RADIUS_RTOL

from .errors import MechanismRejected

__all__ = ["VerificationPolicy", "DEFAULT_POLICY_BETA"]

#: The significance level at which ``max_public_n`` is turned into a radius floor.
DEFAULT_POLICY_BETA = 0.05
_ID = re.compile(r"[0-9a-f]{64}")


@functools.lru_cache(maxsize=256)
def _radius_floor(n: int, beta: float, n_symbols: int, order: float) -> float:
    # chi2_quantile iterates; a client re-checks the same few documents (cached).
    return confidence_radius(n, beta, n_symbols, order)


def _pinned_ids(ids: Iterable[str] | None) -> frozenset[str] | None:
    if ids is None:
        return None
    if isinstance(ids, str):
        raise ValueError("pinned must be a collection of mechanism ids (e.g. a list), not one string")
    out = frozenset(ids)
    bad = sorted(repr(i) for i in out if not isinstance(i, str) or not _ID.fullmatch(i))
    if bad:
        raise ValueError(
            f"pinned mechanism ids must be 64 lowercase hex characters (a content id); got {', '.join(bad)}"
        )
    if not out:
        raise ValueError("pinned is empty: it would refuse every mechanism; give at least one id or None")
    return out


@dataclass(frozen=True, init=False)
class VerificationPolicy:
    """The app's acceptance rules (see the module docstring); every rule is optional.

    ``pinned``: any collection of content ids (kept as a frozenset); ``max_epsilon`` and
    ``min_radius`` in nats; ``max_public_n`` a count of public samples; ``beta`` the
    significance level at which ``max_public_n`` becomes a radius floor.
    """

    max_epsilon: float | None
    pinned: frozenset[str] | None
    min_radius: float | None
    max_public_n: int | None
    beta: float
    max_beta: float | None

    def __init__(
        self,
        max_epsilon: float | None = None,
        pinned: Iterable[str] | None = None,
        min_radius: float | None = None,
        max_public_n: int | None = None,
        beta: float = DEFAULT_POLICY_BETA,
        max_beta: float | None = DEFAULT_MAX_BETA,
    ) -> None:
        if max_epsilon is not None:
            max_epsilon = check_epsilon(max_epsilon, "max_epsilon")
        if min_radius is not None:
            min_radius = check_number(
                min_radius,
                "min_radius",
                accept=lambda v: math.isfinite(v) and v >= 0,
                expected="a finite number ≥ 0 (nats)",
            )
        if max_public_n is not None:
            max_public_n = check_count(max_public_n, "max_public_n (public samples)")
        object.__setattr__(self, "max_epsilon", max_epsilon)
        object.__setattr__(self, "pinned", _pinned_ids(pinned))
        object.__setattr__(self, "min_radius", min_radius)
        object.__setattr__(self, "max_public_n", max_public_n)
        object.__setattr__(self, "beta", check_beta(beta))
        object.__setattr__(self, "max_beta", None if max_beta is None else check_beta(max_beta, "max_beta"))

    def with_max_epsilon(self, max_epsilon: float | None) -> VerificationPolicy:
        """This policy with the tighter of its ε ceiling and ``max_epsilon``."""
        if max_epsilon is None:
            return self
        tighter = max_epsilon if self.max_epsilon is None else min(self.max_epsilon, max_epsilon)
        return VerificationPolicy(tighter, self.pinned, self.min_radius, self.max_public_n, self.beta, self.max_beta)

    def check_id(self, mechanism_id: str) -> None:
        """Refuse an id outside the pinned set (before anything is downloaded)."""
        if self.pinned is not None and mechanism_id not in self.pinned:
            raise MechanismRejected(
                mechanism_id, f"is not pinned; this client accepts only {', '.join(sorted(self.pinned))}"
            )

    def check(self, document: Mapping[str, Any], label: str | None = None) -> None:
        """Apply every rule to a validated document; MechanismRejected naming the rule otherwise."""
        label = label or str(document.get("id"))
        self.check_id(str(document.get("id")))
        privacy = document["privacy"]
        eps = float(privacy["epsilon"])
        if self.max_epsilon is not None and eps > self.max_epsilon:
            raise MechanismRejected(label, f"claims epsilon {eps:g}, above the allowed maximum {self.max_epsilon:g}")
        unc = privacy.get("uncertainty")
        beta = stated_beta(document)  # the uncertainty set's, or a pilot's (its radius came from that level)
        if self.max_beta is not None and beta is not None and beta > self.max_beta:
            raise MechanismRejected(
                label,
                f"its confidence set is at significance level beta = {beta:g}, above max_beta = "
                f"{self.max_beta:g} this app accepts (a larger beta is a smaller set)",
            )
        floors = self.min_radius is not None or self.max_public_n is not None
        if floors and self.pinned is None and isinstance(unc, Mapping) and unc.get("box") is not None:
            raise MechanismRejected(
                label,
                "its confidence set is narrowed by a pilot's box (privacy.uncertainty.box), which min_radius and "
                "max_public_n cannot bound; audit it (rldp audit --pilot) and pin its id to accept its box (the radius "
                "floors still apply)",
            )
        if not isinstance(unc, Mapping) or unc.get("radius") is None:
            return  # no uncertainty set (notion ldp) or an unbounded one: nothing to shrink
        radius, order = float(unc["radius"]), float(unc.get("order", 2.0))
        if self.min_radius is not None and radius < self.min_radius:
            raise MechanismRejected(
                label,
                f"its confidence set is smaller than this app accepts: radius {radius:.6g} is below "
                f"min_radius {self.min_radius:.6g}",
            )
        if self.max_public_n is None:
            return
        n = unc.get("n")
        if n is not None and int(n) > self.max_public_n:
            raise MechanismRejected(
                label,
                f"states n = {int(n)} public samples, more than max_public_n = {self.max_public_n} this app "
                "accepts (a larger n shrinks the confidence set)",
            )
        n_symbols = sum(len(row) for row in document["public_distribution"])
        floor = _radius_floor(self.max_public_n, float(self.beta), n_symbols, order)
        if radius < floor * (1 - RADIUS_RTOL):
            raise MechanismRejected(
                label,
                f"its confidence set is smaller than this app accepts: radius {radius:.6g} is below "
                f"{floor:.6g}, the {1 - self.beta:g}-confidence radius of max_public_n = {self.max_public_n} "
                "public samples",
            )
