"""Provenance of P̂: which public data a mechanism document was designed from, and its checks.

A document's RLDP guarantee is relative to its own claims — the public distribution P̂, the
number n of public records and the radius of its uncertainty set. An aggregator that misstates
them (inflates n to shrink the confidence radius, or shifts P̂) publishes a mechanism that
passes every audit yet leaks S for the real population. Why this module: so that anyone
holding the public data can recompute those claims, and a client can pin the data by hash.
Designers record the source in the document's ``provenance`` field (covered by the id)::

    "provenance": {"name": "adult.csv", "n": 32561, "columns": ["sex", "race"],
                   "counts_sha256": "<64 hex>", "policy": {"filter": "none", "missing": "as-value"}}

``counts_sha256`` is the SHA-256 of the canonical cell counts of the public data over the
document's S × U (:mod:`rldp.shared.public_counts`, whose names this module re-exports), ``policy``
how rows became counts (:data:`POLICY`). P̂ is then counts / n.

* :func:`check_document_provenance` — the document against itself: P̂·n must be whole counts
  that hash to ``counts_sha256``, and n must be the uncertainty set's n; so pinning a counts
  hash pins P̂ and n.
* :func:`check_public_data` — the document against a copy of the public data: P̂, n, the radius
  (at least the confidence radius for the data's n and the document's β and order: a *smaller*
  radius is the attack) and the counts hash, recomputed exactly as the designer did.

numpy and the standard library only (the client and ``rldp audit`` use it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .attributes import product_strides
from .divergence import confidence_radius
from .errors import AlphabetError, DocumentError
from .pilot import PILOT_SOURCE, validate_pilot_provenance
from .public_counts import (
    COUNTS_FORMAT,
    POLICY,
    PublicCounts,
    PublicDataError,
    canonical_counts,
    counts_sha256,
    table_counts,
)
from .records import LABEL_SEPARATOR, Alphabet
from .tables import Table
from .tolerances import RADIUS_RTOL, STOCHASTIC_TOLERANCE

__all__ = [
    "COUNTS_FORMAT",
    "DEFAULT_BETA",
    "POLICY",
    "Mismatch",
    "ProvenanceCheck",
    "PublicCounts",
    "PublicDataError",
    "canonical_counts",
    "check_document_provenance",
    "check_public_data",
    "counts_sha256",
    "provenance_of",
    "stated_beta",
    "table_counts",
    "validate_provenance",
]

_REQUIRED = ("name", "n", "columns", "counts_sha256", "policy")
_HEX64 = re.compile(r"[0-9a-f]{64}")
#: The significance level a radius is held to when the document states none (the designers' default).
DEFAULT_BETA = 0.05
NO_PROVENANCE = "the document records no provenance (an older document): nothing says which public data gave its P̂"


# --------------------------------------------------------------------------- the field


def validate_provenance(value: Any) -> dict[str, Any]:
    """The document's ``provenance`` field checked for form (DocumentError naming the field otherwise).

    Required: ``name`` (free text), ``n`` (≥ 1), ``columns`` (distinct names), ``counts_sha256``
    (64 lowercase hex), ``policy`` (an object). Other members are kept (the field may grow).
    """
    if not isinstance(value, Mapping):
        raise DocumentError(f"provenance must be an object with {', '.join(_REQUIRED)}; got {type(value).__name__}")
    if value.get("source") == PILOT_SOURCE:  # P̂ from a private pilot (rldp.shared.pilot)
        return validate_pilot_provenance(value)
    missing = [key for key in _REQUIRED if key not in value]
    if missing:
        raise DocumentError(f"provenance is missing required field(s) {', '.join(missing)}")
    if not isinstance(value["name"], str) or not value["name"].strip():
        raise DocumentError(f"provenance.name must be a non-empty string naming the public data; got {value['name']!r}")
    n = value["n"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise DocumentError(f"provenance.n must be a positive integer (public records); got {n!r}")
    columns = value["columns"]
    if (
        not isinstance(columns, (list, tuple))
        or not columns
        or not all(isinstance(c, str) and c for c in columns)
        or len(set(columns)) != len(columns)
    ):
        raise DocumentError(f"provenance.columns must be a non-empty list of distinct column names; got {columns!r}")
    digest = value["counts_sha256"]
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise DocumentError(f"provenance.counts_sha256 must be 64 lowercase hex characters; got {digest!r}")
    if not isinstance(value["policy"], Mapping):
        raise DocumentError(f"provenance.policy must be an object such as {POLICY}; got {value['policy']!r}")
    return dict(value)


def stated_beta(doc: Mapping[str, Any]) -> float | None:
    """The significance level β of the document's confidence set: ``privacy.uncertainty.beta`` (public
    data), else a pilot provenance's ``beta`` (its radius comes from the pilot's counts at that level);
    None when the document states none (a radius given outright). One reading for every trust check."""
    privacy = doc.get("privacy")
    unc = privacy.get("uncertainty") if isinstance(privacy, Mapping) else None
    if isinstance(unc, Mapping) and unc.get("beta") is not None:
        return float(unc["beta"])
    prov = doc.get("provenance")
    if isinstance(prov, Mapping) and prov.get("source") == PILOT_SOURCE and prov.get("beta") is not None:
        return float(prov["beta"])
    return None


def provenance_of(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The document's provenance (form checked), or None for a document without one."""
    value = doc.get("provenance")
    return None if value is None else validate_provenance(value)


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class Mismatch:
    """One claim of a document that the public data (or the document itself) contradicts."""

    field: str  # "public_distribution", "n", "radius", "counts_sha256", "columns"
    document: Any
    data: Any
    message: str  # one line: the field, the document's value, the data's


