/**
 * The mechanism document: validation, canonical form and content id (port of
 * `rldp.shared.document` schema / canonical / privacy, `rldp.shared.collection`,
 * `rldp.shared.provenance`). Refusals are DocumentError (IdMismatch when the id is not the
 * content hash) naming the field and what was expected, as in Python.
 */
import { sha256Hex, utf8Encode } from "./bytes.js";
import { checkBox } from "./box-bounds.js";
import { AlphabetError, DocumentError, DocumentSyntaxError, IdMismatch, ValidationError } from "./errors.js";
import { checkColumnsSumToOne, normaliseMatrix, type CompactMatrix, type Matrix } from "./forms.js";
import { MAX_SYMBOLS } from "./limits.js";
import { readMsgpack } from "./msgpack-read.js";
import { PILOT_SOURCE, validatePilotProvenance } from "./pilot-provenance.js";
import { canonicalText, codePointCompare, isObj, newObj, parseJson, pyRepr, stringRepr, typeName, type Obj, type Value } from "./pyjson.js";
import { Alphabet } from "./records.js";

export const FORMAT = "rldp.mechanism/1";
export const FORMAT_2 = "rldp.mechanism/2";
export const FORMAT_3 = "rldp.mechanism/3";
export const FORMATS = [FORMAT, FORMAT_2, FORMAT_3];
const REQUIRED = ["format", "id", "method", "privacy", "sensitive", "released", "public_distribution", "matrix"];
const UNHASHED = ["id", "run"];
const HEX64 = /^[0-9a-f]{64}$/;

const NOTION_FIELDS: Record<string, string[]> = {
  distp: ["notion", "epsilon", "delta", "uncertainty"],
  ldp: ["notion", "epsilon", "uncertainty"],
  lip: ["notion", "epsilon", "uncertainty"],
  alip: ["notion", "epsilon", "epsilon_lower", "epsilon_upper", "uncertainty"],
  srlip: ["notion", "epsilon", "uncertainty"],
};
const NEEDS_UNCERTAINTY = ["rldp", "distp", "lip", "alip", "srlip"];

/** A number of the document (int or float, never a boolean) as a JS number; DocumentError otherwise. */
export function num(value: Value | undefined, field: string): number {
  if (typeof value !== "number" && typeof value !== "bigint") throw new DocumentError(`${field} must be a number, got ${pyRepr(value)}`);
  return Number(value);
}

function positive(privacy: Obj, key: string, kind: string): number {
  if (!(key in privacy)) throw new DocumentError(`privacy is missing required field '${key}' for notion '${kind}'`);
  const v = num(privacy[key], `privacy.${key}`);
  if (!(Number.isFinite(v) && v > 0)) throw new DocumentError(`privacy.${key} must be a finite number > 0, got ${pyRepr(privacy[key])}`);
  return v;
}

