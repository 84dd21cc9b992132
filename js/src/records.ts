/**
 * The record alphabet and record encoding (port of `rldp.shared.records` / `attributes`).
 *
 * X = S × U when S is an input (x = s·|U| + u, attributes in order, the last fastest), X = U when
 * S is latent. Values are matched by exact string (no trimming, no Unicode normalisation).
 */
import { AlphabetError, RecordError } from "./errors.js";
import { NumericSpec, toDouble } from "./numeric.js";
import { isObj, pyRepr, typeName, type Value } from "./pyjson.js";
import { unsafeText } from "./text.js";

const MAX_LISTED = 50;

function internalise(v: string): string {
  const o: Record<string, number> = Object.create(null);
  o[v] = 0;
  return Object.keys(o)[0];
}

function listing(values: readonly string[]): string {
  if (values.length <= MAX_LISTED) return values.join(", ");
  return `${values.slice(0, MAX_LISTED).join(", ")}, ... (${values.length - MAX_LISTED} more)`;
}

/**
 * An attribute: a name and its ordered, distinct string values. A numeric attribute also has `numeric`
 * (its bins' edges and closed side, src/numeric.ts): its values are the bins' labels, and {@link code}
 * maps a number or a decimal string to its bin.
 */
export class Attribute {
  readonly index: Map<string, number>;
  readonly values: readonly string[];
  constructor(readonly name: string, valuesIn: readonly string[], readonly numeric: NumericSpec | null = null) {
    // Values parsed from a document are fresh strings; made property keys they become the engine's
    // internalised copies, which the same text written in app code is too: === is then a pointer test.
    const values = Array.isArray(valuesIn) ? valuesIn.map((v) => (typeof v === "string" ? internalise(v) : v)) : valuesIn;
    this.values = values;
    if (typeof name !== "string" || !name) throw new AlphabetError(`attribute name must be a non-empty string, got ${pyRepr(name)}`);
    // Names and values reach CSV exports, terminals and pages: no control, bidi or line-separator characters.
    const badName = unsafeText(name, `attribute name ${pyRepr(name)}`);
    if (badName !== null) throw new AlphabetError(badName);
    if (!Array.isArray(values)) throw new AlphabetError(`attribute '${name}': values must be a sequence of strings`);
    if (!values.length) throw new AlphabetError(`attribute '${name}' has no values; need at least 1`);
    this.index = new Map();
    values.forEach((v, i) => {
      if (typeof v !== "string") throw new AlphabetError(`attribute '${name}': value ${pyRepr(v)} is not a string`);
      const bad = unsafeText(v, `attribute ${pyRepr(name)}: value ${pyRepr(v)}`);
      if (bad !== null) throw new AlphabetError(bad);
      if (this.index.has(v)) throw new AlphabetError(`attribute '${name}': value ${pyRepr(v)} appears more than once`);
      this.index.set(v, i);
    });
    if (numeric !== null && numeric.bins !== values.length) {
      throw new AlphabetError(
        `attribute '${name}': ${numeric.bins} bins (from ${numeric.bins + 1} edges) but ${values.length} values; a numeric attribute has one value (label) per bin`,
      );
    }
  }

  get size(): number {
    return this.values.length;
  }

  /** Position of `value`; RecordError naming the allowed values if unknown. */
  code(value: unknown, record?: number): number {
    if (this.numeric !== null) {
      const label = typeof value === "string" ? this.index.get(value) : undefined;
      return label ?? this.numeric.binOf(toDouble(value, this.name, record));
    }
    const key = typeof value === "string" ? value : String(value);
    const i = this.index.get(key);
    if (i === undefined) {
      const where = record === undefined ? "" : `record ${record}: `;
      throw new RecordError(`${where}unknown value ${pyRepr(key)} for attribute '${this.name}'; allowed: ${listing(this.values)}`);
    }
    return i;
  }

  static fromDict(data: unknown): Attribute {
    if (!isObj(data)) throw new AlphabetError(`attribute must be an object with 'name' and 'values', got ${typeName(data)}`);
    for (const key of ["name", "values"]) {
      if (!(key in data)) throw new AlphabetError(`attribute ${pyRepr(data.name ?? "?")} is missing '${key}'`);
    }
    if (!Array.isArray(data.values)) throw new AlphabetError(`attribute ${pyRepr(data.name)}: 'values' must be a list of strings`);
    const spec = "numeric" in data ? NumericSpec.fromDict(data.numeric, String(data.name)) : null;
    return new Attribute(data.name as string, data.values as string[], spec);
  }
}

