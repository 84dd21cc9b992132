/**
 * Checking a document's public data (port of `rldp.shared.public_counts` and `rldp.shared.provenance`'s
 * `check_public_data` / `check_document_provenance`): an app that holds a copy of the public data a
 * mechanism was designed from recomputes its counts over S × U and compares them with the document's P̂,
 * n, radius and `provenance.counts_sha256`, whose canonical form is the Python client's byte for byte
 * (`conformance/cases/public-data.json` binds the two).
 *
 * The canonical counts are the UTF-8 bytes of
 * `{"attributes":[{"name":…,"values":[…]},…],"counts":[…],"format":"rldp.counts/1"}` (sorted keys, no
 * whitespace): the attributes over S × U (sensitive first, values in document order, a numeric attribute
 * with its `numeric` block, edges as floats) and the integer count of every cell, s major.
 */
import { RADIUS_RTOL } from "./audit-base.js";
import { sha256Hex, utf8Encode } from "./bytes.js";
import { DocumentError, PublicDataError, RecordError } from "./errors.js";
import { STOCHASTIC_TOLERANCE } from "./forms.js";
import { canonicalText, isObj, newObj, type Obj, type Value } from "./pyjson.js";
import { Alphabet, type Attribute } from "./records.js";
import { confidenceRadius } from "./uncertainty.js";
import type { ValidDocument } from "./document.js";

export const COUNTS_FORMAT = "rldp.counts/1";
/** How this version turns public rows into counts: every data row, missing markers ('?', '') kept as values. */
export const PUBLIC_DATA_POLICY: Readonly<Record<string, string>> = Object.freeze({ filter: "none", missing: "as-value" });
/** The confidence level a radius is held to when neither the caller nor the document states one. */
export const DEFAULT_BETA = 0.05;
const PILOT_SOURCE = "pilot";
const LISTED = 10;
const NO_PROVENANCE = "the document records no provenance (an older document): nothing says which public data gave its P̂";

/** Public data as columns of values `{name: values}` (a CSV's cells; numbers or decimal text for a numeric attribute). */
export type PublicColumns = Record<string, readonly unknown[]>;

/** One claim of a document that the public data (or the document itself) contradicts. */
export interface Mismatch {
  /** "public_distribution", "n", "radius", "counts_sha256" or "columns". */
  field: string;
  document: unknown;
  data: unknown;
  /** One line: the field, the document's value, the data's. */
  message: string;
}

/** The outcome of a provenance check: `passed` when nothing differs; `notes` say what was not compared. */
export class ProvenanceCheck {
  constructor(
    readonly mismatches: readonly Mismatch[] = [],
    readonly notes: readonly string[] = [],
    readonly provenance: Obj | null = null,
    /** The data's n (null for {@link checkDocumentProvenance}). */
    readonly n: number | null = null,
    /** The data's counts hash (for {@link checkDocumentProvenance}: the hash of the document's own P̂ × n). */
    readonly countsSha256: string | null = null,
  ) {}

  get passed(): boolean {
    return this.mismatches.length === 0;
  }

  /** The mismatches on one line ("" when it passed). */
  summary(): string {
    return this.mismatches.map((m) => m.message).join("; ");
  }

  toDict(): Record<string, unknown> {
    return {
      passed: this.passed,
      mismatches: this.mismatches.map((m) => ({ field: m.field, message: m.message })),
      notes: [...this.notes],
      provenance: this.provenance,
      n: this.n,
      counts_sha256: this.countsSha256,
    };
  }
}

/** The attributes over S × U (sensitive first), whatever the document's S is (latent or not). */
function jointAttributes(alphabet: Alphabet): readonly Attribute[] {
  return [...alphabet.sensitive, ...alphabet.released];
}

function attributeDict(a: Attribute): Obj {
  const out = newObj();
  out.name = a.name;
  out.values = [...a.values];
  if (a.numeric !== null) {
    const spec = newObj();
    spec.edges = a.numeric.edges.map((e) => e + 0); // numbers: written as floats, as Python's to_dict
    spec.closed = a.numeric.closed;
    out.numeric = spec;
  }
  return out;
}

