// Issue 35: a document's attribute names and values refuse control, bidi and line-separator characters as the
// Python client does (rldp.shared.parameters.check_text); conformance/cases/text.json binds the verdicts, this
// file the message: it names the attribute and the code point, and quotes the text escaped.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as rldp from "../dist/index.js";

const REFUSED = ["\r", "\n", "\t", "\0", "\x1b", "\x7f", "\x85", "\x9b", "\u061c", "\u200b", "\u200e", "\u200f",
  "\u2028", "\u2029", "\u202a", "\u202e", "\u2066", "\u2069", "\ufeff", "\ud800", "\u{e0001}"];

const PYTHON = process.env.RLDP_PYTHON ?? join(fileURLToPath(new URL("../..", import.meta.url)), ".venv", "bin", "python");

// Python's own messages for the same attributes: the TS message must be the same text, character for character
// (the text is quoted as Python's repr quotes it, so no refused character reaches a terminal or a log raw).
function pythonMessages(names, values) {
  const script = `
import json, sys
from rldp.shared.attributes import Attribute
out = []
for name, values in json.loads(sys.stdin.read()):
    try:
        Attribute(name, values)
        out.append(None)
    except Exception as exc:
        out.append(str(exc))
print(json.dumps(out))`;
  const cases = names.map((n, i) => [n, values[i]]);
  return JSON.parse(execFileSync(PYTHON, ["-c", script], { input: JSON.stringify(cases), encoding: "utf8" }));
}

test("an attribute refuses every unsafe character in its name and values, with Python's message", () => {
  const names = [...REFUSED.map(() => "race"), ...REFUSED.map((ch) => `ra${ch}ce`)];
  const values = [...REFUSED.map((ch) => ["Black", `Wh${ch}ite`]), ...REFUSED.map(() => ["a"])];
  const expected = pythonMessages(names, values);
  names.forEach((name, i) => {
    const ch = REFUSED[i % REFUSED.length];
    assert.throws(() => new rldp.Attribute(name, values[i]), (exc) => {
      assert.ok(exc instanceof rldp.AlphabetError, exc.name);
      assert.equal(exc.message, expected[i]);
      assert.ok(!exc.message.includes(ch), `the message quotes ${JSON.stringify(ch)} raw`);
      return true;
    });
  });
});

test("both clients refuse exactly the same characters, and name each alike, whatever the runtime's Unicode", async () => {
  const { characterName, unsafeCharacter } = await import("../dist/text.js");
  const refused = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) if (unsafeCharacter(String.fromCodePoint(cp))) refused.push(cp);
  const script = `
import json
from rldp.shared.parameters import character_name, unsafe_character
print(json.dumps({cp: character_name(chr(cp)) for cp in range(0x110000) if unsafe_character(chr(cp))}))`;
  const expected = JSON.parse(execFileSync(PYTHON, ["-c", script], { encoding: "utf8", maxBuffer: 1 << 24 }));
  assert.deepEqual(refused, Object.keys(expected).map(Number));
  for (const [cp, name] of Object.entries(expected)) assert.equal(characterName(String.fromCodePoint(Number(cp))), name);
  // A format character assigned after Unicode 14.0 (node knows it; the frozen table does not) is accepted by both.
  assert.equal(unsafeCharacter(String.fromCodePoint(0x13439)), false);
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
