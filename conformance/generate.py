"""Generate the conformance suite (conformance/cases/*.json) with rldp itself.

    .venv/bin/python conformance/generate.py            # every file
    .venv/bin/python conformance/generate.py limits     # only cases/limits.json
    .venv/bin/python conformance/generate.py numeric    # only cases/numeric-*.json
    .venv/bin/python conformance/generate.py text       # only cases/text.json
    .venv/bin/python conformance/generate.py public-data  # only cases/public-data.json
    .venv/bin/python conformance/generate.py randomiser  # only cases/randomiser.json
    .venv/bin/python conformance/generate.py pilot      # only cases/pilot.json

Every case is made by the product (designers, ``build_document``, the client's sampler and batch
code) and its expected result is what the Python client does with it (``python_client.py``). The
cases are committed; ``tests/client/test_conformance.py`` checks that the Python client still
gives every expected result and ``js/test/conformance.test.mjs`` that the TypeScript SDK does.
The format is described in conformance/README.md. Deterministic: fixed seeds, fixed batch ids.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cases_limits  # noqa: E402
import cases_more  # noqa: E402
import cases_numeric  # noqa: E402
import cases_pilot  # noqa: E402
import cases_public_data  # noqa: E402
import cases_randomiser  # noqa: E402
import cases_text  # noqa: E402
from python_client import document_outcome, encode_outcome, public_data_outcome  # noqa: E402

from rldp.aggregator.design import add_per_report_layer, design, grr_matrix  # noqa: E402
from rldp.shared.document import REQUIRED_FIELDS, alphabet, build_document, to_json, to_msgpack  # noqa: E402
from rldp.shared.document.arrays import encode_array  # noqa: E402
from rldp.shared.document.forms import compact_matrix  # noqa: E402
from rldp.shared.records import Alphabet, Attribute  # noqa: E402

CASES = HERE / "cases"

SEX = Attribute("sex", ("Female", "Male"))
COLOUR = Attribute("colour", ("blue", "green", "red"))
RACE = Attribute("race", ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"))
SHAPE = Attribute("shape", ("round", "square"))
A = Alphabet(SEX, [COLOUR])
LATENT = Alphabet(SEX, [COLOUR], latent=True)
TWO_RELEASED = Alphabet(SEX, [COLOUR, SHAPE], latent=True)
SEX_RACE = Alphabet(SEX, [RACE])


def p_hat(alpha: Alphabet, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.full(alpha.n_sensitive * alpha.n_released, 3.0)).reshape(alpha.shape)


# --------------------------------------------------------------------------- documents


def designed() -> list[tuple[str, dict[str, Any]]]:
    """(name, document) for every notion the client audits, several designers and shapes each."""
    out: list[tuple[str, dict[str, Any]]] = []

    def add(name: str, method: str, alpha: Alphabet, seed: int, **kw: Any) -> None:
        kw.setdefault("n", 500)
        kw.setdefault("window", None)  # the base cases have no window; the window/ cases add theirs
        doc = design(method, alphabet=alpha, public_distribution=p_hat(alpha, seed), **kw)
        doc.pop("run", None)  # timings of this run (not hashed): the case files stay the same run after run
        out.append((name, doc))

    # rldp [LZG24]: robust designs over the Rényi ball, radius from n and β.
    for method in ("grr", "srr", "ir", "cr", "polyopt-paper", "nr"):
        add(f"rldp/{method}", method, A, 1, epsilon=1.0)
    add("rldp/polyopt", "polyopt", A, 2, epsilon=0.7)
    add("rldp/grr-latent", "grr", LATENT, 3, epsilon=1.0)
    add("rldp/grr-eps2-order1", "grr", A, 4, epsilon=2.0, order=1.0)
    add("rldp/cr-order-half", "cr", A, 5, epsilon=1.0, order=0.5)
    add("rldp/polyopt-paper-sex-race", "polyopt-paper", SEX_RACE, 6, epsilon=1.0)
    add("rldp/grr-radius0", "grr", A, 7, epsilon=1.0, radius=0.0, n=None)
    add("policy-only/rldp-grr-beta0.1", "grr", A, 8, epsilon=1.0, beta=0.1)  # refused by the default policy
    # ldp w.r.t. S over F [LTS20, Def 1], and w.r.t. X (no uncertainty set) [LZG24, Def 2].
    for method, alpha in (("grr", A), ("grr", LATENT), ("optimal", LATENT), ("oue", LATENT), ("watchdog", LATENT)):
        add(f"ldp/{method}{'-latent' if alpha.latent else ''}", method, alpha, 11, epsilon=1.0, notion="ldp")
    add("ldp/subset-merging", "subset-merging", A, 12, epsilon=1.0, notion="ldp")
    for k, eps in ((6, 1.0), (6, 0.25)):
        out.append((f"ldp-x/grr-eps{eps:g}", _plain_ldp(grr_matrix(k, eps), eps)))
    # lip [LTS20, Def 2] and alip [ZDS23, Def 3], over F'' and at P̂ (radius 0).
    for method, alpha in (("grr", A), ("optimal", LATENT), ("cr", A), ("watchdog", A), ("subset-rr", LATENT)):
        add(f"lip/{method}{'-latent' if alpha.latent else ''}", method, alpha, 21, epsilon=1.0, notion="lip")
    add("lip/grr-radius0", "grr", A, 22, epsilon=1.0, notion="lip", radius=0.0, n=None)
    for method, alpha in (("grr", LATENT), ("optimal", LATENT), ("watchdog", A), ("subset-merging", A)):
        add(
            f"alip/{method}{'-latent' if alpha.latent else ''}",
            method,
            alpha,
            31,
            notion="alip",
            epsilon_lower=0.8,
            epsilon_upper=1.2,
        )
    # distp [KM19, Def 3]: coupling and robust RLDP designs, with a δ.
    for method, delta in (("grr", 0.0), ("coupling", 0.05), ("ir", 0.01), ("cr-calibrated", 0.02)):
        add(f"distp/{method}", method, A, 41, epsilon=1.0, notion="distp", delta=delta)
    add("distp/grr-latent", "grr", LATENT, 42, epsilon=0.5, notion="distp", delta=0.1)
    # srlip [LTS20, Def 3]: built directly (no designer), at P̂ and for every distribution.
    for radius in (0.0, 0.05):
        out.append((f"srlip/grr-radius{radius:g}", _srlip(radius)))
    # Per-report layers (RAPPOR's instantaneous response) and collection windows.
    base = {name: doc for name, doc in out}
    out.append(("per-report/rldp-grr", add_per_report_layer(base["rldp/grr"], 0.5)))
    out.append(("per-report/ldp-grr", add_per_report_layer(base["ldp/grr"], 0.6, family="grr")))
    out.append(("per-report/distp-grr", add_per_report_layer(base["distp/grr"], 0.5)))
    out.append(("window/rldp-grr-P1D", _with_extra(base["rldp/grr"], {"collection": {"window": "P1D"}})))
    out.append(("window/ldp-x-PT6H", _with_extra(base["ldp-x/grr-eps1"], {"collection": {"window": "PT6H"}})))
    layered = add_per_report_layer(base["rldp/cr"], 0.3)
    out.append(
        (
            "window/per-report-rldp-cr-P1W",
            _with_extra(layered, {"collection": {**layered["collection"], "window": "P1W"}}),
        )
    )
    return out


def _plain_ldp(q: np.ndarray, eps: float) -> dict[str, Any]:
    return build_document(
        method="grr",
        matrix=q,
        alphabet=A,
        public_distribution=np.full(A.shape, 1 / A.size),
        privacy={"notion": "ldp", "epsilon": eps},
    )


def _srlip(radius: float) -> dict[str, Any]:
    k = TWO_RELEASED.size
    return build_document(
        method="grr",
        matrix=grr_matrix(k, 1.0),
        alphabet=TWO_RELEASED,
        public_distribution=p_hat(TWO_RELEASED, 51),
        privacy={"notion": "srlip", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": radius}},
    )


def rebuild(
    doc: dict[str, Any], matrix: Any = None, privacy: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    """The document with another matrix (a compact form object) or privacy block, rehashed by build_document."""
    extra = {k: v for k, v in doc.items() if k not in REQUIRED_FIELDS}
    extra.update(kw.pop("extra", {}))
    return build_document(
        method=doc["method"],
        matrix=doc["matrix"] if matrix is None else matrix,
        alphabet=alphabet(doc),
        public_distribution=doc["public_distribution"],
        privacy=privacy or doc["privacy"],
        extra=extra,
        **kw,
    )


def _with_extra(doc: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    return rebuild(doc, extra=extra)


def palette_spec(q: np.ndarray) -> dict[str, Any] | None:
    values, index = np.unique(q + 0.0, return_inverse=True)
    if values.size > 1 << 16:
        return None
    kind = "uint8" if values.size <= 256 else "uint16"
    return {
        "form": "palette",
        "shape": list(q.shape),
        "index_type": kind,
        "values": encode_array(values, "float64"),
        "index": encode_array(index.reshape(-1), kind),
    }


def forms_of(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The document in every matrix form it supports: rows, and format 3's grr / palette / dense."""
    q = np.array(doc["matrix"], dtype=np.float64)
    out = [("rows", doc)]
    spec = compact_matrix(q)
    if spec["form"] == "grr" and q.shape[1] == alphabet(doc).size:
        out.append(("grr", rebuild(doc, spec)))
    pal = palette_spec(q)
    if pal is not None:
        out.append(("palette", rebuild(doc, pal)))
    out.append(("dense", rebuild(doc, {"form": "dense", "shape": list(q.shape), "data": encode_array(q, "float64")})))
    return out


