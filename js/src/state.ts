/**
 * The client's state: memoised draws, the window ledger, the outbox of windowed batches and the
 * offline queue, in one JSON object saved whole before anything is sent. Stores: IndexedDB in
 * browsers ({@link IndexedDBStateStore}), an atomically replaced file in Node
 * (`FileStateStore` in `@rldp/client/node`), memory for tests.
 */
import { StateFileError } from "./errors.js";

export const STATE_FORMAT = "rldp.js-client-state/1";

/** A memo entry: [y, ε spent by the draw, Unix seconds of the draw]. */
export type MemoEntry = [number, number, number];

export interface StoredBatch {
  batch: string;
  mechanism: string;
  window: string;
  count: number;
  /** The msgpack body, base64. */
  body: string;
  created: number;
}

export interface ClientState {
  format: string;
  /** mechanism id → owner → x → entry. */
  memo: Record<string, Record<string, Record<string, MemoEntry>>>;
  /** mechanism id → window label → owner → batch id that reported it. */
  ledger: Record<string, Record<string, Record<string, string>>>;
  /** Windowed batches committed but not yet acknowledged (sent again, same id, until they are). */
  outbox: StoredBatch[];
  /** Batches that could not be sent (the offline queue), oldest first. */
  queue: StoredBatch[];
}

export function emptyState(): ClientState {
  return { format: STATE_FORMAT, memo: {}, ledger: {}, outbox: [], queue: [] };
}

/** Check a loaded state object; StateFileError (never a silent fresh start: that would re-randomise every record). */
export function checkState(value: unknown, where: string): ClientState {
  const v = value as ClientState;
  if (typeof v !== "object" || v === null || v.format !== STATE_FORMAT) {
    throw new StateFileError(where, `is not an rldp client state (expected format ${STATE_FORMAT})`);
  }
  for (const key of ["memo", "ledger"] as const) {
    if (typeof v[key] !== "object" || v[key] === null) throw new StateFileError(where, `is corrupt: '${key}' is not an object`);
  }
  for (const key of ["outbox", "queue"] as const) if (!Array.isArray(v[key])) throw new StateFileError(where, `is corrupt: '${key}' is not a list`);
  return v;
}

/** Where the state lives. `save` must be atomic: a reader sees the old state or the new one. */
export interface StateStore {
  readonly where: string;
  load(): Promise<ClientState | null>;
  save(state: ClientState): Promise<void>;
}

/** State in memory (tests; nothing survives the process). */
export class MemoryStateStore implements StateStore {
  readonly where = "memory";
  private text: string | null = null;
  async load(): Promise<ClientState | null> {
    return this.text === null ? null : checkState(JSON.parse(this.text), this.where);
  }
  async save(state: ClientState): Promise<void> {
    this.text = JSON.stringify(state);
  }
}

/** State in the browser's IndexedDB (database `name`, one record written in one transaction). */
export class IndexedDBStateStore implements StateStore {
  readonly where: string;
  private db: Promise<IDBDatabase> | null = null;
  constructor(readonly name = "rldp-client") {
    this.where = `indexeddb:${name}`;
  }

  private open(): Promise<IDBDatabase> {
    this.db ??= new Promise((resolve, reject) => {
      const req = indexedDB.open(this.name, 1);
      req.onupgradeneeded = () => req.result.createObjectStore("state");
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(new StateFileError(this.where, `cannot be opened: ${req.error?.message}`));
    });
    return this.db;
  }

  async load(): Promise<ClientState | null> {
    const db = await this.open();
    const value = await new Promise<unknown>((resolve, reject) => {
      const req = db.transaction("state", "readonly").objectStore("state").get("state");
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(new StateFileError(this.where, `cannot be read: ${req.error?.message}`));
    });
    return value === undefined ? null : checkState(JSON.parse(value as string), this.where);
  }

  async save(state: ClientState): Promise<void> {
    const db = await this.open();
    await new Promise<void>((resolve, reject) => {
      const tx = db.transaction("state", "readwrite");
      tx.objectStore("state").put(JSON.stringify(state), "state");
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(new StateFileError(this.where, `cannot be written: ${tx.error?.message}`));
    });
  }
}
