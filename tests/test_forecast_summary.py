"""`kneecap forecast` prints its answers as a person reads them (issue #34 item 3): one row per
scenario with the configuration, load, response and knee with their bands, dates, plan, status and
notes, numbers to 3 significant figures with their units."""

from __future__ import annotations

import math
import subprocess

import pandas as pd
import pytest
import yaml

from kneecap import cli, forecast_text, forecasting
from kneecap.forecasting import answer_summary, sig3
from tests.test_cli import KNEECAP, REPO, _run, project  # noqa: F401 - a fixture
from tests.test_factors import POLICY, SCENARIO, seed004_models  # noqa: F401 - a fixture


@pytest.mark.parametrize(("value", "text"), [
    (4206.2, "4,210"), (5.034, "5.03"), (0.22831, "0.228"), (356.4, "356"), (99.96, "100"), (1.0, "1.00"),
    (-12.34, "-12.3"), (0.0, "0"), (math.inf, "-"), (math.nan, "-"), (None, "-"), ("x", "-"),
])
def test_sig3_keeps_three_significant_figures_without_an_exponent(value, text):
    assert sig3(value) == text


def test_a_closed_workloads_answers_read_with_their_configuration_units_and_bands(seed004_models):  # noqa: F811
    scenarios = [{**SCENARIO, "name": "peak"},
                 {**{k: v for k, v in SCENARIO.items() if k not in ("clients", "slo_resp_ms")}, "name": "rate",
                  "tps": 1500},
                 {**SCENARIO, "name": "grow", "slo_resp_ms": None, "clients": 300, "current_clients": 300,
                  "growth_pct_per_year": 20},
                 {**SCENARIO, "name": "over", "clients": None, "slo_resp_ms": None, "tps": 1e6},
                 {"workload": "zosconnect_cics_diag", "name": "typo", "clients": -1}]
    table = forecasting.forecast_scenarios([{k: v for k, v in s.items() if v is not None} for s in scenarios],
                                           lambda w: seed004_models, POLICY)
    summary = answer_summary(table).set_index("scenario")
    assert list(summary.reset_index().columns) == list(forecasting.SUMMARY_COLUMNS)
    rows = table.set_index("scenario")
    peak, shown = rows.loc["peak"], summary.loc["zosconnect_cics_diag / peak"]
    assert shown["configuration"] == "2 GCP + 2 zIIP, Z 200 ms"
    assert shown["load"] == f"500 clients, {sig3(peak['tps'])} tps"
    assert shown["response (95 % band)"] == (f"{sig3(peak['resp_ms'])} ms ({sig3(peak['resp_ms_lo'])}-"
                                             f"{sig3(peak['resp_ms_hi'])})")
    assert shown["knee (95 % band)"] == (f"{sig3(peak['knee_clients'])} clients ({sig3(peak['knee_clients_lo'])}-"
                                         f"{sig3(peak['knee_clients_hi'])})")
    assert shown["plan"] == f"{peak['recommended_n_gcp']:g} GCP + {peak['recommended_n_ziip']:g} zIIP for SLO 2 ms"
    assert shown["status"] == "answered" and shown["knee reached"] == "-"
    rate = summary.loc["zosconnect_cics_diag / rate"]
    assert rate["load"] == f"1,500 tps -> {rows.loc['rate', 'clients_for_tps']:,.0f} clients"
    grow = summary.loc["zosconnect_cics_diag / grow"]
    assert grow["knee reached"] == f"in {sig3(rows.loc['grow', 'years_to_knee'])} years"
    # past what the configuration carries: said, with the saturation load, never a response number
    over = summary.loc["zosconnect_cics_diag / over"]
    assert over["status"] == "saturated" and over["response (95 % band)"] == "saturated"
    assert over["notes"] == rows.loc["over", "status_message"] and "past saturation" in over["notes"]
    assert over["knee (95 % band)"] == shown["knee (95 % band)"]  # the configuration's knee is still given
    typo = summary.loc["zosconnect_cics_diag / typo"]
    assert typo["status"] == "failed" and typo["notes"] == rows.loc["typo", "error"]
    assert "clients must be between 1 and" in typo["notes"]
    # printed: one header and one line per scenario, columns no scenario answers left out
    text = forecast_text.summary_text(answer_summary(table)).splitlines()
    assert len(text) == 1 + len(scenarios) and "CPU cost" not in text[0] and text[0].startswith("scenario")
    assert all(line.startswith(f"zosconnect_cics_diag / {s['name']}") for line, s in zip(text[1:], scenarios))


def test_a_class_row_reads_its_dates_plan_and_cost():
    row = {"workload": "ZCONHI", "scenario": "peak", "status": "answered", "n_gcp": 2, "n_ziip": 2, "tps": 60.0,
           "resp_ms": 25.23, "resp_ms_lo": 24.01, "resp_ms_hi": 26.34, "knee_tps": 258.2, "knee_tps_lo": 257.2,
           "knee_tps_hi": 259.0, "date_knee": "2025-03-31", "date_knee_earliest": "2025-03-30",
           "date_knee_p90": "2025-04-02", "knee_already": False, "growth": "damped trend",
           "slo_resp_ms": 50.0, "recommended_n_ziip": None, "recommended_n_gcp": None,
           "warnings": "a; b", "error": None}
    shown = answer_summary(pd.DataFrame([row])).iloc[0]
    assert shown["configuration"] == "2 GCP + 2 zIIP" and shown["load"] == "60.0 tps"
    assert shown["response (95 % band)"] == "25.2 ms (24.0-26.3)"
    assert shown["knee (95 % band)"] == "258 tps (257-259)"
    assert shown["knee reached"] == "2025-03-31 (earliest 2025-03-30, 90 % by 2025-04-02)"
    assert shown["plan"] == "none meets SLO 50 ms" and shown["notes"] == "a; b"
    beyond = answer_summary(pd.DataFrame([{**row, "date_knee": None, "date_knee_earliest": None,
                                           "date_knee_p90": None}])).iloc[0]
    assert beyond["knee reached"] == "not within the horizon"
    already = answer_summary(pd.DataFrame([{**row, "knee_already": True}])).iloc[0]
    assert already["knee reached"] == "already reached"
    cost = answer_summary(pd.DataFrame([{"workload": "baqr", "scenario": "8k", "status": "answered",
                                         "cpu_ms_per_tran": 0.22831, "cpu_ms_per_tran_lo": 0.2271,
                                         "cpu_ms_per_tran_hi": 0.2294}])).iloc[0]
    assert cost["CPU cost (95 % band)"] == "0.228 ms/tran (0.227-0.229)" and cost["configuration"] == "-"