/** A value's code: a scan with === for few values (pointer-equal strings compare at once), else the map; −1 if unknown. */
function code(values: readonly string[] | null, map: Map<string, number>, v: unknown): number {
  if (values !== null) {
    for (let t = 0; t < values.length; t++) if (values[t] === v) return t;
    return -1;
  }
  const c = map.get(v as string);
  return c === undefined ? -1 : c;
}

function strides(sizes: number[]): number[] {
  const out = sizes.map(() => 1);
  for (let j = sizes.length - 2; j >= 0; j--) out[j] = out[j + 1] * sizes[j + 1];
  return out;
}

/** A record: an object of attribute values (extra keys ignored) or an array in input order. */
export type RecordLike = Record<string, unknown> | readonly unknown[];

/** The record space: sensitive attributes S, released attributes U, and the input X. */
export class Alphabet {
  readonly inputs: readonly Attribute[];
  readonly nSensitive: number;
  readonly nReleased: number;
  readonly strides: number[];
  private readonly sensitiveNames: Set<string>;

  constructor(readonly sensitive: readonly Attribute[], readonly released: readonly Attribute[], readonly latent = false) {
    if (!sensitive.length) throw new AlphabetError("at least one sensitive attribute is required");
    const names = [...sensitive, ...released].map((a) => a.name);
    names.forEach((name, i) => {
      if (names.slice(0, i).includes(name)) {
        const what = names.slice(0, sensitive.length).includes(name) ? "a sensitive attribute" : "a released attribute";
        throw new AlphabetError(`attribute '${name}' is listed twice (it is already ${what})`);
      }
    });
    this.nSensitive = sensitive.reduce((p, a) => p * a.size, 1);
    if (this.nSensitive < 2) {
      if (sensitive.length === 1) {
        throw new AlphabetError(`sensitive attribute '${sensitive[0].name}' has only one value (${pyRepr(sensitive[0].values[0])}); need at least 2`);
      }
      throw new AlphabetError(`the sensitive attributes ${names.slice(0, sensitive.length).join(", ")} have only one combination`);
    }
    if (latent && !released.length) throw new AlphabetError("a latent S needs at least one released attribute (the mechanism's input X = U)");
    this.nReleased = released.reduce((p, a) => p * a.size, 1);
    this.inputs = latent ? released : [...sensitive, ...released];
    this.strides = strides(this.inputs.map((a) => a.size));
    this.sensitiveNames = new Set(sensitive.map((a) => a.name));
  }

  /** |X|: the mechanism's inputs (columns of Q). */
  get size(): number {
    return this.latent ? this.nReleased : this.nSensitive * this.nReleased;
  }

  /** Attribute names of a mechanism input, in tuple order. */
  get names(): string[] {
    return this.inputs.map((a) => a.name);
  }

  get needsFormat2(): boolean {
    return this.latent || this.sensitive.length > 1;
  }

  /** From a document's `{"sensitive": ..., "released": [...]}` (extra keys ignored). */
  static fromDict(data: unknown): Alphabet {
    if (!isObj(data)) throw new AlphabetError(`alphabet must be an object, got ${typeName(data)}`);
    if (!("sensitive" in data)) throw new AlphabetError("alphabet is missing 'sensitive'");
    const released = data.released ?? [];
    if (!Array.isArray(released)) throw new AlphabetError(`'released' must be a list of attributes, got ${typeName(released)}`);
    const sens = data.sensitive;
    if (!isObj(sens)) throw new AlphabetError(`'sensitive' must be an object, got ${typeName(sens)}`);
    const flag = "released" in sens ? sens.released : true;
    if (typeof flag !== "boolean") throw new AlphabetError(`sensitive.released must be true or false, got ${pyRepr(flag)}`);
    let attrs: Attribute[];
    if ("attributes" in sens) {
      const parts = sens.attributes;
      if (!Array.isArray(parts) || !parts.length) throw new AlphabetError("sensitive.attributes must be a non-empty list of attributes");
      attrs = parts.map((a) => Attribute.fromDict(a));
    } else attrs = [Attribute.fromDict(sens)];
    return new Alphabet(attrs, (released as Value[]).map((r) => Attribute.fromDict(r)), !flag);
  }

  private field(record: Record<string, unknown>, name: string, i: number): unknown {
    if (!Object.prototype.hasOwnProperty.call(record, name)) {
      const role = this.sensitiveNames.has(name) ? "sensitive" : "released";
      throw new RecordError(`record ${i} is missing the ${role} attribute '${name}'`);
    }
    return record[name];
  }

