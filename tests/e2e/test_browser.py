"""End to end in a real browser: the desk served as `make serve` serves it, driven by Debian's chromium.

The project (marts, registry with the seed-004 champion) is built in a temp dir exactly as for the
AppTests. Screenshots and the server log land in test-artifacts/e2e/. Playwright only drives the
system chromium (CI installs it with `apt-get install -y chromium`); it never downloads a browser.
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
KNEE = re.compile(r"Response time breaks away")

pytestmark = [pytest.mark.e2e, pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None,
                                 reason="no chromium binary on PATH (Debian: apt-get install -y chromium)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`make serve`'s command line on a free port, pointed at the temp project; yields the URL."""
    env_vars = build_project(tmp_path_factory.mktemp("e2e_project"))
    port = _free_port()
    env = {**os.environ, **env_vars, "MLFLOW_DISABLE_TELEMETRY": "true"}
    streamlit = Path(sys.executable).parent / "streamlit"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log_path = ARTIFACTS / "streamlit.log"
    with log_path.open("w", encoding="utf-8") as log:  # a file, not a pipe: nobody reads a pipe, it would fill up
        proc = subprocess.Popen(
            [str(streamlit), "run", str(REPO / "app" / "streamlit_app.py"), "--server.address", "127.0.0.1",
             "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 90
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"streamlit exited with {proc.returncode}:\n{log_path.read_text(encoding='utf-8')}")
                try:
                    if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    pass
                if time.time() > deadline:
                    pytest.fail(f"streamlit not healthy after 90 s:\n{log_path.read_text(encoding='utf-8')}")
                time.sleep(0.5)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, served):
    # a tall viewport instead of full_page screenshots (Streamlit scrolls inside its own container)
    context = browser.new_context(viewport={"width": 1400, "height": 2000})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(served)
    yield tab
    context.close()
    assert not errors, f"JavaScript errors in the page: {errors}"


def _knee(page) -> int:
    text = page.get_by_text(KNEE).first.inner_text()
    return int(re.search(r"at about (\d+) clients", text).group(1))


def _wait_for_charts(page, count: int) -> None:
    page.locator(".js-plotly-plot .scatterlayer").first.wait_for(timeout=60_000)
    page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot').length >= {count}", timeout=60_000)


def test_knee_moves_when_a_zIIP_is_added_in_chromium(page):
    from playwright.sync_api import expect

    expect(page.get_by_text(KNEE)).to_be_visible(timeout=90_000)
    before = _knee(page)
    assert 300 < before < 550  # IBM's Table 1 breaks away between 300 and 500 clients with 2 zIIPs
    _wait_for_charts(page, 2)
    assert page.locator(".js-plotly-plot").count() == 2
    # the knee is drawn: plotly writes the annotation text into the SVG
    expect(page.locator(".js-plotly-plot").first.get_by_text(f"knee ~{before}")).to_be_visible(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "knee-2-ziips.png"))

    # move the zIIP slider one step right with the keyboard, as a user would
    shown = page.get_by_test_id("stSlider").filter(has_text="zIIPs").get_by_test_id("stSliderThumbValue")
    expect(shown).to_have_text("2")
    slider = page.get_by_role("slider", name=re.compile("zIIPs"))
    slider.focus()
    slider.press("ArrowRight")
    expect(shown).to_have_text("3", timeout=10_000)
    expect(page.get_by_text(KNEE)).not_to_have_text(re.compile(rf"at about {before} clients"), timeout=60_000)
    after = _knee(page)
    assert after > before * 1.2  # a third zIIP moves the knee out
    expect(page.locator(".js-plotly-plot").first.get_by_text(f"knee ~{after}")).to_be_visible(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "knee-3-ziips.png"))


def test_planner_recommends_a_third_zIIP_in_chromium(page):
    from playwright.sync_api import expect

    expect(page.get_by_text(KNEE)).to_be_visible(timeout=90_000)
    page.get_by_role("link", name="zIIP planner").click()
    recommendation = page.get_by_text(re.compile(r"^Recommendation: "))
    expect(recommendation).to_be_visible(timeout=60_000)
    # defaults: the largest measured load (500 clients), 2 GCPs, Z = 200 ms, a 2 ms SLO
    expect(recommendation).to_contain_text(re.compile(r"\b3 zIIP\(s\)"))
    clients = page.get_by_label("Target clients")
    clients.fill("300")
    clients.press("Enter")
    expect(recommendation).to_contain_text(re.compile(r"\b2 zIIP\(s\)"), timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "planner-300-clients.png"))
