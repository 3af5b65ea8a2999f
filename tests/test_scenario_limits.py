"""Unbounded what-if requests (issue 14, finding 7) and malformed backtest questions (finding 8):
a clear error per scenario or case, at the boundary, before any model is solved."""

from __future__ import annotations

import pytest

from kneecap import backtest, cli, forecasting
from kneecap.modeling import ModelError
from kneecap.modeling.dispatch import MAX_ENGINES
from kneecap.simulation import SimScenario
from tests.test_backtest import _copy_case


@pytest.mark.parametrize(("field", "value", "message"), [
    ("clients", [1, 2], "clients must be a number, got [1, 2]"),
    ("clients", "1e12", "clients must be between 1 and 50,000, got 1e+12"),
    ("clients", 10**12, "clients must be between 1 and 50,000, got 1e+12"),
    ("clients", 0, "clients must be between 1 and 50,000, got 0"),
    ("tps", 1e12, "tps must be between 0 and 1,000,000, got 1e+12"),
    ("n_ziip", 10_000, f"n_ziip must be a whole number between 0 and {MAX_ENGINES}, got 10000"),
    ("n_gcp", 0, f"n_gcp must be a whole number between 1 and {MAX_ENGINES}, got 0"),
    ("n_gcp", 2.5, f"n_gcp must be a whole number between 1 and {MAX_ENGINES}, got 2.5"),
    ("think_time_ms", float("nan"), "think_time_ms must be a finite number"),
    ("slo_resp_ms", "fast", "slo_resp_ms must be a number, got 'fast'"),
])
def test_out_of_range_scenario_is_named(field, value, message):
    with pytest.raises(ModelError, match=f"scenario 'peak': {message}".replace("[", r"\[").replace("(", r"\(")
                       .replace("+", r"\+").replace("]", r"\]")):
        forecasting.check_scenario({"workload": "w", "name": "peak", field: value})


def test_bounds_in_range_pass():
    forecasting.check_scenario({"workload": "w", "name": "ok", "clients": forecasting.MAX_CLIENTS,
                                "n_gcp": 1, "n_ziip": MAX_ENGINES, "tps": 10.0, "slo_resp_ms": 2})


def test_forecast_scenarios_reject_bad_ranges_before_solving():
    def load(workload):
        raise AssertionError("a scenario out of range must not reach the models")

    table = forecasting.forecast_scenarios(
        [{"workload": "w", "name": "list", "clients": [1, 2]},
         {"workload": "w", "name": "huge", "clients": "1e12"},
         {"workload": "w", "name": "zIIPs", "clients": 500, "n_ziip": 10_000}], load, policy=None)
    assert table["error"].str.contains("must be").all()
    assert table.set_index("scenario").loc["list", "error"] == "scenario 'list': clients must be a number, got [1, 2]"


@pytest.mark.parametrize(("field", "value", "message"), [
    ("clients", 10**12, "clients must be between 1 and 50,000, got 1000000000000"),
    ("n_ziip", 10_000, f"n_ziip must be between 0 and {MAX_ENGINES}, got 10000"),
    ("n_gcp", 10_000, f"n_gcp must be between 1 and {MAX_ENGINES}, got 10000"),
])
def test_simulation_scenario_bounds(field, value, message):
    base = {"n_gcp": 2, "n_ziip": 2, "cpu_ms_per_tran": 0.9, "ziip_eligible_fraction": 0.9, "clients": 10}
    with pytest.raises(ValueError, match=message):
        SimScenario(**{**base, field: value})


def test_simulate_cli_reports_huge_scenarios_without_a_traceback(tmp_path, capsys):
    spec = tmp_path / "s.yaml"
    spec.write_text("scenarios:\n"
                    "  - {name: huge, n_gcp: 2, n_ziip: 2, cpu_ms_per_tran: 0.9, ziip_eligible_fraction: 0.9,"
                    " clients: 1000000000000}\n"
                    "  - {name: list, n_gcp: 2, n_ziip: 2, cpu_ms_per_tran: 0.9, ziip_eligible_fraction: 0.9,"
                    " clients: [1, 2]}\n")
    assert cli.main(["simulate", "--scenarios", str(spec), "--out", str(tmp_path / "o.csv")]) == 1
    err = capsys.readouterr().err
    assert "huge: error: clients must be between 1 and 50,000" in err
    assert "list: error: clients must be an integer, got [1, 2]" in err


@pytest.mark.parametrize(("question", "message"), [
    ("  - min_ziip: 5\n", r"questions\[0\] \(min_ziip\) must be a mapping of clients, think_time_ms"),
    ("  - min_ziip: {clients: lots, think_time_ms: 0, n_gcp: 1, slo_resp_ms: 1, expect: 1}\n",
     r"questions\[0\] \(min_ziip\): clients must be a number, got 'lots'"),
    ("  - knee_clients: {n_gcp: 2, n_ziip: 2, think_time_ms: 200, expect_range: 300}\n",
     r"questions\[0\] \(knee_clients\): expect_range must be \[lo, hi\], got 300"),
    ("  - knee_clients: {n_gcp: 2, n_ziip: 2, think_time_ms: 200, expect_range: [500, 300]}\n",
     r"questions\[0\] \(knee_clients\): expect_range must be \[lo, hi\], got \[500, 300\]"),
    ("  - min_ziip: {clients: 10, think_time_ms: 0, n_gcp: 1, slo_resp_ms: 1, expect: many}\n",
     r"questions\[0\] \(min_ziip\): expect must be a whole number of zIIPs, got 'many'"),
    ("  - min_ziip: {clients: 10, think_time_ms: 0, n_gcp: 1, slo_resp_ms: 1, expect: 1, when: now}\n",
     r"questions\[0\] \(min_ziip\): unknown field\(s\) when"),
])
def test_malformed_questions_are_case_errors(tmp_path, capsys, question, message):
    case = _copy_case(tmp_path)
    (case / "case.yaml").write_text("name: x\nsource: y\ntargets: [cpu_ms_per_tran]\nquestions:\n" + question)
    with pytest.raises(backtest.CaseError, match=message):
        backtest.load_case(case)
    assert cli.main(["backtest", str(case)]) == 2
    assert "Traceback" not in capsys.readouterr().err
