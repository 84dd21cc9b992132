"""Conformance cases for checking a document's public data (``public-data.json``, suite ``public-data``).

An app holding a copy of the public data a mechanism was designed from recomputes its counts over S × U and
compares them with the document's P̂, n, radius and ``provenance.counts_sha256``
(``rldp.shared.provenance.check_public_data``; the TypeScript SDK's ``checkPublicData``). Each case is a
document (JSON text), the public data as ``columns`` (``{name: [cells]}``, text as in a CSV) and optionally
``beta``. ``expect``: ``verdict`` (``passed``, ``failed`` or ``error``), ``error`` (the error class or null),
``fields`` (the mismatched fields, in order), ``n`` and ``counts_sha256`` (the data's: both clients hash the
same canonical counts). Expected results come from the Python client
(``python_client.public_data_outcome``); called by ``generate.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rldp.shared.document import build_document, to_json
from rldp.shared.numeric import NumericSpec
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet, Attribute
from rldp.shared.tables import Table
from rldp.shared.uncertainty import confidence_radius

Doc = dict[str, Any]
Columns = dict[str, list[str]]

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "red", "?"))


def _rows(counts: dict[tuple[str, ...], int], names: tuple[str, ...]) -> Columns:
    """Columns holding ``count`` rows of every cell, cells interleaved (not sorted: the order must not matter)."""
    rows = [cell for cell, k in counts.items() for _ in range(k)]
    rows = rows[1::2] + rows[::2]
    return {name: [r[j] for r in rows] for j, name in enumerate(names)}


def _document(
    alphabet: Alphabet,
    columns: Columns,
    *,
    notion: str = "rldp",
    n: int | None = None,
    beta: float | None = 0.05,
    radius: float | None | str = "confidence",
    provenance: bool | dict[str, Any] = True,
    latent: bool = False,
) -> str:
    """A GRR document whose P̂, n and radius are those of ``columns`` (or ``n`` stated instead)."""
    public = PublicCounts.from_table(Table.from_columns(columns), alphabet, name="public.csv")
    stated_n = public.n if n is None else n
    privacy: dict[str, Any] = {"notion": notion, "epsilon": 2.0}
    if notion != "ldp":
        r = confidence_radius(stated_n, beta or 0.05, alphabet.shape[0] * alphabet.shape[1], 2.0)
        unc: dict[str, Any] = {"order": 2.0, "radius": r if radius == "confidence" else radius, "n": stated_n}
        if beta is not None:
            unc["beta"] = beta
        privacy["uncertainty"] = unc
    k = alphabet.size
    e = np.exp(2.0)
    q = np.full((k, k), 1 / (e + k - 1)) + np.eye(k) * ((e - 1) / (e + k - 1))
    extra: dict[str, Any] = {}
    if provenance:
        prov = public.provenance()
        prov["n"] = stated_n
        if isinstance(provenance, dict):
            prov.update(provenance)
        extra["provenance"] = prov
    p_hat = public.distribution
    doc = build_document(
        method="grr", matrix=q, alphabet=alphabet, public_distribution=p_hat, privacy=privacy, extra=extra
    )
    return to_json(doc)


def public_data_cases(case: Callable[[str, Doc], Doc]) -> list[Doc]:
    out: list[Doc] = []

    def add(name: str, document: str, columns: Columns, **fields: Any) -> None:
        out.append(case(f"public-data/{name}", {"document": document, "columns": columns, **fields}))

    alpha = Alphabet(SEX, [COLOUR])
    counts = {("Female", "blue"): 3, ("Female", "red"): 5, ("Female", "?"): 1, ("Male", "blue"): 4}
    counts |= {("Male", "red"): 2, ("Male", "?"): 6}
    data = _rows(counts, ("sex", "colour"))
    doc = _document(alpha, data)
    add("same-data", doc, data)
    add("same-data-other-row-order", doc, {k: v[::-1] for k, v in data.items()})
    add("same-data-extra-column", doc, {**data, "age": ["1"] * len(data["sex"])})
    add("same-data-beta-1e-6", doc, data, beta=1e-6)  # a stricter level: the radius no longer suffices
    add("same-data-beta-0.5", doc, data, beta=0.5)
    changed = {k: list(v) for k, v in data.items()}
    changed["colour"][0] = "red" if changed["colour"][0] != "red" else "blue"
    add("one-row-changed", doc, changed)
    add("one-row-more", doc, {k: [*v, v[0]] for k, v in data.items()})
    add("half-the-rows", doc, {k: v[: len(v) // 2] for k, v in data.items()})
    bigger = {k: v * 10 for k, v in data.items()}
    add("inflated-n", _document(alpha, bigger), data)  # P̂ the same, n ten times the data's
    add("stated-n-inflated", _document(alpha, data, n=10 * len(data["sex"])), data)
    add("radius-unbounded", _document(alpha, data, radius=None), data)
    add("radius-too-small", _document(alpha, data, radius=1e-6), data)
    add("no-beta-stated", _document(alpha, data, beta=None), data)
    add("no-provenance", _document(alpha, data, provenance=False), data)
    add("ldp-no-uncertainty-set", _document(alpha, data, notion="ldp"), data)
    add("provenance-columns-reversed", _document(alpha, data, provenance={"columns": ["colour", "sex"]}), data)
    add("provenance-hash-wrong", _document(alpha, data, provenance={"counts_sha256": "0" * 64}), data)
    policy = {"policy": {"filter": "complete-rows", "missing": "as-value"}}
    add("provenance-other-policy", _document(alpha, data, provenance=policy), data)
    add("missing-column", doc, {"sex": data["sex"]})
    add("value-outside-alphabet", doc, {**data, "colour": [*data["colour"][:-1], "green"]})
    add("no-rows", doc, {"sex": [], "colour": []})

    # Latent S, several sensitive attributes, a numeric attribute, text that JSON escapes.
    add("latent-s", _document(Alphabet(SEX, [COLOUR], latent=True), data), data)
    two = Alphabet(Alphabet(SEX, [COLOUR]).sensitive_attributes + (Attribute("smoker", ("no", "yes")),), [COLOUR])
    three = {
        ("Female", "no", "blue"): 2,
        ("Male", "yes", "red"): 3,
        ("Male", "no", "?"): 4,
        ("Female", "yes", "red"): 1,
    }
    data3 = _rows(three, ("sex", "smoker", "colour"))
    add("two-sensitive-attributes", _document(two, data3), data3)
    age = Attribute.binned("age", NumericSpec((0.0, 18.0, 65.0, 120.0), "left"))
    ages = {("Female", "3"): 2, ("Female", "18"): 3, ("Male", "64.5"): 4, ("Male", "119"): 1, ("Female", "70"): 2}
    data_age = _rows(ages, ("sex", "age"))
    numeric_alpha = Alphabet(SEX, [age])
    add("numeric-attribute", _document(numeric_alpha, data_age), data_age)
    add(
        "numeric-attribute-not-a-number",
        _document(numeric_alpha, data_age),
        {**data_age, "age": ["x", *data_age["age"][1:]]},
    )
    texts = Attribute("city", ("Zürich", "中文", 'quo"te', "back\\slash", "𝔘nicode", "a/b", "emoji 👩\u200d💻"))
    cities = {("Female", v): i + 1 for i, v in enumerate(texts.values)} | {("Male", "中文"): 5}
    data_city = _rows(cities, ("sex", "city"))
    add("text-escaped-in-json", _document(Alphabet(SEX, [texts]), data_city), data_city)
    return out
