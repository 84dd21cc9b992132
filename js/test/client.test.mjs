// The Client against an in-process stub of the service (a fake fetch): download and verification,
// memoisation per owner, collection windows, the privacy budget, retries honouring Retry-After,
// the offline queue, typed errors, and the state saved (atomically, in a file) before any upload.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode } from "@msgpack/msgpack";
import * as rldp from "../dist/node.js";

const DOCS = JSON.parse(readFileSync(new URL("../../conformance/cases/documents-rldp.json", import.meta.url), "utf8")).cases;
const WINDOWED = JSON.parse(readFileSync(new URL("../../conformance/cases/documents-window.json", import.meta.url), "utf8")).cases;
const GRR = DOCS.find((c) => c.name === "rldp/grr/rows/msgpack");
const DAILY = WINDOWED.find((c) => c.name === "window/rldp-grr-P1D/rows/msgpack");
const SRR = DOCS.find((c) => c.name === "rldp/srr/rows/msgpack"); // another Q on the same alphabet: a redesign
const memoKey = (c) => rldp.Mechanism.fromBytes(Buffer.from(c.document_base64, "base64"), "msgpack").memoKey;
const RECORDS = [{ sex: "Male", colour: "red" }, { sex: "Female", colour: "blue" }, { sex: "Male", colour: "red" }];

function stub({ docs = [GRR, DAILY, SRR], failures = [], onPost } = {}) {
  const byId = new Map(docs.map((c) => [c.expect.id, Buffer.from(c.document_base64, "base64")]));
  const posts = [];
  const seen = new Set();
  const fetch = async (url, init = {}) => {
    const path = new URL(url).pathname;
    const fail = failures.shift();
    if (fail) return typeof fail === "function" ? fail() : new Response(JSON.stringify({ detail: "busy" }), { status: fail.status, headers: fail.headers ?? {} });
    if (init.method === "GET" && path.startsWith("/v1/mechanisms/")) {
      const body = byId.get(decodeURIComponent(path.split("/").pop()));
      if (!body) return new Response(JSON.stringify({ type: "https://rldp/problems/unknown-mechanism", reason: "unknown-mechanism", detail: "no such mechanism" }), { status: 404 });
      return new Response(body, { headers: { "Content-Type": "application/msgpack" } });
    }
    if (init.method === "POST" && path === "/v1/reports") {
      const body = decode(init.body);
      onPost?.(body);
      const duplicate = seen.has(body.batch);
      seen.add(body.batch);
      if (!duplicate) posts.push(body);
      return new Response(JSON.stringify({ accepted: body.reports.length, duplicate }), { status: duplicate ? 200 : 201 });
    }
    return new Response("not found", { status: 404 });
  };
  return { fetch, posts };
}

const noSleep = { sleeps: [], sleep(ms) { this.sleeps.push(ms); return Promise.resolve(); } };

test("a mechanism is downloaded as msgpack, verified and cached", async () => {
  const { fetch } = stub();
  const client = new rldp.Client("http://agg.test", { fetch });
  const mech = await client.mechanism(GRR.expect.id);
  assert.equal(mech.id, GRR.expect.id);
  assert.ok(Math.abs(mech.epsilonAudited - GRR.expect.audit.epsilon) < 1e-9);
  assert.equal(await client.mechanism(GRR.expect.id), mech);
});

test("a tampered download is refused with MechanismRejected, an unknown id with ProblemError", async () => {
  const bytes = Buffer.from(GRR.document_base64, "base64");
  const tampered = Buffer.from(bytes);
  const at = tampered.indexOf(Buffer.from("grr"));
  tampered.write("srr", at);
  const fetch = async () => new Response(tampered, { headers: { "Content-Type": "application/msgpack" } });
  const client = new rldp.Client("http://agg.test", { fetch });
  await assert.rejects(client.mechanism(GRR.expect.id), (e) => e instanceof rldp.MechanismRejected && e.rule === "document" && /id mismatch/.test(e.message));
  const other = new rldp.Client("http://agg.test", stub());
  await assert.rejects(other.mechanism("f".repeat(64)), (e) => e instanceof rldp.ProblemError && e.status === 404 && e.reason === "unknown-mechanism");
  const pinned = new rldp.Client("http://agg.test", { ...stub(), policy: new rldp.VerificationPolicy({ pinned: ["a".repeat(64)] }) });
  await assert.rejects(pinned.mechanism(GRR.expect.id), (e) => e instanceof rldp.MechanismRejected && e.rule === "pinned");
});

