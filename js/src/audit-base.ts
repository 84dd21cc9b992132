/**
 * What every audit shares (port of `rldp.shared.audit.base`): the result type, the pass
 * tolerance and the arithmetic of log-ratios over a matrix whose columns are (s, u) or u.
 */
import { DocumentError } from "./errors.js";
import type { Matrix } from "./forms.js";

export const AUDIT_TOLERANCE = 1e-9;
export const RADIUS_RTOL = 1e-9;

/** The outcome of an audit: the audited worst case (nats, may be Infinity) and whether it passed. */
export interface AuditResult {
  notion: string;
  epsilon: number;
  claimed: number;
  passed: boolean;
  reasons: string[];
  /** distp's `delta`, lip/alip/srlip's `epsilon_lower` / `epsilon_upper`, ... */
  extra: Record<string, number | string | boolean>;
  /** The single-report audit (R·Q against ε₁) of a document with a per-report layer. */
  perReport?: AuditResult;
}

/** log(num/den) with 0/0 → −inf and x/0 → +inf. */
export function logRatio(num: number, den: number): number {
  if (num <= 0) return -Infinity;
  if (den <= 0) return Infinity;
  return Math.log(num) - Math.log(den);
}

/** Q as a function of (s, u): a latent-S matrix (|U| columns) repeated once per s. */
export function jointMatrix(q: Matrix, a1: number, a2: number): Matrix {
  if (q.cols === a1 * a2) return q;
  if (q.cols !== a2) throw new DocumentError(`matrix has ${q.cols} columns; expected |S|·|U| = ${a1 * a2} or |U| = ${a2}`);
  const data = new Float64Array(q.rows * a1 * a2);
  for (let y = 0; y < q.rows; y++) for (let s = 0; s < a1; s++) data.set(q.data.subarray(y * a2, (y + 1) * a2), y * a1 * a2 + s * a2);
  return { rows: q.rows, cols: a1 * a2, data };
}

/** P(y|s) (|S| × |Y|) and the values s with mass, for a joint P over (s, u) (counts normalised). */
export function conditionalOutputs(q: Matrix, p: Matrix): { out: Float64Array; keep: boolean[] } {
  const [a1, a2] = [p.rows, p.cols];
  const joint = jointMatrix(q, a1, a2);
  const out = new Float64Array(a1 * q.rows);
  const keep: boolean[] = [];
  for (let s = 0; s < a1; s++) {
    let mass = 0;
    for (let u = 0; u < a2; u++) mass += p.data[s * a2 + u];
    keep.push(mass > 0);
    if (!(mass > 0)) continue;
    for (let y = 0; y < q.rows; y++) {
      let acc = 0;
      for (let u = 0; u < a2; u++) acc += joint.data[y * joint.cols + s * a2 + u] * (p.data[s * a2 + u] / mass);
      out[s * q.rows + y] = acc;
    }
  }
  return { out, keep };
}
