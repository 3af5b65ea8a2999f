"""The What-if factors page through AppTest: a catalogue factor applied to the registered seed 004
champion, the numbers the library gives for the same scenario, the citation, the name parser and
the RMF cost calculator."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kneecap import config, factors, forecasting, policies, tracking
from tests.app.conftest import widget_key

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app" / "streamlit_app.py")
DIAG = "zosconnect_cics_diag"
CATALOGUE = factors.read_catalogue(REPO / "data" / "reference" / "factors.csv")


def _k(name: str, workload: str = DIAG) -> str:
    return widget_key(name, workload)


def _page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/factors.py").run()
    assert not at.exception, at.exception
    return at


def _metric(at: AppTest, label: str) -> list[str]:
    return [m.value for m in at.metric if m.label == label]


def _library_row(at: AppTest, factor_id: str, share: float) -> dict:
    import os

    tracking.configure()
    model = tracking.load_champion(tracking.model_name(DIAG, "response"))
    policy = policies.planner_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    scenario = {"workload": DIAG, "clients": float(at.number_input(key=_k("factor_clients")).value),
                "n_gcp": at.number_input(key=_k("factor_n_gcp")).value,
                "n_ziip": at.number_input(key=_k("factor_n_ziip")).value,
                "think_time_ms": at.number_input(key=_k("factor_think")).value,
                "slo_resp_ms": at.number_input(key=_k("factor_slo")).value,
                "factors": [{"id": factor_id, "share": share}]}
    return forecasting.forecast_scenario(forecasting.WorkloadModels(DIAG, model), scenario, policy, CATALOGUE)


def test_smc_rv2_what_if_shows_both_answers_and_the_citation(app_env):
    at = _page()
    assert at.selectbox(key="factor_workload").value == DIAG
    assert at.selectbox(key=_k("factor_id")).value == "smc_rv2_vs_tcpip_str_server"
    share = at.number_input(key=_k("factor_share_smc_rv2_vs_tcpip_str_server"))
    share.set_value(0.05).run()
    at.number_input(key=_k("factor_clients")).set_value(500).run()
    assert not at.exception and not at.error
    row = _library_row(at, "smc_rv2_vs_tcpip_str_server", 0.05)
    assert _metric(at, "CPU demand (ms/tran)") == [f"{row['demand_ms_per_tran']:.4f}",
                                                   f"{row['demand_ms_per_tran_adjusted']:.4f}"]
    assert _metric(at, "Knee (clients)") == [f"{row['knee_clients']:.0f}", f"{row['knee_clients_adjusted']:.0f}"]
    assert _metric(at, "Response at 500 clients") == [f"{row['resp_ms']:.2f} ms", f"{row['resp_ms_adjusted']:.2f} ms"]
    assert _metric(at, "zIIPs for 2 ms") == [str(row["recommended_n_ziip"]), str(row["recommended_n_ziip_adjusted"])]
    # SMC-Rv2 lowers the demand: 51 % of a twentieth of it
    assert row["demand_ms_per_tran_adjusted"] < row["demand_ms_per_tran"]
    cited = at.info[0].value
    assert "~ 51%" in cited and "002_be0684e436341215.txt" in cited and "Figure 18 is a chart" in cited
    assert len(at.get("plotly_chart")) == 1


def test_an_impossible_share_and_an_added_cost(app_env):
    at = _page()
    at.number_input(key=_k("factor_share_smc_rv2_vs_tcpip_str_server")).set_value(1.0).run()
    assert not at.exception
    assert "general-CP work" in at.error[0].value  # more GCP-only work removed than the model has
    at.selectbox(key=_k("factor_id")).set_value("comm_stub_8k").run()
    assert not at.exception and not at.error
    assert at.number_input(key=_k("factor_share_comm_stub_8k")).value == 1.0
    row = _library_row(at, "comm_stub_8k", 1.0)
    assert row["demand_ms_per_tran_adjusted"] == pytest.approx(row["demand_ms_per_tran"] + 0.151, rel=1e-9)
    assert _metric(at, "Knee (clients)") == [f"{row['knee_clients']:.0f}", f"{row['knee_clients_adjusted']:.0f}"]


def test_workload_name_parser_and_rmf_cost(app_env):
    at = _page()
    parsed = next(t.value for t in at.dataframe if "connect_per_tran" in t.value.columns)
    assert parsed.iloc[0][["pattern", "clients", "req_bytes", "resp_bytes"]].tolist() == ["CRR", 30, 200, 200]
    at.text_input(key="cs_name").set_value("STR3(1B/20XB)").run()
    assert "response size '20XB' has unit 'XB'" in at.error[0].value
    # the report's worked example is the default: 25 % of 4 CPs over 10 s, 1,000,000 transactions
    assert _metric(at, "CPU cost per transaction") == ["10 us"]
    at.number_input(key="lpar_util").set_value(50.0).run()
    assert _metric(at, "CPU cost per transaction") == ["20 us"]
