"""Desk state belongs to the workload (issue #34 item 1): on every page with inputs, switching the
workload starts the inputs from the new workload's measured configuration, and the answer says in
its first words which configuration it is for, the inputs' own.

Two closed workloads measured on different machines (tests/app/conftest.py): seed 004's Table 1
(2 GCPs + 2 zIIPs, think time 200 ms) and an own table (3 GCPs + 1 zIIP, think time 100 ms), and
two SMF classes on different LPARs: ZCONHI (2 GCPs + 2 zIIPs) and ZCONSIM (4 GCPs + 3 zIIPs).
Expected answers are computed with kneecap's library on the same champions.
"""

from __future__ import annotations

import os

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kneecap import config, factors, forecasting, modeling, policies, tracking
from tests.app.conftest import (
    OWN_CONFIG,
    OWN_RESP_MS,
    OWN_WORKLOAD,
    SMF_CLASS,
    SMF_CLASS_2,
    SMF_CLASS_2_LPAR,
    widget_key,
)
from tests.app.test_pages import DIAG, REPO, _app

K = 3.0  # params.yaml train.knee_k
LPAR_INPUTS = ("cls_n_gcp", "cls_n_ziip", "cls_bg_load")  # the SMF classes page's LPAR: GCPs, zIIPs, other load


def _page(page: str | None = None) -> AppTest:
    # the bound per script run these tests were written with (the page tests use 120 s)
    return _app(page, timeout=180)


def _champion(workload: str):
    tracking.configure()
    return tracking.load_champion(tracking.model_name(workload, "response"))


def _policy():
    return policies.planner_policy(config.load_params(os.environ["KNEECAP_PARAMS"]))


def _answer(at: AppTest, contains: str) -> str:
    found = [m.value for m in at.markdown if contains in m.value]
    assert len(found) == 1, [m.value[:80] for m in at.markdown]
    return found[0]


def _keys_of(at: AppTest, workload: str) -> set[str]:
    keys = {w.key for kind in ("slider", "number_input", "selectbox", "checkbox") for w in at.get(kind)}
    return {k for k in keys if k and k.endswith(f"@{workload}")}


def test_the_own_table_is_measured_on_another_machine(app_env):
    # the premise of the tests below: the two closed champions' measured configurations differ
    own = forecasting.default_configuration(_champion(OWN_WORKLOAD))
    diag = forecasting.default_configuration(_champion(DIAG))
    assert (own["n_gcp"], own["n_ziip"], own["think_time_ms"]) == (
        OWN_CONFIG["n_gcp"], OWN_CONFIG["n_ziip"], OWN_CONFIG["think_time_ms"])
    assert (diag["n_gcp"], diag["n_ziip"], diag["think_time_ms"]) == (2, 2, 200.0)


def test_knee_page_inputs_and_answer_follow_the_workload(app_env):
    at = _page()
    assert at.selectbox(key="knee_workload").value == DIAG
    at.slider(key=widget_key("knee_n_ziip", DIAG)).set_value(5).run()
    at.slider(key=widget_key("knee_think", DIAG)).set_value(1000).run()

    at.selectbox(key="knee_workload").set_value(OWN_WORKLOAD).run()
    assert not at.exception, at.exception
    own = _champion(OWN_WORKLOAD)
    base = forecasting.default_configuration(own)
    shown = tuple(at.slider(key=widget_key(k, OWN_WORKLOAD)).value for k in ("knee_n_gcp", "knee_n_ziip", "knee_think"))
    assert shown == (3, 1, 100)
    assert not _keys_of(at, DIAG)  # the previous workload's inputs are gone, not hidden
    knee = forecasting.knee(own, **base, k=K)
    assert _answer(at, "Response time breaks away") == \
        f"**3 GCPs + 1 zIIP, think time 100 ms:** {modeling.knee_sentence(knee)}"

    # one step on another input answers for the configuration shown, not a stale one
    at.slider(key=widget_key("knee_clients", OWN_WORKLOAD)).set_value(200).run()
    assert _answer(at, "Response time breaks away").startswith("**3 GCPs + 1 zIIP, think time 100 ms:** ")
    pred = own.predict(pd.DataFrame([{"clients": 200, **base}])).iloc[0]
    assert next(m.value for m in at.metric if m.label == "Response at 200 clients") == f"{pred['resp_ms']:.2f} ms"
    at.slider(key=widget_key("knee_n_ziip", OWN_WORKLOAD)).set_value(2).run()
    knee2 = forecasting.knee(own, n_gcp=3, n_ziip=2, think_time_ms=100.0, k=K)
    assert _answer(at, "Response time breaks away") == \
        f"**3 GCPs + 2 zIIPs, think time 100 ms:** {modeling.knee_sentence(knee2)}"

    # back to seed 004: its measured configuration again, not the 5 zIIPs and 1000 ms left there
    at.selectbox(key="knee_workload").set_value(DIAG).run()
    shown = tuple(at.slider(key=widget_key(k, DIAG)).value for k in ("knee_n_gcp", "knee_n_ziip", "knee_think"))
    assert shown == (2, 2, 200)
    assert _answer(at, "Response time breaks away").startswith("**2 GCPs + 2 zIIPs, think time 200 ms:** ")

    # and a WLM class: its LPAR, its answer in tps
    at.selectbox(key="knee_workload").set_value(SMF_CLASS).run()
    assert not at.exception, at.exception
    lpar = _champion(SMF_CLASS).base
    assert (at.slider(key=widget_key("knee_n_gcp", SMF_CLASS)).value,
            at.slider(key=widget_key("knee_n_ziip", SMF_CLASS)).value,
            at.slider(key=widget_key("knee_bg_load", SMF_CLASS)).value) == (lpar["n_gcp"], lpar["n_ziip"], 1.0)
    assert _answer(at, "Response time breaks away").startswith(
        f"**{lpar['n_gcp']} GCPs + {lpar['n_ziip']} zIIPs, other classes' load x1:** ")


