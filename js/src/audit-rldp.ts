/**
 * The rldp [LZG24, Def 1, Thm 1] and ldp w.r.t. X [LZG24, Def 2] worst cases of a matrix, and a
 * document's uncertainty set and confidence check (port of `rldp.shared.audit.rldp` / `ldp`).
 */
import { jointMatrix, logRatio, RADIUS_RTOL } from "./audit-base.js";
import type { ValidDocument } from "./document.js";
import type { Matrix } from "./forms.js";
import { isObj, type Obj } from "./pyjson.js";
import { confidenceRadius, UncertaintySet } from "./uncertainty.js";

const GRR_ROUNDING = 1e-14;

/** max over y, s₁ ≠ s₂ of log(hi[y, s₁] / lo[y, s₂]) (floored at 0): the RLDP comparison. */
function pairwise(hi: Float64Array, lo: Float64Array, rows: number, a1: number): number {
  let worst = -Infinity;
  for (let y = 0; y < rows; y++) {
    for (let s1 = 0; s1 < a1; s1++) {
      for (let s2 = 0; s2 < a1; s2++) {
        if (s1 === s2) continue;
        const r = logRatio(hi[y * a1 + s1], lo[y * a1 + s2]);
        if (r > worst) worst = r;
      }
    }
  }
  return worst === -Infinity ? 0 : Math.max(worst, 0);
}

/** (d, o) when Q is GRR-shaped (square, k ≥ 2, one value on the diagonal, one elsewhere), else null. */
export function grrValues(q: Matrix): [number, number] | null {
  const k = q.rows;
  if (q.cols !== k || k < 2) return null;
  const d = q.data[0];
  const o = q.data[k];
  let same = 0;
  for (let i = 0; i < k; i++) if (q.data[i * k + i] !== d) return null;
  for (let i = 0; i < q.data.length; i++) if (q.data[i] === o) same++;
  return same === k * k - (d === o ? 0 : k) ? [d, o] : null;
}

/** (max, min) of Q_y|s · R over F_U|s, each (size × |S|), for GRR with values (d, o) [LZG24, eq 56]. */
function grrExtremes(d: number, o: number, size: number, uset: UncertaintySet): [Float64Array, Float64Array] {
  const [a1, a2] = [uset.nSensitive, uset.nReleased];
  const c = d - o;
  const [lower, upper] = uset.cellRange();
  const spikeHi = (i: number) => (o + c * (c >= 0 ? upper[i] : lower[i])) * (1 + GRR_ROUNDING);
  const spikeLo = (i: number) => Math.max((o + c * (c >= 0 ? lower[i] : upper[i])) * (1 - GRR_ROUNDING), 0);
  const hi = new Float64Array(size * a1);
  const lo = new Float64Array(size * a1);
  if (size === a2 && size !== a1 * a2) {
    for (let u = 0; u < a2; u++) {
      for (let s = 0; s < a1; s++) {
        hi[u * a1 + s] = spikeHi(s * a2 + u);
        lo[u * a1 + s] = spikeLo(s * a2 + u);
      }
    }
    return [hi, lo];
  }
  hi.fill(o);
  lo.fill(o);
  for (let y = 0; y < size; y++) {
    const s0 = Math.floor(y / a2);
    hi[y * a1 + s0] = spikeHi(y);
    lo[y * a1 + s0] = spikeLo(y);
  }
  return [hi, lo];
}

/** (max, min) of every block Q_y|s · R over F_U|s, searching only blocks without a closed form. */
function blockExtremes(q: Matrix, uset: UncertaintySet): [Float64Array, Float64Array] {
  const [a1, a2] = [uset.nSensitive, uset.nReleased];
  const [lower, upper] = uset.cellRange();
  const hi = new Float64Array(q.rows * a1);
  const lo = new Float64Array(q.rows * a1);
  for (let y = 0; y < q.rows; y++) {
    for (let s = 0; s < a1; s++) {
      const block = q.data.subarray(y * q.cols + s * a2, y * q.cols + (s + 1) * a2);
      let top = -Infinity;
      let bottom = Infinity;
      let argTop = 0;
      let argBottom = 0;
      for (let u = 0; u < a2; u++) {
        if (block[u] > top) [top, argTop] = [block[u], u];
        if (block[u] < bottom) [bottom, argBottom] = [block[u], u];
      }
      const at = y * a1 + s;
      if (top === bottom) {
        hi[at] = top;
        lo[at] = Math.max(bottom, 0);
        continue;
      }
      let atTop = 0;
      let atBottom = 0;
      for (let u = 0; u < a2; u++) {
        if (block[u] === top) atTop++;
        if (block[u] === bottom) atBottom++;
      }
      let base: number;
      let spike: number;
      let pos: number;
      if (atBottom === a2 - 1) [base, spike, pos] = [bottom, top, argTop];
      else if (atTop === a2 - 1) [base, spike, pos] = [top, bottom, argBottom];
      else {
        const [h, l] = uset.extremes(block, s);
        hi[at] = h;
        lo[at] = Math.max(l, 0);
        continue;
      }
      const c = spike - base;
      const i = s * a2 + pos;
      const big = c >= 0 ? upper[i] : lower[i];
      const small = c >= 0 ? lower[i] : upper[i];
      hi[at] = (base + c * big) * (1 + GRR_ROUNDING);
      lo[at] = Math.max((base + c * small) * (1 - GRR_ROUNDING), 0);
    }
  }
  return [hi, lo];
}

