/**
 * Compact exact forms of a mechanism matrix (format `rldp.mechanism/3`; port of
 * `rldp.shared.document.forms` / `arrays`): `grr` (two values), `palette` (distinct values and
 * an index), `dense` (every entry). Binary arrays are msgpack bin or canonical base64 text.
 */
import { base64Decode, base64Encode } from "./bytes.js";
import { DocumentError } from "./errors.js";
import { isObj, newObj, pyRepr, typeName, type Obj, type Value } from "./pyjson.js";

export const STOCHASTIC_TOLERANCE = 1e-9;

/** A dense matrix, row-major: entry [y, x] at data[y * cols + x]. */
export interface Matrix {
  rows: number;
  cols: number;
  data: Float64Array;
}

/** Raise DocumentError naming the first column of Q whose sum is not 1 (±1e-9). */
export function checkColumnsSumToOne(q: Matrix, prefix = ""): void {
  const sums = new Float64Array(q.cols);
  for (let y = 0; y < q.rows; y++) {
    const off = y * q.cols;
    for (let x = 0; x < q.cols; x++) sums[x] += q.data[off + x];
  }
  for (let x = 0; x < q.cols; x++) {
    if (Math.abs(sums[x] - 1) > STOCHASTIC_TOLERANCE) {
      throw new DocumentError(
        `${prefix}matrix column ${x} sums to ${sums[x].toPrecision(12)}; every column must sum to 1 (±1e-9): matrix[y][x] = Q(y|x), outputs along the rows`,
      );
    }
  }
}

function fields(spec: Obj, allowed: string[], form: string): void {
  const missing = allowed.filter((k) => !(k in spec));
  if (missing.length) throw new DocumentError(`matrix (form '${form}') is missing field '${missing[0]}'; its fields are ${allowed.join(", ")}`);
  const unknown = Object.keys(spec).filter((k) => !allowed.includes(k));
  if (unknown.length) throw new DocumentError(`matrix (form '${form}') has unknown field '${unknown[0]}'; its fields are ${allowed.join(", ")}`);
}

function count(value: Value, field: string): number {
  if (typeof value !== "bigint" || value < 1n) throw new DocumentError(`${field} must be a positive integer, got ${pyRepr(value)}`);
  return Number(value);
}

function shape(value: Value, field: string): [number, number] {
  if (!Array.isArray(value) || value.length !== 2) {
    throw new DocumentError(`${field} must be [rows, columns] (two positive integers), got ${pyRepr(value)}`);
  }
  return [count(value[0], `${field}[0]`), count(value[1], `${field}[1]`)];
}

function number(value: Value, field: string): number {
  if (typeof value !== "number" && typeof value !== "bigint") throw new DocumentError(`${field} must be a number, got ${pyRepr(value)}`);
  const out = Number(value);
  if (!Number.isFinite(out) || out < 0 || Object.is(out, -0)) {
    throw new DocumentError(`${field} is ${pyRepr(value)}; it must be a finite number ≥ 0 (and not −0.0)`);
  }
  return out;
}

/** (bytes, canonical base64 text) of a binary field given as bytes (msgpack) or base64 (JSON). */
export function rawBytes(value: Value, field: string): [Uint8Array, string] {
  if (value instanceof Uint8Array) return [value, base64Encode(value)];
  if (typeof value !== "string") throw new DocumentError(`${field} must be binary (msgpack bin) or base64 text (JSON), got ${typeName(value)}`);
  const raw = base64Decode(value);
  if (raw === null) throw new DocumentError(`${field} is not valid base64 (standard alphabet A-Z a-z 0-9 + /, padded with =)`);
  if (base64Encode(raw) !== value) throw new DocumentError(`${field} is not canonical base64 (its padding bits must be zero)`);
  return [raw, value];
}

function littleFloats(raw: Uint8Array, n: number): Float64Array {
  const out = new Float64Array(n);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  for (let i = 0; i < n; i++) out[i] = view.getFloat64(8 * i, true);
  return out;
}

function decode(value: Value, kind: "float64" | "uint8" | "uint16", n: number, field: string): [Float64Array | Uint8Array | Uint16Array, string] {
  const [raw, text] = rawBytes(value, field);
  const size = kind === "float64" ? 8 : kind === "uint16" ? 2 : 1;
  if (raw.length !== n * size) {
    throw new DocumentError(`${field} holds ${raw.length} bytes; expected ${n} × ${size} = ${n * size} (${kind}, little-endian)`);
  }
  if (kind === "float64") return [littleFloats(raw, n), text];
  if (kind === "uint8") return [raw, text];
  const out = new Uint16Array(n);
  for (let i = 0; i < n; i++) out[i] = raw[2 * i] | (raw[2 * i + 1] << 8);
  return [out, text];
}

function checkFloats(arr: Float64Array, field: string): void {
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i];
    if (!Number.isFinite(v)) throw new DocumentError(`${field}[${i}] is ${v}; entries must be finite`);
    if (v < 0 || Object.is(v, -0)) throw new DocumentError(`${field}[${i}] is ${pyRepr(v)}; entries must be ≥ 0 (and not −0.0)`);
  }
}

