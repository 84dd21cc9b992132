// How fast and in how much memory the SDK refuses (or accepts) the largest documents of conformance/limits.json:
//   npx tsc -p tsconfig.json && node bench/limits.mjs
import { readFileSync } from "node:fs";
import * as rldp from "../dist/index.js";
const cases = JSON.parse(readFileSync(new URL("../../conformance/cases/limits.json", import.meta.url), "utf8")).cases;
for (const name of ["limits/symbols/16384-grr-lip/json", "limits/dense-cap/8192-grr-lip/json", "limits/symbols/8192-grr-rldp/json"]) {
  const c = cases.find((x) => x.name === name);
  const bytes = new TextEncoder().encode(c.document);
  const t0 = performance.now();
  let verdict;
  try { rldp.Mechanism.fromBytes(bytes, "json"); verdict = "accepted"; } catch (e) { verdict = `${e.name}${e.rule ? "/" + e.rule : ""}`; }
  const ms = performance.now() - t0;
  console.log(`${name}: ${(bytes.length / 1024).toFixed(0)} kB, ${verdict}, ${ms.toFixed(0)} ms, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
}
