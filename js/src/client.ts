/**
 * The client an app uses (port of `rldp.client.Client` and `rldp.client.reporting`): download a
 * mechanism (msgpack or JSON), verify it (content id, policy, exact audit), privatise records,
 * memoise per (owner, randomiser, record value), honour collection windows and a privacy budget,
 * keep an offline queue, and submit batches with idempotent ids and retries.
 *
 * Every draw, budget charge, ledger row and windowed batch is saved in the state store before
 * anything is sent, so the report that leaves is always the stored one.
 */
import { AUDIT_TOLERANCE } from "./audit.js";
import { makeBatches, newBatchId, type PreparedBatch } from "./batches.js";
import { base64Decode, base64Encode } from "./bytes.js";
import { Window } from "./document.js";
import { CollectionRetired, DocumentError, MechanismRejected, OwnersRequired, PrivacyBudgetExceeded, ProblemError, RldpError, ServiceUnavailable, ValidationError } from "./errors.js";
import { Mechanism, parseDocument } from "./mechanism.js";
import { VerificationPolicy } from "./policy.js";
import type { RandomSource } from "./random.js";
import type { RecordLike } from "./records.js";
import { applyChange, emptyState, own, upgradeState, type Change, type ClientState, type StateStore, type StoredBatch } from "./state.js";
import { Estimate, estimateQuery, type EstimateParams } from "./estimate.js";
import { fullMechanismId, listed } from "./ids.js";
import { Transport, type TransportOptions } from "./transport.js";

const MSGPACK = "application/msgpack";
export const DEFAULT_BATCH_SIZE = 10_000;

/** At most `epsilon` (nats) of new draws per owner per period `per` (ISO 8601, e.g. "P1D"; null: `epsilon` is the
 * lifetime total), and at most `lifetime` in all (with a period; null: no cap beyond the period's) — the Python
 * client's PrivacyBudget. */
export class PrivacyBudget {
  private readonly window: Window | null;
  constructor(
    readonly epsilon: number,
    readonly per: string | null = null,
    readonly lifetime: number | null = null,
  ) {
    if (!(typeof epsilon === "number" && epsilon > 0 && Number.isFinite(epsilon))) {
      throw new ValidationError(`privacy budget epsilon must be a finite number > 0 (nats); got ${epsilon}`);
    }
    this.window = per === null ? null : Window.parse(per);
    if (lifetime !== null) {
      if (!(typeof lifetime === "number" && lifetime > 0 && Number.isFinite(lifetime))) {
        throw new ValidationError(`privacy budget lifetime must be a finite number > 0 (nats); got ${lifetime}`);
      }
      if (per === null) {
        throw new ValidationError("privacy budget lifetime needs a period: without per, epsilon is already the lifetime total");
      }
      if (lifetime < epsilon) {
        throw new ValidationError(
          `privacy budget lifetime (${lifetime}) must be at least the budget per period (${epsilon} per ${per})`,
        );
      }
    }
  }
  periodStart(now: number): number {
    return this.window === null ? -Infinity : Math.floor(now / this.window.seconds) * this.window.seconds;
  }
  /** The owner's cap over its whole life: `lifetime`, `epsilon` without a period, else Infinity. */
  get total(): number {
    if (this.per === null) return this.epsilon;
    return this.lifetime ?? Infinity;
  }
}

/** The budget of a client with a state store unless it is given (`budget: null` turns it off): 4 nats of new
 * draws per owner per UTC day and 4 in all, as the Python client's DEFAULT_BUDGET (rldp/client/budget.py says
 * why: a per-day cap alone renews, and daily redesigns would hand out a fresh draw of every record each day; rotations of one design are free). */
export const DEFAULT_BUDGET = new PrivacyBudget(4, "P1D", 4);

