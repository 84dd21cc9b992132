"""Conformance cases for numeric attributes (issue 38): ``numeric-documents.json`` and ``numeric-records.json``.

Documents: valid ones whose attributes carry ``"numeric": {"edges", "closed"}`` (closed left and right,
1 bin to 1,024, S numeric and U numeric, a latent S, edges written as ints or floats: the id covers the
block as written) and hostile ones (unsorted, duplicate or non-finite edges, too many bins, a label count
other than the bin count, unknown keys): each refused with ``DocumentError`` while reading.

Records: a value → its input index x = s·|U| + bin. ``"typed": true`` cases write a value JSON cannot
(or that JavaScript's JSON.parse would round) as ``{"int": "<digits>"}`` (a Python int; a bigint in
JavaScript when it is not a safe integer) or ``{"float": "<repr>"}`` (``"nan"``, ``"inf"``, ``"-0.0"``).
Expected results come from the Python client (``python_client``); called by ``generate.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from written import rehash, written

from rldp.shared.document import build_document
from rldp.shared.numeric import MAX_BINS, NumericSpec
from rldp.shared.records import Alphabet, Attribute

Doc = dict[str, Any]

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "green", "red"))
AGES = (17.0, 25.0, 35.0, 50.0, 90.0)
_HUGE = 123456.78125  # written as 1e400 in the JSON text
_UNC = {"divergence": "renyi", "order": 2.0, "radius": 0.0}


def _grr(k: int, eps: float = 1.0) -> Doc:
    e = np.exp(eps)
    off = 1.0 / (e + k - 1)
    return {"form": "grr", "size": k, "diagonal": 1.0 - (k - 1) * off, "off_diagonal": off}


def _document(alpha: Alphabet) -> Doc:
    return build_document(
        method="grr",
        matrix=_grr(alpha.size),
        alphabet=alpha,
        public_distribution=np.full(alpha.shape, 1.0 / (alpha.n_sensitive * alpha.n_released)),
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": dict(_UNC)},
    )


def _age(edges: tuple[float, ...] = AGES, closed: str = "left", name: str = "age") -> Attribute:
    return Attribute.binned(name, NumericSpec(edges, closed))


def _with_block(base: Doc, block: Any, values: Any = None) -> Doc:
    """``base`` (U = age) with its released attribute's numeric block (and values) replaced, rehashed."""
    doc = json.loads(json.dumps(base))
    doc["released"][0]["numeric"] = block
    if values is not None:
        doc["released"][0]["values"] = values
    return doc


