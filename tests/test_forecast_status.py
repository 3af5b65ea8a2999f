"""Every forecast row has a status: answered, saturated (past what its configuration carries) or
failed; a saturated row says where saturation lies instead of answering ``inf`` (issue #33 item 4)."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from kneecap import forecast_text, forecasting
from kneecap.modeling import PlannerPolicy
from kneecap.modeling.open import OpenMMcModel
from kneecap.modeling.open_dispatch import OpenDispatchModel
from tests.modeling.test_open import _flat_then_sharp
from tests.modeling.test_open_dispatch import intervals
from tests.test_factors import POLICY, SCENARIO, seed004_models  # noqa: F401 - a fixture


@pytest.fixture(scope="module")
def smf_class() -> forecasting.WorkloadModels:
    return forecasting.WorkloadModels("ZCON", OpenDispatchModel(n_boot=20, seed=3).fit(intervals()), None)


def _capacity(message: str) -> float:
    return float(re.search(r"past saturation \(([\d,.]+) tps\)", message).group(1).replace(",", ""))


def test_a_class_past_saturation_is_saturated_with_the_saturation_load(smf_class):
    res = smf_class.response
    top = res.max_tps(n_gcp=2, n_ziip=2)
    table = forecasting.forecast_scenarios(
        [{"workload": "ZCON", "name": "inside", "tps": 0.5 * top},
         {"workload": "ZCON", "name": "past", "tps": 1.2 * top, "slo_resp_ms": 10.0}],
        lambda w: smf_class, PlannerPolicy(max_n_ziip=6)).set_index("scenario")
    assert table.loc["inside", "status"] == "answered" and math.isfinite(table.loc["inside", "resp_ms"])
    past = table.loc["past"]
    assert past["status"] == "saturated" and pd.isna(past["error"])
    assert pd.isna(past["resp_ms"]) and pd.isna(past["resp_ms_hi"])  # no number, not inf
    assert past["status_message"].startswith(f"{1.2 * top:,.0f} tps is past saturation (")
    assert past["status_message"].endswith(" on 2 GCP + 2 zIIP")
    # the saturation load named is the model's own, as the row's max_tps and the model give it
    assert _capacity(past["status_message"]) == pytest.approx(top, abs=0.5)
    assert past["max_tps"] == pytest.approx(top, rel=1e-9)
    # the plan still answers: more engines carry the load
    assert past["recommended_n_ziip"] > 2 or past["recommended_n_gcp"] > 2
    assert forecast_text.saturated_lines(table.reset_index()) == [
        f"forecast: ZCON / past: saturated: {past['status_message']}"]


def test_a_closed_workload_asked_past_its_capacity_is_saturated_and_by_clients_never(seed004_models):  # noqa: F811
    res = seed004_models.response
    top = float(res.predict(pd.DataFrame([{"clients": forecasting.MAX_CLIENTS, "n_gcp": 2, "n_ziip": 2,
                                            "think_time_ms": 200.0}]), max_draws=0)["tps"].iloc[0])
    rate = {k: v for k, v in SCENARIO.items() if k != "clients"}
    over = forecasting.forecast_scenario(seed004_models, {**rate, "tps": 2 * top}, POLICY)
    assert over["status"] == "saturated" and "resp_ms" not in over and "clients_for_tps" not in over
    assert over["status_message"] == forecasting.saturation_message(2 * top, top, 2, 2)
    assert _capacity(over["status_message"]) == pytest.approx(top, abs=0.5)
    assert over["knee_clients"] > 0  # the configuration's other answers are still given
    # a closed population never saturates: ten times the knee is answered, with a finite response
    many = forecasting.forecast_scenario(seed004_models, {**SCENARIO, "clients": 5000, "slo_resp_ms": None}, POLICY)
    assert many["status"] == "answered" and math.isfinite(many["resp_ms"])


def test_an_open_mmc_workload_past_its_capacity_is_saturated():
    res = OpenMMcModel(n_boot=20, seed=1).fit(_flat_then_sharp(noise=0.005))
    models = forecasting.WorkloadModels("pool", response=res)
    past = forecasting.forecast_scenario(models, {"workload": "pool", "tps": 1.5 * res.max_tps}, POLICY)
    assert past["status"] == "saturated" and past["saturated"] is True and math.isnan(past["resp_ms"])
    assert past["status_message"] == forecasting.saturation_message(1.5 * res.max_tps, res.max_tps)


def test_a_failed_scenario_is_failed():
    def missing(workload):
        raise LookupError("no champion")

    table = forecasting.forecast_scenarios([{"workload": "nowhere", "name": "typo", "clients": 10}], missing, POLICY)
    assert table["status"].tolist() == ["failed"]
    assert table["status_message"].iloc[0] == table["error"].iloc[0] == "nowhere: no champion"