/** What an upload (or a flush) achieved (as the Python client's Receipt). */
export interface Receipt {
  accepted: number;
  batches: number;
  duplicates: number;
  queued: number;
  dropped: number;
  rejected: number;
  batchIds: string[];
  problems: string[];
  skipped: number;
  window: string | null;
}

const receipt = (r: Partial<Receipt> = {}): Receipt => ({
  accepted: 0, batches: 0, duplicates: 0, queued: 0, dropped: 0, rejected: 0, batchIds: [], problems: [], skipped: 0, window: null, ...r,
});

export interface ClientOptions extends TransportOptions {
  policy?: VerificationPolicy;
  maxEpsilon?: number | null;
  /** Where memos, the window ledger, the outbox and the queue live (needed for owners, windows, budgets). */
  store?: StateStore | null;
  /** At most this much ε of new draws per owner per period; default DEFAULT_BUDGET with a store, null: none. */
  budget?: PrivacyBudget | null;
  /** Keep batches the server could not take (bounded by this many bytes of bodies; 0: no queue). */
  queueLimitBytes?: number;
  /** Unix seconds now (windows, budget periods). */
  clock?: () => number;
  /** The randomness of every draw (default: the platform CSPRNG). */
  random?: RandomSource;
  /** Batch ids (default: 32 hex characters from the CSPRNG). */
  batchId?: () => string;
}

type Owners = string | readonly (string | number)[] | null | undefined;

export class Client {
  readonly http: Transport;
  readonly policy: VerificationPolicy;
  private readonly store: StateStore | null;
  private readonly budget: PrivacyBudget | null;
  private readonly queueLimit: number;
  private readonly clock: () => number;
  private readonly random: RandomSource | undefined;
  private readonly batchId: () => string;
  private verified = new Map<string, Mechanism>();
  private state: ClientState | null = null;
  /** Changes to `state` not saved yet (see `change` and `save`). */
  private changes: Change[] = [];
  private lock: Promise<unknown> = Promise.resolve();

  constructor(url: string, options: ClientOptions = {}) {
    this.http = new Transport(url, options);
    this.policy = (options.policy ?? new VerificationPolicy()).withMaxEpsilon(options.maxEpsilon);
    this.store = options.store ?? null;
    this.budget = options.budget === undefined ? (this.store ? DEFAULT_BUDGET : null) : options.budget;
    if (this.budget && !this.store) throw new ValidationError("a privacy budget needs a state store: the ledger of ε spent lives there");
    this.queueLimit = options.queueLimitBytes ?? 0;
    this.clock = options.clock ?? (() => Date.now() / 1000);
    this.random = options.random;
    this.batchId = options.batchId ?? newBatchId;
  }

  /** Download (msgpack), verify and cache a mechanism; MechanismRejected if it fails verification. */
  async mechanism(id: string, options: { maxEpsilon?: number | null } = {}): Promise<Mechanism> {
    if (typeof id !== "string" || !id) throw new ValidationError(`mechanism id must be a non-empty string; got ${id}`);
    id = await this.fullId(id);
    const policy = this.policy.withMaxEpsilon(options.maxEpsilon);
    policy.checkId(id);
    let mech = this.verified.get(id);
    if (!mech) {
      const resp = await this.http.request("GET", `/v1/mechanisms/${encodeURIComponent(id)}`, { headers: { Accept: MSGPACK } });
      resp.checkNotAPage();
      const data = resp.body;
      const kind = resp.contentType === MSGPACK ? "msgpack" : "json";
      let valid;
      try {
        valid = parseDocument(data, kind);
      } catch (exc) {
        if (exc instanceof DocumentError) throw new MechanismRejected(id, `invalid or tampered document: ${exc.message}`, "document", [], exc);
        throw exc;
      }
      mech = Mechanism.fromDocument(valid, { expectedId: id, policy });
      this.verified.set(id, mech);
    }
    policy.check(mech.document, id); // the policy may have changed since it was cached
    return mech;
  }

