"""Constants and helpers shared by the tests: the papers' worked example, the Adult data."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rldp.demo.datasets import ADULT_COLUMNS, data_file

# ADULT_COLUMNS is re-exported: the one column list is the shipped data's (rldp.demo.datasets).
__all__ = [
    "ROOT",
    "SHARED_DATA",
    "ADULT_COLUMNS",
    "ADULT_CATEGORY_SIZES",
    "EXAMPLE_P_HAT",
    "EXAMPLE_P_TRUE",
    "EXAMPLE_N",
    "EXAMPLE_EPSILON",
    "adult_path",
]

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

# Category counts of the Adult data documented in shared/data/README.md ('?' counted as a category).
ADULT_CATEGORY_SIZES = {
    "sex": 2,
    "race": 5,
    "relationship": 6,
    "marital-status": 7,
    "education": 16,
    "occupation": 15,
    "native-country": 42,
}

# [LZG24, Example 1]: P̂ from n = 100 public records, s major.
EXAMPLE_P_HAT = np.array([[0.07, 0.10], [0.26, 0.57]])
EXAMPLE_P_TRUE = np.array([[0.1, 0.1], [0.2, 0.6]])
EXAMPLE_N = 100
EXAMPLE_EPSILON = math.log(2)


def adult_path(name: str = "adult.data.gz") -> Path:
    """Path of an Adult file: the copy shipped in rldp.demo if present, else ../shared/data."""
    try:
        # The tests run on the source tree (editable install), where the shipped file is a
        # real file: its path stays valid after the context manager exits.
        with data_file(name) as path:
            return path
    except FileNotFoundError:
        pass
    if (SHARED_DATA / name).exists():
        return SHARED_DATA / name
    pytest.skip(f"Adult data file {name} not available")


#: Records in the Adult training file: the public sample size of the synthetic designs in tests.
ADULT_N = 32561


def section_vertices(
    shape: tuple[int, int], seed: int, eps: float, same_sensitive: bool
) -> tuple[np.ndarray, Any, np.ndarray]:
    """(P̂, the Γ cone at ``eps``, every vertex of Γ̂ scaled to P̂·z = 1) for a small S × U drawn by
    :func:`jeffreys` (800 records, a 95 % confidence set): the brute-force check of a bound on
    max μ(z) − λ·z over Γ ∩ {P̂·z = 1}, whose convex maximum is at one of these vertices."""
    from rldp.aggregator.design import GammaCone, enumerate_vertices
    from rldp.shared.uncertainty import UncertaintySet

    p = jeffreys(shape, seed, n=800)
    low = UncertaintySet.from_confidence(p, 800, 0.05).lower_bounds()
    cone = GammaCone(low, eps, same_sensitive)
    verts = enumerate_vertices(cone)
    return p, cone, verts / (verts @ p.reshape(-1))[:, None]


def sparse_columns(b: int, a: int, seed: int, density: float = 0.5) -> np.ndarray:
    """A random mechanism Q (b outputs × a inputs, columns summing to 1) with many exact zeros
    (each entry kept with probability ``density``; output 0 always possible)."""
    rng = np.random.default_rng(seed)
    q = rng.random((b, a)) * (rng.random((b, a)) < density)
    q[0] += 1e-3
    return q / q.sum(axis=0)


def columns_drawn_as_q(y: np.ndarray, x: np.ndarray, q: np.ndarray, cols: np.ndarray, sigmas: float) -> None:
    """Assert that the outputs ``y`` drawn for each input of ``cols`` (``x`` repeats each the
    same number of times) have Q's column as frequencies within ``sigmas`` binomial σ, and that
    outputs of probability 0 never occur."""
    n_per = int(np.count_nonzero(x == cols[0]))
    for col in cols:
        emp = np.bincount(y[x == col], minlength=q.shape[0]) / n_per
        tol = sigmas * np.sqrt(q[:, col] * (1 - q[:, col]) / n_per) + 1e-12
        assert np.all(np.abs(emp - q[:, col]) <= tol), col
        assert np.all(emp[q[:, col] == 0] == 0), col


def assert_ladder_certified(res: Any, uset: Any, epsilon: float = 1.0) -> None:
    """A column-generation result after its coarse stages: at least the last stage's information
    (certification renormalises columns, so round-off only), passes the exact RLDP audit, and its
    proven bound, if any, is not below it."""
    from rldp.shared.audit import audit_rldp

    assert res.information >= res.stages[-1]["information"] * (1 - 1e-7)
    assert audit_rldp(res.matrix, uset, epsilon).passed
    assert res.upper_bound is None or res.upper_bound >= res.information - 1e-9


def jeffreys(shape: tuple[int, int], seed: int, n: int = ADULT_N) -> np.ndarray:
    """An empirical P̂ over S × U of ``n`` records drawn from a Jeffreys-Dirichlet truth (every S row non-empty)."""
    rng = np.random.default_rng(seed)
    while True:
        p = rng.multinomial(n, rng.dirichlet(np.full(shape[0] * shape[1], 0.5))).reshape(shape) / n
        if np.all(p.sum(axis=1) > 0):
            return p


def grr_form_document(a1: int, a2: int, epsilon: float = 1.0, notion: str = "rldp") -> dict[str, Any]:
    """A format-3 document whose matrix is the compact GRR form on |X| = a1·a2 symbols, assembled by
    hand (so no bound of the writer stops it): a tiny body that stands for a K × K matrix."""
    from rldp.shared.document import FORMAT_3, content_id

    k = a1 * a2
    off = 1.0 / (math.exp(epsilon) + k - 1)
    privacy: dict[str, Any] = {"notion": notion, "epsilon": float(epsilon)}
    if notion != "ldp":
        privacy["uncertainty"] = {"divergence": "renyi", "order": 2.0, "radius": None}
    doc: dict[str, Any] = {
        "format": FORMAT_3,
        "id": "",
        "method": "grr",
        "privacy": privacy,
        "sensitive": {"name": "s", "values": [f"s{i}" for i in range(a1)]},
        "released": [{"name": "u", "values": [f"u{i}" for i in range(a2)]}],
        "public_distribution": [[1.0 / k] * a2 for _ in range(a1)],
        "matrix": {"form": "grr", "size": k, "diagonal": 1.0 - (k - 1) * off, "off_diagonal": off},
    }
    doc["id"] = content_id(doc)
    return doc


_SEX_RACE: dict[float, dict[str, Any]] = {}


def adult_sex_race_polyopt(epsilon: float = 1.5) -> dict[str, Any]:
    """The sex/race PolyOpt document designed from the Adult public data (the drift watch's example), cached."""
    if epsilon not in _SEX_RACE:
        from rldp.aggregator.frames import design_from_frame
        from rldp.demo.datasets import load_adult

        _SEX_RACE[epsilon] = design_from_frame(
            load_adult(), sensitive="sex", released=["race"], method="polyopt", epsilon=epsilon, name="adult"
        )
    return _SEX_RACE[epsilon]


def skewed_population(p_hat: np.ndarray, share: float = 0.6, cell: int = 0) -> np.ndarray:
    """``share`` of the population in one cell (0: Female|Amer-Indian-Eskimo for sex/race), the rest as P̂."""
    skew = np.asarray(p_hat, dtype=float) * (1.0 - share)
    skew.flat[cell] += share
    return skew


def population_reports(doc: dict[str, Any], truth: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n reports of users whose records follow ``truth`` (flat over the document's X): x ~ truth, y ~ Q(·|x),
    vectorised (inverse CDF over the report matrix's columns)."""
    from rldp.shared.document import report_matrix

    rng = np.random.default_rng(seed)
    q = report_matrix(doc)
    xs = rng.choice(truth.size, size=n, p=truth)
    cdf = np.cumsum(q[:, xs], axis=0)
    return (rng.random(n)[None, :] > cdf).sum(axis=0)


def window_label(doc: dict[str, Any], when: float | None = None) -> str | None:
    """The label of ``doc``'s collection window that holds ``when`` (now by default); None without windows."""
    import time

    from rldp.shared.collection import collection_window

    window = collection_window(doc)
    return None if window is None else window.label_at(time.time() if when is None else when)


def report_body(
    doc: dict[str, Any], reports: Any, batch: str | None = None, when: float | None = None
) -> dict[str, Any]:
    """The upload body of one batch of ``reports`` under ``doc``, labelled with the window that holds ``when``
    (now by default) when the mechanism collects by window — what a client sends (designs have windows by
    default)."""
    import uuid

    from rldp.shared.reports import batch_body

    return batch_body(doc["id"], batch or uuid.uuid4().hex, reports, window_label(doc, when))