def test_planner_inputs_and_answer_follow_the_workload(app_env):
    at = _page("planner")
    at.number_input(key=widget_key("plan_n_gcp", DIAG)).set_value(4).run()
    at.number_input(key=widget_key("plan_think", DIAG)).set_value(500.0).run()

    at.selectbox(key="plan_workload").set_value(OWN_WORKLOAD).run()
    assert not at.exception, at.exception
    own = _champion(OWN_WORKLOAD)
    clients = int(own.train_ranges["clients"][1])
    assert clients == max(OWN_RESP_MS)
    shown = tuple(at.number_input(key=widget_key(k, OWN_WORKLOAD)).value
                  for k in ("plan_clients", "plan_think", "plan_n_gcp", "plan_slo"))
    assert shown == (clients, 100.0, 3, 2.0)
    assert not _keys_of(at, DIAG)
    plan = modeling.plan_ziip(own, clients=clients, think_time_ms=100.0, n_gcp=3, slo_resp_ms=2.0, policy=_policy())
    assert at.success[0].value == f"**3 GCPs, think time 100 ms, {clients} clients, SLO 2 ms:** recommendation " \
                                  f"{plan.reason}."

    # changing only the SLO keeps the workload's GCPs, think time and load in the answer
    at.number_input(key=widget_key("plan_slo", OWN_WORKLOAD)).set_value(1.5).run()
    plan = modeling.plan_ziip(own, clients=clients, think_time_ms=100.0, n_gcp=3, slo_resp_ms=1.5, policy=_policy())
    shown = (at.success or at.error)[0].value
    assert shown.startswith(f"**3 GCPs, think time 100 ms, {clients} clients, SLO 1.5 ms:** ")
    assert plan.reason in shown

    at.selectbox(key="plan_workload").set_value(SMF_CLASS).run()
    assert not at.exception, at.exception
    tps = at.number_input(key=widget_key("plan_tps", SMF_CLASS)).value
    slo = at.number_input(key=widget_key("plan_slo", SMF_CLASS)).value
    assert at.number_input(key=widget_key("plan_n_gcp", SMF_CLASS)).value == _champion(SMF_CLASS).base["n_gcp"]
    assert (at.success or at.error)[0].value.startswith(
        f"**2 GCPs, other classes' load x1, {tps:g} tps, SLO {slo:g} ms:** ")


def test_factors_page_inputs_and_answer_follow_the_workload(app_env):
    at = _page("factors")
    at.number_input(key=widget_key("factor_n_gcp", DIAG)).set_value(5).run()
    at.selectbox(key="factor_workload").set_value(OWN_WORKLOAD).run()
    assert not at.exception, at.exception
    own = _champion(OWN_WORKLOAD)
    clients = int(own.train_ranges["clients"][1])
    shown = tuple(at.number_input(key=widget_key(k, OWN_WORKLOAD)).value
                  for k in ("factor_n_gcp", "factor_n_ziip", "factor_think", "factor_clients", "factor_slo"))
    assert shown == (3, 1, 100.0, clients, 2.0)
    assert not _keys_of(at, DIAG)
    factor_id = at.selectbox(key=widget_key("factor_id", OWN_WORKLOAD)).value
    share = at.number_input(key=widget_key(f"factor_share_{factor_id}", OWN_WORKLOAD)).value
    catalogue = factors.read_catalogue(REPO / "data" / "reference" / "factors.csv")
    row = forecasting.forecast_scenario(
        forecasting.WorkloadModels(OWN_WORKLOAD, own),
        {"workload": OWN_WORKLOAD, "clients": float(clients), "n_gcp": 3, "n_ziip": 1, "think_time_ms": 100.0,
         "slo_resp_ms": 2.0, "factors": [{"id": factor_id, "share": share}]}, _policy(), catalogue)
    assert _answer(at, "clients, SLO 2 ms:**") == (
        f"**3 GCPs + 1 zIIP, think time 100 ms, {clients} clients, SLO 2 ms:** knee at about "
        f"{row['knee_clients']:.0f} clients, {row['knee_clients_adjusted']:.0f} with {factor_id}; response "
        f"{row['resp_ms']:.2f} ms, {row['resp_ms_adjusted']:.2f} ms with it.")

    at.number_input(key=widget_key("factor_n_ziip", OWN_WORKLOAD)).set_value(2).run()
    assert _answer(at, "clients, SLO 2 ms:**").startswith(f"**3 GCPs + 2 zIIPs, think time 100 ms, {clients} clients")