  /** The server's catalogue (GET /v1/mechanisms): id, method, epsilon, status, …. */
  async mechanisms(): Promise<Record<string, unknown>[]> {
    return listed((await this.http.request("GET", "/v1/mechanisms")).json(), "mechanisms", this.http.url);
  }

  /** The server's estimate of P(S, U) from a mechanism's reports (a token that may read estimates); TooFewReports
   * while it has fewer than the server's minimum. */
  async estimate(id: string, params: EstimateParams = {}): Promise<Estimate> {
    const path = `/v1/mechanisms/${encodeURIComponent(await this.fullId(id))}/estimate${estimateQuery(params)}`;
    return Estimate.fromDict((await this.http.request("GET", path, { auth: true })).json());
  }

  /** P(S, U) from every mechanism of the collection `name` in one likelihood (a token that may read estimates). */
  async estimateCollection(name: string, params: EstimateParams = {}): Promise<Estimate> {
    if (typeof name !== "string" || !name) throw new ValidationError(`a collection name must be a non-empty string; got ${name}`);
    const path = `/v1/collections/${encodeURIComponent(name)}/estimate${estimateQuery(params)}`;
    return Estimate.fromDict((await this.http.request("GET", path, { auth: true })).json());
  }

  /** A full id, or a unique prefix of one (as every rldp command takes): a verified mechanism's, else the catalogue's. */
  private async fullId(given: string): Promise<string> {
    const mine = [...this.verified.keys()].filter((i) => i.startsWith(given.trim().toLowerCase()));
    return fullMechanismId(given, mine, async () => (await this.mechanisms()).map((m) => String(m.id)));
  }

  /** The collection `name`, followed: each submit uses its current mechanism (see {@link Collection}). */
  collection(name: string): Collection {
    return new Collection(this, name);
  }

  /** Apply a change to the state and remember it for the next save (a journalling store writes just these). */
  private change(state: ClientState, change: Change): void {
    applyChange(state, change);
    this.changes.push(change);
  }

