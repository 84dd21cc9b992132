/**
 * What an app accepts from a mechanism document (port of `rldp.client.policy`): pinned content
 * ids, an ε ceiling, and floors on the confidence set (`min_radius`; `max_public_n`, turned into
 * the (1 − β)-confidence radius of that many public samples [LZG24, eq 9]).
 */
import { MechanismRejected, ValidationError } from "./errors.js";
import { PILOT_SOURCE } from "./pilot-provenance.js";
import { isObj, type Obj } from "./pyjson.js";
import { RADIUS_RTOL } from "./audit.js";
import { confidenceRadius } from "./uncertainty.js";

const ID = /^[0-9a-f]{64}$/;
const fmt = (v: number) => Number(v.toPrecision(6)).toString();

/** The significance level β of the document's confidence set (Python's `stated_beta`): `privacy.uncertainty.beta`,
 * else a pilot provenance's `beta` (its radius comes from the pilot's counts at that level); null when none. */
function betaOf(doc: Obj): number | null {
  const unc = (doc.privacy as Obj).uncertainty;
  if (isObj(unc) && unc.beta !== undefined && unc.beta !== null) return Number(unc.beta);
  const prov = doc.provenance;
  if (isObj(prov) && prov.source === PILOT_SOURCE && prov.beta !== undefined && prov.beta !== null) return Number(prov.beta);
  return null;
}

export interface PolicyOptions {
  maxEpsilon?: number | null;
  pinned?: Iterable<string> | null;
  minRadius?: number | null;
  maxPublicN?: number | null;
  beta?: number;
  /** Refuse a confidence set at a significance level β above this (default 0.05; null: no rule). */
  maxBeta?: number | null;
}

/** The app's acceptance rules; every rule is optional. */
export class VerificationPolicy {
  readonly maxEpsilon: number | null;
  readonly pinned: ReadonlySet<string> | null;
  readonly minRadius: number | null;
  readonly maxPublicN: number | null;
  readonly beta: number;
  readonly maxBeta: number | null;
  private floors = new Map<string, number>();

  constructor(options: PolicyOptions = {}) {
    const { maxEpsilon = null, pinned = null, minRadius = null, maxPublicN = null, beta = 0.05, maxBeta = 0.05 } = options;
    if (maxBeta !== null && !(maxBeta > 0 && maxBeta < 1)) throw new ValidationError(`maxBeta must be in (0, 1) or null; got ${maxBeta}`);
    this.maxBeta = maxBeta;
    if (maxEpsilon !== null && !(maxEpsilon > 0)) throw new ValidationError(`maxEpsilon must be > 0 (nats); got ${maxEpsilon}`);
    if (minRadius !== null && !(Number.isFinite(minRadius) && minRadius >= 0)) {
      throw new ValidationError(`minRadius must be a finite number ≥ 0 (nats); got ${minRadius}`);
    }
    if (maxPublicN !== null && !(Number.isInteger(maxPublicN) && maxPublicN >= 1)) {
      throw new ValidationError(`maxPublicN must be a positive integer (public samples); got ${maxPublicN}`);
    }
    if (!(beta > 0 && beta < 1)) throw new ValidationError(`beta must be in (0, 1); got ${beta}`);
    if (pinned !== null) {
      if (typeof pinned === "string") throw new ValidationError("pinned must be a collection of mechanism ids (e.g. an array), not one string");
      const ids = new Set(pinned);
      const bad = [...ids].filter((i) => typeof i !== "string" || !ID.test(i));
      if (bad.length) throw new ValidationError(`pinned mechanism ids must be 64 lowercase hex characters (a content id); got ${bad.join(", ")}`);
      if (!ids.size) throw new ValidationError("pinned is empty: it would refuse every mechanism; give at least one id or null");
      this.pinned = ids;
    } else this.pinned = null;
    this.maxEpsilon = maxEpsilon;
    this.minRadius = minRadius;
    this.maxPublicN = maxPublicN;
    this.beta = beta;
  }

