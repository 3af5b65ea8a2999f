"""The capacity report (``kneecap report``, kneecap.report) on the test project's champions.

Two reports, written once by the CLI as a user would: the bundled seed-004 champion (a table of
runs, closed workload) with a 2 ms SLO, and the synthetic SMF week's class ZCONHI (its RMF
intervals, a growth forecast and a measured Performance Index). Each report's numbers are held
to what :mod:`kneecap.forecasting` answers for the same question, computed here on its own.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from kneecap import cli, config, forecast_text, forecasting, policies, tracking, warehouse
from kneecap.report import figures
from tests.app.conftest import DIAG, SMF_CLASS
from tests.app.conftest import plotly_values as _values

SECTIONS = ("question", "answer", "growth", "performance-index", "plan", "model", "data", "caveats", "versions")


class _Tags(HTMLParser):
    """Every tag's name and attributes, and the text of the page outside scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if not self._in_script:
            self.text.append(data)


def _words(page: str) -> str:
    """The page's text as a reader sees it: entities decoded, white space collapsed."""
    return " ".join(html.unescape(" ".join(_parse(page).text)).split())


def _parse(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


def _chart_traces(page: str) -> dict[str, list[dict]]:
    """Each chart of the page by its div id: its traces, as plotly.js is handed them."""
    found = {}
    for div, data in re.findall(r'Plotly\.newPlot\(\s*"(chart-[\w-]+)",\s*(\[.*?\]),\s*\{', page, re.S):
        found[div] = json.loads(data)
    return found


def project_options(project: dict[str, str], folder: Path) -> list[str]:
    """``kneecap report``'s options naming the test project's store, params and marts (no dvc.lock in ``folder``)."""
    return ["--tracking-uri", project["MLFLOW_TRACKING_URI"], "--params", project["KNEECAP_PARAMS"],
            "--marts", project["KNEECAP_MARTS"], "--lock", str(folder / "no-dvc.lock")]


def write_reports(project: dict[str, str], out: Path) -> dict[str, Path]:
    """Both reports written by ``kneecap report`` against the project; their paths by workload."""
    written = {}
    for workload, extra in ((DIAG, ["--slo-ms", "2"]), (SMF_CLASS, [])):
        path = out / f"{workload}.html"
        code = cli.main(["report", "--workload", workload, "--out", str(path), *project_options(project, out), *extra])
        assert code == 0
        written[workload] = path
    return written


@pytest.fixture(scope="module")
def reports(app_project, tmp_path_factory) -> dict[str, Path]:
    return write_reports(app_project, tmp_path_factory.mktemp("reports"))


def _answer(project: dict[str, str], workload: str, **asked) -> pd.DataFrame:
    """What ``kneecap forecast`` answers for the report's question, computed apart from the report."""
    tracking.configure(project["MLFLOW_TRACKING_URI"])
    params = config.load_params(project["KNEECAP_PARAMS"])
    models = forecasting.WorkloadModels(workload, tracking.load_champion(tracking.model_name(workload, "response")))
    return forecasting.forecast_scenarios([{"workload": workload, "name": "report", **asked}], lambda _: models,
                                          policies.planner_policy(params), growth=policies.growth_policy(params))


def test_the_closed_report_gives_the_forecasts_knee_plan_and_sources(app_project, reports):
    page = reports[DIAG].read_text(encoding="utf-8")
    text = _words(page)
    table = _answer(app_project, DIAG, clients=500.0, slo_resp_ms=2.0)
    row = table.iloc[0]
    said = forecasting.answer_summary(table).iloc[0]
    # the knee and its band as the forecast prints them, in the knee's own cell
    knee_cell = re.search(r'<td id="knee-value">(.*?)</td>', page).group(1)
    assert html.unescape(knee_cell) == said["knee (95 % band)"]
    assert said["knee (95 % band)"] == (f"{forecasting.sig3(row['knee_clients'])} clients "
                                        f"({forecasting.sig3(row['knee_clients_lo'])}-"
                                        f"{forecasting.sig3(row['knee_clients_hi'])})")
    assert f"at about {row['knee_clients']:.0f} clients" in text
    # the plan and the rule that decided it, as `kneecap forecast` prints them
    assert said["plan"] in text and row["binding_sentence"] in text
    # the data: the bundled table's citation; the versions: the champion's run
    assert "Table 1. Recorded average response times" in text
    champion = tracking.registered_models().query("name == @tracking.model_name(@DIAG, 'response')")
    run_id = champion[champion["aliases"].str.contains("champion")]["run_id"].iloc[0]
    assert run_id in text
    assert "No growth forecast" in text and "hold no Performance Index" in text
    # a table of runs has no response time distribution: no PI or percentile chart against load
    assert set(_chart_traces(page)) == {"chart-response"}
    # the caveats: where the load lies against the trained one, and every warning the forecast gives
    assert f"The load asked is {row['extrapolation']}" in text
    warnings = row["warnings"] if isinstance(row["warnings"], str) else ""
    for warning in filter(None, warnings.split(forecasting.WARNINGS_SEPARATOR)):
        assert warning in text


def test_the_class_report_gives_the_knee_dates_and_the_measured_pi(app_project, reports):
    page = reports[SMF_CLASS].read_text(encoding="utf-8")
    text = _words(page)
    model = tracking.load_champion(tracking.model_name(SMF_CLASS, "response"))
    row = _answer(app_project, SMF_CLASS, tps=float(model.train_ranges["tps_max"])).iloc[0]
    assert f"about {row['knee_tps']:.4g} tps (95% band {row['knee_tps_lo']:.4g}-{row['knee_tps_hi']:.4g})" in text
    # the date range growth reaches the knee in, the sentence `kneecap forecast` prints
    assert forecasting.reach_sentence(row.to_dict(), "knee", "knee") in text
    # the PI per class period, counted here from the published mart
    pi = warehouse.read_snapshot(app_project["KNEECAP_MARTS"]).tables["fct_performance_index"]
    mine = pi[(pi["class_name"] == SMF_CLASS) & pi["performance_index"].notna()]
    assert len(mine) > 0
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>",
                                                  page[page.index('id="pi-table"'):page.index('id="pi-chart"')])]
    assert str(len(mine)) in cells and f"average response {mine['goal_resp_ms'].iloc[0]:g} ms" in cells
    assert forecasting.sig3(mine["performance_index"].max()) in cells
    # the class runs on one system: its local PI, no sysplex row (the sysplex PI would be the same)
    assert "local" in cells and "sysplex" not in cells
    # the intervals the model stands on: system, count and dates
    assert "SYSA" in text and "2 GCP + 2 zIIP" in text
    # the forecast's percentiles and PI, the sentences `kneecap forecast` prints (the goal is an average one)
    said = forecast_text.goal_sentences(row.to_dict())
    assert len(said) == 2 and said[1].startswith(f"WLM goal average {mine['goal_resp_ms'].iloc[0]:g} ms")
    for sentence in said:
        assert sentence in text
    # and drawn against load: the PI with its band, PI 1, every interval's measured PI and where it passes 1
    charts = _chart_traces(page)
    pi_curve = {t.get("name"): t for t in charts["chart-pi_curve"]}
    assert {"PI forecast", "95% band", "PI = 1 (goal met exactly)", "measured PI (RMF intervals)",
            f"PI passes 1 at {row['pi_tps']:.4g} tps"} <= set(pi_curve)
    assert len(_values(pi_curve["measured PI (RMF intervals)"]["y"])) == len(mine)
    assert _values(pi_curve["PI = 1 (goal met exactly)"]["y"]) == [1.0, 1.0]
    percentiles = {t.get("name") for t in charts["chart-percentiles"]}
    assert {"p50 forecast", "p90 forecast", "p95 forecast", "p90 95% band",
            f"goal: average {mine['goal_resp_ms'].iloc[0]:g} ms (on the mean)",
            "p90 measured"} <= percentiles
    assert page.index('id="pi-forecast"') < page.index('id="pi-curve-chart"') < page.index('id="percentile-chart"')