  /** Save the state (durable when this resolves); the changes are forgotten only once they are saved. */
  private async save(state: ClientState): Promise<void> {
    const changes = this.changes;
    await this.store!.save(state, changes);
    if (this.changes === changes) this.changes = [];
    else this.changes = this.changes.slice(changes.length);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async loaded(): Promise<ClientState> {
    if (!this.store) throw new ValidationError("this needs a state store: new Client(url, { store })");
    if (!this.state) {
      const state = (await this.store.load()) ?? emptyState();
      upgradeState(state); // a store of its own may hand back an older format
      this.state = state;
    }
    return this.state;
  }

  private encode(mech: Mechanism, records: readonly RecordLike[] | Record<string, readonly unknown[]>): Int32Array {
    return Array.isArray(records) ? mech.alphabet.encode(records as readonly RecordLike[]) : mech.alphabet.encodeColumns(records as Record<string, readonly unknown[]>);
  }

  /** Reports for records (memoised per owner with a store; a fresh draw per record without one). */
  async privatize(id: string, records: readonly RecordLike[] | Record<string, readonly unknown[]>, options: { owners?: Owners; random?: RandomSource } = {}): Promise<Int32Array> {
    const mech = await this.mechanism(id);
    const xs = this.encode(mech, records);
    const random = options.random ?? this.random;
    if (!this.store) {
      this.stateless(mech, options.owners);
      return mech.privatizeIndices(xs, random);
    }
    return this.serial(async () => {
      const state = await this.loaded();
      const owners = ownerNames(options.owners, xs.length);
      const ys = this.memoised(state, mech, owners, xs, random);
      await this.save(state);
      return mech.reportFrom(ys, random);
    });
  }

  private stateless(mech: Mechanism, owners: Owners): void {
    if (owners !== null && owners !== undefined) throw new ValidationError("owners needs a state store: memos and windows live there");
    if (mech.window) throw new ValidationError(`mechanism ${mech.id} collects one report per owner per ${mech.window.text} window: the client must remember what it sent; give a state store`);
  }

  /**
   * Move the draws a format-1 state keyed by these documents' ids to their randomiser keys (each document
   * verified like any mechanism; one that cannot be now is skipped, its draws kept under its id and still
   * charged). A {@link Collection} does it for its history, so an app upgraded mid-collection re-sends its
   * draws on the next rotation; using a document does it too.
   */
  async adoptLegacy(ids: readonly string[]): Promise<void> {
    if (!this.store) return;
    const legacy = await this.serial(async () => (await this.loaded()).legacy ?? []);
    const mechs: Mechanism[] = [];
    for (const id of ids.filter((i) => legacy.includes(i))) {
      try {
        mechs.push(await this.mechanism(id));
      } catch (exc) {
        if (!(exc instanceof RldpError)) throw exc;
      }
    }
    if (!mechs.length) return;
    await this.serial(async () => {
      const state = await this.loaded();
      for (const mech of mechs) if (state.legacy?.includes(mech.id)) this.change(state, ["adopt", mech.id, mech.memoKey]);
      await this.save(state);
    });
  }

  /** The memoised y of each record, drawing (and charging the budget for) the missing ones. */
  private memoised(state: ClientState, mech: Mechanism, owners: string[], xs: Int32Array, random?: RandomSource): Int32Array {
    const now = this.clock();
    if (state.legacy?.includes(mech.id)) this.change(state, ["adopt", mech.id, mech.memoKey]);
    const memo = own(state.memo, mech.memoKey) ?? {};
    const ys = new Int32Array(xs.length).fill(-1);
    const missing = new Map<string, number>(); // "owner\u0000x" → first record
    for (let i = 0; i < xs.length; i++) {
      const byOwner = own(memo, owners[i]);
      const entry = byOwner && own(byOwner, xs[i]);
      if (entry) {
        if (!(entry[0] >= 0 && entry[0] < mech.memoOutputs)) throw new ValidationError(`the state is corrupt: a memoised output of ${mech.id} (randomiser ${mech.memoKey}) is outside its outputs`);
        ys[i] = entry[0];
      } else {
        const key = `${owners[i]}\u0000${xs[i]}`;
        if (!missing.has(key)) missing.set(key, i);
      }
    }
    if (!missing.size) return ys;
    const firsts = [...missing.values()];
    this.charge(state, firsts.map((i) => owners[i]), mech.epsilonAudited, now);
    const drawn = mech.drawMemo(Int32Array.from(firsts, (i) => xs[i]), random);
    this.change(state, ["memo", mech.memoKey, firsts.map((i, j) => [owners[i], xs[i], drawn[j], mech.epsilonAudited, now])]);
    const stored = own(state.memo, mech.memoKey)!;
    for (let i = 0; i < xs.length; i++) if (ys[i] < 0) ys[i] = stored[owners[i]][xs[i]][0];
    return ys;
  }

  private charge(state: ClientState, owners: string[], epsilon: number, now: number): void {
    if (!this.budget) return;
    const budget = this.budget;
    const start = budget.periodStart(now);
    const asked = new Map<string, number>();
    for (const o of owners) asked.set(o, (asked.get(o) ?? 0) + 1);
    for (const [owner, draws] of asked) {
      let spent = 0; // in the current period
      let count = 0;
      let total = 0; // in all
      let all = 0;
      for (const byOwner of Object.values(state.memo)) {
        for (const entry of Object.values(own(byOwner, owner) ?? {})) {
          total += entry[1];
          all++;
          if (entry[2] >= start) {
            spent += entry[1];
            count++;
          }
        }
      }
      // The lifetime total first (no later period lifts that refusal), then the current period's.
      const caps: [number, string | null, number, number][] = [[budget.total, null, total, all]];
      if (budget.per !== null) caps.push([budget.epsilon, budget.per, spent, count]);
      for (const [cap, per, used, n] of caps) {
        if (used + draws * epsilon > cap + AUDIT_TOLERANCE * (n + draws)) {
          throw new PrivacyBudgetExceeded(cap, per, used, draws * epsilon, owner);
        }
      }
    }
  }

  /** Privatise and upload records; see the Python client's `submit` (same semantics). */
  async submit(
    id: string,
    records: readonly RecordLike[] | Record<string, readonly unknown[]>,
    options: { owners?: Owners; batchSize?: number; random?: RandomSource } = {},
  ): Promise<Receipt> {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!(Number.isInteger(batchSize) && batchSize >= 1)) throw new ValidationError(`batchSize must be an integer ≥ 1; got ${batchSize}`);
    const mech = await this.mechanism(id);
    const xs = this.encode(mech, records);
    requireOwners(xs.length, options.owners, this.store !== null);
    const random = options.random ?? this.random;
    if (!this.store) {
      this.stateless(mech, options.owners);
      return this.sendAll(makeBatches(mech.id, mech.privatizeIndices(xs, random), batchSize, null, this.batchId));
    }
    return this.serial(async () => {
      const state = await this.loaded();
      const owners = ownerNames(options.owners, xs.length);
      if (!mech.window) {
        const ys = this.memoised(state, mech, owners, xs, random);
        await this.save(state); // the draws are stored before anything is sent
        return this.sendAll(makeBatches(mech.id, mech.reportFrom(ys, random), batchSize, null, this.batchId));
      }
      const label = mech.window.labelAt(this.clock());
      const byWindow = own(state.ledger, mech.id);
      const ledger = (byWindow && own(byWindow, label)) ?? {};
      const send: number[] = [];
      const seen = new Set<string>();
      for (let i = 0; i < xs.length; i++) {
        if (seen.has(owners[i])) continue;
        seen.add(owners[i]);
        if (!Object.hasOwn(ledger, owners[i])) send.push(i);
      }
      const sendOwners = send.map((i) => owners[i]);
      const ys = this.memoised(state, mech, sendOwners, Int32Array.from(send, (i) => xs[i]), random);
      const batches = makeBatches(mech.id, mech.reportFrom(ys, random), batchSize, label, this.batchId);
      const now = this.clock();
      batches.forEach((b, k) => {
        this.change(state, ["ledger", mech.id, label, b.batch, sendOwners.slice(k * batchSize, (k + 1) * batchSize)]);
        this.change(state, ["outbox+", stored(b, now)]);
      });
      await this.save(state);
      const pending = state.outbox.filter((b) => b.mechanism === mech.id).map(unstored);
      return this.sendAll(pending, { skipped: xs.length - send.length, window: label });
    });
  }

