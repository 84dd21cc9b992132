"""The mechanism document: schema, canonical form, content id, accessors.

The document is the contract between every part (docs/design.md, "The mechanism
document"). JSON on disk, the same structure in msgpack on the wire
(:mod:`.io`). Its ``id`` is the sha256 of the canonical form of every
other field, so a published mechanism can never change under the same id.

Two formats are read. ``rldp.mechanism/1``: one sensitive attribute, an input of the
mechanism. ``rldp.mechanism/2``: the same fields, and ``sensitive`` may also be several
attributes or latent (``"released": false``), and a document with a per-report layer
(``collection.per_report``) is format 2 — a format-1 reader would misread such a document,
so it carries the new number; every other document keeps format 1 and its id.
``rldp.mechanism/3``: format 2 whose ``matrix`` is a compact exact form (:mod:`.forms`: GRR by its
two values, a palette of distinct entries, binary float64) — written for large mechanisms.

Everyone else reads documents through the accessors at the bottom
(:func:`mechanism_matrix`, :func:`alphabet`, ...) or its typed read-only view (:class:`DocumentView`,
parsed once) rather than the raw dict; the distribution
of one report is :func:`report_matrix` (R·Q with a per-report layer, else Q). This module
validates structure, shapes, stochasticity and the id; it does not audit privacy (that
is :mod:`rldp.shared.audit`).

The package: :mod:`.canonical` (canonical form, id), :mod:`.schema` (build, validate),
:mod:`.access` (accessors), :mod:`.view` (the typed view), :mod:`.io` (JSON / msgpack files and bytes),
:mod:`.randomiser` (the memo's key: what fixes the distribution of a draw).
"""

from __future__ import annotations

from ..errors import DocumentError, DocumentSyntaxError, IdMismatch
from .access import (
    PerReport,
    alphabet,
    epsilon,
    matrix_form,
    matrix_spec,
    mechanism_matrix,
    mechanism_shape,
    notion,
    per_report_layer,
    public_distribution,
    report_matrix,
    report_outputs,
    uncertainty_parameters,
)
from .canonical import FORMAT, FORMAT_2, FORMAT_3, FORMATS, REQUIRED_FIELDS, canonical_bytes, content_id
from .forms import COMPACT_MIN_ENTRIES, MatrixForm, compact_matrix, matrix_forms, matrix_shape, register_form
from .io import from_json, from_msgpack, json_compatible, read_document, to_json, to_msgpack, write_document
from .randomiser import RANDOMISER_FORMAT, randomiser_bytes, randomiser_key
from .schema import MAX_SYMBOLS, build_document, validate_document
from .view import AuditView, DocumentView, UncertaintyView

__all__ = [
    "FORMAT",
    "FORMAT_2",
    "FORMAT_3",
    "FORMATS",
    "COMPACT_MIN_ENTRIES",
    "MAX_SYMBOLS",
    "MatrixForm",
    "compact_matrix",
    "matrix_forms",
    "matrix_shape",
    "register_form",
    "matrix_form",
    "matrix_spec",
    "REQUIRED_FIELDS",
    "DocumentError",
    "DocumentSyntaxError",
    "IdMismatch",
    "build_document",
    "canonical_bytes",
    "content_id",
    "RANDOMISER_FORMAT",
    "randomiser_bytes",
    "randomiser_key",
    "validate_document",
    "json_compatible",
    "to_json",
    "from_json",
    "to_msgpack",
    "from_msgpack",
    "write_document",
    "read_document",
    "mechanism_matrix",
    "report_matrix",
    "mechanism_shape",
    "report_outputs",
    "PerReport",
    "per_report_layer",
    "public_distribution",
    "alphabet",
    "epsilon",
    "notion",
    "uncertainty_parameters",
    "DocumentView",
    "UncertaintyView",
    "AuditView",
]
