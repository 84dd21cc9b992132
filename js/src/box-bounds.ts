/**
 * A pilot's confidence box as a constraint on the conditionals P_U|s (port of `rldp.shared.box_bounds`;
 * docs/design.md, "A pilot's F: the ball and its box"): the check of a document's box, the bounds
 * (L, U) on P_U|s it implies, and the support function of K_s = {R in the simplex : L ≤ R ≤ U}
 * (a fractional knapsack). Sums are numpy's (pairwise), both bounds are rounded outwards by 8 ulps
 * and the knapsack's maximum up, as in Python, so values built from them are conservative.
 */
import { ValidationError } from "./errors.js";
import { STOCHASTIC_TOLERANCE } from "./forms.js";
import { isNumber } from "./pyjson.js";

/** Relative outward rounding of the conditional bounds (a handful of ulps of the divisions). */
const ROUND = 8 * Number.EPSILON;

/** numpy's sum of a contiguous float64 vector (pairwise, 8 accumulators per block of ≤ 128): the same bits. */
export function npSum(a: ArrayLike<number>, start = 0, n = a.length - start): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += a[start + i];
    return res;
  }
  if (n <= 128) {
    const r = [0, 1, 2, 3, 4, 5, 6, 7].map((j) => a[start + j]);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[start + i + j];
    let res = r[0] + r[1] + (r[2] + r[3]) + (r[4] + r[5] + (r[6] + r[7]));
    for (; i < n; i++) res += a[start + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return npSum(a, start, n2) + npSum(a, start + n2, n - n2);
}

/** Python's `format(x, ".{digits}g")` (round half to even on the exact binary value; messages only). */
export function formatG(x: number, digits = 12): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const sign = x < 0 ? "-" : "";
  // 100 significant digits: exact for every double this formats (|x| ≥ 1e-30: at most ~90 digits).
  const [mant, expText] = Math.abs(x).toExponential(99).split("e");
  const all = mant.replace(".", "");
  let e = Number(expText);
  const rest = all.slice(digits);
  let head = all.slice(0, digits);
  const half = rest[0] > "5" || (rest[0] === "5" && (/[1-9]/.test(rest.slice(1)) || Number(head[digits - 1]) % 2 === 1));
  if (half) {
    const up = (BigInt(head) + 1n).toString();
    if (up.length > digits) e += 1;
    head = up.slice(0, digits);
  }
  const trim = (s: string) => s.replace(/0+$/, "");
  if (e >= -4 && e < digits) {
    const text = e < 0 ? `0.${"0".repeat(-e - 1)}${head}` : `${head.slice(0, e + 1)}.${head.slice(e + 1)}`;
    return sign + trim(text).replace(/\.$/, "");
  }
  const m = trim(head.slice(1));
  return `${sign}${head[0]}${m ? `.${m}` : ""}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}

/** numpy's shape of nested lists of numbers, or null when they are ragged (numpy's ValueError). */
function shapeOf(v: unknown): number[] | null {
  if (!Array.isArray(v)) return [];
  if (!v.length) return [0];
  const first = shapeOf(v[0]);
  if (first === null) return null;
  for (let i = 1; i < v.length; i++) {
    const other = shapeOf(v[i]);
    if (other === null || other.length !== first.length || other.some((d, j) => d !== first[j])) return null;
  }
  return [v.length, ...first];
}

/** Does every leaf of `v` hold a number (an int or a float, never a boolean, a string, null or an object)? */
function numbersOnly(v: unknown): boolean {
  if (Array.isArray(v)) return v.every(numbersOnly);
  return isNumber(v);
}

function side(value: unknown, name: string, shape: [number, number]): Float64Array {
  if (value instanceof Float64Array && value.length === shape[0] * shape[1]) return Float64Array.from(value);
  const refusal = `box.${name} must be a ${shape[0]}×${shape[1]} array of numbers`;
  if (!numbersOnly(value)) throw new ValidationError(refusal);
  const dims = shapeOf(value);
  if (dims === null) throw new ValidationError(refusal);
  if (dims.length !== 2 || dims[0] !== shape[0] || dims[1] !== shape[1]) {
    const text = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(", ")})`;
    throw new ValidationError(`box.${name} has shape ${text}; expected ${shape[0]}×${shape[1]} (|S| × |U|)`);
  }
  const out = new Float64Array(shape[0] * shape[1]);
  const rows = value as unknown[][];
  for (let s = 0; s < shape[0]; s++) for (let u = 0; u < shape[1]; u++) out[s * shape[1] + u] = Number(rows[s][u] as number | bigint);
  return out;
}