@dataclass(frozen=True)
class ProvenanceCheck:
    """Outcome of a provenance check: ``passed`` when nothing differs; ``notes`` say what was not compared.

    ``n`` and ``counts_sha256`` are the data's (:func:`check_public_data`), or for
    :func:`check_document_provenance` the hash of the document's own P̂ × n.
    """

    mismatches: tuple[Mismatch, ...] = ()
    notes: tuple[str, ...] = ()
    provenance: dict[str, Any] | None = None
    n: int | None = None
    counts_sha256: str | None = None

    @property
    def passed(self) -> bool:
        return not self.mismatches

    def summary(self) -> str:
        """The mismatches on one line ("" when it passed)."""
        return "; ".join(m.message for m in self.mismatches)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "mismatches": [{"field": m.field, "message": m.message} for m in self.mismatches],
            "notes": list(self.notes),
            "provenance": self.provenance,
            "n": self.n,
            "counts_sha256": self.counts_sha256,
        }


def _claims(doc: Mapping[str, Any]) -> tuple[Alphabet, np.ndarray, Mapping[str, Any] | None]:
    """(alphabet, P̂, privacy.uncertainty or None) of a validated document."""
    try:
        alphabet = Alphabet.from_dict({"sensitive": doc["sensitive"], "released": doc["released"]})
        p_hat = np.asarray(doc["public_distribution"], dtype=np.float64)
    except (KeyError, TypeError, ValueError) as exc:
        what = f"sensitive/released: {exc}" if isinstance(exc, AlphabetError) else f"unreadable ({exc})"
        raise DocumentError(f"the document's alphabet or public_distribution is {what}") from None
    if p_hat.shape != alphabet.shape:
        raise DocumentError(f"public_distribution has shape {p_hat.shape}; expected {alphabet.shape} (|S| × |U|)")
    privacy = doc.get("privacy")
    unc = privacy.get("uncertainty") if isinstance(privacy, Mapping) else None
    return alphabet, p_hat, unc if isinstance(unc, Mapping) else None


