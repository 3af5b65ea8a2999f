"""Every forecast row says how far it lies beyond what its model was fitted on."""

from __future__ import annotations

import pandas as pd
import pytest

from kneecap import forecast_text, forecasting
from tests.test_factors import POLICY, SCENARIO, seed004_models  # noqa: F401 - a fixture


def test_inside_the_trained_range_is_said_so(seed004_models):  # noqa: F811
    lo, hi = seed004_models.response.train_ranges["clients"]
    row = forecasting.forecast_scenario(seed004_models, {**SCENARIO, "clients": 300}, POLICY)
    assert row["extrapolation_x"] == pytest.approx(300 / hi)
    assert row["extrapolation"] == f"inside the trained range ({lo:g}-{hi:g} clients)"


def test_beyond_the_trained_range_gives_the_ratio_and_the_unmeasured_configuration(seed004_models):  # noqa: F811
    hi = seed004_models.response.train_ranges["clients"][1]
    row = forecasting.forecast_scenario(seed004_models, {**SCENARIO, "clients": 2500, "n_ziip": 4}, POLICY)
    assert row["extrapolation_x"] == pytest.approx(2500 / hi)
    assert row["extrapolation"].startswith(f"{2500 / hi:.3g}x the largest trained load ({hi:g} clients)")
    assert row["extrapolation"].endswith("2 GCP + 4 zIIP at think time 200 ms never measured")


def test_below_the_range_and_a_class_rate():
    below = forecasting.extrapolation((100.0, 400.0), 50.0, "tps")
    assert below == {"extrapolation_x": 0.125, "extrapolation": "below the trained range (100-400 tps)"}
    assert forecasting.extrapolation((100.0, 400.0), 1000.0, "tps")["extrapolation"] == \
        "2.5x the largest trained load (400 tps)"


def test_the_forecast_command_names_the_scenarios_it_extrapolates(seed004_models):  # noqa: F811
    table = forecasting.forecast_scenarios(
        [{**SCENARIO, "name": "inside", "clients": 300}, {**SCENARIO, "name": "near", "clients": 600},
         {**SCENARIO, "name": "far", "clients": 2500}], lambda w: seed004_models, POLICY)
    lines = forecast_text.extrapolation_lines(table)
    # 1.2x an information line; 5x, beyond 1.3x, is a warning (tests/test_forecast_warnings.py)
    assert len(lines) == 1 and "zosconnect_cics_diag / near: extrapolating, 1.2x the largest" in lines[0]
    assert "zosconnect_cics_diag / far: warning: beyond 1.3x the trained load: 5x the largest" in \
        forecast_text.warning_lines(table)[0]
    assert forecast_text.extrapolation_lines(pd.DataFrame({"error": [None]})) == []


def test_closed_load_without_think_time_where_the_ziips_fall_behind_carries_a_caveat(seed004_models):  # noqa: F811
    # docs/benchmarks.md, "Closed populations and a long ZIIPAWMT": GCP help latches on there and the
    # simulated response falls with load; the model, which may not, is told to say so
    at_200 = forecasting.forecast_scenario(seed004_models, {**SCENARIO, "clients": 500, "n_ziip": 1}, POLICY)
    assert "model_caveat" not in at_200  # 200 ms of think time: the grid's closed points, within 10 %
    no_think = {**SCENARIO, "name": "no_think", "clients": 500, "n_ziip": 1, "think_time_ms": 0.0}
    row = forecasting.forecast_scenario(seed004_models, no_think, POLICY)
    model = seed004_models.response
    assert model.dispatch(2, 1).ziips_fall_behind(row["tps"], model.cpu_ms_per_tran, model.ziip_eligible_fraction)
    assert row["model_caveat"].startswith("closed load with less think time than response")
    # five clients on eight zIIPs: about 5,000 tps, 4.5 zIIPs of eligible work, nothing to latch
    keeping_up = forecasting.forecast_scenario(seed004_models, {**no_think, "n_ziip": 8, "clients": 5}, POLICY)
    assert keeping_up["tps"] * model.cpu_ms_per_tran * model.ziip_eligible_fraction / 1000.0 < 8
    assert "model_caveat" not in keeping_up
    table = forecasting.forecast_scenarios([no_think], lambda w: seed004_models, POLICY)
    lines = forecast_text.caveat_lines(table)
    assert len(lines) == 1 and lines[0].startswith("forecast: zosconnect_cics_diag / no_think: caution, closed load")


def test_the_caveat_needs_both_the_ziips_behind_and_clients_that_barely_think():
    from kneecap.modeling.dispatch import Dispatch

    one_ziip = Dispatch(2, 1)
    # 0.95 x 0.8 ms x 1,500 tps = 1.14 zIIPs of eligible work on one
    assert forecasting.latched_help_caveat(one_ziip, 0.8, 0.95, 1500.0, 0.0, 5.0) is not None
    assert forecasting.latched_help_caveat(one_ziip, 0.8, 0.95, 1500.0, 200.0, 5.0) is None
    assert forecasting.latched_help_caveat(one_ziip, 0.8, 0.95, 1000.0, 0.0, 5.0) is None
    # with IIPHONORPRIORITY=NO the GCPs never help: nothing to latch
    assert forecasting.latched_help_caveat(Dispatch(2, 1, honor_priority=False), 0.8, 0.95, 1500.0, 0.0, 5.0) is None
