"""Every page of the desk through Streamlit's AppTest: widgets driven, key numbers shown.

Expected numbers are computed independently with kneecap's library calls on the same registered
model (the pages must show what the library says), plus IBM's published answers for seed 004:
a third zIIP is needed at 500 clients to hold a 2 ms response time, two are enough at 300.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kneecap import _answer_checks as answer_checks
from kneecap import config, forecasting, modeling, policies, tracking, warehouse
from tests.app.conftest import COMBINED_WORKLOAD, widget_key
from tests.app.conftest import plotly_values as _values

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app" / "streamlit_app.py")
SEED004 = REPO / "data" / "reference" / "seed004_table1.csv"
DIAG = "zosconnect_cics_diag"


def _app(page: str | None = None, *, timeout: float = 120) -> AppTest:
    """The desk as `make serve` starts it, switched to ``page``; no exception on the way."""
    at = AppTest.from_file(APP, default_timeout=timeout).run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, at.exception
    return at


def _champion_metrics(workload: str, kind: str) -> dict[str, float]:
    """The metrics logged with the workload's champion, as the registry holds them."""
    frame = tracking.registered_models()
    row = frame[(frame["name"] == tracking.model_name(workload, kind))
                & frame["aliases"].str.contains(tracking.CHAMPION, na=False)].iloc[0]
    return {c[len("metric."):]: float(row[c]) for c in frame.columns if c.startswith("metric.") and row[c] == row[c]}


def _k(name: str, workload: str = DIAG) -> str:
    return widget_key(name, workload)


def _knee_text(at: AppTest) -> str:
    return next(m.value for m in at.markdown if "Response time breaks away" in m.value)


def _knee_clients(at: AppTest) -> int:
    return int(re.search(r"at about (\d+) clients", _knee_text(at)).group(1))


def _champion():
    tracking.configure()
    return tracking.load_champion(tracking.model_name(DIAG, "response"))


def _frame(at: AppTest, *columns: str, exclude: str | None = None) -> pd.DataFrame:
    """The first table on the page with these columns (read-only st.dataframe keeps no key in AppTest)."""
    for table in at.dataframe:
        value = table.value
        if set(columns) <= set(value.columns) and (exclude is None or exclude not in value.columns):
            return value
    raise AssertionError(f"no table with columns {columns}: {[list(t.value.columns) for t in at.dataframe]}")


def _downloads(at: AppTest) -> set[str]:
    return {d.key for d in at.get("download_button")}


# --- Knee & what-if ----------------------------------------------------------------------------