test("memoised reports: one draw per (owner, mechanism, record value), saved before the upload", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rldp-js-"));
  const path = join(dir, "state.json");
  let savedBeforePost = true;
  const { fetch, posts } = stub({ onPost: () => (savedBeforePost &&= existsSync(path)) });
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(path) });
  const many = Array.from({ length: 60 }, () => RECORDS[0]);
  const r1 = await client.submit(GRR.expect.id, many, { owners: "alice" });
  assert.equal(r1.accepted, 60);
  assert.equal(new Set(posts[0].reports).size, 1, "one owner, one record value: one memoised report");
  const again = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(path) });
  await again.submit(GRR.expect.id, [RECORDS[0]], { owners: "alice" });
  assert.equal(posts[1].reports[0], posts[0].reports[0], "a new process re-sends the memoised draw");
  const state = await new rldp.FileStateStore(path).load(); // the snapshot and its journal
  assert.equal(Object.keys(state.memo[memoKey(GRR)].alice).length, 1);
  assert.ok(savedBeforePost);
  const bobs = await client.privatize(GRR.expect.id, RECORDS, { owners: ["bob", "bob", "carol"] });
  assert.equal(bobs[0], bobs[0]);
  assert.equal(Object.keys((await new rldp.FileStateStore(path).load()).memo[memoKey(GRR)]).sort().join(), "alice,bob,carol");
});

test("a collection window: one report per owner and window, labelled, the rest skipped", async () => {
  const { fetch, posts } = stub();
  let now = Date.UTC(2026, 10, 24, 10) / 1000;
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.MemoryStateStore(), clock: () => now });
  const r1 = await client.submit(DAILY.expect.id, RECORDS, { owners: ["a", "b", "a"] });
  assert.deepEqual([r1.accepted, r1.skipped, r1.window], [2, 1, "2026-11-24"]);
  const r2 = await client.submit(DAILY.expect.id, RECORDS, { owners: ["a", "b", "c"] });
  assert.deepEqual([r2.accepted, r2.skipped], [1, 2]);
  now += 86400;
  const r3 = await client.submit(DAILY.expect.id, [RECORDS[0]], { owners: "a" });
  assert.deepEqual([r3.accepted, r3.window], [1, "2026-11-25"]);
  assert.deepEqual(posts.map((p) => p.window), ["2026-11-24", "2026-11-24", "2026-11-25"]);
  await assert.rejects(new rldp.Client("http://agg.test", { fetch }).submit(DAILY.expect.id, RECORDS), rldp.ValidationError);
});

test("submitReports labels raw outputs with the window it is given (none when not given)", async () => {
  const { fetch, posts } = stub();
  const store = new rldp.MemoryStateStore();
  const client = new rldp.Client("http://agg.test", { fetch, store });
  const r = await client.submitReports(DAILY.expect.id, [0, 1, 2], 2, "2026-11-24");
  assert.deepEqual([r.accepted, r.batches, r.window], [3, 2, "2026-11-24"]);
  assert.deepEqual(posts.map((p) => p.window), ["2026-11-24", "2026-11-24"]);
  const bare = await client.submitReports(GRR.expect.id, [0, 1]);
  assert.deepEqual([bare.accepted, bare.window, "window" in posts[2]], [2, null, false]);
});

test("with a store and no budget given, the default budget (4 nats per owner per day, 4 in all, as Python's) applies", async () => {
  assert.equal(rldp.DEFAULT_BUDGET.epsilon, 4);
  assert.equal(rldp.DEFAULT_BUDGET.per, "P1D");
  assert.equal(rldp.DEFAULT_BUDGET.lifetime, 4);
  const all = ["Male", "Female"].flatMap((sex) => ["red", "green", "blue"].map((colour) => ({ sex, colour })));
  const [grr, srr] = [GRR, SRR].map((c) => c.expect.mechanism.epsilon_audited);
  assert.ok(6 * grr <= 4 && 6 * grr + srr > 4, "the figures this test relies on");
  const run = async (options) => {
    const { fetch, posts } = stub();
    const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.MemoryStateStore(), clock: () => 1.8e9, ...options });
    await client.submit(GRR.expect.id, all, { owners: "" }); // six new draws of the device owner: 6·ε within 4
    const last = client.submit(SRR.expect.id, [all[0]]); // a redesign (another Q): beyond 4 nats today
    return { last, posts };
  };
  const byDefault = await run({});
  await assert.rejects(byDefault.last, rldp.PrivacyBudgetExceeded);
  assert.equal(byDefault.posts.length, 1);
  const off = await run({ budget: null });
  assert.equal((await off.last).accepted, 1);
  await assert.rejects(Promise.resolve().then(() => new rldp.Client("http://agg.test", { budget: rldp.DEFAULT_BUDGET })), rldp.ValidationError);
});

