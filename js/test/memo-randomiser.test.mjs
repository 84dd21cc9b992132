// The memo keyed by the randomiser (issue 34, item 5; port of Python's): a collection's rotation that
// re-publishes its design under a new document id re-sends each record's memoised report and spends
// nothing; a redesign (another Q) draws afresh, charged; a format-1 state is upgraded without losing a draw.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rldp from "../dist/node.js";
import { applyChange, checkState } from "../dist/state.js";

const cases = (f) => JSON.parse(readFileSync(new URL(`../../conformance/cases/${f}`, import.meta.url), "utf8")).cases;
const GRR = cases("documents-rldp.json").find((c) => c.name === "rldp/grr/rows/json");
const SRR = cases("documents-rldp.json").find((c) => c.name === "rldp/srr/rows/json"); // another Q, same alphabet
const RECORD = { sex: "Male", colour: "red" }; // x = 1·3 + 2
const X = 5;
const utf8 = (s) => new TextEncoder().encode(s);

/** The GRR document re-published with a tag (a new id, the same randomiser), as JSON text. */
function republished(tag) {
  const doc = rldp.parseJson(GRR.document);
  doc.tag = tag;
  doc.id = rldp.sha256Hex(utf8(rldp.canonicalBody(doc)));
  return rldp.canonicalText(doc);
}

function stub(texts) {
  const byId = new Map(texts.map((t) => [JSON.parse(t).id, t]));
  const posts = [];
  const fetch = async (url, init = {}) => {
    if (init.method === "GET") return new Response(byId.get(decodeURIComponent(new URL(url).pathname.split("/").pop())), { headers: { "Content-Type": "application/json" } });
    posts.push(init.body);
    return new Response(JSON.stringify({ accepted: 1, duplicate: false }), { status: 201 });
  };
  return { fetch, posts, ids: [...byId.keys()] };
}

test("30 daily rotations of one design share one memo key and re-send one draw; a redesign draws afresh", async () => {
  const days = Array.from({ length: 30 }, (_, d) => republished(`day ${d + 1}`));
  const { fetch, ids } = stub([...days, SRR.document]);
  const dayIds = ids.slice(0, 30);
  let now = 1.8e9;
  const eps = GRR.expect.mechanism.epsilon_audited;
  const budget = new rldp.PrivacyBudget(eps + 1e-6, "P1D", eps + SRR.expect.mechanism.epsilon_audited + 1e-6);
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.MemoryStateStore(), budget, clock: () => now });
  const mechs = await Promise.all(dayIds.map((id) => client.mechanism(id)));
  assert.equal(new Set(dayIds).size, 30);
  assert.equal(new Set(mechs.map((m) => m.memoKey)).size, 1);
  const owners = Array.from({ length: 200 }, (_, i) => `user-${i}`);
  const records = owners.map(() => RECORD);
  const first = Array.from(await client.privatize(dayIds[0], records, { owners }));
  for (const id of dayIds.slice(1)) {
    now += 86_400;
    assert.deepEqual(Array.from(await client.privatize(id, records, { owners })), first, "the memoised reports, free");
  }
  const srr = await client.mechanism(SRR.expect.id);
  assert.notEqual(srr.memoKey, mechs[0].memoKey);
  now += 86_400;
  await client.privatize(SRR.expect.id, [RECORD], { owners: "user-0" }); // a redesign: a fresh draw, charged
  now += 86_400;
  await assert.rejects(client.privatize(SRR.expect.id, [{ sex: "Female", colour: "red" }], { owners: "user-0" }), rldp.PrivacyBudgetExceeded);
  assert.deepEqual(Array.from(await client.privatize(dayIds[29], [RECORD], { owners: "user-0" })), [first[0]]);
});