  /**
   * Upload outputs already privatised (no memo, no window ledger). `window`: for a mechanism that collects
   * by window, the label of the window the reports belong to (`mech.window.labelAt(now)` for the current
   * one; the caller vouches for one report per owner and window). Nothing is downloaded.
   */
  async submitReports(
    id: string,
    reports: ArrayLike<number>,
    batchSize = DEFAULT_BATCH_SIZE,
    window: string | null = null,
  ): Promise<Receipt> {
    // labelled, but not in the store's outbox (window ""): a raw upload is queued, not kept there
    const batches = makeBatches(await this.fullId(id), reports, batchSize, window, this.batchId).map((b) => ({ ...b, window: "" }));
    return this.sendAll(batches, { window });
  }

  private async post(item: PreparedBatch): Promise<Record<string, unknown>> {
    const resp = await this.http.request("POST", "/v1/reports", { body: item.body, headers: { "Content-Type": MSGPACK }, upload: true });
    return resp.json();
  }

  private async settled(item: PreparedBatch, refused = false): Promise<void> {
    if (!this.state || !this.store || !(refused || item.window)) return;
    this.change(this.state, refused ? ["release", item.batch] : ["outbox-", item.batch]);
    await this.save(this.state);
  }

  private async sendAll(batches: PreparedBatch[], extra: { skipped?: number; window?: string | null } = {}): Promise<Receipt> {
    const r = receipt({ skipped: extra.skipped ?? 0, window: extra.window ?? null });
    for (let i = 0; i < batches.length; i++) {
      const item = batches[i];
      let answer: Record<string, unknown>;
      try {
        answer = await this.post(item);
      } catch (exc) {
        if (exc instanceof ServiceUnavailable) {
          const rest = batches.slice(i);
          if (this.queueLimit > 0 && this.store) {
            const state = await this.loaded();
            for (const b of rest) {
              if (b.window) continue; // windowed batches stay in the outbox
              r.dropped += this.enqueue(state, b);
            }
            await this.save(state);
            r.queued = rest.reduce((s, b) => s + (b.window || state.queue.some((q) => q.batch === b.batch) ? b.count : 0), 0);
            return r;
          }
          r.queued = rest.filter((b) => b.window).reduce((s, b) => s + b.count, 0);
          exc.receipt = r;
          throw exc;
        }
        if (exc instanceof ProblemError) {
          await this.settled(item, true);
          exc.receipt = r;
        }
        throw exc;
      }
      await this.settled(item);
      r.accepted += Number(answer.accepted ?? item.count);
      r.batches += 1;
      r.duplicates += answer.duplicate ? 1 : 0;
      r.batchIds.push(item.batch);
    }
    return r;
  }

