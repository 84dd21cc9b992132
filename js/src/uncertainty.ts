/**
 * The uncertainty set F = {P : D_α(P̂ ‖ P) ≤ B} [LZG24, eq 10] and what the audits need of it
 * (port of `rldp.shared.uncertainty`, `ball_search` and `divergence`): projected radii
 * [LZG24, Thm 1, eq 24], the support function of each projected ball by the one-dimensional
 * Lagrange search (the reference bisection of `ball_maximum`, 64 steps: it agrees with Python's
 * default Illinois search to ~1e-14 relative and rounds the same way, towards leakage), Prop. 1's
 * two-point ranges, and the confidence radius [LZG24, eq 9] with its χ² quantile. A pilot's F is the
 * ball ∩ its confidence box (`privacy.uncertainty.box`, `box-bounds.ts`).
 */
import { checkBox, conditionalBounds, knapsackMaximum, npSum, rowSums } from "./box-bounds.js";
import { ValidationError } from "./errors.js";
import type { Matrix } from "./forms.js";

const SEARCH_STEPS = 64;

/** max_R q·R over {R : D_α(p ‖ R) ≤ radius} for one row (q, p of length k). */
export function ballMaximum(q: ArrayLike<number>, p: ArrayLike<number>, radius: number, alpha: number, sign = 1): number {
  const k = p.length;
  let qTop = -Infinity;
  let qZero = -Infinity;
  for (let u = 0; u < k; u++) {
    const v = sign * q[u];
    if (p[u] > 0) {
      if (v > qTop) qTop = v;
    } else if (v > qZero) qZero = v;
  }
  if (radius === Infinity) return Math.max(qTop, qZero);
  if (radius === 0) {
    let s = 0;
    for (let u = 0; u < k; u++) if (p[u] > 0) s += sign * q[u] * p[u];
    return s;
  }
  const delta = new Float64Array(k);
  let spread = 0;
  for (let u = 0; u < k; u++) {
    if (p[u] > 0) {
      delta[u] = qTop - sign * q[u];
      if (delta[u] > spread) spread = delta[u];
    }
  }
  const flat = spread <= 0;
  const scale = flat ? 1 : spread;
  const invAlpha = 1 / alpha;
  const logRatio = new Float64Array(k);
  // D_α(p ‖ R(τ)) with R(τ) ∝ p (τ/(τ+δ))^{1/α}; fills logRatio = log(R/p) on the support.
  const divergence = (tauIn: number): number => {
    const tau = Math.max(tauIn, 1e-300);
    let massMinus1 = 0;
    for (let u = 0; u < k; u++) {
      if (p[u] > 0) {
        const lw = -invAlpha * Math.log1p(delta[u] / tau);
        logRatio[u] = lw;
        massMinus1 += p[u] * Math.expm1(lw);
      }
    }
    const logMass = Math.log1p(massMinus1);
    let div: number;
    if (alpha === 1) {
      let s = 0;
      for (let u = 0; u < k; u++) if (p[u] > 0) s += p[u] * (logRatio[u] -= logMass);
      div = -s;
    } else {
      let inner = 0;
      for (let u = 0; u < k; u++) {
        if (p[u] > 0) {
          logRatio[u] -= logMass;
          inner += p[u] * Math.expm1((1 - alpha) * logRatio[u]);
        }
      }
      div = Math.log1p(inner) / (alpha - 1);
    }
    if (Number.isNaN(div)) div = Infinity;
    return Math.max(div, 0);
  };
  const valueAt = (): number => {
    let s = 0;
    for (let u = 0; u < k; u++) if (p[u] > 0) s += p[u] * Math.exp(logRatio[u]) * delta[u];
    return qTop - s;
  };
  let lo = -690;
  let hi = 40;
  const reach = divergence(scale * Math.exp(lo)) > radius;
  for (let i = 0; i < SEARCH_STEPS; i++) {
    const mid = 0.5 * (lo + hi);
    if (divergence(scale * Math.exp(mid)) <= radius) hi = mid;
    else lo = mid;
  }
  divergence(scale * Math.exp(lo));
  let value = reach ? valueAt() : qTop;
  if (flat) value = qTop;
  const nu = qTop + (reach && !flat ? scale * Math.exp(lo) : 0);
  if (qZero > nu) {
    // Cells outside the support absorb mass when their q beats the multiplier ν.
    const tauZ = flat ? Infinity : qZero - qTop;
    let dZ = divergence(tauZ === Infinity ? 1e300 : tauZ);
    if (flat) dZ = 0;
    const mass = Math.exp(Math.min(dZ - radius, 0));
    const inside = flat ? qTop : valueAt();
    const mixed = mass * inside + (1 - mass) * qZero;
    value = Math.max(mixed, value);
  }
  return value;
}

/** Rényi divergence D_α of two probability vectors (nats) [LZG24, eq 7]. */
export function renyi(p: ArrayLike<number>, q: ArrayLike<number>, alpha: number): number {
  if (alpha === 1) {
    let s = 0;
    for (let i = 0; i < p.length; i++) if (p[i] > 0) s += p[i] * (Math.log(p[i]) - Math.log(q[i]));
    return s;
  }
  let s = 0;
  for (let i = 0; i < p.length; i++) if (p[i] > 0) s += Math.pow(p[i], alpha) * Math.pow(q[i], 1 - alpha);
  return Math.log(s) / (alpha - 1);
}

