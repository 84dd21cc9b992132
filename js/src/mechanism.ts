/**
 * A verified mechanism (port of `rldp.client.mechanism`): {@link Mechanism.fromDocument} is the
 * only way in, and it refuses (MechanismRejected naming the rule) a document whose id does not
 * match its content, that the caller's {@link VerificationPolicy} does not accept, or whose exact
 * privacy audit fails. `privatize*` draws a fresh report per record; memoised reporting over time
 * is the {@link Reporter}'s.
 */
import { auditDocument, composeLayer, type AuditResult } from "./audit.js";
import { fromJson, fromMsgpack, numericMatrix, validateDocument, Window, type ValidDocument } from "./document.js";
import { DocumentError, MechanismRejected, RldpError } from "./errors.js";
import type { Matrix } from "./forms.js";
import { MAX_DENSE_AUDIT_ENTRIES } from "./limits.js";
import { isObj, type Obj, type Value } from "./pyjson.js";
import type { RandomSource } from "./random.js";
import type { Alphabet, RecordLike } from "./records.js";
import { ColumnSampler, samplerFor, type Sampler } from "./sampling.js";
import { VerificationPolicy } from "./policy.js";
import { randomiserKey } from "./randomiser.js";


/** The notions whose audit reads a GRR form's two values instead of its K × K matrix (`structured_forms`). */
const STRUCTURED_GRR = ["rldp", "ldp"];

/** Float64 entries auditing a validated document expands from a compact matrix (port of
 * `rldp.shared.audit.dense_audit_entries`): 0 for a list of rows (already that large in the document) or a
 * GRR form under rldp/ldp, else |Y|·|X| (with a per-report layer, R·Q too). */
export function denseAuditEntries(valid: ValidDocument): number {
  if (!valid.compact) return 0;
  const b = valid.compact.rows;
  const a = valid.compact.cols;
  const collection = valid.doc.collection;
  const layer = isObj(collection) && isObj(collection.per_report) ? collection.per_report : null;
  if (layer && Array.isArray(layer.matrix)) return b * a + layer.matrix.length * a;
  const notion = (valid.doc.privacy as Obj).notion;
  return valid.compact.spec.form === "grr" && STRUCTURED_GRR.includes(notion as string) ? 0 : b * a;
}

export interface VerifyOptions {
  /** The id the caller asked for: a server must not substitute another valid mechanism. */
  expectedId?: string | null;
  /** Tightens the policy's ε ceiling (nats). */
  maxEpsilon?: number | null;
  policy?: VerificationPolicy | null;
}

/** Parse document bytes as the Python client does (DocumentError subclasses for bad bytes). */
export function parseDocument(data: Uint8Array | string, encoding: "json" | "msgpack"): ValidDocument {
  if (encoding === "json") return fromJson(data);
  if (typeof data === "string") throw new DocumentError("a msgpack document must be bytes");
  return fromMsgpack(data);
}

export class Mechanism {
  readonly alphabet: Alphabet;
  readonly perReport: { matrix: Matrix; epsilon: number } | null;
  readonly window: Window | null;
  private samplers = new Map<string, Sampler>();
  private reportMatrixCache: Matrix | null = null;
  private memoKeyCache: string | null = null;

  private constructor(readonly valid: ValidDocument, readonly audit: AuditResult) {
    this.alphabet = valid.alphabet;
    const collection = valid.doc.collection;
    const layer = isObj(collection) && isObj(collection.per_report) ? collection.per_report : null;
    this.perReport = layer ? { matrix: numericMatrix(layer.matrix, "collection.per_report.matrix"), epsilon: Number(layer.epsilon) } : null;
    this.window = isObj(collection) && "window" in collection ? Window.parse(collection.window) : null;
  }

  /** Verify a document (id, expected id, policy, audit) and wrap it; MechanismRejected otherwise. */
  static fromDocument(document: ValidDocument | Value, options: VerifyOptions = {}): Mechanism {
    const rules = (options.policy ?? new VerificationPolicy()).withMaxEpsilon(options.maxEpsilon);
    const raw = isValid(document) ? document.doc : document;
    const claimed = isObj(raw) && typeof raw.id === "string" ? raw.id : "<no id>";
    const label = options.expectedId || claimed;
    let valid: ValidDocument;
    try {
      valid = isValid(document) ? document : validateDocument(document as Value);
    } catch (exc) {
      if (exc instanceof DocumentError) throw new MechanismRejected(label, `invalid or tampered document: ${exc.message}`, "document", [], exc);
      throw exc;
    }
    if (options.expectedId && valid.id !== options.expectedId) {
      throw new MechanismRejected(label, `the server returned a different mechanism (${valid.id})`, "expected_id");
    }
    rules.check(valid.doc, label);
    const dense = denseAuditEntries(valid);
    if (dense > MAX_DENSE_AUDIT_ENTRIES) {
      const mib = (n: number) => (n * 8 / 2 ** 20).toLocaleString("en-US", { maximumFractionDigits: 0 });
      throw new MechanismRejected(
        label,
        `cannot be audited by this client: auditing notion '${String((valid.doc.privacy as Obj).notion)}' needs its ${valid.outputs.toLocaleString("en-US")} × ${valid.inputs.toLocaleString("en-US")} matrix in full (${mib(dense)} MiB); this client expands at most ${MAX_DENSE_AUDIT_ENTRIES.toLocaleString("en-US")} entries (${mib(MAX_DENSE_AUDIT_ENTRIES)} MiB) of a compact matrix`,
        "audit_error",
      );
    }
    const collection = valid.doc.collection;
    const layer = isObj(collection) && isObj(collection.per_report) ? collection.per_report : null;
    let result: AuditResult;
    try {
      result = auditDocument(valid, layer ? { matrix: numericMatrix(layer.matrix, "per_report"), epsilon: Number(layer.epsilon) } : null);
    } catch (exc) {
      if (exc instanceof RldpError) throw new MechanismRejected(label, `cannot be audited: ${exc.message}`, "audit_error", [], exc);
      throw exc;
    }
    if (!result.passed) throw new MechanismRejected(label, `privacy audit failed: ${result.reasons.join("; ")}`, "audit", result.reasons);
    return new Mechanism(valid, result);
  }

