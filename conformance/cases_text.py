"""Conformance cases for the text of a document's attribute names and values (``text.json``).

A mechanism document's attribute names and category values reach CSV exports, terminals and pages, so both
clients refuse a document whose names or values hold a control character (C0 incl. tab, CR, LF, NUL and
ESC; DEL; C1 incl. U+0085 and U+009B), a format character (the bidi marks U+200E/U+200F/U+061C, embeddings
and overrides U+202A–U+202E, isolates U+2066–U+2069, U+200B, U+FEFF, U+00AD, language tags), a line or
paragraph separator (U+2028/U+2029) or a lone surrogate: a ``DocumentError`` while reading
(``rldp.shared.parameters.check_text``, the rule of labels and descriptions). The zero-width (non-)joiners,
the no-break space and printable non-ASCII text are accepted. Every refused document is correctly hashed:
only its text refuses it. Expected results come from the Python client
(``python_client.document_outcome``); called by ``generate.py``.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from typing import Any

import msgpack
import numpy as np

from rldp.shared.document import build_document, content_id
from rldp.shared.errors import DocumentError
from rldp.shared.records import Alphabet, Attribute

Doc = dict[str, Any]

#: Refused: (label, character).
REFUSED = [
    ("nul", "\x00"),
    ("tab", "\t"),
    ("lf", "\n"),
    ("cr", "\r"),
    ("esc", "\x1b"),
    ("del", "\x7f"),
    ("nel-u0085", "\x85"),
    ("csi-u009b", "\x9b"),
    ("soft-hyphen-u00ad", "\xad"),
    ("alm-u061c", "\u061c"),
    ("zwsp-u200b", "\u200b"),
    ("lrm-u200e", "\u200e"),
    ("rlm-u200f", "\u200f"),
    ("line-separator-u2028", "\u2028"),
    ("paragraph-separator-u2029", "\u2029"),
    ("lre-u202a", "\u202a"),
    ("rle-u202b", "\u202b"),
    ("pdf-u202c", "\u202c"),
    ("lro-u202d", "\u202d"),
    ("rlo-u202e", "\u202e"),
    ("lri-u2066", "\u2066"),
    ("rli-u2067", "\u2067"),
    ("fsi-u2068", "\u2068"),
    ("pdi-u2069", "\u2069"),
    ("bom-ufeff", "\ufeff"),
    ("language-tag-ue0001", "\U000e0001"),
]
#: Accepted: printable text and the joiners.
ACCEPTED = [
    ("zwnj-u200c", "\u200c"),
    ("zwj-u200d", "\u200d"),
    ("nbsp-u00a0", "\xa0"),
    ("accented", "é"),
    ("cjk", "中文"),
    ("emoji-zwj-sequence", "👩\u200d💻"),
    ("arabic", "عربي"),
    # A format character of Unicode 15.0 (EGYPTIAN HIEROGLYPH INSERT AT MIDDLE): the refused set is Unicode
    # 14.0's, frozen in both clients (rldp.shared.format_characters), so a newer runtime refuses no more.
    ("format-after-unicode-14-u13439", "\U00013439"),
]


def _base() -> Doc:
    alpha = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("race", ("Black", "Other", "White"))])
    q = np.full((6, 6), 0.5 / 5) + np.eye(6) * (0.5 - 0.5 / 5)
    return build_document(
        method="grr",
        matrix=q,
        alphabet=alpha,
        public_distribution=np.full(alpha.shape, 1 / 6),
        privacy={"notion": "rldp", "epsilon": 3.0, "uncertainty": {"order": 2.0, "radius": 0.0}},
    )


def _hashed(doc: Doc) -> Doc:
    """``doc`` with the id its content hashes to (computed without validating it: only the text refuses it)."""
    try:
        return {**doc, "id": content_id(doc)}
    except DocumentError:  # a lone surrogate has no UTF-8 form, so no content id
        return {**doc, "id": "0" * 64}


def _edit(where: str, text: str) -> Doc:
    doc = copy.deepcopy(_base())
    if where == "sensitive-name":
        doc["sensitive"]["name"] = "se" + text + "x"
    elif where == "sensitive-value":
        doc["sensitive"]["values"][1] = "Ma" + text + "le"
    elif where == "released-name":
        doc["released"][0]["name"] = text + "race"
    else:
        doc["released"][0]["values"][2] = "Whi" + text + "te"
    return _hashed(doc)


def _encodings(doc: Doc, text: str) -> list[Doc]:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: JSON only, escaped (UTF-8 cannot carry it)
        return [{"encoding": "json", "document": json.dumps(doc, ensure_ascii=True)}]
    data = msgpack.packb(doc, use_bin_type=True)
    return [
        {"encoding": "json", "document": json.dumps(doc, ensure_ascii=False)},
        {"encoding": "msgpack", "document_base64": base64.b64encode(data).decode("ascii")},
    ]


def text_cases(case: Callable[..., Doc]) -> list[Doc]:
    out: list[Doc] = []

    def add(name: str, where: str, text: str) -> None:
        for body in _encodings(_edit(where, text), text):
            out.append(case(f"text/{name}/{where}/{body['encoding']}", body))

    for label, ch in REFUSED:  # every refused character in a category value
        add(f"refused/{label}", "released-value", ch)
    for where in ("sensitive-name", "sensitive-value", "released-name"):  # and a few in every other place
        for label, ch in (("cr", "\r"), ("line-separator-u2028", "\u2028"), ("rlo-u202e", "\u202e")):
            add(f"refused/{label}", where, ch)
    add("refused/lone-surrogate-ud800", "released-value", "\ud800")
    add("refused/lone-surrogate-udfff", "sensitive-name", "\udfff")
    # A lone surrogate elsewhere (no content id can be computed: UTF-8 cannot carry it).
    for field, value in (("method", "grr\ud800"), ("extra", "\udc00")):
        doc = {**_base(), field: value, "id": "0" * 64}
        out.append(case(f"text/refused/lone-surrogate-in-{field}/json", _encodings(doc, "\ud800")[0]))
    for label, text in ACCEPTED:
        add(f"accepted/{label}", "released-value", text)
    add("accepted/zwj-u200d", "sensitive-name", "\u200d")
    return out
