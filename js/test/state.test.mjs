// The Node state file at scale: a snapshot and an append-only journal (one line, one fsync per save),
// compaction, and what a crash leaves behind (a torn last line, a stale journal, kill -9 mid-upload).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decode } from "@msgpack/msgpack";
import * as rldp from "../dist/node.js";

const cases = (f) => JSON.parse(readFileSync(new URL(`../../conformance/cases/${f}`, import.meta.url), "utf8")).cases;
const GRR = cases("documents-rldp.json").find((c) => c.name === "rldp/grr/rows/msgpack");
const DAILY = cases("documents-window.json").find((c) => c.name === "window/rldp-grr-P1D/rows/msgpack");
const byId = new Map([GRR, DAILY].map((c) => [c.expect.id, Buffer.from(c.document_base64, "base64")]));
const RECORD = { sex: "Male", colour: "red" };
const KEY = rldp.Mechanism.fromBytes(byId.get(GRR.expect.id), "msgpack").memoKey; // the memo's key for GRR's draws

function stub() {
  const posts = [];
  const fetch = async (url, init = {}) => {
    const path = new URL(url).pathname;
    if (init.method === "GET") return new Response(byId.get(decodeURIComponent(path.split("/").pop())), { headers: { "Content-Type": "application/msgpack" } });
    const body = decode(init.body);
    posts.push(body);
    return new Response(JSON.stringify({ accepted: body.reports.length, duplicate: false }), { status: 201 });
  };
  return { fetch, posts };
}

const tmp = () => join(mkdtempSync(join(tmpdir(), "rldp-js-state-")), "state.json");
const users = (n, from = 0) => Array.from({ length: n }, (_, i) => `user-${from + i}`);

test("a save of new draws appends one journal line; the snapshot is not rewritten", async () => {
  const path = tmp();
  const { fetch } = stub();
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(path) });
  await client.submit(GRR.expect.id, Array(10).fill(RECORD), { owners: users(10) });
  const snapshot = readFileSync(path, "utf8");
  const journal = readFileSync(`${path}.journal`, "utf8");
  await client.submit(GRR.expect.id, Array(50).fill(RECORD), { owners: users(50, 10) });
  assert.equal(readFileSync(path, "utf8"), snapshot, "the snapshot is left as it was");
  const lines = readFileSync(`${path}.journal`, "utf8").slice(journal.length).split("\n");
  assert.deepEqual(lines.slice(1), [""], "one whole line");
  const change = JSON.parse(lines[0]);
  assert.equal(change.length, 1);
  assert.equal(change[0][0], "memo");
  assert.equal(change[0][2].length, 50);
  const state = await new rldp.FileStateStore(path).load();
  assert.equal(Object.keys(state.memo[KEY]).length, 60);
});

test("the journal is folded into a new snapshot once it outgrows it, and nothing is lost", async () => {
  const path = tmp();
  const { fetch, posts } = stub();
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(path) });
  // 40,000 owners' draws: a journal several times the 1 MiB a compaction waits for, whatever a line's length
  for (let k = 0; k < 20; k++) await client.submit(GRR.expect.id, Array(2_000).fill(RECORD), { owners: users(2_000, 2_000 * k) });
  const snapshot = JSON.parse(readFileSync(path, "utf8"));
  assert.ok(snapshot.generation > 1, `compacted at least once (journal ${statSync(`${path}.journal`).size} B, snapshot ${statSync(path).size} B, generation ${snapshot.generation})`);
  const header = JSON.parse(readFileSync(`${path}.journal`, "utf8").split("\n")[0]);
  assert.equal(header.generation, snapshot.generation);
  const state = await new rldp.FileStateStore(path).load();
  const memo = state.memo[KEY];
  assert.equal(Object.keys(memo).length, 40_000);
  const sent = posts.flatMap((p) => p.reports);
  assert.deepEqual(users(40_000).map((u) => memo[u][rldp.Mechanism.fromBytes(byId.get(GRR.expect.id), "msgpack").alphabet.encode([RECORD])[0]][0]), sent);
});

test("a last journal line cut short by a crash is dropped, and the next save starts a clean journal", async () => {
  const path = tmp();
  const { fetch } = stub();
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(path) });
  await client.submit(GRR.expect.id, Array(5).fill(RECORD), { owners: users(5) });
  await client.submit(GRR.expect.id, Array(5).fill(RECORD), { owners: users(5, 5) });
  appendFileSync(`${path}.journal`, '[["memo","'); // a save that never returned
  const store = new rldp.FileStateStore(path);
  const state = await store.load();
  assert.equal(Object.keys(state.memo[KEY]).length, 10);
  const again = new rldp.Client("http://agg.test", { fetch, store });
  await again.submit(GRR.expect.id, Array(5).fill(RECORD), { owners: users(5, 10) });
  const reloaded = await new rldp.FileStateStore(path).load();
  assert.equal(Object.keys(reloaded.memo[KEY]).length, 15);
});

