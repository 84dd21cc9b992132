/**
 * The client's size limits, the Python client's (`rldp.shared.document.MAX_SYMBOLS`,
 * `rldp.client.mechanism.MAX_DENSE_AUDIT_ENTRIES`, `rldp.client.transport.MAX_RESPONSE_BYTES`); the values are
 * declared once in `conformance/limits.json`, and both clients' tests check theirs against it.
 */

/** The most symbols |X| a document may have (the largest alphabet rldp designs for), checked right after the
 * alphabet is read, before any matrix. */
export const MAX_SYMBOLS = 8192;

/** The most entries this client expands a compact matrix to for an audit that reads it densely (2²⁴: 128 MiB
 * of float64, a dense K = 4,096 matrix): a document's few bytes must not make an app allocate gigabytes. GRR
 * under rldp/ldp is audited from its two values and never expanded. */
export const MAX_DENSE_AUDIT_ENTRIES = 2 ** 24;

/** The most bytes of one answer the client reads (`Content-Length` checked first, then a running total while
 * streaming): the largest document the client can accept, MAX_DENSE_AUDIT_ENTRIES float64 entries as base64
 * text in JSON (⌈32·E/3⌉ bytes; msgpack's binary or float64 entries take at most 9 each), plus 1 KiB per
 * symbol for the alphabet, the public distribution and every other field: ⌈32·2²⁴/3⌉ + 1024·8,192 =
 * 187,345,579 bytes (179 MiB). */
export const MAX_RESPONSE_BYTES = Math.ceil((32 * MAX_DENSE_AUDIT_ENTRIES) / 3) + 1024 * MAX_SYMBOLS;
