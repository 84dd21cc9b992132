"""PolyOpt by column generation: Theorem 3's linear program without vertex enumeration.

Exact PolyOpt (:mod:`.polyopt`) lists every vertex of Γ̂ (Definition 3 of seed 000) and
solves the linear program of Theorem 3,

    max Σ_v θ_v μ(v)   s.t.   Σ_v θ_v v = 1_X,  θ ≥ 0,                        (eq. 46)

whose dual is  min Σ_x λ_x  s.t.  λ·v ≥ μ(v) for every v ∈ Γ.  Enumeration explodes beyond
about ten symbols. Column generation solves the same LP over a growing set of columns:

* the *master* is eq. 46 restricted to the columns found so far (HiGHS via ``highspy``,
  warm-started as columns arrive); it is always feasible because the uniform row is in Γ
  and every column is verified to lie in Γ before it enters;
* its duals λ price new columns: a v ∈ Γ with μ(v) − λ·v > 0 improves the master. Finding
  the best one is a convex maximisation over a polytope. Two searches feed each round:
  (1) *block enumeration*: on the section c = min_s B_s = 1 the cone is a product of
  per-block polytopes (exactly for Definition 3 as printed; for RLDP after choosing the
  block attaining c and the second-smallest level r, see :class:`_BlockPricer`), and once
  −m log m is replaced by a tangent the objective separates over blocks, so the best row
  of the section is found by enumerating each block's vertices (2^|U| subsets, vectorised);
  (2) successive linearisation (each step one small LP over Γ, warm-started) from the best
  block rows, sampled basis columns, midpoints of pairs of them and random vertices —
  and, before convergence is declared, from every basis column and every per-coordinate
  maximiser. Searches use smoothed prices (a convex combination of the previous search
  point and the new duals, which damps the duals' oscillation); a column enters only if it
  improves at the master's own duals.

Γ is written compactly with epigraph variables M_s ≥ v_{s,u} ≥ m_s: the |U|² rows of
Definition 3 for a pair (s₁, s₂) are the single inequality

    Σ_u L_{u|s₁} v_{s₁,u} + (1 − Σ_u L_{u|s₁}) M_{s₁} ≤ e^ε (Σ_u L_{u|s₂} v_{s₂,u} + (1 − Σ_u L_{u|s₂}) m_{s₂}),

i.e. max_{R ∈ D_s₁} R·v_s₁ ≤ e^ε min_{R ∈ D_s₂} R·v_s₂ (seed 000, eq. 41), so a pricing LP
has |X| + 2|S| variables and 2|X| + |S|(|S| − 1) + 1 rows.

Pricing works with the normalisation P̂·z = 1 (z = v / (P̂·v)), in which μ(z) = Σ_x P̂_x z_x log z_x
and every mechanism's rows satisfy Σ_y P̂·Q_y = 1. Hence, for any λ, weak duality gives the
*Lagrangian bound*

    I_P̂(X;Y) ≤ Σ_x λ_x + max_{z ∈ C, P̂·z = 1} (μ(z) − λ·z)

for every mechanism whose rows lie in the cone C. For the non-robust cone (F = {P̂}, seed 000
Sec. 8, "NR") the inner maximum has a closed form over the cone's vertices (see
:func:`nr_pricing`), so NR is solved by column generation with *exact* pricing and its
optimum is bounded from above with a proof. Since P̂ ∈ F, every (ε, F)-RLDP mechanism — and
so PolyOpt — is (ε, {P̂})-RLDP: the NR bound bounds them all. For Γ itself the inner maximum
is bounded through the block sections (:meth:`_BlockPricer.bound`), which gives a bound on
the PolyOpt optimum that is tight only near convergence.

Large alphabets (more than COARSEN_MIN_SYMBOLS symbols) are solved coarse-to-fine: first
the problem with released values (and, beyond 20 of them, sensitive values) merged by mass
(:class:`Aggregation`: a coarse row in the coarse cone expands to a row of Γ with the same
information), then the fine problem seeded with the expanded rows. The coarse problem's
duals, lifted to the fine cells, give the fine problem a Lagrangian bound.
Measured on Adult occupation×education (60 s): NMI 0.031 / 0.130 / 0.214 at ε = 0.5 / 1 /
1.5, against 0.015 / 0.102 / 0.092 from the seeds alone; the fine stage itself adds < 1 %
there (15×8 instead of 15×4 would add ~1 %), so most of the gain is the coarse stage. The
fine master, seeded so, is massively primal-degenerate (columns enter at step 0); perturbing
its right-hand side moved the LP but gained nothing after restoring it, so it is not used.

Anytime: the master's solution is feasible at every iteration, so when the time budget
ends the best mechanism so far is returned, after the same certification as at the end:
columns renormalised, every row checked against Γ (Theorem 2) and, if round-off pushed
one outside, mixed with the uniform output until it is inside.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from rldp.shared.utility import row_information

__all__ = [
    "CGResult",
    "CGError",
    "GammaCone",
    "solve_polyopt_cg",
    "solve_nr_cg",
    "nr_pricing",
    "nr_upper_bound",
]

# Reduced costs below this (nats per unit of output mass) count as zero.
PRICING_TOLERANCE = 1e-9
# Exact subset enumeration in nr_pricing up to this many sensitive values.
NR_EXACT_MAX_SENSITIVE = 16


class CGError(RuntimeError):
    """The column-generation solver could not produce a mechanism."""


Progress = Callable[[dict], None]


@dataclass
class CGResult:
    """Outcome of a column-generation solve (all information in nats)."""

    matrix: np.ndarray  # (|Y|, |X|), certified: every row in the cone, columns sum to 1
    information: float  # I_P̂(X;Y) of ``matrix``
    lp_value: float  # the master's objective (≈ information, before certification)
    iterations: int  # pricing rounds
    columns: int  # columns in the master at the end
    seconds: float
    converged: bool  # the pricer found no improving column (exact pricer: proven optimal)
    status: str  # "converged", "time_budget", "iteration_limit" or "stalled"
    upper_bound: float | None = None  # proven upper bound on the optimum, if any
    bound_kind: str | None = None  # what ``upper_bound`` bounds and how it was proved
    history: list[tuple[float, float]] = field(default_factory=list)  # (seconds, lp value)
    stages: list[dict] = field(default_factory=list)  # coarse stages run first (see :class:`Aggregation`)
    duals: np.ndarray | None = None  # the master's final duals λ (|X|,)


# ---------------------------------------------------------------------------
# The cone Γ of Definition 3, compactly
# ---------------------------------------------------------------------------

class GammaCone:
    """Γ_ε (seed 000, Def. 3) for bounds L (|S|, |U|): membership, repair and the pricing LP.

    ``same_sensitive`` also imposes the s₁ = s₂ inequalities (Definition 3 as printed);
    RLDP itself needs only s₁ ≠ s₂. ``self_pairs`` (a boolean per s) imposes the s₁ = s₂ row on
    the chosen blocks only (a block standing for several merged sensitive values, see
    :func:`aggregate`). With L = P̂_U|s (ΣL = 1, a point set) Γ is the non-robust
    cone of NR.
    """

    def __init__(self, lower_bounds: np.ndarray, epsilon: float, same_sensitive: bool = False,
                 self_pairs: np.ndarray | None = None):
        low = np.asarray(lower_bounds, dtype=float)
        if low.ndim != 2 or low.shape[0] < 2 or low.shape[1] < 1:
            raise CGError(f"lower bounds must have shape (|S| ≥ 2, |U| ≥ 1); got {low.shape}")
        if np.any(low < 0) or np.any(low.sum(axis=1) > 1 + 1e-9) or not np.all(np.isfinite(low)):
            raise CGError("lower bounds L must be finite, ≥ 0 and sum to at most 1 for every s")
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise CGError(f"epsilon must be a finite number > 0; got {epsilon!r}")
        self.lower = low
        self.slack = np.maximum(1.0 - low.sum(axis=1), 0.0)  # ℓ_s = 1 − Σ_u L_u|s
        self.epsilon = float(epsilon)
        self.same_sensitive = bool(same_sensitive)
        self.a1, self.a2 = low.shape
        self.size = low.size
        s1, s2 = np.meshgrid(np.arange(self.a1), np.arange(self.a1), indexing="ij")
        keep = np.ones_like(s1, dtype=bool) if same_sensitive else (s1 != s2)
        if self_pairs is not None:  # the s₁ = s₂ row only for these blocks (aggregated problems)
            keep |= (s1 == s2) & np.asarray(self_pairs, dtype=bool)[s1]
        self.pairs = np.stack([s1[keep], s2[keep]], axis=1)  # (K, 2)

    # -- membership ---------------------------------------------------------------
    def sides(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(max_{R∈D_s} R·v_s, min_{R∈D_s} R·v_s) for each row v and s; shapes (n, |S|)."""
        v = np.atleast_2d(rows).reshape(-1, self.a1, self.a2)
        lin = np.einsum("nsu,su->ns", v, self.lower)
        return lin + self.slack * v.max(axis=2), lin + self.slack * v.min(axis=2)

    def violations(self, rows: np.ndarray, epsilon: float | None = None) -> np.ndarray:
        """max over pairs of (max_{D_s₁} R·v_s₁ − e^ε min_{D_s₂} R·v_s₂) per row; ≤ 0 iff v ∈ Γ."""
        hi, lo = self.sides(rows)
        e = math.exp(self.epsilon if epsilon is None else epsilon)
        return np.max(hi[:, self.pairs[:, 0]] - e * lo[:, self.pairs[:, 1]], axis=1)

    def contains(self, rows: np.ndarray) -> np.ndarray:
        rows = np.atleast_2d(rows)
        return (self.violations(rows) <= 0.0) & np.all(rows >= 0, axis=1)

    def repair(self, rows: np.ndarray) -> np.ndarray:
        """Mix each row with the constant row of the same mass until it lies in Γ.

        Every pair constraint c_k(v) = A_s₁(v) − e^ε B_s₂(v) is convex (A is a max, B a min
        of linear functions) and c_k(1) = 1 − e^ε < 0, so c_k((1 − t)v + t·m1) ≤ 0 for
        t ≥ c_k(v)/(c_k(v) − m c_k(1)). Rows already inside are returned unchanged.
        """
        v = np.maximum(np.atleast_2d(np.asarray(rows, dtype=float)), 0.0)
        mass = v.sum(axis=1, keepdims=True) / self.size
        for _ in range(8):
            viol = self.violations(v)
            bad = viol > 0
            if not np.any(bad):
                return v
            inner = mass[bad, 0] * (1.0 - math.exp(self.epsilon))  # c_k of the constant row (< 0)
            t = viol[bad] / (viol[bad] - inner)
            t = np.minimum(t * (1 + 1e-6) + 1e-12, 1.0)
            v[bad] = (1.0 - t)[:, None] * v[bad] + t[:, None] * mass[bad]
        raise CGError("could not move a column inside Γ (this indicates a bug)")

    # -- the pricing LP -------------------------------------------------------------
    def pricing_lp(self, weights: np.ndarray) -> "_PricingLP":
        """The LP max c·z over {z ∈ Γ, w·z = 1} (w = P̂ for the Lagrangian normalisation)."""
        return _PricingLP(self, weights)


