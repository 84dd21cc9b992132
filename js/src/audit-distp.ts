/**
 * The distp audit [KM19, Def 3] (port of `rldp.shared.audit.distp`): robust δ over F′ by
 * enumerating output sets (small shapes) or the per-output bound.
 */
import { AUDIT_TOLERANCE, conditionalOutputs, jointMatrix, type AuditResult } from "./audit-base.js";
import { rldpEpsilon } from "./audit-rldp.js";
import type { Matrix } from "./forms.js";
import type { UncertaintySet } from "./uncertainty.js";

const EXACT_SUBSET_MAX_OUTPUTS = 12;
const EXACT_SUBSET_MAX_ENTRIES = 2 ** 17;

/** The smallest t ≥ 0 with E_t(p ‖ q) = Σ max(0, p − t q) ≤ δ (Infinity if none) [KM19, Def 5]. */
export function hockeyStickThreshold(p: ArrayLike<number>, q: ArrayLike<number>, delta: number): number {
  let uncovered = 0;
  const pairs: [number, number, number][] = [];
  for (let i = 0; i < p.length; i++) {
    if (q[i] <= 0) uncovered += p[i];
    else if (p[i] > 0) pairs.push([p[i], q[i], i]);
  }
  if (uncovered > delta) return Infinity;
  // Stable sort by decreasing ratio (numpy's argsort(-(a/b), kind="stable")).
  pairs.sort((x, y) => -(x[0] / x[1]) - -(y[0] / y[1]) || x[2] - y[2]);
  const m = pairs.length;
  const aBefore = new Float64Array(m + 1);
  const bBefore = new Float64Array(m + 1);
  for (let k = 0; k < m; k++) {
    aBefore[k + 1] = aBefore[k] + pairs[k][0];
    bBefore[k + 1] = bBefore[k] + pairs[k][1];
  }
  let k = m;
  for (let j = 0; j < m; j++) {
    const ratio = pairs[j][0] / pairs[j][1];
    if (uncovered + aBefore[j] - ratio * bBefore[j] > delta) {
      k = j;
      break;
    }
  }
  if (k === m && uncovered + aBefore[m] <= delta) return 0;
  return Math.max((uncovered + aBefore[k] - delta) / bBefore[k], 0);
}

const logFloor = (t: number) => (t <= 1 ? 0 : Math.log(t));

/** Worst entry of an (|S| × |S|) table over s ≠ s′ both kept (0 when nothing leaks). */
function worstPair(table: Float64Array, keep: boolean[]): number {
  const k = keep.length;
  let worst = -Infinity;
  for (let s1 = 0; s1 < k; s1++) {
    for (let s2 = 0; s2 < k; s2++) {
      if (s1 === s2 || !keep[s1] || !keep[s2]) continue;
      if (table[s1 * k + s2] > worst) worst = table[s1 * k + s2];
    }
  }
  return worst <= 0 ? 0 : worst;
}

/** Audit an (ε, δ)-DistP claim between every pair P_U|θ over F′; `epsilon` is the robust ε at δ = 0. */
export function distpAudit(matrix: Matrix, uset: UncertaintySet, eps: number, delta: number): AuditResult {
  const [a1, a2] = [uset.nSensitive, uset.nReleased];
  const q = jointMatrix(matrix, a1, a2);
  const epsZero = rldpEpsilon(q, uset);
  const b = q.rows;
  const subsets = b <= EXACT_SUBSET_MAX_OUTPUTS && (2 ** b - 1) * a1 * a2 <= EXACT_SUBSET_MAX_ENTRIES;
  const n = subsets ? 2 ** b - 1 : b;
  const hi = new Float64Array(n * a1);
  const lo = new Float64Array(n * a1);
  const row = new Float64Array(a2);
  for (let r = 0; r < n; r++) {
    for (let s = 0; s < a1; s++) {
      if (subsets) {
        row.fill(0);
        for (let y = 0; y < b; y++) {
          if (((r + 1) >> y) & 1) for (let u = 0; u < a2; u++) row[u] += q.data[y * q.cols + s * a2 + u];
        }
      } else row.set(q.data.subarray(r * q.cols + s * a2, r * q.cols + (s + 1) * a2));
      const [h, l] = uset.extremes(row, s);
      hi[r * a1 + s] = h;
      lo[r * a1 + s] = Math.max(l, 0);
    }
  }
  const cond = { rows: a1, cols: a2, data: uset.conditionals };
  const point = conditionalOutputs(q, cond).out; // P̂(y|s), |S| × |Y|
  const t = Math.exp(eps);
  const table = new Float64Array(a1 * a1);
  for (let s1 = 0; s1 < a1; s1++) {
    for (let s2 = 0; s2 < a1; s2++) {
      let bound: number;
      if (subsets) {
        bound = -Infinity;
        for (let r = 0; r < n; r++) bound = Math.max(bound, hi[r * a1 + s1] - t * lo[r * a1 + s2]);
      } else {
        bound = 0;
        for (let r = 0; r < n; r++) bound += Math.max(hi[r * a1 + s1] - t * lo[r * a1 + s2], 0);
        bound = Math.min(bound, 1);
      }
      let pt = 0;
      for (let y = 0; y < b; y++) pt += Math.max(point[s1 * b + y] - t * point[s2 * b + y], 0);
      table[s1 * a1 + s2] = Math.max(Math.max(bound, pt), 0);
    }
  }
  const keep = new Array(a1).fill(true);
  const deltaRobust = worstPair(table, keep);
  const passed = deltaRobust <= delta + AUDIT_TOLERANCE;
  return {
    notion: "distp",
    epsilon: epsZero,
    claimed: eps,
    passed,
    reasons: passed ? [] : [`audited distp delta ${deltaRobust} at epsilon ${eps} exceeds the claimed delta ${delta}`],
    extra: { delta: deltaRobust, delta_claimed: delta, delta_exact: subsets },
  };
}

/** The robust ε at δ of distp (the smallest ε whose robust δ is ≤ δ); exported for completeness. */
export function distpEpsilonAt(point: Float64Array, b: number, a1: number, delta: number): number {
  const table = new Float64Array(a1 * a1);
  for (let s1 = 0; s1 < a1; s1++) {
    for (let s2 = 0; s2 < a1; s2++) {
      table[s1 * a1 + s2] = logFloor(hockeyStickThreshold(point.subarray(s1 * b, (s1 + 1) * b), point.subarray(s2 * b, (s2 + 1) * b), delta));
    }
  }
  return worstPair(table, new Array(a1).fill(true));
}
