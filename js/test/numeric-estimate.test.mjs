// The typed numeric figures of an estimate (port of the Python client's Estimate.numeric / numeric_frame): a real
// answer computed by the Python aggregator, read by both clients, gives the same rows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as rldp from "../dist/index.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PYTHON = process.env.RLDP_PYTHON ?? join(ROOT, ".venv", "bin", "python");

// The aggregator's estimate of a GRR mechanism over (sex, age in 4 bins) from fixed-seed reports, and the Python
// client's numeric_frame of it (NaN written as null).
const SCRIPT = `
import json, sys
import numpy as np
from rldp.aggregator.design.primitives.families import grr_matrix
from rldp.aggregator.estimate import estimate_distribution
from rldp.aggregator.estimate.numeric import numeric_summaries
from rldp.client.estimate import Estimate
from rldp.shared.attributes import Attribute
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet
latent = sys.argv[1] == "latent"
alpha = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute.binned("age", NumericSpec((17, 25, 35, 50, 90)))], latent=latent)
k = 4 if latent else 8
q = grr_matrix(k, 2.0)
rng = np.random.default_rng(7)
x = rng.integers(0, k, 3000)
y = (rng.random(x.size)[:, None] > q.cumsum(axis=0)[:, x].T).sum(axis=1)
est = estimate_distribution(q, np.bincount(y, minlength=k), (1, 4) if latent else (2, 4))
answer = est.to_dict(None if latent else alpha)
answer["numeric"] = numeric_summaries(est, alpha)
frame = Estimate.from_dict(answer).numeric_frame("age")
rows = [[r[0], *(None if v != v else float(v) for v in r[1:4]), bool(r[4])] for r in frame.itertuples(index=False)]
print(json.dumps({"answer": answer, "rows": rows, "note": frame.attrs["note"]}))
`;

function python(kind) {
  return JSON.parse(execFileSync(PYTHON, ["-c", SCRIPT, kind], { encoding: "utf8", maxBuffer: 1 << 24 }));
}

test("the typed figures of a numeric estimate are Python's numeric_frame, row for row", () => {
  const { answer, rows, note } = python("joint");
  const est = rldp.Estimate.fromDict(answer);
  assert.deepEqual(est.numericNames(), ["age"]);
  assert.ok(!("numeric" in est.extra));
  const age = est.numericEstimate("age");
  assert.deepEqual(age.rows(), rows);
  assert.equal(age.rows().length, 4 + 2 + 2 * 3);
  assert.equal(age.note, note);
  assert.match(age.note, /age itself is protected only as far as it reveals sex/);
  assert.deepEqual(age.edges, [17, 25, 35, 50, 90]);
  assert.equal(age.histogram.length, 4);
  assert.deepEqual(age.cdf.map((f) => f.at), [25, 35, 50]);
  const raw = answer.numeric.age;
  assert.equal(age.mean.estimate, raw.mean.estimate);
  assert.equal(age.median.lower, raw.quantiles["0.5"].ci95_low);
  assert.equal(age.p99.upper, raw.quantiles["0.99"].ci95_high);
  assert.equal(age.cdf[1].estimate, raw.cdf.estimate[1]);
  assert.equal(age.histogram[3].upper, raw.histogram.ci95_high[3]);
  assert.equal(age.meanBy.sex.Male.estimate, raw.mean_by.sex.Male.estimate);
  assert.equal(age.quantilesBy.sex.Female["0.9"].lower, raw.quantiles_by.sex.Female["0.9"].ci95_low);
  for (const f of [age.mean, age.median, age.quantilesBy.sex.Male["0.5"]]) assert.ok(f.lower <= f.estimate && f.estimate <= f.upper);
});

test("with a latent S there is no figure per value of S", () => {
  const { answer, rows } = python("latent");
  const age = rldp.Estimate.fromDict(answer).numericEstimate("age");
  assert.deepEqual(age.rows(), rows);
  assert.deepEqual([age.meanBy, age.quantilesBy], [{}, {}]);
  assert.deepEqual(age.rows().map((r) => r[0]), ["mean", "median", "p90", "p99"]);
});

test("an unknown name is a ValidationError naming the numeric attributes; a malformed summary is not-rldp", () => {
  const { answer } = python("joint");
  const est = rldp.Estimate.fromDict(answer);
  assert.throws(() => est.numericEstimate("hours"), (e) => e instanceof rldp.ValidationError && /no numeric attribute "hours".*numeric: age/.test(e.message));
  const none = rldp.Estimate.fromDict({ ...answer, numeric: undefined });
  assert.deepEqual(none.numericNames(), []);
  assert.throws(() => none.numericEstimate("age"), (e) => e instanceof rldp.ValidationError && /numeric: none/.test(e.message));
  const broken = (patch) => rldp.Estimate.fromDict({ ...answer, numeric: { age: { ...answer.numeric.age, ...patch } } }).numericEstimate("age");
  for (const patch of [{ edges: "17-90" }, { histogram: { estimate: [0.5, 0.5] } }, { mean: 39 }, { quantiles_by: [] }, { quantiles: null }]) {
    assert.throws(() => broken(patch), (e) => e instanceof rldp.ProblemError && e.reason === "not-rldp", JSON.stringify(patch));
  }
  // An older server's answer (no quantiles per value of S): the rest is read, no row for them.
  const { quantiles_by: _, ...older } = answer.numeric.age;
  const old = rldp.Estimate.fromDict({ ...answer, numeric: { age: older } }).numericEstimate("age");
  assert.deepEqual(old.quantilesBy, {});
  assert.equal(old.rows().length, 4 + 2);
});