/**
 * (ℓ, u) as row-major (|S|·|U|) arrays, or a ValidationError naming what is wrong (Python's messages):
 * numbers, of `shape`, finite, 0 ≤ ℓ ≤ u ≤ 1, and a box that meets the simplex (Σℓ ≤ 1 ≤ Σu, ±1e-9).
 * The shape is checked before anything of the box's size is allocated.
 */
export function checkBox(lower: unknown, upper: unknown, shape: [number, number]): [Float64Array, Float64Array] {
  const out: Float64Array[] = [];
  for (const [name, value] of [["lower", lower], ["upper", upper]] as const) {
    const arr = side(value, name, shape);
    if (arr.some((v) => !Number.isFinite(v) || v < 0 || v > 1)) throw new ValidationError(`box.${name} must hold finite numbers in [0, 1]`);
    out.push(arr);
  }
  const [lo, up] = out;
  if (lo.some((v, i) => v > up[i])) throw new ValidationError("box.lower must be ≤ box.upper in every cell");
  const [sumLo, sumUp] = [npSum(lo), npSum(up)];
  if (sumLo > 1 + STOCHASTIC_TOLERANCE || sumUp < 1 - STOCHASTIC_TOLERANCE) {
    throw new ValidationError(
      `box must meet the simplex: Σ lower ≤ 1 ≤ Σ upper (±1e-9); got Σ lower = ${formatG(sumLo)}, Σ upper = ${formatG(sumUp)}`,
    );
  }
  return [lo, up];
}

/** Row sums of a row-major (rows × cols) array, as numpy's `sum(axis=1)`. */
export function rowSums(a: Float64Array, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows);
  for (let s = 0; s < rows; s++) out[s] = npSum(a, s * cols, cols);
  return out;
}

/** (L, U), each (|S|·|U|): bounds on P_U|s for every P in the box ∩ simplex (`conditional_bounds`). */
export function conditionalBounds(lower: Float64Array, upper: Float64Array, rows: number, cols: number): [Float64Array, Float64Array] {
  const m = rowSums(lower, rows, cols);
  const bigM = rowSums(upper, rows, cols);
  const [mTotal, bigMTotal] = [npSum(m), npSum(bigM)];
  const condL = new Float64Array(rows * cols);
  const condU = new Float64Array(rows * cols);
  for (let s = 0; s < rows; s++) {
    const lowS = Math.max(m[s], 1 - (bigMTotal - bigM[s]));
    const highS = Math.min(bigM[s], 1 - (mTotal - m[s]));
    for (let u = 0; u < cols; u++) {
      const i = s * cols + u;
      const denL = Math.min(lower[i] + (bigM[s] - upper[i]), highS);
      const denU = Math.max(upper[i] + (m[s] - lower[i]), lowS);
      const l = lower[i] > 0 && denL > 0 ? lower[i] / denL : 0;
      const h = denU > 0 ? upper[i] / denU : 1;
      condL[i] = Math.min(Math.max(l * (1 - ROUND), 0), 1);
      condU[i] = Math.max(Math.min(Math.max(h * (1 + ROUND), 0), 1), condL[i]);
    }
  }
  return [condL, condU];
}

/**
 * max q·R over {R in the simplex : low ≤ R ≤ high} for one row (Σ low ≤ 1 ≤ Σ high): low everywhere, then
 * 1 − Σ low into the largest q first, each up to high; rounded up by 8 ulps of Σ|q·R| (`knapsack_maximum`).
 * `sign` −1 gives max (−q)·R, so −knapsackMaximum(q, …, −1) is the minimum of q·R.
 */
export function knapsackMaximum(q: ArrayLike<number>, low: ArrayLike<number>, high: ArrayLike<number>, sign = 1): number {
  const k = low.length;
  const order = Array.from({ length: k }, (_, i) => i).sort((a, b) => sign * q[b] - sign * q[a] || a - b);
  const left = Math.max(1 - npSum(low), 0);
  // As numpy: Σ q·low and Σ q·take (each with its |q| twin for the rounding) summed apart, then added.
  let atLow = 0;
  let scaleLow = 0;
  for (let u = 0; u < k; u++) {
    atLow += sign * q[u] * low[u];
    scaleLow += Math.abs(q[u]) * low[u];
  }
  let total = 0;
  let atTake = 0;
  let scaleTake = 0;
  for (const u of order) {
    const room = high[u] - low[u];
    total += room;
    const take = Math.min(Math.max(left - (total - room), 0), room);
    atTake += sign * q[u] * take;
    scaleTake += Math.abs(q[u]) * take;
  }
  const value = atLow + atTake;
  const scale = scaleLow + scaleTake;
  return value + ROUND * scale;
}
