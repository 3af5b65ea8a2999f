"""End to end in a real browser: the desk served as `make serve` serves it, driven by Debian's chromium.

The project (marts, registry with the seed-004 champion) is the AppTests' own (``app_project``, built
once per worker). Screenshots and the server log land in test-artifacts/e2e/. Playwright only drives the
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

from tests.app.conftest import OWN_WORKLOAD, SMF_CLASS, SMF_CLASS_2, SMF_CLASS_2_SYSTEM

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "e2e"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
KNEE = re.compile(r"Response time breaks away")
OTHER_LOAD = "Other classes' load x"  # a WLM class's input: the other classes' load factor
SLO = "Response-time SLO (ms)"

pytestmark = [pytest.mark.e2e, pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None,
                                 reason="no chromium binary on PATH (Debian: apt-get install -y chromium)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def project(app_project) -> dict[str, str]:
    """The temp project (marts, registry, params; one build per worker): the env vars that point the desk at it."""
    return app_project


@pytest.fixture(scope="module")
def served(project):
    """`make serve`'s command line on a free port, pointed at the temp project; yields the URL."""
    env_vars = project
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


def test_capacity_reports_open_in_chromium_without_errors(browser, project, tmp_path):
    """Both reports `kneecap report` writes (a table of runs, an SMF class) open from file:// and draw their charts."""
    from tests.app.test_report import write_reports

    for workload, path in write_reports(project, tmp_path).items():
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        tab = context.new_page()
        problems: list[str] = []
        tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        tab.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}")
               if msg.type in ("error", "warning") else None)
        # no network is needed: any request for something other than the file itself fails the test
        tab.on("request", lambda req: problems.append(f"request: {req.url}")
               if not req.url.startswith(("file://", "data:", "blob:")) else None)
        tab.goto(path.as_uri())
        tab.locator("svg.main-svg").first.wait_for(timeout=30_000)
        charts = tab.locator(".js-plotly-plot")
        # a class: its response, measured PI over time, forecast PI and percentiles against load
        assert charts.count() == (4 if workload == SMF_CLASS else 1)
        assert tab.locator("#response-chart .scatterlayer .trace").count() >= 4  # band, model, points, knee
        tab.screenshot(path=str(ARTIFACTS / f"report-{workload}.png"), full_page=True)
        context.close()
        assert not problems, (workload, problems)


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
    recommendation = page.get_by_text(re.compile(r"SLO [\d.]+ ms: recommendation "))
    expect(recommendation).to_be_visible(timeout=60_000)
    # defaults: the largest measured load (500 clients), 2 GCPs, Z = 200 ms, a 2 ms SLO
    expect(recommendation).to_contain_text(re.compile(r"\b3 zIIP\(s\)"))
    clients = page.get_by_label("Target clients")
    clients.fill("300")
    clients.press("Enter")
    expect(recommendation).to_contain_text(re.compile(r"\b2 zIIP\(s\)"), timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "planner-300-clients.png"))


# --- Desk state belongs to the workload (issue #34 item 1) -------------------------------------


def _engines(n_gcp: int, n_ziip: int | None = None) -> str:
    """The answer's first words for the engines: '3 GCPs + 1 zIIP'."""
    words = f"{n_gcp} GCP{'' if n_gcp == 1 else 's'}"
    return words if n_ziip is None else f"{words} + {n_ziip} zIIP{'' if n_ziip == 1 else 's'}"


def _choose(page, label: str, option: str) -> None:
    box = page.get_by_test_id("stSelectbox").filter(has_text=label).first
    box.click()
    # typed, as a user finds an entry of a long list: the list draws only the options in view
    page.keyboard.type(option)
    page.get_by_role("option", name=option, exact=True).click()


# Streamlit keeps an element it is replacing on the page, marked stale, until the run ends: a
# slider whose range changed is there twice for a moment
FRESH = '[data-testid="stElementContainer"][data-stale="false"]'


def _slider(page, label: str):
    return page.locator(f'{FRESH} [data-testid="stSlider"]').filter(has=page.get_by_text(label, exact=True))


def _slider_value(page, label: str) -> float:
    return float(_slider(page, label).get_by_test_id("stSliderThumbValue").inner_text())


def _until_changed(act, value, before: str) -> None:
    """``act()`` and wait for ``value()`` to differ from ``before``; once more if it did not within 5 s.

    The browser shows a stepped value at once, before the desk reruns, so a step that has not
    shown in 5 s never reached the widget: a key or click sent to an element Streamlit was
    replacing (its range changed with the previous step) is lost, and a user would press again.
    """
    for deadline in (5.0, 30.0):
        act()
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            if value() != before:
                return
            time.sleep(0.1)
    raise AssertionError(f"the input still shows {before!r} after two steps")


