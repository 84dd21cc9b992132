/**
 * HTTP with retries (port of `rldp.client.transport`): connection errors, timeouts, 429 and 5xx are
 * retried with exponential backoff and jitter, honouring `Retry-After` (capped at 60 s). POST is
 * retried too: uploads are idempotent by batch id. Any other 4xx is a {@link ProblemError}.
 *
 * A server can lie to a client (docs/design.md, "The client's threat model"), so every answer is read
 * whole here, under three rules: `timeoutMs` covers each attempt from the request to the body's last byte
 * (a server that trickles its body is abandoned: ServiceUnavailable); at most MAX_RESPONSE_BYTES are read
 * (Content-Length checked first, then a running total while streaming: ProblemError `response-too-large`);
 * no redirect is followed (`redirect: "manual"`: ProblemError `redirect`, so a POST of reports is never
 * re-sent elsewhere). Callers get a {@link Reply}, whose `json()` refuses what is not a JSON object
 * (ProblemError `not-rldp`): only typed errors leave the SDK.
 */
import { CollectionPaused, ProblemError, ServiceUnavailable, ValidationError, problemError } from "./errors.js";
import { MAX_RESPONSE_BYTES } from "./limits.js";

// 408: the server gave up on a slow body and stored nothing; the same batch (same id) is sent again.
export const RETRY_STATUSES = [408, 429, 500, 502, 503, 504];
export const RETRY_AFTER_MAX = 60;

export interface TransportOptions {
  timeoutMs?: number;
  retries?: number;
  backoffFactor?: number;
  backoffMax?: number;
  token?: string | null;
  /** The collection's upload token, if its operator requires one: sent (`Authorization: Bearer`) on report uploads
   * only. The same for every install of the app: never hand out one per install (it would link an install's reports). */
  uploadToken?: string | null;
  fetch?: typeof fetch;
  /** The most bytes of one answer (default MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number;
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

/** How much of an error answer is read (its problem): the rest is dropped, never buffered. */
const MAX_PROBLEM_BYTES = 64 * 1024;

/** A whole answer: status, headers and the body's bytes (read under the timeout and the size cap). */
export class Reply {
  constructor(
    readonly status: number,
    readonly statusText: string,
    readonly url: string,
    readonly headers: Headers,
    readonly body: Uint8Array,
  ) {}

