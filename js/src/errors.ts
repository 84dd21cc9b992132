/**
 * The errors of the SDK: one root ({@link RldpError}) and one subclass per kind of refusal,
 * mirroring `rldp.shared.errors` and `rldp.client.errors` of the Python client (same class
 * names, same hierarchy), so that callers (and the conformance suite) dispatch on types. Which class each
 * problem type of the service is raised as is declared once, in conformance/problems.json (js/test/problems.test.mjs).
 */

/** Root of every error the SDK raises on purpose. `receipt`: what the server had accepted (uploads). */
export class RldpError extends Error {
  // Each class names itself with a string literal (an own property of every instance): a minifier renames
  // classes, and `constructor.name` would become "w"; callers and logs read `err.name`.
  override name = "RldpError";
  receipt: unknown = undefined;
}

/** Input that does not have the expected form or range. */
export class ValidationError extends RldpError {
  override name = "ValidationError";
}
/** A record or value that does not fit the alphabet (unknown value, missing attribute...). */
export class RecordError extends ValidationError {
  override name = "RecordError";
}
/** An invalid attribute or alphabet definition. */
export class AlphabetError extends ValidationError {
  override name = "AlphabetError";
}
/** A table of public data that cannot be used (a missing column, columns of different lengths...). */
export class TableError extends ValidationError {
  override name = "TableError";
}
/** Public data that cannot be compared with a document: columns it lacks, values outside the document's
 * alphabet, a P̂ that came from a pilot, or a provenance policy this version does not apply. */
export class PublicDataError extends TableError {
  override name = "PublicDataError";
}
/** A mechanism document that is malformed, inconsistent or cannot be read. */
export class DocumentError extends ValidationError {
  override name = "DocumentError";
}
/** The bytes are not valid JSON / msgpack at all (`encoding` says which was expected). */
export class DocumentSyntaxError extends DocumentError {
  override name = "DocumentSyntaxError";
  constructor(message: string, readonly encoding: "json" | "msgpack") {
    super(message);
  }
}
/** The document's `id` is not the content hash of its other fields. */
export class IdMismatch extends DocumentError {
  override name = "IdMismatch";
  constructor(message: string, readonly stated: string, readonly computed: string) {
    super(message);
  }
}
/** `privacy.notion` names a notion this version has no exact audit for. */
export class UnknownNotion extends DocumentError {
  override name = "UnknownNotion";
}
/** A document whose privacy claim cannot be audited. */
export class AuditError extends RldpError {
  override name = "AuditError";
}
/** A report batch that is malformed or does not fit its mechanism. */
export class ReportError extends ValidationError {
  override name = "ReportError";
}

/**
 * A mechanism failed verification (id, audit, policy). Never use such a mechanism.
 * `rule` says which check refused it: "document" (invalid or tampered), "expected_id", "pinned",
 * "max_epsilon", "min_radius", "max_public_n", "confidence_box" (a pilot's box under a floor), "audit_error" (cannot be audited), "audit" (failed).
 */
export class MechanismRejected extends RldpError {
  override name = "MechanismRejected";
  readonly reasons: string[];
  constructor(
    readonly mechanismId: string,
    message: string,
    readonly rule: string,
    reasons: string[] = [],
    readonly underlying?: unknown,
  ) {
    super(`mechanism ${mechanismId}: ${message}`);
    this.reasons = [...reasons];
  }
}

/** The service refused a request permanently (4xx other than 429); retrying will not help. */
export class ProblemError extends RldpError {
  override name = "ProblemError";
  readonly type: string;
  readonly reason: string;
  readonly title: string;
  readonly detail: string;
  constructor(readonly status: number, readonly problem: Record<string, unknown>, receipt?: unknown) {
    const type = String(problem.type ?? "about:blank");
    const reason = String(problem.reason || type.replace(/\/+$/, "").split("/").pop());
    const detail = String(problem.detail ?? "");
    const title = String(problem.title ?? "");
    super(`${status} ${reason}: ${detail || title}`);
    this.type = type;
    this.reason = reason;
    this.title = title;
    this.detail = detail;
    this.receipt = receipt;
  }
}

/** The server refused an estimate: the mechanism or collection has fewer reports than its minimum (409
 * too-few-reports, or no-reports: none at all). `reports`: how many it has; `minReports`: how many an estimate
 * needs (null from a server that does not say). */