test("the lifetime cap is not renewed by a new day: rotations stop drawing once it is spent", async () => {
  const eps = GRR.expect.mechanism.epsilon_audited;
  const day = 86_400;
  let now = 1.8e9;
  const { fetch, posts } = stub();
  const budget = new rldp.PrivacyBudget(2 * eps + 1e-6, "P1D", 2 * eps + 1e-6);
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.MemoryStateStore(), budget, clock: () => now });
  await client.submit(GRR.expect.id, RECORDS.slice(0, 2), { owners: "" }); // two draws: the lifetime spent
  now += day; // a new day renews the period, not the lifetime
  await assert.rejects(
    client.submit(GRR.expect.id, [{ sex: "Female", colour: "green" }]),
    (e) => e instanceof rldp.PrivacyBudgetExceeded && e.per === null && /lifetime total/.test(e.message),
  );
  assert.equal(posts.length, 1);
  const perDayOnly = new rldp.Client("http://agg.test", { fetch, store: new rldp.MemoryStateStore(), budget: new rldp.PrivacyBudget(2 * eps + 1e-6, "P1D"), clock: () => now });
  await perDayOnly.submit(GRR.expect.id, RECORDS.slice(0, 2), { owners: "" });
  now += day;
  assert.equal((await perDayOnly.submit(GRR.expect.id, [{ sex: "Female", colour: "green" }])).accepted, 1);
  assert.throws(() => new rldp.PrivacyBudget(2, "P1D", 1), rldp.ValidationError);
  assert.throws(() => new rldp.PrivacyBudget(2, null, 3), rldp.ValidationError);
  assert.equal(new rldp.PrivacyBudget(2, null).total, 2);
});

test("the privacy budget refuses new draws beyond it and sends nothing", async () => {
  const { fetch, posts } = stub();
  const eps = GRR.expect.mechanism.epsilon_audited;
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.MemoryStateStore(), budget: new rldp.PrivacyBudget(2 * eps + 1e-6, "P1D") });
  await client.submit(GRR.expect.id, RECORDS.slice(0, 2), { owners: "" });
  await client.submit(GRR.expect.id, RECORDS.slice(0, 2), { owners: "" }); // memoised: no new draw, nothing spent
  await assert.rejects(client.submit(GRR.expect.id, [{ sex: "Female", colour: "green" }]), (e) => e instanceof rldp.PrivacyBudgetExceeded && e.owner === "");
  assert.equal(posts.length, 2);
});

test("retries honour Retry-After, then the batch is sent once (same id)", async () => {
  const sleeper = { ...noSleep, sleeps: [] };
  const { fetch, posts } = stub({ failures: [null, { status: 503, headers: { "Retry-After": "2" } }, { status: 429, headers: { "Retry-After": "120" } }].slice(1) });
  const client = new rldp.Client("http://agg.test", { fetch, sleep: sleeper.sleep.bind(sleeper), retries: 3 });
  // the two failures hit the GET first: it is retried after 2 s and after the 60 s cap
  const r = await client.submit(GRR.expect.id, RECORDS);
  assert.deepEqual(sleeper.sleeps, [2000, 60000]);
  assert.equal(r.accepted, 3);
  assert.equal(posts.length, 1);
});

test("an outage: ServiceUnavailable with a receipt, or the offline queue and a flush with the same batch ids", async () => {
  const down = { status: 503 };
  const s1 = stub();
  const client = new rldp.Client("http://agg.test", { fetch: s1.fetch, retries: 1, sleep: () => Promise.resolve() });
  await client.mechanism(GRR.expect.id);
  s1.fetch.fail = true;
  const failing = async (url, init) => (init.method === "POST" ? new Response("{}", { status: 503 }) : s1.fetch(url, init));
  const offline = new rldp.Client("http://agg.test", { fetch: failing, retries: 1, sleep: () => Promise.resolve() });
  await assert.rejects(offline.submit(GRR.expect.id, RECORDS), (e) => e instanceof rldp.ServiceUnavailable && e.status === 503 && e.receipt.accepted === 0);
  const store = new rldp.MemoryStateStore();
  let up = false;
  const flaky = async (url, init) => (init.method === "POST" && !up ? new Response(JSON.stringify(down), { status: 503 }) : s1.fetch(url, init));
  const queued = new rldp.Client("http://agg.test", { fetch: flaky, retries: 0, store, queueLimitBytes: 1 << 20, sleep: () => Promise.resolve() });
  const r = await queued.submit(GRR.expect.id, RECORDS, { batchSize: 2, owners: "" });
  assert.deepEqual([r.accepted, r.queued], [0, 3]);
  const ids = (await store.load()).queue.map((q) => q.batch);
  up = true;
  const f = await queued.flush();
  assert.deepEqual([f.accepted, f.batches, f.queued], [3, 2, 0]);
  assert.deepEqual(f.batchIds, ids);
});

