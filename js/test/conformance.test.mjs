// The conformance suite (../conformance/cases/*.json): the TypeScript SDK gives every expected result.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { encodeCase, batchCase } from "./helpers.mjs";
import * as rldp from "../dist/index.js";

const CASES = fileURLToPath(new URL("../../conformance/cases/", import.meta.url));
const RTOL = 1e-9;

const suites = {};
for (const file of readdirSync(CASES).filter((f) => f.endsWith(".json")).sort()) {
  const data = JSON.parse(readFileSync(CASES + file, "utf8"));
  (suites[data.suite] ??= []).push(...data.cases);
}

const fromBase64 = (s) => new Uint8Array(Buffer.from(s, "base64"));
const num = (v) => (v === "inf" ? Infinity : v === "-inf" ? -Infinity : v);

function close(actual, expected, where) {
  expected = num(expected);
  if (typeof expected === "number" && typeof actual === "number") {
    const ok = actual === expected || Math.abs(actual - expected) <= RTOL * Math.abs(expected) + 1e-15;
    assert.ok(ok, `${where}: ${actual} != ${expected}`);
  } else assert.equal(actual, expected, where);
}

function documentOutcome(c) {
  const data = "document" in c ? c.document : fromBase64(c.document_base64);
  let valid;
  try {
    valid = rldp.parseDocument(typeof data === "string" ? new TextEncoder().encode(data) : data, c.encoding);
  } catch (exc) {
    if (!(exc instanceof rldp.RldpError)) throw exc;
    return { verdict: "rejected", error: exc.name, rule: "document", id: null, exc };
  }
  const out = { id: valid.id, format: valid.doc.format };
  const policy = c.policy
    ? new rldp.VerificationPolicy({ maxEpsilon: c.policy.max_epsilon, pinned: c.policy.pinned, minRadius: c.policy.min_radius, maxPublicN: c.policy.max_public_n, beta: c.policy.beta, ...("max_beta" in c.policy ? { maxBeta: c.policy.max_beta } : {}) })
    : undefined;
  try {
    const mech = rldp.Mechanism.fromDocument(valid, { expectedId: c.expected_id, policy });
    return { ...out, verdict: "accepted", error: null, rule: null, audit: mech.audit, mech };
  } catch (exc) {
    if (!(exc instanceof rldp.MechanismRejected)) throw exc;
    return { ...out, verdict: "rejected", error: "MechanismRejected", rule: exc.rule, exc, valid };
  }
}

function checkAudit(audit, expected, name) {
  close(audit.notion, expected.notion, `${name} notion`);
  close(audit.epsilon, expected.epsilon, `${name} epsilon`);
  close(audit.passed, expected.passed, `${name} passed`);
  for (const key of ["delta", "epsilon_lower", "epsilon_upper"]) {
    if (key in expected) close(audit.extra[key], expected[key], `${name} ${key}`);
  }
  if ("per_report_epsilon" in expected) {
    close(audit.perReport.epsilon, expected.per_report_epsilon, `${name} per_report_epsilon`);
    close(audit.perReport.passed, expected.per_report_passed, `${name} per_report_passed`);
  }
}

test("the suite has at least 300 cases", () => {
  const total = Object.values(suites).reduce((s, c) => s + c.length, 0);
  assert.ok(total >= 300, `${total} cases`);
});

for (const c of suites.documents) {
  test(c.name, () => {
    const e = c.expect;
    const got = documentOutcome(c);
    assert.equal(got.verdict, e.verdict, `${c.name}: verdict (${got.exc?.message ?? ""})`);
    assert.equal(got.error, e.error, c.name);
    assert.equal(got.rule, e.rule, `${c.name}: rule (${got.exc?.message ?? ""})`);
    assert.equal(got.id, e.id, `${c.name}: id`);
    if ("message" in c) assert.equal(got.exc?.message, c.message, `${c.name}: message`);
    if (e.audit) {
      const audit = got.audit ?? rldp.auditDocument(got.valid, got.mech?.perReport ?? layerOf(got.valid));
      checkAudit(audit, e.audit, c.name);
    }
    if (e.mechanism) {
      const m = got.mech;
      assert.deepEqual([m.outputs, m.memoOutputs, m.size, m.window?.text ?? null], [e.mechanism.outputs, e.mechanism.memo_outputs, e.mechanism.inputs, e.mechanism.window]);
      close(m.epsilonAudited, e.mechanism.epsilon_audited, `${c.name} epsilon_audited`);
      close(m.epsilonPerReportAudited, e.mechanism.epsilon_per_report_audited, `${c.name} per-report audited`);
    }
  });
}

function layerOf(valid) {
  const layer = valid.doc.collection?.per_report;
  if (!layer) return null;
  const rows = layer.matrix;
  return { matrix: { rows: rows.length, cols: rows[0].length, data: Float64Array.from(rows.flat().map(Number)) }, epsilon: Number(layer.epsilon) };
}

