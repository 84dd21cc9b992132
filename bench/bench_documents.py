"""Mechanism documents at large K: the rows of format 1 against the compact exact form of format 3.

A GRR mechanism on K = |S|·|U| symbols (|S| = 4), ε = 1, radius from n = 32,561 and β = 0.05.
For each K, in the same run: the JSON document's size, its build time (design or build_document,
then to_json) and its verification time on the client (from_json, then Mechanism.from_document:
id, audit, policy; the sampler is built on first use and timed apart).

Lines (``name value unit``):
  documents_bytes_{rows,compact}_K       JSON bytes
  documents_design_K                     seconds: design("grr") (what rldp design runs; format 3 above 512² entries)
  documents_build_{rows,compact}_K       seconds: build_document(compact=False / True) + to_json
  documents_verify_{rows,compact}_K      seconds: from_json + Mechanism.from_document
  documents_size_ratio_K                 rows / compact (bytes)
  documents_build_ratio_K, documents_verify_ratio_K   rows / compact (seconds)
  documents_sampler_compact_K            seconds: the first privatize (builds the sampler: GRR from its two values, client/grr.py, milliseconds; else client/sampling.py)
  documents_floor_K                      "ok" when compact build and verify ≤ 2 s and the document is under
                                         the service's default body limit (32 MiB); else what misses

Rows at K = 4,000 are a 384 MB JSON text (~15 s to build, more to verify): skipped with --quick.
Run: python bench/bench_documents.py [--quick]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from rldp.aggregator.design import design
from rldp.aggregator.services import load_config
from rldp.client import Mechanism
from rldp.shared.document import build_document, from_json, mechanism_matrix, to_json
from rldp.shared.records import Alphabet, Attribute

A1 = 4
FLOOR_SECONDS = 2.0


def setting(k: int) -> tuple[Alphabet, np.ndarray]:
    alpha = Alphabet(Attribute("s", [f"s{i}" for i in range(A1)]), [Attribute("u", [f"u{i}" for i in range(k // A1)])])
    return alpha, np.random.default_rng(k).dirichlet(np.ones(k)).reshape(A1, k // A1)


def timed(fn, repeat: int = 1):  # type: ignore[no-untyped-def]
    """(result, best wall-clock seconds of ``repeat`` runs): the machine is shared, the best run is the figure."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    limit = load_config({})["MAX_BODY_BYTES"]
    for k in (400, 1_000, 4_000):
        one_size(k, rows=not (quick and k >= 4_000), limit=limit)
    return 0


def one_size(k: int, *, rows: bool, limit: int) -> None:
    """Print the lines of one K."""
    alpha, p_hat = setting(k)
    doc, seconds = timed(lambda: design("grr", alphabet=alpha, public_distribution=p_hat, epsilon=1.0, n=32_561), 3)
    print(f"documents_design_{k} {seconds:.3f} s  # design('grr'), as rldp design (auto form: {doc['format']})")
    q = mechanism_matrix(doc)
    fields = {key: doc[key] for key in ("parameters", "utility", "design", "audit") if key in doc}

    def build(compact: bool) -> str:
        return to_json(
            build_document(
                method="grr",
                matrix=q,
                alphabet=alpha,
                public_distribution=p_hat,
                privacy=doc["privacy"],
                extra=fields,
                compact=compact,
            )
        )

    text_c, build_c = timed(lambda: build(True), 3)
    mech, verify_c = timed(lambda: Mechanism.from_document(from_json(text_c)), 3)
    _, sampler_c = timed(lambda: mech.privatize_indices(np.arange(k)))
    size_c = len(text_c.encode())
    print(f"documents_bytes_compact_{k} {size_c} bytes")
    print(f"documents_build_compact_{k} {build_c:.3f} s")
    print(f"documents_verify_compact_{k} {verify_c:.3f} s")
    print(
        f"documents_sampler_compact_{k} {sampler_c:.3f} s  # first privatize builds the sampler (GRR: from its two values)"
    )
    if rows:
        text_r, build_r = timed(lambda: build(False))
        _, verify_r = timed(lambda: Mechanism.from_document(from_json(text_r)))
        size_r = len(text_r.encode())
        del text_r
        print(f"documents_bytes_rows_{k} {size_r} bytes")
        print(f"documents_build_rows_{k} {build_r:.3f} s")
        print(f"documents_verify_rows_{k} {verify_r:.3f} s")
        print(f"documents_size_ratio_{k} {size_r / size_c:.1f} x")
        print(f"documents_build_ratio_{k} {build_r / build_c:.1f} x")
        print(f"documents_verify_ratio_{k} {verify_r / verify_c:.1f} x")
    misses = [
        what
        for what, bad in (
            (f"design {seconds:.2f} s > {FLOOR_SECONDS} s", seconds > FLOOR_SECONDS),
            (f"build {build_c:.2f} s > {FLOOR_SECONDS} s", build_c > FLOOR_SECONDS),
            (f"verify {verify_c:.2f} s > {FLOOR_SECONDS} s", verify_c > FLOOR_SECONDS),
            (f"{size_c} bytes ≥ body limit {limit}", size_c >= limit),
        )
        if bad
    ]
    print(f"documents_floor_{k} {'ok' if not misses else 'MISSED: ' + '; '.join(misses)}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