def _quiet_highs() -> Any:
    """A HiGHS instance that prints nothing, not even its banner.

    highspy ≥ 1.16 prints "Running HiGHS …" to the process's stdout from inside
    ``Highs.__init__`` (its ``enableCallbacks`` call), before any option can be set; that
    line corrupted ``rldp design --json``. Setting output_flag in that hook silences it; on
    versions that do not call the hook, setting it right after construction (below) suffices.
    """
    h = _quiet_highs_class()()
    h.setOptionValue("output_flag", False)
    return h


@functools.cache
def _quiet_highs_class() -> type:
    import highspy  # imported on first use: the client never needs it

    class QuietHighs(highspy.Highs):  # type: ignore[misc]
        def enableCallbacks(self) -> Any:
            self.setOptionValue("output_flag", False)
            return super().enableCallbacks()

    return QuietHighs


class _PricingLP:
    """HiGHS model of max c·z over Γ ∩ {w·z = 1}; only the objective changes between solves.

    Variables [z (|X|), M (|S|), m (|S|)]; rows z − M_s ≤ 0, m_s − z ≤ 0 (per cell), one row
    per pair (s₁, s₂) (see the module docstring) and w·z = 1.
    """

    def __init__(self, cone: GammaCone, weights: np.ndarray):
        import highspy

        a, a1, a2 = cone.size, cone.a1, cone.a2
        self.cone = cone
        self.n = a
        e = math.exp(cone.epsilon)
        h = _quiet_highs()
        h.setOptionValue("primal_feasibility_tolerance", 1e-9)
        h.setOptionValue("dual_feasibility_tolerance", 1e-9)
        h.setOptionValue("presolve", "off")  # only the objective changes: keep the basis
        inf = highspy.kHighsInf
        n_var = a + 2 * a1
        h.addVars(n_var, np.zeros(n_var), np.full(n_var, inf))
        s_of = np.repeat(np.arange(a1), a2)
        rows_idx, rows_val, lower, upper = [], [], [], []
        for x in range(a):  # z_x − M_s ≤ 0 and m_s − z_x ≤ 0
            rows_idx.append([x, a + s_of[x]]); rows_val.append([1.0, -1.0])
            rows_idx.append([x, a + a1 + s_of[x]]); rows_val.append([-1.0, 1.0])
            lower += [-inf, -inf]; upper += [0.0, 0.0]
        low, slack = cone.lower, cone.slack
        for s1, s2 in cone.pairs:
            coef = np.zeros(n_var)
            coef[s1 * a2:(s1 + 1) * a2] += low[s1]
            coef[a + s1] += slack[s1]
            coef[s2 * a2:(s2 + 1) * a2] -= e * low[s2]
            coef[a + a1 + s2] -= e * slack[s2]
            nz = np.flatnonzero(coef)
            rows_idx.append(list(nz)); rows_val.append(list(coef[nz]))
            lower.append(-inf); upper.append(0.0)
        w = np.asarray(weights, dtype=float).reshape(-1)
        nz = np.flatnonzero(w)
        rows_idx.append(list(nz)); rows_val.append(list(w[nz]))
        lower.append(1.0); upper.append(1.0)
        starts = np.cumsum([0] + [len(r) for r in rows_idx[:-1]])
        idx = np.concatenate([np.asarray(r, dtype=np.int32) for r in rows_idx])
        val = np.concatenate([np.asarray(r, dtype=float) for r in rows_val])
        h.addRows(len(rows_idx), np.asarray(lower), np.asarray(upper), len(idx), starts.astype(np.int32), idx, val)
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h = h
        self._all = np.arange(a, dtype=np.int32)
        self._ok = highspy.HighsModelStatus.kOptimal

    def maximise(self, c: np.ndarray, time_limit: float | None = None) -> np.ndarray | None:
        """The maximiser z (a vertex) of c·z, or None if HiGHS did not reach optimality."""
        self.h.changeColsCost(self.n, self._all, np.asarray(c, dtype=float))
        if time_limit is not None:  # HiGHS' time limit counts the instance's total run time
            self.h.setOptionValue("time_limit", self.h.getRunTime() + max(float(time_limit), 1e-3))
        self.h.run()
        if self.h.getModelStatus() != self._ok:
            return None
        return np.maximum(np.asarray(self.h.getSolution().col_value[:self.n]), 0.0)


# ---------------------------------------------------------------------------
# The restricted master LP (Theorem 3, eq. 46)
# ---------------------------------------------------------------------------

class _Master:
    """max Σ_j θ_j μ(v_j) s.t. Σ_j θ_j v_j = 1_X, θ ≥ 0 over the columns added so far."""

    def __init__(self, distribution: np.ndarray):
        import highspy

        self.p = np.asarray(distribution, dtype=float).reshape(-1)
        a = self.p.size
        h = _quiet_highs()
        h.setOptionValue("primal_feasibility_tolerance", 1e-10)
        h.setOptionValue("dual_feasibility_tolerance", 1e-10)
        h.setOptionValue("presolve", "off")  # presolve would discard the warm-start basis
        h.addRows(a, np.ones(a), np.ones(a), 0, np.zeros(a, dtype=np.int32), np.zeros(0, dtype=np.int32),
                  np.zeros(0))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h = h
        self.columns = np.zeros((0, a))
        self.mu = np.zeros(0)
        self.value = -math.inf
        self.theta = np.zeros(0)
        self.duals = np.zeros(a)
        self._keys: set[bytes] = set()
        self._ok = highspy.HighsModelStatus.kOptimal

    def add(self, rows: np.ndarray) -> int:
        """Add columns (rows of Q normalised to Σ v = 1), skipping duplicates; returns how many."""
        rows = np.atleast_2d(rows)
        rows = rows / rows.sum(axis=1, keepdims=True)
        fresh = []
        for r in rows:
            key = np.round(r, 11).tobytes()
            if key not in self._keys:
                self._keys.add(key)
                fresh.append(r)
        if not fresh:
            return 0
        new = np.array(fresh)
        mu = row_information(new, self.p)
        k, a = new.shape
        idx = np.tile(np.arange(a, dtype=np.int32), k)
        nzmask = new.reshape(-1) != 0
        starts = np.concatenate([[0], np.cumsum((new != 0).sum(axis=1))[:-1]]).astype(np.int32)
        self.h.addCols(k, mu, np.zeros(k), np.full(k, np.inf), int(nzmask.sum()), starts,
                       idx[nzmask], new.reshape(-1)[nzmask])
        self.columns = np.vstack([self.columns, new])
        self.mu = np.concatenate([self.mu, mu])
        return k

    def solve(self, time_limit: float | None = None) -> bool:
        if time_limit is not None:  # HiGHS' time limit counts the instance's total run time
            self.h.setOptionValue("time_limit", self.h.getRunTime() + max(float(time_limit), 1e-3))
        self.h.run()
        if self.h.getModelStatus() != self._ok:
            return False
        sol = self.h.getSolution()
        theta = np.maximum(np.asarray(sol.col_value), 0.0)
        duals = np.asarray(sol.row_dual)
        # HiGHS' sign convention for duals depends on the sense: orient λ so that λ·v = μ(v)
        # on the basic columns and λ·v ≥ μ(v) on the others (dual feasibility of eq. 46).
        basic = theta > 1e-12
        if basic.any() and np.sum((self.columns[basic] @ duals) * theta[basic]) < 0:
            duals = -duals
        self.theta, self.duals = theta, duals
        self.value = float(self.mu @ theta)
        return True

    def purge(self, keep: int) -> None:
        """Drop the non-basic columns with the most negative reduced cost until ``keep`` remain
        (the LP's basis is unaffected; a dropped column can be generated again)."""
        extra = len(self.columns) - keep
        theta = self._weights()
        if extra <= 0 or len(theta) != len(self.columns):
            return
        rc = self.mu - self.columns @ self.duals
        rc[theta > 1e-12] = np.inf
        drop = np.sort(np.argsort(rc)[:extra])
        drop = drop[np.isfinite(rc[drop])]
        if drop.size == 0:
            return
        self.h.deleteCols(int(drop.size), drop.astype(np.int32))
        for r in self.columns[drop]:
            self._keys.discard(np.round(r, 11).tobytes())
        keep_mask = np.ones(len(self.columns), dtype=bool)
        keep_mask[drop] = False
        self.columns, self.mu, self.theta = self.columns[keep_mask], self.mu[keep_mask], self.theta[keep_mask]

    def _weights(self) -> np.ndarray:
        # Columns added after the last successful solve have weight 0 in that solution.
        return np.concatenate([self.theta, np.zeros(len(self.columns) - len(self.theta))])

    def basis(self) -> np.ndarray:
        return self.columns[self._weights() > 1e-12]

    def mechanism(self) -> np.ndarray:
        theta = self._weights()
        used = theta > 1e-12
        return theta[used, None] * self.columns[used]


