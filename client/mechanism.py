"""A verified mechanism: the document, checked, ready to privatise records.

:meth:`Mechanism.from_document` is the only way in, and it refuses (raises
:class:`~rldp.client.errors.MechanismRejected`) a document whose id does not match its
content, whose privacy audit fails (``rldp.shared.audit.audit_document`` recomputes the
worst-case ε from the matrix), or that the caller's :class:`~rldp.client.policy.VerificationPolicy`
does not accept (an id outside the pinned set, more ε than allowed, a confidence set smaller
than the app accepts).

:meth:`Mechanism.privatize` draws a fresh Y on every call: right for one report per record.
An app that reports the same record again and again should report through
``Client(url, state_path=...)``, which memoises the draw (:mod:`rldp.client.memo`).

A document with a per-report layer (``collection.per_report`` = (R, ε₁), RAPPOR's instantaneous
response) is verified for both guarantees by the audit, and every report is drawn afresh:
:meth:`privatize` draws y' ~ (R·Q)(·|x) (the report distribution,
:func:`~rldp.shared.document.report_matrix`); the memo stores y ~ Q(·|x) (:meth:`draw_memo`)
and each report sends y' ~ R(·|y) (:meth:`report_from`), never storing y'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from rldp.shared.audit import AuditResult, LayeredAuditResult, audit_document, dense_audit_entries
from rldp.shared.collection import Window, collection_window
from rldp.shared.document import (
    DocumentError,
    PerReport,
    alphabet,
    matrix_spec,
    mechanism_matrix,
    mechanism_shape,
    per_report_layer,
    randomiser_key,
    report_outputs,
    validate_document,
)
from rldp.shared.records import Alphabet

from .errors import MechanismRejected
from .grr import GRR_MIN_SIZE, GrrSampler, sampler_for
from .policy import VerificationPolicy
from .sampling import ColumnSampler, RandomSource

__all__ = ["Mechanism", "MAX_DENSE_AUDIT_ENTRIES"]

#: The most entries this client expands a compact matrix to for an audit that reads it densely
#: (2²⁴: 128 MiB of float64, a dense K = 4,096 matrix): a document's few bytes must not make an app
#: allocate gigabytes. GRR under rldp/ldp is audited from its two values and never expanded.
MAX_DENSE_AUDIT_ENTRIES = 1 << 24


class Mechanism:
    """A mechanism document that passed verification, with its sampler.

    ``privatize(records)`` returns the output indices y to upload; the records themselves
    never leave this object.
    """

    def __init__(self, document: dict[str, Any], audit: AuditResult) -> None:
        """Use :meth:`from_document` (which verifies); this constructor trusts its input."""
        self.document = document
        self.audit = audit
        self.alphabet: Alphabet = alphabet(document)
        #: The per-report layer (R, ε₁), None when the document has none.
        self.per_report: PerReport | None = per_report_layer(document)
        # Q and R·Q are expanded on first use only: a GRR document is sampled from its two values,
        # and its K × K matrix (512 MiB at K = 8,192) is never built unless asked for.
        self._matrix: np.ndarray | None = None
        self._report_matrix: np.ndarray | None = None
        self._shape = mechanism_shape(document)
        # The samplers are built on first use: verification must not pay for them (K = 4,000: seconds).
        self._samplers: dict[str, ColumnSampler | GrrSampler] = {}
        #: The collection window (``"collection": {"window": "P1D"}``), None when it has none.
        self.window: Window | None = collection_window(document)
        self._memo_key: str | None = None

    @property
    def matrix(self) -> np.ndarray:
        """Q, the document's matrix (the memoised mechanism, the long-run guarantee); expanded on first use."""
        if self._matrix is None:
            self._matrix = mechanism_matrix(self.document)
        return self._matrix

    @property
    def report_matrix(self) -> np.ndarray:
        """The distribution of one report given x: R·Q with a per-report layer, else Q."""
        if self._report_matrix is None:
            self._report_matrix = self.matrix if self.per_report is None else self.per_report.matrix @ self.matrix
        return self._report_matrix

    @classmethod
    def from_document(
        cls,
        document: Mapping[str, Any],
        *,
        expected_id: str | None = None,
        max_epsilon: float | None = None,
        policy: VerificationPolicy | None = None,
    ) -> Mechanism:
        """Verify a document (id, the caller's policy, audit) and wrap it.

        ``expected_id``: the id the caller asked for (a server must not substitute another
        valid mechanism). ``policy``: pinned ids, ε ceiling, confidence-set floors
        (:class:`~rldp.client.policy.VerificationPolicy`); ``max_epsilon`` tightens its ε
        ceiling (nats).
        """
        rules = (policy or VerificationPolicy()).with_max_epsilon(max_epsilon)
        claimed_id = document.get("id") if isinstance(document, Mapping) else None
        label = expected_id or (claimed_id if isinstance(claimed_id, str) else "<no id>")
        try:
            doc = validate_document(document)
        except DocumentError as exc:
            raise MechanismRejected(label, f"invalid or tampered document: {exc}") from None
        if expected_id is not None and doc["id"] != expected_id:
            raise MechanismRejected(label, f"the server returned a different mechanism ({doc['id']})")
        rules.check(doc, label)
        try:  # an unknown notion (UnknownNotion) is refused here as by the audit, whatever the matrix's form
            dense = dense_audit_entries(doc)
        except ValueError as exc:
            raise MechanismRejected(label, f"cannot be audited: {exc}") from None
        if dense > MAX_DENSE_AUDIT_ENTRIES:
            b, a = mechanism_shape(doc)
            raise MechanismRejected(
                label,
                f"cannot be audited by this client: auditing notion {doc['privacy']['notion']!r} needs its {b:,} × {a:,} matrix in full "
                f"({dense * 8 / 2**20:,.0f} MiB); this client expands at most {MAX_DENSE_AUDIT_ENTRIES:,} entries "
                f"({MAX_DENSE_AUDIT_ENTRIES * 8 / 2**20:,.0f} MiB) of a compact matrix",
            )
        try:
            result = audit_document(doc)
        except ValueError as exc:
            raise MechanismRejected(label, f"cannot be audited: {exc}") from None
        if not result.passed:
            raise MechanismRejected(label, "privacy audit failed: " + "; ".join(result.reasons), result.reasons)
        return cls(doc, result)

    def _sampler_for(self, which: str) -> ColumnSampler | GrrSampler:
        # "report": R·Q (Q without a layer); "memo": Q; "layer": R. A GRR matrix is sampled
        # from its two parameters (client/grr.py: no table to build, none to miss the cache, no Q).
        sampler = self._samplers.get(which)
        if sampler is None:
            spec = matrix_spec(self.document)
            if which == "layer" and self.per_report is not None:
                sampler = sampler_for(self.per_report.matrix)
            elif which == "memo" and self.per_report is not None:
                sampler = self._from_q(spec)
            else:
                sampler = self._samplers.get("report") or (
                    self._from_q(spec) if self.per_report is None else sampler_for(self.report_matrix)
                )
                self._samplers["report"] = sampler
            self._samplers[which] = sampler
        return sampler

    def _from_q(self, spec: Mapping[str, Any] | None) -> ColumnSampler | GrrSampler:
        if spec is not None and spec.get("form") == "grr" and int(spec["size"]) >= GRR_MIN_SIZE:
            return GrrSampler(int(spec["size"]), float(spec["diagonal"]), float(spec["off_diagonal"]))
        return sampler_for(self.matrix, spec)

    @property
    def _sampler(self) -> ColumnSampler | GrrSampler:
        return self._sampler_for("report")

    # -- properties
    @property
    def id(self) -> str:
        """The content id (sha256 hex) the document was verified against."""
        return str(self.document["id"])

    @property
    def memo_key(self) -> str:
        """The randomiser key (:func:`~rldp.shared.document.randomiser_key`): the memo's key for this
        mechanism's draws, shared by every document with the same Q, per-report layer and input alphabet
        (a collection's rotations), distinct for any other."""
        if self._memo_key is None:
            self._memo_key = randomiser_key(self.document)
        return self._memo_key

    @property
    def method(self) -> str:
        """The designer that produced the mechanism (e.g. ``"polyopt"``)."""
        return str(self.document["method"])

    @property
    def epsilon(self) -> float:
        """The claimed ε (nats); the audit checked it."""
        return float(self.document["privacy"]["epsilon"])

    @property
    def epsilon_audited(self) -> float:
        """The ε recomputed by the audit (nats; ≤ epsilon + tolerance)."""
        return float(self.audit.epsilon)

    @property
    def epsilon_per_report(self) -> float | None:
        """The claimed single-report ε₁ of the per-report layer (nats), None without one."""
        return None if self.per_report is None else self.per_report.epsilon

    @property
    def epsilon_per_report_audited(self) -> float | None:
        """The audited ε of one report (R·Q; ≤ ε₁ + tolerance), None without a per-report layer."""
        single = self.audit.per_report if isinstance(self.audit, LayeredAuditResult) else None
        return None if single is None else float(single.epsilon)

    @property
    def notion(self) -> str:
        return str(self.document["privacy"]["notion"])

    @property
    def outputs(self) -> int:
        """|Y'|: reports are integers in [0, outputs) (|Y| without a per-report layer)."""
        return report_outputs(self.document)

    @property
    def memo_outputs(self) -> int:
        """|Y|: memoised values are integers in [0, memo_outputs) (the rows of Q)."""
        return self._shape[0]

    @property
    def size(self) -> int:
        """|X|."""
        return self._shape[1]

    def __repr__(self) -> str:
        eps = self.audit.epsilon
        return (
            f"Mechanism({self.method}, id={self.id[:12]}…, epsilon={self.epsilon:g} "
            f"(audited {eps if math.isinf(eps) else round(eps, 6)}), {self.alphabet!r}, outputs={self.outputs})"
        )

    # -- privatisation
    def privatize(self, records: Any, rng: RandomSource | None = None, *, dtype: Any = None) -> np.ndarray:
        """Privatise many records: output indices y (int64, or the compact ``dtype``: ``np.uint8``
        for up to 256 outputs, ``np.uint16`` for up to 65,536), one per record, in order, each a fresh
        report y ~ (R·Q)(·|x) (Q(·|x) without a per-report layer).

        ``records``: dicts ``{"sex": "Male", "race": "White"}`` (extra keys ignored), tuples
        ``(sensitive, released...)``, a :class:`~rldp.shared.records.Table`, or a dict of
        columns. Unknown values, missing attributes or wrong tuple lengths raise
        :class:`~rldp.shared.records.RecordError` naming the value and the allowed ones.
        ``rng``: random source (default: the OS CSPRNG).
        """
        return self._sampler.sample(self.alphabet.encode(records), rng, dtype)

    def privatize_indices(self, x: Any, rng: RandomSource | None = None, *, dtype: Any = None) -> np.ndarray:
        """Privatise records already encoded as indices x = s·|U| + u (``dtype`` as in :meth:`privatize`)."""
        return self._sampler.sample(x, rng, dtype)

    def privatize_one(self, record: Any, rng: RandomSource | None = None) -> int:
        """Privatise one record (a dict or a tuple); returns y."""
        return int(self._sampler.sample(np.array([self.alphabet.encode_one(record)]), rng)[0])

    # -- reporting over time (rldp.client.reporting)
    def draw_memo(self, x: Any, rng: RandomSource | None = None) -> np.ndarray:
        """The values the memo stores for records x: y ~ Q(·|x), the document's matrix."""
        return self._sampler_for("memo").sample(x, rng)

    def report_from(self, ys: np.ndarray, rng: RandomSource | None = None) -> np.ndarray:
        """One report per memoised y: y' ~ R(·|y) drawn afresh on every call with a per-report
        layer (so one report reveals at most ε₁); ``ys`` unchanged without one."""
        return ys if self.per_report is None else self._sampler_for("layer").sample(ys, rng)