def _step_slider(page, label: str) -> None:
    """One step right with the keyboard, as a user would, and wait for the thumb to move."""
    shown = _slider(page, label).get_by_test_id("stSliderThumbValue")

    def press() -> None:
        thumb = _slider(page, label).get_by_role("slider")
        thumb.focus()
        thumb.press("ArrowRight")

    _until_changed(press, shown.inner_text, shown.inner_text())


def _number(page, label: str) -> float:
    return float(page.locator(FRESH).get_by_label(label, exact=True).input_value())


def _step_number(page, label: str) -> None:
    """The number input's + button, as a user would press it, and wait for the value to change."""
    box = page.locator(f'{FRESH} [data-testid="stNumberInput"]').filter(has=page.get_by_label(label, exact=True))
    field = box.get_by_label(label, exact=True)
    _until_changed(box.get_by_test_id("stNumberInputStepUp").click, field.input_value, field.input_value())


def _open(page, expander: str) -> None:
    """Open the expander labelled ``expander`` unless it is open, and wait until it has opened."""
    from playwright.sync_api import expect

    details = page.locator('[data-testid="stExpander"] details').filter(has=page.get_by_text(expander))
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    expect(details).to_have_attribute("open", "")
    # its inputs take clicks once it has stopped growing (Playwright waits for a stable box)
    details.get_by_test_id("stExpanderDetails").wait_for(state="visible")
    page.wait_for_timeout(500)


def _expect_answer(page, pattern: str, first_words: str) -> None:
    """The answer (the paragraph matching ``pattern``) starts with ``first_words`` once the rerun is done."""
    from playwright.sync_api import expect

    expect(page.locator(FRESH).get_by_text(re.compile(pattern)).first).to_have_text(
        re.compile("^" + re.escape(first_words)), timeout=60_000)
    # the run has finished (Streamlit shows its status widget while a run is under way); generous,
    # as a first run of a workload loads its champion from the registry
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=180_000)
    # checked again after the run finished: the words the page settles on
    expect(page.locator(FRESH).get_by_text(re.compile(pattern)).first).to_have_text(
        re.compile("^" + re.escape(first_words)), timeout=10_000)


def _knee_words(page) -> str:
    return (f"{_engines(int(_slider_value(page, 'GCPs')), int(_slider_value(page, 'zIIPs')))}, "
            f"think time {_slider_value(page, 'Think time (ms)'):g} ms:")


def _class_knee_words(page) -> str:
    return (f"{_engines(int(_slider_value(page, 'GCPs')), int(_slider_value(page, 'zIIPs')))}, "
            f"other classes' load x{_slider_value(page, OTHER_LOAD):g}:")


