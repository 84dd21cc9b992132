// Every problem type the service answers is raised as the same error class by both SDKs: the table of
// conformance/problems.json, which tests/architecture/test_problems.py checks against the Python service
// (its PROBLEMS and REASONS) and the Python client. Here the TypeScript SDK's transport meets each problem.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as rldp from "../dist/index.js";

const TABLE = JSON.parse(readFileSync(new URL("../../conformance/problems.json", import.meta.url), "utf8")).problems;

/** A fetch that answers every request with the service's problem body for `reason`. */
function answering(reason) {
  const { status } = TABLE[reason];
  const body = { type: `https://rldp.dev/problems/${reason}`, title: reason, status, detail: `the service refused: ${reason}`, reason, reports: 3, min_reports: 10 };
  return async () => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/problem+json" } });
}

test("the table lists the service's problem types", () => {
  assert.ok(Object.keys(TABLE).length >= 40, `${Object.keys(TABLE).length} problem types`);
  assert.ok(TABLE["too-few-reports"] && TABLE["collection-paused"] && TABLE["upload-credential"]);
});

for (const [reason, row] of Object.entries(TABLE)) {
  test(`${reason} (${row.status}) is a ${row.client_error}`, async () => {
    const cls = rldp[row.client_error];
    assert.equal(typeof cls, "function", `the SDK exports no ${row.client_error}`);
    const transport = new rldp.Transport("http://agg.test", { fetch: answering(reason), retries: 0, sleep: () => Promise.resolve() });
    await assert.rejects(transport.request("GET", "/v1/anything"), (e) => {
      assert.equal(e.name, row.client_error, `${reason}: ${e.name}`);
      assert.equal(Object.getPrototypeOf(e), cls.prototype, `${reason}: exactly ${row.client_error}, not a subclass`);
      if (e instanceof rldp.ProblemError) assert.deepEqual([e.reason, e.status], [reason, row.status]);
      return true;
    });
  });
}