function checkPrivacy(privacy: Value): void {
  if (!isObj(privacy)) throw new DocumentError(`privacy must be an object, got ${typeName(privacy)}`);
  for (const key of ["notion", "epsilon"]) if (!(key in privacy)) throw new DocumentError(`privacy is missing required field '${key}'`);
  const kind = privacy.notion;
  if (typeof kind !== "string" || !kind) throw new DocumentError(`privacy.notion must be a non-empty string such as 'rldp', got ${pyRepr(kind)}`);
  const eps = num(privacy.epsilon, "privacy.epsilon");
  if (kind === "distp") {
    if (!(Number.isFinite(eps) && eps >= 0)) throw new DocumentError(`privacy.epsilon must be a finite number ≥ 0 for notion 'distp', got ${pyRepr(privacy.epsilon)}`);
    if ("delta" in privacy) {
      const delta = num(privacy.delta, "privacy.delta");
      if (!(delta >= 0 && delta < 1)) throw new DocumentError(`privacy.delta must be a number in [0, 1), got ${pyRepr(privacy.delta)}`);
    }
  } else if (!(Number.isFinite(eps) && eps > 0)) {
    throw new DocumentError(`privacy.epsilon must be a finite number > 0, got ${pyRepr(privacy.epsilon)}`);
  } else if ("delta" in privacy && (kind === "rldp" || kind === "ldp")) {
    throw new DocumentError(`privacy.delta is a parameter of notion 'distp'; notion '${kind}' has no delta`);
  }
  const allowed = NOTION_FIELDS[kind];
  if (allowed) {
    const unknown = Object.keys(privacy).filter((k) => !allowed.includes(k));
    if (unknown.length) throw new DocumentError(`privacy has unknown field '${unknown[0]}' for notion '${kind}'; its fields are ${allowed.join(", ")}`);
  }
  if (kind === "alip") {
    const lower = positive(privacy, "epsilon_lower", kind);
    const upper = positive(privacy, "epsilon_upper", kind);
    const m = Math.max(lower, upper);
    if (!(Math.abs(eps - m) <= 1e-12 * Math.max(Math.abs(eps), Math.abs(m)))) {
      throw new DocumentError(`privacy.epsilon must be max(epsilon_lower, epsilon_upper) = ${pyRepr(m)} for notion 'alip', got ${pyRepr(privacy.epsilon)}`);
    }
  }
  if (NEEDS_UNCERTAINTY.includes(kind) || (kind === "ldp" && "uncertainty" in privacy)) checkUncertainty(privacy.uncertainty, kind);
}

function checkUncertainty(unc: Value | undefined, kind: string): void {
  if (!isObj(unc)) throw new DocumentError(`privacy.uncertainty (an object) is required for notion '${kind}'`);
  if (unc.divergence !== "renyi") throw new DocumentError(`privacy.uncertainty.divergence must be 'renyi', got ${pyRepr(unc.divergence)}`);
  if (!("order" in unc)) throw new DocumentError("privacy.uncertainty is missing required field 'order'");
  const order = num(unc.order, "privacy.uncertainty.order");
  if (!(Number.isFinite(order) && order > 0)) throw new DocumentError(`privacy.uncertainty.order must be a finite number > 0, got ${pyRepr(unc.order)}`);
  if (!("radius" in unc)) throw new DocumentError("privacy.uncertainty is missing required field 'radius' (null means unbounded)");
  if (unc.radius !== null) {
    const r = num(unc.radius, "privacy.uncertainty.radius");
    if (!(Number.isFinite(r) && r >= 0)) throw new DocumentError(`privacy.uncertainty.radius must be a finite number ≥ 0 or null, got ${pyRepr(unc.radius)}`);
  }
  const n = unc.n;
  if (n !== undefined && n !== null && (typeof n !== "bigint" || n < 1n)) {
    throw new DocumentError(`privacy.uncertainty.n must be a positive integer or absent, got ${pyRepr(n)}`);
  }
  const beta = unc.beta;
  if (beta !== undefined && beta !== null) {
    const b = num(beta, "privacy.uncertainty.beta");
    if (!(b > 0 && b < 1)) throw new DocumentError(`privacy.uncertainty.beta must be in (0, 1), got ${pyRepr(beta)}`);
  }
  const box = unc.box;
  const fields = isObj(box) ? Object.keys(box) : [];
  if (box !== undefined && box !== null && (!isObj(box) || fields.length !== 2 || !("lower" in box) || !("upper" in box))) {
    throw new DocumentError(
      `privacy.uncertainty.box must be an object with exactly the fields 'lower' and 'upper' (|S| × |U| arrays of numbers), got ${boxShape(box)}`,
    );
  }
}

/** What a refused box was, in the words of Python's `_shape_of` (a repr would differ between the SDKs). */
function boxShape(box: Value): string {
  if (!isObj(box)) return `a value of type ${typeName(box)}`;
  const names = Object.keys(box).sort(codePointCompare);
  if (!names.length) return "an empty object";
  return `an object with the fields ${names.slice(0, 6).map(stringRepr).join(", ")}${names.length > 6 ? ", ..." : ""}`;
}