# The first master solve (over the seed columns) may overrun a tiny budget by this much:
# without it there is no mechanism to return at all.
SEED_SOLVE_MIN_SECONDS = 10.0


def _solve_seeds(master: _Master, deadline: float) -> _Master:
    """Solve the master over its seed columns. If HiGHS fails (a time limit on a tiny budget
    on a loaded machine, or numerical trouble with badly scaled columns), retry with the
    well-scaled seeds only (max/min positive entry ≤ 1e6) plus the constant row, which
    alone is always a feasible basis (the one-output mechanism)."""
    if master.solve(max(deadline - time.perf_counter(), SEED_SOLVE_MIN_SECONDS)):
        return master
    cols = master.columns
    a = cols.shape[1]
    smallest = np.where(cols > 0, cols, np.inf).min(axis=1)
    keep = cols.max(axis=1) <= 1e6 * smallest
    for rows in (np.vstack([np.full((1, a), 1.0 / a), cols[keep]]), np.full((1, a), 1.0 / a)):
        fresh = _Master(master.p)
        fresh.add(rows)
        if fresh.solve(3 * SEED_SOLVE_MIN_SECONDS):
            return fresh
    raise CGError("the restricted master LP failed on the seed columns")  # pragma: no cover


def _certify(q: np.ndarray, cone: GammaCone) -> np.ndarray:
    """Columns renormalised to sum 1, then every row inside Γ (Theorem 2).

    Renormalising the columns of θ·v after the LP's round-off (≤ 1e-9) can push a row just
    outside Γ; the fix mixes the whole mechanism with the uniform-output mechanism,
    Q' = (1 − t)Q + t/|Y|, which keeps the columns stochastic and moves every row towards the
    constant row (strictly inside Γ), with t just large enough for the worst row.
    """
    q = np.maximum(q, 0.0)
    q = q[q.sum(axis=1) > 0]
    q = q / q.sum(axis=0, keepdims=True)
    b = q.shape[0]
    viol = cone.violations(q)
    if np.any(viol > 0):
        inner = (1.0 - math.exp(cone.epsilon)) / b  # c_k of the constant row 1/|Y|
        t = float(np.max(np.maximum(viol, 0.0) / (np.maximum(viol, 0.0) - inner)))
        for _ in range(8):
            t = min(t * (1 + 1e-6) + 1e-12, 1.0)
            cand = (1.0 - t) * q + t / b
            if np.all(cone.violations(cand) <= 0):
                q = cand
                break
        else:  # pragma: no cover - the convexity argument makes this unreachable
            raise CGError("could not certify the mechanism against Γ")
    return q


# ---------------------------------------------------------------------------
# NR: exact pricing over the non-robust cone and the Lagrangian upper bound
# ---------------------------------------------------------------------------

