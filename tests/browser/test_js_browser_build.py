"""The TypeScript SDK's browser build loads from a plain ``<script type="module">`` in Chromium, without a bundler
(issue 35): ``npm run build:browser`` (run by ``prepublishOnly``) makes one ES module with @msgpack/msgpack bundled
and no bare imports. The page imports it, verifies a conformance document (content id, audit) and draws a report.
Needs Chromium and its driver, as the other browser tests; js/test/browser.test.mjs checks the same build in Node.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from rldp_live import free_port

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install 'rldp[test]')")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
BIN = JS / "node_modules" / ".bin"
CHROMIUM = os.environ.get("RLDP_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("RLDP_CHROMEDRIVER", "/usr/bin/chromedriver")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()) and not os.environ.get("RLDP_REQUIRE_BROWSER"),
        reason=f"needs Chromium and its driver ({CHROMIUM}, {CHROMEDRIVER}): apt-get install chromium chromium-driver",
    ),
    pytest.mark.skipif(
        not (BIN / "esbuild").exists(), reason="the JS SDK's packages are not installed (cd js && npm ci)"
    ),
]

PAGE = """<!doctype html>
<meta charset="utf-8">
<title>rldp browser build</title>
<p id="status">working…</p>
<script type="module">
import * as rldp from "./rldp.browser.js";
const status = document.getElementById("status");
try {
  const bytes = Uint8Array.from(atob(%(document)s), (c) => c.charCodeAt(0));
  const mech = rldp.Mechanism.fromBytes(bytes, "msgpack");
  const y = mech.privatizeIndices([0])[0];
  status.textContent = mech.id === %(id)s && y >= 0 && y < mech.outputs ? "verified " + mech.id : "wrong";
} catch (exc) {
  status.textContent = "error: " + exc.name + ": " + exc.message;
}
</script>
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The browser build and a page importing it, served on 127.0.0.1; yields (origin, the document's id)."""
    package = json.loads((JS / "package.json").read_text(encoding="utf-8"))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(package["scripts"]["build"], shell=True, cwd=JS, env=env, check=True, capture_output=True)
    subprocess.run(package["scripts"]["build:browser"], shell=True, cwd=JS, env=env, check=True, capture_output=True)
    cases = json.loads((ROOT / "conformance" / "cases" / "documents-rldp.json").read_text(encoding="utf-8"))["cases"]
    case = next(c for c in cases if c["name"] == "rldp/grr/rows/msgpack")
    folder = tmp_path_factory.mktemp("browser-build")
    shutil.copy(JS / "dist" / "rldp.browser.js", folder / "rldp.browser.js")
    page = PAGE % {"document": json.dumps(case["document_base64"]), "id": json.dumps(case["expect"]["id"])}
    (folder / "index.html").write_text(page, encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", case["expect"]["id"]
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def test_the_browser_build_loads_from_a_plain_module_script(site: tuple[str, str], browser) -> None:
    origin, mechanism_id = site
    browser.get(f"{origin}/index.html")
    status = WebDriverWait(browser, 60).until(
        lambda d: (
            (d.find_element(By.ID, "status").text or "").strip() not in ("", "working…")
            and d.find_element(By.ID, "status").text
        )
    )
    assert status == f"verified {mechanism_id}", f"the page says: {status}"