def test_knee_page_shows_the_library_knee_and_moves_with_ziips(app_env):
    at = _app()
    assert at.selectbox(key="knee_workload").value == DIAG
    model = _champion()
    base = forecasting.default_configuration(model)
    shown = (at.slider(key=_k("knee_n_gcp")).value, at.slider(key=_k("knee_n_ziip")).value)
    assert shown == (base["n_gcp"], base["n_ziip"])

    # the desk bands with every bootstrap draw, as the registered metrics do
    expected = modeling.knee_sentence(forecasting.knee(model, **base, k=3.0))
    # the answer says first which machine it is for: the inputs' GCPs, zIIPs and think time
    assert _knee_text(at) == f"**2 GCPs + 2 zIIPs, think time {base['think_time_ms']:g} ms:** {expected}"
    with_two = _knee_clients(at)
    assert 300 < with_two < 550  # IBM's Table 1 breaks away between 300 and 500 clients with 2 zIIPs
    # every mark on the chart has its legend entry: where the curve comes from, the fitted range,
    # the knee and its band, and the Kneedle knee of the measured points
    chart = json.loads(next(c for c in at.get("plotly_chart") if c.key == "knee_chart").proto.spec)
    names = [t.get("name", "") for t in chart["data"] if t.get("showlegend", True)]
    knee = forecasting.knee(model, **base, k=3.0)
    fct = warehouse.read_table(app_env["KNEECAP_MARTS"], "fct_measurements")
    sources = ", ".join(sorted(set(fct.loc[fct["workload"] == DIAG, "source_id"])))
    assert f"model (closed_mva v1 on {sources})" in names
    assert f"knee 95% band {knee.load_lo:.0f}-{knee.load_hi:.0f}" in names
    assert f"model knee ~{knee.load:.0f} (R > 3x unloaded)" in names
    two = fct[(fct["workload"] == DIAG) & (fct["n_ziip"] == 2)].sort_values("clients")
    kneedle = modeling.observed_knee(two["clients"].to_numpy(float), two["resp_ms"].to_numpy(float))
    assert kneedle is not None and f"observed knee (Kneedle) {kneedle:.0f} clients" in names
    assert any(n.startswith("fitted on ") for n in names) and "95% band" in names
    # the band's width in words under the chart (as thin as the line at low load), at the model's knee
    band = next(c.value for c in at.caption if c.value.startswith("**Response band (95 %):** +/-"))
    assert f"at the knee ({knee.load:.4g} clients)" in band

    at.slider(key=_k("knee_n_ziip")).set_value(3).run()
    assert not at.exception
    assert _knee_clients(at) > with_two * 1.2  # a third zIIP moves the knee out
    assert _knee_text(at) == f"**2 GCPs + 3 zIIPs, think time {base['think_time_ms']:g} ms:** " + \
        modeling.knee_sentence(forecasting.knee(model, n_gcp=base["n_gcp"], n_ziip=3,
                                                   think_time_ms=base["think_time_ms"], k=3.0))
    assert len(at.get("plotly_chart")) == 2
    assert "knee_download" in _downloads(at)


def test_pages_open_on_the_params_workload_or_say_why_not(app_env, tmp_path, monkeypatch):
    at = _app()
    assert at.selectbox(key="knee_workload").value == DIAG  # params.yaml desk.default_workload
    assert not [c.value for c in at.caption if "desk.default_workload" in c.value]
    params = Path(app_env["KNEECAP_PARAMS"]).read_text(encoding="utf-8")
    (tmp_path / "params.yaml").write_text(params.replace(f"default_workload: {DIAG}", "default_workload: gone"),
                                          encoding="utf-8")
    monkeypatch.setenv("KNEECAP_PARAMS", str(tmp_path / "params.yaml"))
    st.cache_data.clear()
    at = _app()
    box = at.selectbox(key="knee_workload")
    assert box.value == box.options[0] != DIAG
    said = [c.value for c in at.caption if "desk.default_workload" in c.value]
    assert said == [f"'gone' (params.yaml desk.default_workload) is not listed here: the page opens on '{box.value}'"]
    box.set_value(DIAG).run()  # chosen: nothing more to say
    assert not at.exception and not [c.value for c in at.caption if "desk.default_workload" in c.value]


def test_knee_page_what_if_point_matches_the_model(app_env):
    at = _app()
    at.slider(key=_k("knee_max_clients")).set_value(800).run()
    at.slider(key=_k("knee_clients")).set_value(450).run()
    at.slider(key=_k("knee_think")).set_value(100).run()
    assert not at.exception
    model = _champion()
    base = forecasting.default_configuration(model)
    pred = model.predict(pd.DataFrame([{"clients": 450, "n_gcp": base["n_gcp"], "n_ziip": base["n_ziip"],
                                        "think_time_ms": 100.0}])).iloc[0]
    metric = next(m for m in at.metric if m.label == "Response at 450 clients")
    assert metric.value == f"{pred['resp_ms']:.2f} ms"
    assert next(m for m in at.metric if m.label == "Throughput").value == f"{pred['tps']:.0f} tps"
    # a shorter think time means more load per client, so the knee comes sooner than at 200 ms
    assert _knee_clients(at) < forecasting.knee(model, **base, k=3.0).load