/** Exact worst-case ε of Q over F′ = {P : P_U|s ∈ F_U|s ∀s} [LZG24, Thm 1]. */
export function rldpEpsilon(q: Matrix, uset: UncertaintySet): number {
  const [a1, a2] = [uset.nSensitive, uset.nReleased];
  const grr = grrValues(q);
  if (grr && (q.cols === a1 * a2 || q.cols === a2)) {
    const [hi, lo] = grrExtremes(grr[0], grr[1], q.cols, uset);
    return pairwise(hi, lo, q.cols, a1);
  }
  const joint = jointMatrix(q, a1, a2);
  const [hi, lo] = blockExtremes(joint, uset);
  return pairwise(hi, lo, q.rows, a1);
}

/** The rldp ε of a validated document, from a GRR form's two values when it has them. */
export function documentRldpEpsilon(v: ValidDocument, uset: UncertaintySet, matrix?: Matrix): number {
  const spec = matrix ? null : v.compact?.spec;
  if (spec && spec.form === "grr") {
    const size = Number(spec.size);
    if (size === uset.nSensitive * uset.nReleased || size === uset.nReleased) {
      const [hi, lo] = grrExtremes(spec.diagonal as number, spec.off_diagonal as number, size, uset);
      return pairwise(hi, lo, size, uset.nSensitive);
    }
  }
  return rldpEpsilon(matrix ?? v.matrix(), uset);
}

/** Ordinary LDP ε w.r.t. X: max over y of log(max_x Q(y|x) / min_x Q(y|x)) [LZG24, Def 2]. */
export function ldpEpsilon(q: Matrix): number {
  let worst = -Infinity;
  for (let y = 0; y < q.rows; y++) {
    let top = -Infinity;
    let bottom = Infinity;
    for (let x = 0; x < q.cols; x++) {
      const v = q.data[y * q.cols + x];
      if (v > top) top = v;
      if (v < bottom) bottom = v;
    }
    const r = logRatio(top, bottom);
    if (r > worst) worst = r;
  }
  return worst === -Infinity ? 0 : Math.max(worst, 0);
}

/** The document's uncertainty set and `privacy.uncertainty` parameters. */
export function documentUncertainty(v: ValidDocument, privacy: Obj): { uset: UncertaintySet; n: number | null; beta: number | null } {
  const unc = privacy.uncertainty as Obj;
  const radius = unc.radius === null ? Infinity : Number(unc.radius);
  const box = isObj(unc.box) ? ([unc.box.lower, unc.box.upper] as [unknown, unknown]) : null; // checked by validateDocument
  const uset = new UncertaintySet(v.publicDistribution, radius, Number(unc.order), box);
  const n = unc.n === undefined || unc.n === null ? null : Number(unc.n);
  const beta = unc.beta === undefined || unc.beta === null ? null : Number(unc.beta);
  return { uset, n, beta };
}

/** Why the stated radius overstates the confidence its n and β imply [LZG24, eq 9], or null. */
export function confidenceShortfall(uset: UncertaintySet, n: number | null, beta: number | null): string | null {
  if (n === null || beta === null || !Number.isFinite(uset.radius)) return null;
  const needed = confidenceRadius(n, beta, uset.nSensitive * uset.nReleased, uset.order);
  if (uset.radius >= needed * (1 - RADIUS_RTOL)) return null;
  return `radius ${uset.radius} is smaller than the ${1 - beta}-confidence radius ${needed} implied by n=${n} and beta=${beta}`;
}
