/**
 * The exact privacy audits of every notion a document may claim (port of `rldp.shared.audit`):
 * rldp [LZG24, Def 1, Thm 1], ldp w.r.t. X [LZG24, Def 2] or w.r.t. S over F [LTS20, Def 1],
 * lip / alip [LTS20, Def 2; ZDS23, Def 3] exact at P̂ and over F″, distp [KM19, Def 3], srlip
 * [LTS20, Def 3], and the per-report layer (R·Q against ε₁). Same formulas, same order of
 * operations where it matters, same pass rule (audited ≤ claimed + 1e-9).
 */
import { AUDIT_TOLERANCE, conditionalOutputs, jointMatrix, logRatio, type AuditResult } from "./audit-base.js";
import { distpAudit } from "./audit-distp.js";
import { confidenceShortfall, documentRldpEpsilon, documentUncertainty, ldpEpsilon } from "./audit-rldp.js";
import { srlipAudit } from "./audit-srlip.js";
import type { ValidDocument } from "./document.js";
import { AuditError, DocumentError, UnknownNotion } from "./errors.js";
import type { Matrix } from "./forms.js";
import type { Obj } from "./pyjson.js";
import type { UncertaintySet } from "./uncertainty.js";

// The shared pieces live below this module (no import cycle); importers keep these names.
export { AUDIT_TOLERANCE, RADIUS_RTOL, conditionalOutputs, jointMatrix, logRatio, type AuditResult } from "./audit-base.js";
export { confidenceShortfall, documentUncertainty, grrValues, ldpEpsilon, rldpEpsilon } from "./audit-rldp.js";

function withShortfall(result: AuditResult, shortfall: string | null): AuditResult {
  return shortfall === null ? result : { ...result, passed: false, reasons: [...result.reasons, shortfall] };
}

// --------------------------------------------------------------------------- lip and alip

/** Both sides of the lift leakage: ε_lower = max −log l(s, y), ε_upper = max log l(s, y). */
export interface LipLeakage {
  lower: number;
  upper: number;
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
  const marginal = uset.marginalSet();
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