def test_knee_page_says_when_the_what_if_point_is_beyond_what_the_model_was_fitted_on(app_env):
    at = _app()
    hi = _champion().train_ranges["clients"][1]
    assert not [c for c in at.caption if "what-if point is" in c.value]  # the default point was measured
    at.slider(key=_k("knee_max_clients")).set_value(2000).run()
    at.slider(key=_k("knee_clients")).set_value(1500).run()
    said = [c.value for c in at.caption if "what-if point is" in c.value]
    assert len(said) == 1 and f"{1500 / hi:.3g}x the largest trained load ({hi:g} clients)" in said[0]
    # five measured loads: the champion measured its extrapolation error, and the band says so
    assert _champion().extrapolation_spread and "its band is widened by the error" in said[0]
    # 3x the trained load: past 1.3x a warning beside the response, as the library words it
    model = _champion()
    base = forecasting.default_configuration(model)
    beyond = forecasting.extrapolation(model.train_ranges["clients"], 1500, "clients",
                                       configuration=(base["n_gcp"], base["n_ziip"], base["think_time_ms"]),
                                       measured=model.train_ranges.get("configs"))
    expected = forecasting.answer_warnings(model, beyond)
    assert expected and expected[0].startswith("beyond 1.3x the trained load")
    assert [f"Response at 1500 clients: {w}." for w in expected] == \
        [w.value for w in at.warning if w.value.startswith("Response at")]


def test_knee_and_planner_pages_warn_of_a_training_point_outside_the_band(app_env, monkeypatch):
    # the seed 004 champion's five points lie inside its band; a check that finds one outside is
    # shown beside the response on the knee page and under the plan
    assert forecasting.band_check(_champion())["n_outside"] == 0
    outside = {"n_points": 5, "n_outside": 1, "alpha": 0.05,
               "worst": {"clients": 500.0, "n_gcp": 2.0, "n_ziip": 2.0, "think_time_ms": 200.0, "resp_ms": 5.03,
                         "fitted_ms": 3.9, "band_lo_ms": 3.2, "band_hi_ms": 4.6}}
    # the answer checks look band_check up where they live (forecasting re-exports it)
    monkeypatch.setattr(answer_checks, "band_check", lambda results: outside)
    (sentence,) = forecasting.answer_warnings(_champion(), {})
    assert sentence.startswith("training point 500 clients (2 GCP + 2 zIIP, think 200 ms) measured 5.03 ms")
    at = _app()
    clients = at.slider(key=_k("knee_clients")).value
    assert f"Response at {clients} clients: {sentence}." in [w.value for w in at.warning]
    at = _app("planner")
    assert f"The plan's responses: {sentence}." in [w.value for w in at.warning]


def test_knee_page_names_the_dispatcher_structures_and_warns_when_their_knees_disagree(app_env, monkeypatch):
    # the page says which structures the band carries; knees of the structures further apart than
    # forecasting.STRUCTURE_DISAGREEMENT are a warning beside the response, worded as kneecap forecast words it
    model = _champion()
    apart = {"knee_clients_structure_lo": 348.0, "knee_clients_structure_hi": 365.0,
             "knee_clients_by_structure": "pool help, 4 bursts 365; burst help, 2 bursts 348"}
    # (the desk caches the structures' knees per configuration: patched before the page first runs)
    st.cache_data.clear()
    monkeypatch.setattr(forecasting, "structure_knees", lambda *args, **kwargs: apart)
    (sentence,) = [w for w in forecasting.answer_warnings(model, apart) if "structures" in w]
    assert "348 to 365 clients" in sentence and "4.9 % apart" in sentence
    at = _app()
    assert any("Dispatcher structures:" in c.value and model.structure_sentence() in c.value for c in at.caption)
    clients = at.slider(key=_k("knee_clients")).value
    assert f"Response at {clients} clients: {sentence}." in [w.value for w in at.warning]


def test_knee_page_warns_where_gcp_help_can_latch_on(app_env):
    at = _app()
    assert not at.warning  # 200 ms of think time at the measured point
    at.slider(key=_k("knee_n_ziip")).set_value(1).run()
    at.slider(key=_k("knee_think")).set_value(0).run()
    assert not at.exception
    said = [w.value for w in at.warning]
    assert len(said) == 1 and said[0].startswith("The what-if point: closed load with less think time than response")


