// χ² tests of the samplers: 10⁶ draws per case (fixed seed), the drawn frequencies against the
// sampler's exact probabilities, which are Q's to 2⁻⁵². Tolerances come from n (see chiSquareOk).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as rldp from "../dist/index.js";

const N = 1_000_000;

/** Pearson's χ² of counts against n·p, and whether it is below df + 6·√(2 df) (a 6σ bound: a fixed
 * seed makes the test deterministic; a sampler off by δ in one cell of mass p adds ≈ n δ² / p). Every
 * cell must also be within 6 standard errors √(n p (1 − p)), and an impossible cell must be empty. */
function chiSquareOk(counts, probs, n) {
  let chi2 = 0;
  let df = -1;
  for (let y = 0; y < probs.length; y++) {
    const e = n * probs[y];
    if (e === 0) {
      if (counts[y] !== 0) return { ok: false, why: `output ${y} has probability 0 but was drawn ${counts[y]} times` };
      continue;
    }
    df++;
    chi2 += (counts[y] - e) ** 2 / e;
    const se = Math.sqrt(e * (1 - probs[y]));
    if (Math.abs(counts[y] - e) > 6 * se + 1e-9) return { ok: false, why: `output ${y}: ${counts[y]} draws, expected ${e.toFixed(1)} ± ${se.toFixed(1)}` };
  }
  const bound = df + 6 * Math.sqrt(2 * Math.max(df, 1));
  return { ok: chi2 <= bound, why: `χ² = ${chi2.toFixed(1)} on ${df} df (bound ${bound.toFixed(1)})` };
}

/** The exact probabilities of column x of a column sampler: threshold differences × 2⁻⁵³. */
function exactColumn(s, x) {
  const b = s.nOutputs;
  const t = s.thresholds.subarray(x * b, (x + 1) * b);
  return Array.from(t, (v, y) => (v - (y ? t[y - 1] : 0)) / 2 ** 53);
}

function draw(sampler, x, source) {
  const xs = new Int32Array(N).fill(x);
  const ys = sampler.sample(xs, source);
  const counts = new Float64Array(sampler.nOutputs);
  for (const y of ys) counts[y]++;
  return counts;
}

function matrixOf(rows) {
  return { rows: rows.length, cols: rows[0].length, data: Float64Array.from(rows.flat()) };
}

function closeToQ(probs, q, x) {
  for (let y = 0; y < q.rows; y++) assert.ok(Math.abs(probs[y] - q.data[y * q.cols + x]) <= 2 ** -52 * 4, `P(${y}|${x}) is Q's to 2⁻⁵²`);
}

const sexRace = rldp.Mechanism.fromBytes(
  JSON.parse(
    (await import("node:fs")).readFileSync(new URL("../../conformance/cases/documents-rldp.json", import.meta.url), "utf8"),
  ).cases.find((c) => c.name === "rldp/polyopt-paper-sex-race/rows/json").document,
  "json",
);

const cases = [
  ["a 6×6 GRR (guide table, CSPRNG-like fast path)", () => matrixOf([[0.5, 0.1, 0.1, 0.1, 0.1, 0.1], [0.1, 0.5, 0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.5, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.5, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.5, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.5]]), 2],
  ["a designed sex/race PolyOpt matrix", () => sexRace.reportMatrix(), 7],
  ["a column with zero entries", () => matrixOf([[0.5, 0.0], [0.0, 1.0], [0.5, 0.0]]), 0],
  ["300 outputs (alias tables)", () => {
    const b = 300;
    const a = 2048;
    const base = Array.from({ length: b }, (_, y) => 1 + ((y * 7919) % 13));
    const total = base.reduce((s, v) => s + v, 0);
    const data = new Float64Array(b * a);
    for (let y = 0; y < b; y++) for (let x = 0; x < a; x++) data[y * a + x] = base[(y + x) % b] / total;
    return { rows: b, cols: a, data };
  }, 5],
];

for (const [name, make, x] of cases) {
  test(`χ²: ${name}`, () => {
    const q = make();
    const s = new rldp.ColumnSampler(q);
    const probs = exactColumn(s, x);
    closeToQ(probs, q, x);
    for (const source of [new rldp.SeededRandom(20261127), undefined]) {
      const r = chiSquareOk(draw(s, x, source), probs, N);
      assert.ok(r.ok, r.why);
    }
  });
}

test("χ²: GRR on 4,000 symbols (two exact masses)", () => {
  const k = 4000;
  const e = Math.exp(2);
  const s = new rldp.GrrSampler(k, e / (e + k - 1), 1 / (e + k - 1));
  const [md, mo, total] = s.masses.map(Number);
  const x = 1234;
  const probs = Array.from({ length: k }, (_, y) => (y === x ? md : mo) / total);
  assert.ok(Math.abs(probs[x] - e / (e + k - 1)) < 1e-15);
  const r = chiSquareOk(draw(s, x, new rldp.SeededRandom(7)), probs, N);
  assert.ok(r.ok, r.why);
});

test("the χ² check has power: draws from one column fail against another", () => {
  const q = sexRace.reportMatrix();
  const s = new rldp.ColumnSampler(q);
  const r = chiSquareOk(draw(s, 0, new rldp.SeededRandom(1)), exactColumn(s, 5), N);
  assert.ok(!r.ok, "a wrong column must be refused");
});

test("the CSPRNG path (a few bits first, the rest when needed) is exact inversion of the u it draws", () => {
  const wide = { rows: 20, cols: 3, data: new Float64Array(60) }; // 20 outputs: the 16-bit first draw
  for (let x = 0; x < 3; x++) {
    let t = 0;
    for (let y = 0; y < 20; y++) t += 1 + ((y * 3 + x) % 7);
    for (let y = 0; y < 20; y++) wide.data[y * 3 + x] = (1 + ((y * 3 + x) % 7)) / t;
  }
  for (const q of [sexRace.reportMatrix(), cases[2][1](), wide]) {
    const s = new rldp.ColumnSampler(q);
    const first = s.firstBits;
    const n = 200_000;
    const xs = Int32Array.from({ length: n }, (_, i) => i % s.nInputs);
    const inner = new rldp.SeededRandom(11);
    let tops = null;
    let words = new Uint32Array(0);
    const recording = {
      u8: (m) => (tops = inner.u8(m)),
      u16: (m) => (tops = inner.u16(m)),
      u32: (m) => (words = inner.u32(m)),
      u53: (m) => inner.u53(m),
    };
    const fast = s.sample(xs, recording);
    // Rebuild each record's u: its first bits, then (records that needed them, in order) 53 − first more.
    const high = 2 ** (53 - first);
    const u = Float64Array.from(tops, (t) => t * high);
    const probe = s.sample(xs, new rldp.ReplayRandom(u)); // all-zero low bits: right whenever the first bits decide
    let j = 0;
    for (let i = 0; i < n && j < words.length / 2; i++) {
      const top = s.sample([xs[i]], new rldp.ReplayRandom([u[i] + high - 1]))[0];
      if (top !== probe[i]) {
        u[i] += (words[2 * j] >>> (first + 11)) * 2 ** 32 + words[2 * j + 1];
        j++;
      }
    }
    assert.equal(j, words.length / 2, "every record that drew more bits is one whose first bits do not decide");
    assert.deepEqual(Array.from(fast), Array.from(s.sample(xs, new rldp.ReplayRandom(u))));
  }
});
