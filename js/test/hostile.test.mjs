// A server can lie to a client (issue 35): answers that are web pages, redirects to another origin, bodies
// trickled forever or larger than any document the client can accept. Each is met with a typed error, against
// real HTTP servers on 127.0.0.1 (no fake fetch: the platform's fetch follows redirects and streams bodies).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import * as rldp from "../dist/node.js";

const DOCS = JSON.parse(readFileSync(new URL("../../conformance/cases/documents-rldp.json", import.meta.url), "utf8")).cases;
const GRR = DOCS.find((c) => c.name === "rldp/grr/rows/msgpack");
const ID = GRR.expect.id;
const LIMIT = { timeout: 120_000 }; // a hang (the defect) fails the test instead of stalling the suite

/** An HTTP server on 127.0.0.1 answering with `handler`; `requests` lists "METHOD path" of every request. */
async function serve(handler) {
  const requests = [];
  const sockets = new Set();
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => handler(req, res));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}`;
  const close = () => {
    for (const s of sockets) s.destroy();
    return new Promise((r) => server.close(r));
  };
  return { url, requests, close };
}

const quick = { retries: 0, sleep: () => Promise.resolve() };

test("an HTML page answering a POST of reports is a ProblemError (not-rldp), not a SyntaxError", LIMIT, async () => {
  const page = await serve((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end("<html><body>Welcome to nginx!</body></html>");
  });
  try {
    const client = new rldp.Client(page.url, quick);
    await assert.rejects(client.submitReports(ID, [0, 1]), (e) => e instanceof rldp.ProblemError && e.reason === "not-rldp" && /text\/html/.test(e.message));
    await assert.rejects(client.mechanism(ID), (e) => e instanceof rldp.ProblemError && e.reason === "not-rldp");
    await assert.rejects(client.collection("c").info(), (e) => e instanceof rldp.ProblemError && e.reason === "not-rldp");
  } finally {
    await page.close();
  }
});

test("a redirect to another origin is refused for every request, and a POST is never re-sent there", LIMIT, async () => {
  const elsewhere = await serve((req, res) => {
    res.writeHead(201, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ accepted: 2, duplicate: false }));
  });
  const redirecting = await serve((req, res) => {
    res.writeHead(307, { Location: `${elsewhere.url}${req.url}` });
    res.end();
  });
  try {
    const client = new rldp.Client(redirecting.url, quick);
    await assert.rejects(client.submitReports(ID, [0, 1]), (e) => e instanceof rldp.ProblemError && e.reason === "redirect" && e.status === 307);
    await assert.rejects(client.mechanism(ID), (e) => e instanceof rldp.ProblemError && e.reason === "redirect");
    await assert.rejects(client.collection("c").info(), (e) => e instanceof rldp.ProblemError && e.reason === "redirect");
    assert.equal(redirecting.requests.length, 3);
    assert.deepEqual(elsewhere.requests, [], "nothing reached the other origin");
  } finally {
    await Promise.all([redirecting.close(), elsewhere.close()]);
  }
});

test("timeoutMs covers the whole answer: a server that trickles its body is abandoned (ServiceUnavailable)", LIMIT, async () => {
  const timers = new Set();
  const trickle = await serve((req, res) => {
    res.writeHead(200, { "Content-Type": "application/msgpack" });
    const t = setInterval(() => res.write(Buffer.from([0x90])), 50); // a byte now and then, never the end
    timers.add(t);
    res.on("close", () => clearInterval(t));
  });
  try {
    const client = new rldp.Client(trickle.url, { ...quick, timeoutMs: 1500 });
    await assert.rejects(client.mechanism(ID), (e) => e instanceof rldp.ServiceUnavailable && /headers and body/.test(e.message));
  } finally {
    for (const t of timers) clearInterval(t);
    await trickle.close();
  }
});

test("a Content-Length above MAX_RESPONSE_BYTES is refused before the body is read", LIMIT, async () => {
  const big = await serve((req, res) => {
    res.writeHead(200, { "Content-Type": "application/msgpack", "Content-Length": String(rldp.MAX_RESPONSE_BYTES + 1) });
    res.write(Buffer.alloc(1024)); // and then nothing: a client that waits for the body never finishes
  });
  try {
    const client = new rldp.Client(big.url, { ...quick, timeoutMs: 60_000 });
    await assert.rejects(client.mechanism(ID), (e) => e instanceof rldp.ProblemError && e.reason === "response-too-large" && /187,345,580 bytes/.test(e.message));
  } finally {
    await big.close();
  }
});

test("a chunked body beyond the cap is refused while streaming, not after reading it all", LIMIT, async () => {
  const timers = new Set();
  const endless = await serve((req, res) => {
    res.writeHead(200, { "Content-Type": "application/msgpack" }); // no Content-Length: chunked, without end
    const chunk = Buffer.alloc(64 * 1024);
    const t = setInterval(() => res.write(chunk), 5);
    timers.add(t);
    res.on("close", () => clearInterval(t));
  });
  try {
    const client = new rldp.Client(endless.url, { ...quick, timeoutMs: 60_000, maxResponseBytes: 1 << 20 });
    await assert.rejects(client.mechanism(ID), (e) => e instanceof rldp.ProblemError && e.reason === "response-too-large");
  } finally {
    for (const t of timers) clearInterval(t);
    await endless.close();
  }
});

test("the limits are the ones declared once in conformance/limits.json", () => {
  const declared = JSON.parse(readFileSync(new URL("../../conformance/limits.json", import.meta.url), "utf8"));
  assert.equal(rldp.MAX_SYMBOLS, declared.max_symbols);
  assert.equal(rldp.MAX_DENSE_AUDIT_ENTRIES, declared.max_dense_audit_entries);
  assert.equal(rldp.MAX_RESPONSE_BYTES, declared.max_response_bytes);
  assert.equal(declared.max_response_bytes, Math.ceil((32 * declared.max_dense_audit_entries) / 3) + 1024 * declared.max_symbols);
});

test("D26: several records without owners and a state store are refused (OwnersRequired), nothing drawn or sent", async () => {
  const posts = [];
  const fetch = async (url, init = {}) => {
    if (init.method === "POST") {
      posts.push(init.body);
      return new Response(JSON.stringify({ accepted: 1, duplicate: false }), { status: 201 });
    }
    return new Response(Buffer.from(GRR.document_base64, "base64"), { headers: { "Content-Type": "application/msgpack" } });
  };
  const store = new rldp.MemoryStateStore();
  const client = new rldp.Client("http://agg.test", { fetch, store });
  const two = [{ sex: "Male", colour: "red" }, { sex: "Female", colour: "red" }];
  await assert.rejects(client.submit(ID, two), (e) => e instanceof rldp.OwnersRequired && e.name === "OwnersRequired" && /2 records and no owners/.test(e.message));
  assert.deepEqual(posts, []);
  assert.equal(await store.load(), null, "nothing was drawn or stored");
  const r = await client.submit(ID, two, { owners: "me" }); // one person's, said so
  assert.equal(r.accepted, 1);
  const one = await client.submit(ID, [two[0]]); // one record: the device owner's
  assert.equal(one.accepted, 1);
  const stateless = new rldp.Client("http://agg.test", { fetch });
  assert.equal((await stateless.submit(ID, two)).batches, 1); // no store: a fresh draw each, no owners needed
});