  /** Put a batch in the bounded offline queue (the oldest are dropped to make room); reports dropped. */
  private enqueue(state: ClientState, b: PreparedBatch): number {
    const size = (s: StoredBatch) => s.body.length;
    const item = stored(b, this.clock());
    if (size(item) > this.queueLimit) return b.count;
    let dropped = 0;
    while (state.queue.reduce((s, q) => s + size(q), 0) + size(item) > this.queueLimit) {
      const oldest = state.queue[0];
      dropped += oldest.count;
      this.change(state, ["queue-", oldest.batch]);
    }
    this.change(state, ["queue+", item]);
    return dropped;
  }

  /** Send what is waiting: windowed batches of the outbox, then the offline queue (same batch ids). */
  async flush(): Promise<Receipt> {
    if (!this.store) return receipt();
    return this.serial(async () => {
      const state = await this.loaded();
      const r = receipt();
      const pending = [...state.outbox.map((b) => ({ b, queued: false })), ...state.queue.map((b) => ({ b, queued: true }))];
      for (const { b, queued } of pending) {
        const item = unstored(b);
        try {
          const answer = await this.post(item);
          r.accepted += Number(answer.accepted ?? item.count);
          r.batches += 1;
          r.duplicates += answer.duplicate ? 1 : 0;
          r.batchIds.push(item.batch);
          await this.settled(item);
        } catch (exc) {
          if (exc instanceof ServiceUnavailable) break;
          if (!(exc instanceof ProblemError)) throw exc;
          await this.settled(item, true);
          r.rejected += item.count;
          r.problems.push(`batch ${item.batch}: ${exc.reason}: ${exc.detail}`);
        }
        if (queued) {
          this.change(state, ["queue-", item.batch]);
          await this.save(state);
        }
      }
      r.queued = state.queue.reduce((s, q) => s + q.count, 0) + state.outbox.reduce((s, q) => s + q.count, 0);
      return r;
    });
  }
}

/** Refuse (OwnersRequired) a memoised batch of more than one record that names no owners (as Python's `require_owners`). */
function requireOwners(n: number, owners: Owners, memoised: boolean): void {
  if (memoised && (owners === null || owners === undefined) && n > 1) {
    throw new OwnersRequired(
      `${n} records and no owners: with memoisation (a state store) every record would be one person's and identical records would share one draw; give owners: [one id per record], owners: "<id>" if they are all one person's, or no store to draw afresh`,
    );
  }
}

