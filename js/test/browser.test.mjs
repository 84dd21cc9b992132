// The browser build (issue 35): `npm run build:browser` (run by prepublishOnly) bundles the SDK and
// @msgpack/msgpack into one ES module with no bare imports, which loads from a plain
// <script type="module"> without a bundler. Checked here by building it, scanning its imports, and importing
// a copy from a folder with no node_modules (a bare import could not resolve there), which verifies a document.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const BIN = join(ROOT, "node_modules", ".bin");
const DOCS = JSON.parse(readFileSync(new URL("../../conformance/cases/documents-rldp.json", import.meta.url), "utf8")).cases;

test("prepublishOnly builds the browser bundle, which the package exports", () => {
  assert.match(PKG.scripts.prepublishOnly, /build:browser/);
  assert.equal(PKG.exports["./browser"].import, "./dist/rldp.browser.js");
});

test("the browser build is one ES module without bare imports, and it works", { skip: !existsSync(join(BIN, "esbuild")) && "esbuild is not installed" }, async () => {
  execSync(PKG.scripts["build:browser"], { cwd: ROOT, stdio: "pipe", env: { ...process.env, PATH: `${BIN}${delimiter}${process.env.PATH}` } });
  const file = join(ROOT, "dist", "rldp.browser.js");
  const code = readFileSync(file, "utf8");
  const specifiers = [...code.matchAll(/(?:\bimport\s*(?:[\w*{}\s,]+from\s*)?|\bexport\s*[\w*{}\s,]+from\s*|\bimport\s*\()\s*["']([^"']+)["']/g)].map((m) => m[1]);
  const bare = specifiers.filter((s) => !/^(\.{0,2}\/|https?:)/.test(s));
  assert.deepEqual(bare, [], "bare imports a browser cannot resolve");
  assert.ok(!/from\s*["']node:/.test(code) && !/require\(/.test(code), "no Node built-ins in the browser build");
  const alone = join(mkdtempSync(join(tmpdir(), "rldp-browser-")), "rldp.browser.js");
  copyFileSync(file, alone);
  const rldp = await import(pathToFileURL(alone).href);
  const c = DOCS.find((d) => d.name === "rldp/grr/rows/msgpack");
  const mech = rldp.Mechanism.fromBytes(new Uint8Array(Buffer.from(c.document_base64, "base64")), "msgpack");
  assert.equal(mech.id, c.expect.id);
  const body = rldp.makeBatches(mech.id, mech.privatizeIndices([0, 1, 2]), 10, null)[0].body; // msgpack encode, bundled
  assert.ok(body instanceof Uint8Array && body.length > 0);
  assert.equal(new rldp.DocumentError("x").name, "DocumentError");
});