/** A pilot's confidence box (`privacy.uncertainty.box`), checked against the alphabet's |S| × |U|. */
function checkDocumentBox(privacy: Obj, shape: [number, number]): void {
  const unc = privacy.uncertainty;
  const box = isObj(unc) ? unc.box : undefined; // a notion rldp does not know is not checked
  if (!isObj(box)) return;
  try {
    checkBox(box.lower, box.upper, shape);
  } catch (exc) {
    if (exc instanceof ValidationError) throw new DocumentError(`privacy.uncertainty.${exc.message}`);
    throw exc;
  }
}

// --------------------------------------------------------------------------- collection windows

const DURATION = /^P(?:(\d+)W|(\d+)D|T(?:(\d+)H)?(?:(\d+)M)?)$/;

/** A collection window: its text ("P1D") and length in seconds. */
export class Window {
  constructor(readonly text: string, readonly seconds: number) {}

  static parse(text: unknown): Window {
    const m = typeof text === "string" ? DURATION.exec(text) : null;
    const units = [7 * 86400, 86400, 3600, 60];
    const seconds = m ? units.reduce((s, u, i) => s + (m[i + 1] ? Number(m[i + 1]) * u : 0), 0) : 0;
    if (seconds < 60) {
      throw new DocumentError(
        `collection window must be an ISO 8601 duration of whole weeks, days, hours or minutes of at least one minute, e.g. 'P1D', 'PT6H', 'PT15M'; got ${pyRepr(text)}`,
      );
    }
    return new Window(text as string, seconds);
  }

  /** The label of the window holding `timestamp` (Unix seconds): "2026-11-24" or "2026-11-24T05:00Z". */
  labelAt(timestamp: number): string {
    const start = Math.floor(timestamp / this.seconds) * this.seconds;
    const iso = new Date(start * 1000).toISOString();
    return this.seconds % 86400 === 0 ? iso.slice(0, 10) : `${iso.slice(0, 16)}Z`;
  }
}

function validateCollection(value: Value): void {
  if (!isObj(value)) throw new DocumentError(`collection must be an object such as {'window': 'P1D'}, got ${typeName(value)}`);
  const unknown = Object.keys(value).filter((k) => k !== "window" && k !== "per_report").sort();
  if (unknown.length) throw new DocumentError(`collection has unknown field(s) ${unknown.join(", ")}; known: per_report, window`);
  if ("window" in value) Window.parse(value.window);
  if ("per_report" in value) {
    const layer = value.per_report;
    if (!isObj(layer)) throw new DocumentError(`collection.per_report must be an object {'matrix': R, 'epsilon': ε₁}, got ${typeName(layer)}`);
    const missing = ["epsilon", "matrix"].filter((f) => !(f in layer));
    const extra = Object.keys(layer).filter((k) => k !== "epsilon" && k !== "matrix");
    if (missing.length || extra.length) throw new DocumentError("collection.per_report must have exactly the fields epsilon and matrix");
    const eps = layer.epsilon;
    if ((typeof eps !== "number" && typeof eps !== "bigint") || !(Number.isFinite(Number(eps)) && Number(eps) > 0)) {
      throw new DocumentError(`collection.per_report.epsilon must be a finite number > 0 (nats), got ${pyRepr(eps)}`);
    }
    if (!Array.isArray(layer.matrix) || !layer.matrix.length) {
      throw new DocumentError("collection.per_report.matrix must be a non-empty list of rows, R[y'][y] = R(y'|y)");
    }
  }
}

