"""The numerical tolerances of rldp, each defined once.

Why one module: a tolerance written as a literal in two places drifts apart (the
stochastic check once read 1e-9 in one module and 1e-6 in another), and then a document
one part accepts is refused by another.
"""

from __future__ import annotations

__all__ = ["STOCHASTIC_TOLERANCE", "STOCHASTIC_TOLERANCE_TEXT", "AUDIT_TOLERANCE", "DESIGN_MARGIN", "RADIUS_RTOL"]

#: A probability vector (a column of Q, P̂, an estimate) must sum to 1 within this, and
#: no entry may be below ``-STOCHASTIC_TOLERANCE``.
STOCHASTIC_TOLERANCE = 1e-9
#: How messages quote it ("sums to 1 (±1e-9)").
STOCHASTIC_TOLERANCE_TEXT = "±1e-9"

#: A mechanism passes its audit when audited ε ≤ claimed ε + AUDIT_TOLERANCE (nats): the
#: exact audit's own floating-point accuracy (its searches are accurate to ~1e-12 and round
#: towards leakage).
AUDIT_TOLERANCE = 1e-9

#: Designers aim at ε·(1 − DESIGN_MARGIN) so that round-off in the design never makes the
#: audit (at ε + AUDIT_TOLERANCE) fail; relative, so it costs nothing measurable in utility.
DESIGN_MARGIN = 1e-7

#: A stated radius may fall short of the confidence radius its n and β imply by this relative
#: amount (both come from the same formula: round-off only, never a smaller set).
RADIUS_RTOL = 1e-9
