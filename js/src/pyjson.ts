/**
 * JSON as the Python client reads and hashes it.
 *
 * The content id hashes Python's `json.dumps(sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False)` of the document, which tells an integer (`2`) from a float (`2.0`). A
 * JavaScript number cannot, so documents are parsed into a tree whose integers are `bigint`
 * (exactly Python's `int`), floats `number`, binary arrays (msgpack bin) `Uint8Array`, and
 * objects null-prototype records. {@link canonicalText} writes such a tree as Python does
 * (float repr, code-point key order).
 */
import { DocumentError, DocumentSyntaxError } from "./errors.js";

/** A value of a parsed document. */
export type Value = null | boolean | bigint | number | string | Uint8Array | Value[] | Obj;
/** An object of a parsed document (null prototype: any key is data). */
export type Obj = { [key: string]: Value };

export const MAX_DEPTH = 900;

export function newObj(): Obj {
  return Object.create(null) as Obj;
}

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** Is `v` a number of the document (int or float, not a boolean)? */
export function isNumber(v: unknown): v is number | bigint {
  return typeof v === "number" || typeof v === "bigint";
}

/** Python's `repr(float)`: shortest round-trip digits, exponent form outside 1e-4 ≤ |x| < 1e16. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const ax = Math.abs(x);
  if (ax >= 1e-4 && ax < 1e16) {
    // Both languages write shortest round-trip digits in fixed notation here; Python adds ".0" to integers.
    const text = String(x);
    return text.includes(".") ? text : `${text}.0`;
  }
  const sign = x < 0 ? "-" : "";
  const [mant, expText] = Math.abs(x).toExponential().split("e");
  const digits = mant.replace(".", "");
  const e = Number(expText);
  if (e >= -4 && e < 16) {
    if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${digits}`;
    if (digits.length <= e + 1) return `${sign}${digits}${"0".repeat(e + 1 - digits.length)}.0`;
    return `${sign}${digits.slice(0, e + 1)}.${digits.slice(e + 1)}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const ee = Math.abs(e) < 10 ? `0${Math.abs(e)}` : `${Math.abs(e)}`;
  return `${sign}${m}e${e < 0 ? "-" : "+"}${ee}`;
}

/** Compare two strings by code point (Python's str order), not by UTF-16 unit. */
export function codePointCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) {
      const sa = ca >= 0xd800 && ca <= 0xdfff;
      const sb = cb >= 0xd800 && cb <= 0xdfff;
      if (sa !== sb) return sa ? 1 : -1; // a surrogate (astral) sorts after every BMP code point above it
      return ca - cb;
    }
  }
  return a.length - b.length;
}

const LONE_SURROGATE = /\p{Cs}/u;

function stringText(s: string): string {
  // A lone surrogate (an escaped JSON string can hold one) has no UTF-8 form: Python cannot encode the text
  // it hashes, and JSON.stringify would write an escape Python does not; refused as Python refuses it.
  const lone = LONE_SURROGATE.exec(s);
  if (lone !== null) {
    const cp = lone[0].charCodeAt(0).toString(16).toUpperCase();
    throw new DocumentError(`document holds a lone surrogate U+${cp}; text must be valid Unicode (UTF-8)`);
  }
  return JSON.stringify(s); // the same escapes as Python's json.dumps(ensure_ascii=False) for well-formed text
}

/** Python's canonical `json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)`. */
export function canonicalText(v: Value): string {
  const out: string[] = [];
  write(v, out);
  return out.join("");
}

function write(v: Value, out: string[]): void {
  if (v === null) out.push("null");
  else if (v === true) out.push("true");
  else if (v === false) out.push("false");
  else if (typeof v === "bigint") out.push(v.toString());
  else if (typeof v === "number") {
    if (!Number.isFinite(v)) {
      throw new DocumentError(
        "document contains a non-finite number (Out of range float values are not JSON compliant); use null for an unbounded radius",
      );
    }
    out.push(floatRepr(v));
  } else if (typeof v === "string") out.push(stringText(v));
  else if (v instanceof Uint8Array) throw new DocumentError("a binary value cannot be written as JSON");
  else if (Array.isArray(v)) {
    out.push("[");
    for (let i = 0; i < v.length; i++) {
      if (i) out.push(",");
      write(v[i], out);
    }
    out.push("]");
  } else {
    const keys = Object.keys(v).sort(codePointCompare);
    out.push("{");
    keys.forEach((k, i) => {
      if (i) out.push(",");
      out.push(stringText(k), ":");
      write(v[k], out);
    });
    out.push("}");
  }
}

// --------------------------------------------------------------------------- parsing

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;