function validateProvenance(value: Value): void {
  const required = ["name", "n", "columns", "counts_sha256", "policy"];
  if (!isObj(value)) throw new DocumentError(`provenance must be an object with ${required.join(", ")}; got ${typeName(value)}`);
  if (value.source === PILOT_SOURCE) return validatePilotProvenance(value); // P̂ from a private pilot
  const missing = required.filter((k) => !(k in value));
  if (missing.length) throw new DocumentError(`provenance is missing required field(s) ${missing.join(", ")}`);
  if (typeof value.name !== "string" || !value.name.trim()) throw new DocumentError("provenance.name must be a non-empty string naming the public data");
  if (typeof value.n !== "bigint" || value.n < 1n) throw new DocumentError(`provenance.n must be a positive integer (public records); got ${pyRepr(value.n)}`);
  const cols = value.columns;
  if (!Array.isArray(cols) || !cols.length || !cols.every((c) => typeof c === "string" && c) || new Set(cols).size !== cols.length) {
    throw new DocumentError("provenance.columns must be a non-empty list of distinct column names");
  }
  if (typeof value.counts_sha256 !== "string" || !HEX64.test(value.counts_sha256)) {
    throw new DocumentError("provenance.counts_sha256 must be 64 lowercase hex characters");
  }
  if (!isObj(value.policy)) throw new DocumentError("provenance.policy must be an object");
}

// --------------------------------------------------------------------------- matrices

/** A list of equally long lists of numbers as a dense matrix (DocumentError naming the entry otherwise). */
export function numericMatrix(value: Value | undefined, field: string): Matrix {
  if (!Array.isArray(value)) throw new DocumentError(`${field} must be a list of lists of numbers, got ${typeName(value)}`);
  const rows = value.length;
  const first = rows ? value[0] : [];
  const cols = Array.isArray(first) ? first.length : 0;
  const data = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const row = value[i];
    if (!Array.isArray(row)) throw new DocumentError(`${field} row ${i} must be a list of numbers, got ${typeName(row)}`);
    for (let j = 0; j < row.length; j++) {
      const v = row[j];
      if (typeof v !== "number" && typeof v !== "bigint") throw new DocumentError(`${field}[${i}][${j}] must be a number, got ${pyRepr(v)}`);
    }
    if (row.length !== cols) throw new DocumentError(`${field} row ${i} has ${row.length} entries but row 0 has ${cols}`);
    const off = i * cols;
    for (let j = 0; j < cols; j++) data[off + j] = Number(row[j] as number | bigint);
  }
  return { rows, cols, data };
}

function checkEntries(m: Matrix, field: string): void {
  for (let i = 0; i < m.data.length; i++) {
    const v = m.data[i];
    const at = `${field}[${Math.floor(i / m.cols)}][${i % m.cols}]`;
    if (!Number.isFinite(v)) throw new DocumentError(`${at} is ${v}; entries must be finite`);
    if (v < 0) throw new DocumentError(`${at} is ${pyRepr(v)}; entries must be ≥ 0`);
  }
}

export function floats(value: Value): Value {
  if (Array.isArray(value)) return value.map(floats);
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "number") return value + 0;
  return value;
}

function noStrayBytes(value: Value, path: string): void {
  if (value instanceof Uint8Array) throw new DocumentError(`${path || "document"}: value of type bytes cannot be stored in a document`);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (typeof v === "object" && v !== null) noStrayBytes(v, `${path}[${i}]`);
    }
  } else if (isObj(value)) {
    for (const k of Object.keys(value)) if (!(path === "" && k === "matrix")) noStrayBytes(value[k], path ? `${path}.${k}` : k);
  }
}

/** A validated document: its normalised fields, id, alphabet and matrices. */
export interface ValidDocument {
  /** The document with floats in matrix/public_distribution and a compact matrix in canonical form. */
  doc: Obj;
  id: string;
  alphabet: Alphabet;
  /** The compact matrix (format 3), or null for a list of rows. */
  compact: CompactMatrix | null;
  /** |Y| (rows of Q) and |X|. */
  outputs: number;
  inputs: number;
  publicDistribution: Matrix;
  /** Q, expanded on first use. */
  matrix(): Matrix;
}

/** Check structure, shapes, stochasticity and the id (IdMismatch); port of `validate_document`. */
export function validateDocument(input: Value): ValidDocument {
  const checked = checkedDocument(input);
  if (checked.doc.id !== checked.id) {
    throw new IdMismatch(`id mismatch: document says ${checked.doc.id}, content hashes to ${checked.id}`, String(checked.doc.id), checked.id);
  }
  return checked;
}