function cellCounts(alphabet: Alphabet, counts: readonly (readonly number[])[] | ArrayLike<number>): bigint[] {
  const cells = alphabet.nSensitive * alphabet.nReleased;
  const flat: unknown[] = [];
  const items = Array.from(counts as ArrayLike<unknown>);
  for (const row of items) {
    if (Array.isArray(row)) flat.push(...row);
    else flat.push(row);
  }
  if (flat.length !== cells) {
    throw new DocumentError(`counts must have ${alphabet.nSensitive}×${alphabet.nReleased} cells (|S| × |U|); got ${flat.length}`);
  }
  return flat.map((v) => {
    if (typeof v === "bigint" && v >= 0n) return v;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
      throw new DocumentError("counts must be whole numbers ≥ 0 (records per cell of S × U)");
    }
    return BigInt(v);
  });
}

/** The canonical text of cell counts over the alphabet's S × U (s major): what the hash covers. */
export function canonicalCounts(alphabet: Alphabet, counts: readonly (readonly number[])[] | ArrayLike<number>): string {
  const body = newObj();
  body.format = COUNTS_FORMAT;
  body.attributes = jointAttributes(alphabet).map(attributeDict);
  body.counts = cellCounts(alphabet, counts);
  return canonicalText(body);
}

/** SHA-256 hex of {@link canonicalCounts}: the `counts_sha256` of a provenance. */
export function countsSha256(alphabet: Alphabet, counts: readonly (readonly number[])[] | ArrayLike<number>): string {
  return sha256Hex(utf8Encode(canonicalCounts(alphabet, counts)));
}

/**
 * Counts over S × U (s major, |S|·|U| cells) of every row of `columns` (PUBLIC_DATA_POLICY). PublicDataError
 * naming the columns it lacks, or every value (up to 10 per column) outside the alphabet.
 */
export function publicCounts(alphabet: Alphabet, columns: PublicColumns): number[] {
  const attrs = jointAttributes(alphabet);
  const names = attrs.map((a) => a.name);
  const have = Object.keys(columns);
  const missing = names.filter((n) => !Object.prototype.hasOwnProperty.call(columns, n));
  if (missing.length) {
    throw new PublicDataError(
      `the public data has no column${missing.length > 1 ? "s" : ""} ${missing.map((m) => `'${m}'`).join(", ")} (the document's attributes are ${names.join(", ")}); its columns: ${have.join(", ")}`,
    );
  }
  const rows = Math.min(...names.map((n) => columns[n].length));
  if (names.some((n) => columns[n].length !== rows)) {
    throw new PublicDataError(`the public data's columns have different lengths: ${names.map((n) => `${n}=${columns[n].length}`).join(", ")}`);
  }
  if (rows === 0) throw new PublicDataError("the public data has no rows");
  const unknown: string[] = [];
  for (const a of attrs) {
    if (a.numeric !== null) continue; // every finite number has a bin (clamped); the rest is refused below
    const extra = [...new Set(columns[a.name].map(String))].filter((v) => !a.index.has(v)).sort(codePointCompare);
    if (extra.length) {
      const more = extra.length > LISTED ? ` and ${extra.length - LISTED} more` : "";
      unknown.push(`${a.name}: ${extra.slice(0, LISTED).map((v) => `'${v}'`).join(", ")}${more}`);
    }
  }
  if (unknown.length) {
    throw new PublicDataError(
      `the public data has values outside the document's alphabet (${unknown.join("; ")}): it is not the data the document was designed from`,
    );
  }
  const joint = new Alphabet(alphabet.sensitive, alphabet.released, false);
  const textColumns: Record<string, unknown[]> = {};
  for (const a of attrs) textColumns[a.name] = columns[a.name].map((v) => (a.numeric === null ? String(v) : v));
  let x: Int32Array;
  try {
    x = joint.encodeColumns(textColumns);
  } catch (exc) {
    if (exc instanceof RecordError) throw new PublicDataError(`the public data has a value no bin holds: ${exc.message}`);
    throw exc;
  }
  const out = new Array<number>(joint.size).fill(0);
  for (let i = 0; i < x.length; i++) out[x[i]]++;
  return out;
}

function codePointCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function num(v: Value | undefined): number | null {
  return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : null;
}

function g6(v: number): string {
  return Number.isFinite(v) ? String(Number(v.toPrecision(6))) : String(v);
}

interface Claims {
  alphabet: Alphabet;
  pHat: Float64Array;
  unc: Obj | null;
  prov: Obj | null;
}

function claims(valid: ValidDocument): Claims {
  const privacy = valid.doc.privacy;
  const unc = isObj(privacy) && isObj(privacy.uncertainty) ? privacy.uncertainty : null;
  const prov = isObj(valid.doc.provenance) ? valid.doc.provenance : null;
  return { alphabet: valid.alphabet, pHat: valid.publicDistribution.data, unc, prov };
}

/** `[Female|White]`: the values of cell (s, u) of S × U. */
function cell(alphabet: Alphabet, index: number): string {
  const attrs = jointAttributes(alphabet);
  const parts: string[] = [];
  let rest = index;
  for (let j = attrs.length - 1; j >= 0; j--) {
    parts.unshift(attrs[j].values[rest % attrs[j].size]);
    rest = Math.floor(rest / attrs[j].size);
  }
  const s = parts.slice(0, alphabet.sensitive.length).join("|");
  return `[${[s, ...parts.slice(alphabet.sensitive.length)].join("|")}]`;
}

function columnsMismatch(prov: Obj, alphabet: Alphabet): Mismatch[] {
  const names = jointAttributes(alphabet).map((a) => a.name);
  const cols = (prov.columns as string[]) ?? [];
  if (cols.length === names.length && cols.every((c, i) => c === names[i])) return [];
  const message = `columns: provenance.columns are ${cols.join(", ")}, the document's attributes ${names.join(", ")}`;
  return [{ field: "columns", document: [...cols], data: names, message }];
}

function radiusCheck(unc: Obj | null, n: number, cells: number, beta: number | null): [Mismatch[], string[]] {
  if (unc === null) return [[], ["the document's notion has no uncertainty set: no radius to compare"]];
  const radius = num(unc.radius);
  if (radius === null) return [[], []]; // unbounded: every distribution, the largest set there is
  let level = beta ?? num(unc.beta);
  const notes: string[] = [];
  if (level === null) {
    level = DEFAULT_BETA;
    notes.push(`the document states no confidence level (beta): its radius is held to beta = ${g6(level)}`);
  }
  const order = num(unc.order) ?? 2;
  const needed = confidenceRadius(n, level, cells, order);
  if (radius >= needed * (1 - RADIUS_RTOL)) return [[], notes];
  const message = `radius: the document's ${g6(radius)} is smaller than the ${g6(100 * (1 - level))} % confidence radius ${g6(needed)} for the data's n = ${n} (beta ${g6(level)}, order ${g6(order)})`;
  return [[{ field: "radius", document: radius, data: needed, message }], notes];
}

/**
 * The document's claims against a copy of its public data, recomputed as the designer did (port of
 * `check_public_data`): P̂ (every cell within 1e-9), n (`privacy.uncertainty.n`, `provenance.n`), the radius
 * (at least the (1 − β)-confidence radius for the data's n at the document's order, β = `beta`, else the
 * document's, else 0.05: a smaller radius is the inflated-n attack) and, with a provenance, the counts hash
 * and the columns. `columns` holds the public data as `{name: values}` (a CSV's cells).
 * PublicDataError when the data lacks a column or holds values outside the alphabet, when P̂ came from a
 * pilot, or when the provenance names a policy this version does not apply.
 */
export function checkPublicData(valid: ValidDocument, columns: PublicColumns, options: { beta?: number } = {}): ProvenanceCheck {
  checkPolicy(valid);
  return compare(valid, publicCounts(valid.alphabet, columns), options.beta ?? null);
}

