/**
 * Exact samplers in integers (port of `rldp.client.sampling`, `alias` and `grr`).
 *
 * A record's output is y ~ Q(·|x) drawn from a uniform 53-bit integer u. Inversion: with the
 * thresholds T[x][y] = ⌈C[x][y]·2⁵³⌉ (C the normalised cumulative sums, computed with the same
 * float operations as Python), y = #{y' : T[x][y'] ≤ u}. Thousands of outputs: Walker/Vose alias
 * tables built in integers from the same thresholds (Walker, ACM TOMS 1977; Vose, IEEE TSE 1991).
 * GRR with k ≥ 64 symbols: its two exact integer masses (m_d, m_o) [LZG24, eq 56]. The tables are
 * identical, byte for byte, to the Python client's (the conformance suite checks them), and so is
 * y for every (x, u); the CSPRNG path draws 16 bits first and the rest only when they are needed,
 * the same function of the same u.
 */
import { RecordError } from "./errors.js";
import type { Matrix } from "./forms.js";
import type { RandomSource } from "./random.js";
import { CryptoRandom, fill } from "./random.js";

const TWO53 = 2 ** 53;
const TWO32 = 2 ** 32;
const MAX_TABLE = 2 ** 22;
const FAST_TABLE = 2 ** 20;
const ALIAS_MIN_OUTPUTS = 64;
const ALIAS_MAX_OUTPUTS = 65536;
const MAX_ALIAS = 2 ** 27;
export const GRR_MIN_SIZE = 64;

const bitLength = (n: number) => (n <= 0 ? 0 : Math.floor(Math.log2(n)) + 1);

/** The integer thresholds T (|X| × |Y|, x-major), exact in doubles (≤ 2⁵³). */
export function thresholds(q: Matrix): Float64Array {
  const { rows: b, cols: a, data } = q;
  const cum = new Float64Array(b * a);
  cum.set(data.subarray(0, a));
  for (let y = 1; y < b; y++) for (let x = 0; x < a; x++) cum[y * a + x] = cum[(y - 1) * a + x] + data[y * a + x];
  const out = new Float64Array(a * b);
  for (let x = 0; x < a; x++) {
    const total = cum[(b - 1) * a + x];
    if (!(total > 0)) throw new RecordError(`column ${x} of the matrix has no mass`);
    for (let y = 0; y < b; y++) out[x * b + y] = Math.ceil((cum[y * a + x] / total) * TWO53);
  }
  return out;
}

/** Alias tables of every column (Vose in integers); entry x·2ᴸ + bucket keeps `prob` units and `alias`. */
export class AliasTable {
  readonly bits: number;
  readonly buckets: number;
  readonly prob: Float64Array;
  readonly alias: Uint16Array;

  constructor(t: Float64Array, a: number, b: number) {
    if (b > ALIAS_MAX_OUTPUTS) throw new RecordError(`alias tables hold at most ${ALIAS_MAX_OUTPUTS} outputs; got ${b}`);
    this.bits = Math.max(6, bitLength(b - 1));
    const B = (this.buckets = 2 ** this.bits);
    const cap = 2 ** (53 - this.bits);
    this.prob = new Float64Array(a * B);
    this.alias = new Uint16Array(a * B);
    const order = new Int32Array(B);
    for (let x = 0; x < a; x++) {
      const w = this.prob.subarray(x * B, (x + 1) * B);
      const alias = this.alias.subarray(x * B, (x + 1) * B);
      w[0] = t[x * b];
      for (let y = 1; y < b; y++) w[y] = t[x * b + y] - t[x * b + y - 1];
      let nSmall = 0;
      for (let i = 0; i < B; i++) if (w[i] < cap) order[nSmall++] = i;
      let j = nSmall;
      for (let i = 0; i < B; i++) if (!(w[i] < cap)) order[j++] = i;
      for (let i = 0; i < B; i++) alias[i] = i;
      let si = 0;
      let li = nSmall;
      let pending = -1;
      for (let step = 0; step < B; step++) {
        const hasPending = pending >= 0;
        if (!((hasPending || si < nSmall) && li < B)) break;
        const cur = hasPending ? pending : order[Math.min(si, B - 1)];
        const donor = order[li];
        alias[cur] = donor;
        w[donor] -= cap - w[cur];
        if (!hasPending) si++;
        if (w[donor] < cap) {
          pending = donor;
          li++;
        } else pending = -1;
      }
    }
  }

  /** y for record x and 53-bit integer u. */
  draw(x: number, u: number): number {
    const shift = 2 ** (53 - this.bits);
    const bucket = Math.floor(u / shift);
    const i = x * this.buckets + bucket;
    return u - bucket * shift < this.prob[i] ? bucket : this.alias[i];
  }

