"""The dashboard's estimate page draws a numeric released attribute (issue 38) as a histogram over its bin
edges (density bars, 95 % error bars) and a CDF (95 % band, the median, p90 and p99 marked), with a table
of the mean, the quantiles and both per value of S, and the note that S alone is protected."""

from __future__ import annotations

import re

import numpy as np
import pytest
from rldp_live import ADMIN, AGE_ALPHABET, AGE_P_HAT, AGE_SPEC, READ_TOKEN, grr_age_document, in_process_app, login

from rldp.aggregator.http.dashboard.numeric_charts import cdf_chart, density_unit, histogram_chart
from rldp.shared.attributes import Attribute
from rldp.shared.records import Alphabet

SPEC, ALPHA, P_HAT = AGE_SPEC, AGE_ALPHABET, AGE_P_HAT


def _summary(shares, low, high, cdf_low=None, cdf_high=None) -> dict:
    edges = [0.0, 10.0, 20.0, 40.0]
    f = np.cumsum(shares)[:-1].tolist()
    return {
        "edges": edges,
        "closed": "left",
        "labels": ["[0, 10)", "[10, 20)", "[20, 40]"],
        "histogram": {"estimate": shares, "ci95_low": low, "ci95_high": high, "identified": [True] * 3},
        "cdf": {
            "at": edges[1:-1],
            "estimate": f,
            "ci95_low": cdf_low or [v - 0.05 for v in f],
            "ci95_high": cdf_high or [v + 0.05 for v in f],
            "identified": [True, True],
        },
        "quantiles": {
            "0.5": {"estimate": 15.0, "ci95_low": 12.0, "ci95_high": 18.0, "identified": True},
            "0.9": {"estimate": 34.0, "ci95_low": 30.0, "ci95_high": 37.0, "identified": True},
            "0.99": {"estimate": 39.4, "ci95_low": 38.0, "ci95_high": 40.0, "identified": True},
        },
    }


def _bars(svg: str) -> list[tuple[float, float, float]]:
    """(x, width, height) of every histogram bar (the rects with a title)."""
    return [
        (float(x), float(w), float(h))
        for x, w, h in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="([\d.]+)"[^>]*><title>', svg)
    ]


def test_the_histogram_draws_a_density_over_the_edges_with_error_bars() -> None:
    svg = str(histogram_chart("age", _summary([0.25, 0.25, 0.5], [0.2, 0.2, 0.45], [0.3, 0.3, 0.55])))
    bars = _bars(svg)
    assert len(bars) == 3
    # Equal shares over bins 10 and 20 wide… the wider bar spans twice the width at the same density.
    assert bars[2][1] == pytest.approx(2 * bars[0][1] + 1, abs=0.2)
    assert bars[0][2] == pytest.approx(bars[1][2]) and bars[2][2] == pytest.approx(bars[0][2], rel=1e-3)
    assert density_unit([0.0, 10.0, 20.0, 40.0]) == 10.0
    assert "share per 10 units of age" in svg and ">age<" in svg and "bins closed left" in svg
    assert svg.count('<line class="ci"') == 3 * 3  # one bar and two caps per interval
    assert "style=" not in svg  # presentation attributes only (the Content-Security-Policy)
    # A withheld interval draws no error bar, and its title says so.
    svg = str(histogram_chart("age", _summary([0.25, 0.25, 0.5], [0.2, None, 0.45], [0.3, None, 0.55])))
    assert svg.count('<line class="ci"') == 2 * 3 and "interval withheld" in svg