# --- zIIP planner ------------------------------------------------------------------------------


def test_planner_page_recommends_ibms_answer(app_env):
    at = _app("planner")
    at.number_input(key=_k("plan_clients")).set_value(500).run()
    at.number_input(key=_k("plan_slo")).set_value(2.0).run()
    assert not at.exception
    assert re.search(r"\b3 zIIP\(s\)", at.success[0].value), at.success[0].value
    assert at.success[0].value.startswith("**2 GCPs, think time 200 ms, 500 clients, SLO 2 ms:** recommendation ")
    table = at.dataframe[0].value
    row3 = table[table["n_ziip"] == 3].iloc[0]
    assert row3["resp_ms"] <= 2.0 < table[table["n_ziip"] == 2].iloc[0]["resp_ms"]
    # the rule that turned two zIIPs away, as the library's plan names it, and each row's failed rules
    policy = policies.planner_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    plan = modeling.plan_ziip(_champion(), clients=500, think_time_ms=200.0, n_gcp=2, slo_resp_ms=2.0, policy=policy)
    assert plan.binding_rule is not None and plan.binding_rule.startswith("slo")
    assert f"**Binding rule:** {plan.binding_sentence}." in [m.value for m in at.markdown]
    assert table["failed_rules"].tolist() == plan.table["failed_rules"].tolist()
    # the rows turned away, in words with their numbers: two zIIPs miss the 2 ms SLO
    two = plan.table[plan.table["n_ziip"] == 2].iloc[0]
    turned_away = next(m.value for m in at.markdown if m.value.startswith("**Turned away:**"))
    assert f"- **2 GCPs + 2 zIIPs** misses the SLO ({two['resp_ms']:.3g} ms > 2 ms)" in turned_away
    assert "- **2 GCPs + 3 zIIPs**" not in turned_away  # the recommendation passes
    at.number_input(key=_k("plan_clients")).set_value(300).run()
    assert re.search(r"\b2 zIIP\(s\)", at.success[0].value), at.success[0].value
    assert "plan_download" in _downloads(at)
    # on a sub-capacity setting of the same machine the GCPs slow, and the page says on what it answers
    at.toggle(key=_k("plan_processor")).set_value(True).run()
    assert not at.exception, at.exception
    shown = (at.success or at.error)[0].value
    assert "on 3931-601 (from 3931-701: GCP capacity x0.664, zIIP x1)" in shown, shown
    assert [m.value for m in at.markdown if m.value.startswith("**At the capacity ratio's ends:** low ")]


def test_planner_page_says_when_no_count_meets_the_slo(app_env):
    at = _app("planner")
    at.number_input(key=_k("plan_slo")).set_value(0.01).run()  # below the unloaded response time
    assert not at.exception
    assert not at.success and at.error
    assert at.error[0].value  # the planner's own reason, not a blank box


# --- Workloads ---------------------------------------------------------------------------------