  /** The packed table as Python stores it: little-endian uint64 `prob << 16 | alias`, entry x·2ᴸ + bucket. */
  packed(): Uint8Array {
    const out = new Uint8Array(8 * this.prob.length);
    const view = new DataView(out.buffer);
    for (let i = 0; i < this.prob.length; i++) {
      const p = this.prob[i];
      view.setUint32(8 * i, ((p % 65536) * 65536 + this.alias[i]) >>> 0, true);
      view.setUint32(8 * i + 4, Math.floor(p / 65536), true);
    }
    return out;
  }
}

/** Common interface of the samplers. */
export interface Sampler {
  readonly nInputs: number;
  readonly nOutputs: number;
  readonly kind: "inversion" | "alias" | "grr";
  /** Outputs for record indices `xs`; `source` defaults to the CSPRNG. */
  sample(xs: ArrayLike<number>, source?: RandomSource, out?: Int32Array): Int32Array;
}

function checkIndices(xs: ArrayLike<number>, n: number): void {
  if (xs instanceof Int32Array || xs instanceof Uint32Array || xs instanceof Uint16Array || xs instanceof Uint8Array) {
    let bad = 0; // integers already: one range check, branch-free
    for (let i = 0; i < xs.length; i++) bad |= +((xs[i] >>> 0) >= n);
    if (!bad) return;
  }
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (!(x >= 0 && x < n) || !Number.isInteger(x)) throw new RecordError(`record ${i}: input index ${x} is outside 0..${n - 1}`);
  }
}

const CRYPTO = new CryptoRandom();

/** Inversion (with a guide table for the CSPRNG path) or alias tables, chosen as in Python. */
export class ColumnSampler implements Sampler {
  readonly nInputs: number;
  readonly nOutputs: number;
  readonly kind: "inversion" | "alias";
  readonly thresholds: Float64Array;
  readonly alias: AliasTable | null;
  private guide: Int8Array | Int16Array | Int32Array | null = null;
  private guideBits = 0;
  private pendingBuffer = new Int32Array(0);
  private xsBuffer = new Int32Array(0);
  private topBuffer: Uint8Array | Uint16Array = new Uint8Array(0);

  constructor(q: Matrix) {
    const [b, a] = [q.rows, q.cols];
    this.nOutputs = b;
    this.nInputs = a;
    this.thresholds = thresholds(q);
    const width = b <= 16 && a * 65536 <= FAST_TABLE ? 16 : b <= 16 ? 8 : 16;
    const kMax = a <= MAX_TABLE ? Math.floor(Math.log2(MAX_TABLE / a)) : 0;
    const tableBits = Math.min(width, kMax);
    const buckets = 2 ** Math.max(6, bitLength(b - 1));
    const useAlias = ALIAS_MIN_OUTPUTS <= b && b <= ALIAS_MAX_OUTPUTS && b > 2 ** tableBits / 16 && a * buckets <= MAX_ALIAS;
    this.alias = useAlias ? new AliasTable(this.thresholds, a, b) : null;
    this.kind = useAlias ? "alias" : "inversion";
  }

  /** y = #{y' : T[x][y'] ≤ u}, searching from `lo`. */
  private invert(x: number, u: number, lo = 0): number {
    const b = this.nOutputs;
    const t = this.thresholds;
    let y = lo;
    const base = x * b;
    if (b - lo > 16) {
      let hi = b - 1;
      while (y < hi) {
        const mid = (y + hi) >> 1;
        if (t[base + mid] <= u) y = mid + 1;
        else hi = mid;
      }
      return y;
    }
    while (t[base + y] <= u) y++;
    return y;
  }

  /** Bits of u drawn first on the CSPRNG path: 8 for few outputs (a table of |X|·256 bytes stays in L1), else up to 16. */
  get firstBits(): number {
    return this.nOutputs <= 16 ? 8 : 16;
  }

  /** The guide table: the output of every (top k bits of u, x) whose interval holds no threshold, else −1 − lo. */
  private buildGuide(): void {
    const [a, b] = [this.nInputs, this.nOutputs];
    const k = Math.min(this.firstBits, a <= MAX_TABLE ? Math.floor(Math.log2(MAX_TABLE / a)) : 0);
    this.guideBits = k;
    const size = 2 ** k;
    const width = 2 ** (53 - k);
    // The smallest type that holds every entry (y or −1 − lo): gathers from it stay in cache.
    const guide = b <= 127 ? new Int8Array(a * size) : b <= 32767 ? new Int16Array(a * size) : new Int32Array(a * size);
    const t = this.thresholds;
    for (let x = 0; x < a; x++) {
      let lo = 0;
      for (let j = 0; j < size; j++) {
        const start = j * width;
        while (lo < b && t[x * b + lo] <= start) lo++;
        let hi = lo;
        const end = start + width - 1;
        while (hi < b && t[x * b + hi] <= end) hi++;
        guide[j * a + x] = lo === hi ? lo : -1 - lo;
      }
    }
    this.guide = guide;
  }

