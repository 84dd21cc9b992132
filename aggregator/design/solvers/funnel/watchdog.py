"""The watchdog family [ZDS23]: complete merging (eqs 6-8), subset merging (Alg 1), subset random response (Alg 2).

The watchdog splits X into low-risk symbols X_L, released as themselves, and high-risk ones X_H
[ZDS23, eq 6 (ALIP/LIP): e^{−ε_l} ≤ Ψ(x) and Λ(x) ≤ e^{ε_u}; eq 7 (LDP): Λ(x)/Ψ(x) ≤ e^ε], and
randomises X_H. Complete merging maps all of X_H to one symbol [ZDS23, eq 8]; subset merging
partitions X_H greedily and merges each part [ZDS23, Alg 1]; subset random response runs AORR on
each part [ZDS23, Alg 2, eqs 23-30]. Algorithms 1-2 are printed as images; rebuilt from the text:

* Alg 1: while unassigned high-risk symbols remain (erratum: the loop condition), start a part with
  the riskiest unassigned symbol and add the unassigned symbol x* minimising ω(part ∪ {x*}) while
  the part violates the budgets; then merge into the last part, while it violates, the earlier part
  that minimises the merged risk. Risk ω = Λ + 1/Ψ for ALIP (erratum: the printed Λ + Ψ does not
  reproduce the paper's numbers), max(log Λ, |log Ψ|) for LIP, Γ = Λ/Ψ for LDP.
* Alg 2: the parts of Alg 1, each solved by AORR restricted to it (:func:`.lip.optimal_lip_rows`,
  polytope Π_i of eq 25); a part whose Π_i is empty is united with the next part (or, for the last,
  with the previously solved one) until it is not; when even all of X_H has an empty Π (X_H as a
  whole leaks, the paper then falls back to subset merging), rldp adds the low-risk symbol that
  minimises the part's risk, as for complete merging, until Π is not empty.

**Not guaranteed as printed**: a merged part can itself leak (Adult, S = relationship, X = occupation,
ε = 2, λ = 0.5: the complete-merging symbol has ε_l = 1.57 > 1). ``enforce=True`` (rldp's methods)
repairs the partition until :class:`.claim.Claim` passes: the worst failing output is merged — for
complete merging into X_H (X_H only grows), for subset merging with the part minimising the merged
risk. One output (everything merged) never leaks, so this ends. ``watchdog-paper`` skips it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rldp.shared.tolerances import DESIGN_MARGIN

from .claim import Claim, subset_lifts, symbol_lifts
from .lip import optimal_lip_rows

__all__ = ["high_risk", "partition_matrix", "watchdog", "subset_merging", "subset_rr", "risk"]

Groups = list[list[int]]


def risk(claim: Claim, big: float, small: float) -> float:
    """ω of a symbol or merged part with lifts (Λ, Ψ) [ZDS23, Sec 4.1, erratum ω = Λ + 1/Ψ for ALIP]."""
    inv = math.inf if small <= 0 else 1.0 / small
    if claim.kind == "ratio":
        return big * inv
    if claim.kind == "lift":
        return max(math.log(big) if big > 0 else 0.0, math.log(inv) if small > 0 else math.inf)
    return big + inv


def _violates(claim: Claim, big: float, small: float) -> bool:
    """The paper's test of a symbol or part at P̂ [ZDS23, eqs 6-7, 14]."""
    if claim.kind == "ratio":
        return small <= 0 or big / small > math.exp(claim.epsilon_lower)
    return small < math.exp(-claim.epsilon_lower) or big > math.exp(claim.epsilon_upper)


def high_risk(claim: Claim) -> np.ndarray:
    """Mask of X_H [ZDS23, eqs 6-7] (symbols with P̂(x) = 0 included: merging them costs nothing)."""
    big, small = symbol_lifts(claim.joint)
    return np.array([_violates(claim, float(b), float(s)) for b, s in zip(big, small, strict=True)], dtype=bool)


def partition_matrix(groups: Groups, a: int) -> np.ndarray:
    """Q with one output per part, each part's symbols mapped to it (X-invariant, [ZDS23, eq 8])."""
    q = np.zeros((len(groups), a))
    for y, members in enumerate(groups):
        q[y, members] = 1.0
    return q


def _group_risk(claim: Claim, members: list[int]) -> float:
    mask = np.zeros(claim.joint.shape[1], dtype=bool)
    mask[members] = True
    return risk(claim, *subset_lifts(claim.joint, mask))


def _group_violates(claim: Claim, members: list[int]) -> bool:
    mask = np.zeros(claim.joint.shape[1], dtype=bool)
    mask[members] = True
    return _violates(claim, *subset_lifts(claim.joint, mask))


def _enforce(claim: Claim, groups: Groups, high: int | None) -> tuple[Groups, int]:
    """Merge the worst failing output until the claim passes; ``high`` is the index of X_H's part
    when only X_H may grow (complete merging), None to merge freely (subset merging)."""
    merges = 0
    a = claim.joint.shape[1]
    while len(groups) > 1:
        q = partition_matrix(groups, a)
        if claim.passes(q):
            break
        worst = int(np.argmax(claim.excess(q)))
        if high is not None and worst != high:
            partner = high
        else:
            others = [j for j in range(len(groups)) if j != worst]
            partner = min(others, key=lambda j: _group_risk(claim, groups[worst] + groups[j]))
        pos = min(worst, partner)
        merged = sorted(groups[worst] + groups[partner])
        groups = [g for j, g in enumerate(groups) if j not in (worst, partner)]
        groups.insert(pos, merged)
        if high is not None:
            high = pos
        merges += 1
    return groups, merges


