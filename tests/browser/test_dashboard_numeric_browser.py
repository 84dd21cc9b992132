"""A numeric released attribute's estimate in a real browser (issue 38): headless Chromium against ``rldp serve``.

Adult's age (bins at the public quantiles) released beside sex, designed for the distribution task at ε = 1;
held-out records privatised with the published Q; the estimate page then shows the histogram and CDF charts
with their intervals and the table of mean and quantiles. The screenshot is kept in RLDP_KEEP_SCREENSHOTS.
"""

from __future__ import annotations

import numpy as np
import pytest
import requests
from rldp_live import ADMIN_TOKEN, LiveServer
from test_dashboard_browser import _shot, _wait, browser, pytestmark, server, shots  # noqa: F401  (fixtures, the skip)

from rldp.shared.document import alphabet as document_alphabet
from rldp.shared.document import report_matrix

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install 'rldp[test]')")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402

N_REPORTS = 4000


def _publish_age(live: LiveServer) -> str:
    from rldp.aggregator.design import DesignRequest, design_document
    from rldp.demo.datasets import load_adult
    from rldp.shared.numeric import spec_from_cells
    from rldp.shared.records import Alphabet

    public = load_adult("data")
    spec = spec_from_cells(public.column("age"), "age")
    alphabet = Alphabet.from_table(public, "sex", ["age"], numeric={"age": spec})
    request = DesignRequest(method="polyopt", epsilon=1.0, radius=0.01, window=None, task="distribution")
    doc = design_document(request, alphabet=alphabet, public_distribution=alphabet.empirical_distribution(public))
    resp = requests.post(
        f"{live.url}/v1/mechanisms", json=doc, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
    )
    assert resp.status_code in (200, 201), resp.text
    test = load_adult("test")
    alpha = document_alphabet(doc)
    rows = list(zip(test.column("sex"), test.column("age"), strict=True))[:N_REPORTS]
    x = alpha.encode(rows)
    q = report_matrix(doc)
    rng = np.random.default_rng(38)
    y = (rng.random(x.size)[None, :] > np.cumsum(q[:, x], axis=0)).sum(axis=0).clip(max=q.shape[0] - 1)
    resp = live.post_reports(doc["id"], "numeric-browser", y.tolist())
    assert resp.status_code == 201, resp.text
    return str(doc["id"])


@pytest.mark.live
def test_the_estimate_page_draws_age(server: LiveServer, browser, shots) -> None:  # noqa: F811
    mechanism = _publish_age(server)
    driver = browser
    driver.get(server.url + "/ui/login")
    _wait(driver).until(EC.presence_of_element_located((By.ID, "token"))).send_keys(ADMIN_TOKEN)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    _wait(driver).until(EC.presence_of_element_located((By.TAG_NAME, "h1")))
    driver.get(f"{server.url}/ui/mechanisms/{mechanism}/estimate")
    _wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "svg.numeric")))
    charts = driver.find_elements(By.CSS_SELECTOR, "svg.numeric")
    assert len(charts) == 2 and all(c.size["width"] > 400 and c.size["height"] > 200 for c in charts)
    section = driver.find_element(By.ID, "numeric-age").text
    assert "age itself is protected only as far as it reveals sex" in section
    for label in ("mean", "median", "p90", "p99", "mean | sex = Female", "median | sex = Male"):
        assert label in section, label
    histogram, cdf = charts
    assert "share per" in histogram.text and "age" in histogram.text
    assert "median" in cdf.text and "P(age ≤ x)" in cdf.text
    # The mean is a plausible adult age, inside its interval (the table's first row).
    row = driver.find_element(By.CSS_SELECTOR, "#numeric-age table.data tbody tr").text.split()
    mean = float(row[1])
    low, high = (float(v.strip("[],")) for v in row[2:4])
    assert 30 < low <= mean <= high < 45
    driver.execute_script("document.getElementById('numeric-age').scrollIntoView()")
    _shot(driver, shots, "10-numeric-estimate")
    assert (shots / "10-numeric-estimate.png").stat().st_size > 10_000