  sample(xsIn: ArrayLike<number>, source?: RandomSource, out?: Int32Array): Int32Array {
    const n = xsIn.length;
    const result = out ?? new Int32Array(n);
    const src = source ?? CRYPTO;
    const fast = !this.alias && src.u8 && src.u16 && src.u32;
    if (!fast) checkIndices(xsIn, this.nInputs);
    if (this.alias) {
      const u = src.u53(n);
      for (let i = 0; i < n; i++) result[i] = this.alias.draw(xsIn[i], u[i]);
      return result;
    }
    if (!fast) {
      const u = src.u53(n); // an injected source: every record's whole u, as Python's u53_from
      for (let i = 0; i < n; i++) result[i] = this.invert(xsIn[i], u[i]);
      return result;
    }
    let xs: Int32Array;
    if (xsIn instanceof Int32Array) xs = xsIn;
    else {
      // number[] or another typed array: copied into Int32 once (checked on the way), then the same path
      if (this.xsBuffer.length < n) this.xsBuffer = new Int32Array(n);
      xs = this.xsBuffer.subarray(0, n);
      if (!copyIndices(xsIn, xs, this.nInputs)) checkIndices(xsIn, this.nInputs); // names the first bad one
    }
    if (!this.guide) this.buildGuide();
    const first = this.firstBits;
    let top: Uint8Array | Uint16Array;
    if (src === CRYPTO) {
      // the default source: its bytes go straight into a buffer kept between calls (no allocation)
      if (this.topBuffer.length < n || this.topBuffer.BYTES_PER_ELEMENT !== first / 8) this.topBuffer = first === 8 ? new Uint8Array(n) : new Uint16Array(n);
      top = this.topBuffer.subarray(0, n);
      fill(top);
    } else top = first === 8 ? src.u8!(n) : src.u16!(n);
    if (this.pendingBuffer.length < n) this.pendingBuffer = new Int32Array(n);
    const pending = this.pendingBuffer;
    const m = guideLoop(this.guide as Int8Array, top, first - this.guideBits, this.nInputs, xs, result, pending);
    if (m < 0) checkIndices(xs, this.nInputs); // names the first bad index
    if (m > 0) {
      // The remaining 53 − first bits of u: the top (21 − first) bits of one word, then 32 more.
      const rest = src.u32!(2 * m);
      const high = 2 ** (53 - first);
      for (let j = 0; j < m; j++) {
        const i = pending[j];
        const u = top[i] * high + (rest[2 * j] >>> (first + 11)) * TWO32 + rest[2 * j + 1];
        result[i] = this.invert(xs[i], u, -1 - result[i]);
      }
    }
    return result;
  }
}

/** Copy indices into `out` (Int32); false if one is not an integer in [0, a). */
function copyIndices(xs: ArrayLike<number>, out: Int32Array, a: number): boolean {
  for (let i = 0; i < out.length; i++) {
    const x = xs[i];
    if (!(x >= 0 && x < a) || (x | 0) !== x) return false;
    out[i] = x;
  }
  return true;
}

/**
 * The hot loop of the CSPRNG path (its own small function: V8 optimises it for the arrays it sees):
 * y from the guide table, the records it cannot decide listed in `pending`; returns how many, or −1
 * when some x is outside [0, a) (the caller then names it).
 */
function guideLoop(guide: Int8Array, top: Uint8Array | Uint16Array, shift: number, a: number, xs: Int32Array, result: Int32Array, pending: Int32Array): number {
  let m = 0;
  let bad = 0;
  const n = result.length;
  for (let i = 0; i < n; i++) {
    const x = xs[i];
    bad |= +((x >>> 0) >= a);
    const g = guide[(top[i] >> shift) * a + x];
    result[i] = g;
    if (g < 0) pending[m++] = i;
  }
  return bad ? -1 : m;
}

/** A float64 as an exact fraction m · 2^e (m a BigInt). */
function exactParts(v: number): [bigint, number] {
  if (v === 0) return [0n, 0];
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const expBits = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (expBits === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = expBits - 1075;
  }
  return [mant, e];
}

