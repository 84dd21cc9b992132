// Numeric attributes (issue 38): what the conformance cases (../conformance/cases/numeric-*.json) do not
// compare: the refusal's message names the record and the attribute, and a document's edges are read.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as rldp from "../dist/index.js";

const alpha = rldp.Alphabet.fromDict({
  sensitive: { name: "sex", values: ["F", "M"] },
  released: [{ name: "age", values: ["[17, 25)", "[25, 90]"], numeric: { edges: [17, 25.0, 90], closed: "left" } }],
});

test("a refused value names its record, its attribute and what was expected", () => {
  assert.throws(() => alpha.encode([{ sex: "F", age: 30 }, { sex: "M", age: " 4" }]), (e) => e instanceof rldp.RecordError && /^record 1: attribute 'age' is numeric; ' 4' is not a finite decimal/.test(e.message));
  assert.throws(() => alpha.encodeColumns({ sex: ["F", "M"], age: [30, NaN] }), (e) => e instanceof rldp.RecordError && /record 1: .*NaN and infinities are refused/.test(e.message));
  assert.throws(() => alpha.encodeOne({ sex: "F", age: true }), (e) => e instanceof rldp.RecordError && /boolean/.test(e.message));
});

test("the edges are read as doubles and bin numbers, bigints and labels", () => {
  const age = alpha.released[0];
  assert.deepEqual(age.numeric.edges, [17, 25, 90]);
  assert.equal(age.numeric.closed, "left");
  assert.deepEqual(Array.from(alpha.encode([{ sex: "M", age: 25 }, { sex: "F", age: 24n }, { sex: "F", age: "[25, 90]" }, { sex: "M", age: -1e308 }])), [3, 0, 1, 2]);
});

test("a numeric block is read strictly (AlphabetError naming the attribute)", () => {
  const make = (numeric) => () => rldp.Alphabet.fromDict({ sensitive: { name: "sex", values: ["F", "M"] }, released: [{ name: "age", values: ["a", "b"], numeric }] });
  assert.throws(make({ edges: [0, 1, 2], closed: "left", lo: 0 }), (e) => e instanceof rldp.AlphabetError && /'age': unknown numeric field\(s\) lo/.test(e.message));
  assert.throws(make({ edges: [0, 2, 1], closed: "left" }), /strictly increasing/);
  assert.throws(make({ edges: [0, 1], closed: "left" }), /1 bins \(from 2 edges\) but 2 values/);
  assert.throws(make({ edges: [0, 1, 2], closed: "both" }), /'left' or 'right'/);
});
