/**
 * HTTP with retries (port of `rldp.client.transport`): connection errors, 429 and 5xx are
 * retried with exponential backoff and jitter, honouring `Retry-After` (capped at 60 s). POST is
 * retried too: uploads are idempotent by batch id. Any other 4xx is a {@link ProblemError}.
 */
import { CollectionPaused, ProblemError, ServiceUnavailable, ValidationError } from "./errors.js";

export const RETRY_STATUSES = [429, 500, 502, 503, 504];
export const RETRY_AFTER_MAX = 60;

export interface TransportOptions {
  timeoutMs?: number;
  retries?: number;
  backoffFactor?: number;
  backoffMax?: number;
  token?: string | null;
  fetch?: typeof fetch;
  /** Waits `ms` milliseconds (injectable for tests). */
  sleep?: (ms: number) => Promise<void>;
}

/** Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), capped; null if absent. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  let seconds: number;
  if (/^\d+$/.test(trimmed)) seconds = Number(trimmed);
  else {
    const when = Date.parse(trimmed);
    if (Number.isNaN(when)) return null;
    seconds = Math.max(0, (when - now) / 1000);
  }
  return Math.min(seconds, RETRY_AFTER_MAX);
}

export class Transport {
  readonly url: string;
  private readonly opts: Required<Omit<TransportOptions, "token">> & { token: string | null };

  constructor(url: string, options: TransportOptions = {}) {
    if (typeof url !== "string" || !/^https?:\/\//.test(url)) throw new ValidationError(`server URL must start with http:// or https://; got ${url}`);
    this.url = url.replace(/\/+$/, "");
    this.opts = {
      timeoutMs: options.timeoutMs ?? 10_000,
      retries: options.retries ?? 3,
      backoffFactor: options.backoffFactor ?? 0.5,
      backoffMax: options.backoffMax ?? 30,
      token: options.token ?? null,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      sleep: options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
    };
  }

  /** One request with retries; the Response of a success (2xx, 304), else ProblemError / ServiceUnavailable. */
  async request(method: string, path: string, init: { body?: Uint8Array; headers?: Record<string, string>; auth?: boolean } = {}): Promise<Response> {
    const url = this.url + path;
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (init.auth) {
      if (!this.opts.token) throw new ValidationError("this call needs a bearer token: new Client(url, { token })");
      headers.Authorization = `Bearer ${this.opts.token}`;
    }
    let last = "";
    let lastStatus: number | null = null;
    for (let attempt = 0; ; attempt++) {
      let resp: Response | null = null;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), this.opts.timeoutMs);
      try {
        resp = await this.opts.fetch(url, { method, headers, body: init.body as BodyInit | undefined, signal: controller.signal });
      } catch (exc) {
        last = `cannot reach the server (${(exc as Error).name}: ${(exc as Error).message})`;
      } finally {
        clearTimeout(timer);
      }
      if (resp && (resp.ok || resp.status === 304)) return resp;
      let wait: number | null = null;
      if (resp) {
        lastStatus = resp.status;
        const problem = await problemOf(resp);
        if (problem.reason === "collection-paused") throw new CollectionPaused(`${method} ${url}: ${String(problem.detail ?? "")}`, String(problem.detail ?? ""));
        if (!RETRY_STATUSES.includes(resp.status) && resp.status < 500) throw new ProblemError(resp.status, problem);
        last = `${resp.status} ${String(problem.detail || resp.statusText)}`;
        wait = retryAfterSeconds(resp.headers.get("Retry-After"));
      }
      if (attempt >= this.opts.retries) break;
      const backoff = Math.min(this.opts.backoffMax, this.opts.backoffFactor * 2 ** attempt) + Math.random() * this.opts.backoffFactor;
      await this.opts.sleep(1000 * (wait ?? backoff));
    }
    throw new ServiceUnavailable(`${method} ${url}: ${last} (after every retry)`, lastStatus);
  }
}

async function problemOf(resp: Response): Promise<Record<string, unknown>> {
  const text = await resp.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    if (body && typeof body === "object" && !Array.isArray(body)) return body;
  } catch {
    // not JSON: a problem made from the status and the text
  }
  return { type: "about:blank", title: resp.statusText, status: resp.status, detail: text.split(/\s+/).join(" ").slice(0, 200) };
}