def _cell(alphabet: Alphabet, s: int, u: int) -> str:
    """``[Female|White]``: the values of cell (s, u) of S × U."""
    parts = [alphabet.sensitive.values[s]]
    strides = product_strides([a.size for a in alphabet.released])
    parts += [attr.values[(u // stride) % attr.size] for attr, stride in zip(alphabet.released, strides, strict=True)]
    return f"[{LABEL_SEPARATOR.join(parts)}]"


def _columns(prov: Mapping[str, Any], alphabet: Alphabet) -> list[Mismatch]:
    names = [a.name for a in alphabet.joint_attributes]
    if list(prov["columns"]) == names:
        return []
    message = (
        f"columns: provenance.columns are {', '.join(prov['columns'])}, the document's attributes {', '.join(names)}"
    )
    return [Mismatch("columns", list(prov["columns"]), names, message)]


def check_document_provenance(doc: Mapping[str, Any]) -> ProvenanceCheck:
    """The document's provenance against the document itself (no public data needed).

    Passes when P̂ × provenance.n are whole counts (each within n·STOCHASTIC_TOLERANCE, the
    accuracy a document's probabilities are held to) whose canonical hash is ``counts_sha256``,
    privacy.uncertainty.n (if stated) is provenance.n, and the columns are the document's
    attributes. A document without provenance passes with a note (nothing to contradict).
    """
    alphabet, p_hat, unc = _claims(doc)
    prov = provenance_of(doc)
    if prov is None:
        return ProvenanceCheck(notes=(NO_PROVENANCE,))
    mismatches = _columns(prov, alphabet)
    if prov.get("source") == PILOT_SOURCE:  # its P̂ and radius are recomputed with the pilot's matrix
        note = (
            f"P̂ and the radius came from a pilot of n = {prov['n']} reports (mechanism "
            f"{prov['pilot_mechanism'][:16]}…, beta {prov['beta']:g}); recompute them with the pilot: rldp audit --pilot"
        )
        return ProvenanceCheck(tuple(mismatches), (note,), prov, prov["n"], None)
    n = int(prov["n"])
    stated = None if unc is None else unc.get("n")
    if stated is not None and stated != n:
        message = f"n: privacy.uncertainty.n is {stated} but provenance.n is {n}"
        mismatches.append(Mismatch("n", stated, n, message))
    scaled = p_hat * n
    counts = np.rint(scaled)
    off = np.abs(scaled - counts)
    digest = None
    if float(off.max()) > n * STOCHASTIC_TOLERANCE:
        s, u = np.unravel_index(int(np.argmax(off)), off.shape)
        message = (
            f"public_distribution{_cell(alphabet, int(s), int(u))} × provenance.n = {float(scaled[s, u]):.6f} is not "
            f"a whole count: P̂ is not the empirical distribution of n = {n} records"
        )
        mismatches.append(Mismatch("public_distribution", float(p_hat[s, u]), None, message))
    else:
        digest = counts_sha256(alphabet, counts)
        if digest != prov["counts_sha256"]:
            message = (
                f"counts_sha256: the document says {prov['counts_sha256'][:16]}…, its P̂ × n hashes to {digest[:16]}…"
            )
            mismatches.append(Mismatch("counts_sha256", prov["counts_sha256"], digest, message))
    return ProvenanceCheck(tuple(mismatches), (), prov, None, digest)


def _radius(
    unc: Mapping[str, Any] | None, public: PublicCounts, beta: float | None
) -> tuple[list[Mismatch], list[str]]:
    if unc is None:
        return [], ["the document's notion has no uncertainty set: no radius to compare"]
    radius = unc.get("radius")
    if radius is None:
        return [], []  # unbounded: every distribution, the largest set there is
    level = beta if beta is not None else unc.get("beta")
    notes = []
    if level is None:
        level = DEFAULT_BETA
        notes.append(f"the document states no confidence level (beta): its radius is held to beta = {level:g}")
    order = float(unc.get("order", 2.0))
    needed = confidence_radius(public.n, float(level), public.counts.size, order)
    if float(radius) >= needed * (1 - RADIUS_RTOL):
        return [], notes
    message = (
        f"radius: the document's {float(radius):.6g} is smaller than the {100 * (1 - float(level)):g} % confidence "
        f"radius {needed:.6g} for the data's n = {public.n} (beta {float(level):g}, order {order:g})"
    )
    return [Mismatch("radius", float(radius), needed, message)], notes


def check_public_data(doc: Mapping[str, Any], table: Table, *, beta: float | None = None) -> ProvenanceCheck:
    """The document's claims against a copy of its public data, recomputed as the designer did.

    Compares P̂ (every cell within STOCHASTIC_TOLERANCE), n (privacy.uncertainty.n and
    provenance.n), the radius (at least the (1 − β)-confidence radius B(n, β, |S|·|U|, α) of
    [LZG24, eq 9] for the data's n and the document's order α, with β = ``beta`` if given, else
    the document's, else :data:`DEFAULT_BETA`: a smaller radius is the inflated-n attack) and,
    when the document has a provenance, the counts hash and the columns. ``doc`` must be
    validated (``read_document``, ``validate_document``).
    Raises :class:`PublicDataError` when the table lacks a column of the document, holds values
    outside its alphabet, or the provenance names a policy this version does not apply.
    """
    alphabet, p_hat, unc = _claims(doc)
    prov = provenance_of(doc)
    if prov is not None and prov.get("source") == PILOT_SOURCE:
        raise PublicDataError(
            "the document's P̂ came from a private pilot, not from public data: check it against its pilot "
            "(rldp audit --pilot PILOT)"
        )
    if prov is not None and dict(prov["policy"]) != POLICY:
        raise PublicDataError(
            f"the document's provenance policy {json.dumps(prov['policy'], sort_keys=True)} is not the one this "
            f"version applies ({json.dumps(POLICY, sort_keys=True)}): its P̂ cannot be recomputed here"
        )
    public = PublicCounts.from_table(table, alphabet, name=prov["name"] if prov else "public data")
    notes = [] if prov is not None else [NO_PROVENANCE + "; P̂, n and the radius are still compared"]
    mismatches: list[Mismatch] = []

    mismatches += _distribution(alphabet, p_hat, public)
    n_mismatches, n_notes = _n(unc, prov, public)
    mismatches += n_mismatches
    notes += n_notes
    radius_mismatches, radius_notes = _radius(unc, public, beta)
    mismatches += radius_mismatches
    notes += radius_notes
    if prov is not None:
        if prov["counts_sha256"] != public.sha256:
            message = f"counts_sha256: the document says {prov['counts_sha256'][:16]}…, the data hashes to {public.sha256[:16]}…"
            mismatches.append(Mismatch("counts_sha256", prov["counts_sha256"], public.sha256, message))
        mismatches += _columns(prov, alphabet)
    return ProvenanceCheck(tuple(mismatches), tuple(notes), prov, public.n, public.sha256)


def _distribution(alphabet: Any, p_hat: np.ndarray, public: PublicCounts) -> list[Mismatch]:
    """P̂ against the data's distribution: one mismatch naming the worst cell (and how many differ), or none."""
    gap = np.abs(p_hat - public.distribution)
    if float(gap.max()) > STOCHASTIC_TOLERANCE:
        s, u = np.unravel_index(int(np.argmax(gap)), gap.shape)
        differ = int(np.count_nonzero(gap > STOCHASTIC_TOLERANCE))
        message = (
            f"public_distribution{_cell(alphabet, int(s), int(u))}: the document says {float(p_hat[s, u]):.6g}, "
            f"the data gives {float(public.distribution[s, u]):.6g} ({differ} of {gap.size} cells differ)"
        )
        return [Mismatch("public_distribution", float(p_hat[s, u]), float(public.distribution[s, u]), message)]
    return []


def _n(
    unc: Mapping[str, Any] | None, prov: Mapping[str, Any] | None, public: PublicCounts
) -> tuple[list[Mismatch], list[str]]:
    """Each n the document states (privacy.uncertainty.n, provenance.n) against the data's row count."""
    mismatches: list[Mismatch] = []
    notes: list[str] = []
    claimed = {
        "privacy.uncertainty.n": None if unc is None else unc.get("n"),
        "provenance.n": prov["n"] if prov else None,
    }
    stated = {k: v for k, v in claimed.items() if v is not None}
    for value in sorted(set(stated.values())):
        if value != public.n:
            where = ", ".join(k for k, v in stated.items() if v == value)
            mismatches.append(
                Mismatch("n", value, public.n, f"n: the document says {value} ({where}), the data has {public.n}")
            )
    if not stated:
        notes.append("the document states no n")
    return mismatches, notes