  /** x of one record (an object, or an array in {@link names} order). */
  encodeOne(record: RecordLike, i = 0): number {
    const attrs = this.inputs;
    let x = 0;
    if (Array.isArray(record)) {
      if (record.length !== attrs.length) {
        throw new RecordError(`record ${i} has ${record.length} fields; expected ${attrs.length} fields (${this.names.join(", ")})`);
      }
      for (let j = 0; j < attrs.length; j++) x += attrs[j].code(record[j]) * this.strides[j];
      return x;
    }
    if (typeof record !== "object" || record === null) {
      throw new RecordError(`record ${i} must be an object or an array of ${attrs.length} fields (${this.names.join(", ")}), got ${typeof record}`);
    }
    for (let j = 0; j < attrs.length; j++) {
      x += attrs[j].code(this.field(record as Record<string, unknown>, attrs[j].name, i)) * this.strides[j];
    }
    return x;
  }

  /** x for many records (objects or arrays) into an Int32Array. */
  encode(records: readonly RecordLike[]): Int32Array {
    const out = new Int32Array(records.length);
    const attrs = this.inputs;
    if (attrs.length > 4) {
      for (let i = 0; i < records.length; i++) out[i] = this.encodeChecked(records[i], i);
      return out;
    }
    // Objects of strings, the common case, unrolled for up to four attributes (a missing one codes as
    // 0 values and stride 0); −1 sends the record to the checked path, which names what is wrong.
    const pad = (j: number): [string, readonly string[] | null, Map<string, number>, number] =>
      j < attrs.length ? [attrs[j].name, attrs[j].size <= 16 ? attrs[j].values : null, attrs[j].index, this.strides[j]] : ["", [""], new Map(), 0];
    const [k0, v0, m0, s0] = pad(0);
    const [k1, v1, m1, s1] = pad(1);
    const [k2, v2, m2, s2] = pad(2);
    const [k3, v3, m3, s3] = pad(3);
    const n1 = attrs.length > 1;
    const n2 = attrs.length > 2;
    const n3 = attrs.length > 3;
    for (let i = 0; i < records.length; i++) {
      const r = records[i] as Record<string, unknown>;
      let x = -1;
      if (typeof r === "object" && r !== null && !Array.isArray(r)) {
        const c0 = code(v0, m0, r[k0]);
        const c1 = n1 ? code(v1, m1, r[k1]) : 0;
        const c2 = n2 ? code(v2, m2, r[k2]) : 0;
        const c3 = n3 ? code(v3, m3, r[k3]) : 0;
        if ((c0 | c1 | c2 | c3) >= 0) x = c0 * s0 + c1 * s1 + c2 * s2 + c3 * s3;
      }
      out[i] = x >= 0 ? x : this.encodeChecked(records[i], i);
    }
    return out;
  }

  private encodeChecked(record: RecordLike, i: number): number {
    try {
      return this.encodeOne(record, i);
    } catch (exc) {
      if (exc instanceof RecordError && !exc.message.startsWith("record ")) throw new RecordError(`record ${i}: ${exc.message}`);
      throw exc;
    }
  }

  /** x for records given as columns `{name: values}` (extra columns ignored). */
  encodeColumns(columns: Record<string, readonly unknown[]>): Int32Array {
    const attrs = this.inputs;
    const cols = attrs.map((a) => {
      if (!Object.prototype.hasOwnProperty.call(columns, a.name)) {
        throw new RecordError(`missing column for attribute '${a.name}'; got columns: ${Object.keys(columns).join(", ")}`);
      }
      const col = columns[a.name];
      if (typeof col === "string" || !col || typeof (col as { length?: unknown }).length !== "number") {
        throw new RecordError(`column '${a.name}' is a single value, not a sequence`);
      }
      return col;
    });
    const lengths = new Set(cols.map((c) => c.length));
    if (lengths.size > 1) {
      throw new RecordError(`columns have different lengths: ${attrs.map((a, j) => `${a.name}=${cols[j].length}`).join(", ")}`);
    }
    const n = cols.length ? cols[0].length : 0;
    const out = new Int32Array(n);
    for (let j = 0; j < attrs.length; j++) {
      const a = attrs[j];
      const col = cols[j];
      const s = this.strides[j];
      for (let i = 0; i < n; i++) {
        const c = a.index.get(col[i] as string);
        out[i] += (c === undefined ? a.code(col[i], i) : c) * s;
      }
    }
    return out;
  }

  /** The record (values in {@link names} order) of input x. */
  decodeOne(x: number): string[] {
    return this.inputs.map((a, j) => a.values[Math.floor(x / this.strides[j]) % a.size]);
  }
}
