/**
 * The server's estimate of P(S, U) as an object (port of `rldp.client.estimate`): `client.estimate(id)`,
 * `client.estimateCollection(name)` and `collection.estimate()` return one (a token that may read estimates).
 * Its fields are the members of the API's answer; `toDict()` gives the answer back exactly as the server sent it.
 */
import { ProblemError, ValidationError } from "./errors.js";
import { NumericEstimate } from "./numeric-estimate.js";

/** The estimators and interval methods the server accepts (`method`, `interval`). */
export const ESTIMATE_METHODS = ["auto", "em", "inverse"];
export const ESTIMATE_INTERVALS = ["delta", "bootstrap"];

export interface EstimateParams {
  method?: string | null;
  interval?: string | null;
  prior?: string | null;
  prior_weight?: number | null;
  /** One collection window's label; without it, every report. */
  window?: string | null;
}

const KNOWN = [
  "n", "joint", "ci95", "marginals", "method", "identifiable", "rank", "iterations", "converged", "gap",
  "log_likelihood", "prior_weight", "labels", "fitted", "latent", "status", "mechanism", "collection",
  "mechanisms", "window", "windows", "drift", "drift_unavailable", "numeric",
];

type Cell = number | null;

export class Estimate {
  readonly n: number;
  readonly joint: Cell[][];
  readonly ci95: Record<string, unknown>;
  readonly marginals: Record<string, unknown>;
  readonly method: string;
  readonly identifiable: boolean;
  readonly rank: number | null;
  readonly iterations: number | null;
  readonly converged: boolean | null;
  readonly gap: number | null;
  readonly logLikelihood: number | null;
  readonly priorWeight: number;
  readonly labels: Record<string, unknown> | null;
  readonly fitted: Cell[] | null;
  readonly latent: boolean;
  readonly status: string | null;
  readonly mechanism: string | null;
  readonly collection: string | null;
  readonly mechanisms: Record<string, unknown>[] | null;
  readonly window: string | null;
  readonly windows: Record<string, unknown>[] | null;
  readonly drift: Record<string, unknown> | null;
  readonly driftUnavailable: string | null;
  /** Per numeric released attribute, the answer's summary as sent (histogram, CDF, mean, quantiles, means and
   * quantiles per value of S, each with a 95 % interval); `numericEstimate(name)` reads one as typed figures. */
  readonly numeric: Record<string, Record<string, unknown>> | null;
  /** Members this version does not know (a newer server's). */
  readonly extra: Record<string, unknown>;
  private readonly answer: string;

  private constructor(a: Record<string, unknown>) {
    const get = <T>(k: string, dflt: T): T => (k in a ? (a[k] as T) : dflt);
    this.n = a.n as number;
    this.joint = a.joint as Cell[][];
    this.ci95 = a.ci95 as Record<string, unknown>;
    this.marginals = a.marginals as Record<string, unknown>;
    this.method = a.method as string;
    this.identifiable = get("identifiable", true);
    this.rank = get("rank", null);
    this.iterations = get("iterations", null);
    this.converged = get("converged", null);
    this.gap = get("gap", null);
    this.logLikelihood = get("log_likelihood", null);
    this.priorWeight = get("prior_weight", 0);
    this.labels = get("labels", null);
    this.fitted = get("fitted", null);
    this.latent = get("latent", false);
    this.status = get("status", null);
    this.mechanism = get("mechanism", null);
    this.collection = get("collection", null);
    this.mechanisms = get("mechanisms", null);
    this.window = get("window", null);
    this.windows = get("windows", null);
    this.drift = get("drift", null);
    this.driftUnavailable = get("drift_unavailable", null);
    this.numeric = get("numeric", null);
    this.extra = Object.fromEntries(Object.entries(a).filter(([k]) => !KNOWN.includes(k)));
    this.answer = JSON.stringify(a);
  }

  /** The estimate of an API answer (ProblemError `not-rldp` naming what is missing when it is not one). */
  static fromDict(answer: Record<string, unknown>): Estimate {
    const missing = ["n", "joint", "ci95", "marginals", "method"].filter((k) => !(k in answer));
    if (missing.length) throw new ProblemError(200, { reason: "not-rldp", detail: `the estimate answer lacks ${missing.join(", ")}` });
    if (!Array.isArray(answer.joint) || !answer.joint.every(Array.isArray) || typeof answer.ci95 !== "object" || answer.ci95 === null) {
      throw new ProblemError(200, { reason: "not-rldp", detail: "the estimate answer's joint is not a list of rows or its ci95 not an object" });
    }
    return new Estimate(answer);
  }

  /** The server's answer, as it was. */
  toDict(): Record<string, unknown> {
    return JSON.parse(this.answer);
  }

  /** The numeric released attributes this estimate has figures for (none: []). */
  numericNames(): string[] {
    return Object.keys(this.numeric ?? {});
  }

  /** A numeric released attribute's figures, typed (port of the Python `Estimate.numeric` entry and
   * `numeric_frame`): ValidationError naming the numeric attributes when `name` is not one; ProblemError
   * `not-rldp` when the answer's summary is malformed. */
  numericEstimate(name: string): NumericEstimate {
    const summary = this.numeric?.[name];
    if (summary === undefined || summary === null) {
      const known = this.numericNames();
      throw new ValidationError(`no numeric attribute ${JSON.stringify(name)} in this estimate; numeric: ${known.length ? known.join(", ") : "none"}`);
    }
    return NumericEstimate.fromSummary(name, summary);
  }

  /** [sensitive value, released value, estimate, lower, upper, identified] per cell, s major. */
  rows(): [string, string, Cell, Cell, Cell, boolean | null][] {
    const labels = (this.labels ?? {}) as Record<string, Record<string, unknown> | undefined>;
    const sValues = (labels.sensitive?.values as string[] | undefined) ?? this.joint.map((_, s) => String(s));
    const uValues = (labels.released?.values as string[] | undefined) ?? (labels.columns as unknown as string[] | undefined) ?? [];
    const low = this.ci95.low as Cell[][] | null | undefined;
    const high = this.ci95.high as Cell[][] | null | undefined;
    const identified = this.ci95.identified as boolean[][] | null | undefined;
    const out: [string, string, Cell, Cell, Cell, boolean | null][] = [];
    this.joint.forEach((row, s) =>
      row.forEach((value, u) =>
        out.push([
          s < sValues.length ? String(sValues[s]) : String(s),
          u < uValues.length ? String(uValues[u]) : String(u),
          value,
          low == null ? null : low[s][u],
          high == null ? null : high[s][u],
          identified == null ? null : Boolean(identified[s][u]),
        ]),
      ),
    );
    return out;
  }
}

/** An estimate's query string (null/undefined: the server's default); method and interval checked here, naming the
 * choices, before any request. */
export function estimateQuery(params: EstimateParams = {}): string {
  for (const [key, choices] of [["method", ESTIMATE_METHODS], ["interval", ESTIMATE_INTERVALS]] as const) {
    const v = params[key];
    if (v !== undefined && v !== null && !choices.includes(v)) throw new ValidationError(`${key} must be one of ${choices.join(", ")}; got ${JSON.stringify(v)}`);
  }
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.set(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : "";
}
