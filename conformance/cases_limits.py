"""Conformance cases for the clients' size limits and for hostile documents (``limits.json``).

Both clients refuse these the same way (issue 35, D25): an alphabet over ``MAX_SYMBOLS`` is refused
while reading, before any matrix (``DocumentError``); a compact matrix whose audit would expand more
than ``MAX_DENSE_AUDIT_ENTRIES`` entries is refused before the audit (``MechanismRejected``, rule
``audit_error``), while GRR under rldp/ldp, audited from its two values, is accepted up to
``MAX_SYMBOLS``. Also: each notion's claim at the edge of the audit tolerance, and malformed compact
forms (GRR, palette, dense) in both encodings. Expected results come from the Python client
(``python_client.document_outcome``); called by ``generate.py``.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
from written import rehash, written

from rldp.shared.audit import AUDIT_TOLERANCE, audit_document
from rldp.shared.document import MAX_SYMBOLS, build_document, to_json, to_msgpack
from rldp.shared.records import Alphabet, Attribute

Doc = dict[str, Any]

SEX = Attribute("sex", ("Female", "Male"))
_UNC = {"divergence": "renyi", "order": 2.0, "radius": 0.0}


def _alphabet(k: int) -> Alphabet:
    """An alphabet of |X| = k = 2·m (sex × one released attribute), or 3·m for a k divisible by 3."""
    if k % 2 == 0:
        return Alphabet(SEX, [Attribute("item", tuple(f"v{i}" for i in range(k // 2)))])
    assert k % 3 == 0
    return Alphabet(Attribute("s", ("a", "b", "c")), [Attribute("item", tuple(f"v{i}" for i in range(k // 3)))])


def _privacy(notion: str, eps: float = 2.0) -> dict[str, Any]:
    if notion == "ldp":
        return {"notion": "ldp", "epsilon": eps}
    out: dict[str, Any] = {"notion": notion, "epsilon": eps, "uncertainty": dict(_UNC)}
    if notion == "alip":
        out.update(epsilon_lower=eps, epsilon_upper=eps)
    if notion == "distp":
        out["delta"] = 0.0
    return out


def _grr_spec(k: int, eps: float = 1.0) -> dict[str, Any]:
    e = math.exp(eps)
    off = 1.0 / (e + k - 1)
    return {"form": "grr", "size": k, "diagonal": 1.0 - (k - 1) * off, "off_diagonal": off}


def grr_document(k: int, notion: str, extra: dict[str, Any] | None = None) -> Doc:
    """A valid GRR document (format 3, two numbers for K² entries) of |X| = k under ``notion``."""
    alpha = _alphabet(k)
    return build_document(
        method="grr",
        matrix=_grr_spec(k),
        alphabet=alpha,
        public_distribution=np.full(alpha.shape, 1.0 / alpha.size),
        privacy=_privacy(notion),
        extra=extra or {},
    )


def _claimed(k: int, notion: str) -> Doc:
    """A GRR document of k symbols (over MAX_SYMBOLS), written by hand as build_document refuses it."""
    alpha = _alphabet(k) if k <= 3 * MAX_SYMBOLS else None
    doc: Doc = {
        "format": "rldp.mechanism/3",
        "id": "0" * 64,
        "method": "grr",
        "privacy": _privacy(notion),
        "matrix": _grr_spec(k),
        "public_distribution": [[0.5], [0.5]],
    }
    if alpha is not None:  # otherwise correct and correctly hashed: only |X| refuses it
        d = alpha.to_dict()
        doc.update(sensitive=d["sensitive"], released=d["released"])
        doc["public_distribution"] = np.full(alpha.shape, 1.0 / alpha.size).tolist()
    return rehash(doc)


def _product(attrs: int, values: int) -> Doc:
    """|X| = 2·values^attrs from 2 + attrs·values strings (a tiny document, a huge alphabet)."""
    released = [{"name": f"a{j}", "values": [f"v{i}" for i in range(values)]} for j in range(attrs)]
    return {
        "format": "rldp.mechanism/3",
        "id": "0" * 64,
        "method": "grr",
        "privacy": _privacy("lip"),
        "sensitive": {"name": "sex", "values": ["Female", "Male"]},
        "released": released,
        "public_distribution": [[0.5], [0.5]],
        "matrix": {"form": "grr", "size": 2 * values**attrs, "diagonal": 0.5, "off_diagonal": 0.0},
    }


def _f64(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}d", *values)).decode("ascii")


def _small() -> Doc:
    """A valid 6-symbol rldp document in palette form: the base of the malformed compact forms."""
    q = np.array(grr_matrixish(6))
    values, index = np.unique(q, return_inverse=True)
    alpha = _alphabet(6)
    spec = {
        "form": "palette",
        "shape": [6, 6],
        "index_type": "uint8",
        "values": _f64(values.tolist()),
        "index": base64.b64encode(index.astype("<u1").tobytes()).decode(),
    }
    return build_document(
        method="grr",
        matrix=spec,
        alphabet=alpha,
        public_distribution=np.full(alpha.shape, 1.0 / alpha.size),
        privacy=_privacy("rldp"),
    )


def grr_matrixish(k: int) -> list[list[float]]:
    spec = _grr_spec(k)
    return [[spec["diagonal"] if y == x else spec["off_diagonal"] for x in range(k)] for y in range(k)]


def _edge_claims(add: Callable[[str, list[Doc]], None]) -> None:
    """Each notion's claim at the audit's tolerance: the audited ε less half the tolerance passes, less
    twice the tolerance fails (a client that rounds differently, or loosens the check, disagrees)."""
    for notion in ("rldp", "ldp", "lip", "alip", "distp", "srlip"):
        doc = grr_document(6, notion)
        audited = audit_document(doc)
        eps = float(audited.epsilon)
        for label, claim in (("passes", eps - AUDIT_TOLERANCE / 2), ("fails", eps - 2 * AUDIT_TOLERANCE)):
            privacy = dict(doc["privacy"], epsilon=claim)
            if notion == "alip":
                privacy.update(epsilon_lower=claim, epsilon_upper=claim)
            edge = build_document(
                method="grr",
                matrix=doc["matrix"],
                alphabet=_alphabet(6),
                public_distribution=doc["public_distribution"],
                privacy=privacy,
            )
            add(f"edge/{notion}-claim-{label}", [written(edge, "json")])


def limits(case: Callable[..., Doc]) -> list[Doc]:
    out: list[Doc] = []

    def add(name: str, bodies: list[Doc], **fields: Any) -> None:
        for body in bodies:
            out.append(case(f"limits/{name}/{body['encoding']}", body, **fields))

    def both(doc: Any) -> list[Doc]:
        return [written(doc, "json"), written(doc, "msgpack")]

    def both_hashed(doc: Doc) -> list[Doc]:
        return [
            {"encoding": "json", "document": to_json(doc)},
            {"encoding": "msgpack", "document_base64": base64.b64encode(to_msgpack(doc)).decode("ascii")},
        ]

    # |X| at and over MAX_SYMBOLS; the dense-audit cap of each notion (GRR: structured under rldp/ldp only). The
    # large documents are written once or twice (JSON; msgpack for one of each kind): the file stays small.
    add(f"symbols/{MAX_SYMBOLS}-grr-rldp", both_hashed(grr_document(MAX_SYMBOLS, "rldp")))
    add(f"symbols/{MAX_SYMBOLS}-grr-ldp", both_hashed(grr_document(MAX_SYMBOLS, "ldp"))[:1])
    for notion in ("lip", "alip", "distp", "srlip"):
        add(f"dense-cap/4098-grr-{notion}", both_hashed(grr_document(4098, notion))[:1])
    add(f"dense-cap/{MAX_SYMBOLS}-grr-lip", both_hashed(grr_document(MAX_SYMBOLS, "lip")))
    add(f"dense-cap/{MAX_SYMBOLS}-grr-distp", both_hashed(grr_document(MAX_SYMBOLS, "distp"))[:1])
    add(f"symbols/{MAX_SYMBOLS + 1}-rldp", both(_claimed(MAX_SYMBOLS + 1, "rldp")))
    for notion in ("lip", "distp"):
        add(f"symbols/{MAX_SYMBOLS + 1}-{notion}", both(_claimed(MAX_SYMBOLS + 1, notion))[:1])
    add(f"symbols/{2 * MAX_SYMBOLS}-grr-lip", both(_claimed(2 * MAX_SYMBOLS, "lip"))[:1])
    add("symbols/product-2x200^3", both(_product(3, 200)))
    add("symbols/product-2x1000^6", both(_product(6, 1000)))
    # A per-report layer is audited densely (R·Q), even over a GRR matrix: K² + |Y'|·K over the cap.
    r = [[0.5] * 4096, [0.5] * 4096]
    add(
        "dense-cap/4096-grr-rldp-per-report",
        [both_hashed(grr_document(4096, "rldp", {"collection": {"per_report": {"epsilon": 1.0, "matrix": r}}}))[0]],
    )
    add(
        "dense-cap/unknown-notion-grr",
        both(rehash({**grr_document(6, "rldp"), "privacy": {"notion": "gdp", "epsilon": 1.0}})),
    )

    _edge_claims(add)

    # Malformed compact forms.
    g = grr_document(6, "rldp")
    gm = g["matrix"]
    for label, matrix in (
        ("grr-size-float", {**gm, "size": 6.0}),
        ("grr-size-string", {**gm, "size": "6"}),
        ("grr-size-bool", {**gm, "size": True}),
        ("grr-size-zero", {**gm, "size": 0}),
        ("grr-diagonal-negative", {**gm, "diagonal": -gm["diagonal"]}),
        ("grr-diagonal-string", {**gm, "diagonal": "0.5"}),
        ("grr-missing-off-diagonal", {k: v for k, v in gm.items() if k != "off_diagonal"}),
        ("no-form", {k: v for k, v in gm.items() if k != "form"}),
        ("empty-object", {}),
        ("matrix-string", "grr"),
    ):
        add(f"malformed/{label}", both(rehash({**g, "matrix": matrix})))
    add("malformed/grr-size-2^64", [written(rehash({**g, "matrix": {**gm, "size": 2**64}}), "json")])
    add("malformed/grr-diagonal-nan", [written(rehash({**g, "matrix": {**gm, "diagonal": float("nan")}}), "msgpack")])
    add(
        "malformed/grr-off-diagonal-inf",
        [written(rehash({**g, "matrix": {**gm, "off_diagonal": float("inf")}}), "msgpack")],
    )
    p = _small()
    pm = p["matrix"]
    values = list(struct.unpack(f"<{len(base64.b64decode(pm['values'])) // 8}d", base64.b64decode(pm["values"])))
    index = base64.b64decode(pm["index"])
    for label, matrix in (
        ("palette-index-short", {**pm, "index": base64.b64encode(index[:-1]).decode()}),
        ("palette-index-out-of-range", {**pm, "index": base64.b64encode(index[:-1] + bytes([len(values)])).decode()}),
        ("palette-index-type-uint32", {**pm, "index_type": "uint32"}),
        (
            "palette-values-not-multiple-of-8",
            {**pm, "values": base64.b64encode(base64.b64decode(pm["values"])[:-1]).decode()},
        ),
        ("palette-values-nan", {**pm, "values": _f64([*values[:-1], float("nan")])}),
        ("palette-shape-1d", {**pm, "shape": [36]}),
        ("palette-shape-3d", {**pm, "shape": [6, 6, 1]}),
        ("palette-shape-negative", {**pm, "shape": [-6, -6]}),
        ("palette-shape-huge", {**pm, "shape": [2**31, 2**31]}),
    ):
        add(f"malformed/{label}", [written(rehash({**p, "matrix": matrix}), "json")])
    q = grr_matrixish(6)
    flat = [v for row in q for v in row]
    dense = {"form": "dense", "shape": [6, 6], "data": _f64(flat)}
    for label, matrix in (
        ("dense-data-short", {**dense, "data": _f64(flat[:-1])}),
        ("dense-data-inf", {**dense, "data": _f64([math.inf, *flat[1:]])}),
        ("dense-shape-zero", {**dense, "shape": [0, 6]}),
        ("dense-extra-field", {**dense, "note": "x"}),
        ("dense-data-list", {**dense, "data": flat}),
    ):
        add(f"malformed/{label}", [written(rehash({**g, "matrix": matrix}), "json")])
    return out
