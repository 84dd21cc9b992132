/**
 * The client's state: memoised draws, the window ledger, the outbox of windowed batches and the
 * offline queue, in one JSON object saved before anything is sent. Stores: IndexedDB in
 * browsers ({@link IndexedDBStateStore}), a file in Node (`FileStateStore` in `@rldp/client/node`:
 * a snapshot and an append-only journal of {@link Change}s, fsynced once per save), memory for tests.
 */
import { StateFileError } from "./errors.js";

export const STATE_FORMAT = "rldp.js-client-state/2";
/** Older formats read and upgraded ({@link upgradeState}). Format 1 keyed the memo by document id. */
export const OLDER_STATE_FORMATS = ["rldp.js-client-state/1"];

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
  /** randomiser key (`Mechanism.memoKey`) → owner → x → entry; before format 2, and for `legacy` keys, a document id. */
  memo: Record<string, Record<string, Record<string, MemoEntry>>>;
  /**
   * Document ids whose memo entries were drawn before format 2 (keyed by the document id): moved to the
   * document's randomiser key (an "adopt" change) when the client next verifies that document. Until then
   * they are never reused, and their ε still counts against the owner's budget.
   */
  legacy?: string[];
  /** mechanism id → window label → owner → batch id that reported it. */
  ledger: Record<string, Record<string, Record<string, string>>>;
  /** Windowed batches committed but not yet acknowledged (sent again, same id, until they are). */
  outbox: StoredBatch[];
  /** Batches that could not be sent (the offline queue), oldest first. */
  queue: StoredBatch[];
}

/**
 * One change to the state, as the client makes it (a store may journal these instead of the whole state):
 * memo entries drawn under a mechanism ([owner, x, y, ε, t] each), owners a batch reports in a window,
 * a refused batch's ledger entries released, a batch put in or taken out of the outbox or the queue.
 * Replaying a save's changes on the state before it gives the state after it; replaying them again
 * changes nothing (so a journal replayed over a snapshot that already holds them is harmless).
 */
export type Change =
  | ["memo", string, Array<[string, number, number, number, number]>]
  | ["ledger", string, string, string, string[]]
  | ["release", string]
  | ["adopt", string, string]
  | ["outbox+" | "queue+", StoredBatch]
  | ["outbox-" | "queue-", string];