@pytest.mark.parametrize("workload", [DIAG, SMF_CLASS])
def test_a_report_is_one_self_contained_file(reports, workload):
    page = reports[workload].read_text(encoding="utf-8")
    tags = _parse(page).tags
    ids = {attrs.get("id") for tag, attrs in tags if tag == "section"}
    assert set(SECTIONS) <= ids
    # nothing fetched when it opens: no script, stylesheet, image or frame from elsewhere
    for tag, attrs in tags:
        for attr in ("src", "href"):
            assert not (attrs.get(attr) or "").strip(), (tag, attrs)
    # plotly.js inlined once, however many charts
    assert page.count(figures.plotly_js()[:500]) == 1
    # the class: its response, measured PI over time, forecast PI and percentiles against load
    assert len(re.findall(r'<div id="chart-', page)) == (4 if workload == SMF_CLASS else 1)


def test_the_report_command_says_what_is_missing(app_project, tmp_path, capsys):
    common = ["--tracking-uri", app_project["MLFLOW_TRACKING_URI"], "--params", app_project["KNEECAP_PARAMS"]]
    out = str(tmp_path / "r.html")
    marts = ["--marts", app_project["KNEECAP_MARTS"]]
    assert cli.main(["report", "--workload", "NOSUCH", "--out", out, *marts, *common]) == 2
    assert "no champion model registered for workload 'NOSUCH'" in capsys.readouterr().err
    assert cli.main(["report", "--workload", DIAG, "--out", out, "--marts", str(tmp_path / "none"), *common]) == 2
    assert "no published marts" in capsys.readouterr().err
    assert cli.main(["report", "--workload", DIAG, "--out", str(tmp_path / "r.docx"), *marts, *common]) == 2
    assert "output must end in .html or .pdf" in capsys.readouterr().err
    assert cli.main(["report", "--workload", DIAG, "--out", out, "--load", "1e9", *marts, *common]) == 2
    assert "clients must be between 1 and 50,000" in capsys.readouterr().err
    assert not Path(out).exists()


