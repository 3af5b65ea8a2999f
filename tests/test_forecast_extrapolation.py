"""Every forecast row says how far it lies beyond what its model was fitted on."""

from __future__ import annotations

import pandas as pd
import pytest

from kneecap import cli, forecasting
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
        [{**SCENARIO, "name": "inside", "clients": 300}, {**SCENARIO, "name": "far", "clients": 2500}],
        lambda w: seed004_models, POLICY)
    lines = cli._extrapolation_lines(table)
    assert len(lines) == 1 and "zosconnect_cics_diag / far: extrapolating, 5x the largest" in lines[0]
    assert cli._extrapolation_lines(pd.DataFrame({"error": [None]})) == []