/** The interval {r : D_α((ρ, 1−ρ) ‖ (r, 1−r)) ≤ radius} (Prop. 1's ρ·ξ∓(ρ)). */
export function twoPointRange(rhoIn: number, radius: number, alpha: number): [number, number] {
  const rho = Math.min(Math.max(rhoIn, 0), 1);
  const finite = Number.isFinite(radius);
  if (alpha === 2) {
    if (!finite) return [0, 1];
    const e = Math.exp(radius);
    const root = Math.sqrt(Math.max((e - 1) * (e - (2 * rho - 1) ** 2), 0));
    const lo = (e + 2 * rho - 1 - root) / (2 * e);
    const hi = (e + 2 * rho - 1 + root) / (2 * e);
    return [Number.isNaN(lo) ? 0 : Math.min(Math.max(lo, 0), rho), Number.isNaN(hi) ? 1 : Math.min(Math.max(hi, rho), 1)];
  }
  const div = (r: number) => renyi([rho, 1 - rho], [r, 1 - r], alpha);
  const out: number[] = [];
  for (const outer of [0, 1]) {
    let a = outer;
    let b = rho;
    const outerOk = div(a) <= radius;
    for (let i = 0; i < SEARCH_STEPS + 40; i++) {
      const mid = 0.5 * (a + b);
      if (div(mid) <= radius) b = mid;
      else a = mid;
    }
    out.push(outerOk || !finite ? outer : a);
  }
  return [out[0], out[1]];
}

/**
 * F = {P : D_α(P̂ ‖ P) ≤ B} over S × U; P̂ as an (|S|, |U|) matrix; intersected with a box ℓ ≤ P ≤ u when
 * `box` = (ℓ, u) is given (a pilot's F, `box-bounds.ts`): each conditional projection F_U|s is then
 * narrowed by K_s, the conditionals within the bounds the box implies, and every support function is
 * the smaller of the two sets' (Python's `UncertaintySet`).
 */
export class UncertaintySet {
  readonly nSensitive: number;
  readonly nReleased: number;
  readonly marginal: Float64Array;
  readonly conditionals: Float64Array;
  readonly projectedRadii: Float64Array;
  /** (ℓ, u) row-major (|S|·|U|), checked, or null. */
  readonly box: [Float64Array, Float64Array] | null;
  private ballBounds: [Float64Array, Float64Array] | null = null;
  private boxBounds: [Float64Array, Float64Array] | null | undefined = undefined;

  constructor(
    readonly publicDistribution: Matrix,
    readonly radius: number,
    readonly order: number,
    box: [unknown, unknown] | null = null,
  ) {
    const { rows, cols, data } = publicDistribution;
    this.nSensitive = rows;
    this.nReleased = cols;
    this.marginal = new Float64Array(rows);
    for (let s = 0; s < rows; s++) this.marginal[s] = npSum(data, s * cols, cols); // numpy's sum(axis=1), bit for bit
    this.conditionals = new Float64Array(rows * cols);
    for (let s = 0; s < rows; s++) {
      for (let u = 0; u < cols; u++) {
        const m = this.marginal[s];
        this.conditionals[s * cols + u] = m > 0 ? data[s * cols + u] / m : 1 / cols;
      }
    }
    this.projectedRadii = projectedRadii(this.marginal, radius, order);
    this.box = box === null ? null : checkBox(box[0], box[1], [rows, cols]);
  }

  /**
   * F_S, the projection of F onto P_S, as a set of one row over S (Python's `marginal_set`): the ball of
   * P̂_S with the same radius and, with a box, the box of the row sums (each at most 1).
   */
  marginalSet(): UncertaintySet {
    const p = { rows: 1, cols: this.nSensitive, data: this.marginal.slice() };
    if (!this.box) return new UncertaintySet(p, this.radius, this.order);
    const capped = (a: Float64Array) => rowSums(a, this.nSensitive, this.nReleased).map((v) => Math.min(v, 1));
    return new UncertaintySet(p, this.radius, this.order, [capped(this.box[0]), capped(this.box[1])]);
  }

