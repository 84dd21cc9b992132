// A live test against `rldp serve` on loopback (started from the worktree's .venv, as
// tests/rldp_live.py does): publish, download and verify, privatise, submit, then the
// server's estimate. Skipped, with one line saying why, when the Python venv is missing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as rldp from "../dist/node.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PYTHON = process.env.RLDP_PYTHON ?? join(ROOT, ".venv", "bin", "python");
const ADMIN = "js-live-admin-token-0123456789abcdef";
const READ = "js-live-read-token-0123456789abcdef";
const missing = !existsSync(PYTHON);
const PAGE_ORIGIN = "http://127.0.0.1:9";
if (missing) console.log(`# live test skipped: no Python venv at ${PYTHON} (make .venv/.rldp-installed)`);

const CASES = (file) => JSON.parse(readFileSync(join(ROOT, "conformance", "cases", file), "utf8")).cases;
const DOC = CASES("documents-rldp.json").find((c) => c.name === "rldp/polyopt-paper-sex-race/rows/msgpack");
const DAILY = CASES("documents-window.json").find((c) => c.name === "window/rldp-grr-P1D/grr/msgpack");
const FIRST = CASES("documents-rldp.json").find((c) => c.name === "rldp/grr/rows/msgpack");
const SECOND = CASES("documents-rldp.json").find((c) => c.name === "rldp/cr/palette/msgpack");

let server;
let url;

async function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function publish(c) {
  const resp = await fetch(`${url}/v1/mechanisms`, {
    method: "POST",
    headers: { Authorization: `Bearer ${ADMIN}`, "Content-Type": "application/msgpack" },
    body: Buffer.from(c.document_base64, "base64"),
  });
  assert.ok(resp.status === 201 || resp.status === 200, `publish: ${resp.status} ${await resp.text()}`);
}