def test_workloads_page_shows_points_curve_residuals_and_backtest(app_env):
    at = _app("workloads")
    dims = _frame(at, "workload", "workload_kind")
    assert DIAG in set(dims["workload"])
    assert at.selectbox(key="wl_workload").value == DIAG
    assert any("Closed MVA" in c.value for c in at.code)
    assert {"wl_curve_response", "wl_resid_chart_response"} <= {c.key for c in at.get("plotly_chart")}

    resid = _frame(at, "target", "measured", "fitted", "residual_pct").set_index("point_id")
    fct = warehouse.read_table(app_env["KNEECAP_MARTS"], "fct_measurements")
    # each model says where it comes from, and its curve shades the loads it was fitted on
    sources = ", ".join(sorted(set(fct.loc[fct["workload"] == DIAG, "source_id"])))
    assert f"Response model: closed_mva v1 on {sources}" in [h.value for h in at.subheader]
    chart = json.loads(next(c for c in at.get("plotly_chart") if c.key == "wl_curve_response").proto.spec)
    measured_clients = fct.loc[fct["workload"] == DIAG, "clients"]
    assert f"fitted on {measured_clients.min():.0f}-{measured_clients.max():.0f} clients" in \
        [t.get("name") for t in chart["data"]]
    measured = fct[fct["workload"] == DIAG].set_index("point_id")
    assert set(resid.index) == set(measured.index) and len(measured) >= 6  # Table 1 plus the 3-zIIP run
    np.testing.assert_allclose(resid["measured"], measured.loc[resid.index, "resp_ms"], rtol=1e-12)
    fitted = _champion().predict(measured.loc[resid.index].reset_index())
    # the page rounds each column to 3 significant digits of its smallest value: 0.986 -> 3 places
    np.testing.assert_allclose(resid["fitted"], fitted["resp_ms"], atol=5e-4)
    np.testing.assert_allclose(resid["residual_pct"], (fitted["resp_ms"].to_numpy() / resid["measured"] - 1) * 100,
                               atol=0.05)

    # the champion's metrics as words with units, 4 significant digits, never a raw name
    metrics = _frame(at, "measure", "value").set_index("metric")
    assert {"train_mape_resp_ms", "knee_k_clients"} <= set(metrics.index)
    tracking.configure()
    logged = _champion_metrics(DIAG, "response")
    assert metrics.loc["knee_saturation_clients_lo", "measure"] == "saturation N*, 95% band low (clients)"
    assert metrics.loc["train_mape_resp_ms", "measure"] == "training error, response (MAPE %)"
    for name, value in logged.items():
        assert metrics.loc[name, "value"] == float(f"{value:.4g}"), name
        assert "_" not in metrics.loc[name, "measure"], metrics.loc[name, "measure"]
    backtest = _frame(at, "case", "mape_pct", "goal_pct")
    assert {"comm_stub_payload", "mq_console_vs_rest"} == set(backtest["case"])
    assert backtest["mape_pct"].notna().all() and (backtest["mape_pct"] >= 0).all()
    assert {"wl_dims_download", "wl_points_download", "wl_resid_response_download",
            "wl_backtest_download"} <= _downloads(at)


def test_workloads_page_cost_model_lists_competitors(app_env):
    at = _app("workloads")
    at.selectbox(key="wl_workload").set_value("zosconnect_apireq_v3_baqr").run()
    assert not at.exception
    assert any("cpu_ms_per_tran" in c.value for c in at.code)
    competitors = _frame(at, "loo_mape_pct", exclude="metric")
    assert len(competitors) >= 2 and "loo_mape_pct" in competitors
    loo = _frame(at, "measure", "value").set_index("metric")
    assert loo.loc["loo_mape_pct", "measure"] == "leave-one-out error (MAPE %)"
    # the champion's logged CV error is the best competitor's (both as logged, then as shown: 4
    # significant digits beside the metric, 3 of the column's smallest value in the table)
    tracking.configure()
    frame = tracking.registered_models()
    run_id = frame.loc[frame["name"] == tracking.model_name("zosconnect_apireq_v3_baqr", "cost"), "run_id"].iloc[0]
    best = tracking.load_run_table(run_id, "competitors.json")["loo_mape_pct"].min()
    np.testing.assert_allclose(_champion_metrics("zosconnect_apireq_v3_baqr", "cost")["loo_mape_pct"], best,
                               rtol=1e-9)
    assert loo.loc["loo_mape_pct", "value"] == float(f"{best:.4g}")
    np.testing.assert_allclose(competitors["loo_mape_pct"].min(), best, atol=5e-4)


# --- Models ------------------------------------------------------------------------------------


