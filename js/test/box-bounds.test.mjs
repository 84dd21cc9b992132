// A pilot's F = ball ∩ box (box-bounds.ts, UncertaintySet's box) against Python's numbers, where the
// conformance suite (conformance/cases/pilot.json) does not reach: the set's API on its own (extremes
// both ways, the cell ranges, the fallback of a row where box and ball contradict, the marginal set of a
// loose box), numpy's sums and Python's ".12g" that the messages print.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as rldp from "../dist/index.js";
import { checkBox, formatG, npSum } from "../dist/box-bounds.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PYTHON = process.env.RLDP_PYTHON ?? join(ROOT, ".venv", "bin", "python");

const P = [
  [0.05, 0.15, 0.3],
  [0.04, 0.16, 0.3],
];
// Row 0: a box that holds P̂'s conditional; row 1: one that excludes it (R_0 ≥ 0.5 where P̂ has 0.08):
// there the ball's range is kept (the contradiction happens only off the confidence event).
const BOXES = {
  holds: [
    [
      [0.03, 0.1, 0.25],
      [0.02, 0.12, 0.25],
    ],
    [
      [0.08, 0.2, 0.35],
      [0.06, 0.2, 0.35],
    ],
  ],
  contradicts: [
    [
      [0.03, 0.1, 0.25],
      [0.26, 0.0, 0.0],
    ],
    [
      [0.08, 0.2, 0.35],
      [0.3, 0.2, 0.2],
    ],
  ],
  loose: [
    [
      [0.0, 0.05, 0.1],
      [0.0, 0.05, 0.1],
    ],
    [
      [0.3, 0.5, 0.6],
      [0.2, 0.3, 0.5],
    ],
  ],
};
const QS = [
  [0.6, 0.3, 0.1],
  [0.1, 0.7, 0.2],
  [0.25, 0.25, 0.5],
  [1, 0, 0],
];
const RADIUS = 0.02;

const SCRIPT = `
import json, sys
import numpy as np
from rldp.shared.uncertainty import UncertaintySet
args = json.loads(sys.stdin.read())
out = {"sets": {}, "sums": [float(np.array(v, dtype=np.float64).sum()) for v in args["vectors"]],
       "formats": [format(x, ".12g") for x in args["floats"]]}
for name, (lower, upper) in args["boxes"].items():
    u = UncertaintySet(np.array(args["p"]), args["radius"], 2.0, (np.array(lower), np.array(upper)))
    q = np.array(args["qs"], dtype=np.float64)
    vectors = np.broadcast_to(q[:, None, :], (len(q), 2, 3))
    hi, lo = u.extremes(vectors)
    m = u.marginal_set()
    mhi, mlo = m.extremes(np.array([[[0.7, 0.3]], [[0.2, 0.9]]]))
    out["sets"][name] = {"hi": hi.tolist(), "lo": lo.tolist(), "lower": u.lower_bounds().tolist(), "upper": u.upper_bounds().tolist(),
                         "marginal_box": [m.box[0].tolist(), m.box[1].tolist()], "marginal_hi": mhi.ravel().tolist(), "marginal_lo": mlo.ravel().tolist()}
print(json.dumps(out))
`;

const vectors = [];
let seed = 7;
const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
for (const n of [1, 5, 7, 8, 9, 16, 17, 100, 128, 129, 300, 1000]) vectors.push(Array.from({ length: n }, () => next() * 10 ** (-5 * next())));
const floats = [1, 0.9, 0.42, 1.000244140625, 1.0000000000005, 1.2345678901235e-7, 123456789012.5, 1234567890123456, 2.5e-5, 0.1 + 0.2, 1 - 1e-10, 1 + 2e-9, 9.999999999995, 5e-324];
const args = { p: P, radius: RADIUS, boxes: BOXES, qs: QS, vectors, floats };
const PY = JSON.parse(execFileSync(PYTHON, ["-c", SCRIPT], { input: JSON.stringify(args), encoding: "utf8" }));

