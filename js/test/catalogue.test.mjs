// The catalogue and id prefixes, as the Python client (rldp.client.ids): a unique prefix is the full id.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as rldp from "../dist/index.js";

const DOCS = JSON.parse(readFileSync(new URL("../../conformance/cases/documents-rldp.json", import.meta.url), "utf8")).cases;
const GRR = DOCS.find((c) => c.name === "rldp/grr/rows/msgpack");
const CR = DOCS.find((c) => c.name === "rldp/cr/rows/msgpack");
const BY_ID = new Map([GRR, CR].map((c) => [c.expect.id, Buffer.from(c.document_base64, "base64")]));

// listed only: shares GRR's first 8 characters (an ambiguous prefix)
const TWIN = GRR.expect.id.slice(0, 8) + (GRR.expect.id[8] === "0" ? "1" : "0").repeat(56);

function server() {
  const calls = [];
  const posted = [];
  const fetch = async (url, init = {}) => {
    const path = new URL(url).pathname;
    calls.push(`${init.method} ${path}`);
    if (path === "/v1/mechanisms") return Response.json({ mechanisms: [...BY_ID.keys(), TWIN].map((id) => ({ id, status: "active" })) });
    if (path.startsWith("/v1/mechanisms/")) return new Response(BY_ID.get(decodeURIComponent(path.split("/").pop())), { headers: { "Content-Type": "application/msgpack" } });
    posted.push(init.body);
    return Response.json({ accepted: 1, duplicate: false }, { status: 201 });
  };
  return { fetch, calls, posted };
}

test("the catalogue lists the server's mechanisms; an answer without a list is not-rldp", async () => {
  const { fetch } = server();
  const ids = (await new rldp.Client("http://agg.test", { fetch }).mechanisms()).map((m) => m.id).sort();
  assert.deepEqual(ids, [...BY_ID.keys(), TWIN].sort());
  const odd = new rldp.Client("http://agg.test", { fetch: async () => Response.json({ items: [] }) });
  await assert.rejects(odd.mechanisms(), (e) => e instanceof rldp.ProblemError && e.reason === "not-rldp");
});

test("a unique prefix is the full id; an ambiguous, unknown or non-hex one is a ValidationError", async () => {
  const { fetch, calls } = server();
  const client = new rldp.Client("http://agg.test", { fetch });
  const id = GRR.expect.id;
  const mech = await client.mechanism(id.slice(0, 10).toUpperCase());
  assert.equal(mech.id, id);
  assert.deepEqual(calls, ["GET /v1/mechanisms", `GET /v1/mechanisms/${id}`]);
  assert.equal(await client.mechanism(id.slice(0, 6)), mech, "a verified mechanism's prefix needs no catalogue");
  assert.equal(calls.length, 2);
  await assert.rejects(client.mechanism("zz"), (e) => e instanceof rldp.ValidationError && /hexadecimal/.test(e.message));
  await assert.rejects(new rldp.Client("http://agg.test", { fetch }).mechanism(id.slice(0, 8)), (e) => e instanceof rldp.ValidationError && /prefix of 2/.test(e.message));
  const absent = "0123456789abcdef".split("").find((c) => ![...BY_ID.keys(), TWIN].some((k) => k.startsWith(c)));
  await assert.rejects(client.mechanism(absent), (e) => e instanceof rldp.ValidationError && /no mechanism id starts/.test(e.message));
});

test("submit and submitReports take a prefix and send the full id", async () => {
  const { fetch, posted } = server();
  const client = new rldp.Client("http://agg.test", { fetch });
  await client.submitReports(CR.expect.id.slice(0, 12), [0]);
  await client.submit(GRR.expect.id.slice(0, 12), [{ sex: "Male", colour: "red" }]);
  const { decode } = await import("@msgpack/msgpack");
  assert.deepEqual(posted.map((b) => decode(b).mechanism), [CR.expect.id, GRR.expect.id]);
});