  /** Prop. 1's two-point range of each R_u over the projected ball, each (|S|·|U|). */
  private ballRange(): [Float64Array, Float64Array] {
    if (!this.ballBounds) {
      const n = this.conditionals.length;
      const lower = new Float64Array(n);
      const upper = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        [lower[i], upper[i]] = twoPointRange(this.conditionals[i], this.projectedRadii[Math.floor(i / this.nReleased)], this.order);
      }
      this.ballBounds = [lower, upper];
    }
    return this.ballBounds;
  }

  /**
   * K_s's bounds: the box's conditional bounds narrowed by the ball's per-cell range (both hold for every
   * conditional of F); a row where they contradict each other (F meets no P there: possible only off the
   * confidence event) keeps the ball's range. Null without a box.
   */
  private kBounds(): [Float64Array, Float64Array] | null {
    if (this.boxBounds === undefined) {
      if (!this.box) this.boxBounds = null;
      else {
        const [a1, a2] = [this.nSensitive, this.nReleased];
        const [ballLow, ballHigh] = this.ballRange();
        const [boxLow, boxHigh] = conditionalBounds(this.box[0], this.box[1], a1, a2);
        const low = new Float64Array(a1 * a2);
        const high = new Float64Array(a1 * a2);
        for (let i = 0; i < low.length; i++) [low[i], high[i]] = [Math.max(ballLow[i], boxLow[i]), Math.min(ballHigh[i], boxHigh[i])];
        for (let s = 0; s < a1; s++) {
          const [from, to] = [s * a2, (s + 1) * a2];
          let consistent = npSum(low, from, a2) <= 1 && npSum(high, from, a2) >= 1;
          for (let i = from; i < to; i++) if (!(low[i] <= high[i])) consistent = false;
          if (!consistent) {
            low.set(ballLow.subarray(from, to), from);
            high.set(ballHigh.subarray(from, to), from);
          }
        }
        this.boxBounds = [low, high];
      }
    }
    return this.boxBounds;
  }

  /** (L_u|s, max R_u) over F_U|s (∩ K_s with a box) for every (s, u) (Prop. 1, eq 29), each (|S|·|U|). */
  cellRange(): [Float64Array, Float64Array] {
    return this.kBounds() ?? this.ballRange();
  }

  /** (max, min) of q · R over R ∈ F_U|s (∩ K_s with a box) for a row q (length |U|) and its s. */
  extremes(q: ArrayLike<number>, s: number): [number, number] {
    const k = this.nReleased;
    const p = this.conditionals.subarray(s * k, (s + 1) * k);
    const r = this.projectedRadii[s];
    let hi = ballMaximum(q, p, r, this.order);
    let lo = -ballMaximum(q, p, r, this.order, -1);
    const bounds = this.kBounds();
    if (bounds) {
      const [low, high] = [bounds[0].subarray(s * k, (s + 1) * k), bounds[1].subarray(s * k, (s + 1) * k)];
      hi = Math.min(hi, knapsackMaximum(q, low, high));
      lo = Math.max(lo, -knapsackMaximum(q, low, high, -1));
    }
    return [hi, lo];
  }
}

/** Radii B_s of the conditional projections F_U|s [LZG24, Thm 1, eq 24]. */
export function projectedRadii(pS: Float64Array, radius: number, alpha: number): Float64Array {
  const out = new Float64Array(pS.length).fill(Infinity);
  if (!Number.isFinite(radius)) return out;
  for (let s = 0; s < pS.length; s++) {
    if (!(pS[s] > 0)) continue;
    if (alpha === 1) {
      out[s] = Math.max(radius / pS[s], 0);
      continue;
    }
    const excess = Math.expm1(((alpha - 1) * radius) / alpha) + pS[s];
    if (excess > 0) out[s] = Math.max((alpha / (alpha - 1)) * Math.log(excess / pS[s]), 0);
  }
  return out;
}

// --------------------------------------------------------------------------- the confidence radius

function lgamma(x: number): number {
  // Lanczos (g = 7, n = 9): ~15 significant digits for x > 0.
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lgamma(1 - x);
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

function regularizedGammaP(a: number, x: number): number {
  if (x <= 0) return 0;
  const logPrefix = -x + a * Math.log(x) - lgamma(a);
  if (x < a + 1) {
    let term = 1 / a;
    let total = term;
    let ap = a;
    for (let i = 0; i < 10000; i++) {
      ap += 1;
      term *= x / ap;
      total += term;
      if (Math.abs(term) < Math.abs(total) * 1e-17) break;
    }
    return Math.min(1, total * Math.exp(logPrefix));
  }
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-17) break;
  }
  return Math.max(0, 1 - Math.exp(logPrefix) * h);
}

/** The χ² quantile F⁻¹(probability) with `dof` degrees of freedom (bisection, ~1e-12 relative). */
export function chi2Quantile(probability: number, dof: number): number {
  if (!(probability > 0 && probability < 1)) throw new ValidationError(`probability must be in (0, 1); got ${probability}`);
  const a = dof / 2;
  let lo = 0;
  let hi = Math.max(1, 2 * dof);
  while (regularizedGammaP(a, hi / 2) < probability) hi *= 2;
  for (let i = 0; i < 200; i++) {
    const mid = 0.5 * (lo + hi);
    if (regularizedGammaP(a, mid / 2) < probability) lo = mid;
    else hi = mid;
    if (hi - lo <= 1e-13 * hi) break;
  }
  return 0.5 * (lo + hi);
}

/** Radius B making F a (1 − β)-confidence set from n public samples [LZG24, eq 9; other orders by Hellinger]. */
export function confidenceRadius(n: number, beta: number, nSymbols: number, order = 2): number {
  const q = chi2Quantile(1 - beta, nSymbols - 1);
  if (order === 1) return q / (2 * n);
  const inner = ((order - 1) * order * q) / (2 * n);
  if (inner <= -1) return Infinity;
  return Math.log1p(inner) / (order - 1);
}
