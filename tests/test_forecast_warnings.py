"""Warnings a planner reads beside a forecast: a training point outside the model's own band, a load
beyond 1.3x the trained one, and whatever a results object says itself (issue #33 item 5)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from kneecap import _answer_checks as answer_checks
from kneecap import forecast_text, forecasting
from kneecap.modeling import ClosedMVAModel, ClosedMVAResults, results_from_dict
from kneecap.modeling.open import OpenMMcModel
from tests.modeling.test_open import _flat_then_sharp
from tests.test_factors import POLICY, SCENARIO, seed004_models  # noqa: F401 - a fixture

# a hand-made load test of one configuration (3 GCPs + 1 zIIP, Z = 100 ms, 6 loads) whose fifth
# point jumps above the curve the others draw: one shape of queue cannot pass through it
BUMP = pd.DataFrame({"clients": [50, 100, 150, 200, 250, 300], "resp_ms": [2.0, 2.4, 3.2, 4.5, 9.0, 8.0],
                     "n_gcp": 3, "n_ziip": 1, "think_time_ms": 100.0})
BUMP["tps"] = BUMP["clients"] / ((BUMP["resp_ms"] + BUMP["think_time_ms"]) / 1000.0)  # Little's law


@pytest.fixture(scope="module")
def bumped() -> ClosedMVAResults:
    return ClosedMVAModel(n_boot=50, seed=1).fit(BUMP)


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", text)]


def test_a_training_point_outside_the_band_is_counted_and_the_worst_named(bumped):
    check = forecasting.band_check(bumped)
    # the model's own prediction at each training row, the check's answer recomputed here
    pred = bumped.predict(BUMP.drop(columns=["resp_ms", "tps"]))
    outside = (BUMP["resp_ms"] < pred["resp_ms_lo"]) | (BUMP["resp_ms"] > pred["resp_ms_hi"])
    assert check["n_points"] == 6 and check["n_outside"] == int(outside.sum()) >= 1
    worst = check["worst"]
    assert worst["clients"] == 250 and worst["resp_ms"] == 9.0
    at = pred.iloc[4]
    np.testing.assert_allclose([worst["fitted_ms"], worst["band_lo_ms"], worst["band_hi_ms"]],
                               [at["resp_ms"], at["resp_ms_lo"], at["resp_ms_hi"]], rtol=1e-12)
    assert worst["resp_ms"] > worst["band_hi_ms"]
    (warning,) = forecasting.answer_warnings(bumped, {})
    assert warning.startswith("training point 250 clients (3 GCP + 1 zIIP, think 100 ms) measured 9 ms lies "
                              "outside the model's own 95 % band")
    shown = _numbers(warning)
    for value in (worst["band_lo_ms"], worst["band_hi_ms"], worst["fitted_ms"]):
        assert any(abs(x - value) <= 5e-3 * value for x in shown), (value, warning)
    assert f"{check['n_outside']} of 6 training points" in warning


def test_the_band_check_is_computed_once_per_model(bumped, monkeypatch):
    calls = []
    check = answer_checks.cached_band_check
    monkeypatch.setattr(answer_checks, "cached_band_check", lambda results: calls.append(results) or check(results))
    fresh = ClosedMVAResults.from_dict(bumped.to_dict())
    table = forecasting.forecast_scenarios([{"workload": "own", "name": n, "clients": c}
                                            for n, c in (("a", 100), ("b", 200), ("c", 250))],
                                           lambda w: forecasting.WorkloadModels(w, fresh, None), POLICY)
    assert table["error"].isna().all() and table["warnings"].notna().all()
    assert calls == [fresh]


def test_a_model_whose_points_lie_in_its_band_and_an_old_fit_say_nothing(seed004_models):  # noqa: F811
    res = seed004_models.response
    check = forecasting.band_check(res)
    assert check is not None and check["n_points"] == 5 and check["n_outside"] == 0
    assert forecasting.answer_warnings(res, {}) == []
    # the training points travel with the stored fit; a fit stored before them has no check
    again = results_from_dict(res.to_dict())
    assert again.train_points == res.train_points
    old = {k: v for k, v in res.to_dict().items() if k != "train_points"}
    assert forecasting.band_check(results_from_dict(old)) is None


def test_an_open_mmc_model_is_checked_against_its_intervals():
    res = OpenMMcModel(n_boot=40, seed=1).fit(_flat_then_sharp(noise=0.005))
    check = forecasting.band_check(res)
    assert check["n_points"] == 24
    pred = res.predict(pd.DataFrame({"tps": res.train_points["tps"]}))
    measured = np.array(res.train_points["resp_ms"])
    outside = (measured < pred["resp_ms_lo"]) | (measured > pred["resp_ms_hi"])
    assert check["n_outside"] == int(outside.sum())


def test_a_load_beyond_1_3x_the_trained_one_is_a_warning(seed004_models):  # noqa: F811
    hi = seed004_models.response.train_ranges["clients"][1]
    near = forecasting.forecast_scenario(seed004_models, {**SCENARIO, "clients": 1.2 * hi}, POLICY)
    far = forecasting.forecast_scenario(seed004_models, {**SCENARIO, "clients": 2500, "n_ziip": 4}, POLICY)
    assert near["warnings"] is None
    assert far["extrapolation_x"] > forecasting.EXTRAPOLATION_WARN_X
    # the row's own extrapolation words, with the separator inside them turned into a comma
    assert far["warnings"] == f"beyond 1.3x the trained load: {far['extrapolation'].replace('; ', ', ')}"
    assert far["warnings"].startswith(f"beyond 1.3x the trained load: {2500 / hi:.3g}x the largest trained load")


def test_a_results_object_adds_its_own_warnings_through_the_hook(seed004_models):  # noqa: F811
    class Disagreeing(ClosedMVAResults):
        def warnings(self, row):
            return [f"two structures disagree by 40 % at {row['clients']:g} clients; more than the band"]

    res = Disagreeing.from_dict(seed004_models.response.to_dict())
    models = forecasting.WorkloadModels("zosconnect_cics_diag", res, None)
    hi = res.train_ranges["clients"][1]
    row = forecasting.forecast_scenario(models, {**SCENARIO, "clients": 2 * hi}, POLICY)
    warnings = row["warnings"].split(forecasting.WARNINGS_SEPARATOR)
    assert warnings[0].startswith("beyond 1.3x the trained load")
    assert warnings[1] == f"two structures disagree by 40 % at {2 * hi:g} clients, more than the band"


def test_the_forecast_command_prints_each_warning_under_its_answer(seed004_models, bumped):  # noqa: F811
    hi = seed004_models.response.train_ranges["clients"][1]
    table = forecasting.forecast_scenarios(
        [{**SCENARIO, "name": "inside", "clients": 300}, {**SCENARIO, "name": "near", "clients": 1.2 * hi},
         {**SCENARIO, "name": "far", "clients": 2500}, {"workload": "own", "name": "bump", "clients": 250}],
        lambda w: seed004_models if w == "zosconnect_cics_diag" else forecasting.WorkloadModels(w, bumped, None),
        POLICY)
    # up to 1.3x the trained load an information line; beyond it a warning
    assert [line.split(": ")[1] for line in forecast_text.extrapolation_lines(table)] == ["zosconnect_cics_diag / near"]
    lines = forecast_text.warning_lines(table)
    assert len(lines) == 2
    assert lines[0].startswith("forecast: zosconnect_cics_diag / far: warning: beyond 1.3x the trained load: 5x")
    assert lines[1].startswith("forecast: own / bump: warning: training point 250 clients")
    assert pd.isna(table.set_index("scenario").loc["inside", "warnings"])


def test_help_rules_whose_knees_are_apart_are_said_once_in_the_warnings():
    # the rules' knees as the SMF classes' forecast rows carry them (knee_tps_<rule>_help)
    apart = forecasting.answer_warnings(None, {"knee_tps_pool_help": 2416.0, "knee_tps_burst_help": 2309.0})
    assert len(apart) == 1 and "2,309 tps (burst help), 2,416 tps (pool help)" in apart[0]
    assert f"{100 * (2416 / 2309 - 1):.1f} % apart" in apart[0]
    # within the model's own error of each other: nothing to say
    assert forecasting.answer_warnings(None, {"knee_tps_pool_help": 2416.0, "knee_tps_burst_help": 2400.0}) == []
    assert forecasting.answer_warnings(None, {"knee_tps_pool_help": 2416.0}) == []


def test_the_help_rules_and_the_closed_structures_share_one_apart_rule():
    # one predicate (knees_apart, more than STRUCTURE_DISAGREEMENT apart) behind both warnings,
    # each in its own words: tps for an SMF class's help rules, clients for a table's structures
    low = 1000.0
    edge, past = low * (1 + forecasting.STRUCTURE_DISAGREEMENT), low * (1 + forecasting.STRUCTURE_DISAGREEMENT) + 1
    assert not forecasting.knees_apart(low, edge) and forecasting.knees_apart(low, past)
    assert not forecasting.knees_apart(low, float("inf")) and not forecasting.knees_apart(float("nan"), past)
    for high, said in ((edge, 0), (past, 1)):
        rules = forecasting.answer_warnings(None, {"knee_tps_pool_help": high, "knee_tps_burst_help": low})
        structures = forecasting.answer_warnings(None, {"knee_clients_structure_lo": low,
                                                        "knee_clients_structure_hi": high,
                                                        "knee_clients_by_structure": "pool help, 4 bursts 1,000"})
        assert (len(rules), len(structures)) == (said, said)
    assert "tps (burst help)" in rules[0] and "clients (pool help, 4 bursts 1,000)" in structures[0]


def test_a_throughput_curve_is_checked_against_its_own_points():
    # a zero-think curve of 12 loads drawn by the USL (sigma 0.03, kappa 1e-4, 100 tps at one
    # client) with the load of 24 clients measured 25 % low: no USL passes through it, and the check
    # names it in tps
    from kneecap.modeling.combine import CombinedModel
    from kneecap.modeling.usl import USLModel, usl_tps

    clients = np.array([1, 2, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48])
    tps = usl_tps(clients, 0.03, 1e-4, 100.0)
    tps[8] *= 0.75
    table = pd.DataFrame({"clients": clients, "tps": tps, "think_time_ms": 0.0})
    res = USLModel(seed=1).fit(table)
    check = forecasting.band_check(res)
    pred = res.predict(table[["clients", "think_time_ms"]])
    outside = (table["tps"] < pred["tps_lo"]) | (table["tps"] > pred["tps_hi"])
    assert check["n_points"] == 12 and check["n_outside"] == int(outside.sum()) >= 1
    assert check["worst"]["clients"] == 24 and check["worst"]["tps"] < check["worst"]["band_lo_tps"]
    (warning,) = forecasting.answer_warnings(res, {})
    assert warning.startswith(f"training point 24 clients measured {tps[8]:.4g} tps lies outside")
    # the points travel with the stored fit, and a combination is checked through its heaviest member
    assert results_from_dict(res.to_dict()).train_points == res.train_points
    combined = CombinedModel(members={"usl": lambda: USLModel(seed=1),
                                      "amdahl": lambda: USLModel(seed=1, coherency=False)}).fit(table)
    heaviest = combined.members[max(combined.weights, key=combined.weights.get)]
    assert forecasting.band_check(combined)["n_outside"] == forecasting.band_check(heaviest)["n_outside"] >= 1