def encoded(doc: dict[str, Any], encoding: str) -> dict[str, Any]:
    if encoding == "json":
        return {"encoding": "json", "document": to_json(doc)}
    return {"encoding": "msgpack", "document_base64": base64.b64encode(to_msgpack(doc)).decode("ascii")}


def document_case(name: str, body: dict[str, Any], **fields: Any) -> dict[str, Any]:
    case = {"name": name, **body, **fields}
    case["expect"] = document_outcome(case)
    return case


def public_data_case(name: str, body: dict[str, Any]) -> dict[str, Any]:
    case = {"name": name, **body}
    case["expect"] = public_data_outcome(case)
    return case


def document_cases(docs: list[tuple[str, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    files: dict[str, list[dict[str, Any]]] = {}
    for name, doc in docs:
        group = name.split("/")[0]
        if group == "policy-only":
            continue
        for form, variant in forms_of(doc):
            for encoding in ("json", "msgpack"):
                case = document_case(f"{name}/{form}/{encoding}", encoded(variant, encoding))
                if case["expect"]["verdict"] != "accepted":
                    raise AssertionError(f"{case['name']}: a designed document was refused: {case['expect']}")
                files.setdefault(f"documents-{group}", []).append(case)
    return files


def large_grr() -> dict[str, Any]:
    """A K = 4,000 GRR document (format 3, its two values): the large-alphabet path."""
    values = tuple(f"v{i:04d}" for i in range(2000))
    alpha = Alphabet(SEX, [Attribute("item", values)])
    return build_document(
        method="grr",
        matrix=compact_matrix(grr_matrix(alpha.size, 2.0)),
        alphabet=alpha,
        public_distribution=np.full(alpha.shape, 1 / alpha.size),
        privacy={"notion": "rldp", "epsilon": 2.0, "uncertainty": {"order": 2.0, "radius": 0.01}},
    )


def write(name: str, suite: str, cases: list[dict[str, Any]]) -> None:
    path = CASES / f"{name}.json"
    text = json.dumps({"suite": suite, "cases": cases}, ensure_ascii=False, indent=1, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")
    print(f"{path.relative_to(HERE.parent)}: {len(cases)} cases")


def write_numeric() -> int:
    docs = cases_numeric.documents(document_case)
    recs = cases_numeric.records(encode_outcome)
    write("numeric-documents", "documents", docs)
    write("numeric-records", "records", recs)
    return len(docs) + len(recs)


#: The suites that can be regenerated alone (the others' last bits depend on the machine's BLAS), each the files
#: it writes: ``generate.py NAME``.
ALONE: dict[str, Callable[[], object]] = {
    "limits": lambda: write("limits", "documents", cases_limits.limits(document_case)),
    "public-data": lambda: write("public-data", "public-data", cases_public_data.public_data_cases(public_data_case)),
    "text": lambda: write("text", "documents", cases_text.text_cases(document_case)),
    "numeric": write_numeric,  # numeric-documents.json and numeric-records.json
    "randomiser": lambda: write("randomiser", "randomiser", cases_randomiser.randomiser_cases()),
    "pilot": lambda: write("pilot", "documents", cases_pilot.pilot_cases(document_case)),
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Write the conformance cases: every suite (deleting the old files first), or one suite alone."
    )
    parser.add_argument("suite", nargs="?", choices=sorted(ALONE), help="regenerate this suite's files only")
    suite = parser.parse_args(argv).suite
    if suite is not None:
        ALONE[suite]()
        return
    CASES.mkdir(exist_ok=True)
    for old in CASES.glob("*.json"):
        old.unlink()
    docs = designed()
    total = 0
    for name, cases in document_cases(docs).items():
        write(name, "documents", cases)
        total += len(cases)
    big = large_grr()
    extra = [document_case(f"rldp/grr-k4000/grr/{enc}", encoded(big, enc)) for enc in ("json", "msgpack")]
    write("documents-large", "documents", extra)
    total += len(extra)
    by_name = dict(docs)
    for name, suite, cases in cases_more.all_cases(by_name, rebuild, encoded, document_case):
        write(name, suite, cases)
        total += len(cases)
    limits = cases_limits.limits(document_case)
    write("limits", "documents", limits)
    text = cases_text.text_cases(document_case)
    write("text", "documents", text)
    public = cases_public_data.public_data_cases(public_data_case)
    write("public-data", "public-data", public)
    randomiser = cases_randomiser.randomiser_cases()
    write("randomiser", "randomiser", randomiser)
    pilot = cases_pilot.pilot_cases(document_case)
    write("pilot", "documents", pilot)
    total += len(limits) + len(text) + len(public) + len(randomiser) + len(pilot) + write_numeric()
    print(f"{total} cases")


if __name__ == "__main__":
    main()
