"""End to end in a real browser: the desk served as `make serve` serves it, driven by Debian's chromium.

Screenshots land in test-artifacts/e2e/. Playwright only drives the system chromium; it never
downloads a browser.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.app.conftest import build_project

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "e2e"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("e2e"),
              pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (apt-get install chromium)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    env_vars = build_project(tmp_path_factory.mktemp("e2e_project"))
    port = _free_port()
    env = {**os.environ, **env_vars, "MLFLOW_DISABLE_TELEMETRY": "true"}
    streamlit = Path(sys.executable).parent / "streamlit"
    proc = subprocess.Popen(
        [str(streamlit), "run", str(REPO / "app" / "streamlit_app.py"), "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("streamlit did not come up: " + (proc.stdout.read() if proc.stdout else ""))
    yield url
    proc.terminate()
    proc.wait(timeout=20)


def _knee(page) -> int:
    text = page.get_by_text(re.compile(r"Response time breaks away")).first.inner_text()
    return int(re.search(r"at about (\d+) clients", text).group(1))


def test_knee_page_in_chromium(served):
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(served)
        expect(page.get_by_text(re.compile(r"Response time breaks away"))).to_be_visible(timeout=90_000)
        before = _knee(page)
        assert 300 < before < 550
        # the response chart is drawn (plotly renders after the text)
        page.locator(".js-plotly-plot .scatterlayer").first.wait_for(timeout=60_000)
        assert page.locator(".js-plotly-plot").count() == 2
        page.screenshot(path=str(ARTIFACTS / "knee-2-ziips.png"))
        # move the zIIP slider one step right with the keyboard, as a user would
        slider = page.get_by_role("slider", name=re.compile("zIIPs"))
        slider.focus()
        slider.press("ArrowRight")
        expect(page.get_by_text(re.compile(r"Response time breaks away"))).not_to_have_text(
            re.compile(rf"at about {before} clients"), timeout=60_000)
        after = _knee(page)
        assert after > before
        page.wait_for_timeout(1500)  # let plotly redraw the new curve before the screenshot
        page.locator(".js-plotly-plot .scatterlayer").first.wait_for(timeout=60_000)
        page.screenshot(path=str(ARTIFACTS / "knee-3-ziips.png"))
        browser.close()
