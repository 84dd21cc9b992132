// The LDP baselines for a numeric U (issue 38: square-wave, piecewise) are published as plain matrices: the
// TypeScript SDK verifies the Python aggregator's documents (id, audit) and samples their columns, with
// nothing added for them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as rldp from "../dist/index.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PYTHON = process.env.RLDP_PYTHON ?? join(ROOT, ".venv", "bin", "python");

// Each baseline designed over (sex, age in 6 unequal bins) at ε = 1, its JSON text, matrix and audited ε.
const SCRIPT = `
import json
import numpy as np
from rldp.aggregator.design import design
from rldp.shared.document import mechanism_matrix, to_json
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet, Attribute
alpha = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute.binned("age", NumericSpec((17, 22, 28, 37, 48, 61, 90)))])
p = np.array([[0.05, 0.06, 0.08, 0.07, 0.05, 0.03], [0.07, 0.09, 0.15, 0.14, 0.13, 0.08]])
out = {}
for method in ("square-wave", "piecewise"):
    doc = design(method, alphabet=alpha, public_distribution=p, epsilon=1.0, n=20000)
    out[method] = {"text": to_json(doc), "id": doc["id"], "matrix": mechanism_matrix(doc).tolist(), "audited": doc["audit"]["epsilon"]}
print(json.dumps(out))
`;

const designs = JSON.parse(execFileSync(PYTHON, ["-c", SCRIPT], { encoding: "utf8", maxBuffer: 1 << 24 }));

for (const method of ["square-wave", "piecewise"]) {
  test(`${method}: the TS SDK verifies the document and samples its columns`, () => {
    const d = designs[method];
    const mech = rldp.Mechanism.fromBytes(d.text, "json", { expectedId: d.id });
    assert.equal(mech.method, method);
    assert.equal(mech.id, d.id);
    assert.ok(Math.abs(mech.epsilonAudited - d.audited) <= 1e-9 * Math.max(1, d.audited), `${mech.epsilonAudited} vs ${d.audited}`);
    assert.ok(mech.epsilonAudited <= 1 + 1e-9);
    const x = mech.alphabet.encodeOne({ sex: "Male", age: 40 });
    assert.equal(x, 6 + 3); // (Male, [37, 48))
    const n = 60000;
    const ys = mech.privatizeIndices(new Int32Array(n).fill(x), new rldp.SeededRandom(38));
    const counts = new Array(d.matrix.length).fill(0);
    for (const y of ys) counts[y] += 1;
    d.matrix.forEach((row, y) => {
      const q = row[x];
      const se = Math.sqrt((q * (1 - q)) / n);
      assert.ok(Math.abs(counts[y] / n - q) <= 5 * se, `output ${y}: ${counts[y] / n} vs ${q}`);
    });
  });
}