def test_the_cdf_draws_the_band_and_marks_the_quantiles() -> None:
    svg = str(cdf_chart("age", _summary([0.25, 0.25, 0.5], [0.2, 0.2, 0.45], [0.3, 0.3, 0.55])))
    line = re.search(r'<polyline points="([^"]+)"', svg)
    assert line is not None and len(line.group(1).split()) == 4  # 0 at the first edge, 1 at the last
    band = re.search(r'<polygon points="([^"]+)"', svg)
    assert band is not None and len(band.group(1).split()) == 8
    for text in ("median 15", "p90 34", "p99 39.4", "P(age ≤ x)", "95 % band (pointwise)", "95 % [12, 18]"):
        assert text in svg, text
    # The band is around the line: at the inner edges its top is above (smaller y) and its bottom below.
    ys = [float(p.split(",")[1]) for p in line.group(1).split()]
    band_ys = [float(p.split(",")[1]) for p in band.group(1).split()]
    upper, lower = band_ys[:4], band_ys[4:][::-1]
    assert all(u < y < lo for u, y, lo in zip(upper[1:3], ys[1:3], lower[1:3], strict=True))


def test_the_estimate_page_shows_a_numeric_attribute(tmp_path) -> None:
    doc = grr_age_document()
    rng = np.random.default_rng(3)
    q = np.asarray(doc["matrix"])
    x = rng.integers(0, 8, 2000)
    reports = (rng.random(x.size)[:, None] > q.cumsum(axis=0)[:, x].T).sum(axis=1).tolist()
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        resp = http.post("/v1/reports", json={"mechanism": doc["id"], "batch": "a", "reports": reports})
        assert resp.status_code == 201, resp.json
        assert login(http, READ_TOKEN).status_code == 303
        resp = http.get(f"/ui/mechanisms/{doc['id']}/estimate")
        page = resp.get_data(as_text=True)
    assert resp.status_code == 200
    assert page.count('class="chart numeric"') == 2
    assert "histogram of age with 95% intervals" in page and "CDF of age with 95% band" in page
    assert "age itself is protected only as far as it reveals sex" in page
    assert "edges 17.0, 25.0, 35.0, 50.0, 90.0 (closed left)" in page
    rows = re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">([^<]+)</td>", page)
    labels = [label for label, _ in rows]
    for label in ("mean", "median", "p90", "p99", "mean | sex = Male", "median | sex = Female", "p99 | sex = Male"):
        assert label in labels, label
    mean = float(dict(rows)["mean"])
    assert 17 < mean < 90


def test_a_categorical_estimate_has_no_numeric_section(tmp_path) -> None:
    alpha = Alphabet(Attribute("sex", ("Female", "Male")), [Attribute("band", ("a", "b", "c", "d"))])
    doc = grr_age_document(alpha)
    with in_process_app(tmp_path) as app:
        http = app.test_client()
        assert http.post("/v1/mechanisms", json=doc, headers=ADMIN).status_code == 201
        reports = np.random.default_rng(4).integers(0, 8, 500).tolist()
        assert http.post("/v1/reports", json={"mechanism": doc["id"], "batch": "a", "reports": reports}).status_code
        assert login(http, READ_TOKEN).status_code == 303
        page = http.get(f"/ui/mechanisms/{doc['id']}/estimate").get_data(as_text=True)
    assert "chart numeric" not in page and "svg" in page


def test_charts_of_one_bin_of_withheld_intervals_and_of_a_wide_range() -> None:
    one = _summary([1.0], [1.0], [1.0])
    one.update(edges=[0.0, 5.0], labels=["[0, 5]"])
    one["cdf"] = {"at": [], "estimate": [], "ci95_low": [], "ci95_high": [], "identified": []}
    wide = _summary([0.9, 0.08, 0.02], [None] * 3, [None] * 3, [None, None], [None, None])
    wide["edges"] = [0.0, 1.0, 5000.0, 99999.0]
    wide["cdf"]["at"] = [1.0, 5000.0]
    for summary in (one, wide):
        for svg in (str(histogram_chart("capital-gain", summary)), str(cdf_chart("capital-gain", summary))):
            assert svg.startswith("<svg") and svg.endswith("</svg>")
            assert not re.search(r"nan|inf", svg, re.IGNORECASE)
    svg = str(histogram_chart("capital-gain", wide))
    assert "share per unit of capital-gain" in svg and '<line class="ci"' not in svg and "1e+05" in svg
