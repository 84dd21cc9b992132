"""A collection's estimate page in a real browser (issues 38, 34): headless Chromium against ``rldp serve``.

Adult's age (bins at the public quantiles) beside sex, designed for the distribution task at ε = 1 and made the
first mechanism of a collection; held-out records privatised with its Q. From the collections list the operator
opens the collection's estimate: its state (claim policy, drift policy, contamination γ, the drift watch's
verdict), its mechanism with its claim, and the histogram, CDF and quantiles of age with their intervals.

The screenshot is kept in RLDP_KEEP_SCREENSHOTS. With RLDP_DASHBOARD_PNG=<path> (``make dashboard-png``:
docs/dashboard.png) the test also writes the README's picture of the dashboard: the top of this page in a window
of :data:`README_WINDOW`.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
import requests
from rldp_live import ADMIN_TOKEN, LiveServer
from test_dashboard_browser import _shot, _wait, browser, pytestmark, server, shots  # noqa: F401  (fixtures, the skip)
from test_dashboard_numeric_browser import N_REPORTS, _publish_age

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install 'rldp[test]')")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402

#: The README's picture: the top of this page in a window this size (the numeric charts side by side), shown by
#: GitHub at about 880 px wide.
README_WINDOW = (1280, 1220)


@pytest.mark.live
def test_the_collection_estimate_page_draws_age_and_the_collection_state(server: LiveServer, browser, shots) -> None:  # noqa: F811
    mechanism = _publish_age(server)
    body = {
        "name": "adult-age",
        "description": "Age of the census respondents, sex protected",
        "policy": {"notion": "rldp", "epsilon": 1, "drift": "pause", "contamination": 0.01},
        "window": "none",
        "mechanism": mechanism,
    }
    resp = requests.post(
        f"{server.url}/v1/collections", json=body, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30
    )
    assert resp.status_code == 201, resp.text
    driver = browser
    driver.get(server.url + "/ui/login")
    _wait(driver).until(EC.presence_of_element_located((By.ID, "token"))).send_keys(ADMIN_TOKEN)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    _wait(driver).until(EC.presence_of_element_located((By.TAG_NAME, "h1")))
    driver.find_element(By.LINK_TEXT, "Collections").click()
    _wait(driver).until(EC.presence_of_element_located((By.ID, "collection-adult-age")))
    driver.find_element(By.CSS_SELECTOR, "#collection-adult-age").find_element(
        By.LINK_TEXT, "Estimate and state"
    ).click()
    _wait(driver).until(EC.presence_of_element_located((By.CSS_SELECTOR, "svg.numeric")))
    assert driver.find_element(By.TAG_NAME, "h1").text.startswith("Collection adult-age")
    facts = driver.find_element(By.CSS_SELECTOR, ".facts").text
    assert "Contamination γ\n0.01" in facts and "On drift\npause" in facts
    assert "Drift watch:" in driver.find_element(By.ID, "drift").text
    listed = driver.find_element(By.ID, "mechanisms").text
    assert "ε = 1" in listed and "Rényi ball" in listed and f"{N_REPORTS:,}" in listed
    charts = driver.find_elements(By.CSS_SELECTOR, "svg.numeric")
    assert len(charts) == 2 and all(c.size["width"] > 400 and c.size["height"] > 200 for c in charts)
    # Side by side, and neither overlaps the other or leaves the window.
    boxes = [c.rect for c in charts]
    assert boxes[0]["x"] + boxes[0]["width"] <= boxes[1]["x"] + 1
    assert boxes[1]["x"] + boxes[1]["width"] <= driver.execute_script("return document.documentElement.clientWidth")
    section = driver.find_element(By.ID, "numeric-age").text
    assert "age itself is protected only as far as it reveals sex" in section
    for label in ("mean", "median", "p90", "p99", "mean | sex = Female", "median | sex = Male"):
        assert label in section, label
    histogram, cdf = charts
    assert "share per" in histogram.text and "age" in histogram.text
    assert "median" in cdf.text and "P(age ≤ x)" in cdf.text
    row = driver.find_element(By.CSS_SELECTOR, "#numeric-age table.data tbody tr").text.split()
    mean = float(row[1])
    low, high = (float(v.strip("[],")) for v in row[2:4])
    assert 30 < low <= mean <= high < 45
    # The mechanism's own pages are one click away.
    assert driver.find_element(By.LINK_TEXT, "its estimate").get_attribute("href").endswith(f"/{mechanism}/estimate")
    _shot(driver, shots, "11-collection-estimate")
    assert (shots / "11-collection-estimate.png").stat().st_size > 10_000
    target = os.environ.get("RLDP_DASHBOARD_PNG")
    if target:
        driver.set_window_size(*README_WINDOW)
        driver.execute_script("window.scrollTo(0, 0); document.documentElement.style.overflow = 'hidden'")
        png = driver.get_screenshot_as_png()
        driver.execute_script("document.documentElement.style.overflow = ''")
        _write_png(png, Path(target))


def _write_png(png: bytes, path: Path) -> None:
    """The screenshot at ``path``, in 256 colours when Pillow is there (a third of the size, text as sharp)."""
    try:
        from PIL import Image
    except ImportError:
        path.write_bytes(png)
        return
    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)