/** `obj[key]` if it is obj's own property (an owner named "constructor" or "__proto__" is just a name). */
export function own<T>(obj: Record<string, T>, key: string | number): T | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** `obj[key]`, made an empty object first if obj has no such own property (never the prototype's setter). */
function child<T>(obj: Record<string, Record<string, T>>, key: string): Record<string, T> {
  const found = own(obj, key);
  if (found !== undefined) return found;
  const made: Record<string, T> = {};
  Object.defineProperty(obj, key, { value: made, writable: true, enumerable: true, configurable: true });
  return made;
}

/** Apply one change (see {@link Change}) to a state, in place. */
export function applyChange(state: ClientState, change: Change): void {
  switch (change[0]) {
    case "memo": {
      const memo = child(state.memo, change[1]);
      for (const [owner, x, y, eps, t] of change[2]) child(memo, owner)[x] = [y, eps, t];
      return;
    }
    case "ledger": {
      const [, mech, label, batch, owners] = change;
      const ledger = child(child(state.ledger, mech), label);
      for (const owner of owners) Object.defineProperty(ledger, owner, { value: batch, writable: true, enumerable: true, configurable: true });
      return;
    }
    case "adopt": {
      // Legacy entries of document change[1] → its randomiser key change[2]; an (owner, x) the key already
      // holds keeps its entry, and the legacy one stays where it is (never reused, still charged).
      const [, documentId, key] = change;
      state.legacy = (state.legacy ?? []).filter((d) => d !== documentId);
      const old = own(state.memo, documentId);
      if (!old || documentId === key) return;
      const memo = child(state.memo, key);
      for (const owner of Object.keys(old)) {
        const from = old[owner];
        const to = child(memo, owner);
        for (const x of Object.keys(from)) {
          if (own(to, x) === undefined) {
            to[x] = from[x];
            delete from[x];
          }
        }
        if (Object.keys(from).length === 0) delete old[owner];
      }
      if (Object.keys(old).length === 0) delete state.memo[documentId];
      return;
    }
    case "release":
      for (const byWindow of Object.values(state.ledger)) {
        for (const byOwner of Object.values(byWindow)) for (const [o, b] of Object.entries(byOwner)) if (b === change[1]) delete byOwner[o];
      }
      state.outbox = state.outbox.filter((b) => b.batch !== change[1]);
      return;
    case "outbox+":
    case "queue+": {
      const list = change[0] === "outbox+" ? state.outbox : state.queue;
      if (!list.some((b) => b.batch === change[1].batch)) list.push(change[1]);
      return;
    }
    case "outbox-":
      state.outbox = state.outbox.filter((b) => b.batch !== change[1]);
      return;
    case "queue-":
      state.queue = state.queue.filter((b) => b.batch !== change[1]);
      return;
    default:
      throw new StateFileError("state", `holds an unknown change ${JSON.stringify((change as unknown[])[0])}`);
  }
}

export function emptyState(): ClientState {
  return { format: STATE_FORMAT, memo: {}, ledger: {}, outbox: [], queue: [] };
}

/** Check a loaded state object (this format or an older one, see {@link upgradeState}); StateFileError (never
 * a silent fresh start: that would re-randomise every record). */
export function checkState(value: unknown, where: string): ClientState {
  const v = value as ClientState;
  const format = typeof v === "object" && v !== null ? v.format : undefined;
  if (typeof format === "string" && format.startsWith("rldp.js-client-state/") && format !== STATE_FORMAT && !OLDER_STATE_FORMATS.includes(format)) {
    throw new StateFileError(
      where,
      `has format ${format}, written by a newer rldp; this one reads ${STATE_FORMAT} and upgrades ${OLDER_STATE_FORMATS.join(", ")}: use a newer rldp (an older one cannot read it)`,
    );
  }
  if (typeof v !== "object" || v === null || (v.format !== STATE_FORMAT && !OLDER_STATE_FORMATS.includes(v.format))) {
    throw new StateFileError(where, `is not an rldp client state (expected format ${STATE_FORMAT})`);
  }
  if (v.legacy !== undefined && !(Array.isArray(v.legacy) && v.legacy.every((d) => typeof d === "string"))) {
    throw new StateFileError(where, "is corrupt: 'legacy' is not a list of document ids");
  }
  for (const key of ["memo", "ledger"] as const) {
    if (typeof v[key] !== "object" || v[key] === null) throw new StateFileError(where, `is corrupt: '${key}' is not an object`);
  }
  for (const key of ["outbox", "queue"] as const) if (!Array.isArray(v[key])) throw new StateFileError(where, `is corrupt: '${key}' is not a list`);
  return v;
}

/**
 * Bring a checked state to {@link STATE_FORMAT} in place; true if it was older. Format 1 → 2: its memo was
 * keyed by document id; every such key is listed in `legacy` (the entries stay, and still count against the
 * budget) until the client adopts it under the document's randomiser key.
 */
export function upgradeState(state: ClientState): boolean {
  if (state.format === STATE_FORMAT) return false;
  state.legacy = Object.keys(state.memo);
  state.format = STATE_FORMAT;
  return true;
}

/**
 * Where the state lives. `save` must be atomic and durable when it resolves: a reader sees the old
 * state or the new one. `changes`: what the client changed since its last successful save (the
 * state passed already holds them); a store may write just those (a journal) or ignore them and
 * write the whole state.
 */
export interface StateStore {
  readonly where: string;
  load(): Promise<ClientState | null>;
  save(state: ClientState, changes?: readonly Change[]): Promise<void>;
}

/** State in memory (tests; nothing survives the process). */
export class MemoryStateStore implements StateStore {
  readonly where = "memory";
  private text: string | null = null;
  async load(): Promise<ClientState | null> {
    if (this.text === null) return null;
    const state = checkState(JSON.parse(this.text), this.where);
    upgradeState(state);
    return state;
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
    if (value === undefined) return null;
    const state = checkState(JSON.parse(value as string), this.where);
    upgradeState(state);
    return state;
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
