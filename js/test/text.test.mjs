// Issue 35: a document's attribute names and values refuse control, bidi and line-separator characters as the
// Python client does (rldp.shared.parameters.check_text); conformance/cases/text.json binds the verdicts, this
// file the message: it names the attribute and the code point, and quotes the text escaped.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as rldp from "../dist/index.js";

const REFUSED = ["\r", "\n", "\t", "\0", "\x1b", "\x7f", "\x85", "\x9b", "\u061c", "\u200b", "\u200e", "\u200f",
  "\u2028", "\u2029", "\u202a", "\u202e", "\u2066", "\u2069", "\ufeff", "\ud800", "\u{e0001}"];

test("an attribute refuses every unsafe character in its name and values, naming it", () => {
  for (const ch of REFUSED) {
    const hex = ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
    assert.throws(() => new rldp.Attribute("race", ["Black", `Wh${ch}ite`]), (exc) => {
      assert.ok(exc instanceof rldp.AlphabetError, exc.name);
      assert.match(exc.message, new RegExp(`^attribute 'race': value 'Wh\\\\u[0-9a-f]{4,5}ite' contains U\\+${hex}\\b`));
      assert.match(exc.message, / at position 2; control, format, bidi and separator characters are not allowed$/);
      assert.ok(!exc.message.includes(ch));
      return true;
    });
    assert.throws(() => new rldp.Attribute(`ra${ch}ce`, ["a"]), new RegExp(`attribute name 'ra\\\\u[0-9a-f]{4,5}ce' contains U\\+${hex}`));
  }
});

test("joiners, the no-break space and any script are accepted", () => {
  for (const text of ["\u200d", "\u200c", "\xa0", "é", "中文", "👩\u200d💻", "عربي"]) {
    assert.equal(new rldp.Attribute(`n${text}`, [`v${text}`, "w"]).size, 2);
  }
});

test("a document whose alphabet holds one is a DocumentError while reading", () => {
  const doc = {
    format: "rldp.mechanism/1", id: "0".repeat(64), method: "grr", privacy: { notion: "ldp", epsilon: 1 },
    sensitive: { name: "sex", values: ["F", "M"] }, released: [{ name: "c", values: ["a", "b\u2028"] }],
    public_distribution: [[0.25, 0.25], [0.25, 0.25]], matrix: Array.from({ length: 4 }, () => [0.25, 0.25, 0.25, 0.25]),
  };
  assert.throws(() => rldp.fromJson(JSON.stringify(doc)), (exc) => exc instanceof rldp.DocumentError &&
    exc.message.startsWith("sensitive/released: attribute 'c': value 'b\\u2028' contains U+2028 (LINE SEPARATOR) at position 1"));
  doc.released[0].values[1] = "b";
  doc.method = "grr\ud800";
  assert.throws(() => rldp.fromJson(JSON.stringify(doc)), (exc) => exc instanceof rldp.DocumentError && /lone surrogate U\+D800/.test(exc.message));
});