def test_models_page_promotes_a_version(app_env):
    at = _app("models")
    table = _frame(at, "name", "version", "aliases")
    registered = tracking.model_name(DIAG, "response")
    # the page names a model as `kneecap models` lists it, not by its registered prefix
    name = tracking.listed_name(registered)
    assert name == f"{DIAG}-response"
    assert {name, "zosconnect_apireq_v3_baqr-cost"} <= set(table["name"])
    assert not table["name"].str.startswith(tracking.MODEL_PREFIX).any()
    rows = table[table["name"] == name].set_index("version")
    assert rows.loc[1, "aliases"] == "champion" and rows.loc[2, "aliases"] == ""

    at.selectbox(key="promote_name").set_value(name).run()
    at.selectbox(key="promote_version").set_value(2).run()
    at.button(key="promote_button").click().run()
    assert not at.exception
    assert at.success[0].value == f"{name} version 2 is now @champion"
    tracking.configure()
    assert tracking.champion_version(registered) == "2"
    rows = _frame(at, "name", "version", "aliases").query("name == @name").set_index("version")
    assert rows.loc[2, "aliases"] == "champion"

    # and back, so the other pages keep seeing version 1
    at.selectbox(key="promote_version").set_value(1).run()
    at.button(key="promote_button").click().run()
    assert tracking.champion_version(registered) == "1"
    assert "models_download" in _downloads(at)


def test_models_page_shows_the_combination_weights(app_env):
    # the registered combination (tests/app/conftest.py): the page shows the weights its run logged,
    # which are the fitted model's own
    at = _app("models")
    table = _frame(at, "family", "weight", "rolling_origin_mape_pct")
    name = tracking.model_name(COMBINED_WORKLOAD, "response")
    # named as the registry table above names it, as `kneecap models` lists it
    rows = table[table["name"] == tracking.listed_name(name)].set_index("family")
    assert set(rows.index) == {"usl", "amdahl", "closed_mva_c"}
    tracking.configure()
    fitted = tracking.load_version(name, 1)
    np.testing.assert_allclose(sum(fitted.weights.values()), 1.0, rtol=1e-9)
    # shown rounded: each column to 3 significant digits of its smallest value, at most 4 places
    # (the test project registers one combination: its rows are the whole table)
    assert len(table) == len(fitted.weights)

    def places(values) -> int:
        smallest = min(abs(v) for v in values if v != 0)
        return min(4, max(0, 2 - int(np.floor(np.log10(smallest)))))

    for family, weight in fitted.weights.items():
        assert rows.loc[family, "weight"] == pytest.approx(round(weight, places(fitted.weights.values())), abs=1e-12)
        assert rows.loc[family, "rolling_origin_mape_pct"] == pytest.approx(
            round(fitted.scores[family], places(fitted.scores.values())), abs=1e-12)
    # the family with the smaller rolling-origin error carries the larger weight
    assert rows["weight"].idxmax() == rows["rolling_origin_mape_pct"].idxmin()


# --- Data --------------------------------------------------------------------------------------


def test_data_page_lists_marts_and_validation(app_env):
    at = _app("data")
    counts = _frame(at, "table", "rows", exclude="rule").set_index("table")["rows"]
    published = warehouse.read_table(app_env["KNEECAP_MARTS"], "fct_measurements")
    assert counts["fct_measurements"] == len(published) > 0
    assert any("Last pipeline validation: passed" in e.label for e in at.expander)


def test_data_page_csv_upload_is_validated(app_env):
    at = _app("data")
    at.file_uploader(key="data_upload").upload("seed004.csv", SEED004.read_bytes(), "text/csv").run()
    assert not at.exception, at.exception
    assert at.success[0].value.endswith("measurement CSV, 5 rows")
    assert any(s.value.startswith("All ") and "expectations pass on 5 rows" in s.value for s in at.success)
    assert _frame(at, "resp_ms", "source_line")["resp_ms"].tolist() == \
        pd.read_csv(SEED004)["resp_ms"].tolist()
    # the upload becomes a curve, fitted on its own points and neither published nor registered
    charts = {c.key: c for c in at.get("plotly_chart")}
    assert "data_upload_curve_0" in charts
    spec = json.loads(charts["data_upload_curve_0"].proto.spec)
    points = next(t for t in spec["data"] if t.get("name") == "uploaded points")
    assert _values(points["y"]) == pd.read_csv(SEED004)["resp_ms"].tolist()
    assert "closed_mva" in next(t["name"] for t in spec["data"] if t.get("name", "").startswith("model"))
    assert any("R > " in c.value and "unloaded at" in c.value for c in at.caption)


