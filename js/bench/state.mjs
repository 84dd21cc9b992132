// Client state at scale (issue 35, 4), one run, printed as figures and ratios (not a timed test):
//   node bench/state.mjs [--quick]      (after `npx tsc -p tsconfig.json`)
// `Client.submit` of N one-record users (each its own, new owner) with a FileStateStore, against an
// in-process stub of the service, plain and with a daily collection window (memo, budget, ledger,
// outbox). Baseline in the same run: the same store made to write the whole state at every save
// (today's behaviour before the journal: write, fsync, rename). Floor: ≥ 50,000 new owners/s.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode } from "@msgpack/msgpack";
import * as rldp from "../dist/node.js";

const quick = process.argv.includes("--quick");
const N = quick ? 20_000 : 100_000;
const cases = (f) => JSON.parse(readFileSync(new URL(`../../conformance/cases/${f}`, import.meta.url), "utf8")).cases;
const GRR = cases("documents-rldp.json").find((c) => c.name === "rldp/grr/rows/msgpack");
const DAILY = cases("documents-window.json").find((c) => c.name === "window/rldp-grr-P1D/rows/msgpack");
const byId = new Map([GRR, DAILY].map((c) => [c.expect.id, Buffer.from(c.document_base64, "base64")]));

async function fetch(url, init = {}) {
  const path = new URL(url).pathname;
  if (init.method === "GET") return new Response(byId.get(decodeURIComponent(path.split("/").pop())), { headers: { "Content-Type": "application/msgpack" } });
  const body = decode(init.body);
  return new Response(JSON.stringify({ accepted: body.reports.length, duplicate: false }), { status: 201 });
}

/** The baseline: every save writes the whole state (the changes are not passed on). */
class WholeFileStore extends rldp.FileStateStore {
  save(state) {
    return super.save(state);
  }
}

const colours = ["red", "green", "blue"];
const records = Array.from({ length: N }, (_, i) => ({ sex: i % 2 ? "Male" : "Female", colour: colours[i % 3] }));
const owners = Array.from({ length: N }, (_, i) => `user-${i}`);

async function run(Store, doc, batchSize) {
  const dir = mkdtempSync(join(tmpdir(), "rldp-bench-state-"));
  const client = new rldp.Client("http://agg.test", { fetch, store: new Store(join(dir, "state.json")) });
  await client.mechanism(doc.expect.id);
  const start = process.hrtime.bigint();
  const receipt = await client.submit(doc.expect.id, records, { owners, batchSize });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (receipt.accepted !== N) throw new Error(`accepted ${receipt.accepted} of ${N}`);
  rmSync(dir, { recursive: true });
  return N / seconds;
}

const best = {};
for (let round = 0; round < (quick ? 1 : 2); round++) {
  for (const [name, Store, doc, batchSize] of [
    ["journal", rldp.FileStateStore, GRR, 10_000],
    ["journal_windowed", rldp.FileStateStore, DAILY, 1_000],
    ["whole", WholeFileStore, GRR, 10_000],
    ["whole_windowed", WholeFileStore, DAILY, 1_000],
  ]) {
    best[name] = Math.max(best[name] ?? 0, await run(Store, doc, batchSize));
  }
}
const f = (v) => Math.round(v).toLocaleString("en");
console.log(`js_state_new_owners_rate ${f(best.journal)} owners/s  (floor ≥ 50,000)`);
console.log(`js_state_new_owners_rate_windowed ${f(best.journal_windowed)} owners/s  (batches of 1,000: a save per acknowledged batch)`);
console.log(`js_state_whole_file_rate ${f(best.whole)} owners/s  (baseline: the whole state at every save)`);
console.log(`js_state_whole_file_rate_windowed ${f(best.whole_windowed)} owners/s`);
console.log(`js_state_speedup ${(best.journal / best.whole).toFixed(1)} x, windowed ${(best.journal_windowed / best.whole_windowed).toFixed(1)} x`);
