/**
 * The srlip audit [LTS20, Def 3] (port of `rldp.shared.audit.srlip`): SRLIP over every side
 * channel J ⊆ the released attributes.
 */
import { AUDIT_TOLERANCE, jointMatrix, logRatio, type AuditResult } from "./audit-base.js";
import { ldpEpsilon } from "./audit-rldp.js";
import type { Matrix } from "./forms.js";
import type { UncertaintySet } from "./uncertainty.js";

/** Both sides of the SRLIP ratio at one distribution, exact over every side channel J [LTS20, eq 22]. */
export function srlipLeakage(matrix: Matrix, joint: Matrix, sizes: number[]): { lower: number; upper: number } {
  const total = joint.data.reduce((a, v) => a + v, 0);
  const [c, nu] = [joint.rows, joint.cols];
  const p = joint.data.map((v) => v / total);
  const q = jointMatrix(matrix, c, nu);
  const b = q.rows;
  const m = sizes.length;
  const strides = sizes.map(() => 1);
  for (let j = m - 2; j >= 0; j--) strides[j] = strides[j + 1] * sizes[j + 1];
  let bestLower = 0;
  let bestUpper = 0;
  for (let subset = 0; subset < 2 ** m; subset++) {
    const kept = [...Array(m).keys()].filter((j) => (subset >> j) & 1);
    const nJ = kept.reduce((acc, j) => acc * sizes[j], 1);
    const index = new Int32Array(nu); // u → its x^J (last kept attribute fastest)
    for (let u = 0; u < nu; u++) {
      let ix = 0;
      for (const j of kept) ix = ix * sizes[j] + (Math.floor(u / strides[j]) % sizes[j]);
      index[u] = ix;
    }
    const pJ = new Float64Array(c * nJ);
    for (let s = 0; s < c; s++) for (let u = 0; u < nu; u++) pJ[s * nJ + index[u]] += p[s * nu + u];
    const pX = new Float64Array(nJ);
    for (let s = 0; s < c; s++) for (let x = 0; x < nJ; x++) pX[x] += pJ[s * nJ + x];
    const nYsx = new Float64Array(c * nJ);
    for (let y = 0; y < b; y++) {
      nYsx.fill(0);
      for (let s = 0; s < c; s++) {
        for (let u = 0; u < nu; u++) nYsx[s * nJ + index[u]] += q.data[y * q.cols + s * nu + u] * p[s * nu + u];
      }
      for (let x = 0; x < nJ; x++) {
        let ny = 0;
        for (let s = 0; s < c; s++) ny += nYsx[s * nJ + x];
        const marg = ny / pX[x];
        for (let s = 0; s < c; s++) {
          const pj = pJ[s * nJ + x];
          if (!(pj > 0)) continue;
          const cond = nYsx[s * nJ + x] / pj;
          const up = logRatio(cond, marg);
          if (up > bestUpper) bestUpper = up;
          if (marg > 0) {
            const down = logRatio(marg, cond);
            if (down > bestLower) bestLower = down;
          }
        }
      }
    }
  }
  return { lower: bestLower, upper: bestUpper };
}

/** Audit an ε-SRLIP claim: exact at P̂ (radius 0), else the bound valid for every distribution. */
export function srlipAudit(matrix: Matrix, uset: UncertaintySet, sizes: number[], claimed: number): AuditResult {
  let leak = srlipLeakage(matrix, uset.publicDistribution, sizes);
  if (uset.radius !== 0) {
    const q = jointMatrix(matrix, uset.nSensitive, uset.nReleased);
    const bound = Math.max(ldpEpsilon(q), Math.max(leak.lower, leak.upper));
    leak = { lower: bound, upper: bound };
  }
  const eps = Math.max(leak.lower, leak.upper);
  const passed = eps <= claimed + AUDIT_TOLERANCE;
  return {
    notion: "srlip",
    epsilon: eps,
    claimed,
    passed,
    reasons: passed ? [] : [`audited SRLIP epsilon ${eps} exceeds the claimed ${claimed}`],
    extra: { epsilon_lower: leak.lower, epsilon_upper: leak.upper },
  };
}