/** {@link checkPublicData} from the public data's counts over S × U (|S| rows of |U|, or |S|·|U| cells, s major). */
export function checkPublicCounts(
  valid: ValidDocument,
  counts: readonly (readonly number[])[] | ArrayLike<number>,
  options: { beta?: number } = {},
): ProvenanceCheck {
  checkPolicy(valid);
  const cells = cellCounts(valid.alphabet, counts).map(Number);
  if (!cells.some((c) => c > 0)) throw new PublicDataError("the public data has no rows");
  return compare(valid, cells, options.beta ?? null);
}

function checkPolicy(valid: ValidDocument): void {
  const { prov } = claims(valid);
  if (prov !== null && prov.source === PILOT_SOURCE) {
    throw new PublicDataError(
      "the document's P̂ came from a private pilot, not from public data: check it against its pilot (rldp audit --pilot PILOT)",
    );
  }
  if (prov !== null) {
    const policy = isObj(prov.policy) ? prov.policy : newObj();
    const keys = Object.keys(policy).sort();
    const same = keys.length === 2 && keys.every((k) => policy[k] === PUBLIC_DATA_POLICY[k]);
    if (!same) {
      throw new PublicDataError(
        `the document's provenance policy ${canonicalText(policy)} is not the one this version applies (${JSON.stringify(PUBLIC_DATA_POLICY)}): its P̂ cannot be recomputed here`,
      );
    }
  }
}

function compare(valid: ValidDocument, counts: number[], beta: number | null): ProvenanceCheck {
  const { alphabet, pHat, unc, prov } = claims(valid);
  const n = counts.reduce((a, b) => a + b, 0);
  if (n === 0) throw new PublicDataError("the public data has no rows");
  const digest = countsSha256(alphabet, counts);
  const notes = prov !== null ? [] : [NO_PROVENANCE + "; P̂, n and the radius are still compared"];
  const mismatches: Mismatch[] = [];

  let worst = -1;
  let gapMax = 0;
  let differ = 0;
  for (let i = 0; i < counts.length; i++) {
    const gap = Math.abs(pHat[i] - counts[i] / n);
    if (gap > STOCHASTIC_TOLERANCE) differ++;
    if (gap > gapMax) [gapMax, worst] = [gap, i];
  }
  if (gapMax > STOCHASTIC_TOLERANCE) {
    const message = `public_distribution${cell(alphabet, worst)}: the document says ${g6(pHat[worst])}, the data gives ${g6(counts[worst] / n)} (${differ} of ${counts.length} cells differ)`;
    mismatches.push({ field: "public_distribution", document: pHat[worst], data: counts[worst] / n, message });
  }

  const stated: [string, number][] = [];
  const uncN = unc === null ? null : num(unc.n);
  if (uncN !== null) stated.push(["privacy.uncertainty.n", uncN]);
  if (prov !== null) stated.push(["provenance.n", Number(prov.n as bigint)]);
  for (const value of [...new Set(stated.map(([, v]) => v))].sort((a, b) => a - b)) {
    if (value !== n) {
      const where = stated.filter(([, v]) => v === value).map(([k]) => k).join(", ");
      mismatches.push({ field: "n", document: value, data: n, message: `n: the document says ${value} (${where}), the data has ${n}` });
    }
  }
  if (!stated.length) notes.push("the document states no n");

  const [radiusMismatches, radiusNotes] = radiusCheck(unc, n, counts.length, beta);
  mismatches.push(...radiusMismatches);
  notes.push(...radiusNotes);
  if (prov !== null) {
    const said = String(prov.counts_sha256);
    if (said !== digest) {
      const message = `counts_sha256: the document says ${said.slice(0, 16)}…, the data hashes to ${digest.slice(0, 16)}…`;
      mismatches.push({ field: "counts_sha256", document: said, data: digest, message });
    }
    mismatches.push(...columnsMismatch(prov, alphabet));
  }
  return new ProvenanceCheck(mismatches, notes, prov, n, digest);
}