def watchdog(claim: Claim, enforce: bool = True) -> tuple[np.ndarray, dict[str, Any]]:
    """Complete merging [ZDS23, eqs 6-8]: X_L as themselves, X_H merged into one output."""
    a = claim.joint.shape[1]
    mask = high_risk(claim)
    low = [[int(x)] for x in np.flatnonzero(~mask)]
    groups: Groups = low + ([[int(x) for x in np.flatnonzero(mask)]] if mask.any() else [])
    high = len(low) if mask.any() else None
    params: dict[str, Any] = {"high_risk_paper": int(mask.sum())}
    if enforce:
        if high is None and not claim.passes(partition_matrix(groups, a)):
            # nothing is high-risk at P̂ but an output leaks (over F): X_H starts from the worst
            high = int(np.argmax(claim.excess(partition_matrix(groups, a))))
        groups, merges = _enforce(claim, groups, high)
        params["merges"] = merges
    params["outputs"] = len(groups)
    return partition_matrix(groups, a), params


def _alg1_parts(claim: Claim, high: list[int]) -> Groups:
    """Algorithm 1's partition of X_H [ZDS23, Alg 1] (rebuilt, see the module docstring)."""
    big, small = symbol_lifts(claim.joint)
    unassigned = list(high)
    parts: Groups = []
    while unassigned:  # erratum: while unassigned high-risk symbols remain
        first = max(unassigned, key=lambda x: risk(claim, float(big[x]), float(small[x])))
        part = [first]
        unassigned.remove(first)
        while unassigned and _group_violates(claim, part):
            best = min(unassigned, key=lambda x: _group_risk(claim, part + [x]))
            part.append(best)
            unassigned.remove(best)
        parts.append(sorted(part))
    while len(parts) > 1 and _group_violates(claim, parts[-1]):
        j = min(range(len(parts) - 1), key=lambda i: _group_risk(claim, parts[-1] + parts[i]))
        last = sorted(parts.pop() + parts[j])
        parts.pop(j)
        parts.append(last)
    return parts


def subset_merging(claim: Claim, enforce: bool = True) -> tuple[np.ndarray, dict[str, Any]]:
    """Subset merging [ZDS23, Alg 1]: X_L as themselves, each part of X_H merged into one output."""
    a = claim.joint.shape[1]
    mask = high_risk(claim)
    parts = _alg1_parts(claim, [int(x) for x in np.flatnonzero(mask)])
    groups: Groups = [[int(x)] for x in np.flatnonzero(~mask)] + parts
    params: dict[str, Any] = {"high_risk_paper": int(mask.sum()), "parts_paper": len(parts)}
    if enforce:
        groups, merges = _enforce(claim, groups, None)
        params["merges"] = merges
    params["outputs"] = len(groups)
    return partition_matrix(groups, a), params


def subset_rr(claim: Claim) -> tuple[np.ndarray, dict[str, Any]] | None:
    """Subset random response [ZDS23, Alg 2]: AORR on each part of Algorithm 1's partition.

    None when no union of parts has a non-empty polytope Π_i (the paper then uses subset merging),
    or when the result fails the claim (e.g. over F with a positive radius, where Π_i, built at P̂,
    does not apply); the designer then falls back to rldp's subset merging."""
    joint = claim.joint
    a = joint.shape[1]
    p_x, p_s = joint.sum(axis=0), joint.sum(axis=1)
    mask = high_risk(claim) & (p_x > 0)  # symbols with P̂(x) = 0 ride along with the first part
    pending = _alg1_parts(claim, [int(x) for x in np.flatnonzero(mask)])
    solved: list[tuple[list[int], np.ndarray, np.ndarray]] = []
    cond = np.divide(joint, p_x, out=np.zeros_like(joint), where=p_x > 0)
    low_left = [int(x) for x in np.flatnonzero(~mask & (p_x > 0))]
    eps_l, eps_u = claim.epsilon_lower * (1 - DESIGN_MARGIN), claim.epsilon_upper * (1 - DESIGN_MARGIN)
    unions = enlarged = 0
    while pending:
        part = pending.pop(0)
        while True:
            found = optimal_lip_rows(cond[:, part], p_s, p_x[part], eps_l, eps_u)
            if found is not None:
                break
            if pending:
                part = sorted(part + pending.pop(0))
            elif solved:
                part = sorted(part + solved.pop()[0])
            elif low_left:  # rldp: X_H as a whole leaks; enlarge it like the watchdog (the paper stops)
                best = min(low_left, key=lambda x: _group_risk(claim, part + [x]))
                low_left.remove(best)
                part = sorted(part + [best])
                enlarged += 1
                continue
            else:
                return None
            unions += 1
        solved.append((part, found[0], found[1]))
    low = np.array(low_left, dtype=int)
    zero = np.flatnonzero(p_x <= 0)
    blocks = [np.eye(a)[low]] if len(low) else []
    for part, rows, alpha in solved:
        block = np.zeros((len(rows), a))
        block[:, part] = alpha[:, None] * rows / p_x[part]
        block[:, part] /= block[:, part].sum(axis=0, keepdims=True)
        blocks.append(block)
    q = np.concatenate(blocks) if blocks else np.ones((1, a))
    if len(zero):  # no data: spread like the output marginal
        out = q[:, p_x > 0] @ p_x[p_x > 0]
        q[:, zero] = (out / out.sum())[:, None]
    if not claim.passes(q):
        return None
    return q, {"parts": len(solved), "unions": unions, "enlarged": enlarged, "outputs": int(len(q))}
