"""The conformance cases beyond valid documents: refusals, policies, records, samplers, batches.

Called by ``generate.py``; each group returns (file name, suite, cases) with expected results from
the Python client (``python_client.py``) or, for batches, from the client's batch code checked by
the server's parser (``rldp.shared.reports``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import msgpack
import numpy as np
from python_client import alias_outcome, batch_outcome, encode_outcome, sampler_outcome
from written import rehash

from rldp.aggregator.design import grr_matrix
from rldp.shared.audit import audit_document
from rldp.shared.collection import Window
from rldp.shared.document import to_json, to_msgpack

Doc = dict[str, Any]
Rebuild = Callable[..., Doc]


def all_cases(
    docs: dict[str, Doc], rebuild: Rebuild, encoded: Callable[[Doc, str], Doc], case: Callable[..., Doc]
) -> Iterator[tuple[str, str, list[Doc]]]:
    yield "negative", "documents", negative(docs, rebuild, encoded, case)
    yield "policy", "documents", policy(docs, encoded, case)
    yield "records", "records", records(docs)
    yield "sampling", "sampling", sampling(docs)
    yield "alias", "alias", alias()
    yield "batches", "batches", batches(docs)


# --------------------------------------------------------------------------- refusals


def _json_text(doc: Doc) -> str:
    return to_json(doc)


def _raw(text: str | bytes, encoding: str) -> Doc:
    if encoding == "json" and isinstance(text, str):
        return {"encoding": "json", "document": text}
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    return {"encoding": encoding, "document_base64": base64.b64encode(data).decode("ascii")}


def _both(doc_like: Any) -> list[Doc]:
    """A (possibly invalid) document object written both ways, without validation."""
    plain = json.loads(json.dumps(doc_like))
    return [
        _raw(json.dumps(plain, ensure_ascii=False), "json"),
        _raw(msgpack.packb(plain, use_bin_type=True), "msgpack"),
    ]


def negative(
    docs: dict[str, Doc], rebuild: Rebuild, encoded: Callable[[Doc, str], Doc], case: Callable[..., Doc]
) -> list[Doc]:
    out: list[Doc] = []

    def add(name: str, bodies: list[Doc], **fields: Any) -> None:
        for body in bodies:
            out.append(case(f"negative/{name}/{body['encoding']}", body, **fields))

    # Leaky: correctly hashed, but the matrix leaks more than the document claims (each notion).
    for name in (
        "rldp/grr",
        "rldp/polyopt",
        "rldp/grr-latent",
        "ldp/grr",
        "ldp/optimal-latent",
        "lip/grr",
        "lip/grr-radius0",
        "distp/coupling",
        "distp/grr-latent",
        "srlip/grr-radius0",
        "srlip/grr-radius0.05",
        "per-report/rldp-grr",
        "per-report/distp-grr",
    ):
        doc = docs[name]
        result = audit_document(doc)
        if name.startswith("per-report"):
            layer = doc["collection"]["per_report"]
            assert result.per_report is not None
            layer = {**layer, "epsilon": result.per_report.epsilon * 0.95}
            leaky = rebuild(doc, extra={"collection": {**doc["collection"], "per_report": layer}})
        else:
            privacy = {**doc["privacy"], "epsilon": result.epsilon * 0.95}
            if "delta" in privacy:
                privacy["delta"] = 0.0
            leaky = rebuild(doc, privacy=privacy)
        add(f"leaky/{name}", [encoded(leaky, "json"), encoded(leaky, "msgpack")])
    alip = docs["alip/optimal-latent"]
    audited = audit_document(alip).extra
    for side in ("epsilon_lower", "epsilon_upper"):
        privacy = {**alip["privacy"], side: audited[side] * 0.9}
        privacy["epsilon"] = max(privacy["epsilon_lower"], privacy["epsilon_upper"])
        add(f"leaky/alip-{side}", [encoded(rebuild(alip, privacy=privacy), "json")])
    x_ldp = docs["ldp-x/grr-eps1"]
    add("leaky/ldp-x", [encoded(rebuild(x_ldp, privacy={"notion": "ldp", "epsilon": 0.9}), "msgpack")])
    # A radius smaller than the one its n and β imply (it would overstate the confidence).
    small = json.loads(json.dumps(docs["rldp/grr"]["privacy"]))
    small["uncertainty"]["radius"] *= 0.5
    add("leaky/radius-below-n-beta", [encoded(rebuild(docs["rldp/grr"], privacy=small), "json")])

    # Tampered: content changed, id kept (IdMismatch), in every form.
    base = docs["rldp/cr"]
    for what in ("matrix", "epsilon", "public_distribution", "method", "values"):
        t = json.loads(json.dumps(base))
        if what == "matrix":
            t["matrix"][0][0], t["matrix"][1][0] = t["matrix"][1][0], t["matrix"][0][0]
        elif what == "epsilon":
            t["privacy"]["epsilon"] = 0.5
        elif what == "public_distribution":
            row = t["public_distribution"][0]
            row[0], row[1] = row[1], row[0]
        elif what == "method":
            t["method"] = "grr"
        else:
            t["released"][0]["values"][0] = "BLUE"
        add(f"tampered/{what}", _both(t))
    grr3 = rebuild(
        docs["rldp/grr"],
        {
            "form": "grr",
            "size": 6,
            "diagonal": docs["rldp/grr"]["matrix"][0][0],
            "off_diagonal": docs["rldp/grr"]["matrix"][1][0],
        },
    )
    t = json.loads(json.dumps(grr3))
    t["matrix"]["diagonal"], t["matrix"]["off_diagonal"] = grr3["matrix"]["off_diagonal"], grr3["matrix"]["diagonal"]
    t["matrix"]["diagonal"] = 1 - 5 * t["matrix"]["off_diagonal"]
    add("tampered/grr-form", _both(t))
    t = json.loads(json.dumps(base))
    t["run"] = {"seconds": 12.5}  # run is not hashed: still valid
    add("unhashed-run-field", _both(t))
    t = json.loads(json.dumps(base))
    t["id"] = "0" * 64
    add("id-mismatch/zeros", _both(t))
    add("id-mismatch/expected-id", [encoded(base, "json"), encoded(base, "msgpack")], expected_id="f" * 64)
    add("id-mismatch/expected-id-matches", [encoded(base, "json")], expected_id=base["id"])

    # Malformed: not JSON / msgpack, or not a valid document.
    text = _json_text(base)
    add("malformed/empty", [_raw("", "json"), _raw(b"", "msgpack")])
    add("malformed/truncated", [_raw(text[: len(text) // 2], "json"), _raw(to_msgpack(base)[:-7], "msgpack")])
    add("malformed/nan", [_raw(text.replace('"epsilon": 1.0', '"epsilon": NaN', 1), "json")])
    add("malformed/infinity", [_raw(text.replace('"epsilon": 1.0', '"epsilon": -Infinity', 1), "json")])
    add("malformed/duplicate-key", [_raw(text.replace('"method": "cr"', '"method": "cr", "method": "cr"', 1), "json")])
    add("malformed/extra-data", [_raw(text + "{}", "json"), _raw(to_msgpack(base) + b"\x00", "msgpack")])
    add("malformed/not-utf8", [_raw(text.encode("utf-8").replace(b'"cr"', b'"c\xff"', 1), "json")])
    add("malformed/bom", [_raw(("\ufeff" + text).encode("utf-8"), "json")])
    add("malformed/top-level-list", _both([base]))
    add("malformed/unsupported-format", _both(rehash({**base, "format": "rldp.mechanism/9"})))
    for field in ("matrix", "privacy", "sensitive", "public_distribution"):
        add(f"malformed/missing-{field}", _both(rehash({k: v for k, v in base.items() if k != field})))
    add("malformed/bad-id", _both({**base, "id": "XYZ"}))
    add(
        "malformed/negative-entry",
        _both(
            rehash(
                {
                    **base,
                    "matrix": [
                        [-0.5, *r[1:]] if i == 0 else ([1.5, *r[1:]] if i == 1 else r)
                        for i, r in enumerate(base["matrix"])
                    ],
                }
            )
        ),
    )
    add(
        "malformed/columns-not-stochastic",
        _both(rehash({**base, "matrix": [[v * 1.01 for v in r] for r in base["matrix"]]})),
    )
    add("malformed/wrong-columns", _both(rehash({**base, "matrix": [r[:-1] for r in base["matrix"]]})))
    add(
        "malformed/string-entry",
        _both(rehash({**base, "matrix": [["0.5", *r[1:]] if i == 0 else r for i, r in enumerate(base["matrix"])]})),
    )
    add("malformed/epsilon-string", _both(rehash({**base, "privacy": {**base["privacy"], "epsilon": "1"}})))
    add("malformed/epsilon-zero", _both(rehash({**base, "privacy": {**base["privacy"], "epsilon": 0.0}})))
    add(
        "malformed/unknown-privacy-field",
        _both(rehash({**docs["ldp/grr"], "privacy": {**docs["ldp/grr"]["privacy"], "delta": 0.1}})),
    )
    add("malformed/no-uncertainty", _both(rehash({**base, "privacy": {"notion": "rldp", "epsilon": 1.0}})))
    add("malformed/unknown-notion", _both(rehash({**base, "privacy": {**base["privacy"], "notion": "gdp"}})))
    add(
        "malformed/bad-divergence",
        _both(
            rehash(
                {
                    **base,
                    "privacy": {
                        **base["privacy"],
                        "uncertainty": {**base["privacy"]["uncertainty"], "divergence": "kl"},
                    },
                }
            )
        ),
    )
    add(
        "malformed/public-not-summing",
        _both(rehash({**base, "public_distribution": [[v * 2 for v in r] for r in base["public_distribution"]]})),
    )
    add(
        "malformed/duplicate-value",
        _both(rehash({**base, "released": [{"name": "colour", "values": ["blue", "blue", "red"]}]})),
    )
    add("malformed/one-sensitive-value", _both(rehash({**base, "sensitive": {"name": "sex", "values": ["Female"]}})))
    add("malformed/unknown-collection-field", _both(rehash({**base, "collection": {"windows": "P1D"}})))
    add("malformed/bad-window", _both(rehash({**base, "collection": {"window": "P1M"}})))
    add(
        "malformed/compact-in-format-1",
        _both(rehash({**base, "matrix": {"form": "grr", "size": 6, "diagonal": 0.5, "off_diagonal": 0.1}})),
    )
    g = json.loads(json.dumps(grr3))
    add("malformed/grr-size-1", _both(rehash({**g, "matrix": {**g["matrix"], "size": 1}})))
    add("malformed/grr-not-stochastic", _both(rehash({**g, "matrix": {**g["matrix"], "diagonal": 0.9}})))
    add("malformed/unknown-form", _both(rehash({**g, "matrix": {**g["matrix"], "form": "sparse"}})))
    add("malformed/grr-extra-field", _both(rehash({**g, "matrix": {**g["matrix"], "note": 1}})))
    dense = json.loads(
        json.dumps(
            rebuild(
                base,
                {
                    "form": "dense",
                    "shape": [6, 6],
                    "data": base64.b64encode(np.array(base["matrix"], dtype="<f8").tobytes()).decode(),
                },
            )
        )
    )
    bad_pad = dense["matrix"]["data"][:-2] + ("B=" if dense["matrix"]["data"][-2] == "A" else "A=")
    add(
        "malformed/dense-not-canonical-base64",
        [_raw(json.dumps(rehash({**dense, "matrix": {**dense["matrix"], "data": bad_pad}})), "json")],
    )
    add(
        "malformed/dense-not-base64",
        [_raw(json.dumps(rehash({**dense, "matrix": {**dense["matrix"], "data": "!!!!"}})), "json")],
    )
    neg_zero = np.array(base["matrix"], dtype="<f8")
    neg_zero_doc = rehash(
        {**dense, "matrix": {**dense["matrix"], "data": base64.b64encode((neg_zero * -1.0).tobytes()).decode()}}
    )
    add("malformed/dense-negative", [_raw(json.dumps(neg_zero_doc), "json")])
    pal = rebuild(base, None)
    add("malformed/palette-wrong-index-type", _palette_variants(base, rebuild))
    # Oversized: a compact form claiming far more entries than it holds; an srlip audit beyond its limit.
    add(
        "oversized/dense-shape",
        [_raw(json.dumps(rehash({**dense, "matrix": {**dense["matrix"], "shape": [100000, 100000]}})), "json")],
    )
    add("oversized/grr-size", _both(rehash({**g, "matrix": {**g["matrix"], "size": 10**12}})))
    add("oversized/srlip-audit", [encoded(_big_srlip(), "json")])
    del pal
    return out


def _palette_variants(base: Doc, rebuild: Rebuild) -> list[Doc]:
    q = np.array(base["matrix"], dtype=np.float64)
    values, index = np.unique(q, return_inverse=True)
    spec = {
        "form": "palette",
        "shape": list(q.shape),
        "index_type": "uint16",
        "values": base64.b64encode(values.astype("<f8").tobytes()).decode(),
        "index": base64.b64encode(index.astype("<u2").tobytes()).decode(),
    }
    doc = {**json.loads(json.dumps(base)), "format": "rldp.mechanism/3", "matrix": spec}
    unsorted = {
        **spec,
        "values": base64.b64encode(values[::-1].astype("<f8").tobytes()).decode(),
        "index_type": "uint8",
        "index": base64.b64encode((values.size - 1 - index).astype("<u1").tobytes()).decode(),
    }
    return [_raw(json.dumps(rehash(doc)), "json"), _raw(json.dumps(rehash({**doc, "matrix": unsorted})), "json")]


def _big_srlip() -> Doc:
    from rldp.shared.document import build_document
    from rldp.shared.document.forms import compact_matrix
    from rldp.shared.records import Alphabet, Attribute

    attrs = [Attribute(f"a{j}", tuple(f"v{i}" for i in range(12))) for j in range(3)]
    alpha = Alphabet(Attribute("sex", ("Female", "Male")), attrs, latent=True)
    return build_document(
        method="grr",
        matrix=compact_matrix(grr_matrix(alpha.size, 1.0)),
        alphabet=alpha,
        public_distribution=np.full(alpha.shape, 1 / (2 * alpha.size)),
        privacy={"notion": "srlip", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": 0.0}},
    )


# --------------------------------------------------------------------------- policies


def policy(docs: dict[str, Doc], encoded: Callable[[Doc, str], Doc], case: Callable[..., Doc]) -> list[Doc]:
    out: list[Doc] = []
    rldp = docs["rldp/grr"]  # states n = 500 and β = 0.05
    unc = rldp["privacy"]["uncertainty"]
    radius, n = float(unc["radius"]), int(unc["n"])
    rules: list[tuple[str, Doc, dict[str, Any]]] = [
        ("pinned-in", rldp, {"pinned": [rldp["id"], "a" * 64]}),
        ("pinned-out", rldp, {"pinned": ["a" * 64]}),
        ("max-epsilon-above", rldp, {"max_epsilon": 1.5}),
        ("max-epsilon-equal", rldp, {"max_epsilon": 1.0}),
        ("max-epsilon-below", rldp, {"max_epsilon": 0.99}),
        ("min-radius-below", rldp, {"min_radius": radius * 0.5}),
        ("min-radius-equal", rldp, {"min_radius": radius}),
        ("min-radius-above", rldp, {"min_radius": radius * 1.01}),
        ("max-public-n-equal", rldp, {"max_public_n": n}),
        ("max-public-n-larger", rldp, {"max_public_n": 10 * n}),
        ("max-public-n-smaller", rldp, {"max_public_n": n // 2}),
        ("max-public-n-beta", rldp, {"max_public_n": n, "beta": 0.01}),
        ("max-public-n-beta-loose", rldp, {"max_public_n": n, "beta": 0.2}),
        (
            "all-rules-pass",
            rldp,
            {"pinned": [rldp["id"]], "max_epsilon": 2.0, "min_radius": radius / 2, "max_public_n": n},
        ),
        ("pinned-before-epsilon", rldp, {"pinned": ["b" * 64], "max_epsilon": 0.1}),
        ("ldp-x-min-radius", docs["ldp-x/grr-eps1"], {"min_radius": 1.0, "max_public_n": 10}),
        ("ldp-x-max-epsilon", docs["ldp-x/grr-eps0.25"], {"max_epsilon": 0.2}),
        ("radius0-min-radius", docs["rldp/grr-radius0"], {"min_radius": 0.001}),
        ("radius0-max-public-n", docs["rldp/grr-radius0"], {"max_public_n": 100}),
        ("order1-max-public-n", docs["rldp/grr-eps2-order1"], {"max_public_n": 500}),
        ("order-half-max-public-n", docs["rldp/cr-order-half"], {"max_public_n": 400}),
        ("lip-min-radius", docs["lip/grr"], {"min_radius": 10.0}),
        ("distp-max-epsilon", docs["distp/coupling"], {"max_epsilon": 0.5}),
        ("alip-max-epsilon", docs["alip/optimal-latent"], {"max_epsilon": 1.1}),
        ("max-beta-tighter", rldp, {"max_beta": 0.01}),
        ("max-beta-equal", rldp, {"max_beta": 0.05}),
        ("beta0.1-default-policy", docs["policy-only/rldp-grr-beta0.1"], {}),
        ("beta0.1-max-beta-none", docs["policy-only/rldp-grr-beta0.1"], {"max_beta": None}),
        ("beta0.1-max-beta-loose", docs["policy-only/rldp-grr-beta0.1"], {"max_beta": 0.2}),
        ("sex-race-max-public-n", docs["rldp/polyopt-paper-sex-race"], {"max_public_n": 500}),
        ("sex-race-max-public-n-smaller", docs["rldp/polyopt-paper-sex-race"], {"max_public_n": 400}),
    ]
    for name, doc, spec in rules:
        for encoding in ("json", "msgpack"):
            out.append(case(f"policy/{name}/{encoding}", encoded(doc, encoding), policy=spec))
    return out


# --------------------------------------------------------------------------- records


def records(docs: dict[str, Doc]) -> list[Doc]:
    odd = {
        "sensitive": {"name": "sex", "values": [" Female", " Male"]},
        "released": [
            {"name": "city", "values": ["Zürich", "São Paulo", "東京", "", "😀 emoji", "a|b"]},
            {"name": "flag", "values": ["0", "1"]},
        ],
    }
    several = {
        "sensitive": {
            "attributes": [{"name": "sex", "values": ["F", "M"]}, {"name": "race", "values": ["A", "B", "C"]}]
        },
        "released": [{"name": "colour", "values": ["blue", "green"]}],
    }
    latent = {
        "sensitive": {"name": "sex", "values": ["F", "M"], "released": False},
        "released": [{"name": "colour", "values": ["blue", "green", "red"]}],
    }
    alpha_a = {k: docs["rldp/grr"][k] for k in ("sensitive", "released")}
    items: list[tuple[str, Doc, str, Any]] = [
        (
            "basic-objects",
            alpha_a,
            "objects",
            [
                {"sex": "Female", "colour": "red"},
                {"sex": "Male", "colour": "blue"},
                {"colour": "green", "sex": "Male", "extra": "ignored"},
            ],
        ),
        ("basic-tuples", alpha_a, "tuples", [["Male", "red"], ["Female", "green"]]),
        (
            "basic-columns",
            alpha_a,
            "columns",
            {"sex": ["Male", "Female", "Male"], "colour": ["red", "red", "blue"], "other": [1, 2, 3]},
        ),
        ("basic-one", alpha_a, "one", {"sex": "Male", "colour": "green"}),
        ("unknown-value", alpha_a, "objects", [{"sex": "Male", "colour": "red"}, {"sex": "male", "colour": "red"}]),
        ("unknown-released-value", alpha_a, "columns", {"sex": ["Male"], "colour": ["purple"]}),
        ("missing-attribute", alpha_a, "objects", [{"sex": "Male"}]),
        ("missing-column", alpha_a, "columns", {"sex": ["Male"]}),
        ("ragged-columns", alpha_a, "columns", {"sex": ["Male", "Female"], "colour": ["red"]}),
        ("tuple-too-short", alpha_a, "tuples", [["Male"]]),
        ("tuple-too-long", alpha_a, "tuples", [["Male", "red", "x"]]),
        ("empty-list", alpha_a, "objects", []),
        ("case-sensitive", alpha_a, "one", {"sex": "FEMALE", "colour": "red"}),
        ("trailing-space-is-unknown", alpha_a, "one", {"sex": "Male ", "colour": "red"}),
        (
            "leading-spaces",
            odd,
            "objects",
            [{"sex": " Female", "city": "Zürich", "flag": "1"}, {"sex": " Male", "city": "", "flag": "0"}],
        ),
        ("leading-space-missing", odd, "objects", [{"sex": "Female", "city": "Zürich", "flag": "1"}]),
        (
            "non-ascii",
            odd,
            "columns",
            {"sex": [" Male", " Female", " Male"], "city": ["東京", "São Paulo", "😀 emoji"], "flag": ["0", "1", "1"]},
        ),
        ("empty-string-value", odd, "tuples", [[" Male", "", "1"], [" Female", "a|b", "0"]]),
        ("decomposed-unicode-is-unknown", odd, "one", {"sex": " Male", "city": "Zu\u0308rich", "flag": "0"}),
        (
            "several-sensitive",
            several,
            "objects",
            [
                {"sex": "M", "race": "C", "colour": "green"},
                {"sex": "F", "race": "A", "colour": "blue"},
                {"sex": "F", "race": "B", "colour": "green"},
            ],
        ),
        ("several-sensitive-tuples", several, "tuples", [["M", "B", "blue"]]),
        ("latent-objects", latent, "objects", [{"colour": "red"}, {"colour": "blue", "sex": "F"}]),
        ("latent-tuples", latent, "tuples", [["green"], ["red"]]),
        ("latent-unknown", latent, "objects", [{"colour": "Red"}]),
        (
            "large-alphabet",
            {
                "sensitive": {"name": "s", "values": ["a", "b"]},
                "released": [{"name": "item", "values": [f"v{i:04d}" for i in range(2000)]}],
            },
            "objects",
            [{"s": "b", "item": "v1999"}, {"s": "a", "item": "v0000"}, {"s": "b", "item": "v1000"}],
        ),
    ]
    out = []
    for name, alpha, shape, recs in items:
        c = {"name": f"records/{name}", "alphabet": alpha, "shape": shape, "records": recs}
        c["expect"] = encode_outcome(c)
        out.append(c)
    return out


# --------------------------------------------------------------------------- samplers


def _us(rng: np.random.Generator, n: int, limit: int = 1 << 53) -> list[int]:
    u = rng.integers(0, limit, size=n, dtype=np.uint64)
    u[:4] = [0, 1, limit - 1, limit // 2]  # the ends of the range, and its middle
    return [int(v) for v in u]


def sampling(docs: dict[str, Doc]) -> list[Doc]:
    from rldp.shared.document import matrix_spec, report_matrix, validate_document

    out = []
    rng = np.random.default_rng(2026)
    names = [
        "rldp/grr",
        "rldp/cr",
        "rldp/polyopt",
        "rldp/polyopt-paper-sex-race",
        "ldp/oue-latent",
        "ldp/watchdog-latent",
        "lip/subset-rr-latent",
        "distp/coupling",
        "per-report/rldp-grr",
    ]
    items: list[tuple[str, np.ndarray, dict[str, Any] | None, Doc | None]] = []
    for name in names:
        doc = validate_document(docs[name])
        spec = matrix_spec(doc) if "per_report" not in doc.get("collection", {}) else None  # as Mechanism's sampler
        items.append((name, report_matrix(doc), spec, doc))
    for k, eps in ((64, 1.0), (100, 0.1), (4000, 2.0), (64, 12.0)):
        q = grr_matrix(k, eps)
        items.append(
            (
                f"grr-k{k}-eps{eps:g}",
                q,
                {"form": "grr", "size": k, "diagonal": float(q[0, 0]), "off_diagonal": float(q[1, 0])},
                None,
            )
        )
    # Many outputs for few inputs: the alias path (a dense matrix with 300 outputs over 4096 inputs would be
    # large; a 300 × 2048 one whose columns are shifted copies of one distribution is written by its first column).
    base = rng.dirichlet(np.full(300, 0.5))
    items.append(("shifted-300x2048", np.stack([np.roll(base, j) for j in range(2048)], axis=1), None, None))
    items.append(("zero-entries", np.array([[0.5, 0.0, 0.25], [0.0, 1.0, 0.0], [0.5, 0.0, 0.75]]), None, None))
    for name, q, spec, doc in items:
        xs = [int(v) for v in rng.integers(0, q.shape[1], size=256)]
        us = _us(rng, 264)  # 8 more than records: a GRR sampler redraws a rejected u (≥ M) from the next ones
        c: Doc = {"name": f"sampling/{name}", "xs": xs, "us": us}
        if doc is not None:
            c["document"] = to_json(doc)
            if "per_report" in doc.get("collection", {}):
                # R·Q is a BLAS product: its last bits (so its thresholds) depend on the machine's kernel.
                c["exact_tables"] = False
        elif spec is not None:
            c["grr"] = {"size": spec["size"], "diagonal": spec["diagonal"], "off_diagonal": spec["off_diagonal"]}
        elif name.startswith("shifted"):
            c["shifted_column"] = base.tolist()
            c["inputs"] = q.shape[1]
        else:
            c["matrix"] = q.tolist()
        c["expect"] = sampler_outcome(q, spec, xs, us)
        out.append(c)
    return out


def alias() -> list[Doc]:
    out = []
    rng = np.random.default_rng(7)
    for b, a, skew in ((64, 3, 1.0), (70, 2, 0.1), (200, 2, 5.0), (65, 1, 0.02)):
        q = rng.dirichlet(np.full(b, skew), size=a).T
        q[rng.random(q.shape) < 0.1] = 0.0  # outputs that can never be drawn
        cum = np.cumsum(q, axis=0)
        t = np.ceil(cum / cum[-1] * float(1 << 53)).astype(np.uint64).T
        thresholds = [[int(v) for v in row] for row in t]
        c: Doc = {"name": f"alias/{b}x{a}-{skew:g}", "thresholds": [[str(v) for v in row] for row in thresholds]}
        c["expect"] = alias_outcome(thresholds)
        out.append(c)
    return out


# --------------------------------------------------------------------------- batches


def batches(docs: dict[str, Doc]) -> list[Doc]:
    out = []
    mech = docs["rldp/grr"]["id"]
    now = 1_795_000_000.0  # 2026-11-17
    day = Window.parse("P1D")
    rng = np.random.default_rng(11)
    items: list[tuple[str, list[int], int, str | None, int]] = [
        ("small", [0, 5, 3, 3, 1], 6, None, 1000),
        ("one-report", [2], 6, None, 1000),
        ("fixint-edges", [0, 127, 128, 255], 256, None, 1000),
        ("uint16", [0, 255, 256, 65535, 1000], 65536, None, 1000),
        ("uint32", [65536, 70000, 0], 70001, None, 1000),
        ("windowed", [1, 2, 3], 6, day.label_at(now), 1000),
        ("split", [int(v) for v in rng.integers(0, 6, size=25)], 6, None, 10),
        ("counts-encoding", [int(v) for v in rng.integers(0, 4, size=40)], 4, None, 1000),
    ]
    for name, reports, outputs, window, size in items:
        ids = [f"{name}-{i:04d}-0123456789abcdef" for i in range((len(reports) + size - 1) // size)]
        c: Doc = {
            "name": f"batches/{name}",
            "mechanism": mech,
            "reports": reports,
            "outputs": outputs,
            "window": window,
            "batch_size": size,
            "batch_ids": ids,
            "now": now,
        }
        c["expect"] = batch_outcome(c)
        out.append(c)
    refusals: list[tuple[str, Any, int, str | None]] = [
        ("out-of-range", {"mechanism": mech, "batch": "b-1", "reports": [0, 6]}, 6, None),
        ("negative", {"mechanism": mech, "batch": "b-1", "reports": [-1]}, 6, None),
        ("float", {"mechanism": mech, "batch": "b-1", "reports": [1.0]}, 6, None),
        ("boolean", {"mechanism": mech, "batch": "b-1", "reports": [True]}, 6, None),
        ("empty", {"mechanism": mech, "batch": "b-1", "reports": []}, 6, None),
        ("bad-batch-id", {"mechanism": mech, "batch": "has space", "reports": [1]}, 6, None),
        ("long-batch-id", {"mechanism": mech, "batch": "x" * 129, "reports": [1]}, 6, None),
        ("missing-batch", {"mechanism": mech, "reports": [1]}, 6, None),
        ("window-required", {"mechanism": mech, "batch": "b-1", "reports": [1]}, 6, "P1D"),
        ("unexpected-window", {"mechanism": mech, "batch": "b-1", "reports": [1], "window": "2026-11-17"}, 6, None),
        (
            "invalid-window",
            {"mechanism": mech, "batch": "b-1", "reports": [1], "window": "2026-11-17T00:00Z"},
            6,
            "P1D",
        ),
        ("future-window", {"mechanism": mech, "batch": "b-1", "reports": [1], "window": "2026-11-20"}, 6, "P1D"),
    ]
    for name, body, outputs, window in refusals:
        c = {
            "name": f"batches/refused-{name}",
            "body_base64": base64.b64encode(msgpack.packb(body, use_bin_type=True)).decode(),
            "outputs": outputs,
            "window": window,
            "now": now,
        }
        c["expect"] = batch_outcome(c)
        out.append(c)
    return out
