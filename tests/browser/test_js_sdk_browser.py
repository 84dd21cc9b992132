"""The JavaScript SDK in a real browser: headless Chromium (selenium) loads an example page that
bundles the SDK (js/example), served from another origin than ``rldp serve --cors-origin``.

The page downloads the mechanism, verifies it (content id, audit), memoises the draw in IndexedDB,
submits it and shows what it sent. The test checks that the server stored exactly that report,
that a reload sends the memoised draw again (never a fresh one), and saves a screenshot of each
load (RLDP_KEEP_SCREENSHOTS=DIR keeps them). Needs Chromium and its driver (as the dashboard test)
and the SDK's npm packages (``make test`` installs them before pytest when Node ≥ 20 is there).
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest
from rldp_live import LiveServer, free_port, make_document

from rldp.aggregator.storage import open_storage

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install 'rldp[test]')")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

JS = Path(__file__).resolve().parents[2] / "js"
ESBUILD = JS / "node_modules" / ".bin" / "esbuild"
CHROMIUM = os.environ.get("RLDP_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("RLDP_CHROMEDRIVER", "/usr/bin/chromedriver")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()) and not os.environ.get("RLDP_REQUIRE_BROWSER"),
        reason=f"needs Chromium and its driver ({CHROMIUM}, {CHROMEDRIVER}): apt-get install chromium chromium-driver",
    ),
    pytest.mark.skipif(not ESBUILD.exists(), reason="the JS SDK's packages are not installed (cd js && npm ci)"),
]


@pytest.fixture(scope="module")
def page_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """js/example with the SDK bundled by esbuild, served on its own origin; yields that origin."""
    site = tmp_path_factory.mktemp("site")
    shutil.copy(JS / "example" / "index.html", site / "index.html")
    subprocess.run(
        [str(ESBUILD), "example/app.ts", "--bundle", "--format=esm", "--platform=browser", f"--outfile={site}/app.js"],
        cwd=JS,
        check=True,
        capture_output=True,
    )
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, page_site: str) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("js-browser")
    live = LiveServer(
        f"sqlite:///{tmp}/rldp.sqlite3", tmp / "logs", workers=1, threads=2, extra_args=("--cors-origin", page_site)
    )
    live.start()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--window-size=1100,700",
    ):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _sent(driver) -> int:
    """The report the page says it sent, once it is done (the page's error otherwise)."""
    status = WebDriverWait(driver, 60).until(
        lambda d: (
            (d.find_element(By.ID, "status").text or "").strip() not in ("", "working…")
            and d.find_element(By.ID, "status").text
        )
    )
    assert status == "sent", f"the page says: {status}"
    return int(driver.find_element(By.ID, "sent").text)


def test_the_page_verifies_memoises_in_indexeddb_and_submits(server: LiveServer, browser, page_site: str) -> None:
    doc = make_document("js-browser")
    assert server.publish(doc).status_code == 201
    keep = os.environ.get("RLDP_KEEP_SCREENSHOTS")
    shots = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="rldp-js-screenshots-"))
    shots.mkdir(parents=True, exist_ok=True)
    browser.get(f"{page_site}/index.html?" + urlencode({"server": server.url, "mechanism": doc["id"]}))
    first = _sent(browser)
    assert browser.find_element(By.ID, "mechanism").text == doc["id"]
    browser.save_screenshot(str(shots / "js-sdk-page.png"))
    for _ in range(3):  # reloads: the same memoised draw from IndexedDB (a fresh one would differ w.p. ≈ 0.8 each)
        browser.refresh()
        assert _sent(browser) == first
    browser.save_screenshot(str(shots / "js-sdk-page-reloaded.png"))
    store = open_storage(server.db_url)
    try:
        counts = store.counts(doc["id"], 6)
    finally:
        store.close()
    expected = np.zeros(6, dtype=np.int64)
    expected[first] = 4  # four loads, one report each: every one the memoised draw
    np.testing.assert_array_equal(counts, expected)
    if not keep:
        shutil.rmtree(shots, ignore_errors=True)