def test_data_page_quarantines_rows_breaking_littles_law(app_env):
    # 500 clients at 2420 tps with Z = 200 ms allows R ~ 6.6 ms; 50.3 ms breaks N = X (R + Z) by ~21 %
    bad = SEED004.read_bytes().replace(b",5.03,", b",50.3,")
    assert bad != SEED004.read_bytes()
    at = _app("data")
    at.file_uploader(key="data_upload").upload("bad.csv", bad, "text/csv").run()
    assert not at.exception, at.exception
    assert at.warning and "expectations fail" in at.warning[0].value
    failures = _frame(at, "rule", "column", "rows")
    assert failures[["column", "rows"]].values.tolist() == [["clients", 1]]
    quarantine = _frame(at, "line", "point_id", "column", "value", "problem")
    assert len(quarantine) == 1 and quarantine.iloc[0]["point_id"] == "c500" and quarantine.iloc[0]["line"] == 6
    assert float(quarantine.iloc[0]["value"]) == pytest.approx(abs(500 - 2420 * (50.3 + 200) / 1000) / 500, rel=1e-6)
    assert quarantine.iloc[0]["problem"].startswith("Little's law: clients != tps x (resp_ms + think_time_ms)")


def test_data_page_takes_the_lpar_and_think_time_an_own_table_leaves_out(app_env):
    # the README's own table: clients, tps and response only. Read as it is, think time 0 breaks
    # Little's law on every row; told the LPAR and think time (as kneecap check is), it passes
    own = b"workload,clients,tps,resp_ms\n" + b"".join(
        f"mylpar_api,{c},{x},{r}\n".encode() for c, x, r in
        ((100, 500, 1.06), (200, 1000, 1.13), (300, 1500, 1.38), (400, 1960, 3.32), (500, 2420, 5.03)))
    at = _app("data")
    at.file_uploader(key="data_upload").upload("mylpar.csv", own, "text/csv").run()
    assert not at.exception, at.exception
    assert at.warning and "expectations fail" in at.warning[0].value
    assert len(_frame(at, "line", "point_id", "column", "value", "problem")) == 5
    at.number_input(key="data_n_gcp").set_value(2).run()
    at.number_input(key="data_n_ziip").set_value(2).run()
    at.number_input(key="data_think").set_value(200.0).run()
    assert not at.exception, at.exception
    assert any(s.value.startswith("All ") and "expectations pass on 5 rows" in s.value for s in at.success)
    assert "data_upload_curve_0" in {c.key for c in at.get("plotly_chart")}


def test_data_page_rejects_bad_cells_with_line_numbers(app_env):
    at = _app("data")
    at.file_uploader(key="data_upload").upload("t.csv", SEED004.read_bytes().replace(b",1960,", b",fast,")).run()
    assert not at.exception
    assert at.error[0].value == "t.csv:5: tps: 'fast' is not a number"
    problems = _frame(at, "file", "line", "column", "problem")
    assert problems.iloc[0].to_dict() == {"file": "t.csv", "line": 5, "column": "tps",
                                          "problem": "'fast' is not a number"}


