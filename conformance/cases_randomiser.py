"""Cases of the randomiser suite (cases/randomiser.json): the memo's key, the same in every client.

Each case holds documents as a client downloads them (:func:`written.written`: JSON text or msgpack
bytes) and ``expect``: each document's randomiser key (``keys``), whether they are all one randomiser
(``same``), and the canonical text the first one's key hashes (``text``, for a small document), as
:func:`rldp.shared.document.randomiser_key` gives them. ``same/...``: documents that differ only in
what does not change the distribution of a draw (the collection window, the method, the privacy claim,
P̂, the per-report layer's claimed ε₁, labels, the encoding); ``distinct/...``: one entry of Q moved,
an alphabet reordered or renamed, bin edges moved, another R, the same Q in another matrix form (the
key is conservative). Regenerate with ``.venv/bin/python conformance/generate.py randomiser``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from python_client import randomiser_outcome
from written import rehash, written

from rldp.aggregator.design import add_per_report_layer, grr_matrix
from rldp.shared.document import build_document, randomiser_key
from rldp.shared.document.arrays import encode_array
from rldp.shared.numeric import NumericSpec
from rldp.shared.records import Alphabet, Attribute

__all__ = ["randomiser_cases"]

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "green", "red"))
A = Alphabet(SEX, [COLOUR])


def _doc(q: np.ndarray, alphabet: Alphabet = A, *, compact: bool | None = None, **extra: Any) -> dict[str, Any]:
    epsilon = float(extra.pop("epsilon", 1.0))
    method = str(extra.pop("method", "grr"))
    public = extra.pop("public", np.full(alphabet.shape, 1 / alphabet.size))
    return build_document(
        method=method,
        matrix=q,
        alphabet=alphabet,
        public_distribution=public,
        privacy={"notion": "rldp", "epsilon": epsilon, "uncertainty": {"order": 2, "radius": None}},
        extra=extra,
        compact=compact,
    )


def _moved(q: np.ndarray, column: int, amount: float) -> np.ndarray:
    """Q with ``amount`` of column ``column``'s mass moved from its first row to its second (still stochastic)."""
    out = q.copy()
    out[0, column] -= amount
    out[1, column] += amount
    return out


def _case(name: str, docs: list[dict[str, Any]], encodings: list[str] | None = None) -> dict[str, Any]:
    encodings = encodings or ["json"] * len(docs)
    case: dict[str, Any] = {
        "name": name,
        "documents": [written(doc, enc) for doc, enc in zip(docs, encodings, strict=True)],
    }
    case["expect"] = randomiser_outcome(case)  # what the Python client does (it verifies each document)
    if case["expect"]["keys"] != [randomiser_key(doc) for doc in docs]:
        raise AssertionError(f"{name}: the documents read back with other keys")
    return case


def randomiser_cases() -> list[dict[str, Any]]:
    q = grr_matrix(A.size, 1.0)
    base = _doc(q, tag="day 1")
    layered = add_per_report_layer(base, 0.5)
    ages = [Attribute.binned("age", NumericSpec(edges)) for edges in ((0.0, 30.0, 60.0, 90.0), (0.0, 25.0, 60.0, 90.0))]
    numeric = [Alphabet(SEX, [age]) for age in ages]
    dense = {"form": "dense", "shape": list(q.shape), "data": encode_array(q, "float64")}
    reordered = Alphabet(SEX, [Attribute("colour", ("red", "green", "blue"))])
    renamed = Alphabet(SEX, [Attribute("color", COLOUR.values)])
    cases = [
        _case("same/rotation-labels", [base, _doc(q, tag="day 2"), _doc(q, tag="day 3", rotation=3)]),
        _case(
            "same/collection-window",
            [base, _doc(q, tag="day 1", collection={"window": "P1D"}), _doc(q, collection={"window": "PT6H"})],
        ),
        _case(
            "same/method-claim-public",
            [base, _doc(q, method="polyopt", epsilon=1.5, public=np.arange(1, 7).reshape(2, 3) / 21)],
        ),
        _case("same/encodings", [base, base], ["json", "msgpack"]),
        _case(
            "same/grr-form-rotated",
            [_doc(q, compact=True), _doc(q, compact=True, collection={"window": "P1W"}, tag="next")],
            ["msgpack", "json"],
        ),
        _case(
            "same/per-report-claim",
            [layered, _relayered(layered, 0.55, "day 2")],
        ),
        _case("distinct/one-column-moved", [base, _doc(_moved(q, 4, 1e-9), epsilon=1.1, tag="day 1")]),
        _case("distinct/alphabet-reordered", [base, _doc(q, reordered, tag="day 1")]),
        _case("distinct/attribute-renamed", [base, _doc(q, renamed, tag="day 1")]),
        _case("distinct/bin-edges", [_doc(q, numeric[0]), _doc(q, numeric[1])]),
        _case("distinct/per-report-layer", [base, layered]),
        _case("distinct/per-report-matrix", [layered, add_per_report_layer(base, 0.8)]),
        _case("distinct/rows-or-dense-form", [base, _doc(dense, tag="day 1")]),
    ]
    for case in cases:
        want_same = case["name"].startswith("same/")
        if case["expect"]["same"] != want_same:
            raise AssertionError(f"{case['name']}: keys {case['expect']['keys']}")
    return cases


def _relayered(doc: dict[str, Any], epsilon_1: float, tag: str) -> dict[str, Any]:
    """``doc`` with the same R, another claimed ε₁ (still ≥ the audited one: a claim, not a distribution), a tag."""
    out = {k: v for k, v in doc.items() if k != "id"}
    out["tag"] = tag
    out["collection"] = {**doc["collection"], "per_report": {**doc["collection"]["per_report"], "epsilon": epsilon_1}}
    return rehash(out)
