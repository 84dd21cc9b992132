"""Designers for the privacy-funnel and lift notions: ε-LDP w.r.t. S [LTS20, Def 1], ε-LIP [LTS20, Def 2]
and (ε_l, ε_u)-ALIP [ZDS23, Def 3], with S latent or an input, at P̂ or over an uncertainty set F.

* :mod:`.claim` — the joint P(s, x) of S and the input, lifts, and :class:`~.claim.Claim` (pass/fail by
  the notion's exact audit, per-output excess);
* :mod:`.lip` — optimal LIP / AORR by vertex enumeration + one LP [LTS20, Thm 3; ZDS23, eq 12];
* :mod:`.lip_cg` (pieces in :mod:`.lip_polytope`) — the same LP by column generation beyond 24 symbols;
* :mod:`.ldp` — optimal LDP w.r.t. a latent S: PolyOpt's cone on rows over U (:mod:`.latent_cone`)
  [LTS20, Thm 2], by enumeration or column generation (:mod:`.latent_cg`);
* :mod:`.families` — GRR, OUE, CR calibrated on the exact audit [LTS20, eqs 28-33, Alg 1];
* :mod:`.watchdog` — complete merging, subset merging, subset random response [ZDS23, eqs 6-8, Algs 1-2];
* :mod:`.designers` — the registered designers (``optimal``, ``grr``, ``oue``, ``cr``, ``watchdog``,
  ``watchdog-paper``, ``subset-merging``, ``subset-rr``).
"""

from __future__ import annotations

from .claim import FUNNEL_NOTIONS, Claim, input_joint, lift_table
from .designers import FUNNEL_DESIGNERS, claim_for
from .families import calibrate, cr_alpha, grr_alpha, oue_alpha
from .latent_cone import LatentGammaCone
from .ldp import latent_polyopt
from .lip import LipResult, lip_vertices, optimal_lip
from .watchdog import high_risk, partition_matrix, subset_merging, subset_rr, watchdog

__all__ = [
    "FUNNEL_NOTIONS",
    "FUNNEL_DESIGNERS",
    "Claim",
    "claim_for",
    "input_joint",
    "lift_table",
    "calibrate",
    "grr_alpha",
    "oue_alpha",
    "cr_alpha",
    "LatentGammaCone",
    "latent_polyopt",
    "LipResult",
    "lip_vertices",
    "optimal_lip",
    "high_risk",
    "partition_matrix",
    "watchdog",
    "subset_merging",
    "subset_rr",
]