  /** The media type, lower case, without parameters ("" if none). */
  get contentType(): string {
    return (this.headers.get("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
  }

  /** The body as text (UTF-8, invalid bytes replaced). */
  text(): string {
    return new TextDecoder().decode(this.body);
  }

  /** The JSON object the answer carries (every endpoint answers an object); ProblemError `not-rldp` otherwise. */
  json(): Record<string, unknown> {
    let value: unknown = null;
    try {
      value = JSON.parse(this.text());
    } catch {
      // not JSON: refused below
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new ProblemError(this.status, { reason: "not-rldp", detail: notRldp(this) });
    }
    return value as Record<string, unknown>;
  }

  /** ProblemError `not-rldp` for a web page (text/*) where a document was expected: said so, never parsed. */
  checkNotAPage(): void {
    if (this.contentType.startsWith("text/")) throw new ProblemError(this.status, { reason: "not-rldp", detail: notRldp(this) });
  }
}

/** What a web server that is not an aggregator (or a proxy's page) said, without its page. */
function notRldp(r: { url: string; status: number; statusText: string; contentType: string }): string {
  return `${r.url} answered ${r.status} ${r.statusText} with ${r.contentType || "no content type"}, which is not an rldp aggregator's answer (check the server URL: the aggregator's base URL)`.replace(/ {2,}/g, " ");
}

class TooLarge extends Error {
  constructor(readonly status: number, readonly size: number | null) {
    super("too large");
  }
}

/** The body, at most `limit` bytes: Content-Length first, then a running total while streaming. With
 * `truncate`, what is beyond the limit is dropped instead (an error answer's problem). */
async function readBody(resp: Response, limit: number, truncate = false): Promise<Uint8Array> {
  const declared = Number(resp.headers.get("Content-Length") ?? NaN);
  if (!truncate && Number.isFinite(declared) && declared > limit) {
    await resp.body?.cancel().catch(() => undefined);
    throw new TooLarge(resp.status, declared);
  }
  if (!resp.body) return new Uint8Array(await resp.arrayBuffer());
  const reader = resp.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.length > limit) {
      await reader.cancel().catch(() => undefined);
      if (!truncate) throw new TooLarge(resp.status, null);
      chunks.push(value.subarray(0, limit - total));
      total = limit;
      break;
    }
    chunks.push(value);
    total += value.length;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export class Transport {
  readonly url: string;
  private readonly opts: Required<Omit<TransportOptions, "token" | "uploadToken">> & { token: string | null; uploadToken: string | null };

  constructor(url: string, options: TransportOptions = {}) {
    if (typeof url !== "string" || !/^https?:\/\//.test(url)) throw new ValidationError(`server URL must start with http:// or https://; got ${url}`);
    this.url = url.replace(/\/+$/, "");
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (!(timeoutMs > 0)) throw new ValidationError(`timeoutMs must be > 0; got ${timeoutMs}`);
    const maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    if (!(Number.isSafeInteger(maxResponseBytes) && maxResponseBytes > 0)) throw new ValidationError(`maxResponseBytes must be a positive integer; got ${maxResponseBytes}`);
    const uploadToken = options.uploadToken ?? null;
    if (uploadToken !== null && (typeof uploadToken !== "string" || uploadToken.trim() === "")) {
      throw new ValidationError("uploadToken must be a non-empty string (the collection's upload token) or null");
    }
    this.opts = {
      uploadToken: uploadToken === null ? null : uploadToken.trim(),
      timeoutMs,
      retries: options.retries ?? 3,
      backoffFactor: options.backoffFactor ?? 0.5,
      backoffMax: options.backoffMax ?? 30,
      token: options.token ?? null,
      maxResponseBytes,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      sleep: options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
    };
  }

  /** One request with retries; the whole Reply of a success (2xx, 304), else ProblemError / ServiceUnavailable. */
  async request(method: string, path: string, init: { body?: Uint8Array; headers?: Record<string, string>; auth?: boolean; upload?: boolean } = {}): Promise<Reply> {
    const url = this.url + path;
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (init.upload && this.opts.uploadToken !== null) headers.Authorization = `Bearer ${this.opts.uploadToken}`; // report uploads only
    if (init.auth) {
      if (!this.opts.token) throw new ValidationError("this call needs a bearer token: new Client(url, { token })");
      headers.Authorization = `Bearer ${this.opts.token}`;
    }
    let last = "";
    let lastStatus: number | null = null;
    for (let attempt = 0; ; attempt++) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), this.opts.timeoutMs);
      let reply: Reply | null = null;
      let problem: Record<string, unknown> | null = null;
      try {
        const resp = await this.opts.fetch(url, { method, headers, body: init.body as BodyInit | undefined, signal: controller.signal, redirect: "manual" });
        if (resp.type === "opaqueredirect" || (resp.status >= 300 && resp.status < 400 && resp.status !== 304)) {
          await resp.body?.cancel().catch(() => undefined);
          const where = resp.headers.get("Location");
          throw new ProblemError(resp.status || 307, {
            reason: "redirect",
            detail: `${method} ${url} answered ${resp.status || "a redirect"}${where ? ` to ${where}` : ""}; the client follows no redirect (a report must never be sent elsewhere): give the aggregator's own URL`,
          });
        }
        const ok = resp.ok || resp.status === 304;
        const body = await readBody(resp, ok ? this.opts.maxResponseBytes : MAX_PROBLEM_BYTES, !ok);
        reply = new Reply(resp.status, resp.statusText, url, resp.headers, body);
        if (!ok) problem = problemOf(reply);
      } catch (exc) {
        if (exc instanceof ProblemError) throw exc;
        if (exc instanceof TooLarge) {
          const size = exc.size === null ? "more" : `${exc.size.toLocaleString("en-US")} bytes`;
          throw new ProblemError(exc.status, {
            reason: "response-too-large",
            detail: `${method} ${url}: the answer has ${size}; this client reads at most ${this.opts.maxResponseBytes.toLocaleString("en-US")} bytes (the largest document it can accept)`,
          });
        }
        const timedOut = controller.signal.aborted;
        last = timedOut
          ? `no whole answer within ${this.opts.timeoutMs} ms (headers and body)`
          : `cannot reach the server (${(exc as Error)?.name}: ${(exc as Error)?.message})`;
      } finally {
        clearTimeout(timer);
      }
      if (reply && !problem) return reply;
      let wait: number | null = null;
      if (reply && problem) {
        lastStatus = reply.status;
        if (problem.reason === "collection-paused") throw new CollectionPaused(`${method} ${url}: ${String(problem.detail ?? "")}`, String(problem.detail ?? ""));
        if (!RETRY_STATUSES.includes(reply.status) && reply.status < 500) throw problemError(reply.status, problem);
        last = `${reply.status} ${String(problem.detail || reply.statusText)}`;
        wait = retryAfterSeconds(reply.headers.get("Retry-After"));
      }
      if (attempt >= this.opts.retries) break;
      const backoff = Math.min(this.opts.backoffMax, this.opts.backoffFactor * 2 ** attempt) + Math.random() * this.opts.backoffFactor;
      await this.opts.sleep(1000 * (wait ?? backoff));
    }
    throw new ServiceUnavailable(`${method} ${url}: ${last} (after every retry)`, lastStatus);
  }
}

/** The RFC 9457 problem an error answer carries, or one made from its status and (a little of) its text. */
function problemOf(reply: Reply): Record<string, unknown> {
  const text = reply.text();
  try {
    const body = JSON.parse(text);
    if (body && typeof body === "object" && !Array.isArray(body)) return body;
  } catch {
    // not JSON: a problem made from the status and the text
  }
  const detail = reply.contentType.startsWith("text/html") ? notRldp(reply) : text.split(/\s+/).join(" ").slice(0, 200);
  return { type: "about:blank", reason: "not-rldp", title: reply.statusText, status: reply.status, detail };
}
