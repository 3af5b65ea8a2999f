"""The desk for a WLM class from SMF (open dispatch champion ZCONHI of the test project's synthetic
week): the SMF classes page (history, growth forecast, knee and SLO dates), the Knee page and the
planner in tps, and the Workloads page's provenance. Expected numbers come from kneecap's library
calls on the same registered champion."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kneecap import _answer_checks as answer_checks
from kneecap import config, forecasting, goal_answers, goal_curves, modeling, policies, processors, tracking, warehouse
from tests.app.conftest import SMF_CLASS, SMF_CLASS_2, SMF_DAYS, widget_key
from tests.app.conftest import plotly_values as _values

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app" / "streamlit_app.py")
K = 3.0  # params.yaml train.knee_k
#: the first words of an answer on the synthetic week's LPAR, the other classes as measured
BASE_ANSWER = "**2 GCPs + 2 zIIPs, other classes' load x1:** "


def _page(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception, at.exception
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def _k(name: str, workload: str = SMF_CLASS) -> str:
    return widget_key(name, workload)


def _champion():
    tracking.configure()
    return tracking.load_champion(tracking.model_name(SMF_CLASS, "response"))


def _metric(at: AppTest, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}: {[m.label for m in at.metric]}"
    return found[0]


def _markdown(at: AppTest, prefix: str) -> str:
    found = [m.value for m in at.markdown if m.value.startswith(prefix)]
    assert found, f"no markdown starting {prefix!r}: {[m.value[:60] for m in at.markdown]}"
    return found[0]


def _chart(at: AppTest, key: str) -> dict:
    """The plotly figure the page drew with widget key ``key`` (its ``data`` and ``layout``)."""
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    assert found, f"no chart {key!r}: {[c.proto.id for c in at.get('plotly_chart')]}"
    return json.loads(found[0].proto.spec)


def _day(value) -> str:
    return pd.Timestamp(value).date().isoformat()


# --- SMF classes -------------------------------------------------------------------------------


def test_classes_page_forecasts_the_knee_date(app_env):
    at = _page("classes")
    assert at.selectbox(key="cls_workload").value == SMF_CLASS
    assert SMF_CLASS in at.selectbox(key="cls_workload").options
    assert "zosconnect_cics_diag" not in at.selectbox(key="cls_workload").options  # closed models are not classes

    model = _champion()
    assert model.family == "open_dispatch"
    knee = model.knee(k=K)
    assert _metric(at, "Knee (tps)") == f"{knee.load:.4g}"
    assert 76 < knee.load < knee.max_tps  # beyond the busiest measured interval, below saturation

    slo = at.number_input(key=_k("cls_slo")).value
    assert slo == pytest.approx(2 * knee.unloaded_resp_ms, abs=0.1)
    at_slo = forecasting.slo_tps(model, slo, lpar={"n_gcp": 2, "n_ziip": 2, "bg_load_factor": 1.0})
    growth = policies.growth_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    assert growth.freq == "D" and at.number_input(key=_k("cls_horizon")).value == growth.horizon
    grown = forecasting.class_growth(model, knee_tps=knee.load, knee_tps_lo=knee.load_lo,
                                     knee_tps_hi=knee.load_hi, knee_tps_draws=knee.draws,
                                     slo_tps=at_slo, policy=growth,
                                     alpha=model.alpha)
    assert len(grown["peaks"].dropna()) == SMF_DAYS

    sentence = _markdown(at, BASE_ANSWER)
    assert grown["date_knee"] is not None  # the synthetic week grows ~8.5 tps a day: the knee is weeks away
    assert (f"knee reached by {_day(grown['date_knee_p90'])} with 90 % probability, earliest "
            f"{_day(grown['date_knee_earliest'])}, most likely {_day(grown['date_knee'])}") in sentence
    assert re.search(r"reached by \d{4}-\d\d-\d\d with 90 % probability, earliest \d{4}-\d\d-\d\d, most likely "
                     r"\d{4}-\d\d-\d\d", sentence)
    # a week of noisy peaks: a range of days, never one (issue #33)
    assert grown["date_knee_earliest"] < grown["date_knee_p90"]
    slo_sentence = _markdown(at, "**SLO:**")
    assert f"most likely {_day(grown['date_slo'])}" in slo_sentence
    assert grown["date_slo"] <= grown["date_knee"]  # the SLO's load (2x unloaded) comes before 3x unloaded

    # the forecaster chosen, and every candidate with its rolling-origin error
    assert any(m.value.startswith(f"**{grown['method']}** chosen") for m in at.markdown)
    # labelled: the columns as a person reads them
    competitors = next(t.value for t in at.table if "method" in t.value.columns)
    assert len(competitors) >= 2 and {"method", "rolling-origin error (MAPE %)"} <= set(competitors.columns)
    assert competitors["method"].tolist() == grown["competitors"]["method"].tolist()
    assert grown["method"] in set(competitors["method"])

    # the chart: interval history, daily peaks, the forecast fan and the knee line with its band
    spec = _chart(at, "cls_chart")
    names = {t.get("name") for t in spec["data"]}
    assert {"interval tps", "daily peak", f"forecast ({grown['method']})"} <= names
    history = next(t for t in spec["data"] if t.get("name") == "interval tps")
    assert len(_values(history["y"])) == model.n_train
    shapes = spec["layout"]["shapes"]
    assert any(s["type"] == "line" and s["y0"] == s["y1"] == pytest.approx(knee.load) for s in shapes)
    assert any(s["type"] == "rect" and s["y0"] == pytest.approx(knee.load_lo)
               and s["y1"] == pytest.approx(knee.load_hi) for s in shapes)
    # the days from the earliest plausible to the 90 % date, shaded
    assert any(s["type"] == "rect" and pd.Timestamp(s["x0"]) == grown["date_knee_earliest"]
               and pd.Timestamp(s["x1"]) == grown["date_knee_p90"] for s in shapes)
    assert "cls_download" in {d.key for d in at.get("download_button")}


def _measured_pi_table(at: AppTest) -> pd.DataFrame:
    return next(t.value for t in at.table if "median PI" in t.value.columns)


def test_classes_page_shows_the_sysplex_pi_beside_the_local_pi(app_env, tmp_path, monkeypatch):
    """The measured PI table: the class's local PI on its one system; with the class on a second
    system of its sysplex (SYSB of PLEX1, the synthetic week with other draws, published as the
    pipeline's SQL builds it), a sysplex row follows, counted from fct_sysplex_performance_index."""
    at = _page("classes")
    alone = _measured_pi_table(at)
    assert alone["system"].tolist() == ["SYSA"] and alone["PI"].tolist() == ["local"]
    assert "sysplex PI" not in _markdown(at, "**Measured Performance Index**")

    from kneecap.smf.reader import decode_file
    from tests.bundled import read_bundled
    from tests.smf import synth

    records = [*synth.week_of_intervals(days=SMF_DAYS)[0], *synth.week_of_intervals(days=SMF_DAYS, sid="SYSB",
                                                                                    seed=8)[0]]
    decoded = decode_file(io.BytesIO(synth.frame_rdw(records)))
    decoded_tables = {"smf72_workload": decoded.smf72_workload, "smf70_cpu": decoded.smf70_cpu}
    built = warehouse.build_marts(*read_bundled(), decoded_tables, sql_root=REPO / "pipelines" / "sql")
    tables = dict(warehouse.read_snapshot(app_env["KNEECAP_MARTS"]).tables)
    tables.update({k: built[k] for k in ("fct_performance_index", "fct_sysplex_performance_index")})
    warehouse.write_tables(tables, tmp_path / "marts")
    monkeypatch.setenv("KNEECAP_MARTS", str(tmp_path / "marts"))
    st.cache_data.clear()
    st.cache_resource.clear()

    at = _page("classes")
    shown = _measured_pi_table(at)
    plex = built["fct_sysplex_performance_index"].query("class_name == @SMF_CLASS")
    measured = plex["performance_index"].dropna()
    assert shown["system"].tolist() == ["SYSA", "PLEX1 (2 systems)"] and shown["PI"].tolist() == ["local", "sysplex"]
    row = shown.iloc[1]
    assert row["intervals"] == str(len(measured)) == str(SMF_DAYS * 96)
    assert float(row["largest PI"]) == pytest.approx(measured.max(), rel=1e-3)
    assert float(row["median PI"]) == pytest.approx(measured.median(), rel=1e-3)
    assert "sysplex PI, from the systems' response time buckets" in _markdown(at, "**Measured Performance Index**")


def test_classes_page_gives_the_goals_pi_load_and_the_percentiles(app_env):
    """The class's WLM goal (an average one in the synthetic week): where the forecast PI passes 1, and the
    percentiles at the last daily peak, as kneecap.goal_answers computes them on the champion."""
    at = _page("classes")
    model = _champion()
    assert model.response_shape["calibration"]["goal_type"] == "average"
    growth = policies.growth_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    knee = model.knee(k=K)
    peak = float(forecasting.class_growth(model, knee_tps=knee.load, policy=growth, alpha=model.alpha)["peaks"]
                 .dropna().iloc[-1])
    lpar = {"n_gcp": 2, "n_ziip": 2, "bg_load_factor": 1.0}
    point = model.predict(pd.DataFrame([{"tps": peak, **lpar}])).iloc[0]
    goal = goal_answers.goal_columns(model, lpar, {"tps": peak, **{c: float(point[c]) for c in
                                                                    ("resp_ms", "resp_ms_lo", "resp_ms_hi")}})
    sentence = _markdown(at, f"**WLM goal {goal['goal']}:**")
    assert f"PI passes 1 at {goal['pi_tps']:.4g} tps" in sentence
    # an average goal: PI 1 where the mean reaches the goal
    np.testing.assert_allclose(forecasting.slo_tps(model, model.response_shape["calibration"]["goal_resp_ms"],
                                                   lpar=lpar), goal["pi_tps"], rtol=1e-9)
    caption = next(c.value for c in at.caption if c.value.startswith(f"At {peak:.4g} tps"))
    assert f"p90 {goal['resp_p90_ms']:.3g} ms" in caption and f"PI {goal['pi']:.2f}" in caption

    # beside the words, drawn against load: the PI forecast with its band, PI 1, each interval's measured PI
    # and the load it passes 1 at with its band; the same curve as kneecap.goal_curves gives on the champion
    curve = goal_curves.goal_curve(model, model.curve(points=80, **lpar))
    traces = {t.get("name"): t for t in _chart(at, "cls_pi_curve")["data"]}
    assert {"PI forecast", "95% band", "PI = 1 (goal met exactly)", "measured PI (RMF intervals)",
            f"PI passes 1 at {goal['pi_tps']:.4g} tps",
            f"PI 1 95% band {goal['pi_tps_lo']:.4g}-{goal['pi_tps_hi']:.4g} tps"} <= set(traces)
    drawn = np.array(_values(traces["PI forecast"]["x"]), float)
    np.testing.assert_allclose(np.array(_values(traces["PI forecast"]["y"]), float),
                               curve.set_index("tps").loc[drawn, "pi"].replace(np.inf, np.nan), rtol=1e-12)
    pi = warehouse.read_snapshot(os.environ["KNEECAP_MARTS"]).tables["fct_performance_index"]
    measured = pi[(pi["class_name"] == SMF_CLASS) & pi["performance_index"].notna()]
    assert len(_values(traces["measured PI (RMF intervals)"]["y"])) == len(measured) == model.n_train
    assert _values(traces[f"PI passes 1 at {goal['pi_tps']:.4g} tps"]["x"]) == [goal["pi_tps"]] * 2
    percentiles = {t.get("name") for t in _chart(at, "cls_percentile_curve")["data"]}
    assert {"p50 forecast", "p90 forecast", "p95 forecast", "p95 95% band",
            "goal: average 50 ms (on the mean)", "p90 measured"} <= percentiles

    # a third zIIP: the charts follow the page's LPAR (the load PI passes 1 at moves out)
    at.number_input(key=_k("cls_n_ziip")).set_value(3).run()
    assert not at.exception, at.exception
    three = {**lpar, "n_ziip": 3}
    goal3 = goal_answers.goal_columns(model, three, {"tps": peak, **{
        c: float(v) for c, v in model.predict(pd.DataFrame([{"tps": peak, **three}])).iloc[0].items()
        if c in ("resp_ms", "resp_ms_lo", "resp_ms_hi")}})
    assert goal3["pi_tps"] > goal["pi_tps"]
    assert f"PI passes 1 at {goal3['pi_tps']:.4g} tps" in {t.get("name") for t in _chart(at, "cls_pi_curve")["data"]}

    # a class fitted without 72.3 buckets has no distribution: no goal words, no goal charts
    at.selectbox(key="cls_workload").set_value(SMF_CLASS_2).run()
    assert not at.exception, at.exception
    assert not [m.value for m in at.markdown if m.value.startswith("**WLM goal")]
    assert not [c for c in at.get("plotly_chart") if c.proto.id.endswith(("-cls_pi_curve", "-cls_percentile_curve"))]
    assert [c for c in at.get("plotly_chart") if c.proto.id.endswith("-cls_chart")]


def test_classes_page_shows_what_the_model_warns_of(app_env, monkeypatch):
    # an open dispatch fit keeps no training points to hold to its band: no warning of its own
    assert forecasting.band_check(_champion()) is None
    at = _page("classes")
    assert not [w.value for w in at.warning if w.value.startswith("The knee and the SLO load")]
    # a check added to the library's list (as dispatcher structures that disagree will be) is shown
    said = "two dispatcher structures disagree by more than the band"
    monkeypatch.setattr(answer_checks, "ANSWER_CHECKS", (*answer_checks.ANSWER_CHECKS, lambda results, row: [said]))
    st.cache_data.clear()  # the desk keeps the answer it had
    at = _page("classes")
    assert f"The knee and the SLO load: {said}." in [w.value for w in at.warning]


def test_classes_page_says_when_the_knee_is_beyond_the_horizon(app_env):
    at = _page("classes")
    at.number_input(key=_k("cls_horizon")).set_value(7).run()  # a week ahead: the knee is weeks away
    assert not at.exception, at.exception
    assert "knee not within the horizon" in _markdown(at, BASE_ANSWER)
    # a third zIIP moves the knee out; the page follows the library
    at.number_input(key=_k("cls_n_ziip")).set_value(3).run()
    assert not at.exception
    assert _metric(at, "Knee (tps)") == f"{_champion().knee(k=K, n_ziip=3).load:.4g}"


# --- Knee & what-if ----------------------------------------------------------------------------


def test_knee_page_works_for_an_smf_class(app_env):
    at = _page("knee")
    at.selectbox(key="knee_workload").set_value(SMF_CLASS).run()
    assert not at.exception, at.exception
    assert not any("closed-workload model" in w.value for w in at.warning)
    model = _champion()
    knee = model.knee(k=K)
    assert _metric(at, "Knee (tps)") == f"{knee.load:.4g}"
    assert f"at about {knee.load:.4g} tps" in _markdown(at, BASE_ANSWER)
    assert (at.slider(key=_k("knee_n_gcp")).value, at.slider(key=_k("knee_n_ziip")).value) == (2, 2)

    tps = at.slider(key=_k("knee_tps")).value
    assert tps == pytest.approx(model.train_ranges["tps_max"], rel=0.01)  # the busiest measured interval
    label = f"Response at {tps:.4g} tps"
    pred = model.predict(pd.DataFrame([{"tps": tps, "n_gcp": 2, "n_ziip": 2, "bg_load_factor": 1.0}])).iloc[0]
    assert _metric(at, label) == f"{pred['resp_ms']:.2f} ms"
    for name in ("zIIP busy (per engine)", "GCP busy (per engine)", "Eligible work on GCPs"):
        assert re.match(r"^\d+(\.\d)? %$", _metric(at, name)), _metric(at, name)
    with_two = float(_metric(at, label).split()[0])

    at.slider(key=_k("knee_n_ziip")).set_value(3).run()
    assert not at.exception
    with_three = float(_metric(at, label).split()[0])
    assert with_three <= with_two  # another zIIP never slows the class down here
    assert float(_metric(at, "Knee (tps)")) > knee.load

    # the other classes growing eats into the class's room
    at.slider(key=_k("knee_bg_load")).set_value(3.0).run()
    assert not at.exception
    assert float(_metric(at, "Knee (tps)")) < model.knee(k=K, n_ziip=3).load

    charts = at.get("plotly_chart")
    assert len(charts) == 2
    spec = json.loads(charts[0].proto.spec)
    measured = {t["name"]: len(_values(t["x"])) for t in spec["data"] if t.get("name", "").startswith("RMF intervals")}
    # every interval of the week, resp against tps; none at the 3 zIIPs now asked about
    assert measured == {"RMF intervals (this config)": 0, "RMF intervals (other configs)": 672}
    assert "knee_download" in {d.key for d in at.get("download_button")}

    # the response band runs along the whole curve, from the lowest load drawn to saturation, and
    # its width (a few % at low load: thinner than the line) is said in words
    max_tps = at.slider(key=_k("knee_max_tps")).value
    curve = model.curve(points=80, max_load=float(max_tps), n_gcp=2, n_ziip=3, bg_load_factor=3.0)
    banded = curve[np.isfinite(curve["resp_ms_lo"])]  # where some bootstrap draw still answers
    bounded = np.isfinite(banded["resp_ms_hi"])
    assert bounded.iloc[0] and (banded["resp_ms_hi"][bounded] > banded["resp_ms_lo"][bounded]).all()
    names = [t.get("name") for t in spec["data"]]
    lo_trace = spec["data"][names.index("95% band")]
    hi_trace = spec["data"][names.index("95% band") - 1]  # the upper edge, which the band fills up to
    assert lo_trace["fill"] == "tonexty"
    top = spec["layout"]["yaxis"]["range"][1]
    for trace, column in ((lo_trace, "resp_ms_lo"), (hi_trace, "resp_ms_hi")):
        x, y = np.array(_values(trace["x"]), float), np.array(_values(trace["y"]), float)
        drawn = np.isfinite(y)
        # both edges over the same loads: the lowest drawn to the last one a draw answers at
        np.testing.assert_allclose(x[drawn], banded["tps"], rtol=1e-12)
        if column == "resp_ms_lo":
            np.testing.assert_allclose(y[drawn], banded[column], rtol=1e-12)
        else:  # unbounded above once a draw saturates: past the chart's top
            np.testing.assert_allclose(y[drawn][bounded.to_numpy()], banded[column][bounded], rtol=1e-12)
            assert (y[drawn][~bounded.to_numpy()] > top).all()
    knee3 = model.knee(k=K, n_ziip=3, bg_load_factor=3.0)
    band = forecasting.band_sentence(curve, "tps", "tps", knee3.load)
    assert band is not None
    assert any(c.value.startswith(f"**Response band (95 %):** {band}.") for c in at.caption), \
        [c.value[:60] for c in at.caption]


# --- zIIP planner ------------------------------------------------------------------------------


def test_planner_plans_an_smf_class_in_tps(app_env):
    at = _page("planner")
    at.selectbox(key="plan_workload").set_value(SMF_CLASS).run()
    assert not at.exception, at.exception
    model = _champion()
    tps = at.number_input(key=_k("plan_tps")).value
    assert tps == pytest.approx(model.train_ranges["tps_max"] * 1.2, abs=1e-3)
    assert at.number_input(key=_k("plan_bg_load")).value == 1.0
    assert not [n for n in at.number_input if n.key in (_k("plan_clients"), _k("plan_think"))]

    slo = at.number_input(key=_k("plan_slo")).value
    policy = policies.planner_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    plan = modeling.plan_ziip(model, tps=tps, n_gcp=2, slo_resp_ms=slo, policy=policy,
                              lpar={"bg_load_factor": 1.0})
    shown = (at.success or at.error)[0].value
    assert plan.reason in shown
    assert f"**Binding rule:** {plan.binding_sentence}." == _markdown(at, "**Binding rule:**")
    table = at.dataframe[0].value
    assert table["n_ziip"].tolist() == list(range(0, policy.max_n_ziip + 1))
    assert {"resp_ms", "ziip_busy_pct", "gcp_busy_pct", "ziip_eligible_on_gcp_share_pct"} <= set(table.columns)
    if plan.n_ziip is not None:
        assert re.search(rf"\b{plan.n_ziip} zIIP\(s\)", at.success[0].value)

    # an SLO under the unloaded response: a clear reason, no count
    at.number_input(key=_k("plan_slo")).set_value(1.0).run()
    assert not at.exception
    assert not at.success and "unloaded response" in at.error[0].value

    # the other classes' load is part of the plan
    at.number_input(key=_k("plan_slo")).set_value(slo).run()
    at.number_input(key=_k("plan_bg_load")).set_value(3.0).run()
    assert not at.exception
    busier = at.dataframe[0].value
    assert (busier["gcp_busy_pct"] >= table["gcp_busy_pct"] - 1e-9).all()
    assert (busier["gcp_busy_pct"] > table["gcp_busy_pct"]).any()


def test_planner_plans_an_smf_class_on_another_processor(app_env):
    """The planner on 3931-601 measured on 3931-701: the plan kneecap forecast gives for the same change."""
    at = _page("planner")
    at.selectbox(key="plan_workload").set_value(SMF_CLASS).run()
    at.toggle(key=_k("plan_processor")).set_value(True).run()
    at.selectbox(key=_k("plan_processor_from")).set_value("3931-701").run()
    at.selectbox(key=_k("plan_processor_to")).set_value("3931-601").run()
    assert not at.exception, at.exception
    model = _champion()
    tps, slo = at.number_input(key=_k("plan_tps")).value, at.number_input(key=_k("plan_slo")).value
    params = config.load_params(os.environ["KNEECAP_PARAMS"])
    machines = processors.read_catalogue(REPO / "data" / "reference" / "processor_capacity.yaml")
    row = forecasting.forecast_scenario(
        forecasting.WorkloadModels(SMF_CLASS, model),
        {"workload": SMF_CLASS, "name": "601", "tps": tps, "slo_resp_ms": slo, "bg_load_factor": 1.0,
         "processor": {"from": "3931-701", "to": "3931-601", "ratio_doubt_pct": 5}},
        policies.planner_policy(params), machines=machines)
    shown = (at.success or at.error)[0].value
    assert "on 3931-601 (from 3931-701: GCP capacity x0.664" in shown and row["recommendation"] in shown
    ends = _markdown(at, "**At the capacity ratio's ends:**")
    for end in ("low", "high"):
        n = row[f"recommended_n_ziip_at_ratio_{end}"]
        assert f"{end} {int(n)} zIIP(s) with {int(row[f'recommended_n_gcp_at_ratio_{end}'])} GCP(s)" in ends
    assert any("PCI Tables are NOT adequate" in c.value for c in at.caption)


def test_planner_plans_an_smf_class_at_its_forecast_peak(app_env):
    at = _page("planner")
    at.selectbox(key="plan_workload").set_value(SMF_CLASS).run()
    at.toggle(key=_k("plan_at_peak")).set_value(True).run()
    assert not at.exception, at.exception
    model = _champion()
    by = at.date_input(key=_k("plan_peak_by")).value
    history = forecasting.class_history(model)["interval_start_at"]
    # the test project's week: as far ahead as the history reaches back (6 days), not a year
    assert by == (history.max() + (history.max().normalize() - history.min().normalize())).date()
    assert history.max().normalize() - history.min().normalize() == pd.Timedelta(days=SMF_DAYS - 1)
    growth = policies.growth_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    # the load kneecap forecast plans at for tps: peak with the same date
    row = forecasting.forecast_scenario(
        forecasting.WorkloadModels(SMF_CLASS, model),
        {"workload": SMF_CLASS, "name": "peak", "tps": "peak", "peak_by": by.isoformat(), "slo_resp_ms": 50.0},
        policies.planner_policy(config.load_params(os.environ["KNEECAP_PARAMS"])), growth=growth)
    assert [i.value for i in at.info] == [f"Planned load: {row['load_from']}."]
    assert f"{row['tps']:g} tps" in (at.success or at.error)[0].value
    assert not [n for n in at.number_input if n.key == _k("plan_tps")]


# --- Workloads ---------------------------------------------------------------------------------


def test_planner_plans_an_smf_class_for_a_percentile_or_its_wlm_goal(app_env):
    at = _page("planner")
    at.selectbox(key="plan_workload").set_value(SMF_CLASS).run()
    model = _champion()
    kinds = at.radio(key=_k("plan_slo_kind"))
    assert list(kinds.options) == ["mean", "p90", "p95", "WLM goal"] and kinds.value == "mean"
    tps, slo = at.number_input(key=_k("plan_tps")).value, at.number_input(key=_k("plan_slo")).value
    policy = policies.planner_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    for kind, asked, words in (("p90", {"percentile": 90, "resp_ms": slo}, f"90 % within {slo:g} ms"),
                               ("WLM goal", "wlm_goal", "WLM goal average")):
        kinds.set_value(kind).run()
        assert not at.exception, at.exception
        _, cols = goal_answers.with_slo(model, {"slo": asked})
        plan = modeling.plan_ziip(model, tps=tps, n_gcp=2, slo_resp_ms=cols["slo_resp_ms"], policy=policy,
                                  lpar={"bg_load_factor": 1.0})
        shown = (at.success or at.error)[0].value
        assert f"SLO {words}" in shown and f"(a mean response <= {cols['slo_resp_ms']:.3g} ms)" in shown
        assert plan.reason in shown
        kinds = at.radio(key=_k("plan_slo_kind"))


def test_workloads_page_shows_where_a_class_came_from(app_env):
    at = _page("workloads")
    at.selectbox(key="wl_workload").set_value(SMF_CLASS).run()
    assert not at.exception, at.exception
    fct = warehouse.read_table(app_env["KNEECAP_MARTS"], "fct_measurements")
    rows = fct[fct["workload"] == SMF_CLASS]
    assert len(rows) == SMF_DAYS * 96

    origin = next(t.value for t in at.dataframe if "intervals" in t.value.columns)
    assert origin["system_id"].tolist() == ["SYSA"] and origin["intervals"].tolist() == [len(rows)]
    assert origin["source_id"].tolist() == ["smf"] and origin["interval_s"].tolist() == ["900"]
    assert pd.Timestamp(origin["first_interval_start"].iloc[0]) == pd.Timestamp(rows["interval_start_at"].min())
    assert pd.Timestamp(origin["last_interval_start"].iloc[0]) == pd.Timestamp(rows["interval_start_at"].max())
    assert _markdown(at, f"**{SMF_CLASS}:** ").startswith(f"**{SMF_CLASS}:** {len(rows)} measured point(s), "
                                                         "2 GCPs + 2 zIIPs; kind: open")
    line = _markdown(at, "**Where the data came from:**")
    assert f"{len(rows)} intervals from system SYSA" in line and "2025-03-03 00:00 to 2025-03-09 23:45" in line

    # the fit is drawn against interval time and tps; residuals per interval from each interval's own LPAR
    assert {"wl_fit_response", "wl_fit_tps_response", "wl_resid_chart_response"} <= \
        {c.key for c in at.get("plotly_chart")}
    resid = next(t.value for t in at.dataframe if "residual_pct" in t.value.columns)
    assert len(resid) == len(rows) and resid["interval_start_at"].is_monotonic_increasing
    assert resid["residual_pct"].abs().median() < 5  # the synthetic week is what the model can fit
    assert "wl_provenance_download" in {d.key for d in at.get("download_button")}


def test_workloads_page_has_no_provenance_for_tables_of_runs(app_env):
    at = _page("workloads")
    assert at.selectbox(key="wl_workload").value == "zosconnect_cics_diag"
    assert not any("intervals" in t.value.columns for t in at.dataframe)
