// Estimates (port of rldp.client.estimate): the answer as an object, TooFewReports, parameters checked first.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as rldp from "../dist/index.js";

const MID = "ab".repeat(32);
const ANSWER = {
  n: 400,
  joint: [[0.1, 0.2, 0.05], [0.3, 0.25, 0.1]],
  marginals: { sex: { estimate: [0.35, 0.65] } },
  ci95: { low: [[0.05, 0.15, 0], [0.25, 0.2, 0.05]], high: [[0.15, 0.25, 0.1], [0.35, null, 0.15]], identified: [[true, true, true], [true, false, true]] },
  method: "em",
  rank: 6,
  labels: { sensitive: { name: "sex", values: ["Female", "Male"] }, released: { names: ["colour"], values: ["blue", "green", "red"] } },
  mechanism: MID,
  drift_unavailable: "the claim holds over every distribution",
  from_a_newer_server: { x: 1 },
};
const TOO_FEW = { type: "https://rldp.dev/problems/too-few-reports", status: 409, detail: "40 reports", reason: "too-few-reports", reports: 40, min_reports: 100 };

function scripted(status, body) {
  const seen = [];
  const fetch = async (url, init = {}) => {
    seen.push({ url, auth: init.headers?.Authorization });
    return Response.json(body, { status, headers: { "Content-Type": status >= 400 ? "application/problem+json" : "application/json" } });
  };
  return { fetch, seen };
}

test("an estimate is an object with the answer's members, toDict gives the answer back", async () => {
  const { fetch, seen } = scripted(200, ANSWER);
  const est = await new rldp.Client("http://agg.test", { fetch, token: "t".repeat(20) }).estimate(MID, { method: "em", interval: "delta", window: null });
  assert.deepEqual([est.n, est.method, est.mechanism, est.rank, est.driftUnavailable], [400, "em", MID, 6, "the claim holds over every distribution"]);
  assert.deepEqual(est.extra, { from_a_newer_server: { x: 1 } });
  assert.deepEqual(est.toDict(), ANSWER);
  assert.deepEqual(est.rows()[4], ["Male", "green", 0.25, 0.2, null, false]);
  assert.equal(seen[0].url, `http://agg.test/v1/mechanisms/${MID}/estimate?method=em&interval=delta`);
  assert.equal(seen[0].auth, `Bearer ${"t".repeat(20)}`);
});

test("too few reports is TooFewReports (a ProblemError) with the counts", async () => {
  const { fetch } = scripted(409, TOO_FEW);
  const client = new rldp.Client("http://agg.test", { fetch, token: "t".repeat(20) });
  await assert.rejects(client.collection("usage").estimate(), (e) => e instanceof rldp.TooFewReports && e instanceof rldp.ProblemError && e.reports === 40 && e.minReports === 100 && e.name === "TooFewReports");
});

test("a bad method, no token, or an answer that is not an estimate: typed errors before or after the request", async () => {
  const { fetch, seen } = scripted(200, { n: 1 });
  const client = new rldp.Client("http://agg.test", { fetch, token: "t".repeat(20) });
  await assert.rejects(client.estimate(MID, { method: "magic" }), (e) => e instanceof rldp.ValidationError && /auto, em, inverse/.test(e.message));
  assert.equal(seen.length, 0);
  await assert.rejects(new rldp.Client("http://agg.test", { fetch }).estimate(MID), rldp.ValidationError);
  await assert.rejects(client.estimate(MID), (e) => e instanceof rldp.ProblemError && e.reason === "not-rldp" && /lacks joint/.test(e.message));
});
