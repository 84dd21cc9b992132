"""The Python side of js/bench/run.mjs: the same mechanisms, timed in the Python client, same machine and run.

Prints one JSON object: the documents (msgpack, base64) and the Python timings (best of several).
"""

from __future__ import annotations

import base64
import json
import sys
import time

import numpy as np

from rldp.aggregator.design import design, grr_matrix
from rldp.client import Mechanism
from rldp.shared.document import build_document, from_msgpack, to_msgpack
from rldp.shared.document.forms import compact_matrix
from rldp.shared.records import Alphabet, Attribute

SEX = ("Female", "Male")
RACE = ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White")
N = 1_000_000


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    alpha = Alphabet(Attribute("sex", SEX), [Attribute("race", RACE)])
    grr10 = build_document(  # bench/bench_client.py's mechanism
        method="grr",
        matrix=grr_matrix(alpha.size, 1.0),
        alphabet=alpha,
        public_distribution=np.full(alpha.shape, 1 / alpha.size),
        privacy={"notion": "rldp", "epsilon": 1.0, "uncertainty": {"order": 2, "radius": None}},
    )
    mech = Mechanism.from_document(grr10)
    x = np.random.default_rng(1).integers(0, alpha.size, N)
    mech.privatize_indices(x)  # warm: tables built
    indices = best(lambda: mech.privatize_indices(x), 5)

    p_hat = np.array([[0.006, 0.011, 0.042, 0.003, 0.269], [0.004, 0.021, 0.054, 0.005, 0.585]])
    p_hat = p_hat / p_hat.sum()
    polyopt = design("polyopt", alphabet=alpha, public_distribution=p_hat, epsilon=1.0, n=32561)
    polyopt.pop("run", None)
    big = Alphabet(Attribute("sex", SEX), [Attribute("item", tuple(f"v{i:04d}" for i in range(2000)))])
    k4000 = build_document(
        method="grr",
        matrix=compact_matrix(grr_matrix(big.size, 2.0)),
        alphabet=big,
        public_distribution=np.full(big.shape, 1 / big.size),
        privacy={"notion": "rldp", "epsilon": 2.0, "uncertainty": {"order": 2.0, "radius": 0.01}},
    )
    out = {"indices_seconds": indices, "n": N, "documents": {}}
    for name, doc in (("polyopt_sex_race", polyopt), ("grr_k4000", k4000)):
        data = to_msgpack(doc)
        seconds = best(lambda data=data: Mechanism.from_document(from_msgpack(data)), 5)
        out["documents"][name] = {"msgpack": base64.b64encode(data).decode(), "verify_seconds": seconds}
    out["documents"]["grr10"] = {"msgpack": base64.b64encode(to_msgpack(grr10)).decode(), "verify_seconds": None}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