def documents(case: Callable[..., Doc]) -> list[Doc]:
    out: list[Doc] = []

    def add(name: str, doc: Any, encodings: tuple[str, ...] = ("json", "msgpack"), hashed: bool = True) -> None:
        body = rehash(doc) if hashed else doc
        for enc in encodings:
            raw = written(body, enc)
            if enc == "json":  # a number JSON may write but Python's json.dumps would not: 1e400 (inf)
                raw["document"] = raw["document"].replace(str(_HUGE), "1e400")
            out.append(case(f"numeric/{name}/{enc}", raw))

    u_left = _document(Alphabet(SEX, [_age()]))
    valid = {
        "u-left-4bins": u_left,
        "u-right-4bins": _document(Alphabet(SEX, [_age(closed="right")])),
        "u-1bin": _document(Alphabet(SEX, [_age((0.0, 1.0))])),
        "u-1bin-right": _document(Alphabet(SEX, [_age((0.0, 1.0), "right")])),
        "u-64bins": _document(Alphabet(SEX, [_age(tuple(float(i) for i in range(65)))])),
        f"u-{MAX_BINS}bins": _document(Alphabet(SEX, [_age(tuple(float(i) / 8 for i in range(MAX_BINS + 1)))])),
        "s-numeric-left": _document(Alphabet(_age((0.0, 18.0, 65.0, 120.0)), [COLOUR])),
        "s-numeric-right": _document(Alphabet(_age((0.0, 18.0, 65.0, 120.0), "right"), [COLOUR])),
        "s-and-u-numeric": _document(
            Alphabet(_age((0.0, 40.0, 120.0), name="age"), [_age((0.0, 20.0, 40.0, 99.0), name="hours")])
        ),
        "latent-s-u-numeric": _document(Alphabet(SEX, [_age()], latent=True)),
        "u-numeric-and-categorical": _document(Alphabet(SEX, [COLOUR, _age(closed="right")])),
        "extremes": _document(Alphabet(SEX, [_age((-1e308, -5e-324, 0.0, 5e-324, 1e308))])),
        "fractional": _document(Alphabet(SEX, [_age((0.1, 0.2, 0.30000000000000004, 1.0 / 3))])),
    }
    for name, doc in valid.items():
        add(f"valid/{name}", doc, hashed=False)
    # The id covers the block as written: the same edges as ints hash differently (both accepted); -0.0 as given.
    ints = _with_block(u_left, {"edges": [17, 25, 35, 50, 90], "closed": "left"})
    add("valid/edges-as-ints", ints)
    add("valid/edges-mixed-ints-floats", _with_block(u_left, {"edges": [17, 25.0, 35, 50.5, 90], "closed": "left"}))
    add("valid/block-keys-reordered", _with_block(u_left, {"closed": "left", "edges": list(AGES)}))
    zero = _document(Alphabet(SEX, [_age((0.0, 1.0, 2.0))]))
    add("valid/negative-zero-edge", _with_block(zero, {"edges": [-0.0, 1.0, 2.0], "closed": "left"}))
    tampered = rehash(u_left)
    tampered["released"][0]["numeric"]["closed"] = "right"  # the id kept: the content hashes to another
    add("tampered-closed-side", tampered, hashed=False)
    moved = rehash(u_left)
    moved["released"][0]["numeric"]["edges"][2] = 36.0
    add("tampered-edge", moved, hashed=False)

    labels = u_left["released"][0]["values"]
    hostile: dict[str, Any] = {
        "unsorted-edges": {"edges": [17.0, 35.0, 25.0, 50.0, 90.0], "closed": "left"},
        "decreasing-edges": {"edges": [90.0, 50.0, 35.0, 25.0, 17.0], "closed": "left"},
        "duplicate-edges": {"edges": [17.0, 25.0, 25.0, 50.0, 90.0], "closed": "left"},
        "zero-and-negative-zero": {"edges": [-1.0, -0.0, 0.0, 50.0, 90.0], "closed": "left"},
        "edge-1e400": {"edges": [17.0, 25.0, 35.0, 50.0, _HUGE], "closed": "left"},
        "edge-huge-int": {"edges": [17, 25, 35, 50, 10**400], "closed": "left"},
        "edge-string": {"edges": [17.0, "25", 35.0, 50.0, 90.0], "closed": "left"},
        "edge-boolean": {"edges": [False, True, 35.0, 50.0, 90.0], "closed": "left"},
        "edge-null": {"edges": [17.0, None, 35.0, 50.0, 90.0], "closed": "left"},
        "edge-list": {"edges": [17.0, [25.0], 35.0, 50.0, 90.0], "closed": "left"},
        "one-edge": {"edges": [17.0], "closed": "left"},
        "no-edges": {"edges": [], "closed": "left"},
        "edges-not-a-list": {"edges": "17,25,35,50,90", "closed": "left"},
        "edges-an-object": {"edges": {"0": 17.0}, "closed": "left"},
        "closed-both": {"edges": list(AGES), "closed": "both"},
        "closed-uppercase": {"edges": list(AGES), "closed": "Left"},
        "closed-null": {"edges": list(AGES), "closed": None},
        "closed-missing": {"edges": list(AGES)},
        "edges-missing": {"closed": "left"},
        "unknown-key": {"edges": list(AGES), "closed": "left", "lo": 17.0},
        "unknown-key-labels": {"edges": list(AGES), "closed": "left", "labels": labels},
        "block-a-list": [list(AGES), "left"],
        "block-null": None,
        "block-a-string": "left",
    }
    for name, block in hostile.items():
        json_only = name in ("edge-1e400", "edge-huge-int")  # msgpack has no such numbers
        add(f"hostile/{name}", _with_block(u_left, block), ("json",) if json_only else ("json", "msgpack"))
    add(
        "hostile/edge-nan",
        _with_block(u_left, {"edges": [17.0, float("nan"), 35.0, 50.0, 90.0], "closed": "left"}),
        ("msgpack",),
    )
    add(
        "hostile/edge-inf",
        _with_block(u_left, {"edges": [17.0, 25.0, 35.0, 50.0, float("inf")], "closed": "left"}),
        ("msgpack",),
    )
    add(
        "hostile/edge-minus-inf",
        _with_block(u_left, {"edges": [float("-inf"), 25.0, 35.0, 50.0, 90.0], "closed": "left"}),
        ("msgpack",),
    )
    add("hostile/labels-fewer-than-bins", _with_block(u_left, {"edges": list(AGES), "closed": "left"}, labels[:3]))
    add(
        "hostile/labels-more-than-bins",
        _with_block(u_left, {"edges": list(AGES), "closed": "left"}, [*labels, "[90, 99]"]),
    )
    add("hostile/edges-more-than-labels", _with_block(u_left, {"edges": [*AGES, 99.0], "closed": "left"}))
    many = [float(i) for i in range(MAX_BINS + 2)]
    add(
        f"hostile/{MAX_BINS + 1}-bins",
        _with_block(u_left, {"edges": many, "closed": "left"}, [f"b{i}" for i in range(MAX_BINS + 1)]),
        ("json",),
    )
    big = [float(i) for i in range(100_001)]
    add("hostile/100000-bins", _with_block(u_left, {"edges": big, "closed": "left"}), ("msgpack",))
    return out