before(async () => {
  if (missing) return;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "rldp-js-live-"));
  url = `http://127.0.0.1:${port}`;
  server = spawn(PYTHON, ["-m", "rldp.cli", "serve", "--host", "127.0.0.1", "--port", String(port), "--db", `sqlite:///${dir}/rldp.sqlite3`, "--dev", "--cors-origin", PAGE_ORIGIN], {
    env: { ...process.env, RLDP_ADMIN_TOKEN: ADMIN, RLDP_READ_TOKEN: READ },
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  let log = "";
  server.stderr.on("data", (d) => (log += d));
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || server.exitCode !== null) throw new Error(`rldp serve did not become ready:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const c of [DOC, DAILY, FIRST, SECOND]) await publish(c);
});

after(() => {
  if (server && server.exitCode === null) process.kill(-server.pid, "SIGTERM");
});

test("live: verify, privatise, submit (memoised, windowed), then the server's estimate", { skip: missing }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rldp-js-live-state-"));
  const store = new rldp.FileStateStore(join(dir, "state.json"));
  const client = new rldp.Client(url, { store });
  const mech = await client.mechanism(DOC.expect.id);
  assert.equal(mech.notion, "rldp");
  assert.ok(Math.abs(mech.epsilonAudited - DOC.expect.audit.epsilon) <= 1e-9 * DOC.expect.audit.epsilon);
  const races = ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"];
  const n = 20000;
  const records = Array.from({ length: n }, (_, i) => ({ sex: i % 3 ? "Male" : "Female", race: races[i % 5] }));
  const owners = Array.from({ length: n }, (_, i) => `user-${i}`);
  const r = await client.submit(DOC.expect.id, records, { owners, batchSize: 5000 });
  assert.deepEqual([r.accepted, r.batches, r.duplicates], [n, 4, 0]);
  const again = await client.privatize(DOC.expect.id, records.slice(0, 100), { owners: owners.slice(0, 100) });
  assert.equal(again.length, 100);

  const est = await fetch(`${url}/v1/mechanisms/${DOC.expect.id}/estimate`, { headers: { Authorization: `Bearer ${READ}` } });
  assert.equal(est.status, 200);
  const body = await est.json();
  assert.equal(body.n, n);
  const reader = new rldp.Client(url, { token: READ });
  const sdk = await reader.estimate(DOC.expect.id.slice(0, 12)); // the SDK's estimate: the same answer, as an object
  assert.ok(sdk instanceof rldp.Estimate);
  assert.deepEqual(sdk.toDict(), body);
  assert.equal(sdk.n, n);
  assert.equal(sdk.rows().length, 10);
  await assert.rejects(reader.estimate(SECOND.expect.id), (e) => e instanceof rldp.TooFewReports && e.status === 409 && e.reports === 0);
  // The records are Female for i ≡ 0 (mod 3), race i mod 5: P(Female, r) = 1/15, P(Male, r) = 2/15. This Q
  // has 7 outputs for 10 inputs (not identifiable), so compare what is: the output distribution Q·P of
  // the server's estimate against Q·P of the truth, within 5 standard errors of n reports.
  const truth = [1, 1, 1, 1, 1, 2, 2, 2, 2, 2].map((v) => v / 15);
  const joint = body.joint.flat();
  const q = mech.reportMatrix();
  for (let y = 0; y < q.rows; y++) {
    let fromTruth = 0;
    let fromEstimate = 0;
    for (let x = 0; x < q.cols; x++) {
      fromTruth += q.data[y * q.cols + x] * truth[x];
      fromEstimate += q.data[y * q.cols + x] * joint[x];
    }
    const se = Math.sqrt((fromTruth * (1 - fromTruth)) / n);
    assert.ok(Math.abs(fromEstimate - fromTruth) <= 5 * se + 1e-6, `output ${y}: ${fromEstimate} vs ${fromTruth} ± ${se}`);
  }
  const colours = Array.from({ length: 10 }, (_, i) => ({ sex: "Female", colour: ["blue", "green", "red"][i % 3] }));
  const daily = await client.submit(DAILY.expect.id, colours, { owners: owners.slice(0, 10) });
  assert.equal(daily.accepted, 10);
  const twice = await client.submit(DAILY.expect.id, colours, { owners: owners.slice(0, 10) });
  assert.deepEqual([twice.accepted, twice.skipped], [0, 10]);
  const windows = await (await fetch(`${url}/v1/mechanisms/${DAILY.expect.id}/windows`, { headers: { Authorization: `Bearer ${READ}` } })).json();
  assert.equal(windows.windows.reduce((s, w) => s + w.reports, 0), 10);
});

test("live: the server refuses an out-of-range report with a typed ProblemError", { skip: missing }, async () => {
  const client = new rldp.Client(url);
  await assert.rejects(client.submitReports(DOC.expect.id, [0, 10_000]), (e) => e instanceof rldp.ProblemError && e.status === 422 || e.status === 400);
});

async function admin(method, path, body) {
  const resp = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, "Content-Type": "application/json" },
    body: body && JSON.stringify(body),
  });
  const text = await resp.text();
  assert.ok(resp.ok, `${method} ${path}: ${resp.status} ${text}`);
  return JSON.parse(text);
}

test("live: a followed collection reports under its current mechanism, a rotation draws afresh within the budget", { skip: missing }, async () => {
  const name = `usage-${process.pid}`;
  // The conformance documents have no window (and this test counts memoised repeats): the collection says so.
  await admin("POST", "/v1/collections", { name, mechanism: FIRST.expect.id, policy: { notion: "rldp", epsilon: 1.0 }, description: "js", window: "none" });
  const eps = FIRST.expect.mechanism.epsilon_audited + SECOND.expect.mechanism.epsilon_audited;
  const client = new rldp.Client(url, { store: new rldp.MemoryStateStore(), budget: new rldp.PrivacyBudget(eps + 1e-6) });
  const usage = client.collection(name);
  const record = [{ sex: "Female", colour: "red" }];
  for (let i = 0; i < 2; i++) assert.equal((await usage.submit(record)).accepted, 1);
  const [first] = await usage.privatize(record);
  assert.equal(first, FIRST.expect.id);
  await admin("POST", `/v1/collections/${name}/rotate`, { mechanism: SECOND.expect.id });
  const [second] = await usage.privatize(record);
  assert.equal(second, SECOND.expect.id);
  assert.equal((await usage.submit(record)).accepted, 1);
  await assert.rejects(usage.submit([{ sex: "Male", colour: "blue" }]), rldp.PrivacyBudgetExceeded);
  await admin("POST", `/v1/collections/${name}/retire`);
  await assert.rejects(usage.submit(record), rldp.CollectionRetired);
});

test("live: rldp serve --cors-origin lets that origin's pages call it (preflight and answers), no other", { skip: missing }, async () => {
  const pre = await fetch(`${url}/v1/reports`, { method: "OPTIONS", headers: { Origin: PAGE_ORIGIN, "Access-Control-Request-Method": "POST" } });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), PAGE_ORIGIN);
  const got = await fetch(`${url}/v1/mechanisms/${DOC.expect.id}`, { headers: { Origin: PAGE_ORIGIN } });
  assert.equal(got.headers.get("access-control-allow-origin"), PAGE_ORIGIN);
  const other = await fetch(`${url}/v1/mechanisms/${DOC.expect.id}`, { headers: { Origin: "http://elsewhere.example" } });
  assert.equal(other.headers.get("access-control-allow-origin"), null);
});
