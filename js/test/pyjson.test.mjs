// The canonical form's number and key rules: Python's repr(float) and code-point key order.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as rldp from "../dist/index.js";

test("floats are written as Python's repr writes them", () => {
  const cases = {
    "1.0": 1, "0.1": 0.1, "0.0001": 1e-4, "0.00015": 1.5e-4, "123456789012345.6": 123456789012345.6,
    "9999999999999998.0": 9999999999999998, "1e+16": 1e16, "1e-05": 1e-5, "2.5e-10": 2.5e-10,
    "0.30000000000000004": 0.30000000000000004, "1e+22": 1e22, "5e-324": 5e-324,
    "1.7976931348623157e+308": 1.7976931348623157e308, "100.0": 100, "-0.0": -0, "-2.5e-07": -2.5e-7,
  };
  for (const [text, x] of Object.entries(cases)) assert.equal(rldp.floatRepr(x), text);
});

test("integers stay integers, keys sort by code point, strings escape as json.dumps(ensure_ascii=False)", () => {
  const v = rldp.parseJson('{"b": 2, "a": 2.0, "\\ud83d\\ude00": "x\\u0001\\n\\"é", "\\uffff": []}');
  assert.equal(rldp.canonicalText(v), '{"a":2.0,"b":2,"\\uffff":[],"😀":"x\\u0001\\n\\"é"}'.replace("\\uffff", "\uffff"));
  assert.throws(() => rldp.parseJson('{"a": NaN}'), rldp.DocumentSyntaxError);
  assert.throws(() => rldp.parseJson('{"a": 1, "a": 2}'), (e) => e instanceof rldp.DocumentError && !(e instanceof rldp.DocumentSyntaxError));
});

test("a string in a message is written as Python's repr writes it: no raw control, bidi or separator character", async () => {
  const { execFileSync } = await import("node:child_process");
  const { join } = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const { pyRepr } = await import("../dist/pyjson.js");
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const python = process.env.RLDP_PYTHON ?? join(root, ".venv", "bin", "python");
  const strings = [
    "plain", "it's", 'say "hi"', `both ' and "`, "back\\slash", "tab\there", "line\nbreak", "cr\rx", "nul\u0000",
    "esc\u001b[31mred", "del\u007f", "c1\u0085\u009f", "nbsp\u00a0", "bidi\u202eevil\u202c", "lrm\u200e", "zwsp\u200b",
    "ls\u2028ps\u2029", "bom\ufeff", "ideographic\u3000space", "private\ue000", "astral 😀", "tag\u{e0041}",
    "lone \ud800 surrogate", "café", "",
  ];
  const script = "import json,sys; print(json.dumps([repr(s) for s in json.loads(sys.stdin.read())]))";
  const expected = JSON.parse(execFileSync(python, ["-c", script], { input: JSON.stringify(strings), encoding: "utf8" }));
  strings.forEach((s, i) => assert.equal(pyRepr(s), expected[i], `repr of ${JSON.stringify(s)}`));
  assert.equal(pyRepr({ "a\nb": 1 }), "{'a\\nb': ...}");
});