def test_every_page_answers_for_the_inputs_shown_after_a_workload_switch_in_chromium(page):
    from playwright.sync_api import expect

    expect(page.get_by_text(KNEE)).to_be_visible(timeout=90_000)
    # Knee: the own table's machine, then each slider one step, the answer following each time
    _expect_answer(page, KNEE.pattern, "2 GCPs + 2 zIIPs, think time 200 ms:")
    _choose(page, "Workload", OWN_WORKLOAD)
    _expect_answer(page, KNEE.pattern, "3 GCPs + 1 zIIP, think time 100 ms:")
    assert (_slider_value(page, "GCPs"), _slider_value(page, "zIIPs"), _slider_value(page, "Think time (ms)")) == \
        (3, 1, 100)
    for label in ("Clients (curve up to)", "Clients (what-if point)", "Think time (ms)", "GCPs", "zIIPs"):
        _step_slider(page, label)
        _expect_answer(page, KNEE.pattern, _knee_words(page))
    assert _knee_words(page) == "4 GCPs + 2 zIIPs, think time 110 ms:"
    page.screenshot(path=str(ARTIFACTS / "knee-own-table-stepped.png"))
    # back to seed 004: its own measured machine again
    _choose(page, "Workload", "zosconnect_cics_diag")
    _expect_answer(page, KNEE.pattern, "2 GCPs + 2 zIIPs, think time 200 ms:")
    assert _knee_words(page) == "2 GCPs + 2 zIIPs, think time 200 ms:"
    # a WLM class: its LPAR, the other classes' load in the words
    _choose(page, "Workload", SMF_CLASS)
    _expect_answer(page, KNEE.pattern, "2 GCPs + 2 zIIPs, other classes' load x1:")
    for label in ("Class tps (curve up to)", "Class tps (what-if point)", "Other classes' load x", "GCPs", "zIIPs"):
        _step_slider(page, label)
        _expect_answer(page, KNEE.pattern, _class_knee_words(page))
    assert _class_knee_words(page) == "3 GCPs + 3 zIIPs, other classes' load x1.05:"

    # zIIP planner: the inputs are number fields, stepped with their + button
    page.get_by_role("link", name="zIIP planner").click()
    answer = r"SLO [\d.]+ ms: (recommendation|no mix)"

    def plan_words() -> str:
        return (f"{_engines(int(_number(page, 'GCPs')))}, think time {_number(page, 'Think time (ms)'):g} ms, "
                f"{int(_number(page, 'Target clients'))} clients, SLO {_number(page, 'Response-time SLO (ms)'):g} ms:")

    _expect_answer(page, answer, "2 GCPs, think time 200 ms, 500 clients, SLO 2 ms:")
    _choose(page, "Workload", OWN_WORKLOAD)
    _expect_answer(page, answer, "3 GCPs, think time 100 ms, 250 clients, SLO 2 ms:")
    for label in ("Target clients", "Think time (ms)", "GCPs", "Response-time SLO (ms)"):
        _step_number(page, label)
        _expect_answer(page, answer, plan_words())
    page.screenshot(path=str(ARTIFACTS / "planner-own-table-stepped.png"))
    _choose(page, "Workload", SMF_CLASS)

    def class_plan_words() -> str:
        load = _number(page, "Other classes' load x")
        return (f"{_engines(int(_number(page, 'GCPs')))}, other classes' load x{load:g}, "
                f"{_number(page, 'Target tps'):g} tps, SLO {_number(page, 'Response-time SLO (ms)'):g} ms:")

    expect(page.get_by_label("Target tps", exact=True)).to_be_visible(timeout=60_000)
    _expect_answer(page, answer, class_plan_words())
    for label in ("Target tps", "Other classes' load x", "GCPs", "Response-time SLO (ms)"):
        _step_number(page, label)
        _expect_answer(page, answer, class_plan_words())

    # What-if factors
    page.get_by_role("link", name="What-if factors").click()
    factor_answer = r"clients, SLO [\d.]+ ms: knee at about"

    def factor_words() -> str:
        return (f"{_engines(int(_number(page, 'GCPs')), int(_number(page, 'zIIPs')))}, think time "
                f"{_number(page, 'Think time (ms)'):g} ms, {int(_number(page, 'Clients'))} clients, "
                f"SLO {_number(page, 'Response-time SLO (ms)'):g} ms:")

    _expect_answer(page, factor_answer, "2 GCPs + 2 zIIPs, think time 200 ms, 500 clients, SLO 2 ms:")
    _choose(page, "Workload", OWN_WORKLOAD)
    _expect_answer(page, factor_answer, "3 GCPs + 1 zIIP, think time 100 ms, 250 clients, SLO 2 ms:")
    for label in ("Clients", "Response-time SLO (ms)", "GCPs", "zIIPs", "Think time (ms)"):
        _step_number(page, label)
        _expect_answer(page, factor_answer, factor_words())

    # SMF classes: the LPAR's inputs sit in an expander
    page.get_by_role("link", name="SMF classes").click()
    class_answer = r"other classes' load x[\d.]+: knee at"
    _expect_answer(page, class_answer, "2 GCPs + 2 zIIPs, other classes' load x1:")
    _open(page, "LPAR the knee and the SLO load are computed for")

    def lpar_words() -> str:
        return (f"{_engines(int(_number(page, 'GCPs')), int(_number(page, 'zIIPs')))}, "
                f"other classes' load x{_number(page, OTHER_LOAD):g}:")

    for label in ("GCPs", "zIIPs", "Other classes' load x"):
        _step_number(page, label)
        _expect_answer(page, class_answer, lpar_words())
    assert lpar_words() == "3 GCPs + 3 zIIPs, other classes' load x1.05:"
    page.screenshot(path=str(ARTIFACTS / "classes-stepped.png"))

    # the second class, on another LPAR: its machine, not the engines and load left on the first
    _choose(page, "Class", SMF_CLASS_2)
    _expect_answer(page, class_answer, "4 GCPs + 3 zIIPs, other classes' load x1:")
    expect(page.locator(FRESH).get_by_text(re.compile(rf"RMF intervals from {SMF_CLASS_2_SYSTEM},"))).to_be_visible()
    _open(page, "LPAR the knee and the SLO load are computed for")
    assert lpar_words() == "4 GCPs + 3 zIIPs, other classes' load x1:"
    for label in ("Response-time SLO (ms)", "Forecast horizon (days)", "GCPs", "zIIPs", "Other classes' load x"):
        _step_number(page, label)
        _expect_answer(page, class_answer, lpar_words())
        # the knee stated is the one shown beside it, and the SLO sentence is for the SLO shown
        knee = page.locator(f'{FRESH} [data-testid="stMetric"]').filter(has_text="Knee (tps)")
        knee_tps = knee.get_by_test_id("stMetricValue").inner_text()
        assert f"knee at {knee_tps} tps" in page.locator(FRESH).get_by_text(re.compile(class_answer)).first.inner_text()
        # and the forecast chart draws that knee (plotly redraws a moment after the run has ended)
        expect(page.locator(".js-plotly-plot").first.locator("text.annotation-text").first).to_have_text(
            re.compile(rf"^knee {re.escape(knee_tps)} tps "), timeout=30_000)
        expect(page.locator(FRESH).get_by_text(re.compile(r"^SLO: ")).first).to_have_text(
            re.compile(rf"^SLO: {re.escape(f'{_number(page, SLO):g}')} ms "))
    assert lpar_words() == "5 GCPs + 4 zIIPs, other classes' load x1.05:"
    page.screenshot(path=str(ARTIFACTS / "classes-second-class-stepped.png"))