const close = (a, b, where) => assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(b), 1e-300), `${where}: ${a} vs ${b}`);

test("npSum gives numpy's sum bit for bit (pairwise, 8 accumulators a block)", () => {
  vectors.forEach((v, i) => assert.equal(npSum(Float64Array.from(v)), PY.sums[i], `length ${v.length}`));
});

test("formatG writes Python's '.12g' (ties to even on the exact value, exponent form, trailing zeros cut)", () => {
  floats.forEach((x, i) => assert.equal(formatG(x), PY.formats[i], String(x)));
});

for (const name of Object.keys(BOXES)) {
  test(`a ${name} box: extremes, cell ranges and the marginal set are Python's (1e-12 relative)`, () => {
    const [lower, upper] = BOXES[name];
    const uset = new rldp.UncertaintySet({ rows: 2, cols: 3, data: Float64Array.from(P.flat()) }, RADIUS, 2, [lower, upper]);
    const py = PY.sets[name];
    QS.forEach((q, i) => {
      for (let s = 0; s < 2; s++) {
        const [hi, lo] = uset.extremes(q, s);
        close(hi, py.hi[i][s], `${name} max q${i}·R, s=${s}`);
        close(lo, py.lo[i][s], `${name} min q${i}·R, s=${s}`);
      }
    });
    const [lo, hi] = uset.cellRange();
    py.lower.flat().forEach((v, i) => close(lo[i], v, `${name} lower bound ${i}`));
    py.upper.flat().forEach((v, i) => close(hi[i], v, `${name} upper bound ${i}`));
    const marginal = uset.marginalSet();
    assert.deepEqual([Array.from(marginal.box[0]), Array.from(marginal.box[1])], [py.marginal_box[0][0], py.marginal_box[1][0]]);
    [[0.7, 0.3], [0.2, 0.9]].forEach((c, i) => {
      const [mhi, mlo] = marginal.extremes(c, 0);
      close(mhi, py.marginal_hi[i], `${name} marginal max ${i}`);
      close(mlo, py.marginal_lo[i], `${name} marginal min ${i}`);
    });
  });
}

test("the box narrows F: every extreme lies within the ball's alone", () => {
  const p = { rows: 2, cols: 3, data: Float64Array.from(P.flat()) };
  const ball = new rldp.UncertaintySet(p, RADIUS, 2);
  const both = new rldp.UncertaintySet(p, RADIUS, 2, BOXES.holds);
  for (const q of QS) {
    for (let s = 0; s < 2; s++) {
      const [bh, bl] = ball.extremes(q, s);
      const [h, l] = both.extremes(q, s);
      assert.ok(h <= bh && l >= bl && l <= h, `${q} s=${s}`);
    }
  }
});

test("a box the set is given is checked: ValidationError with Python's message, before anything of its size", () => {
  const p = { rows: 2, cols: 3, data: Float64Array.from(P.flat()) };
  assert.throws(() => new rldp.UncertaintySet(p, RADIUS, 2, [[[0.1, 0.2]], BOXES.holds[1]]), {
    name: "ValidationError",
    message: "box.lower has shape (1, 2); expected 2×3 (|S| × |U|)",
  });
  assert.throws(() => checkBox(BOXES.holds[0], [[0.04, 0.11, 0.26], [0.03, 0.13, 0.26]], [2, 3]), {
    message: "box must meet the simplex: Σ lower ≤ 1 ≤ Σ upper (±1e-9); got Σ lower = 0.77, Σ upper = 0.83",
  });
  // Float64Array sides (the marginal set's) are taken as they are, of the right length only.
  assert.throws(() => checkBox(new Float64Array(5), new Float64Array(6).fill(0.5), [2, 3]), { name: "ValidationError" });
  const [lo, up] = checkBox(new Float64Array(6), new Float64Array(6).fill(0.5), [2, 3]);
  assert.deepEqual([lo.length, up[5]], [6, 0.5]);
});