  /** Parse and verify document bytes (JSON or msgpack). */
  static fromBytes(data: Uint8Array | string, encoding: "json" | "msgpack", options: VerifyOptions = {}): Mechanism {
    return Mechanism.fromDocument(parseDocument(data, encoding), options);
  }

  get document(): Obj {
    return this.valid.doc;
  }
  get id(): string {
    return this.valid.id;
  }
  /** The randomiser key ({@link randomiserKey}): the memo's key, shared by every re-publication of the same design. */
  get memoKey(): string {
    return (this.memoKeyCache ??= randomiserKey(this.valid));
  }
  get method(): string {
    return String(this.valid.doc.method);
  }
  get notion(): string {
    return String((this.valid.doc.privacy as Obj).notion);
  }
  /** The claimed ε (nats). */
  get epsilon(): number {
    return Number((this.valid.doc.privacy as Obj).epsilon);
  }
  /** The ε the audit recomputed (nats). */
  get epsilonAudited(): number {
    return this.audit.epsilon;
  }
  get epsilonPerReport(): number | null {
    return this.perReport?.epsilon ?? null;
  }
  get epsilonPerReportAudited(): number | null {
    return this.audit.perReport?.epsilon ?? null;
  }
  /** |Y'|: reports are integers in [0, outputs). */
  get outputs(): number {
    return this.perReport ? this.perReport.matrix.rows : this.valid.outputs;
  }
  /** |Y|: memoised values are integers in [0, memoOutputs). */
  get memoOutputs(): number {
    return this.valid.outputs;
  }
  /** |X|. */
  get size(): number {
    return this.valid.inputs;
  }

  /** The distribution of one report given x: R·Q with a per-report layer, else Q. */
  reportMatrix(): Matrix {
    return (this.reportMatrixCache ??= this.perReport ? composeLayer(this.perReport.matrix, this.valid.matrix()) : this.valid.matrix());
  }

  /** "report": R·Q (Q without a layer); "memo": Q; "layer": R (samplers are built on first use). */
  sampler(which: "report" | "memo" | "layer" = "report"): Sampler {
    let s = this.samplers.get(which);
    if (!s) {
      const spec = this.valid.compact?.spec ?? null;
      if (which === "layer" && this.perReport) s = new ColumnSampler(this.perReport.matrix);
      else if (which === "memo" && this.perReport) s = samplerFor(() => this.valid.matrix(), spec);
      else s = this.samplers.get("report") ?? samplerFor(() => this.reportMatrix(), this.perReport ? null : spec);
      this.samplers.set(which, s);
    }
    return s;
  }

  /** A fresh report per record (objects of strings or arrays in input order). */
  privatize(records: readonly RecordLike[], source?: RandomSource): Int32Array {
    return this.sampler().sample(this.alphabet.encode(records), source);
  }

  /** A fresh report per record given as columns `{name: values}`. */
  privatizeColumns(columns: Record<string, readonly unknown[]>, source?: RandomSource): Int32Array {
    return this.sampler().sample(this.alphabet.encodeColumns(columns), source);
  }

  /** A fresh report per record already encoded as input indices x. */
  privatizeIndices(xs: ArrayLike<number>, source?: RandomSource, out?: Int32Array): Int32Array {
    return this.sampler().sample(xs, source, out);
  }

  /** The values a memo stores for inputs x: y ~ Q(·|x). */
  drawMemo(xs: ArrayLike<number>, source?: RandomSource): Int32Array {
    return this.sampler("memo").sample(xs, source);
  }

  /** One report per memoised y: y' ~ R(·|y) afresh with a per-report layer, else y itself. */
  reportFrom(ys: Int32Array, source?: RandomSource): Int32Array {
    return this.perReport ? this.sampler("layer").sample(ys, source) : ys;
  }
}

function isValid(v: unknown): v is ValidDocument {
  return typeof v === "object" && v !== null && "doc" in v && "id" in v && "alphabet" in v && typeof (v as ValidDocument).matrix === "function";
}