# --- Tables that fit a laptop's browser (issue #34 item 7) -------------------------------------

#: a laptop's browser window; the tables' own widths at 1280 px are in the commit that chose their columns
LAPTOP = {"width": 1366, "height": 900}
#: each table on the page that is shown: its grid's scroll width against its width (glide data grid
#: scrolls inside .dvn-scroller), once the grid is laid out at the table's width (a table in a tab
#: just opened is 50 px wide for a moment; the desk's tables span the page, 700 px and more here)
TABLE_WIDTHS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')]
    .filter(t => t.offsetParent !== null)
    .map(t => { const grid = t.querySelector('.dvn-scroller');
                const laidOut = grid && t.clientWidth >= 300 && grid.clientWidth >= t.clientWidth - 4;
                return laidOut ? [grid.scrollWidth, grid.clientWidth] : null; })"""


def _tables_fit(page, at_least: int) -> None:
    """Every table shown has drawn its grid and none scrolls sideways (``at_least`` tables shown)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    shown = (f"(() => {{ const w = ({TABLE_WIDTHS})(); "
             f"return w.length >= {at_least} && !w.includes(null); }})()")
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=180_000)
    try:
        page.wait_for_function(shown, timeout=60_000)
    except PlaywrightTimeout:
        # an expander drawn by a rerun still under way when they were opened stays closed (seen once on
        # a loaded machine): open what is closed once more; a table that overflows still fails below
        _open_all(page)
        page.wait_for_function(shown, timeout=60_000)
    widths = page.evaluate(TABLE_WIDTHS)
    assert len(widths) >= at_least and None not in widths, widths
    assert all(scroll <= width for scroll, width in widths), widths


def _tab(page, name: str) -> None:
    """Show the tab ``name``; once more if a click made while the page still moved missed it."""
    from playwright.sync_api import expect

    tab = page.get_by_role("tab", name=name)
    for _ in range(2):
        tab.click()
        try:
            expect(tab).to_have_attribute("aria-selected", "true", timeout=5_000)
            return
        except AssertionError:
            continue
    expect(tab).to_have_attribute("aria-selected", "true")


def _open_all(page) -> None:
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=180_000)
    closed = page.locator('[data-testid="stExpander"] details:not([open]) > summary')
    while closed.count():
        closed.first.click()


def test_wide_tables_fit_a_laptop_browser_in_chromium(page):
    from playwright.sync_api import expect

    page.set_viewport_size(LAPTOP)
    expect(page.get_by_text(KNEE)).to_be_visible(timeout=90_000)
    page.get_by_role("link", name="Workloads").click()
    expect(page.get_by_text(re.compile(r"^All \d+ workloads$"))).to_be_visible(timeout=60_000)
    # seed 004's runs: all workloads, its measured points and the backtest, then its residuals
    _open_all(page)
    _tables_fit(page, 3)
    _tab(page, "Residuals")
    _tables_fit(page, 4)
    page.screenshot(path=str(ARTIFACTS / "workloads-1366.png"))
    # a cost model's competitors
    _choose(page, "Workload", "zosconnect_apireq_v3_baqr")
    expect(page.get_by_text(re.compile(r"^Cost model: "))).to_be_visible(timeout=60_000)
    _tab(page, "Competing models")
    _tables_fit(page, 4)
    # a WLM class's intervals: where they came from, each interval and its residual
    _choose(page, "Workload", SMF_CLASS_2)
    expect(page.get_by_text(re.compile(rf"^{SMF_CLASS_2}: 672 measured point"))).to_be_visible(timeout=60_000)
    _open_all(page)
    _tables_fit(page, 4)
    _tab(page, "Residuals")
    _tables_fit(page, 5)
    page.screenshot(path=str(ARTIFACTS / "workloads-class-1366.png"))

    page.get_by_role("link", name="Models").click()
    expect(page.get_by_text(re.compile(r"registered models, \d+ versions"))).to_be_visible(timeout=60_000)
    _tables_fit(page, 2)  # the registry and the combination weights
    page.screenshot(path=str(ARTIFACTS / "models-1366.png"))
