/** Ids given in full or by a unique prefix, as every `rldp` command and the Python SDK take them (port of
 * `rldp.client.ids`). */
import { ProblemError, ValidationError } from "./errors.js";

/** How many characters of an id the tables print (and a prefix usually needs). */
export const SHORT = 12;
const HEX = /^[0-9a-f]+$/;

/** The full id `given` abbreviates: itself with `length` hex digits, else the one id of `known()` it prefixes
 * (ValidationError when none or several do, or it is not hex). */
export async function resolvePrefix(given: string, known: () => Promise<string[]> | string[], kind: string, length: number, listing: string): Promise<string> {
  const text = String(given).trim().toLowerCase();
  if (!HEX.test(text) || text.length > length) {
    throw new ValidationError(`a ${kind} id is ${length} hexadecimal characters (or a prefix of one); got ${JSON.stringify(given)}`);
  }
  if (text.length === length) return text;
  const matches = (await known()).filter((i) => i.startsWith(text)).sort();
  if (!matches.length) throw new ValidationError(`no ${kind} id starts with ${JSON.stringify(given)} on this server (${listing} lists them)`);
  if (matches.length > 1) {
    const shown = matches.slice(0, 5).map((m) => m.slice(0, SHORT)).join(", ");
    throw new ValidationError(`${JSON.stringify(given)} is the prefix of ${matches.length} ${kind} ids (${shown}); give more characters`);
  }
  return matches[0];
}

/** The mechanism id `given` abbreviates: the one `verified` id it prefixes, else the catalogue's. */
export async function fullMechanismId(given: string, verified: string[], catalogue: () => Promise<string[]>): Promise<string> {
  if (given.length === 64) return given;
  return resolvePrefix(given, () => (verified.length === 1 ? verified : catalogue()), "mechanism", 64, "GET /v1/mechanisms");
}

/** The list under `key` of a listing's answer (ProblemError `not-rldp` when there is none). */
export function listed(answer: Record<string, unknown>, key: string, url: string): Record<string, unknown>[] {
  const items = answer[key];
  if (!Array.isArray(items)) throw new ProblemError(200, { reason: "not-rldp", detail: `${url} answered no list of ${key}: is this an rldp aggregator?` });
  return items as Record<string, unknown>[];
}
