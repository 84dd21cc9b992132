// Only typed errors leave the SDK, and their names survive minification (issue 35): every error class sets
// `name` to a string literal, checked here on a build bundled and minified by esbuild (renamed classes).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { execFileSync } from "node:child_process";
import * as rldp from "../dist/index.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ESBUILD = join(ROOT, "node_modules", ".bin", "esbuild");
const ARGS = { ProblemError: [400, {}], TooFewReports: [409, {}], UploadCredentialRefused: [401, {}], ServiceUnavailable: ["x"], StateFileError: ["p", "x"], PrivacyBudgetExceeded: [1, null, 1, 1, ""] };

function errorClasses(mod) {
  return Object.entries(mod).filter(([, v]) => typeof v === "function" && (v === mod.RldpError || v.prototype instanceof mod.RldpError));
}

function instance(cls, key) {
  const args = ARGS[key] ?? (key === "MechanismRejected" ? ["id", "x", "audit"] : key === "IdMismatch" ? ["x", "a", "b"] : key === "DocumentSyntaxError" ? ["x", "json"] : ["x"]);
  return new cls(...args);
}

test("every error class sets its name as an own string property", () => {
  const classes = errorClasses(rldp);
  assert.ok(classes.length >= 25, `${classes.length} error classes`);
  for (const [key, cls] of classes) {
    const err = instance(cls, key);
    assert.ok(Object.prototype.hasOwnProperty.call(err, "name"), key);
    assert.equal(err.name, key);
  }
});

test("error names survive esbuild --minify", { skip: !existsSync(ESBUILD) && "esbuild is not installed" }, async () => {
  const out = join(mkdtempSync(join(tmpdir(), "rldp-min-")), "rldp.min.mjs");
  execFileSync(ESBUILD, [join(ROOT, "dist", "index.js"), "--bundle", "--minify", "--format=esm", "--platform=browser", `--outfile=${out}`], { stdio: "pipe" });
  const minified = await import(pathToFileURL(out).href);
  const classes = errorClasses(minified);
  assert.ok(classes.length >= 25);
  assert.ok(classes.some(([key, cls]) => cls.name !== key), "the minifier renamed no class: this test checks nothing");
  for (const [key, cls] of classes) assert.equal(instance(cls, key).name, key, `${key} after minification`);
});