/** Everything but the id comparison (`id` is what the content hashes to). */
export function checkedDocument(input: Value): ValidDocument {
  if (!isObj(input)) throw new DocumentError(`a mechanism document must be an object (mapping), got ${typeName(input)}`);
  noStrayBytes(input, "");
  const out: Obj = Object.assign(newObj(), input);
  const missing = REQUIRED.filter((f) => !(f in out));
  if (missing.length) throw new DocumentError(`missing required field${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`);
  if (typeof out.format !== "string" || !FORMATS.includes(out.format)) {
    throw new DocumentError(`unsupported format ${pyRepr(out.format)}; this reader understands ${FORMATS.join(", ")}`);
  }
  if (out.id !== "" && (typeof out.id !== "string" || !HEX64.test(out.id))) {
    throw new DocumentError(`id must be 64 lowercase hex characters (a sha256), got ${pyRepr(out.id)}`);
  }
  if (typeof out.method !== "string" || !out.method) throw new DocumentError(`method must be a non-empty string, got ${pyRepr(out.method)}`);
  checkPrivacy(out.privacy);
  if ("collection" in out) validateCollection(out.collection);
  if ("provenance" in out) validateProvenance(out.provenance);
  if ("run" in out && !isObj(out.run)) throw new DocumentError("run must be an object (facts of one design run, not covered by the id)");
  let alpha: Alphabet;
  try {
    alpha = Alphabet.fromDict({ sensitive: out.sensitive, released: out.released } as Obj);
  } catch (exc) {
    if (exc instanceof AlphabetError) throw new DocumentError(`sensitive/released: ${exc.message}`);
    throw exc;
  }
  if (alpha.size > MAX_SYMBOLS) {
    throw new DocumentError(
      `the alphabet has |X| = ${alpha.size.toLocaleString("en-US")} symbols; documents may have at most ${MAX_SYMBOLS.toLocaleString("en-US")} (the largest alphabet rldp designs for)`,
    );
  }
  if (alpha.needsFormat2 && out.format === FORMAT) {
    throw new DocumentError(`several or latent sensitive attributes need format '${FORMAT_2}', not '${out.format}'`);
  }
  const [a1, a2] = [alpha.nSensitive, alpha.nReleased];
  const inputsText = alpha.latent ? "a = a2" : "a = a1·a2";
  const p = numericMatrix(out.public_distribution, "public_distribution");
  if (p.rows !== a1 || p.cols !== a2) {
    throw new DocumentError(`public_distribution has shape ${p.rows}×${p.cols}; expected ${a1}×${a2} (|S| × |U|)`);
  }
  checkEntries(p, "public_distribution");
  const total = p.data.reduce((s, v) => s + v, 0);
  if (Math.abs(total - 1) > 1e-9) throw new DocumentError(`public_distribution sums to ${total.toPrecision(12)}; it must sum to 1 (±1e-9)`);
  checkDocumentBox(out.privacy as Obj, [a1, a2]);

  let compact: CompactMatrix | null = null;
  let dense: Matrix | null = null;
  let outputs: number;
  if (isObj(out.matrix)) {
    if (out.format !== FORMAT_3) {
      throw new DocumentError(`matrix must be a list of lists of numbers in format '${out.format}'; a compact matrix (an object) needs format '${FORMAT_3}', which older readers refuse`);
    }
    compact = normaliseMatrix(out.matrix);
    out.matrix = compact.spec;
    if (compact.cols !== alpha.size) {
      throw new DocumentError(`matrix has ${compact.cols} columns; expected ${inputsText} = ${alpha.size} (${a1} × ${a2})`);
    }
    outputs = compact.rows;
  } else {
    const m = out.matrix;
    if (Array.isArray(m) && m.length === 0) throw new DocumentError("matrix has no rows; it needs at least one output y");
    if (Array.isArray(m)) {
      m.forEach((row, i) => {
        if (Array.isArray(row) && row.length !== alpha.size) {
          throw new DocumentError(`matrix row ${i} has ${row.length} entries; expected ${inputsText} = ${alpha.size} (${a1} × ${a2})`);
        }
      });
    }
    dense = numericMatrix(m, "matrix");
    if (dense.rows < 1 || dense.cols !== alpha.size) throw new DocumentError(`matrix has shape (${dense.rows}, ${dense.cols}); expected (b ≥ 1, a = ${alpha.size})`);
    checkEntries(dense, "matrix");
    checkColumnsSumToOne(dense);
    outputs = dense.rows;
  }
  const collection = out.collection;
  if (isObj(collection) && "per_report" in collection) {
    if (out.format === FORMAT) {
      throw new DocumentError(`a per-report layer (collection.per_report) needs format '${FORMAT_2}', not '${out.format}': a format-1 reader would send the memoised output itself`);
    }
    const layer = collection.per_report as Obj;
    const field = "collection.per_report.matrix";
    const r = numericMatrix(layer.matrix, field);
    if (r.rows < 1 || r.cols !== outputs) {
      throw new DocumentError(`${field} has shape ${r.rows}×${r.cols}; expected |Y'| ≥ 1 rows and |Y| = ${outputs} columns (one per output of matrix: R[y'][y] = R(y'|y))`);
    }
    checkEntries(r, field);
    checkColumnsSumToOne(r, `${field}: `);
    const eps1 = num(layer.epsilon, "collection.per_report.epsilon");
    const eps = num((out.privacy as Obj).epsilon, "epsilon");
    if (eps1 > eps) {
      throw new DocumentError(`collection.per_report.epsilon is ${pyRepr(layer.epsilon)}, more than privacy.epsilon ${pyRepr((out.privacy as Obj).epsilon)}; the single-report guarantee must be at most the long-run one`);
    }
  }
  if (Array.isArray(out.matrix)) out.matrix = floats(out.matrix);
  out.public_distribution = floats(out.public_distribution);
  const id = contentIdOf(out);
  let expanded: Matrix | null = dense;
  return {
    doc: out,
    id,
    alphabet: alpha,
    compact,
    outputs,
    inputs: alpha.size,
    publicDistribution: p,
    matrix: () => (expanded ??= (compact as CompactMatrix).expand()),
  };
}

