/**
 * A numeric released attribute's estimate, typed (port of the `numeric` entries of `rldp.client.estimate`):
 * the histogram, the CDF at the inner edges, the mean, the quantiles (median, p90, p99), and the mean and the
 * quantiles given each value of S, each with its 95 % interval. Values are spread as the server states
 * (`spread`, uniform within each bin); `note` says what protects the number: RLDP protects S, and the
 * released number only as far as it reveals S.
 */
import { ProblemError } from "./errors.js";

/** One figure and its 95 % interval (`lower`/`upper` null: withheld or not identified). */
export interface NumericFigure {
  estimate: number | null;
  lower: number | null;
  upper: number | null;
  identified: boolean;
}

/** The quantiles an estimate carries: their key in the answer and their name in `rows()`. */
export const NUMERIC_QUANTILES: readonly (readonly [string, string])[] = [["0.5", "median"], ["0.9", "p90"], ["0.99", "p99"]];

type Row = [string, number | null, number | null, number | null, boolean];

function bad(name: string, what: string): ProblemError {
  return new ProblemError(200, { reason: "not-rldp", detail: `the estimate's numeric summary of ${JSON.stringify(name)} ${what}` });
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function figure(name: string, e: unknown, where: string): NumericFigure {
  if (!isObject(e) || !("estimate" in e)) throw bad(name, `has no figure at ${where}`);
  return { estimate: num(e.estimate), lower: num(e.ci95_low), upper: num(e.ci95_high), identified: Boolean(e.identified ?? true) };
}

function series(name: string, block: unknown, where: string, size: number): NumericFigure[] {
  if (!isObject(block) || !Array.isArray(block.estimate) || block.estimate.length !== size) throw bad(name, `has no ${where} of ${size} values`);
  const at = (k: string, i: number): unknown => (Array.isArray(block[k]) ? (block[k] as unknown[])[i] : null);
  return (block.estimate as unknown[]).map((v, i) => ({
    estimate: num(v),
    lower: num(at("ci95_low", i)),
    upper: num(at("ci95_high", i)),
    identified: Boolean(at("identified", i) ?? true),
  }));
}

function quantiles(name: string, block: unknown, where: string): Record<string, NumericFigure> {
  if (!isObject(block)) throw bad(name, `has no ${where}`);
  return Object.fromEntries(Object.entries(block).map(([p, e]) => [p, figure(name, e, `${where}.${p}`)]));
}

export class NumericEstimate {
  /** The bins' edges e_0 < … < e_k and which side of a bin is closed. */
  readonly edges: number[];
  readonly closed: string;
  /** How values are spread within a bin (e.g. "uniform within each bin"). */
  readonly spread: string;
  /** The bins' labels, in order. */
  readonly labels: string[];
  /** P(bin) per bin. */
  readonly histogram: NumericFigure[];
  /** P(U ≤ e_j) at each inner edge e_1 … e_{k−1} (`at`). */
  readonly cdf: (NumericFigure & { at: number })[];
  readonly mean: NumericFigure;
  /** By probability as the answer writes it: "0.5", "0.9", "0.99". */
  readonly quantiles: Record<string, NumericFigure>;
  /** {S's name: {value of S: mean of U given it}} (none with a latent S). */
  readonly meanBy: Record<string, Record<string, NumericFigure>>;
  /** {S's name: {value of S: {"0.5": …, "0.9": …, "0.99": …}}} (none with a latent S, or from an older server). */
  readonly quantilesBy: Record<string, Record<string, Record<string, NumericFigure>>>;
  /** What protects the number (RLDP protects S; the number only as far as it reveals S). */
  readonly note: string;

  private constructor(readonly name: string, s: Record<string, unknown>) {
    const edges = s.edges;
    if (!Array.isArray(edges) || edges.length < 2 || !edges.every((e) => typeof e === "number")) throw bad(name, "has no edges");
    this.edges = edges as number[];
    const bins = edges.length - 1;
    this.closed = String(s.closed ?? "left");
    this.spread = String(s.spread ?? "uniform within each bin");
    this.labels = Array.isArray(s.labels) ? (s.labels as unknown[]).map(String) : this.edges.slice(1).map((_, j) => `bin ${j}`);
    this.histogram = series(name, s.histogram, "histogram", bins);
    const cdf = series(name, s.cdf, "cdf", bins - 1);
    this.cdf = cdf.map((f, j) => ({ ...f, at: this.edges[j + 1] }));
    this.mean = figure(name, s.mean, "mean");
    this.quantiles = quantiles(name, s.quantiles, "quantiles");
    const by = <T>(block: unknown, read: (e: unknown, where: string) => T, where: string): Record<string, Record<string, T>> => {
      if (block === undefined || block === null) return {};
      if (!isObject(block)) throw bad(name, `has a malformed ${where}`);
      return Object.fromEntries(
        Object.entries(block).map(([sName, values]) => {
          if (!isObject(values)) throw bad(name, `has a malformed ${where}.${sName}`);
          return [sName, Object.fromEntries(Object.entries(values).map(([v, e]) => [v, read(e, `${where}.${sName}.${v}`)]))];
        }),
      );
    };
    this.meanBy = by(s.mean_by, (e, w) => figure(name, e, w), "mean_by");
    this.quantilesBy = by(s.quantiles_by, (e, w) => quantiles(name, e, w), "quantiles_by");
    this.note = String(s.note ?? `${name} itself is protected only as far as it reveals S`);
  }

  /** The figures of one answer's `numeric[name]` (ProblemError `not-rldp` when malformed). */
  static fromSummary(name: string, summary: unknown): NumericEstimate {
    if (!isObject(summary)) throw bad(name, "is not an object");
    return new NumericEstimate(name, summary);
  }

  get median(): NumericFigure | null {
    return this.quantiles["0.5"] ?? null;
  }

  get p90(): NumericFigure | null {
    return this.quantiles["0.9"] ?? null;
  }

  get p99(): NumericFigure | null {
    return this.quantiles["0.99"] ?? null;
  }

  /** One row per statistic, as Python's `numeric_frame` (same names, same order): mean, median, p90, p99, then
   * "mean | S=s" per value of S, then "median | S=s", "p90 | S=s", "p99 | S=s" per value of S:
   * [statistic, estimate, lower, upper, identified]. */
  rows(): Row[] {
    const row = (label: string, f: NumericFigure): Row => [label, f.estimate, f.lower, f.upper, f.identified];
    const out: Row[] = [row("mean", this.mean)];
    for (const [p, label] of NUMERIC_QUANTILES) if (p in this.quantiles) out.push(row(label, this.quantiles[p]));
    for (const [sName, values] of Object.entries(this.meanBy)) for (const [v, f] of Object.entries(values)) out.push(row(`mean | ${sName}=${v}`, f));
    for (const [sName, values] of Object.entries(this.quantilesBy)) {
      for (const [v, qs] of Object.entries(values)) for (const [p, label] of NUMERIC_QUANTILES) if (p in qs) out.push(row(`${label} | ${sName}=${v}`, qs[p]));
    }
    return out;
  }
}
