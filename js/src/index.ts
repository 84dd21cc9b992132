/** rldp client SDK for browsers and Node: see README.md. */
export * from "./errors.js";
export { canonicalText, floatRepr, parseJson, type Obj, type Value } from "./pyjson.js";
export { readMsgpack } from "./msgpack-read.js";
export { sha256Hex, base64Encode, base64Decode } from "./bytes.js";
export { fromJson, fromMsgpack, validateDocument, canonicalBody, Window, type ValidDocument, FORMATS } from "./document.js";
export { normaliseMatrix, type Matrix } from "./forms.js";
export { auditDocument, rldpEpsilon, ldpEpsilon, lipLeakage, robustLipLeakage, type AuditResult } from "./audit.js";
export { hockeyStickThreshold, distpAudit, srlipLeakage } from "./audit-more.js";
export { UncertaintySet, ballMaximum, confidenceRadius, chi2Quantile } from "./uncertainty.js";
export { VerificationPolicy, type PolicyOptions } from "./policy.js";
export { Alphabet, Attribute, type RecordLike } from "./records.js";
export { CryptoRandom, SeededRandom, ReplayRandom, fromUniform, type RandomSource } from "./random.js";
export { AliasTable, ColumnSampler, GrrSampler, samplerFor, thresholds, type Sampler } from "./sampling.js";
export { Mechanism, parseDocument, type VerifyOptions } from "./mechanism.js";
export { makeBatches, checkBatchBody, storedForm, newBatchId, BATCH_ID, type PreparedBatch } from "./batches.js";
export { Client, Collection, PrivacyBudget, DEFAULT_BATCH_SIZE, DEFAULT_BUDGET, type ClientOptions, type Receipt } from "./client.js";
export { Transport, retryAfterSeconds, type TransportOptions } from "./transport.js";
export { MemoryStateStore, IndexedDBStateStore, emptyState, type StateStore, type ClientState } from "./state.js";