def _nr_block_scores(distribution: np.ndarray, duals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """g_s = max_u (−P̂_s log P̂_u|s − λ_{s,u}/P̂_u|s) over u with P̂_u|s > 0, and the argmax."""
    p = np.asarray(distribution, dtype=float)
    ps = p.sum(axis=1)
    cond = p / ps[:, None]
    lam = duals.reshape(p.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(cond > 0, -ps[:, None] * np.log(np.where(cond > 0, cond, 1.0)) - lam / np.where(cond > 0, cond, 1.0), -np.inf)
    best = np.argmax(score, axis=1)
    return score[np.arange(p.shape[0]), best], best


def _nr_value(ps: np.ndarray, g: np.ndarray, member: np.ndarray, epsilon: float) -> np.ndarray:
    """F(T) = −log K + (ε e^ε P_T + G + (e^ε − 1) G_T)/K, K = 1 + (e^ε − 1) P_T, per subset row."""
    beta = math.expm1(epsilon)
    pt = member @ ps
    gt = member @ g
    k = 1.0 + beta * pt
    return -np.log(k) + (epsilon * math.exp(epsilon) * pt + g.sum() + beta * gt) / k


def nr_pricing(distribution: np.ndarray, duals: np.ndarray, epsilon: float,
               columns: int = 1) -> tuple[np.ndarray, np.ndarray, float]:
    """Best columns of the non-robust cone for prices λ, and an upper bound on the best reduced cost.

    The NR cone ((ε, {P̂})-RLDP) is {z ≥ 0 : w_s₁ ≤ e^ε w_s₂}, w_s = P̂_U|s·z_s. Maximising the
    convex f(z) = μ(z) − λ·z over it with P̂·z = 1: for fixed w each block is a simplex, so
    one cell u_s per block carries z, and the best u_s separates (score g_s below); over w
    the vertices are w_s = c·e^{ε[s ∈ T]} (the extreme rays of the LDP box cone) with
    c = 1/(1 + (e^ε − 1)P_T), which gives f = F(T) of :func:`_nr_value`. Cells with P̂_x = 0
    are free in the cone and contribute −λ_x z_x: they need λ_x ≥ 0 (callers clip).

    Exact over all subsets T when |S| ≤ NR_EXACT_MAX_SENSITIVE. Otherwise the prefixes of
    the order g_s/P̂_s are the candidates and the bound uses the upper hull of the zonotope
    {(P_T, G_T)}: F increases with G_T, along each hull edge −log K is at most its value at
    the edge's start and the fraction is monotone (linear-fractional), so
    F ≤ −log K(start) + max(fraction at either end) on that edge.

    Returns (up to ``columns`` columns z with P̂·z = 1, best first: the best subsets and
    single-block swaps of their cells; their reduced costs; upper bound on max f).
    """
    p = np.asarray(distribution, dtype=float)
    ps = p.sum(axis=1)
    if np.any(ps <= 0):
        raise CGError("exact NR pricing needs every sensitive value to occur in P̂")
    a1, a2 = p.shape
    cond = p / ps[:, None]
    lam = np.asarray(duals, dtype=float).reshape(p.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(cond > 0, -ps[:, None] * np.log(np.where(cond > 0, cond, 1.0))
                         - lam / np.where(cond > 0, cond, 1.0), -np.inf)
    best_u = np.argmax(score, axis=1)
    g = score[np.arange(a1), best_u]
    if a1 <= NR_EXACT_MAX_SENSITIVE:
        member = ((np.arange(2 ** a1)[:, None] >> np.arange(a1)[None, :]) & 1).astype(float)
        values = _nr_value(ps, g, member, epsilon)
        bound = float(values.max())
    else:
        order = np.argsort(-g / ps)
        member = np.zeros((a1 + 1, a1))
        for k in range(1, a1 + 1):
            member[k] = member[k - 1]
            member[k, order[k - 1]] = 1.0
        values = _nr_value(ps, g, member, epsilon)
        beta = math.expm1(epsilon)
        pt, gt = member @ ps, member @ g
        k = 1.0 + beta * pt
        frac = (epsilon * math.exp(epsilon) * pt + g.sum() + beta * gt) / k
        edge = -np.log(k[:-1]) + np.maximum(frac[:-1], frac[1:])
        bound = float(max(edge.max(), values.max()))
    top = np.argsort(-values)[:max(1, min(columns, 4))]
    cands: list[tuple[float, np.ndarray, np.ndarray]] = []
    for i in top:
        t = member[i]
        cands.append((float(values[i]), t, best_u))
        if columns > 1:  # single-block swaps: f changes by w_s·(score − g_s)
            w = np.exp(epsilon * t) / (1.0 + math.expm1(epsilon) * (t @ ps))
            delta = values[i] + w[:, None] * (score - g[:, None])
            delta[np.arange(a1), best_u] = -np.inf
            flat = np.argsort(-delta, axis=None)[:columns]
            for f in flat:
                s, u = divmod(int(f), a2)
                if not np.isfinite(delta[s, u]):
                    break
                choice = best_u.copy()
                choice[s] = u
                cands.append((float(delta[s, u]), t, choice))
    cands.sort(key=lambda c: -c[0])
    cands = cands[:columns]
    z = np.zeros((len(cands), a1, a2))
    for j, (_, t, choice) in enumerate(cands):
        w = np.exp(epsilon * t)
        w = w / (ps @ w)
        z[j, np.arange(a1), choice] = w / cond[np.arange(a1), choice]
    return z.reshape(len(cands), -1), np.array([c[0] for c in cands]), bound


def _zero_cell_duals(distribution: np.ndarray, duals: np.ndarray) -> np.ndarray:
    lam = np.array(duals, dtype=float)
    zero = np.asarray(distribution).reshape(-1) == 0
    lam[zero] = np.maximum(lam[zero], 0.0)
    return lam


def nr_upper_bound(distribution: np.ndarray, duals: np.ndarray, epsilon: float) -> float:
    """Σ_x λ_x + max_{z ∈ NR cone, P̂·z = 1} (μ(z) − λ·z) ≥ the NR optimum at ε (any λ).

    Weak duality with the normalisation P̂·Q_y = mass of output y (Σ_y = 1): for rows
    Q_y = m_y z_y, I = Σ_y m_y μ(z_y) ≤ λ·Σ_y Q_y + max_z (μ(z) − λ·z). λ_x is clipped to
    ≥ 0 on cells with P̂_x = 0 (those cells are free in the cone; any λ is allowed).
    """
    lam = _zero_cell_duals(distribution, duals)
    _, _, bound = nr_pricing(distribution, lam, epsilon, columns=1)
    return float(lam.sum() + bound)


# ---------------------------------------------------------------------------
# Seed columns
# ---------------------------------------------------------------------------

def _largest_in_cone(cone: GammaCone, family: Callable[[float], np.ndarray], hi: float = 40.0,
                     steps: int = 50) -> np.ndarray | None:
    """Rows of family(t) for the largest t ∈ [0, hi] with every row in Γ (bisection; the
    families used are monotone: t = 0 is the constant row)."""
    if not np.all(cone.contains(family(0.0))):
        return None
    if np.all(cone.contains(family(hi))):
        return family(hi)
    lo = 0.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if np.all(cone.contains(family(mid))):
            lo = mid
        else:
            hi = mid
    return family(lo)


def _robust_grr_rows(cone: GammaCone) -> np.ndarray:
    """For every x the row 1 + (κ_x − 1)e_x with the largest κ_x keeping it in Γ."""
    a = cone.size
    lo, hi = np.ones(a), np.full(a, 1e6)  # beyond 1e6 the master gets ill-conditioned
    eye = np.eye(a)
    rows = lambda k: 1.0 + (k[:, None] - 1.0) * eye
    for _ in range(80):  # bisection on log κ
        mid = np.sqrt(lo * hi)
        ok = cone.contains(rows(mid))
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return rows(lo)


def seed_columns(cone: GammaCone, extra_rows: Iterable[np.ndarray] = ()) -> np.ndarray:
    """Valid starting columns: the constant row, GRR and SRR rows at the largest level that
    fits Γ, per-output robust GRR rows, and ``extra_rows`` (e.g. the rows of IR / CR) —
    kept when inside Γ, and also mixed towards the constant row until inside."""
    from .mechanisms import grr_matrix, srr_matrix

    a = cone.size
    cols = [np.full((1, a), 1.0 / a)]
    for fam in (lambda t: grr_matrix(a, t), lambda t: srr_matrix(cone.a1, cone.a2, t)):
        rows = _largest_in_cone(cone, fam)
        if rows is not None:
            cols.append(rows)
    cols.append(_robust_grr_rows(cone))
    for rows in extra_rows:
        rows = np.atleast_2d(np.asarray(rows, dtype=float))
        rows = rows[rows.sum(axis=1) > 0]
        if rows.size:
            cols.append(cone.repair(rows))
    out = np.vstack(cols)
    out = out / out.sum(axis=1, keepdims=True)
    return out[cone.contains(out)]


# ---------------------------------------------------------------------------
# Pricing by successive linearisation
# ---------------------------------------------------------------------------

def _objective(z: np.ndarray, p: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """f(z) = μ(z) − λ·z for rows z (any scale; μ is homogeneous)."""
    z = np.atleast_2d(z)
    return row_information(z, p) - z @ lam


def _gradient(z: np.ndarray, p: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """∇f(z) = P̂_x log(z_x / P̂·z) − λ_x (eq. 45 differentiated); z_x = 0 floored at 1e-12·max."""
    m = float(p @ z)
    floor = 1e-12 * max(float(z.max()), 1e-300)
    return p * np.log(np.maximum(z, floor) / m) - lam


class _Pricer:
    """Successive linearisation over Γ ∩ {P̂·z = 1}: z ← argmax ∇f(z)·z until f stops rising."""

    def __init__(self, cone: GammaCone, p: np.ndarray, rng: np.random.Generator):
        self.cone = cone
        self.p = p
        self.lp = cone.pricing_lp(p)
        self.rng = rng
        self.lp_solves = 0

    def climb(self, z: np.ndarray, lam: np.ndarray, deadline: float, max_steps: int = 40) -> np.ndarray | None:
        best = None
        f_best = -math.inf
        for _ in range(max_steps):
            if time.perf_counter() > deadline:
                break
            nxt = self.lp.maximise(_gradient(z, self.p, lam), deadline - time.perf_counter())
            self.lp_solves += 1
            if nxt is None:
                break
            f = float(_objective(nxt, self.p, lam)[0])
            if f <= f_best + 1e-13 * (1 + abs(f)):
                break
            best, f_best, z = nxt, f, nxt
        return best

    def vertex(self, c: np.ndarray, deadline: float) -> np.ndarray | None:
        self.lp_solves += 1
        return self.lp.maximise(c, deadline - time.perf_counter())


# Weight of the previous search prices in the smoothed pricing point.
SMOOTHING = 0.6
# Blocks with at most this many released values are priced by enumerating their vertices.
BLOCK_ENUMERATION_MAX_RELEASED = 16


def _xlogx(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def _subset_sums(values: np.ndarray) -> np.ndarray:
    """Σ_{u ∈ H} values_u for every subset H (bit u of the index ↔ u ∈ H), in O(2^k)."""
    out = np.zeros(2 ** values.size)
    for j, v in enumerate(values):
        out[2 ** j:2 ** (j + 1)] = out[:2 ** j] + v
    return out


class _BlockVertices:
    """Vertices of one block's polytope P_s = {z ≥ 0 : A_s(z) ≤ e^ε, B_s(z) ≥ 1}, where
    A_s = L_s·z + ℓ_s max z and B_s = L_s·z + ℓ_s min z (the two sides of eq. 41).

    Why: with the s₁ = s₂ rows (Definition 3 as printed) Γ = ∪_c Π_s P_s·c, because
    max_s A_s ≤ e^ε min_s B_s ⟺ ∃c: A_s ≤ e^ε c ≤ e^ε B_s for all s; so on the section
    c = 1 the cone is a product of per-block polytopes, and a convex objective that
    separates over blocks is maximised block by block over their vertices. Those rows also
    lie in the RLDP cone (s₁ ≠ s₂ only), which is larger; they are starting points there.

    A vertex of P_s (variables z, M ≥ z ≥ m) has every cell at m or M except at most one,
    and then m = 0 with both sides tight; with high set H (λ_H = L(H)) the candidates are
    (i) A = e^ε and B = 1 (a 2×2 solve), (ii) m = 0, A = e^ε, (iii) m = 0, B = 1,
    (iv) m = 0, A = e^ε, B = 1 with one cell j ∉ H at t ∈ [0, M], and the constant rows 1, e^ε.
    """

    def __init__(self, low: np.ndarray, slack: float, epsilon: float, prob: np.ndarray, scale: float = 1.0):
        k = low.size
        e = math.exp(epsilon)
        bits = ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
        lam_h = _subset_sums(low)
        total = float(low.sum())
        hs, ms, big, js, ts = [], [], [], [], []
        nonempty = bits.any(axis=1) & ~bits.all(axis=1)
        # (i) both sides tight
        a_, b_, c_, d_ = total - lam_h, lam_h + slack, 1.0 - lam_h, lam_h
        det = a_ * d_ - b_ * c_
        with np.errstate(divide="ignore", invalid="ignore"):
            m1 = (e * d_ - b_) / det
            big1 = (a_ - c_ * e) / det
        ok = nonempty & (np.abs(det) > 1e-14) & (m1 >= 0) & (big1 >= m1) & np.isfinite(m1)
        idx = np.flatnonzero(ok)
        hs.append(idx); ms.append(m1[ok]); big.append(big1[ok]); js.append(np.full(idx.size, -1)); ts.append(np.zeros(idx.size))
        # (ii) m = 0, A tight; (iii) m = 0, B tight
        with np.errstate(divide="ignore", invalid="ignore"):
            big2 = e / (lam_h + slack)
            big3 = 1.0 / lam_h
            tight2 = big2 * lam_h >= 1.0
            tight3 = big3 * (lam_h + slack) <= e
        ok = bits.any(axis=1) & tight2 & np.isfinite(big2)
        idx = np.flatnonzero(ok)
        hs.append(idx); ms.append(np.zeros(idx.size)); big.append(big2[ok]); js.append(np.full(idx.size, -1)); ts.append(np.zeros(idx.size))
        ok = bits.any(axis=1) & (lam_h > 0) & tight3 & np.isfinite(big3)
        idx = np.flatnonzero(ok)
        hs.append(idx); ms.append(np.zeros(idx.size)); big.append(big3[ok]); js.append(np.full(idx.size, -1)); ts.append(np.zeros(idx.size))
        # (iv) one free cell
        if slack > 1e-12:
            big4 = (e - 1.0) / slack
            for j in range(k):
                if low[j] <= 0:
                    continue
                t = (1.0 - big4 * lam_h) / low[j]
                ok = bits.any(axis=1) & ~bits[:, j] & (t >= 0) & (t <= big4)
                idx = np.flatnonzero(ok)
                hs.append(idx); ms.append(np.zeros(idx.size)); big.append(np.full(idx.size, big4))
                js.append(np.full(idx.size, j)); ts.append(t[ok])
        self.bits = bits
        self.h = np.concatenate(hs)
        self.m = np.concatenate(ms)
        self.big = np.concatenate(big)
        self.j = np.concatenate(js)
        self.t = np.concatenate(ts)
        # constant rows z = 1 and z = e^ε (H = all cells, m = M)
        full = 2 ** k - 1
        self.h = np.concatenate([self.h, [full, full]])
        self.m = np.concatenate([self.m, [1.0, e]])
        self.big = np.concatenate([self.big, [1.0, e]])
        self.j = np.concatenate([self.j, [-1, -1]])
        self.t = np.concatenate([self.t, [0.0, 0.0]])
        # P_s(r, r·e^ε) = r·P_s(1, e^ε): scaled copies serve the RLDP sections below.
        self.m, self.big, self.t = self.m * scale, self.big * scale, self.t * scale
        self.prob = prob
        p_h = _subset_sums(prob)
        self._p_h = p_h[self.h]
        self._p_rest = prob.sum() - self._p_h
        jj = np.where(self.j >= 0, self.j, 0)
        self._p_j = np.where(self.j >= 0, prob[jj], 0.0)
        self._ent = self._p_h * _xlogx(self.big) + self._p_rest * _xlogx(self.m) * (self.j < 0) \
            + self._p_j * _xlogx(self.t)
        self.k = k

    def scores(self, cost: np.ndarray) -> np.ndarray:
        """Σ_u P̂_u z_u log z_u − cost·z for every vertex z."""
        c_h = _subset_sums(cost)[self.h]
        c_rest = cost.sum() - c_h
        jj = np.where(self.j >= 0, self.j, 0)
        c_j = np.where(self.j >= 0, cost[jj], 0.0)
        lin = c_h * self.big + np.where(self.j < 0, c_rest * self.m, 0.0) + c_j * self.t
        return self._ent - lin

    def vertex(self, i: int) -> np.ndarray:
        h = self.bits[self.h[i]]
        z = np.where(h, self.big[i], self.m[i] if self.j[i] < 0 else 0.0)
        if self.j[i] >= 0:
            z[self.j[i]] = self.t[i]
        return z


class _BlockPricer:
    """Pricing on sections of the cone where it is a product of block polytopes.

    With P_s(lo, hi) = {z_s : B_s ≥ lo, A_s ≤ hi} (see :class:`_BlockVertices`) and c the
    smallest B_s: the paper's cone (s₁ = s₂ rows) on c = 1 is Π_s P_s(1, e^ε); the RLDP cone
    (s₁ ≠ s₂) on c = 1, with s* the block attaining c and r = min_{s≠s*} B_s ∈ [1, e^ε], is
    P_s*(1, e^ε r) × Π_{s≠s*} P_s(r, e^ε), exactly. Sections are taken for r on a grid
    (r = e^{εj/K}, more of them on small alphabets); every row they give lies in Γ.

    f(z) = Σ_x P̂_x z_x log z_x − m log m − λ·z with m = P̂·z; the concave −m log m is
    replaced by its tangent at m₀ (above it, exact at m₀), so the objective separates over
    blocks; m₀ is then updated to the m of the chosen row (a few rounds).
    """

    def __init__(self, cone: GammaCone, p: np.ndarray, sections: bool = True):
        self.cone = cone
        self.p = p.reshape(cone.a1, cone.a2)
        eps = cone.epsilon
        make = lambda s, e, scale=1.0: _BlockVertices(cone.lower[s], float(cone.slack[s]), e, self.p[s], scale)
        self.blocks = [make(s, eps) for s in range(cone.a1)]
        # RLDP sections: grid j = 1..K of r = e^{εj/K}; others at (r, e^ε) = r·(1, e^ε/r), s* at (1, e^ε r).
        # (On large blocks the extra enumerations cost more rounds than they gain.)
        self.grid = 0 if cone.same_sensitive or not sections else (8 if cone.a1 * 2 ** cone.a2 <= 8192 else 0)
        self.sections = []
        for j in range(1, self.grid + 1):
            r = math.exp(eps * j / self.grid)
            others = [make(s, eps * (1 - j / self.grid), r) for s in range(cone.a1)]
            star = [make(s, eps * (1 + j / self.grid)) for s in range(cone.a1)]
            self.sections.append((others, star))
        self.relaxed: list[_BlockVertices] | None = None
        self.m0s: list[float] = [1.0]  # the tangent points visited by the last columns() call

    @staticmethod
    def usable(cone: GammaCone) -> bool:
        return cone.a2 <= BLOCK_ENUMERATION_MAX_RELEASED and cone.a1 * 2 ** cone.a2 <= 2_000_000

    def _best(self, blocks: list[_BlockVertices], lam: np.ndarray, eta: float) -> tuple[np.ndarray, list, list]:
        """Per block: best score, its vertex index, the runner-up's index."""
        vals, first, second = np.empty(len(blocks)), [], []
        for s, blk in enumerate(blocks):
            sc = blk.scores(lam[s] + eta * self.p[s])
            i = int(np.argmax(sc))
            vals[s] = sc[i]
            first.append(i)
            sc[i] = -np.inf
            second.append(int(np.argmax(sc)))
        return vals, first, second

    def columns(self, lam: np.ndarray, rounds: int = 6) -> np.ndarray:
        """Rows from the best section found (several tangent points m₀) and one-block swaps
        to each block's runner-up vertex."""
        lam = lam.reshape(self.p.shape)
        pf = self.p.reshape(-1)
        m0 = 1.0
        out, visited = [], []
        for _ in range(rounds):
            eta = math.log(m0) + 1.0
            vals, first, second = self._best(self.blocks, lam, eta)
            best_val, blocks, choice, alts = vals.sum(), list(self.blocks), first, second
            for others, star in self.sections:
                o_vals, o_first, o_second = self._best(others, lam, eta)
                s_vals, s_first, s_second = self._best(star, lam, eta)
                gain = s_vals - o_vals
                k = int(np.argmax(gain))
                if o_vals.sum() + gain[k] > best_val:
                    best_val = o_vals.sum() + gain[k]
                    blocks = list(others)
                    blocks[k] = star[k]
                    choice, alts = list(o_first), list(o_second)
                    choice[k], alts[k] = s_first[k], s_second[k]
            z = np.concatenate([blk.vertex(i) for blk, i in zip(blocks, choice)])
            out.append(z)
            m_new = float(pf @ z)
            visited.append(m0)
            if abs(m_new - m0) <= 1e-9 * m0:
                break
            m0 = m_new
        self.m0s = visited
        best = out[-1].reshape(self.p.shape)
        for s, blk in enumerate(blocks):
            z = best.copy()
            z[s] = blk.vertex(alts[s])
            out.append(z.reshape(-1))
        return np.array(out)

    def bound(self, lam: np.ndarray, m0s: Iterable[float] = (1.0,), steps: int = 14,
              deadline: float = math.inf) -> float | None:
        """A proven upper bound on r* = max {μ(z) − λ·z : z ∈ Γ, P̂·z = 1}, or None.

        For z in the cone let c = min_s B_s(z) > 0. With the s₁ = s₂ rows z/c lies in the
        section Π_s P_s; without them (RLDP) every block but the one attaining c satisfies
        B_s ≥ c, A_s ≤ e^ε c, and that block B ≥ c, A ≤ e^ε·(second smallest B) ≤ e^{2ε} c,
        so z/c lies in the union over s* of the sections with block s* relaxed to e^{2ε}.
        μ and λ·z are homogeneous, so r* ≤ ρ as soon as h(ρ) = max over that (relaxed)
        section of μ(z) − λ·z − ρ P̂·z is ≤ 0. We bound h from above by replacing −m log m
        (m = P̂·z) with its tangent at m₀ (for any m₀ it lies above), after which the
        objective separates over blocks and each block's maximum is exact by enumerating
        its vertices. ρ is then found by bisection; the returned end is one where the
        bound on h is ≤ 0.
        """
        cone = self.cone
        if np.any((cone.slack <= 0) & (cone.lower.min(axis=1) <= 0)):
            return None  # a block without max/min control is unbounded on the section
        if not cone.same_sensitive and self.relaxed is None:
            self.relaxed = [_BlockVertices(cone.lower[s], float(cone.slack[s]), 2.0 * cone.epsilon, self.p[s])
                            for s in range(cone.a1)]
        lam = lam.reshape(self.p.shape)
        m0s = sorted(set(float(m) for m in m0s if m > 0))

        def h(rho: float) -> float:
            best = math.inf
            for m0 in m0s:
                eta = math.log(m0) + 1.0 + rho
                base = np.array([blk.scores(lam[s] + eta * self.p[s]).max() for s, blk in enumerate(self.blocks)])
                total = m0 + base.sum()
                if not cone.same_sensitive:
                    wide = np.array([blk.scores(lam[s] + eta * self.p[s]).max()
                                     for s, blk in enumerate(self.relaxed)])
                    total += float(np.max(wide - base))
                best = min(best, total)
            return best

        if h(0.0) <= 0:
            return 0.0
        hi = 1.0
        while h(hi) > 0:
            hi *= 4.0
            if hi > 1e6 or time.perf_counter() > deadline:
                return None
        lo = 0.0
        for _ in range(steps):
            if time.perf_counter() > deadline:
                break  # hi is a proven bound at every step
            mid = 0.5 * (lo + hi)
            if h(mid) <= 0:
                hi = mid
            else:
                lo = mid
        return hi


def _as_pricing(rows: np.ndarray, p: np.ndarray) -> np.ndarray:
    rows = np.atleast_2d(rows)
    m = rows @ p
    return rows[m > 0] / m[m > 0, None]


# ---------------------------------------------------------------------------
# Coarse-to-fine: an aggregated problem whose rows expand into Γ
# ---------------------------------------------------------------------------

# Alphabets above this many symbols first solve an aggregated problem (see Aggregation).
COARSEN_MIN_SYMBOLS = 64
# Share of the time budget the aggregated problem may use (it usually converges sooner).
COARSE_SHARE = 0.5


def mass_groups(mass: np.ndarray, groups: int) -> np.ndarray:
    """Group index per value: values in decreasing mass, each into the lightest group so far
    (balanced bins: frequent values stay alone, rare ones are pooled). Deterministic."""
    mass = np.asarray(mass, dtype=float)
    if groups >= mass.size:
        return np.arange(mass.size)
    out = np.zeros(mass.size, dtype=int)
    total = np.zeros(groups)
    for i in np.argsort(-mass, kind="stable"):
        j = int(np.argmin(total))
        out[i] = j
        total[j] += mass[i]
    return out


@dataclass(frozen=True)
class Aggregation:
    """Merging sensitive values into groups g and released values into groups G.

    A coarse row v' over (g, G) expands to the fine row v_{s,u} = v'_{g(s),G(u)}. The coarse
    problem (:meth:`problem`) is built so that every coarse row in *its* Γ expands into the
    fine Γ (seed 000 Def. 3 / eq. 41), so its mechanisms are certified fine mechanisms:

    * merged released values: L'_{G|s} = Σ_{u∈G} L_{u|s} and the slack ℓ_s is unchanged, so
      max_{R∈D_s} R·v = Σ_G L'_{G|s} v'_G + ℓ_s max v' exactly (likewise the min);
    * merged sensitive values: L'_g = min_{s∈g} L'_s componentwise, so D'_g ⊇ D_s for every
      s ∈ g: A_s(v) ≤ A'_g(v') and B_s(v) ≥ B'_g(v'); the pair (s₁, s₂) of two values in one
      group then needs A'_g ≤ e^ε B'_g, the s₁ = s₂ row of that block (``self_pairs``).

    Y depends on X only through its group, so I_P̂(X;Y) of the expanded mechanism equals the
    coarse I_P̂'(X';Y) with P̂' the grouped sums: the coarse optimum is a certified lower bound
    and its rows are good seed columns for the fine problem.
    """

    sensitive: np.ndarray
    released: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.sensitive.max()) + 1, int(self.released.max()) + 1

    def problem(self, distribution: np.ndarray, lower_bounds: np.ndarray,
                same_sensitive: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(P̂', L', self_pairs) of the aggregated problem."""
        k1, k2 = self.shape
        onehot = np.eye(k2)[self.released]  # (|U|, k2)
        p_u, low_u = np.asarray(distribution) @ onehot, np.asarray(lower_bounds) @ onehot
        pc, lc = np.zeros((k1, k2)), np.zeros((k1, k2))
        sizes = np.bincount(self.sensitive, minlength=k1)
        for g in range(k1):
            pc[g] = p_u[self.sensitive == g].sum(axis=0)
            lc[g] = low_u[self.sensitive == g].min(axis=0)
        return pc, lc, (sizes > 1) | bool(same_sensitive)

    def lift_duals(self, duals: np.ndarray, distribution: np.ndarray) -> np.ndarray:
        """Coarse prices λ' spread over each group's cells in proportion to P̂ (evenly where
        the group has no mass): λ·Ev' = λ'·v' for every coarse row v'. A starting point
        for the fine problem's Lagrangian bound (any λ gives a valid bound)."""
        p = np.asarray(distribution, dtype=float)
        cell = (self.sensitive[:, None] * self.shape[1] + self.released[None, :]).reshape(-1)
        pf = p.reshape(-1)
        mass = np.bincount(cell, weights=pf, minlength=self.shape[0] * self.shape[1])
        count = np.bincount(cell, minlength=mass.size)
        share = np.where(mass[cell] > 0, pf / np.where(mass[cell] > 0, mass[cell], 1.0), 1.0 / count[cell])
        return np.asarray(duals, dtype=float).reshape(-1)[cell] * share

    def expand(self, rows: np.ndarray) -> np.ndarray:
        k1, k2 = self.shape
        r = np.atleast_2d(rows).reshape(-1, k1, k2)
        return r[:, self.sensitive][:, :, self.released].reshape(len(r), -1)


def coarse_aggregation(distribution: np.ndarray, min_symbols: int = COARSEN_MIN_SYMBOLS) -> Aggregation | None:
    """The aggregation used before a large problem: at most 4 released groups when |U| > 6,
    at most 8 sensitive groups when |S| > 20 (by mass, :func:`mass_groups`); None if small.

    Measured on Adult (60 s budgets): occupation×education solved first as 15×4 (converges in
    ~7-25 s) gave 1.3-2.3× the NMI of the fine problem solved from its seeds alone."""
    p = np.asarray(distribution, dtype=float)
    a1, a2 = p.shape
    if p.size <= min_symbols:
        return None
    k1 = 8 if a1 > 20 else a1
    k2 = 4 if a2 > 6 else a2
    if (k1, k2) == (a1, a2):
        return None
    return Aggregation(mass_groups(p.sum(axis=1), k1), mass_groups(p.sum(axis=0), k2))


# ---------------------------------------------------------------------------
# Solvers
# ---------------------------------------------------------------------------

def _check_inputs(distribution: np.ndarray, time_budget: float) -> np.ndarray:
    p = np.asarray(distribution, dtype=float)
    if p.ndim != 2 or p.shape[0] < 2:
        raise CGError(f"distribution must have shape (|S| ≥ 2, |U|); got {p.shape}")
    if np.any(p < 0) or not np.all(np.isfinite(p)) or abs(p.sum() - 1.0) > 1e-6:
        raise CGError("distribution must be finite, non-negative and sum to 1")
    if not (isinstance(time_budget, (int, float)) and time_budget > 0 and not math.isnan(time_budget)):
        raise CGError(f"time_budget must be a number of seconds > 0; got {time_budget!r}")
    return p


def _coarse_stage(p: np.ndarray, lower: np.ndarray, epsilon: float, time_budget: float,
                  extra_rows: list[np.ndarray], stages: list[dict], same_sensitive: bool = False,
                  **options: Any) -> np.ndarray | None:
    """Solve the aggregated problem (:class:`Aggregation`) with COARSE_SHARE of the budget, if the
    alphabet is large enough to have one. Its expanded rows are appended to ``extra_rows`` (seeds
    of the fine master) and its record to ``stages``; returns its duals lifted to the fine cells
    (for the fine problem's bound), or None. The stage only seeds the fine one, so a failure is
    skipped."""
    agg = coarse_aggregation(p)
    if agg is None:
        return None
    pc, lc, selfp = agg.problem(p, lower, same_sensitive)
    try:
        sub = solve_polyopt_cg(pc, lc, epsilon, same_sensitive=same_sensitive, self_pairs=selfp,
                               time_budget=COARSE_SHARE * float(time_budget), coarsen=False, prove_bound=False,
                               **options)
    except CGError:
        return None
    extra_rows.append(agg.expand(sub.matrix))
    stages.append({"shape": list(agg.shape), "information": sub.information, "status": sub.status,
                   "iterations": sub.iterations, "seconds": sub.seconds})
    return None if sub.duals is None else agg.lift_duals(sub.duals, p)


def solve_polyopt_cg(distribution: np.ndarray, lower_bounds: np.ndarray, epsilon: float, *,
                     same_sensitive: bool = False, time_budget: float = 60.0,
                     extra_rows: Iterable[np.ndarray] = (), bound_epsilon: float | None = None,
                     max_iterations: int = 100_000, progress: Progress | None = None,
                     seed: int = 0, starts_per_round: int = 8, use_blocks: bool = True,
                     coarsen: bool = True, self_pairs: np.ndarray | None = None,
                     prove_bound: bool = True) -> CGResult:
    """PolyOpt (seed 000, Thm 3) by column generation within ``time_budget`` seconds.

    ``distribution`` is P̂ (|S|, |U|), ``lower_bounds`` L (Prop. 1), ``epsilon`` the level the
    rows must satisfy (callers pass ε(1 − DESIGN_MARGIN)). ``extra_rows`` are candidate
    rows (e.g. of IR, CR) used as seed columns when inside Γ (or after mixing them inside).
    ``bound_epsilon`` (default ``epsilon``) is the level at which the upper bound on the
    PolyOpt optimum is proved (the Lagrangian bound of :meth:`_BlockPricer.bound`, computed
    once at the end; 15 % of the budget is kept for it). ``progress`` receives a dict after
    every round (iteration, seconds, information, columns, upper_bound). Deterministic for
    a given ``seed`` up to timing (the budget decides how many rounds run).

    ``coarsen``: on alphabets above :data:`COARSEN_MIN_SYMBOLS` symbols, first solve the
    aggregated problem of :func:`coarse_aggregation` (at most :data:`COARSE_SHARE` of the
    budget) and seed the master with its rows expanded to the fine alphabet (they lie in Γ,
    see :class:`Aggregation`); ``stages`` records it. ``self_pairs`` and ``prove_bound`` are
    used by that inner solve (the s₁ = s₂ row on merged blocks; no bound needed).

    Returns the certified mechanism of the last master solution (anytime: also when the
    budget ends first, ``status`` "time_budget").
    """
    start = time.perf_counter()
    p = _check_inputs(distribution, time_budget)
    deadline = start + float(time_budget)
    cone = GammaCone(lower_bounds, epsilon, same_sensitive, self_pairs)
    if cone.lower.shape != p.shape:
        raise CGError(f"lower bounds have shape {cone.lower.shape}; P̂ has {p.shape}")
    pf = p.reshape(-1)
    rng = np.random.default_rng(seed)
    extra_rows = [np.atleast_2d(np.asarray(r, dtype=float)) for r in extra_rows]
    stages: list[dict] = []
    lifted: np.ndarray | None = None
    if coarsen and self_pairs is None:
        lifted = _coarse_stage(p, cone.lower, epsilon, time_budget, extra_rows, stages, same_sensitive=same_sensitive,
                               progress=progress, seed=seed, starts_per_round=starts_per_round,
                               use_blocks=use_blocks)
    master = _Master(p)
    master.add(seed_columns(cone, extra_rows))
    pricer = _Pricer(cone, pf, rng)
    blocks = _BlockPricer(cone, pf) if use_blocks and _BlockPricer.usable(cone) else None
    if blocks is None:
        # Per-coordinate vertices (the Γ-maximisers of each z_x) as extra seeds. With block
        # pricing they are left to the intensive rounds: as seeds they made the master
        # plateau longer on Adult native-country × relationship.
        eye = np.eye(cone.size)
        coord = []
        for x in range(cone.size):
            if time.perf_counter() > deadline:
                break
            v = pricer.vertex(eye[x], deadline)
            if v is not None:
                coord.append(v)
        if coord:
            master.add(cone.repair(np.array(coord)))
    master = _solve_seeds(master, deadline)

    bound_eps = epsilon if bound_epsilon is None else float(bound_epsilon)
    # The bound is proved at bound_epsilon (the level the caller claims), so it has its own cone.
    bounder = blocks if bound_eps == epsilon else None
    upper: float | None = None
    kind = ("polyopt-lagrangian: Σλ + a proven bound on the best reduced cost (block enumeration); "
            "bounds PolyOpt" + (" with the s1 = s2 rows" if same_sensitive else "") + f" at epsilon = {bound_eps:.12g}")
    history = [(time.perf_counter() - start, master.value)]
    iterations, status = 0, "time_budget"

    def update_bound(until: float, lam: np.ndarray | None = None) -> None:
        nonlocal upper, bounder
        if blocks is None:
            return
        lam = master.duals if lam is None else lam
        if bounder is None:
            bounder = _BlockPricer(GammaCone(cone.lower, bound_eps, same_sensitive), pf, sections=False)
        m0s = {math.exp(bound_eps / 2), *(blocks.m0s[-1:] if blocks is not None else [])}
        r = bounder.bound(lam, m0s, steps=12, deadline=until)
        if r is not None:
            cand = float(lam.sum() + r)
            upper = cand if upper is None else min(upper, cand)

    def report() -> None:
        if progress is not None:
            progress({"iteration": iterations, "seconds": time.perf_counter() - start,
                      "information": master.value, "columns": len(master.columns),
                      "upper_bound": upper})

    # Keep 15 % of the budget for the final bound when there is one to prove.
    loop_deadline = deadline - (0.15 * float(time_budget) if blocks is not None and prove_bound else 0.0)
    center = None
    max_columns = 20 * cone.size + 2000  # bounds memory; old non-basic columns only slow the master
    report()
    while True:
        if time.perf_counter() > loop_deadline:
            status = "time_budget"
            break
        if iterations >= max_iterations:
            status = "iteration_limit"
            break
        iterations += 1
        # Wentges-style smoothing: search at prices between the previous search point and
        # the master's duals (damps the oscillation of the duals; ~15 % more utility at 240
        # symbols in 60 s); a column enters only if it improves at the master's own duals.
        center = master.duals if center is None else center
        smooth = SMOOTHING * center + (1 - SMOOTHING) * master.duals
        new = _price_round(pricer, master, master.duals, rng, loop_deadline, starts_per_round, blocks,
                           price_at=smooth)
        center = smooth
        added = master.add(cone.repair(new)) if len(new) else 0
        if added == 0:  # search harder, at the master's duals, before calling it converged
            new = _price_round(pricer, master, master.duals, rng, loop_deadline, starts_per_round, blocks,
                               intensive=True)
            added = master.add(cone.repair(new)) if len(new) else 0
        if added == 0:
            status = "time_budget" if time.perf_counter() > loop_deadline else "converged"
            break
        if not master.solve(max(loop_deadline - time.perf_counter(), 1e-3)):
            status = "time_budget"
            break
        history.append((time.perf_counter() - start, master.value))
        master.purge(max_columns)
        report()
    if prove_bound and lifted is not None:
        # Any λ gives a valid Lagrangian bound: the coarse problem's (near-converged) duals,
        # lifted, give a far better one than the (degenerate, unconverged) fine master's:
        # 0.61 vs 71 NMI on Adult native-country×relationship at ε = 0.5.
        update_bound(loop_deadline + 0.5 * (deadline - loop_deadline), lifted)
    if prove_bound:
        update_bound(deadline)

    q = _certify(master.mechanism(), cone)
    from rldp.shared.utility import mutual_information

    info = mutual_information(q, p)
    report()
    return CGResult(q, info, master.value, iterations, len(master.columns), time.perf_counter() - start,
                    status == "converged", status, upper, kind if upper is not None else None, history, stages,
                    master.duals.copy())


def _price_round(pricer: _Pricer, master: _Master, lam: np.ndarray, rng: np.random.Generator,
                 deadline: float, max_starts: int, blocks: "_BlockPricer | None" = None,
                 intensive: bool = False, price_at: np.ndarray | None = None) -> np.ndarray:
    """One pricing round: climb from (a sample of) the basis columns, midpoints of pairs of
    them and random vertices; return the distinct vertices found with positive reduced cost
    (normalised to Σ z = 1). ``intensive`` (used before declaring convergence) climbs from
    every basis column, more pairs, every per-coordinate maximiser and more random vertices."""
    p = pricer.p
    search = lam if price_at is None else price_at  # columns are searched at these prices,
    basis = _as_pricing(master.basis(), p)           # and kept if they improve at ``lam``
    if intensive:
        max_starts = max(4 * max_starts, 2 * len(basis))
    n_basis = len(basis) if intensive else min(len(basis), max(max_starts // 2, 1))
    starts = [basis[i] for i in rng.choice(len(basis), n_basis, replace=False)] if len(basis) else []
    if len(basis) >= 2:
        for _ in range(max(max_starts // 4, 1)):
            i, j = rng.choice(len(basis), 2, replace=False)
            starts.append(0.5 * (basis[i] + basis[j]))
    found = []
    seen: set[bytes] = set()

    def consider(z: np.ndarray | None) -> None:
        if z is None:
            return
        # Reduced cost per unit of Σ z, the master's own scale: HiGHS judges optimality
        # there, so a column below its tolerance on that scale would enter without a pivot.
        rc = float(_objective(z, p, lam)[0]) / float(z.sum())
        if rc > max(PRICING_TOLERANCE, 1e-9 * abs(master.value)):
            key = np.round(z / z.sum(), 10).tobytes()
            if key not in seen:
                seen.add(key)
                found.append(z / z.sum())

    if blocks is not None:
        cand = blocks.columns(search)
        rc = _objective(cand, p, lam) / (cand @ p)
        order = np.argsort(-rc)
        for i in order:
            if rc[i] > 0:
                consider(cand[i])
        # Polish the best of them in the full cone (s₁ ≠ s₂ only: larger than the section's).
        starts = [cand[i] / (cand[i] @ p) for i in order[:4]] + starts
    if intensive:
        for x in rng.permutation(p.size):
            if time.perf_counter() > deadline:
                break
            c = np.zeros(p.size)
            c[x] = 1.0
            starts.append(pricer.vertex(c, deadline))
    for z0 in starts:
        if time.perf_counter() > deadline:
            break
        if z0 is not None:
            consider(pricer.climb(z0, search, deadline))
    for _ in range(max(max_starts // 4, 1)):
        if time.perf_counter() > deadline:
            break
        v = pricer.vertex(rng.standard_normal(p.size) * p - search, deadline)
        if v is not None:
            consider(pricer.climb(v, search, deadline))
    return np.array(found) if found else np.zeros((0, p.size))


def solve_nr_cg(distribution: np.ndarray, epsilon: float, *, time_budget: float = 60.0,
                bound_epsilon: float | None = None, max_iterations: int = 100_000,
                progress: Progress | None = None, tolerance: float = 1e-7,
                extra_rows: Iterable[np.ndarray] = (), coarsen: bool = True) -> CGResult:
    """NR, the optimal (ε, {P̂})-RLDP mechanism (seed 000 Sec. 8, ref. [3]), by column
    generation with exact pricing (:func:`nr_pricing`).

    Converged means the Lagrangian bound met the master's value within ``tolerance``
    (relative): the mechanism is then optimal up to that tolerance. Needs every s to occur
    in P̂ (otherwise use the polytope solver with L = P̂_U|s). ``extra_rows`` are candidate
    seed rows (e.g. a robust design's: Γ_F lies in the NR cone since P̂ ∈ F, so NR seeded
    with them is never below that design). ``coarsen``: on large alphabets first solve the
    aggregated problem of :func:`coarse_aggregation` for the point set (its rows expand into
    the NR cone, see :class:`Aggregation`) with at most :data:`COARSE_SHARE` of the budget.
    """
    start = time.perf_counter()
    p = _check_inputs(distribution, time_budget)
    if np.any(p.sum(axis=1) <= 0):
        raise CGError("NR by column generation needs every sensitive value to occur in P̂")
    deadline = start + float(time_budget)
    cond = p / p.sum(axis=1, keepdims=True)
    cone = GammaCone(cond, epsilon)
    pf = p.reshape(-1)
    extra_rows = [np.atleast_2d(np.asarray(r, dtype=float)) for r in extra_rows]
    stages: list[dict] = []
    lifted = _coarse_stage(p, cond, epsilon, time_budget, extra_rows, stages, progress=progress) if coarsen else None
    if lifted is not None:
        lifted = _zero_cell_duals(p, lifted)
    master = _Master(p)
    seeds = [seed_columns(cone, extra_rows)]
    zero = np.flatnonzero(pf == 0)
    if zero.size:  # cells P̂_x = 0 are free in the NR cone; e_x keeps λ_x ≥ 0
        seeds.append(np.eye(pf.size)[zero])
    master.add(np.vstack(seeds))
    master = _solve_seeds(master, deadline)
    bound_eps = epsilon if bound_epsilon is None else float(bound_epsilon)
    best_bound, center = math.inf, None
    if lifted is not None:  # the coarse problem's duals, lifted: a valid bound, and a stability centre
        best_bound, center = float(lifted.sum() + nr_pricing(p, lifted, bound_eps, columns=1)[2]), lifted
    history = [(time.perf_counter() - start, master.value)]
    iterations, status = 0, "time_budget"
    per_round = max(8, pf.size // 4)
    while True:
        lam = _zero_cell_duals(p, master.duals)
        # Wentges smoothing: price at a point between the master's duals and the best-bound
        # duals so far (the stability centre); both points give valid Lagrangian bounds.
        points = [lam] if center is None else [lam, 0.5 * (lam + center)]
        new, found_positive = [], False
        for mu_point in points:
            cols, rcs, _ = nr_pricing(p, mu_point, epsilon, columns=per_round)
            bound = mu_point.sum() + nr_pricing(p, mu_point, bound_eps, columns=1)[2]
            if bound < best_bound:
                best_bound, center = bound, mu_point
            real = _objective(cols, pf, lam)  # reduced cost at the master's duals
            keep = real > PRICING_TOLERANCE * max(1.0, master.value)
            found_positive |= bool(keep.any())
            new.extend(cols[keep])
        if progress is not None:
            progress({"iteration": iterations, "seconds": time.perf_counter() - start,
                      "information": master.value, "columns": len(master.columns), "upper_bound": best_bound})
        if best_bound - master.value <= tolerance * max(1.0, master.value) or not found_positive:
            status = "converged"
            break
        if time.perf_counter() > deadline:
            break
        if iterations >= max_iterations:
            status = "iteration_limit"
            break
        iterations += 1
        if master.add(cone.repair(np.array(new))) == 0:
            status = "stalled"
            break
        if not master.solve(max(deadline - time.perf_counter(), 1e-3)):
            break
        history.append((time.perf_counter() - start, master.value))
    q = _certify(master.mechanism(), cone)
    from rldp.shared.utility import mutual_information

    info = mutual_information(q, p)
    return CGResult(q, info, master.value, iterations, len(master.columns), time.perf_counter() - start,
                    status == "converged", status, float(best_bound), "nr-lagrangian", history, stages,
                    master.duals.copy())


# ---------------------------------------------------------------------------
# Stretch: beyond the polytope, rows certified by the exact audit
# ---------------------------------------------------------------------------

def _audit_cone_violation(uset, rows: np.ndarray, epsilon: float) -> np.ndarray:
    """max_{s₁≠s₂} (max_{R∈F_U|s₁} R·v_s₁ − e^ε min_{R∈F_U|s₂} R·v_s₂) per row: ≤ 0 iff the
    row passes the exact audit (the cone K ⊇ Γ of rows whose every ratio is ≤ e^ε; K is
    convex since the max is convex and the min concave in v). Search only: every row that
    is kept is verified again by :func:`rldp.shared.audit.rldp_epsilon`."""
    a1, a2 = uset.n_sensitive, uset.n_released
    hi, lo = uset.extremes(np.atleast_2d(rows).reshape(-1, a1, a2))
    diff = hi[:, :, None] - math.exp(epsilon) * lo[:, None, :]
    diff[:, np.arange(a1), np.arange(a1)] = -np.inf
    return diff.reshape(len(diff), -1).max(axis=1)


def _into_audit_cone(uset, rows: np.ndarray, epsilon: float, steps: int = 40) -> np.ndarray:
    """Each row mixed with the constant row of its mass, as little as needed to enter K
    (bisection on the mixing weight; K is convex and contains the constant row)."""
    rows = np.atleast_2d(rows)
    const = np.repeat(rows.mean(axis=1, keepdims=True), rows.shape[1], axis=1)
    mix = lambda t: (1 - t)[:, None] * rows + t[:, None] * const
    ok = _audit_cone_violation(uset, rows, epsilon) <= 0
    lo, hi = np.zeros(len(rows)), np.where(ok, 0.0, 1.0)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        inside = _audit_cone_violation(uset, mix(mid), epsilon) <= 0
        hi, lo = np.where(inside, mid, hi), np.where(inside, lo, mid)
    return mix(hi)


def solve_exact_set_cg(uset, epsilon: float, *, time_budget: float = 60.0, widen: Iterable[float] = (1.25, 1.5, 2.0),
                       progress: Progress | None = None) -> CGResult:
    """PolyOpt-style design over the exact audit cone K ⊇ Γ (issue 5, stretch).

    Γ encloses each projected ball F_U|s in the polytope D_s; the exact audit uses the balls,
    so K = {v : max_{F_s₁} R·v_s₁ ≤ e^ε min_{F_s₂} R·v_s₂} is larger. Heuristic search: the
    columns of PolyOpt at ε, and of PolyOpt at widened levels ε' = w·ε (Γ_ε' reaches further
    out), each mixed towards the constant row just enough to enter K, then the master LP of
    Theorem 3 over all of them. Every column is verified row by row with the exact audit,
    and the final mechanism with :func:`rldp.shared.audit.audit_rldp`; if renormalisation
    ever broke it the PolyOpt mechanism is returned instead. The result is never below
    PolyOpt's (its columns are among the candidates).
    """
    from rldp.shared.audit import audit_rldp, rldp_epsilon
    from rldp.shared.utility import mutual_information

    start = time.perf_counter()
    p = _check_inputs(uset.public_distribution, time_budget)
    design_eps = epsilon * (1 - 1e-7)
    low = uset.lower_bounds()
    widen = list(widen)
    share = float(time_budget) / (len(widen) + 2)
    base = solve_polyopt_cg(p, low, design_eps, time_budget=share, bound_epsilon=epsilon, progress=progress)
    master = _Master(p)
    cols = [base.matrix]
    if p.size <= 9:  # small: every vertex of Γ̂ (exact PolyOpt) is a candidate too
        from .polyopt import enumerate_vertices, gamma_inequalities

        cols.append(enumerate_vertices(gamma_inequalities(low, design_eps)))
    for w in widen:
        if time.perf_counter() - start > time_budget - share:
            break
        wide = solve_polyopt_cg(p, low, design_eps * w, time_budget=share)
        cols.append(_into_audit_cone(uset, wide.matrix, design_eps))
    cand = np.vstack(cols)
    cand = cand[cand.sum(axis=1) > 0]
    certified = np.array([rldp_epsilon(r[None], uset)[0] <= design_eps for r in cand])
    master.add(cand[certified])
    if not master.solve():
        raise CGError("the master LP over the exact-set columns failed")
    q = np.maximum(master.mechanism(), 0.0)
    q = q / q.sum(axis=0, keepdims=True)
    if not audit_rldp(q, uset, epsilon).passed:  # pragma: no cover - renormalisation round-off
        q = base.matrix
    info = mutual_information(q, p)
    if info < base.information:  # pragma: no cover - the base columns are candidates
        q, info = base.matrix, base.information
    return CGResult(q, info, master.value, base.iterations, len(master.columns), time.perf_counter() - start,
                    False, "heuristic", None, None, base.history)