/** Parse JSON text as Python's `json.loads` does (integers → bigint; NaN/Infinity refused; duplicate keys refused). */
export function parseJson(text: string): Value {
  let i = 0;
  const n = text.length;
  const fail = (msg: string, at = i): never => {
    let line = 1;
    let col = 1;
    for (let k = 0; k < at && k < n; k++) {
      if (text.charCodeAt(k) === 10) {
        line++;
        col = 1;
      } else col++;
    }
    throw new DocumentSyntaxError(`not valid JSON: ${msg} at line ${line} column ${col}`, "json");
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const parseString = (): string => {
    const start = i; // at the opening quote
    i++;
    let out = "";
    let run = i;
    for (;;) {
      if (i >= n) fail("Unterminated string starting", start);
      const c = text.charCodeAt(i);
      if (c === 34) {
        out += text.slice(run, i);
        i++;
        return out;
      }
      if (c < 0x20) fail("Invalid control character", i);
      if (c === 92) {
        out += text.slice(run, i);
        const e = text[i + 1];
        const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
        if (e !== undefined && e in simple) {
          out += simple[e];
          i += 2;
        } else if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("Invalid \\uXXXX escape", i + 1);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else fail("Invalid \\escape", i);
        run = i;
        continue;
      }
      i++;
    }
  };
  const parseValue = (depth: number): Value => {
    if (depth > MAX_DEPTH) throw new DocumentError("not a valid document: nested too deeply");
    ws();
    if (i >= n) fail("Expecting value");
    const c = text[i];
    if (c === "{") {
      i++;
      const obj = newObj();
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("Expecting property name enclosed in double quotes");
        const key = parseString();
        ws();
        if (text[i] !== ":") fail("Expecting ':' delimiter");
        i++;
        const value = parseValue(depth + 1);
        if (Object.prototype.hasOwnProperty.call(obj, key)) {
          throw new DocumentError(`not a valid document: key ${pyRepr(key)} appears twice in one object`);
        }
        obj[key] = value;
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (c === "[") {
      i++;
      const arr: Value[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(parseValue(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        fail("Expecting ',' delimiter");
      }
    }
    if (c === '"') return parseString();
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    for (const name of ["NaN", "Infinity", "-Infinity"]) {
      if (text.startsWith(name, i)) {
        throw new DocumentSyntaxError(
          `not valid JSON: ${name} is not allowed (not a JSON number; use null for an unbounded radius)`,
          "json",
        );
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail("Expecting value");
    i = NUMBER.lastIndex;
    if (m[1] === undefined && m[2] === undefined) return BigInt(m[0]);
    return Number(m[0]);
  };
  const value = parseValue(0);
  ws();
  if (i < n) fail("Extra data");
  return value;
}

/** A short Python-like repr of a value for messages. */
// What Python's str.isprintable() calls not printable: control, format, surrogate, private-use and unassigned
// code points and every separator but the ASCII space. repr() writes each as an escape, so a message can carry
// no raw control, bidi or line-separator character into a terminal or a log line.
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/gu;

function escapeCodePoint(ch: string): string {
  if (ch === " ") return ch;
  if (ch === "\t") return "\\t";
  if (ch === "\n") return "\\n";
  if (ch === "\r") return "\\r";
  const cp = ch.codePointAt(0) ?? 0;
  const hex = cp.toString(16);
  if (cp < 0x100) return `\\x${hex.padStart(2, "0")}`;
  if (cp < 0x10000) return `\\u${hex.padStart(4, "0")}`;
  return `\\U${hex.padStart(8, "0")}`;
}

/** Python's `repr(str)`: its quote choice and its escapes (backslash, the quote, non-printable code points). */
export function stringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let body = s.replace(/\\/g, "\\\\").replace(NOT_PRINTABLE, escapeCodePoint);
  if (quote === "'") body = body.replace(/'/g, "\\'");
  return `${quote}${body}${quote}`;
}

export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return Number.isFinite(v) ? floatRepr(v) : v > 0 ? "inf" : v < 0 ? "-inf" : "nan";
  if (typeof v === "string") return stringRepr(v);
  if (v instanceof Uint8Array) return `b'...' (${v.length} bytes)`;
  if (Array.isArray(v)) return `[${v.slice(0, 8).map(pyRepr).join(", ")}${v.length > 8 ? ", ..." : ""}]`;
  if (typeof v === "object") return `{${Object.keys(v as object).slice(0, 6).map((k) => `${stringRepr(k)}: ...`).join(", ")}}`;
  return String(v);
}

/** The name of a value's type as Python would name it (messages only). */
export function typeName(v: unknown): string {
  if (v === null || v === undefined) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "float";
  if (typeof v === "string") return "str";
  if (v instanceof Uint8Array) return "bytes";
  if (Array.isArray(v)) return "list";
  return "dict";
}