function ownerNames(owners: Owners, n: number): string[] {
  if (owners === null || owners === undefined || typeof owners === "string") return new Array(n).fill(owners ?? "");
  if (owners.length !== n) throw new ValidationError(`owners must give one owner per record (${n}); got ${owners.length}`);
  return owners.map((o) => {
    if (typeof o !== "string" && !(typeof o === "number" && Number.isInteger(o))) throw new ValidationError(`owners must be strings (or integers); got ${o}`);
    return String(o);
  });
}

function stored(b: PreparedBatch, now: number): StoredBatch {
  return { batch: b.batch, mechanism: b.mechanism, window: b.window, count: b.count, body: base64Encode(b.body), created: now };
}

function unstored(s: StoredBatch): PreparedBatch {
  return { batch: s.batch, mechanism: s.mechanism, window: s.window, count: s.count, body: base64Decode(s.body) as Uint8Array };
}

/**
 * A collection followed through a {@link Client} (port of `rldp.client.collections`): a stable
 * name whose mechanism the operator can rotate. Each submit looks it up (one small GET) and uses
 * its current mechanism, downloaded and verified once per mechanism like any other, its draws
 * memoised per randomiser (`Mechanism.memoKey`: Q, per-report layer, alphabet): a rotation that re-publishes
 * the same design re-sends every memoised report and spends nothing; a redesign (another Q) is a fresh draw
 * of every record, charged to the budget and never beyond it. When the service cannot be reached the last mechanism seen is used.
 */
export class Collection {
  last: Record<string, unknown> | null = null;
  constructor(readonly client: Client, readonly name: string) {
    if (typeof name !== "string" || !name) throw new ValidationError(`a collection name must be a non-empty string; got ${name}`);
  }

  /** The collection now (GET /v1/collections/{name}): `current`, `mechanisms`, `policy`, `status`, … */
  async info(): Promise<Record<string, unknown>> {
    const resp = await this.client.http.request("GET", `/v1/collections/${encodeURIComponent(this.name)}`);
    this.last = resp.json();
    return this.last;
  }

  /** The current mechanism, verified; the last one seen when the service cannot be reached. */
  async current(): Promise<Mechanism> {
    let info: Record<string, unknown>;
    try {
      info = await this.info();
    } catch (exc) {
      if (!(exc instanceof ServiceUnavailable) || this.last === null) throw exc;
      info = this.last;
    }
    if (info.status !== "active") throw new CollectionRetired(`collection '${this.name}' was retired; it takes no more reports`);
    const history = Array.isArray(info.mechanisms) ? info.mechanisms : [];
    await this.client.adoptLegacy(history.map((m) => (m as { mechanism?: unknown })?.mechanism).filter((m): m is string => typeof m === "string"));
    return this.client.mechanism(String(info.current));
  }

  /** [current mechanism id, one report per record]; nothing is sent. */
  async privatize(records: readonly RecordLike[] | Record<string, readonly unknown[]>, options: { owners?: Owners; random?: RandomSource } = {}): Promise<[string, Int32Array]> {
    const mech = await this.current();
    return [mech.id, await this.client.privatize(mech.id, records, options)];
  }

  /** P(S, U) from every mechanism of the collection ({@link Client.estimateCollection}). */
  async estimate(params: EstimateParams = {}): Promise<Estimate> {
    return this.client.estimateCollection(this.name, params);
  }

  /** Privatise and upload under the current mechanism ({@link Client.submit}). */
  async submit(records: readonly RecordLike[] | Record<string, readonly unknown[]>, options: { owners?: Owners; batchSize?: number; random?: RandomSource } = {}): Promise<Receipt> {
    const mech = await this.current();
    return this.client.submit(mech.id, records, options);
  }
}