test("a request timeout (408: nothing stored, send it again): retried, kept in the queue, sent by a flush", async () => {
  const s = stub();
  const slow = { type: "https://rldp.dev/problems/request-timeout", reason: "request-timeout", detail: "the body did not arrive within the server's deadline; nothing was stored" };
  let fast = false;
  let posts408 = 0;
  const fetch = async (url, init) =>
    init.method === "POST" && !fast ? (posts408++, new Response(JSON.stringify(slow), { status: 408, headers: { "Content-Type": "application/problem+json" } })) : s.fetch(url, init);
  const store = new rldp.MemoryStateStore();
  const client = new rldp.Client("http://agg.test", { fetch, store, retries: 1, queueLimitBytes: 1 << 20, sleep: () => Promise.resolve() });
  const r = await client.submit(GRR.expect.id, [RECORDS[0]]);
  assert.deepEqual([r.accepted, r.queued, posts408], [0, 1, 2]); // sent twice (one retry), then queued, not dropped
  const ids = (await store.load()).queue.map((q) => q.batch);
  fast = true;
  const f = await client.flush();
  assert.deepEqual([f.accepted, f.queued], [1, 0]);
  assert.deepEqual(f.batchIds, ids);
});

test("a paused collection (423 collection-paused): kept in the queue without retries, sent by a flush once resumed", async () => {
  const s = stub();
  const paused = { type: "https://rldp.dev/problems/collection-paused", reason: "collection-paused", detail: "collection 'app' is paused: drift" };
  let resumed = false;
  const sleeps = [];
  const fetch = async (url, init) =>
    init.method === "POST" && !resumed ? new Response(JSON.stringify(paused), { status: 423, headers: { "Retry-After": "300" } }) : s.fetch(url, init);
  const store = new rldp.MemoryStateStore();
  const client = new rldp.Client("http://agg.test", { fetch, store, queueLimitBytes: 1 << 20, sleep: (ms) => (sleeps.push(ms), Promise.resolve()) });
  const r = await client.submit(GRR.expect.id, [RECORDS[0]]);
  assert.deepEqual([r.accepted, r.queued, sleeps.length], [0, 1, 0]);
  assert.equal((await client.flush()).queued, 1);
  resumed = true;
  const f = await client.flush();
  assert.deepEqual([f.accepted, f.queued], [1, 0]);
  const bare = new rldp.Client("http://agg.test", { fetch: async (url, init) => (resumed = false, fetch(url, init)) });
  await assert.rejects(bare.submit(GRR.expect.id, [RECORDS[0]]), (e) => e instanceof rldp.CollectionPaused && e instanceof rldp.ServiceUnavailable && e.status === 423);
});

test("a permanent refusal is a typed ProblemError carrying the receipt", async () => {
  const s = stub();
  const refusing = async (url, init) =>
    init.method === "POST"
      ? new Response(JSON.stringify({ type: "https://rldp/problems/mechanism-retired", reason: "mechanism-retired", detail: "retired" }), { status: 409 })
      : s.fetch(url, init);
  const client = new rldp.Client("http://agg.test", { fetch: refusing });
  await assert.rejects(client.submit(GRR.expect.id, RECORDS), (e) => e instanceof rldp.ProblemError && e.reason === "mechanism-retired" && e.receipt.accepted === 0);
});

test("a corrupt state file is refused, never silently replaced", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rldp-js-"));
  const path = join(dir, "state.json");
  (await import("node:fs")).writeFileSync(path, "{not json");
  const client = new rldp.Client("http://agg.test", { ...stub(), store: new rldp.FileStateStore(path) });
  await assert.rejects(client.submit(GRR.expect.id, RECORDS, { owners: "" }), rldp.StateFileError);
  assert.equal(readFileSync(path, "utf8"), "{not json");
});

test("Retry-After as an HTTP date, and its cap", () => {
  const now = Date.UTC(2026, 0, 1);
  assert.equal(rldp.retryAfterSeconds(new Date(now + 5000).toUTCString(), now), 5);
  assert.equal(rldp.retryAfterSeconds("3600", now), 60);
  assert.equal(rldp.retryAfterSeconds(null), null);
});
