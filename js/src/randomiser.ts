/**
 * The randomiser key (port of `rldp.shared.document.randomiser`): one id for everything that fixes the
 * distribution of a memoised Y given a record — Q as the content id hashes it, the per-report layer's R
 * (entries floats; `null` without one) and the input alphabet as the document writes it (`sensitive`,
 * `released`). The memo is keyed by it, not by the document id: a collection's rotation that re-publishes
 * the same design under a new id re-sends the memoised Y, while a Y is never reused under another Q.
 * Its canonical form is the UTF-8 of
 * `{"format":"rldp.randomiser/1","matrix":…,"per_report":…,"released":…,"sensitive":…}` written like the
 * content id's; the key is its sha256 (conformance/cases/randomiser.json checks both SDKs agree).
 */
import { sha256Hex, utf8Encode } from "./bytes.js";
import { floats, type ValidDocument } from "./document.js";
import { canonicalText, isObj, newObj, type Obj } from "./pyjson.js";

export const RANDOMISER_FORMAT = "rldp.randomiser/1";

/** The canonical text the randomiser key hashes, of a validated document. */
export function randomiserText(valid: ValidDocument): string {
  const doc = valid.doc;
  const body: Obj = newObj();
  body.format = RANDOMISER_FORMAT;
  body.matrix = doc.matrix;
  body.sensitive = doc.sensitive;
  body.released = doc.released;
  const collection = doc.collection;
  const layer = isObj(collection) ? collection.per_report : undefined;
  body.per_report = isObj(layer) ? floats(layer.matrix) : null;
  return canonicalText(body);
}

/** sha256 hex of {@link randomiserText}: the memo's key for the document's draws. */
export function randomiserKey(valid: ValidDocument): string {
  return sha256Hex(utf8Encode(randomiserText(valid)));
}
