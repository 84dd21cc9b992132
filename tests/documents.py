"""Small mechanism documents for tests, built from rldp.shared only (no aggregator, no scipy):
the client's unit tests import them on a client-only install (``make test-client-only``)."""

from __future__ import annotations

import json
import math
import uuid
from typing import Any

import numpy as np

from rldp.shared.document import build_document
from rldp.shared.records import Alphabet, Attribute

__all__ = ["ADMIN_TOKEN", "READ_TOKEN", "SMALL_ALPHABET", "grr", "make_document", "tampered"]

ADMIN_TOKEN = "test-admin-token-0123456789abcdef"
READ_TOKEN = "test-read-token-0123456789abcdef"

SMALL_ALPHABET = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("colour", ("blue", "green", "red"))])


def grr(k: int, epsilon: float) -> np.ndarray:
    """GRR on k symbols by its definition [LZG24, eq. 56]: e^ε/(e^ε + k − 1) on the diagonal, 1/(e^ε + k − 1)
    elsewhere; equal to the designer's ``grr_matrix`` (tests/aggregator/design/test_documents_helper.py)."""
    # The designer's arithmetic (divided by e^ε first), so the same documents and ids as with it.
    diag = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    q = np.full((k, k), diag * math.exp(-epsilon))
    np.fill_diagonal(q, diag)
    return q


def make_document(
    tag: str | None = None,
    *,
    epsilon: float = 1.0,
    leak: float | None = None,
    alphabet: Alphabet = SMALL_ALPHABET,
    window: str | None = None,
) -> dict[str, Any]:
    """A small valid GRR mechanism claiming (ε, all distributions)-RLDP; unique per ``tag``.

    With ``leak``, the matrix is GRR at ε = ``leak`` while the document still claims
    ``epsilon``: a correctly hashed document that fails its audit. With ``window`` (e.g.
    "P1D") it collects by window: ``"collection": {"window": window}``.
    """
    extra: dict[str, Any] = {"test": tag or uuid.uuid4().hex}
    if window is not None:
        extra["collection"] = {"window": window}
    k = alphabet.size
    return build_document(
        method="grr",
        matrix=grr(k, leak if leak is not None else epsilon),
        alphabet=alphabet,
        public_distribution=np.full(alphabet.shape, 1.0 / k),
        privacy={"notion": "rldp", "epsilon": epsilon, "uncertainty": {"order": 2, "radius": None}},
        extra=extra,
    )


def tampered(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with two matrix entries swapped (still stochastic) but the old id."""
    out = json.loads(json.dumps(doc))
    col = [row[0] for row in out["matrix"]]
    out["matrix"][0][0], out["matrix"][1][0] = col[1], col[0]
    if col[0] == col[1]:
        out["matrix"][0][0], out["matrix"][1][0] = col[0] * 0.5, col[1] + col[0] * 0.5
    return out