/** GRR(k; d, o) sampled from its two exact integer masses (port of `rldp.client.grr`). */
export class GrrSampler implements Sampler {
  readonly kind = "grr" as const;
  readonly nInputs: number;
  readonly nOutputs: number;
  readonly scaleBits: number;
  /** [m_d, m_o, M]: P(y = x) = m_d / M, P(y) = m_o / M for each y ≠ x (exactly). */
  readonly masses: [bigint, bigint, bigint];
  private readonly md: number;
  private readonly mo: number;
  private readonly total: number;

  constructor(readonly size: number, readonly diagonal: number, readonly offDiagonal: number) {
    if (!(Number.isInteger(size) && size >= 2)) throw new RecordError(`size must be an integer ≥ 2; got ${size}`);
    const k = size;
    this.nInputs = this.nOutputs = k;
    const [dm, de] = exactParts(diagonal);
    const [om, oe] = exactParts(offDiagonal);
    const e = Math.min(de, oe);
    const dn = dm << BigInt(de - e);
    const on = om << BigInt(oe - e);
    const totalN = dn + BigInt(k - 1) * on;
    if (totalN === 0n) throw new RecordError("diagonal and off_diagonal are both 0: the columns have no mass");
    this.scaleBits = Math.max(22, bitLength(k - 1));
    const scale = (1n << 53n) - (1n << BigInt(this.scaleBits));
    const floorDiv = (p: bigint) => (p * scale) / totalN;
    const ceilDiv = (p: bigint) => (p * scale + totalN - 1n) / totalN;
    let md: bigint;
    let mo: bigint;
    if (diagonal >= offDiagonal) {
      mo = ceilDiv(on);
      md = floorDiv(dn) > mo ? floorDiv(dn) : mo;
    } else {
      md = ceilDiv(dn);
      mo = floorDiv(on) > md ? floorDiv(on) : md;
    }
    const total = md + BigInt(k - 1) * mo;
    this.masses = [md, mo, total];
    this.md = Number(md);
    this.mo = Number(mo);
    this.total = Number(total);
  }

  private map(x: number, u: number): number {
    if (this.mo === 0) return x;
    let i: number;
    if (this.md >= this.mo) i = Math.floor((Math.max(u, this.md - this.mo) - (this.md - this.mo)) / this.mo);
    else {
      const q1 = Math.floor(u / this.mo); // (u + shift) / m_o in two exact steps: u + shift may exceed 2⁵³
      i = q1 + Math.floor((u - q1 * this.mo + (this.mo - this.md)) / this.mo);
    }
    const y = x + i;
    return y >= this.nOutputs ? y - this.nOutputs : y;
  }

  sample(xs: ArrayLike<number>, source?: RandomSource, out?: Int32Array): Int32Array {
    checkIndices(xs, this.nInputs);
    const n = xs.length;
    const result = out ?? new Int32Array(n);
    const src = source ?? CRYPTO;
    const u = src.u53(n);
    let rejected: number[] = [];
    for (let i = 0; i < n; i++) {
      if (u[i] < this.total) result[i] = this.map(xs[i], u[i]);
      else rejected.push(i);
    }
    while (rejected.length) {
      const again = src.u53(rejected.length);
      const next: number[] = [];
      rejected.forEach((i, j) => {
        if (again[j] < this.total) result[i] = this.map(xs[i], again[j]);
        else next.push(i);
      });
      rejected = next;
    }
    return result;
  }
}

/** GRR parameters (k, d, o) when Q is exactly GRR, else null. */
export function grrParameters(q: Matrix): [number, number, number] | null {
  const k = q.rows;
  if (q.cols !== k || k < 2) return null;
  const d = q.data[0];
  const o = q.data[k];
  for (let i = 0; i < k; i++) if (q.data[i * k + i] !== d) return null;
  let same = 0;
  for (let i = 0; i < q.data.length; i++) if (q.data[i] === o) same++;
  return same === k * k - (d === o ? 0 : k) ? [k, d, o] : null;
}

/** The sampler Python's `sampler_for` picks: GRR (k ≥ 64) from its spec or detected, else a column sampler. */
export function samplerFor(q: () => Matrix, spec: { form?: unknown; size?: unknown; diagonal?: unknown; off_diagonal?: unknown } | null): Sampler {
  if (spec && spec.form === "grr") {
    const k = Number(spec.size);
    if (k >= GRR_MIN_SIZE) return new GrrSampler(k, spec.diagonal as number, spec.off_diagonal as number);
    return new ColumnSampler(q());
  }
  const m = q();
  const params = m.rows >= GRR_MIN_SIZE ? grrParameters(m) : null;
  if (params && params[0] >= GRR_MIN_SIZE) return new GrrSampler(...params);
  return new ColumnSampler(m);
}