for (const c of suites.records) {
  test(c.name, () => assert.deepEqual(encodeCase(rldp, c), c.expect));
}

function samplerOf(c) {
  if ("document" in c) {
    const mech = rldp.Mechanism.fromBytes(new TextEncoder().encode(c.document), "json");
    return mech.sampler("report");
  }
  if ("grr" in c) return rldp.samplerFor(null, { form: "grr", size: BigInt(c.grr.size), diagonal: c.grr.diagonal, off_diagonal: c.grr.off_diagonal });
  let q;
  if ("shifted_column" in c) {
    const base = c.shifted_column;
    const b = base.length;
    const a = c.inputs;
    const data = new Float64Array(b * a);
    for (let y = 0; y < b; y++) for (let x = 0; x < a; x++) data[y * a + x] = base[(((y - x) % b) + b) % b];
    q = { rows: b, cols: a, data };
  } else q = { rows: c.matrix.length, cols: c.matrix[0].length, data: Float64Array.from(c.matrix.flat()) };
  return rldp.samplerFor(() => q, null);
}

for (const c of suites.sampling) {
  test(c.name, () => {
    const e = c.expect;
    const s = samplerOf(c);
    assert.equal(s.kind, e.kind);
    const ys = s.sample(c.xs, new rldp.ReplayRandom(c.us));
    assert.deepEqual(Array.from(ys), e.ys);
    if (e.kind === "grr") {
      assert.deepEqual(s.masses.map(String), e.masses);
      assert.equal(s.scaleBits, e.scale_bits);
      return;
    }
    if (c.exact_tables === false) return; // a composed R·Q: its last bits are Python's BLAS kernel's
    const t = s.thresholds;
    const bytes = new Uint8Array(8 * t.length);
    const view = new DataView(bytes.buffer);
    t.forEach((v, i) => view.setBigUint64(8 * i, BigInt(v), true));
    assert.equal(createHash("sha256").update(bytes).digest("hex"), e.thresholds_sha256);
    if (e.thresholds) assert.deepEqual(Array.from(t, String), e.thresholds.flat());
    if (e.kind === "alias") {
      assert.equal(s.alias.bits, e.alias_bits);
      assert.equal(createHash("sha256").update(s.alias.packed()).digest("hex"), e.alias_sha256);
    }
  });
}

for (const c of suites.alias) {
  test(c.name, () => {
    const b = c.thresholds[0].length;
    const a = c.thresholds.length;
    const t = Float64Array.from(c.thresholds.flat().map(Number));
    const table = new rldp.AliasTable(t, a, b);
    assert.equal(table.bits, c.expect.bits);
    const view = new DataView(table.packed().buffer);
    const got = Array.from({ length: table.prob.length }, (_, i) => view.getBigUint64(8 * i, true).toString());
    assert.deepEqual(got, c.expect.table);
  });
}

for (const c of suites.batches) {
  test(c.name, () => assert.deepEqual(batchCase(rldp, c), c.expect));
}

// Checking pinned public data: the same verdict, mismatched fields, n and counts hash as Python's check_public_data.
function publicDataOutcome(c) {
  const valid = rldp.fromJson(c.document);
  let check;
  try {
    check = rldp.checkPublicData(valid, c.columns, c.beta == null ? {} : { beta: c.beta });
  } catch (exc) {
    if (!(exc instanceof rldp.RldpError)) throw exc;
    return { verdict: "error", error: exc.name, fields: [], n: null, counts_sha256: null };
  }
  return {
    verdict: check.passed ? "passed" : "failed",
    error: null,
    fields: check.mismatches.map((m) => m.field),
    n: check.n,
    counts_sha256: check.countsSha256,
  };
}

test("the public-data suite covers every verdict", () => {
  const verdicts = new Set(suites["public-data"].map((c) => c.expect.verdict));
  assert.deepEqual([...verdicts].sort(), ["error", "failed", "passed"]);
});

for (const c of suites["public-data"]) {
  test(c.name, () => assert.deepEqual(publicDataOutcome(c), c.expect));
}

// The randomiser key (the memo's): every document read and verified as a download is, the same keys as Python.
test("the randomiser suite has cases of reuse and of difference", () => {
  const names = suites.randomiser.map((c) => c.name);
  assert.ok(names.some((n) => n.startsWith("same/")) && names.some((n) => n.startsWith("distinct/")));
});
for (const c of suites.randomiser) {
  test(c.name, () => {
    const mechs = c.documents.map((d) => {
      const data = "document" in d ? new TextEncoder().encode(d.document) : fromBase64(d.document_base64);
      return rldp.Mechanism.fromDocument(rldp.parseDocument(data, d.encoding));
    });
    const keys = mechs.map((m) => m.memoKey);
    assert.deepEqual(keys, c.expect.keys);
    assert.equal(new Set(keys).size === 1, c.expect.same);
    if (c.expect.text !== null) assert.equal(rldp.randomiserText(mechs[0].valid), c.expect.text);
  });
}