  /** This policy with the tighter of its ε ceiling and `maxEpsilon`. */
  withMaxEpsilon(maxEpsilon: number | null | undefined): VerificationPolicy {
    if (maxEpsilon === null || maxEpsilon === undefined) return this;
    const tighter = this.maxEpsilon === null ? maxEpsilon : Math.min(this.maxEpsilon, maxEpsilon);
    return new VerificationPolicy({ maxEpsilon: tighter, pinned: this.pinned, minRadius: this.minRadius, maxPublicN: this.maxPublicN, beta: this.beta, maxBeta: this.maxBeta });
  }

  /** Refuse an id outside the pinned set (before anything is downloaded). */
  checkId(id: string): void {
    if (this.pinned !== null && !this.pinned.has(id)) {
      throw new MechanismRejected(id, `is not pinned; this client accepts only ${[...this.pinned].sort().join(", ")}`, "pinned");
    }
  }

  /** Apply every rule to a validated document; MechanismRejected naming the rule otherwise. */
  check(doc: Obj, label?: string): void {
    const id = String(doc.id);
    const name = label ?? id;
    this.checkId(id);
    const privacy = doc.privacy as Obj;
    const eps = Number(privacy.epsilon);
    if (this.maxEpsilon !== null && eps > this.maxEpsilon) {
      throw new MechanismRejected(name, `claims epsilon ${fmt(eps)}, above the allowed maximum ${fmt(this.maxEpsilon)}`, "max_epsilon");
    }
    const unc = privacy.uncertainty as Obj | undefined;
    const statedBeta = betaOf(doc);
    if (this.maxBeta !== null && statedBeta !== null && statedBeta > this.maxBeta) {
      throw new MechanismRejected(
        name,
        `its confidence set is at significance level beta = ${fmt(statedBeta)}, above max_beta = ${fmt(this.maxBeta)} this app accepts (a larger beta is a smaller set)`,
        "max_beta",
      );
    }
    const floors = this.minRadius !== null || this.maxPublicN !== null;
    if (floors && this.pinned === null && unc && typeof unc === "object" && unc.box !== undefined && unc.box !== null) {
      throw new MechanismRejected(
        name,
        "its confidence set is narrowed by a pilot's box (privacy.uncertainty.box), which min_radius and max_public_n cannot bound; audit it (rldp audit --pilot) and pin its id to accept its box (the radius floors still apply)",
        "confidence_box",
      );
    }
    if (!unc || typeof unc !== "object" || unc.radius === null || unc.radius === undefined) return;
    const radius = Number(unc.radius);
    const order = "order" in unc ? Number(unc.order) : 2;
    if (this.minRadius !== null && radius < this.minRadius) {
      throw new MechanismRejected(name, `its confidence set is smaller than this app accepts: radius ${fmt(radius)} is below min_radius ${fmt(this.minRadius)}`, "min_radius");
    }
    if (this.maxPublicN === null) return;
    if (unc.n !== undefined && unc.n !== null && Number(unc.n) > this.maxPublicN) {
      throw new MechanismRejected(name, `states n = ${unc.n} public samples, more than max_public_n = ${this.maxPublicN} this app accepts (a larger n shrinks the confidence set)`, "max_public_n");
    }
    const symbols = (doc.public_distribution as unknown[][]).reduce((s, row) => s + row.length, 0);
    const key = `${this.maxPublicN}/${this.beta}/${symbols}/${order}`;
    let floor = this.floors.get(key);
    if (floor === undefined) {
      floor = confidenceRadius(this.maxPublicN, this.beta, symbols, order);
      this.floors.set(key, floor);
    }
    if (radius < floor * (1 - RADIUS_RTOL)) {
      throw new MechanismRejected(
        name,
        `its confidence set is smaller than this app accepts: radius ${fmt(radius)} is below ${fmt(floor)}, the ${1 - this.beta}-confidence radius of max_public_n = ${this.maxPublicN} public samples`,
        "max_public_n",
      );
    }
  }
}