test("a journal of an older generation (a crash between the two renames) is not replayed twice; damage is refused", async () => {
  const path = tmp();
  const { fetch } = stub();
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(path) });
  await client.submit(DAILY.expect.id, Array(3).fill(RECORD), { owners: users(3) });
  const state = await new rldp.FileStateStore(path).load();
  const stale = `${JSON.stringify({ format: `${state.format}/journal`, generation: 0 })}\n${JSON.stringify([["queue+", state.outbox[0] ?? { batch: "x", mechanism: "m", window: "", count: 1, body: "", created: 0 }]])}\n`;
  writeFileSync(`${path}.journal`, stale);
  assert.deepEqual((await new rldp.FileStateStore(path).load()).queue, [], "an older generation's journal is ignored");
  const header = readFileSync(`${path}.journal`, "utf8").split("\n")[0];
  const generation = JSON.parse(readFileSync(path, "utf8")).generation;
  writeFileSync(`${path}.journal`, `${header.replace('"generation":0', `"generation":${generation}`)}\n{not json\n[]\n`);
  await assert.rejects(new rldp.FileStateStore(path).load(), (e) => e instanceof rldp.StateFileError && /line 2/.test(e.message));
  writeFileSync(`${path}.journal`, "<html>\n");
  await assert.rejects(new rldp.FileStateStore(path).load(), rldp.StateFileError);
  assert.equal(readFileSync(`${path}.journal`, "utf8"), "<html>\n", "never replaced");
});

test("owners named like Object's properties are owners like any other", async () => {
  const path = tmp();
  const { fetch, posts } = stub();
  const names = ["__proto__", "constructor", "toString", "hasOwnProperty"];
  const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(path) });
  const r = await client.submit(DAILY.expect.id, Array(4).fill(RECORD), { owners: names });
  assert.equal(r.accepted, 4, "each reports once in the window");
  assert.equal(({}).polluted, undefined);
  assert.equal(Object.prototype[rldp.Mechanism.fromBytes(byId.get(DAILY.expect.id), "msgpack").alphabet.encode([RECORD])[0]], undefined, "no prototype pollution");
  const again = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(path) });
  const second = await again.submit(DAILY.expect.id, Array(4).fill(RECORD), { owners: names });
  assert.deepEqual([second.accepted, second.skipped], [0, 4], "the ledger read back from the file knows all four");
  assert.equal(posts.length, 1);
});

test("a process killed -9 after its draws were saved re-sends the same reports", () => {
  const path = tmp();
  const child = `
    import * as rldp from ${JSON.stringify(new URL("../dist/node.js", import.meta.url).href)};
    import { decode } from "@msgpack/msgpack";
    const docs = ${JSON.stringify(Object.fromEntries([...byId].map(([k, v]) => [k, v.toString("base64")])))};
    const fetch = async (url, init = {}) => {
      if (init.method === "GET") return new Response(Buffer.from(docs[decodeURIComponent(new URL(url).pathname.split("/").pop())], "base64"), { headers: { "Content-Type": "application/msgpack" } });
      process.stdout.write(JSON.stringify(decode(init.body).reports), () => process.kill(process.pid, "SIGKILL"));
      return new Promise(() => {});
    };
    const client = new rldp.Client("http://agg.test", { fetch, store: new rldp.FileStateStore(${JSON.stringify(path)}) });
    await client.submit(process.argv[1], Array(3_000).fill(${JSON.stringify(RECORD)}), { owners: Array.from({ length: 3_000 }, (_, i) => "user-" + i) });
  `;
  const first = spawnSync(process.execPath, ["--input-type=module", "-e", child, GRR.expect.id], { cwd: fileURLToPath(new URL("..", import.meta.url)) });
  assert.equal(first.signal, "SIGKILL", first.stderr.toString());
  const sent = JSON.parse(first.stdout.toString());
  assert.equal(sent.length, 3_000);
  const second = spawnSync(process.execPath, ["--input-type=module", "-e", child, GRR.expect.id], { cwd: fileURLToPath(new URL("..", import.meta.url)) });
  assert.deepEqual(JSON.parse(second.stdout.toString()), sent, "the memoised draws, not new ones");
  assert.ok(statSync(`${path}.journal`).size > 0);
});