const FORMS = ["grr", "palette", "dense"];

/** A checked compact matrix: its canonical spec (binary fields as base64), shape and expansion. */
export interface CompactMatrix {
  spec: Obj;
  rows: number;
  cols: number;
  expand(): Matrix;
}

/** Strictly check a compact `matrix` object (DocumentError naming the field otherwise). */
export function normaliseMatrix(spec: Value): CompactMatrix {
  if (!isObj(spec)) throw new DocumentError(`matrix must be a list of rows or a compact form object, got ${typeName(spec)}`);
  const name = spec.form;
  if (typeof name !== "string" || !FORMS.includes(name)) {
    throw new DocumentError(`matrix.form must be one of ${FORMS.map((f) => `'${f}'`).join(", ")}, got ${pyRepr(name)}`);
  }
  const out = newObj();
  out.form = name;
  if (name === "grr") {
    fields(spec, ["form", "size", "diagonal", "off_diagonal"], name);
    const k = count(spec.size, "matrix.size");
    if (k < 2) throw new DocumentError(`matrix.size must be at least 2 for form 'grr', got ${k}`);
    const d = number(spec.diagonal, "matrix.diagonal");
    const o = number(spec.off_diagonal, "matrix.off_diagonal");
    const total = d + (k - 1) * o;
    if (Math.abs(total - 1) > STOCHASTIC_TOLERANCE) {
      throw new DocumentError(`matrix columns sum to ${total.toPrecision(12)} (diagonal + (size − 1) · off_diagonal), not 1 (±1e-9): Q(·|x) is a distribution`);
    }
    out.size = BigInt(k);
    out.diagonal = d;
    out.off_diagonal = o;
    return {
      spec: out,
      rows: k,
      cols: k,
      expand: () => {
        const data = new Float64Array(k * k).fill(o);
        for (let i = 0; i < k; i++) data[i * k + i] = d;
        return { rows: k, cols: k, data };
      },
    };
  }
  if (name === "dense") {
    fields(spec, ["form", "shape", "data"], name);
    const [b, a] = shape(spec.shape, "matrix.shape");
    const [data, text] = decode(spec.data, "float64", b * a, "matrix.data") as [Float64Array, string];
    checkFloats(data, "matrix.data");
    const q = { rows: b, cols: a, data };
    checkColumnsSumToOne(q);
    out.shape = [BigInt(b), BigInt(a)];
    out.data = text;
    return { spec: out, rows: b, cols: a, expand: () => ({ rows: b, cols: a, data: data.slice() }) };
  }
  fields(spec, ["form", "shape", "index_type", "values", "index"], name);
  const [b, a] = shape(spec.shape, "matrix.shape");
  const kind = spec.index_type;
  if (kind !== "uint8" && kind !== "uint16") throw new DocumentError(`matrix.index_type must be one of uint8, uint16, got ${pyRepr(kind)}`);
  const [rawValues] = rawBytes(spec.values, "matrix.values");
  if (rawValues.length % 8 || !rawValues.length) {
    throw new DocumentError(`matrix.values holds ${rawValues.length} bytes; expected a positive multiple of 8`);
  }
  const n = rawValues.length / 8;
  const [values, valuesText] = decode(spec.values, "float64", n, "matrix.values") as [Float64Array, string];
  checkFloats(values, "matrix.values");
  for (let i = 1; i < n; i++) {
    if (!(values[i] > values[i - 1])) throw new DocumentError("matrix.values must be strictly increasing (each distinct entry once, in order)");
  }
  const [index, indexText] = decode(spec.index, kind, b * a, "matrix.index") as [Uint8Array | Uint16Array, string];
  let max = 0;
  const used = new Uint8Array(n + 65536);
  for (let i = 0; i < index.length; i++) {
    if (index[i] > max) max = index[i];
    used[index[i]] = 1;
  }
  if (max >= n) throw new DocumentError(`matrix.index has entry ${max}; matrix.values has only ${n} values`);
  let seen = 0;
  for (let i = 0; i < n; i++) seen += used[i];
  if (seen !== n) throw new DocumentError("matrix.values lists a value no entry uses (each distinct entry exactly once)");
  const minimal = n <= 256 ? "uint8" : "uint16";
  if (kind !== minimal) throw new DocumentError(`matrix.index_type must be '${minimal}' for ${n} values (the smallest)`);
  const expand = (): Matrix => {
    const data = new Float64Array(b * a);
    for (let i = 0; i < data.length; i++) data[i] = values[index[i]];
    return { rows: b, cols: a, data };
  };
  checkColumnsSumToOne(expand());
  out.shape = [BigInt(b), BigInt(a)];
  out.index_type = kind;
  out.values = valuesText;
  out.index = indexText;
  return { spec: out, rows: b, cols: a, expand };
}