def test_classes_page_inputs_and_answer_follow_the_class(app_env):
    at = _page("classes")
    assert at.selectbox(key="cls_workload").value == SMF_CLASS
    assert at.selectbox(key="cls_workload").options == [SMF_CLASS, SMF_CLASS_2]
    keys = {n.key for n in at.number_input}
    assert keys and all(k.endswith(f"@{SMF_CLASS}") for k in keys), keys
    model = _champion(SMF_CLASS)
    knee = model.knee(k=K)
    assert _answer(at, "knee at ").startswith(
        f"**2 GCPs + 2 zIIPs, other classes' load x1:** knee at {knee.load:.4g} tps ")
    at.number_input(key=widget_key("cls_n_ziip", SMF_CLASS)).set_value(3).run()
    at.number_input(key=widget_key("cls_bg_load", SMF_CLASS)).set_value(2.0).run()
    assert not at.exception, at.exception
    knee = model.knee(k=K, n_gcp=2, n_ziip=3, bg_load_factor=2.0)
    assert _answer(at, "knee at ").startswith(
        f"**2 GCPs + 3 zIIPs, other classes' load x2:** knee at {knee.load:.4g} tps ")

    # the second class, measured on another LPAR: its engines, the other classes as measured there,
    # not the 3 zIIPs and twice the load left on the first
    at.selectbox(key="cls_workload").set_value(SMF_CLASS_2).run()
    assert not at.exception, at.exception
    assert not _keys_of(at, SMF_CLASS)
    second = _champion(SMF_CLASS_2)
    assert {k: second.base[k] for k in SMF_CLASS_2_LPAR} == SMF_CLASS_2_LPAR
    shown = tuple(at.number_input(key=widget_key(k, SMF_CLASS_2)).value for k in LPAR_INPUTS)
    assert shown == (4, 3, 1.0)
    knee = second.knee(k=K)
    assert _answer(at, "knee at ").startswith(
        f"**4 GCPs + 3 zIIPs, other classes' load x1:** knee at {knee.load:.4g} tps ")
    slo = at.number_input(key=widget_key("cls_slo", SMF_CLASS_2)).value
    assert slo == pytest.approx(2 * knee.unloaded_resp_ms, abs=0.1)  # the class's own unloaded response
    slo_tps = forecasting.slo_tps(second, slo, lpar={"n_gcp": 4, "n_ziip": 3, "bg_load_factor": 1.0})
    assert _answer(at, "**SLO:**").startswith(f"**SLO:** {slo:g} ms holds up to {slo_tps:.4g} tps")

    # each input in turn: the answer is for the inputs shown
    at.number_input(key=widget_key("cls_n_gcp", SMF_CLASS_2)).set_value(5).run()
    at.number_input(key=widget_key("cls_bg_load", SMF_CLASS_2)).set_value(1.5).run()
    at.number_input(key=widget_key("cls_slo", SMF_CLASS_2)).set_value(3.0).run()
    assert not at.exception, at.exception
    knee = second.knee(k=K, n_gcp=5, n_ziip=3, bg_load_factor=1.5)
    assert _answer(at, "knee at ").startswith(
        f"**5 GCPs + 3 zIIPs, other classes' load x1.5:** knee at {knee.load:.4g} tps ")
    slo_tps = forecasting.slo_tps(second, 3.0, lpar={"n_gcp": 5, "n_ziip": 3, "bg_load_factor": 1.5})
    assert _answer(at, "**SLO:**").startswith(f"**SLO:** 3 ms holds up to {slo_tps:.4g} tps")

    # and back: the first class's own LPAR again
    at.selectbox(key="cls_workload").set_value(SMF_CLASS).run()
    shown = tuple(at.number_input(key=widget_key(k, SMF_CLASS)).value for k in LPAR_INPUTS)
    assert shown == (2, 2, 1.0)
    assert _answer(at, "knee at ").startswith("**2 GCPs + 2 zIIPs, other classes' load x1:** ")
