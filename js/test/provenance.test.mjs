// Checking pinned public data (port of rldp.shared.provenance.check_public_data): the canonical counts are the
// documented bytes, a document is checked against columns or counts, and every refusal is a PublicDataError.
// conformance/cases/public-data.json binds the verdicts and hashes to the Python client's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as rldp from "../dist/index.js";

test("the canonical counts are the documented JSON, and their hash covers the labels", () => {
  const alphabet = new rldp.Alphabet([new rldp.Attribute("sex", ["F", "M"])], [new rldp.Attribute("colour", ["blue", "red"])]);
  const expected =
    '{"attributes":[{"name":"sex","values":["F","M"]},{"name":"colour","values":["blue","red"]}],"counts":[1,2,0,7],"format":"rldp.counts/1"}';
  assert.equal(rldp.canonicalCounts(alphabet, [[1, 2], [0, 7]]), expected);
  assert.equal(rldp.countsSha256(alphabet, [1, 2, 0, 7]), createHash("sha256").update(expected).digest("hex"));
  const other = new rldp.Alphabet([new rldp.Attribute("sex", ["F", "M"])], [new rldp.Attribute("colour", ["blue", "green"])]);
  assert.notEqual(rldp.countsSha256(other, [1, 2, 0, 7]), rldp.countsSha256(alphabet, [1, 2, 0, 7]));
  assert.throws(() => rldp.countsSha256(alphabet, [1, 2, 0]), rldp.DocumentError);
  assert.throws(() => rldp.countsSha256(alphabet, [1, 2, 0, 0.5]), rldp.DocumentError);
});

const CASES = JSON.parse(readFileSync(new URL("../../conformance/cases/public-data.json", import.meta.url), "utf8")).cases;
const byName = (name) => CASES.find((c) => c.name === `public-data/${name}`);

test("a document is checked against its public data given as columns or as counts", () => {
  const same = byName("same-data");
  const valid = rldp.fromJson(same.document);
  const check = rldp.checkPublicData(valid, same.columns);
  assert.ok(check.passed && check.summary() === "" && check.n === same.expect.n);
  assert.equal(check.countsSha256, valid.doc.provenance.counts_sha256);
  const counts = rldp.publicCounts(valid.alphabet, same.columns);
  assert.equal(counts.reduce((a, b) => a + b, 0), same.expect.n);
  const viaCounts = rldp.checkPublicCounts(valid, counts);
  assert.ok(viaCounts.passed && viaCounts.countsSha256 === check.countsSha256);
  const inflated = rldp.checkPublicData(rldp.fromJson(byName("inflated-n").document), same.columns);
  assert.deepEqual(inflated.mismatches.map((m) => m.field), ["n", "radius", "counts_sha256"]);
  assert.match(inflated.summary(), /^n: the document says 210 \(privacy\.uncertainty\.n, provenance\.n\), the data has 21; radius: /);
  assert.equal(inflated.toDict().passed, false);
  assert.throws(() => rldp.checkPublicCounts(valid, [0, 0, 0, 0, 0, 0]), rldp.PublicDataError);
});

test("data the document cannot be compared with is a typed PublicDataError naming what is wrong", () => {
  for (const [name, pattern] of [
    ["missing-column", /has no column 'colour'/],
    ["value-outside-alphabet", /values outside the document's alphabet \(colour: 'green'\)/],
    ["no-rows", /has no rows/],
    ["provenance-other-policy", /provenance policy .* is not the one this version applies/],
    ["numeric-attribute-not-a-number", /a value no bin holds/],
  ]) {
    const c = byName(name);
    assert.throws(() => rldp.checkPublicData(rldp.fromJson(c.document), c.columns), (exc) => {
      assert.ok(exc instanceof rldp.PublicDataError && exc instanceof rldp.TableError && exc.name === "PublicDataError", name);
      assert.match(exc.message, pattern, name);
      return true;
    });
  }
});