export class TooFewReports extends ProblemError {
  override name = "TooFewReports";
  readonly reports: number | null;
  readonly minReports: number | null;
  constructor(status: number, problem: Record<string, unknown>, receipt?: unknown) {
    super(status, problem, receipt);
    const int = (v: unknown) => (typeof v === "number" && Number.isInteger(v) ? v : null);
    this.reports = int(problem.reports) ?? (this.reason === "no-reports" ? 0 : null);
    this.minReports = int(problem.min_reports);
  }
}

/** The batch's collection requires an upload token and the upload carried none, or neither its current nor its
 * previous one (401 `upload-credential`). Permanent: nothing was stored; give the client the collection's current
 * token (`new Client(url, { uploadToken })`), which its operator makes and rotates (`rldp collection upload-token`). */
export class UploadCredentialRefused extends ProblemError {
  override name = "UploadCredentialRefused";
  constructor(status: number, problem: Record<string, unknown>, receipt?: unknown) {
    super(status, problem, receipt);
    this.message = `${this.message} (give the client the collection's upload token: new Client(url, { uploadToken }))`;
  }
}

/** The error for a refusal: the subclass of its problem type (TooFewReports, UploadCredentialRefused) or ProblemError. */
export function problemError(status: number, problem: Record<string, unknown>, receipt?: unknown): ProblemError {
  const error = new ProblemError(status, problem, receipt);
  if (error.reason === "upload-credential") return new UploadCredentialRefused(status, problem, receipt);
  return error.reason === "too-few-reports" || error.reason === "no-reports" ? new TooFewReports(status, problem, receipt) : error;
}

/** The service could not be reached, or kept answering 429/5xx, after every retry. Transient. */
export class ServiceUnavailable extends RldpError {
  override name = "ServiceUnavailable";
  constructor(message: string, readonly status: number | null = null, receipt?: unknown) {
    super(message);
    this.receipt = receipt;
  }
}

/** The collection's drift policy paused its current mechanism (problem `collection-paused`, 423): transient like
 * ServiceUnavailable — nothing was stored, the batch is kept (same id) and sent again once the operator resumes. */
export class CollectionPaused extends ServiceUnavailable {
  override name = "CollectionPaused";
  constructor(message: string, readonly detail: string = "", receipt?: unknown) {
    super(message, 423, receipt);
  }
}

/** The client's state (file in Node, IndexedDB in browsers) cannot be used; never silently replaced. */
export class StateFileError extends RldpError {
  override name = "StateFileError";
  constructor(readonly path: string, message: string) {
    super(`state file ${path}: ${message}`);
  }
}

/** A report would spend more ε than the app's privacy budget allows; nothing was sent. */
export class PrivacyBudgetExceeded extends RldpError {
  override name = "PrivacyBudgetExceeded";
  constructor(
    readonly budget: number,
    readonly per: string | null,
    readonly spent: number,
    readonly asked: number,
    readonly owner: string,
  ) {
    const who = owner === "" ? "this device's owner" : `owner ${JSON.stringify(owner)}`;
    const period = per ? ` per ${per}` : " (lifetime total)";
    super(
      `privacy budget exceeded: ${who} has spent epsilon ${spent.toPrecision(6)} of the budget ${budget}${period}, ` +
        `and this report asks ${asked.toPrecision(6)} more; nothing was sent`,
    );
  }
}

/** A refused batch (the server's parser, `rldp.shared.reports`); `fields` says where. */
export class BatchError extends ReportError {
  override name = "BatchError";
  constructor(message: string, readonly fields: Record<string, unknown> = {}) {
    super(message);
  }
}
export class MissingBatchField extends BatchError {
  override name = "MissingBatchField";
}
export class BatchFieldType extends BatchError {
  override name = "BatchFieldType";
}
export class EmptyBatch extends BatchError {
  override name = "EmptyBatch";
}
export class TooManyReports extends BatchError {
  override name = "TooManyReports";
}
export class ReportOutOfRange extends BatchError {
  override name = "ReportOutOfRange";
}
export class WindowRequired extends BatchError {
  override name = "WindowRequired";
}
export class UnexpectedWindow extends BatchError {
  override name = "UnexpectedWindow";
}
export class InvalidWindow extends BatchError {
  override name = "InvalidWindow";
}
export class FutureWindow extends BatchError {
  override name = "FutureWindow";
}

/**
 * A memoised submit of several records without `owners`: whose record is each one? With a state store every
 * record would be one person's and identical records would share one draw (port of the Python client's
 * `OwnersRequired`): give owners (one per record), one string if they are all one person's, or no store.
 */
export class OwnersRequired extends RldpError {
  override name = "OwnersRequired";
}

/** The collection (`client.collection(name)`) was retired by its operator: it takes no more reports. */
export class CollectionRetired extends RldpError {
  override name = "CollectionRetired";
}
