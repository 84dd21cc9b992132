/**
 * Randomness: 53-bit uniform integers u ∈ [0, 2⁵³) held exactly in doubles. The default source
 * is the platform CSPRNG (`crypto.getRandomValues`); tests inject any {@link RandomSource}.
 */

/** A source of uniform integers in [0, 2⁵³) (exact in doubles). */
export interface RandomSource {
  /** `n` independent uniform integers in [0, 2⁵³). */
  u53(n: number): Float64Array;
  /** `n` independent uniform 16-bit integers (optional; the CSPRNG's fast path). */
  u16?(n: number): Uint16Array;
  /** `n` independent uniform bytes (optional; the CSPRNG's fast path). */
  u8?(n: number): Uint8Array;
  /** `n` independent uniform 32-bit integers (optional). */
  u32?(n: number): Uint32Array;
}

const TWO32 = 4294967296;
const MAX_REQUEST = 65536; // getRandomValues fills at most 64 KiB per call

/** Fill `view` from the platform CSPRNG (in requests of at most 64 KiB). */
export function fill(view: Uint8Array | Uint16Array | Uint32Array): void {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  for (let off = 0; off < bytes.length; off += MAX_REQUEST) {
    globalThis.crypto.getRandomValues(bytes.subarray(off, Math.min(off + MAX_REQUEST, bytes.length)));
  }
}

/** The platform CSPRNG (Web Crypto `getRandomValues`, in browsers and Node ≥ 20). */
export class CryptoRandom implements RandomSource {
  u32(n: number): Uint32Array {
    const out = new Uint32Array(n);
    fill(out);
    return out;
  }

  u16(n: number): Uint16Array {
    const out = new Uint16Array(n);
    fill(out);
    return out;
  }

  u8(n: number): Uint8Array {
    const out = new Uint8Array(n);
    fill(out);
    return out;
  }

  u53(n: number): Float64Array {
    const words = this.u32(2 * n);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = (words[2 * i] >>> 11) * TWO32 + words[2 * i + 1];
    return out;
  }
}

/**
 * A seeded, NOT cryptographic source for tests (xoshiro128**): reproducible draws. Never use it
 * to privatise real records.
 */
export class SeededRandom implements RandomSource {
  private s: Uint32Array;
  constructor(seed: number) {
    this.s = new Uint32Array(4);
    let x = seed >>> 0 || 1;
    for (let i = 0; i < 4; i++) {
      // splitmix32 to spread the seed
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      this.s[i] = (z ^ (z >>> 16)) >>> 0;
    }
  }

  private next(): number {
    const s = this.s;
    const result = Math.imul(((Math.imul(s[1], 5) << 7) | (Math.imul(s[1], 5) >>> 25)) >>> 0, 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ((s[3] << 11) | (s[3] >>> 21)) >>> 0;
    return result;
  }

  u32(n: number): Uint32Array {
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i++) out[i] = this.next();
    return out;
  }

  u16(n: number): Uint16Array {
    const out = new Uint16Array(n);
    for (let i = 0; i < n; i++) out[i] = this.next() >>> 16;
    return out;
  }

  u8(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.next() >>> 24;
    return out;
  }

  u53(n: number): Float64Array {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = (this.next() >>> 11) * TWO32 + this.next();
    return out;
  }
}

/** A source replaying given 53-bit integers (the conformance suite's `us`). */
export class ReplayRandom implements RandomSource {
  private at = 0;
  constructor(private readonly values: ArrayLike<number>) {}
  u53(n: number): Float64Array {
    if (this.at + n > this.values.length) throw new Error("the replayed random integers ran out");
    const out = Float64Array.from({ length: n }, (_, i) => this.values[this.at + i]);
    this.at += n;
    return out;
  }
}

/** A source from doubles in [0, 1) (e.g. `Math.random`-like test generators), used at 53-bit resolution. */
export function fromUniform(random: (n: number) => ArrayLike<number>): RandomSource {
  return {
    u53(n: number): Float64Array {
      const r = random(n);
      if (r.length !== n) throw new Error(`the random source returned ${r.length} numbers for ${n} records`);
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        if (!(r[i] >= 0 && r[i] < 1)) throw new Error("the random source must return numbers in [0, 1)");
        out[i] = Math.floor(r[i] * 2 ** 53);
      }
      return out;
    },
  };
}