test("a format-1 state is upgraded: its draws move to the randomiser key when their document is used, none is lost", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rldp-js-upgrade-"));
  const path = join(dir, "state.json");
  const unknown = "c".repeat(64);
  const eps = GRR.expect.mechanism.epsilon_audited;
  const old = { format: "rldp.js-client-state/1", memo: { [GRR.expect.id]: { alice: { [X]: [3, eps, 1] } } }, ledger: {}, outbox: [], queue: [], generation: 1 };
  writeFileSync(path, JSON.stringify(old), { mode: 0o600 });
  const change = ["memo", unknown, [["alice", 0, 1, 0.5, 2]]];
  writeFileSync(`${path}.journal`, `${JSON.stringify({ format: "rldp.js-client-state/1/journal", generation: 1 })}\n${JSON.stringify([change])}\n`, { mode: 0o600 });
  const rotated = republished("day 2");
  const { fetch } = stub([GRR.document, rotated]);
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(path), budget: null });
  const key = (await client.mechanism(GRR.expect.id)).memoKey;
  assert.deepEqual(Array.from(await client.privatize(GRR.expect.id, [RECORD], { owners: "alice" })), [3]);
  assert.deepEqual(Array.from(await client.privatize(JSON.parse(rotated).id, [RECORD], { owners: "alice" })), [3]);
  const saved = await new rldp.FileStateStore(path).load();
  assert.equal(saved.format, rldp.STATE_FORMAT);
  assert.equal(JSON.parse(readFileSync(path, "utf8")).format, rldp.STATE_FORMAT, "the first save wrote a whole snapshot");
  assert.deepEqual(saved.memo[key].alice[X], [3, eps, 1]);
  assert.deepEqual(saved.legacy, [unknown], "the unknown document's draw stays, still charged");
  assert.deepEqual(saved.memo[unknown].alice[0], [1, 0.5, 2]);
  assert.equal(saved.memo[GRR.expect.id], undefined);
});

test("an adopted draw never overwrites one the randomiser already holds, and the legacy one keeps its charge", () => {
  const state = { format: rldp.STATE_FORMAT, memo: { d: { alice: { 1: [4, 1, 0], 2: [0, 1, 0] } }, k: { alice: { 1: [2, 1, 5] } } }, ledger: {}, outbox: [], queue: [], legacy: ["d"] };
  applyChange(state, ["adopt", "d", "k"]);
  assert.deepEqual(state.memo, { d: { alice: { 1: [4, 1, 0] } }, k: { alice: { 1: [2, 1, 5], 2: [0, 1, 0] } } });
  assert.deepEqual(state.legacy, []);
});

test("a state of a newer format is refused, naming both formats", () => {
  assert.throws(
    () => checkState({ format: "rldp.js-client-state/9", memo: {}, ledger: {}, outbox: [], queue: [] }, "here"),
    (e) => e instanceof rldp.StateFileError && /rldp\.js-client-state\/9, written by a newer rldp; this one reads rldp\.js-client-state\/2/.test(e.message),
  );
});

test("a collection adopts the format-1 draws of its earlier documents: an app upgraded mid-collection rotates for free", async () => {
  const day1 = republished("day 1");
  const day2 = republished("day 2");
  const [id1, id2] = [day1, day2].map((t) => JSON.parse(t).id);
  const { fetch: docs } = stub([day1, day2]);
  const info = { name: "usage", status: "active", current: id2, mechanisms: [{ mechanism: id1, current: false }, { mechanism: id2, current: true }] };
  const fetch = async (url, init = {}) =>
    new URL(url).pathname === "/v1/collections/usage" ? new Response(JSON.stringify(info), { headers: { "Content-Type": "application/json" } }) : docs(url, init);
  const eps = GRR.expect.mechanism.epsilon_audited;
  const store = new rldp.MemoryStateStore();
  await store.save({ format: "rldp.js-client-state/1", memo: { [id1]: { alice: { [X]: [3, eps, 1] } } }, ledger: {}, outbox: [], queue: [] });
  const client = new rldp.Client("http://agg.test", { fetch, store, budget: new rldp.PrivacyBudget(eps + 1e-6) }); // no room for a draw
  const [mid, ys] = await client.collection("usage").privatize([RECORD], { owners: "alice" });
  assert.equal(mid, id2);
  assert.deepEqual(Array.from(ys), [3], "day 1's draw, re-sent under day 2, free");
  assert.deepEqual((await store.load()).legacy, []);
});
