"""The Knee page and the zIIP planner on engines not all alike (issue #37 items 1-2).

A GCP's speed as a share of a zIIP's starts at the model's measured engines and, with the zIIPs'
MT mode and capacity factor (closed workloads), is answered through
:func:`kneecap.modeling.engines.on_engines`: the page shows what the library answers on those
engines. The closed champion is seed 004's (2 GCPs + 2 zIIPs, think time 200 ms), the class
ZCONHI's synthetic week (engines alike: NFFS 256).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kneecap import config, forecasting, modeling, policies, tracking
from kneecap.modeling.engines import chosen_engines, on_engines
from tests.app.conftest import DIAG, SMF_CLASS, widget_key

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app" / "streamlit_app.py")
K = 3.0  # params.yaml train.knee_k
SUBCAP = {"gcp_speed": 0.4, "ziip_speed": 1.0}  # GCPs at 40 % of a zIIP's speed on engines fitted alike


def _page(page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240).run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, at.exception
    return at


def _champion(workload: str):
    tracking.configure()
    return tracking.load_champion(tracking.model_name(workload, "response"))


def _markdown(at: AppTest, prefix: str) -> str:
    found = [m.value for m in at.markdown if m.value.startswith(prefix)]
    assert found, f"no markdown starting {prefix!r}: {[m.value[:60] for m in at.markdown]}"
    return found[0]


def test_the_engine_inputs_are_the_measured_engines_until_changed():
    # what the pages ask the library for: nothing where the inputs are the measured engines
    assert chosen_engines({}, 1.0) == {}
    assert chosen_engines({"gcp_speed": 1.0, "ziip_speed": 2.5}, 0.4) == {}
    assert chosen_engines({}, 0.4) == SUBCAP
    assert chosen_engines({"gcp_speed": 1.0, "ziip_speed": 2.5}, 1.0) == {"gcp_speed": 2.5, "ziip_speed": 2.5}
    assert chosen_engines({}, 1.0, ziip_mt=2, ziip_mt_capacity=1.3) == {
        "gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 2, "ziip_mt_capacity": 1.3}
    with pytest.raises(ValueError, match="MT capacity factor"):
        chosen_engines({}, 1.0, ziip_mt=2)


def test_knee_page_answers_a_closed_workload_on_slower_gcps_and_smt2_ziips(app_env):
    at = _page()
    model = _champion(DIAG)
    base = forecasting.default_configuration(model)
    share = at.number_input(key=widget_key("knee_gcp_share", DIAG))
    assert share.value == 1.0 and at.selectbox(key=widget_key("knee_ziip_mt", DIAG)).value == 1
    alike = modeling.knee_sentence(forecasting.knee(model, **base, k=K))
    assert f"think time {base['think_time_ms']:g} ms:** {alike}" in _markdown(at, "**2 GCPs + 2 zIIPs")

    share.set_value(0.4).run()
    assert not at.exception, at.exception
    slow = forecasting.knee(on_engines(model, **SUBCAP), **base, k=K)
    text = _markdown(at, "**2 GCPs + 2 zIIPs")
    assert text == (f"**2 GCPs + 2 zIIPs, think time {base['think_time_ms']:g} ms, GCPs at 40 % of a zIIP's "
                    f"speed:** {modeling.knee_sentence(slow)}")
    # on 2 GCPs alone the slower GCPs carry the eligible work at their speed: the knee comes in
    at.slider(key=widget_key("knee_n_ziip", DIAG)).set_value(0).run()
    on_gcps = forecasting.knee(on_engines(model, **SUBCAP), n_gcp=2, n_ziip=0,
                               think_time_ms=base["think_time_ms"], k=K)
    assert on_gcps.load < forecasting.knee(model, n_gcp=2, n_ziip=0, think_time_ms=base["think_time_ms"], k=K).load
    assert modeling.knee_sentence(on_gcps) in _markdown(at, "**2 GCPs + 0 zIIPs")

    # SMT-2 without its capacity factor stays MT-1 and says so; with it, the knee on the threads
    at.slider(key=widget_key("knee_n_ziip", DIAG)).set_value(1).run()
    at.number_input(key=widget_key("knee_gcp_share", DIAG)).set_value(1.0).run()
    at.selectbox(key=widget_key("knee_ziip_mt", DIAG)).set_value(2).run()
    assert not at.exception, at.exception
    assert any("MT capacity factor" in i.value for i in at.info)
    assert ", zIIPs in SMT-2" not in _markdown(at, "**2 GCPs + 1 zIIP")
    at.number_input(key=widget_key("knee_mt_capacity", DIAG)).set_value(1.3).run()
    assert not at.exception, at.exception
    smt = forecasting.knee(on_engines(model, ziip_mt=2, ziip_mt_capacity=1.3, gcp_speed=1.0, ziip_speed=1.0),
                           n_gcp=2, n_ziip=1, think_time_ms=base["think_time_ms"], k=K)
    assert _markdown(at, "**2 GCPs + 1 zIIP") == (
        f"**2 GCPs + 1 zIIP, think time {base['think_time_ms']:g} ms, zIIPs in SMT-2 (MT capacity factor 1.3):** "
        f"{modeling.knee_sentence(smt)}")


def test_knee_page_answers_a_class_on_slower_gcps_and_smt2_ziips(app_env):
    at = _page()
    at.selectbox(key="knee_workload").set_value(SMF_CLASS).run()
    model = _champion(SMF_CLASS)
    assert model.measured_engines == {}  # the synthetic week's engines are alike
    share = at.number_input(key=widget_key("knee_gcp_share", SMF_CLASS))
    assert share.value == 1.0
    at.selectbox(key=widget_key("knee_ziip_mt", SMF_CLASS)).set_value(2).run()
    at.number_input(key=widget_key("knee_mt_capacity", SMF_CLASS)).set_value(1.3).run()
    assert not at.exception, at.exception
    smt = on_engines(model, gcp_speed=1.0, ziip_speed=1.0, ziip_mt=2, ziip_mt_capacity=1.3).knee(k=K)
    text = _markdown(at, "**2 GCPs + 2 zIIPs")
    assert text.startswith("**2 GCPs + 2 zIIPs, other classes' load x1, zIIPs in SMT-2 (MT capacity factor 1.3):** ")
    assert f"at about {smt.load:.4g} tps" in text
    at.selectbox(key=widget_key("knee_ziip_mt", SMF_CLASS)).set_value(1).run()
    share = at.number_input(key=widget_key("knee_gcp_share", SMF_CLASS))
    share.set_value(0.4).run()
    assert not at.exception, at.exception
    knee = on_engines(model, **SUBCAP).knee(k=K)
    assert knee.load != pytest.approx(model.knee(k=K).load, rel=1e-3)
    text = _markdown(at, "**2 GCPs + 2 zIIPs")
    assert text.startswith("**2 GCPs + 2 zIIPs, other classes' load x1, GCPs at 40 % of a zIIP's speed:** ")
    assert f"at about {knee.load:.4g} tps" in text


def test_planner_answers_on_the_engines_and_compares_mt1_with_smt2(app_env):
    at = _page("planner")
    policy = policies.planner_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    model = _champion(DIAG)
    at.number_input(key=widget_key("plan_clients", DIAG)).set_value(400).run()
    at.number_input(key=widget_key("plan_slo", DIAG)).set_value(3.0).run()
    assert any("MT capacity factor" in c.value for c in at.caption)  # how to get the comparison
    at.number_input(key=widget_key("plan_mt_capacity", DIAG)).set_value(1.3).run()
    assert not at.exception, at.exception
    asked = {"clients": 400.0, "think_time_ms": 200.0, "n_gcp": 2, "slo_resp_ms": 3.0, "policy": policy}
    plans = modeling.ziip.plan_smt(model, mt_capacity=1.3, **asked)
    assert _markdown(at, "**MT-1 or SMT-2:**") == f"**MT-1 or SMT-2:** {modeling.ziip.smt_sentence(plans, 1.3)}."
    assert plans["mt1"].n_ziip is not None and plans["mt2"].n_ziip is not None
    assert plans["mt2"].n_ziip <= plans["mt1"].n_ziip  # a core in SMT-2 carries more than in MT-1

    # slower GCPs: the plan is the library's on those engines, and the answer names them
    at.number_input(key=widget_key("plan_gcp_share", DIAG)).set_value(0.4).run()
    assert not at.exception, at.exception
    plan = modeling.plan_ziip(on_engines(model, **SUBCAP), **asked)
    shown = (at.success or at.error)[0].value
    assert shown.startswith("**2 GCPs, think time 200 ms, GCPs at 40 % of a zIIP's speed, 400 clients, SLO 3 ms:**")
    assert plan.reason in shown
    if plan.n_ziip is not None:
        assert re.search(rf"\b{plan.n_ziip} zIIP\(s\)", shown)
    slow = modeling.ziip.plan_smt(on_engines(model, **SUBCAP), mt_capacity=1.3, **asked)
    assert _markdown(at, "**MT-1 or SMT-2:**") == f"**MT-1 or SMT-2:** {modeling.ziip.smt_sentence(slow, 1.3)}."


def test_planner_plans_a_class_on_slower_gcps(app_env):
    at = _page("planner")
    at.selectbox(key="plan_workload").set_value(SMF_CLASS).run()
    model = _champion(SMF_CLASS)
    policy = policies.planner_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    at.number_input(key=widget_key("plan_gcp_share", SMF_CLASS)).set_value(0.4).run()
    assert not at.exception, at.exception
    tps, slo = at.number_input(key=widget_key("plan_tps", SMF_CLASS)).value, at.number_input(
        key=widget_key("plan_slo", SMF_CLASS)).value
    plan = modeling.plan_ziip(on_engines(model, **SUBCAP), tps=tps, n_gcp=2, slo_resp_ms=slo, policy=policy,
                              lpar={"bg_load_factor": 1.0})
    shown = (at.success or at.error)[0].value
    assert "GCPs at 40 % of a zIIP's speed" in shown and plan.reason in shown
    table = at.dataframe[0].value  # shown to 3 significant digits (app/tables.py)
    assert table["resp_ms"].tolist() == pytest.approx(plan.table["resp_ms"].tolist(), rel=5e-3, nan_ok=True)


def test_planner_compares_mt1_with_smt2_for_a_class(app_env):
    at = _page("planner")
    at.selectbox(key="plan_workload").set_value(SMF_CLASS).run()
    model = _champion(SMF_CLASS)
    policy = policies.planner_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))
    at.number_input(key=widget_key("plan_mt_capacity", SMF_CLASS)).set_value(1.3).run()
    assert not at.exception, at.exception
    tps, slo = at.number_input(key=widget_key("plan_tps", SMF_CLASS)).value, at.number_input(
        key=widget_key("plan_slo", SMF_CLASS)).value
    plans = modeling.ziip.plan_smt(model, mt_capacity=1.3, tps=tps, n_gcp=2, slo_resp_ms=slo, policy=policy,
                                   lpar={"bg_load_factor": 1.0})
    assert _markdown(at, "**MT-1 or SMT-2:**") == f"**MT-1 or SMT-2:** {modeling.ziip.smt_sentence(plans, 1.3)}."