def test_the_desk_offers_the_same_report(app_env):
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import REPO, app_resources

    at = AppTest.from_file(str(REPO / "app" / "streamlit_app.py"), default_timeout=120).run()  # the Knee page
    assert not at.exception, at.exception
    assert "knee_report" in {d.key for d in at.get("download_button")}
    resources = app_resources()
    page = resources.report_html(DIAG, resources.champion_key(DIAG))
    assert f"Capacity report: {DIAG}" in page and "chart-response" in page


def test_names_and_sentences_are_text_never_markup(app_project, reports):
    """Autoescape: a workload or a source title holding markup is shown as the characters it has."""
    from dataclasses import replace

    from kneecap.report import render_html, report_content

    tracking.configure(app_project["MLFLOW_TRACKING_URI"])
    params = config.load_params(app_project["KNEECAP_PARAMS"])
    models = forecasting.WorkloadModels(DIAG, tracking.load_champion(tracking.model_name(DIAG, "response")))
    content = report_content(models, registry=tracking.registered_models(), policy=policies.planner_policy(params),
                             marts=warehouse.read_snapshot(app_project["KNEECAP_MARTS"]).tables)
    hostile = "<img src=x onerror=alert(1)>"
    data = {**content.data, "sources": [{**s, "title": hostile} for s in content.data["sources"]]}
    page = render_html(replace(content, workload=hostile, data=data))
    assert hostile not in page and html.escape(hostile, quote=False) in page
    assert not any(tag == "img" for tag, _ in _parse(page).tags)


