/**
 * Numeric attributes (port of `rldp.shared.numeric`): a number's bin, read from the edges and closed
 * side a document gives the attribute. The rules are Python's, case for case (conformance/cases/numeric-*.json):
 *
 * - closed "left": bin i holds e_i ≤ x < e_{i+1}; closed "right": e_i < x ≤ e_{i+1};
 * - a finite x below lo is clamped into the first bin, above hi into the last;
 * - integers and floats are compared as doubles (a bigint through `Number()`, rounded to nearest, ties
 *   to even, as Python's `float(int)`); -0 is 0; booleans, null and other types are refused;
 * - a string equal to a bin's label is that bin; any other string must be a plain ASCII decimal
 *   (`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`) *before* `Number()` reads it (`Number("")` is 0,
 *   `Number(" 4")` 4, `Number("0x10")` 16: all refused here);
 * - NaN and ±Infinity (also from "1e400") are refused: a missing or broken measurement is not put in a bin.
 */
import { AlphabetError, RecordError } from "./errors.js";
import { isObj, pyRepr, typeName } from "./pyjson.js";

/** The sides a bin may be closed on. */
export const CLOSED_SIDES = ["left", "right"] as const;
/** The most bins a numeric attribute may have. */
export const MAX_BINS = 1024;

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The edges e_0 < … < e_k of a numeric attribute's k bins and the side each bin is closed on. */
export class NumericSpec {
  readonly edges: readonly number[];
  private readonly inner: Float64Array;
  private readonly left: boolean;

  constructor(edgesIn: readonly unknown[], readonly closed: string = "left") {
    if (!Array.isArray(edgesIn)) throw new AlphabetError(`numeric edges must be a list of numbers, got ${typeName(edgesIn)}`);
    const edges = edgesIn.map((e, i) => {
      if (typeof e !== "number" && typeof e !== "bigint") throw new AlphabetError(`numeric edge ${i} must be a number, got ${pyRepr(e)}`);
      const v = Number(e);
      if (!Number.isFinite(v)) throw new AlphabetError(`numeric edge ${i} is ${pyRepr(e)}; edges must be finite`);
      return v + 0; // -0 → 0
    });
    if (edges.length < 2) throw new AlphabetError(`a numeric attribute needs at least 2 edges (1 bin); got ${edges.length}`);
    if (edges.length - 1 > MAX_BINS) throw new AlphabetError(`a numeric attribute has at most ${MAX_BINS} bins; these edges make ${edges.length - 1}`);
    for (let i = 1; i < edges.length; i++) {
      if (!(edges[i] > edges[i - 1])) {
        throw new AlphabetError(`numeric edges must be strictly increasing; edge ${i} (${pyRepr(edges[i])}) is not above edge ${i - 1} (${pyRepr(edges[i - 1])})`);
      }
    }
    if (closed !== "left" && closed !== "right") throw new AlphabetError(`numeric 'closed' must be 'left' or 'right', got ${pyRepr(closed)}`);
    this.edges = edges;
    this.inner = Float64Array.from(edges.slice(1, -1));
    this.left = closed === "left";
  }

  /** k, the number of bins. */
  get bins(): number {
    return this.edges.length - 1;
  }

  /** The bin of a finite double; values outside [lo, hi] are clamped (bisect right when closed left, else left). */
  binOf(x: number): number {
    const inner = this.inner;
    let lo = 0;
    let hi = inner.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.left ? inner[mid] <= x : inner[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Strict inverse of the document's `{"edges": [...], "closed": "left"}` (AlphabetError naming the attribute). */
  static fromDict(data: unknown, name: string): NumericSpec {
    if (!isObj(data)) throw new AlphabetError(`attribute ${pyRepr(name)}: 'numeric' must be an object with 'edges' and 'closed'`);
    const unknown = Object.keys(data).filter((k) => k !== "edges" && k !== "closed").sort();
    if (unknown.length) throw new AlphabetError(`attribute ${pyRepr(name)}: unknown numeric field(s) ${unknown.join(", ")}`);
    for (const key of ["edges", "closed"]) {
      if (!(key in data)) throw new AlphabetError(`attribute ${pyRepr(name)}: 'numeric' is missing '${key}'`);
    }
    if (!Array.isArray(data.edges)) throw new AlphabetError(`attribute ${pyRepr(name)}: numeric 'edges' must be a list of numbers`);
    try {
      return new NumericSpec(data.edges, data.closed as string);
    } catch (exc) {
      if (exc instanceof AlphabetError) throw new AlphabetError(`attribute ${pyRepr(name)}: ${exc.message}`);
      throw exc;
    }
  }
}

function refuse(value: unknown, name: string, record: number | undefined, why: string): never {
  const where = record === undefined ? "" : `record ${record}: `;
  throw new RecordError(`${where}attribute '${name}' is numeric; ${why.replace("%v", pyRepr(value))}`);
}

/**
 * A record's value of a numeric attribute as a finite double: a number, a bigint or a decimal string
 * (RecordError for anything else, NaN, ±Infinity or text that is not a plain ASCII decimal). A string
 * equal to a bin's label is looked up by the caller first.
 */
export function toDouble(value: unknown, name: string, record?: number): number {
  let x: number;
  if (typeof value === "number") x = value;
  else if (typeof value === "bigint") x = Number(value);
  else if (typeof value === "string") {
    if (!DECIMAL.test(value)) {
      refuse(value, name, record, "%v is not a finite decimal number (expected e.g. 42, -3.5 or 1e3: ASCII digits, no spaces, no NaN or infinity)");
    }
    x = Number(value);
  } else if (typeof value === "boolean") refuse(value, name, record, "got a boolean (%v)");
  else refuse(value, name, record, `got ${value === null ? "null" : typeof value}, expected a number or a decimal string`);
  if (!Number.isFinite(x)) refuse(value, name, record, "got %v, but NaN and infinities are refused (a missing or broken measurement is not put in a bin)");
  return x;
}