def test_an_empty_scenarios_list_is_a_bad_request(tmp_path, capsys):
    scenarios = tmp_path / "none.yaml"
    scenarios.write_text("scenarios: []\n", encoding="utf-8")
    assert cli.main(["forecast", "--scenarios", str(scenarios), "--out", str(tmp_path / "f.csv")]) == 2
    assert "the 'scenarios' list is empty" in capsys.readouterr().err and not (tmp_path / "f.csv").exists()
    # and the table of no answers is its header alone
    assert forecast_text.summary_text(answer_summary(pd.DataFrame())) == "scenario  status"


def test_every_example_scenario_is_answered_or_saturated_with_a_message(project):  # noqa: F811
    """examples/scenarios.yaml, the file `kneecap forecast --help` points at, runs as shipped."""
    root, env = project
    examples = REPO / "examples" / "scenarios.yaml"
    scenarios = yaml.safe_load(examples.read_text(encoding="utf-8"))["scenarios"]
    # every key a scenario may have is shown in a scenario or described in the file's comments
    text = examples.read_text(encoding="utf-8")
    assert [key for key in forecasting.SCENARIO_KEYS if key not in text] == []
    out = root / "examples.csv"
    result = _run(["forecast", "--scenarios", str(examples), "--out", str(out), "--params",
                   str(REPO / "params.yaml")], env)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out).set_index("scenario")
    assert list(table.index) == [s["name"] for s in scenarios]
    assert set(table["status"]) == {"answered", "saturated"} and table["error"].isna().all()
    answered, saturated = table[table["status"] == "answered"], table[table["status"] == "saturated"]
    # a saturated row says where saturation lies and gives no response number (never inf)
    assert saturated["status_message"].str.contains(r"tps is past saturation \([\d,.]+ tps\) on \d+ GCP").all()
    assert saturated["resp_ms"].isna().all()
    numbers = table.select_dtypes("number")
    assert not numbers.isin([math.inf, -math.inf]).any().any()
    # each kind of question the file shows got its kind of answer
    assert set(saturated.index) == {"rate_past_capacity", "class_past_saturation"}
    closed = answered[answered["workload"] == "zosconnect_cics_diag"]
    assert (closed["resp_ms_lo"] <= closed["resp_ms"]).all() and (closed["resp_ms"] <= closed["resp_ms_hi"]).all()
    assert table.loc["past_n_star", "clients"] > table.loc["past_n_star", "saturation_clients"]  # past N*, answered
    assert table.loc["by_rate", "clients_for_tps"] > 0 and table.loc["growth_20pct", "years_to_knee"] > 0
    assert table.loc["plan_2ms", "recommended_n_ziip"] >= 2 and table.loc["crr30", "pattern"] == "CRR"
    assert table.loc["comm_stub", "resp_ms_adjusted"] > table.loc["comm_stub", "resp_ms"]
    assert table.loc["stub_8k_cost", "cpu_ms_per_tran"] > 0
    assert isinstance(table.loc["class_60tps", "date_knee"], str) and table.loc["class_plan", "slo_resp_ms"] == 50
    at_peak = table.loc["class_plan_at_peak"]
    assert f"forecast: ZCONHI / class_plan_at_peak: load {at_peak['tps']:,.0f} tps, the forecast peak to 2025-03-16: " \
        in result.stdout
    assert at_peak["load_from"].startswith("the forecast peak to 2025-03-16: 90 % of the growth paths stay below")
    assert at_peak["tps"] == at_peak["peak_tps"] > at_peak["peak_tps_last"] and at_peak["recommended_n_ziip"] >= 0
    # the printed table: a header and one line per scenario, saturated ones with their message
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("scenario  "))
    body = lines[header + 1: header + 1 + len(scenarios)]
    assert [line.split("  ")[0] for line in body] == [f"{s['workload']} / {s['name']}" for s in scenarios]
    for name in saturated.index:
        line = next(line for line in body if f" / {name} " in line)
        assert "saturated" in line and table.loc[name, "status_message"] in line
    assert lines[header + 1 + len(scenarios)].startswith(f"forecast: {len(answered)} of {len(table)} scenarios "
                                                         f"answered, {len(saturated)} saturated ->")


def test_forecast_help_points_at_the_examples_and_names_the_exit_codes():
    result = subprocess.run([*KNEECAP, "forecast", "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "examples/scenarios.yaml" in text and (REPO / "examples" / "scenarios.yaml").is_file()
    assert "exit codes: 0 every scenario answered, saturated ones included; 1 some scenarios failed" in text
    assert "2 bad request" in text
    for key in ("clients", "tps", "slo_resp_ms", "growth_pct_per_year", "cs_workload", "factors", "bg_load_factor"):
        assert key in text, key
