"""Conformance cases for a pilot's F = ball ∩ box (``pilot.json``, suite ``documents``).

A document designed over a private pilot's confidence set (construction ``empirical-bernstein-box/v5``)
states ``privacy.uncertainty.box = {"lower", "upper"}``, the pilot's simultaneous confidence box, and every
audit narrows each conditional projection of F by the bounds it implies (``rldp.shared.box_bounds``).
``pilot/accepted/...``: designs over an SRR pilot's F on sex × colour (rldp: PolyOpt, GRR, SRR; ldp over F;
lip, alip, distp; a loose box from few pilot reports, whose upper row sums pass 1), audited by both clients
to the same ε; one with its box leaves written as integers (the id hashes them as written, so the
float-written twin has another id). ``pilot/needs-box/...``: the same designs with the box removed and
rehashed: the audit fails (the designs need the box). ``pilot/refused/...``: each refusal of a malformed
box while reading (``DocumentError``), with the message both clients give (case field ``message``, the
suite's first; ``python_client.document_message``); and a
box in a document whose alphabet is over ``MAX_SYMBOLS`` (refused for its alphabet first); each refusal of a
malformed pilot provenance (``rldp.shared.pilot.validate_pilot_provenance``); a msgpack box whose array header
claims 2³² − 1 entries (``DocumentSyntaxError``). ``pilot/policy/...``: the pilot
provenance's β is the one ``max_beta`` judges.
Expected results come from the Python client (``python_client``); called by ``generate.py``.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
from python_client import document_message
from written import rehash, written

from rldp.aggregator.design import DesignRequest, design
from rldp.aggregator.design.orchestration.sources import PilotData, design_from
from rldp.shared.document import report_matrix
from rldp.shared.records import Alphabet, Attribute

Doc = dict[str, Any]

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "green", "red"))
A = Alphabet(SEX, [COLOUR])
TRUTH = np.array([[0.02, 0.13, 0.35], [0.01, 0.09, 0.40]])


def _pilot() -> Doc:
    doc = design("srr", alphabet=A, public_distribution=np.full(A.shape, 1 / A.size), epsilon=1.0, radius=float("inf"))
    doc.pop("run", None)
    return doc


def _over_pilot(pilot: Doc, reports: int, **request: Any) -> Doc:
    counts = np.random.default_rng(5).multinomial(reports, report_matrix(pilot) @ TRUTH.ravel())
    doc = design_from(PilotData(pilot, counts.tolist(), 0.05), DesignRequest(window=None, **request), A)
    doc.pop("run", None)
    assert "box" in doc["privacy"]["uncertainty"], "a v5 pilot design states its box"
    return doc


def _edited(doc: Doc, edit: Callable[[Doc], None]) -> Doc:
    out: Doc = json.loads(json.dumps(doc))
    edit(out)
    return rehash(out)


def _box(doc: Doc) -> Doc:
    box: Doc = doc["privacy"]["uncertainty"]["box"]
    return box


def _without_box(doc: Doc) -> None:
    del doc["privacy"]["uncertainty"]["box"]


def _integer_leaves(doc: Doc) -> None:
    """Widen the box to [0, 1] in a few cells, written as the integers 0 and 1 (a wider box only widens F)."""
    box = _box(doc)
    box["lower"][0][0] = 0
    box["lower"][1][2] = 0
    box["upper"][0][1] = 1
    box["upper"][1][0] = 1


def _float_leaves(doc: Doc) -> None:
    _integer_leaves(doc)
    box = _box(doc)
    for side in ("lower", "upper"):
        box[side] = [[float(v) for v in row] for row in box[side]]


def _set(side: str, value: Any) -> Callable[[Doc], None]:
    def edit(doc: Doc) -> None:
        _box(doc)[side] = value

    return edit


def _cell(side: str, s: int, u: int, value: Any) -> Callable[[Doc], None]:
    def edit(doc: Doc) -> None:
        _box(doc)[side][s][u] = value

    return edit


def _whole_box(value: Any) -> Callable[[Doc], None]:
    def edit(doc: Doc) -> None:
        doc["privacy"]["uncertainty"]["box"] = value

    return edit


def _provenance(key: str, value: Any) -> Callable[[Doc], None]:
    def edit(doc: Doc) -> None:
        doc["provenance"][key] = value

    return edit


def _huge_alphabet(doc: Doc) -> None:
    """Three released attributes of 21 values: |X| = 2·21³ = 18,522 symbols, over MAX_SYMBOLS, in a few hundred bytes."""
    doc["format"] = "rldp.mechanism/2"
    doc["released"] = [{"name": f"r{j}", "values": [f"v{i}" for i in range(21)]} for j in range(3)]


def _message(body: Doc) -> str:
    message = document_message(body)
    assert message is not None, "a refused case was read"
    return message


def pilot_cases(case: Callable[..., Doc]) -> list[Doc]:
    out: list[Doc] = []

    def add(name: str, doc: Doc, encodings: tuple[str, ...] = ("json",), **fields: Any) -> None:
        for enc in encodings:
            out.append(case(f"pilot/{name}/{enc}", written(doc, enc), **fields))

    pilot = _pilot()
    designs = {
        "rldp-polyopt": _over_pilot(pilot, 20_000, method="polyopt", epsilon=1.0),
        "rldp-grr": _over_pilot(pilot, 200_000, method="grr", epsilon=1.0),
        "rldp-srr": _over_pilot(pilot, 20_000, method="srr", epsilon=1.0),
        "ldp-grr": _over_pilot(pilot, 200_000, method="grr", notion="ldp", epsilon=1.0),
        "lip-grr": _over_pilot(pilot, 200_000, method="grr", notion="lip", epsilon=1.0),
        "lip-optimal": _over_pilot(pilot, 200_000, method="optimal", notion="lip", epsilon=1.0),
        "lip-grr-loose-box": _over_pilot(pilot, 2_000, method="grr", notion="lip", epsilon=1.0),
        "alip-grr": _over_pilot(pilot, 200_000, method="grr", notion="alip", epsilon_lower=0.8, epsilon_upper=1.2),
        "distp-ir": _over_pilot(pilot, 200_000, method="ir", notion="distp", epsilon=1.0, delta=0.01),
    }
    loose = _box(designs["lip-grr-loose-box"])
    assert max(sum(row) for row in loose["upper"]) > 1, "the loose box's upper row sums pass 1"
    for name, doc in designs.items():
        add(f"accepted/{name}", doc, ("json", "msgpack") if name == "rldp-polyopt" else ("json",))
    for name in ("rldp-polyopt", "ldp-grr", "lip-grr", "lip-optimal", "alip-grr"):
        add(f"needs-box/{name}", _edited(designs[name], _without_box))
    # The pilot provenance's β is the confidence set's (no privacy.uncertainty.beta): the policy's max_beta applies.
    add("policy/max-beta-from-the-pilot", designs["rldp-grr"], policy={"max_beta": 0.01})
    # A box narrows F whatever the radius: an app with a confidence-set floor takes a boxed F only pinned.
    boxed = designs["rldp-polyopt"]
    for name, policy in (
        ("min-radius-refuses-a-box", {"min_radius": 0.001}),
        ("max-public-n-refuses-a-box", {"max_public_n": 1_000_000}),
        # the advice followed: pinned, the box is accepted and the radius floors still apply
        ("a-floor-takes-a-pinned-box", {"min_radius": 0.001, "pinned": [boxed["id"]]}),
        ("a-pinned-box-keeps-the-radius-floor", {"min_radius": 1.0, "pinned": [boxed["id"]]}),
    ):
        message = document_message({**written(boxed, "json"), "policy": policy})
        add(f"policy/{name}", boxed, policy=policy, **({} if message is None else {"message": message}))
    # GRR at 200,000 pilot reports passes without the box too, so it may widen a few cells to [0, 1].
    add("accepted/integer-box-leaves", _edited(designs["rldp-grr"], _integer_leaves), ("json", "msgpack"))
    add("accepted/float-box-leaves", _edited(designs["rldp-grr"], _float_leaves))
    base = designs["rldp-polyopt"]

    rows = _box(base)["lower"]
    refusals: dict[str, Callable[[Doc], None]] = {
        "box-not-an-object": _whole_box([row[:] for row in rows]),
        "box-a-string": _whole_box("0.1"),
        "box-extra-field": lambda d: _box(d).update(extra=1),
        "box-no-upper": lambda d: _box(d).pop("upper"),
        "box-empty-object": _whole_box({}),
        "lower-not-a-list": _set("lower", {"rows": rows}),
        "lower-transposed": _set("lower", [list(col) for col in zip(*rows, strict=True)]),
        "lower-flat": _set("lower", [v for row in rows for v in row]),
        "lower-a-number": _set("lower", 0.1),
        "lower-empty": _set("lower", []),
        "lower-ragged": _set("lower", [rows[0], rows[1][:2]]),
        "lower-string-leaf": _cell("lower", 0, 1, "0.01"),
        "lower-boolean-leaf": _cell("lower", 1, 1, False),
        "upper-null-leaf": _cell("upper", 0, 2, None),
        "lower-negative": _cell("lower", 0, 0, -0.001),
        "upper-above-one": _cell("upper", 1, 2, 1.5),
        "upper-huge-integer": _cell("upper", 1, 2, 10**400),
        "lower-above-upper": _cell("lower", 0, 2, 0.99),
        "lower-sums-above-one": lambda d: _box(d).update(lower=[[0.2] * 3] * 2, upper=[[0.25] * 3] * 2),
        "upper-sums-below-one": _set("upper", [row[:] for row in rows]),
        "box-over-max-symbols": _huge_alphabet,
        "provenance-no-counts": lambda d: d["provenance"].pop("counts"),
        "provenance-construction-unknown": _provenance("construction", "empirical-bernstein-box/v9"),
        "provenance-contamination-half": _provenance("contamination", 0.5),
        "provenance-pilot-id-short": _provenance("pilot_mechanism", "abc"),
        "provenance-counts-floats": _provenance("counts", [2304.0, 3026, 4729, 2098, 2845, 4998]),
        "provenance-n-not-the-sum": _provenance("n", 19_999),
        "provenance-beta-one": _provenance("beta", 1),
        "provenance-columns-empty": _provenance("columns", []),
        "provenance-collection-a-number": _provenance("collection", 7),
    }
    # msgpack: a box side whose array header claims 2³² − 1 entries in a few bytes (refused as truncated, nothing allocated).
    marker = _edited(base, _set("lower", "BOX-LOWER-MARKER"))
    raw = written(marker, "msgpack")
    data = base64.b64decode(raw["document_base64"])
    packed = b"\xb0BOX-LOWER-MARKER"
    assert data.count(packed) == 1
    claimed = data.replace(packed, b"\xdd\xff\xff\xff\xff" + b"\xcb" + struct.pack(">d", 0.1) + b"\xc0" * 3)
    body = {"encoding": "msgpack", "document_base64": base64.b64encode(claimed).decode("ascii")}
    out.append(case("pilot/refused/box-array-claims-4g-entries/msgpack", body))
    for name, edit in refusals.items():
        body = written(_edited(base, edit), "json")
        message = _message(body)
        out.append(case(f"pilot/refused/{name}/json", body, message=message))
        if name in ("box-extra-field", "lower-transposed", "lower-negative", "lower-sums-above-one"):
            msgpack = written(_edited(base, edit), "msgpack")
            out.append(case(f"pilot/refused/{name}/msgpack", msgpack, message=message))
    return out