def test_data_page_decodes_an_smf_dump_and_quarantines_a_damaged_record(app_env):
    sys.path.insert(0, str(REPO / "tests" / "smf"))
    import synth

    records = []
    for i in range(3):
        start = dt.datetime(2025, 3, 3) + dt.timedelta(minutes=15 * i)
        records.append(synth.record_72_3("SYSA", "PLEX1", start, 900.0, f"C{i}", "W",
                                         [synth.Period(period=1, ended=100 + i, tcb_s=1.0 + i)]))
        records.append(synth.record_other(99, 1, "SYSA", n=60 + i))  # distinct: copies are stored once
    damaged = bytearray(records[2])
    damaged[60:64] = (60000).to_bytes(4, "big")  # SMF72SCS: period section beyond the record
    records[2] = bytes(damaged)

    at = _app("data")
    at.file_uploader(key="data_upload").upload("week.smf", synth.frame_rdw(records)).run()
    assert not at.exception, at.exception
    assert at.success[0].value.startswith("week.smf: SMF dump (rdw)")
    counts = _frame(at, "record_type", "subtype", "records", "decoded").set_index(["record_type", "subtype"])
    assert counts.loc[(72, 3), "records"] == 3 and counts.loc[(99, 1), "records"] == 3
    quarantine = _frame(at, "record_no", "reason")
    assert len(quarantine) == 1
    assert quarantine.iloc[0]["record_no"] == 3 and "period data triplet" in quarantine.iloc[0]["reason"]
    assert sorted(_frame(at, "class_name")["class_name"]) == ["C0", "C2"]


def test_data_page_rejects_rmf_error_replies_and_plain_binary(app_env):
    at = _app("data")
    error_reply = (REPO / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-error.xml").read_bytes()
    at.file_uploader(key="data_upload").upload("reply.xml", error_reply).run()
    assert not at.exception
    assert re.match(r"reply\.xml: .*GPM0739E", at.error[0].value)
    at.file_uploader(key="data_upload").clear().upload("dump.bin", b"plain binary without descriptors" * 8).run()
    assert not at.exception
    assert "site rdw" in at.error[0].value


def test_data_page_reads_an_rmf_report(app_env):
    at = _app("data")
    report = (REPO / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-small-RPRT-20220412.xml").read_bytes()
    at.file_uploader(key="data_upload").upload("cpu.xml", report).run()
    assert not at.exception, at.exception
    from kneecap.rmf.postprocessor import read_postprocessor

    expected = read_postprocessor(REPO / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-small-RPRT-20220412.xml")
    assert at.success[0].value == f"cpu.xml: RMF Postprocessor XML, {sum(len(f) for f in expected)} rows"
    assert len(_frame(at, "partition_name")) == len(expected.partition)


def test_data_page_shows_a_quarantined_rmf_interval(app_env):
    # one bad cell costs its interval: the other 33 are read, the reason is shown under the upload's name
    text = (REPO / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-RPRT-20200910.xml").read_text()
    head, *intervals = text.split("<postprocessor>")
    intervals[2] = re.sub(r"(<col>CP</col><col>100\.00</col><col>)[^<]*", r"\g<1>n/a?", intervals[2], count=1)
    at = _app("data")
    at.file_uploader(key="data_upload").upload("week.xml", "<postprocessor>".join([head, *intervals]).encode()).run()
    assert not at.exception, at.exception
    assert at.success[0].value.startswith("week.xml: RMF Postprocessor XML, ")
    assert any("1 row(s) or record(s) set aside" in m.value for m in at.markdown)
    (reason,) = _frame(at, "reason")["reason"]
    assert reason.startswith("week.xml: interval 3 (CPU 2020-09-10 01:00:00), 'Time% LPAR Busy': not a number")


def test_configuration_widgets_follow_the_selected_workload(app_env):
    """Switching workload starts its sliders from that workload's measured configuration, not the
    previous workload's settings."""
    at = _app()
    base = forecasting.default_configuration(_champion())
    at.slider(key=_k("knee_n_ziip")).set_value(5).run()
    at.slider(key=_k("knee_think")).set_value(1000).run()
    at.selectbox(key="knee_workload").set_value("ZCONHI").run()
    assert not at.exception
    at.selectbox(key="knee_workload").set_value(DIAG).run()
    assert not at.exception
    assert (at.slider(key=_k("knee_n_ziip")).value, at.slider(key=_k("knee_think")).value) == (
        base["n_ziip"], int(base["think_time_ms"]))