function contentIdOf(doc: Obj): string {
  const body = newObj();
  for (const k of Object.keys(doc)) if (!UNHASHED.includes(k)) body[k] = doc[k];
  return sha256Hex(utf8Encode(canonicalText(body)));
}

/** The canonical text the id hashes (every field but `id` and `run`, of a validated document). */
export function canonicalBody(doc: Obj): string {
  const body = newObj();
  for (const k of Object.keys(doc)) if (!UNHASHED.includes(k)) body[k] = doc[k];
  return canonicalText(body);
}

// --------------------------------------------------------------------------- reading bytes

/** Parse and validate a JSON document (text or UTF-8 bytes, a BOM allowed). */
export function fromJson(text: string | Uint8Array): ValidDocument {
  let s: string;
  if (typeof text === "string") s = text;
  else {
    try {
      s = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(text);
    } catch {
      throw new DocumentSyntaxError("not valid JSON: not UTF-8", "json");
    }
  }
  if (!s.trim()) throw new DocumentSyntaxError("not valid JSON: empty document", "json");
  return validateDocument(parseJson(s));
}

/** Parse and validate a msgpack document. */
export function fromMsgpack(data: Uint8Array): ValidDocument {
  if (!(data instanceof Uint8Array)) throw new DocumentError(`fromMsgpack expects bytes, got ${typeName(data)}`);
  if (data.length === 0) throw new DocumentSyntaxError("not a valid msgpack document: empty document", "msgpack");
  const { value, sawExt } = readMsgpack(data);
  if (!isObj(value)) throw new DocumentError(`a mechanism document must be a map, got msgpack ${typeName(value)}`);
  if (sawExt) throw new DocumentError("document: value of type ExtType cannot be stored in a document");
  return validateDocument(value);
}
