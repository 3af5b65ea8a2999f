"""The desk's MSU cost page for the test project's SMF classes, and ``kneecap forecast``'s msu_* columns:
both give the numbers kneecap.msu_answer computes from the published marts and the champion."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kneecap import config, msu_answer, policies, tracking, warehouse
from tests.app.conftest import SMF_CLASS, SMF_CLASS_2, SMF_CLASS_2_LPAR, SMF_CLASS_2_SYSTEM

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app" / "streamlit_app.py")


def _expected(workload: str, n_gcp: int, n_ziip: int) -> dict:
    tracking.configure()
    champion = tracking.load_champion(tracking.model_name(workload, "response"))
    marts = warehouse.read_snapshot(os.environ["KNEECAP_MARTS"]).tables
    params = config.load_params(os.environ["KNEECAP_PARAMS"])
    return msu_answer.class_msu_answer(workload, marts["fct_measurements"], marts["fct_msu_intervals"], champion,
                                       {"n_gcp": n_gcp, "n_ziip": n_ziip},
                                       growth_policy=policies.growth_policy(params))


def _metric(at: AppTest, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}: {[m.label for m in at.metric]}"
    return found[0]


def test_msu_page_prices_the_class_at_its_lpars_peak(app_env):
    at = AppTest.from_file(APP, default_timeout=240).run()
    at.switch_page("app_pages/msu.py").run()
    assert not at.exception, at.exception
    assert {SMF_CLASS, SMF_CLASS_2} <= set(at.selectbox(key="msu_workload").options)
    at.selectbox(key="msu_workload").set_value(SMF_CLASS_2).run()
    assert not at.exception, at.exception
    want = _expected(SMF_CLASS_2, SMF_CLASS_2_LPAR["n_gcp"], SMF_CLASS_2_LPAR["n_ziip"])
    assert want["msu_system_id"] == SMF_CLASS_2_SYSTEM
    assert _metric(at, "Peak R4HA (MSU/h)") == f"{want['msu_peak_r4ha']:.4g}"
    assert _metric(at, "Eligible work on GCPs at the peak (MSU/h)") == f"{want['msu_eligible_on_gcp_at_peak']:.3g}"
    assert _metric(at, "One more zIIP saves (MSU/h)") == f"{want['msu_saved_one_ziip']:.3g}"
    saved = [m.value for m in at.markdown if m.value.startswith("One more zIIP removes")]
    assert saved == [f"One more zIIP removes **{want['msu_saved_one_ziip']:.3g} MSU/h** "
                     f"({want['msu_saved_one_ziip_lo']:.3g} - {want['msu_saved_one_ziip_hi']:.3g}) from the peak R4HA."]
    assert want["msu_saved_one_ziip_lo"] <= want["msu_saved_one_ziip"] <= want["msu_saved_one_ziip_hi"]
    assert len(at.get("arrow_vega_lite_chart")) + len(at.get("vega_lite_chart")) >= 1
    # a zIIP more as the starting point: the saving is that of the next one
    at.number_input(key=f"msu_n_ziip@{SMF_CLASS_2}").set_value(SMF_CLASS_2_LPAR["n_ziip"] + 1).run()
    more = _expected(SMF_CLASS_2, SMF_CLASS_2_LPAR["n_gcp"], SMF_CLASS_2_LPAR["n_ziip"] + 1)
    assert _metric(at, "One more zIIP saves (MSU/h)") == f"{more['msu_saved_one_ziip']:.3g}"


def test_kneecap_forecast_gives_the_desks_msu_numbers(app_env, tmp_path):
    from kneecap import cli

    scenarios = tmp_path / "s.yaml"
    scenarios.write_text(f"scenarios:\n  - {{workload: {SMF_CLASS_2}, name: peak, n_gcp: {SMF_CLASS_2_LPAR['n_gcp']}, "
                         f"n_ziip: {SMF_CLASS_2_LPAR['n_ziip']}}}\n", encoding="utf-8")
    out = tmp_path / "f.csv"
    assert cli.main(["forecast", "--scenarios", str(scenarios), "--out", str(out), "--marts",
                     os.environ["KNEECAP_MARTS"], "--params", os.environ["KNEECAP_PARAMS"]]) == 0
    row = pd.read_csv(out).iloc[0]
    want = _expected(SMF_CLASS_2, SMF_CLASS_2_LPAR["n_gcp"], SMF_CLASS_2_LPAR["n_ziip"])
    for column in msu_answer.MSU_COLUMNS:
        if isinstance(want[column], float):
            assert row[column] == pytest.approx(want[column], rel=1e-12), column
        else:
            assert str(row[column]) == str(want[column]), column
