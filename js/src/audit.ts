/**
 * The exact privacy audits of every notion a document may claim (port of `rldp.shared.audit`):
 * rldp [LZG24, Def 1, Thm 1], ldp w.r.t. X [LZG24, Def 2] or w.r.t. S over F [LTS20, Def 1],
 * lip / alip [LTS20, Def 2; ZDS23, Def 3] exact at P̂ and over F″, distp [KM19, Def 3], srlip
 * [LTS20, Def 3], and the per-report layer (R·Q against ε₁). Same formulas, same order of
 * operations where it matters, same pass rule (audited ≤ claimed + 1e-9).
 */
import { AuditError, DocumentError, UnknownNotion } from "./errors.js";
import type { Matrix } from "./forms.js";
import type { Obj } from "./pyjson.js";
import { confidenceRadius, UncertaintySet } from "./uncertainty.js";
import type { ValidDocument } from "./document.js";
import { distpAudit, srlipAudit } from "./audit-more.js";

export const AUDIT_TOLERANCE = 1e-9;
export const RADIUS_RTOL = 1e-9;
const GRR_ROUNDING = 1e-14;

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
function documentRldpEpsilon(v: ValidDocument, uset: UncertaintySet, matrix?: Matrix): number {
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
  const uset = new UncertaintySet(v.publicDistribution, radius, Number(unc.order));
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

function withShortfall(result: AuditResult, shortfall: string | null): AuditResult {
  return shortfall === null ? result : { ...result, passed: false, reasons: [...result.reasons, shortfall] };
}

// --------------------------------------------------------------------------- lip and alip

/** Both sides of the lift leakage: ε_lower = max −log l(s, y), ε_upper = max log l(s, y). */
export interface LipLeakage {
  lower: number;
  upper: number;
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

function normalised(p: Matrix): Matrix {
  const total = p.data.reduce((a, b) => a + b, 0);
  return { rows: p.rows, cols: p.cols, data: p.data.map((v) => v / total) };
}

function floor0(worst: number): number {
  return worst === -Infinity ? 0 : Math.max(worst, 0);
}

/** ε_lower and ε_upper of the lift at one distribution [LTS20, eq 3; ZDS23, Def 3]. */
export function lipLeakage(q: Matrix, joint: Matrix): LipLeakage {
  const p = normalised(joint);
  const { out, keep } = conditionalOutputs(q, p);
  const [a1, b] = [p.rows, q.rows];
  const ps = new Float64Array(a1);
  for (let s = 0; s < a1; s++) for (let u = 0; u < p.cols; u++) ps[s] += p.data[s * p.cols + u];
  let upper = -Infinity;
  let lower = -Infinity;
  for (let y = 0; y < b; y++) {
    let py = 0;
    for (let s = 0; s < a1; s++) py += out[s * b + y] * ps[s];
    for (let s = 0; s < a1; s++) {
      if (!keep[s]) continue;
      const c = out[s * b + y];
      upper = Math.max(upper, logRatio(c, py));
      if (py > 0) lower = Math.max(lower, logRatio(py, c));
    }
  }
  return { lower: floor0(lower), upper: floor0(upper) };
}

/** ε_lower and ε_upper over F″ = F_S × Π_s F_U|s ⊇ F, exact over F″ (never below P̂'s). */
export function robustLipLeakage(q: Matrix, uset: UncertaintySet): LipLeakage {
  const [a1, a2] = [uset.nSensitive, uset.nReleased];
  const joint = jointMatrix(q, a1, a2);
  const b = q.rows;
  const hi = new Float64Array(b * a1);
  const lo = new Float64Array(b * a1);
  for (let y = 0; y < b; y++) {
    for (let s = 0; s < a1; s++) {
      const [h, l] = uset.extremes(joint.data.subarray(y * joint.cols + s * a2, y * joint.cols + (s + 1) * a2), s);
      hi[y * a1 + s] = Math.min(h, 1);
      lo[y * a1 + s] = Math.max(l, 0);
    }
  }
  const marginal = new UncertaintySet({ rows: 1, cols: a1, data: uset.marginal.slice() }, uset.radius, uset.order);
  const c = new Float64Array(a1);
  let upper = -Infinity;
  let lower = -Infinity;
  const unused: boolean[] = [];
  for (let s = 0; s < a1; s++) {
    c.fill(0);
    c[s] = 1;
    unused.push(marginal.extremes(c, 0)[0] <= 0);
  }
  for (let y = 0; y < b; y++) {
    for (let s = 0; s < a1; s++) {
      if (unused[s]) continue;
      for (let t = 0; t < a1; t++) c[t] = t === s ? hi[y * a1 + s] : lo[y * a1 + t];
      const denUp = Math.max(marginal.extremes(c, 0)[1], 0);
      for (let t = 0; t < a1; t++) c[t] = t === s ? lo[y * a1 + s] : hi[y * a1 + t];
      const denLo = marginal.extremes(c, 0)[0];
      upper = Math.max(upper, logRatio(hi[y * a1 + s], denUp));
      if (denLo > 0) lower = Math.max(lower, logRatio(denLo, lo[y * a1 + s]));
    }
  }
  const point = lipLeakage(joint, uset.publicDistribution);
  return { lower: Math.max(floor0(lower), point.lower), upper: Math.max(floor0(upper), point.upper) };
}

function alipAudit(q: Matrix, uset: UncertaintySet, el: number, eu: number, notion: string): AuditResult {
  const robust = uset.radius === 0 ? lipLeakage(q, uset.publicDistribution) : robustLipLeakage(q, uset);
  const reasons: string[] = [];
  if (robust.lower > el + AUDIT_TOLERANCE) reasons.push(`audited min-lift epsilon_lower ${robust.lower} exceeds the claimed ${el}`);
  if (robust.upper > eu + AUDIT_TOLERANCE) reasons.push(`audited max-lift epsilon_upper ${robust.upper} exceeds the claimed ${eu}`);
  return {
    notion,
    epsilon: Math.max(robust.lower, robust.upper),
    claimed: Math.max(el, eu),
    passed: !reasons.length,
    reasons,
    extra: { epsilon_lower: robust.lower, epsilon_upper: robust.upper },
  };
}

// --------------------------------------------------------------------------- dispatch

/** The audit of one notion on a validated document (`matrix`: a composed R·Q instead of Q). */
type NotionAudit = (v: ValidDocument, privacy: Obj, matrix?: Matrix) => AuditResult;

function rldpResult(notion: string, eps: number, claimed: number, what = "audited epsilon"): AuditResult {
  const passed = eps <= claimed + AUDIT_TOLERANCE;
  return { notion, epsilon: eps, claimed, passed, reasons: passed ? [] : [`${what} ${eps} exceeds the claimed ${claimed}`], extra: {} };
}

export const NOTIONS: Record<string, { audit: NotionAudit; perReport: boolean }> = {
  rldp: {
    perReport: true,
    audit: (v, privacy, matrix) => {
      const { uset, n, beta } = documentUncertainty(v, privacy);
      const result = rldpResult("rldp", documentRldpEpsilon(v, uset, matrix), Number(privacy.epsilon));
      return withShortfall(result, confidenceShortfall(uset, n, beta));
    },
  },
  ldp: {
    perReport: true,
    audit: (v, privacy, matrix) => {
      const claimed = Number(privacy.epsilon);
      if ("uncertainty" in privacy) {
        const { uset, n, beta } = documentUncertainty(v, privacy);
        const result = rldpResult("ldp", documentRldpEpsilon(v, uset, matrix), claimed, "audited LDP epsilon w.r.t. S");
        return withShortfall(result, confidenceShortfall(uset, n, beta));
      }
      const spec = matrix ? null : v.compact?.spec;
      let eps: number;
      if (spec && spec.form === "grr") {
        const [d, o] = [spec.diagonal as number, spec.off_diagonal as number];
        eps = d === o ? 0 : Math.min(d, o) === 0 ? Infinity : Math.abs(Math.log(d) - Math.log(o));
      } else eps = ldpEpsilon(matrix ?? v.matrix());
      return rldpResult("ldp", eps, claimed, "audited LDP epsilon");
    },
  },
  lip: {
    perReport: false,
    audit: (v, privacy) => {
      const { uset, n, beta } = documentUncertainty(v, privacy);
      const eps = Number(privacy.epsilon);
      return withShortfall(alipAudit(v.matrix(), uset, eps, eps, "lip"), confidenceShortfall(uset, n, beta));
    },
  },
  alip: {
    perReport: false,
    audit: (v, privacy) => {
      const { uset, n, beta } = documentUncertainty(v, privacy);
      const result = alipAudit(v.matrix(), uset, Number(privacy.epsilon_lower), Number(privacy.epsilon_upper), "alip");
      return withShortfall(result, confidenceShortfall(uset, n, beta));
    },
  },
  distp: {
    perReport: true,
    audit: (v, privacy, matrix) => {
      const { uset, n, beta } = documentUncertainty(v, privacy);
      const delta = privacy.delta === undefined ? 0 : Number(privacy.delta);
      return withShortfall(distpAudit(matrix ?? v.matrix(), uset, Number(privacy.epsilon), delta), confidenceShortfall(uset, n, beta));
    },
  },
  srlip: {
    perReport: false,
    audit: (v, privacy) => {
      const { uset, n, beta } = documentUncertainty(v, privacy);
      const sizes = v.alphabet.released.map((a) => a.size);
      const outputs = v.outputs;
      const work = outputs * uset.nSensitive * sizes.reduce((p, k) => p * (k + 1), 1);
      if (sizes.length > 16 || work > 2 ** 21) {
        throw new AuditError(
          `the exact srlip audit is exponential in the number of released attributes: this mechanism needs ${work} numbers; this version audits at most ${2 ** 21} and 16 attributes`,
        );
      }
      return withShortfall(srlipAudit(v.matrix(), uset, sizes, Number(privacy.epsilon)), confidenceShortfall(uset, n, beta));
    },
  },
};

/** R·Q of a per-report layer (|Y'| × |X|). */
function composed(r: Matrix, q: Matrix): Matrix {
  const data = new Float64Array(r.rows * q.cols);
  for (let i = 0; i < r.rows; i++) {
    for (let j = 0; j < r.cols; j++) {
      const w = r.data[i * r.cols + j];
      if (w === 0) continue;
      for (let x = 0; x < q.cols; x++) data[i * q.cols + x] += w * q.data[j * q.cols + x];
    }
  }
  return { rows: r.rows, cols: q.cols, data };
}

/** Audit a validated document against the notion it claims, with its per-report layer if any. */
export function auditDocument(v: ValidDocument, layer: { matrix: Matrix; epsilon: number } | null): AuditResult {
  const privacy = v.doc.privacy as Obj;
  const notion = privacy.notion as string;
  const entry = Object.prototype.hasOwnProperty.call(NOTIONS, notion) ? NOTIONS[notion] : undefined;
  if (!entry) throw new UnknownNotion(`unknown privacy notion '${notion}'; this version audits ${Object.keys(NOTIONS).sort().map((n) => `'${n}'`).join(", ")}`);
  const longRun = entry.audit(v, privacy);
  if (!layer) return longRun;
  if (!entry.perReport) {
    throw new DocumentError(`privacy notion '${notion}' cannot audit a per-report layer (collection.per_report): its audit does not declare supports_per_report, so the single-report guarantee could not be stated`);
  }
  const single = entry.audit(v, { ...privacy, epsilon: layer.epsilon } as Obj, composed(layer.matrix, v.matrix()));
  return {
    ...longRun,
    passed: longRun.passed && single.passed,
    reasons: [...longRun.reasons, ...single.reasons.map((r) => `per-report guarantee (collection.per_report.epsilon): ${r}`)],
    perReport: single,
  };
}

export { composed as composeLayer };
