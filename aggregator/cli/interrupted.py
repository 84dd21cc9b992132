"""``rldp design`` stopped by Ctrl-C before any certified design of the requested method existed.

Interrupted during the search itself, the column-generation solvers keep their last solved
master (certified like any design, see :mod:`rldp.aggregator.design.solvers.cg.solve`). Before that —
while seeding, proving the NR bound, enumerating vertices with cddlib, or auditing — there is
nothing of the requested method to keep. GRR at the same claim ([LZG24, eq. 56]) is a cheap
baseline the exact audit always certifies: ε-LDP on X bounds Q(y|x)/Q(y|x') by e^ε, so the
ratio of any two mixtures P(y|s₁), P(y|s₂) is within e^ε too, under every P — (ε, F)-RLDP for
every F (the funnel notions calibrate it on their own audit, [LTS20, eqs 28-29]). So it is
designed and audited instead, and the user is told; if even that cannot be made (a
second Ctrl-C, or a notion or alphabet GRR does not cover), nothing is written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rldp.shared.errors import RldpError
from rldp.shared.interrupts import take_ctrl_c
from rldp.shared.records import Alphabet

from ..design import DesignRequest, design_document, methods_for

__all__ = ["BASELINE_METHOD", "baseline_design", "take_ctrl_c"]

#: The method of the fallback: always certified, designed in a fraction of a second.
BASELINE_METHOD = "grr"


def baseline_design(
    request: DesignRequest, alphabet: Alphabet, public_distribution: Any, provenance: Any
) -> dict | None:
    """The audited GRR document for the same data and claim as ``request``, or None when there is none
    to offer: the requested method was GRR itself, GRR does not design for its notion, its design
    fails, or Ctrl-C stops it too."""
    if request.method == BASELINE_METHOD or BASELINE_METHOD not in methods_for(request.notion):
        return None
    baseline = replace(request, method=BASELINE_METHOD, progress=None, warm_start=None, target=None, cost=None)
    try:
        return design_document(
            baseline, alphabet=alphabet, public_distribution=public_distribution, provenance=provenance
        )
    except (KeyboardInterrupt, RldpError):
        return None
