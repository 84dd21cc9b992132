/** rldp client SDK for browsers and Node: see README.md. */
export * from "./errors.js";
export { MAX_SYMBOLS, MAX_DENSE_AUDIT_ENTRIES, MAX_RESPONSE_BYTES } from "./limits.js";
export { canonicalText, floatRepr, parseJson, type Obj, type Value } from "./pyjson.js";
export { readMsgpack } from "./msgpack-read.js";
export { sha256Hex, base64Encode, base64Decode } from "./bytes.js";
export { fromJson, fromMsgpack, validateDocument, canonicalBody, Window, type ValidDocument, FORMATS } from "./document.js";
export { RANDOMISER_FORMAT, randomiserKey, randomiserText } from "./randomiser.js";
export { normaliseMatrix, type Matrix } from "./forms.js";
export { auditDocument, rldpEpsilon, ldpEpsilon, lipLeakage, robustLipLeakage, type AuditResult } from "./audit.js";
export { hockeyStickThreshold, distpAudit } from "./audit-distp.js";
export { srlipLeakage } from "./audit-srlip.js";
export { UncertaintySet, ballMaximum, confidenceRadius, chi2Quantile } from "./uncertainty.js";
export { VerificationPolicy, type PolicyOptions } from "./policy.js";
export { Alphabet, Attribute, type RecordLike } from "./records.js";
export { NumericSpec, MAX_BINS, toDouble } from "./numeric.js";
export { CryptoRandom, SeededRandom, ReplayRandom, fromUniform, type RandomSource } from "./random.js";
export { AliasTable, ColumnSampler, GrrSampler, samplerFor, thresholds, type Sampler } from "./sampling.js";
export { Mechanism, parseDocument, denseAuditEntries, type VerifyOptions } from "./mechanism.js";
export { makeBatches, checkBatchBody, storedForm, newBatchId, BATCH_ID, type PreparedBatch } from "./batches.js";
export { Client, Collection, PrivacyBudget, DEFAULT_BATCH_SIZE, DEFAULT_BUDGET, type ClientOptions, type Receipt } from "./client.js";
export { Transport, Reply, retryAfterSeconds, type TransportOptions } from "./transport.js";
export { MemoryStateStore, IndexedDBStateStore, emptyState, STATE_FORMAT, upgradeState, type StateStore, type ClientState } from "./state.js";
export { resolvePrefix, fullMechanismId, SHORT } from "./ids.js";
export {
  checkPublicData,
  checkPublicCounts,
  publicCounts,
  canonicalCounts,
  countsSha256,
  ProvenanceCheck,
  COUNTS_FORMAT,
  PUBLIC_DATA_POLICY,
  DEFAULT_BETA,
  type Mismatch,
  type PublicColumns,
} from "./provenance.js";
export { Estimate, estimateQuery, ESTIMATE_METHODS, ESTIMATE_INTERVALS, type EstimateParams } from "./estimate.js";
export { NumericEstimate, NUMERIC_QUANTILES, type NumericFigure } from "./numeric-estimate.js";
