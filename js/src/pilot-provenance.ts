/**
 * The provenance of a document designed over a private pilot's confidence set, checked for form (port of
 * `rldp.shared.pilot.validate_pilot_provenance`, with Python's messages). Recomputing P̂, the radius and the
 * box from the pilot's counts needs the pilot's matrix: `rldp audit --pilot` does that, not the SDK.
 */
import { DocumentError } from "./errors.js";
import { isNumber, pyRepr, type Obj, type Value } from "./pyjson.js";

/** `provenance.source` of a document whose P̂ came from a pilot. */
export const PILOT_SOURCE = "pilot";
/** The construction this version states, and the earlier ones it still recomputes. */
export const CONSTRUCTION = "empirical-bernstein-box/v5";
const CONSTRUCTIONS = [CONSTRUCTION, "empirical-bernstein-box/v4", "empirical-bernstein-box/v3", "empirical-bernstein-box/v2"];

/** Python's `describe`: a value's repr, cut to 60 characters. */
function describe(value: Value | undefined): string {
  const text = pyRepr(value);
  const points = [...text];
  return points.length <= 60 ? text : `${points.slice(0, 57).join("")}...`;
}

/** A number in Python's sense (an int or a float, never a boolean) as a float. */
function real(value: Value | undefined): number | null {
  return isNumber(value) ? Number(value) : null;
}

/** Check a pilot provenance's form (DocumentError naming the field otherwise). */
export function validatePilotProvenance(value: Obj): void {
  for (const key of ["construction", "pilot_mechanism", "counts", "n", "beta", "columns"]) {
    if (!(key in value)) throw new DocumentError(`a pilot provenance needs '${key}'`);
  }
  const construction = value.construction;
  if (typeof construction !== "string" || !CONSTRUCTIONS.includes(construction)) {
    throw new DocumentError(`provenance.construction ${pyRepr(construction)} is not one this version recomputes ('${CONSTRUCTION}')`);
  }
  if ("contamination" in value) {
    const c = real(value.contamination);
    if (c === null || !(c >= 0 && c < 0.5)) {
      throw new DocumentError(`provenance.contamination must be a number in [0, 0.5); got ${pyRepr(value.contamination)}`);
    }
  }
  const id = value.pilot_mechanism;
  if (typeof id !== "string" || [...id].length !== 64) {
    throw new DocumentError("provenance.pilot_mechanism must be the pilot's content id (64 hex characters)");
  }
  const counts = value.counts;
  if (!Array.isArray(counts) || !counts.length || !counts.every((c) => typeof c === "bigint" && c >= 0n)) {
    throw new DocumentError("provenance.counts must be a non-empty list of whole numbers ≥ 0 (one per pilot output)");
  }
  const total = (counts as bigint[]).reduce((s, c) => s + c, 0n);
  const n = value.n;
  // Python's `n != sum(counts)`: an int or a float equal to the sum (a boolean is 0 or 1), nothing else.
  const equal = typeof n === "bigint" ? n === total : typeof n === "number" || typeof n === "boolean" ? Number(n) === Number(total) && BigInt(Number(n)) === total : false;
  if (!equal) throw new DocumentError(`provenance.n is ${pyRepr(n)} but the pilot counts sum to ${total}`);
  const beta = real(value.beta);
  if (beta === null || Number.isNaN(beta) || !(beta > 0 && beta < 1)) {
    throw new DocumentError(`provenance.beta must be a significance level in (0, 1); got ${describe(value.beta)}`);
  }
  const columns = value.columns;
  if (!Array.isArray(columns) || !columns.length || !columns.every((c) => typeof c === "string" && c)) {
    throw new DocumentError("provenance.columns must be a non-empty list of column names");
  }
  const collection = value.collection;
  if (collection !== undefined && collection !== null && typeof collection !== "string") {
    throw new DocumentError("provenance.collection must be a collection name or null");
  }
}
