/**
 * A msgpack reader that keeps what the content id depends on: integers as `bigint` (Python's
 * `int`), floats as `number`, bin as `Uint8Array`, maps as null-prototype objects with string
 * keys (Python's `strict_map_key=True`). Writing bodies uses `@msgpack/msgpack`; reading a
 * document needs the int/float distinction that a general decoder drops.
 */
import { DocumentError, DocumentSyntaxError } from "./errors.js";
import { MAX_DEPTH, newObj, type Value } from "./pyjson.js";

/** An extension value (msgpack ext): not storable in a document (refused by validation). */
export class ExtValue {
  constructor(readonly type: number, readonly data: Uint8Array) {}
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

class Truncated extends Error {}

/** Decode one msgpack value filling `data` exactly (DocumentSyntaxError otherwise). */
export function readMsgpack(data: Uint8Array): { value: Value; sawExt: boolean } {
  let sawExt = false;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let pos = 0;
  const need = (k: number) => {
    if (pos + k > data.length) throw new Truncated();
  };
  const bytes = (k: number): Uint8Array => {
    need(k);
    const out = data.subarray(pos, pos + k);
    pos += k;
    return out;
  };
  const str = (k: number): string => {
    const b = bytes(k);
    try {
      return utf8.decode(b);
    } catch {
      throw new DocumentSyntaxError("not a valid msgpack document (UnicodeDecodeError: invalid UTF-8 in a string)", "msgpack");
    }
  };
  const u8 = () => (need(1), data[pos++]);
  const u16 = () => (need(2), (pos += 2), view.getUint16(pos - 2));
  const u32 = () => (need(4), (pos += 4), view.getUint32(pos - 4));
  const value = (depth: number): Value | ExtValue => {
    if (depth > MAX_DEPTH) throw new DocumentError("not a valid document: nested too deeply");
    const t = u8();
    if (t <= 0x7f) return BigInt(t);
    if (t >= 0xe0) return BigInt(t - 0x100);
    if ((t & 0xf0) === 0x80) return map(t & 0x0f, depth);
    if ((t & 0xf0) === 0x90) return array(t & 0x0f, depth);
    if ((t & 0xe0) === 0xa0) return str(t & 0x1f);
    switch (t) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xc4:
        return bytes(u8()).slice();
      case 0xc5:
        return bytes(u16()).slice();
      case 0xc6:
        return bytes(u32()).slice();
      case 0xc7:
        return ext(u8());
      case 0xc8:
        return ext(u16());
      case 0xc9:
        return ext(u32());
      case 0xca:
        need(4);
        pos += 4;
        return view.getFloat32(pos - 4);
      case 0xcb:
        need(8);
        pos += 8;
        return view.getFloat64(pos - 8);
      case 0xcc:
        return BigInt(u8());
      case 0xcd:
        return BigInt(u16());
      case 0xce:
        return BigInt(u32());
      case 0xcf:
        need(8);
        pos += 8;
        return view.getBigUint64(pos - 8);
      case 0xd0:
        need(1);
        return BigInt(view.getInt8(pos++));
      case 0xd1:
        need(2);
        pos += 2;
        return BigInt(view.getInt16(pos - 2));
      case 0xd2:
        need(4);
        pos += 4;
        return BigInt(view.getInt32(pos - 4));
      case 0xd3:
        need(8);
        pos += 8;
        return view.getBigInt64(pos - 8);
      case 0xd4:
        return ext(1);
      case 0xd5:
        return ext(2);
      case 0xd6:
        return ext(4);
      case 0xd7:
        return ext(8);
      case 0xd8:
        return ext(16);
      case 0xd9:
        return str(u8());
      case 0xda:
        return str(u16());
      case 0xdb:
        return str(u32());
      case 0xdc:
        return array(u16(), depth);
      case 0xdd:
        return array(u32(), depth);
      case 0xde:
        return map(u16(), depth);
      case 0xdf:
        return map(u32(), depth);
      default:
        throw new DocumentSyntaxError(`not a valid msgpack document (FormatError: unused byte 0x${t.toString(16)})`, "msgpack");
    }
  };
  const ext = (k: number): ExtValue => {
    need(1);
    const type = view.getInt8(pos++);
    sawExt = true;
    return new ExtValue(type, bytes(k).slice());
  };
  const array = (k: number, depth: number): Value[] => {
    if (k > data.length - pos) throw new Truncated(); // every item takes at least one byte
    const out: Value[] = new Array(k);
    for (let j = 0; j < k; j++) out[j] = value(depth + 1) as Value;
    return out;
  };
  const map = (k: number, depth: number): Value => {
    if (2 * k > data.length - pos) throw new Truncated();
    const out = newObj();
    for (let j = 0; j < k; j++) {
      const key = value(depth + 1);
      if (key instanceof Uint8Array) {
        throw new DocumentError("document: a map key is binary, not a string");
      }
      if (typeof key !== "string") {
        throw new DocumentSyntaxError(
          "not a valid msgpack document (ValueError: a map key is not a string (strict_map_key))",
          "msgpack",
        );
      }
      out[key] = value(depth + 1) as Value;
    }
    return out;
  };
  let result: Value | ExtValue;
  try {
    result = value(0);
  } catch (exc) {
    if (exc instanceof Truncated) {
      throw new DocumentSyntaxError("not a valid msgpack document (ValueError: Unpack failed: incomplete input)", "msgpack");
    }
    throw exc;
  }
  if (pos !== data.length) {
    throw new DocumentSyntaxError("not a valid msgpack document (ExtraData: unpack(b) received extra data.)", "msgpack");
  }
  return { value: result as Value, sawExt };
}