# --------------------------------------------------------------------------- records


def _int(v: int) -> dict[str, str]:
    return {"int": str(v)}


def _float(v: float) -> dict[str, str]:
    return {"float": repr(v)}


def records(encode: Callable[[Doc], Doc]) -> list[Doc]:
    """Record → index vectors: ties at every inner edge under both closed sides, lo and hi, clamping,
    extremes, ints against floats, decimal strings and every refusal."""
    left = Alphabet(SEX, [_age()]).to_dict()
    right = Alphabet(SEX, [_age(closed="right")]).to_dict()
    extreme = Alphabet(SEX, [_age((-1.0, 0.0, 5e-324, 1.0, 2.0**53, 2.0**53 + 2, 1e308))]).to_dict()
    s_num = Alphabet(_age((0.0, 18.0, 65.0, 120.0), "right"), [COLOUR]).to_dict()
    latent = Alphabet(SEX, [_age()], latent=True).to_dict()
    items: list[tuple[str, Doc, Any]] = []
    for side, alpha in (("left", left), ("right", right)):
        for e in AGES:
            for form, v in (("int", int(e)), ("float", e), ("text", f"{e:g}")):
                items.append((f"{side}/edge-{e:g}/{form}", alpha, v))
        for name, v in (
            ("below-lo", 16.999999999999996),
            ("far-below", -1e9),
            ("above-hi", 90.00000000000001),
            ("far-above", 1e9),
            ("inside", 30.5),
            ("just-below-25", 24.999999999999996),
            ("just-above-25", 25.000000000000004),
            ("max-float", 1.7976931348623157e308),
            ("min-float", -1.7976931348623157e308),
            ("1e308", 1e308),
            ("-1e308", -1e308),
            ("5e-324", 5e-324),
            ("negative-zero", _float(-0.0)),
            ("label", alpha["released"][0]["values"][2]),
        ):
            items.append((f"{side}/{name}", alpha, v))
    for name, v in (
        ("tiny-positive", 5e-324),
        ("tiny-negative", -5e-324),
        ("zero", 0),
        ("negative-zero-float", _float(-0.0)),
        ("negative-zero-text", "-0"),
        ("negative-zero-text-float", "-0.0"),
        ("2^53-int", _int(2**53)),
        ("2^53+1-int", _int(2**53 + 1)),
        ("2^53+1-text", str(2**53 + 1)),
        ("2^53+2-float", float(2**53 + 2)),
        ("2^53+3-int", _int(2**53 + 3)),
        ("2^64-int", _int(2**64)),
        ("1e308", 1e308),
        ("-1e308", -1e308),
        ("1e308-text", "1e308"),
        ("1e-400-text", "1e-400"),
        ("-5e-324-text", "-5e-324"),
        ("max-double-int", _int(int(1.7976931348623157e308))),
        ("max-double-text", "1.7976931348623157e308"),
        ("-max-double-int", _int(-int(1.7976931348623157e308))),
    ):
        items.append((f"extreme/{name}", extreme, v))
    for name, v in (
        ("0.1-float", 0.1),
        ("0.1-text", "0.1"),
        ("plus-point-5", "+.5"),
        ("5-point", "5."),
        ("1E3", "1E3"),
        ("1e1-text", "1e1"),
        ("plus-sign", "+30"),
        ("leading-zeros", "0030"),
        ("exponent-plus", "2.5e+1"),
        ("exponent-minus", "2500e-2"),
        ("long-digits", "25.000000000000000000000000001"),
        ("integer-text", "42"),
    ):
        items.append((f"text/{name}", left, v))
    for name, v in (
        ("nan", _float(float("nan"))),
        ("inf", _float(float("inf"))),
        ("minus-inf", _float(float("-inf"))),
        ("empty", ""),
        ("space-before", " 4"),
        ("space-after", "4 "),
        ("tab", "\t4"),
        ("newline-after", "4\n"),
        ("hex", "0x10"),
        ("underscore", "1_000"),
        ("1e400", "1e400"),
        ("-1e400", "-1e400"),
        ("nan-text", "nan"),
        ("NaN-text", "NaN"),
        ("inf-text", "inf"),
        ("Infinity-text", "Infinity"),
        ("true", True),
        ("false", False),
        ("null", None),
        ("arabic-digits", "٤٢"),
        ("fullwidth-digits", "４２"),
        ("devanagari-digits", "४२"),
        ("point-alone", "."),
        ("exponent-alone", "e5"),
        ("two-points", "1.2.3"),
        ("dangling-exponent", "1e"),
        ("comma-decimal", "2,5"),
        ("sign-alone", "-"),
        ("double-sign", "--5"),
        ("label-with-space", " [17, 25)"),
        ("list", [30]),
        ("object", {"value": 30}),
        ("trailing-nul", "4\x00"),
        ("leading-nul", "\x004"),
        ("int-10^400", _int(10**400)),
        ("int-2^1024", _int(2**1024)),
        ("int-rounds-to-inf", _int(2**1024 - 2**970)),
        ("text-10^400-digits", "1" + "0" * 400),
    ):
        items.append((f"refused/{name}", left, v))
    out: list[Doc] = []
    for name, alpha, v in items:
        attr = "age"
        c = {"name": f"records/numeric/{name}", "alphabet": alpha, "shape": "objects", "typed": True}
        c["records"] = [{"sex": "Male", attr: v}]
        out.append(c)
    more: list[tuple[str, Doc, str, Any]] = [
        (
            "many/objects-mixed",
            left,
            "objects",
            [
                {"sex": "Female", "age": 17},
                {"sex": "Male", "age": "25"},
                {"sex": "Male", "age": 89.5},
                {"sex": "Female", "age": _float(90.0)},
            ],
        ),
        ("many/columns", right, "columns", {"sex": ["Female", "Male", "Male", "Female"], "age": [17, 25, "35", 120]}),
        (
            "many/columns-floats",
            left,
            "columns",
            {"sex": ["Female", "Male", "Male"], "age": [0.1, 49.99999999999999, 50.0]},
        ),
        ("many/tuples", left, "tuples", [["Male", 60], ["Female", "1e1"], ["Male", "[35, 50)"]]),
        ("many/one", right, "one", {"sex": "Female", "age": "50"}),
        (
            "many/s-numeric",
            s_num,
            "objects",
            [
                {"age": 18, "colour": "red"},
                {"age": 18.000000000000004, "colour": "blue"},
                {"age": "121", "colour": "green"},
            ],
        ),
        (
            "many/s-numeric-refused",
            s_num,
            "objects",
            [{"age": 18, "colour": "red"}, {"age": "eighteen", "colour": "blue"}],
        ),
        ("many/latent", latent, "objects", [{"age": 17}, {"age": 90, "sex": "Female"}, {"age": -3}]),
        ("many/refused-in-column", left, "columns", {"sex": ["Female", "Male"], "age": [30, _float(float("nan"))]}),
        ("many/refused-second", left, "objects", [{"sex": "Female", "age": 30}, {"sex": "Male", "age": True}]),
        ("many/refused-bool-in-column", left, "columns", {"sex": ["Female", "Male"], "age": [30.5, False]}),
        ("many/refused-huge-int-second", left, "columns", {"sex": ["Female", "Male"], "age": [30, _int(10**400)]}),
        ("many/refused-nul-second", left, "tuples", [["Female", "30"], ["Male", "4\x00"]]),
        ("many/missing", left, "objects", [{"sex": "Female"}]),
    ]
    for name, alpha, shape, recs in more:
        out.append(
            {"name": f"records/numeric/{name}", "alphabet": alpha, "shape": shape, "typed": True, "records": recs}
        )
    for c in out:
        c["expect"] = encode(c)
    return out
