// Issue 34: an upload credential per collection. `uploadToken` is sent (Authorization: Bearer) on report uploads
// only; a 401 upload-credential is a permanent, typed refusal (UploadCredentialRefused) that never echoes a token.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as rldp from "../dist/node.js";

const DOCS = JSON.parse(readFileSync(new URL("../../conformance/cases/documents-rldp.json", import.meta.url), "utf8")).cases;
const GRR = DOCS.find((c) => c.name === "rldp/grr/rows/msgpack");
const RECORDS = [{ sex: "Male", colour: "red" }, { sex: "Female", colour: "blue" }];
const TOKEN = "app-upload-token-0123456789abcdefghijklmnopqrstuv";

function service() {
  const seen = [];
  const fetch = async (url, init = {}) => {
    const path = new URL(url).pathname;
    const authorization = new Headers(init.headers ?? {}).get("Authorization");
    seen.push([init.method, path, authorization]);
    if (init.method === "GET" && path.startsWith("/v1/mechanisms/")) {
      return new Response(Buffer.from(GRR.document_base64, "base64"), { headers: { "Content-Type": "application/msgpack" } });
    }
    if (init.method === "POST" && path === "/v1/reports") {
      if (authorization !== `Bearer ${TOKEN}`) {
        const problem = {
          type: "https://rldp.dev/problems/upload-credential",
          reason: "upload-credential",
          status: 401,
          detail: "collection 'app' requires an upload token: send 'Authorization: Bearer <token>'; none was sent. Nothing was stored",
        };
        return new Response(JSON.stringify(problem), { status: 401, headers: { "WWW-Authenticate": 'Bearer realm="rldp-upload"' } });
      }
      return new Response(JSON.stringify({ accepted: 2, duplicate: false }), { status: 201 });
    }
    return new Response("not found", { status: 404 });
  };
  return { fetch, seen };
}

test("uploadToken goes with report uploads only, and lets them through", async () => {
  const s = service();
  const client = new rldp.Client("http://agg.test", { fetch: s.fetch, uploadToken: TOKEN, token: "admin-token" });
  const r = await client.submit(GRR.expect.id, RECORDS);
  assert.equal(r.accepted, 2);
  const posts = s.seen.filter(([m, p]) => m === "POST" && p === "/v1/reports");
  assert.equal(posts.length, 1);
  assert.equal(posts[0][2], `Bearer ${TOKEN}`);
  for (const [method, path, authorization] of s.seen.filter(([, p]) => p !== "/v1/reports")) {
    assert.equal(authorization, null, `${method} ${path} carried ${authorization}`);
  }
});

test("without the token (or with another) the upload is a permanent UploadCredentialRefused", async () => {
  for (const options of [{}, { uploadToken: "forged" }]) {
    const s = service();
    const client = new rldp.Client("http://agg.test", { fetch: s.fetch, ...options });
    await assert.rejects(client.submit(GRR.expect.id, RECORDS), (e) => {
      assert.ok(e instanceof rldp.UploadCredentialRefused && e instanceof rldp.ProblemError && e instanceof rldp.RldpError);
      assert.equal(e.status, 401);
      assert.equal(e.reason, "upload-credential");
      assert.match(e.message, /uploadToken/);
      assert.ok(!e.message.includes("forged"));
      return true;
    });
    assert.equal(s.seen.filter(([m, p]) => m === "POST" && p === "/v1/reports").length, 1); // not retried
  }
});

test("an empty uploadToken is refused when the client is made", () => {
  assert.throws(() => new rldp.Client("http://agg.test", { uploadToken: "  " }), /uploadToken/);
});