def test_a_report_asked_on_another_machine_answers_for_it(app_project, tmp_path, capsys):
    """--n-gcp / --n-ziip / --think-time-ms (the desk's sliders) set the machine the report answers for."""
    common = project_options(app_project, tmp_path)
    out = tmp_path / "other.html"
    asked = ["--load", "400", "--n-gcp", "4", "--n-ziip", "1", "--think-time-ms", "150"]
    assert cli.main(["report", "--workload", DIAG, "--out", str(out), *asked, *common]) == 0
    page = out.read_text(encoding="utf-8")
    table = _answer(app_project, DIAG, clients=400.0, n_gcp=4, n_ziip=1, think_time_ms=150.0)
    said = forecasting.answer_summary(table).iloc[0]
    assert said["configuration"].startswith("4 GCP + 1 zIIP, Z 150 ms")
    assert said["configuration"] in _words(page)
    knee_cell = re.search(r'<td id="knee-value">(.*?)</td>', page).group(1)
    assert html.unescape(knee_cell) == said["knee (95 % band)"]
    # and differs from the model's own machine's knee: the question really moved
    own = forecasting.answer_summary(_answer(app_project, DIAG, clients=400.0)).iloc[0]
    assert own["knee (95 % band)"] != said["knee (95 % band)"]
    # a class's other-load factor on a closed workload is a wrong question, said in one line
    wrong = tmp_path / "wrong.html"
    assert cli.main(["report", "--workload", DIAG, "--out", str(wrong), "--other-load", "2", *common]) == 2
    assert "bg_load_factor cannot be set for a model whose load is clients" in capsys.readouterr().err
    assert not wrong.exists()


def test_the_desk_report_follows_the_class_sliders(app_env):
    from tests.app.conftest import app_resources

    resources = app_resources()
    key = resources.champion_key(SMF_CLASS)
    page = resources.report_html(SMF_CLASS, key, 100.0, {"n_gcp": 3, "n_ziip": 2, "bg_load_factor": 1.5})
    assert "3 GCP + 2 zIIP, other classes x1.5" in _words(page)


@pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                    reason="no chromium binary on PATH (Debian: apt-get install -y chromium)")
def test_a_pdf_report_is_the_html_printed_by_chromium(app_project, tmp_path, monkeypatch):
    monkeypatch.delenv("KNEECAP_CHROMIUM", raising=False)
    common = project_options(app_project, tmp_path)
    out = tmp_path / "diag.pdf"
    assert cli.main(["report", "--workload", DIAG, "--out", str(out), "--slo-ms", "2", *common]) == 0
    pdf = out.read_bytes()
    assert pdf.startswith(b"%PDF-")
    # the HTML's title as the document's, and the sections over several pages
    assert f"/Title (Capacity report: {DIAG})".encode() in pdf
    assert len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 3
    assert [p.name for p in tmp_path.iterdir()] == ["diag.pdf"]  # the page and profile printed from are gone
    # a browser that fails leaves no file and says so
    monkeypatch.setenv("KNEECAP_CHROMIUM", "/bin/false")
    failed = tmp_path / "failed.pdf"
    assert cli.main(["report", "--workload", DIAG, "--out", str(failed), *common]) == 1
    assert not failed.exists() and [p.name for p in tmp_path.iterdir()] == ["diag.pdf"]


def test_a_report_asked_on_other_engines_answers_on_them(app_project, tmp_path):
    """--gcp-speed / --ziip-speed: the report's question and knee are the forecast's on those engines."""
    common = project_options(app_project, tmp_path)
    out = tmp_path / "subcap.html"
    asked = ["--load", "400", "--n-ziip", "1", "--gcp-speed", "0.4", "--ziip-speed", "1"]
    assert cli.main(["report", "--workload", DIAG, "--out", str(out), *asked, *common]) == 0
    page = out.read_text(encoding="utf-8")
    said = forecasting.answer_summary(_answer(app_project, DIAG, clients=400.0, n_ziip=1, gcp_speed=0.4,
                                              ziip_speed=1.0)).iloc[0]
    assert "GCP at 40 % of zIIP speed" in said["configuration"] and said["configuration"] in _words(page)
    knee_cell = re.search(r'<td id="knee-value">(.*?)</td>', page).group(1)
    assert html.unescape(knee_cell) == said["knee (95 % band)"]
