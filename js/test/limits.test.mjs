// D25 (issue 35): the Python client's size limits, checked before any matrix is built. A document claiming a
// huge alphabet is refused with the same typed error as Python (an RldpError subclass, never a RangeError).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as rldp from "../dist/index.js";

/** A GRR document (format 3: two numbers for K² entries) of |X| = 2·m under `notion`, with a fake id. */
function grrDocument(m, notion) {
  const k = 2 * m;
  const off = 1 / (Math.E + k - 1);
  const privacy = { notion, epsilon: 1, uncertainty: { divergence: "renyi", order: 2, radius: 0 } };
  if (notion === "alip") Object.assign(privacy, { epsilon_lower: 1, epsilon_upper: 1 });
  if (notion === "distp") privacy.delta = 0;
  return {
    format: "rldp.mechanism/3",
    id: "0".repeat(64),
    method: "grr",
    privacy,
    sensitive: { name: "sex", values: ["Female", "Male"] },
    released: [{ name: "item", values: Array.from({ length: m }, (_, i) => `v${i}`) }],
    public_distribution: [[0.5], [0.5]],
    matrix: { form: "grr", size: k, diagonal: 1 - (k - 1) * off, off_diagonal: off },
  };
}

test("the limits are the Python client's", () => {
  assert.equal(rldp.MAX_SYMBOLS, 8192);
  assert.equal(rldp.MAX_DENSE_AUDIT_ENTRIES, 2 ** 24);
});

for (const notion of ["rldp", "ldp", "lip", "alip", "distp", "srlip"]) {
  test(`K = 1,000,000 under ${notion}: a DocumentError naming MAX_SYMBOLS, before any matrix`, () => {
    const text = JSON.stringify(grrDocument(500_000, notion));
    assert.throws(
      () => rldp.Mechanism.fromBytes(new TextEncoder().encode(text), "json"),
      (exc) => exc instanceof rldp.DocumentError && !(exc instanceof RangeError) && /at most 8,192/.test(exc.message),
    );
  });
}
