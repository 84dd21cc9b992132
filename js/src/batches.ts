/**
 * Upload bodies (port of `rldp.client.reporting.make_batches`) and the server's checks of them
 * (`rldp.shared.reports`: parse_batch, check_reports, check_window, encode_batch), so a client
 * can test what it sends. A body is msgpack `{"mechanism", "batch", "reports", "window"?}`.
 */
import { encode } from "@msgpack/msgpack";
import { sha256Hex } from "./bytes.js";
import type { Window } from "./document.js";
import {
  BatchFieldType,
  EmptyBatch,
  FutureWindow,
  InvalidWindow,
  MissingBatchField,
  ReportOutOfRange,
  TooManyReports,
  UnexpectedWindow,
  WindowRequired,
} from "./errors.js";
import { readMsgpack } from "./msgpack-read.js";
import { isObj, pyRepr } from "./pyjson.js";

/** A batch id: 1-128 characters of [A-Za-z0-9._:-], chosen by the client. */
export const BATCH_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A fresh batch id: 32 lowercase hex characters from the CSPRNG (as Python's uuid4().hex). */
export function newBatchId(): string {
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  b[6] = (b[6] & 0x0f) | 0x40; // a version-4 UUID, like Python's
  b[8] = (b[8] & 0x3f) | 0x80;
  return Array.from(b, (v) => v.toString(16).padStart(2, "0")).join("");
}

export interface PreparedBatch {
  batch: string;
  mechanism: string;
  window: string;
  count: number;
  body: Uint8Array;
}

/** Upload bodies of at most `batchSize` reports, each with a fresh batch id. */
export function makeBatches(
  mechanism: string,
  reports: ArrayLike<number>,
  batchSize: number,
  window: string | null,
  nextId: () => string = newBatchId,
): PreparedBatch[] {
  const out: PreparedBatch[] = [];
  for (let start = 0; start < reports.length; start += batchSize) {
    const chunk = Array.from({ length: Math.min(batchSize, reports.length - start) }, (_, i) => reports[start + i]);
    const batch = nextId();
    const body: Record<string, unknown> = { mechanism, batch, reports: chunk };
    if (window !== null) body.window = window;
    out.push({ batch, mechanism, window: window ?? "", count: chunk.length, body: encode(body) });
  }
  return out;
}

function startOf(window: Window, label: string): number | null {
  const day = window.seconds % 86400 === 0;
  const m = day ? /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(label) : /^(\d{4})-(\d{1,2})-(\d{1,2})T(\d{1,2}):(\d{1,2})Z$/.exec(label);
  if (!m) return null;
  const [y, mo, d, h = "0", mi = "0"] = m.slice(1);
  const t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi)) / 1000;
  return Number.isFinite(t) && t % window.seconds === 0 ? t : null;
}

/** The server's checks of one body; (batch id, reports, window label) or its BatchError. */
export function checkBatchBody(body: Uint8Array, outputs: number, window: Window | null, now: number, maxReports = 1_000_000): { batch: string; reports: Int32Array; window: string } {
  const { value: data } = readMsgpack(body);
  if (!isObj(data)) throw new BatchFieldType('the body must be an object {"mechanism", "batch", "reports"}');
  for (const name of ["mechanism", "batch", "reports"]) {
    if (!(name in data)) throw new MissingBatchField(`the body has no '${name}' field`, { field: name });
  }
  const { mechanism, batch, reports } = data;
  if (typeof mechanism !== "string") throw new BatchFieldType("'mechanism' must be a string (the mechanism id)", { field: "mechanism" });
  if (typeof batch !== "string" || !BATCH_ID.test(batch)) {
    throw new BatchFieldType(`'batch' must be a string of 1-128 characters from [A-Za-z0-9._:-]; got ${pyRepr(batch)}`, { field: "batch" });
  }
  if (!Array.isArray(reports)) throw new BatchFieldType("'reports' must be an array of integers", { field: "reports" });
  if (!reports.length) throw new EmptyBatch("'reports' is empty; a batch must hold at least one report", { field: "reports" });
  if (reports.length > maxReports) throw new TooManyReports(`the batch has ${reports.length} reports; the limit is ${maxReports}`, { limit: maxReports });
  const arr = new Int32Array(reports.length);
  reports.forEach((v, i) => {
    if (typeof v !== "bigint") throw new BatchFieldType(`reports[${i}] is ${pyRepr(v)}; every report must be an integer output index in [0, ${outputs})`, { index: i });
  });
  reports.forEach((v, i) => {
    const y = v as bigint;
    if (y < 0n || y >= BigInt(outputs)) throw new ReportOutOfRange(`reports[${i}] is ${y}; every report must be an integer in [0, ${outputs - 1}]`, { index: i });
    arr[i] = Number(y);
  });
  const value = data.window;
  if (window === null) {
    if (value !== undefined && value !== null) throw new UnexpectedWindow("'window' is given but this mechanism has no collection windows");
    return { batch, reports: arr, window: "" };
  }
  if (value === undefined || value === null) throw new WindowRequired(`this mechanism collects reports by window (${window.text}): the batch needs 'window'`);
  const start = typeof value === "string" ? startOf(window, value) : null;
  if (start === null || window.labelAt(start) !== value) throw new InvalidWindow(`'window' is ${pyRepr(value)}, not the label of a window of this mechanism's collection`);
  const latest = (Math.floor(now / window.seconds) + 1) * window.seconds;
  if (start > latest) throw new FutureWindow(`'window' ${pyRepr(value)} has not begun`);
  return { batch, reports: arr, window: value as string };
}

/** The server's stored form of a batch: SHA-256 of the packed reports, and the smaller exact encoding. */
export function storedForm(reports: Int32Array, outputs: number): { sha256: string; encoding: "reports" | "counts"; payload: Uint8Array } {
  const width = outputs <= 256 ? 1 : outputs <= 65536 ? 2 : 4;
  const packed = new Uint8Array(reports.length * width);
  const view = new DataView(packed.buffer);
  reports.forEach((y, i) => (width === 1 ? view.setUint8(i, y) : width === 2 ? view.setUint16(2 * i, y, true) : view.setUint32(4 * i, y, true)));
  const sha256 = sha256Hex(packed);
  if (packed.length <= 4 * outputs) return { sha256, encoding: "reports", payload: packed };
  const counts = new Uint8Array(4 * outputs);
  const cv = new DataView(counts.buffer);
  for (const y of reports) cv.setUint32(4 * y, cv.getUint32(4 * y, true) + 1, true);
  return { sha256, encoding: "counts", payload: counts };
}
