"""kneecap.goal_curves and the goal charts (kneecap.report.figures): a WLM class's forecast PI and
percentiles against load, and the measured ones beside them.

The class: the simulated SMF week under a percentile goal (90 % within 5 ms, tests/smf/simdays.py),
written as binary SMF, decoded and built into the marts by the pipeline's SQL, fitted as the train
stage fits it. The curve is held to :func:`kneecap.goal_answers.goal_columns` (the forecast's own
columns at one load); the measured percentiles to the mart's own reading of the goal's percentile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap import config, goal_answers, goal_curves, training
from kneecap.modeling.percentiles import ResponseShape
from kneecap.report import figures
from tests.conftest import REPO
from tests.smf import simdays as sd

LPAR = {"n_gcp": 2, "n_ziip": 2, "bg_load_factor": 1.0}
#: load points of the curve, as goal_columns reads the PI crossing's band off its own
POINTS = 80


def _fitted_week(**days):
    """The simulated week's class fitted as the train stage fits it, and the week's marts."""
    records, _ = sd.simulated_days(**days)
    marts = sd.published_marts(records)
    fct = training.with_rt_buckets(marts["fct_measurements"], marts["fct_rt_buckets"], marts["fct_performance_index"])
    rows = fct[fct["workload"] == sd.CONFIG.class_name].reset_index(drop=True)
    params = config.load_params(Path(REPO) / "params.yaml")
    (trained,) = [m for m in training.train_workload(sd.CONFIG.class_name, rows, params)
                  if m.kind == training.RESPONSE]
    return trained.results, marts


@pytest.fixture(scope="module")
def week():
    results, marts = _fitted_week()
    curve = goal_curves.goal_curve(results, results.curve(points=POINTS, **LPAR))
    # the desk's: the same curve from the LPAR alone
    pd.testing.assert_frame_equal(goal_curves.goal_curve_on(results, LPAR, points=POINTS), curve)
    return results, marts, curve


def _goal_columns_at(results, tps: float) -> dict:
    """goal_answers.goal_columns at one load, the row as the forecast gives it (the model's prediction)."""
    point = results.predict(pd.DataFrame([{"tps": tps, **LPAR}])).iloc[0]
    row = {"tps": tps, **{c: float(point[c]) for c in ("resp_ms", "resp_ms_lo", "resp_ms_hi")}}
    return goal_answers.goal_columns(results, LPAR, row)


def _crossing(x: np.ndarray, y: np.ndarray, level: float) -> float:
    """First x at which y reaches level, linear between points (written apart from the library's)."""
    i = int(np.argmax(y >= level))
    assert y[i] >= level > y[0]
    return float(x[i - 1] + (level - y[i - 1]) * (x[i] - x[i - 1]) / (y[i] - y[i - 1]))


def test_the_goal_is_the_one_the_buckets_were_read_under(week):
    results, _, curve = week
    assert goal_curves.response_goal(results) == ("percentile", sd.GOAL_RESP_MS, sd.GOAL_PERCENTILE)
    average = ResponseShape(1.0, 0.8, 0.2, 0.6, {"goal_type": "average", "goal_resp_ms": 4.0})

    @dataclass
    class _Average:
        response_shape: dict = field(default_factory=average.to_dict)

    kind, resp, pct = goal_curves.response_goal(_Average())
    assert (kind, resp) == ("average", 4.0) and math.isnan(pct)
    # no distribution: no goal, no curve (a table of runs, the bundled seed 004)
    assert goal_curves.response_goal(object()) is None
    assert goal_curves.goal_curve(object(), curve).empty and goal_curves.goal_curve_on(object(), LPAR).empty
    # other classes that fill a pool the class needs: no load, no curve (the desk says why elsewhere)
    assert goal_curves.goal_curve_on(results, {**LPAR, "bg_load_factor": 50.0}).empty
    # a velocity goal: the percentiles, no PI
    velocity = ResponseShape(1.0, 0.8, 0.2, 0.6, {"goal_type": "velocity"})
    no_pi = goal_curves.goal_curve(type("_V", (), {"response_shape": velocity.to_dict()})(), curve)
    assert "resp_p90_ms" in no_pi and "pi" not in no_pi


def test_the_curve_rises_with_load_and_its_band_holds_it(week):
    _, _, curve = week
    assert len(curve) == POINTS
    finite = curve[np.isfinite(curve["pi"])]
    assert len(finite) > POINTS // 2
    for col in ("pi", "resp_p50_ms", "resp_p90_ms", "resp_p95_ms"):
        values = finite[col].to_numpy()
        assert (np.diff(values) > 0).all(), col
        assert (finite[f"{col}_lo"] <= finite[col]).all() and (finite[col] <= finite[f"{col}_hi"]).all(), col
    # the percentiles in order, at every load
    assert (finite["resp_p50_ms"] < finite["resp_p90_ms"]).all()
    assert (finite["resp_p90_ms"] < finite["resp_p95_ms"]).all()
    # a 90 % goal's PI is the forecast p90 over the goal
    np.testing.assert_allclose(finite["pi"], finite["resp_p90_ms"] / sd.GOAL_RESP_MS, rtol=1e-12)


@pytest.mark.parametrize("row", [5, 40, 60])
def test_at_a_load_the_curve_is_the_forecasts_columns(week, row):
    results, _, curve = week
    at = curve.iloc[row]
    said = _goal_columns_at(results, float(at["tps"]))
    for col in ("pi", "pi_lo", "pi_hi", *(f"resp_p{p}_ms{e}" for p in (50, 90, 95) for e in ("", "_lo", "_hi"))):
        np.testing.assert_allclose(at[col], said[col], rtol=1e-9, err_msg=col)


def test_the_curve_crosses_pi_1_where_the_forecast_says(week):
    results, _, curve = week
    said = _goal_columns_at(results, float(curve["tps"].iloc[0]))
    x = curve["tps"].to_numpy()
    step = float(x[1] - x[0])
    # the curve's crossing, linear between points, within one of its steps of the bisected load
    assert abs(_crossing(x, curve["pi"].to_numpy(), 1.0) - said["pi_tps"]) < step
    # the band's ends: where the upper / lower end of the PI's band crosses 1 (goal_columns reads them
    # off the mean's band on the same curve)
    np.testing.assert_allclose(_crossing(x, curve["pi_hi"].to_numpy(), 1.0), said["pi_tps_lo"], atol=step)
    np.testing.assert_allclose(_crossing(x, curve["pi_lo"].to_numpy(), 1.0), said["pi_tps_hi"], atol=step)


def test_the_measured_points_are_the_marts_pi_and_bucket_percentiles(week):
    results, marts, _ = week
    points = marts["fct_measurements"][marts["fct_measurements"]["workload"] == sd.CONFIG.class_name]
    pi = marts["fct_performance_index"]
    goals = goal_answers.period_goals(results)
    measured = goal_curves.measured_goal_points(points, pi, marts["fct_rt_buckets"], goals)
    mine = pi[(pi["class_name"] == sd.CONFIG.class_name) & pi["performance_index"].notna()]
    # every interval's PI found, matched to its own interval's load (the point_id written as the SQL writes it)
    assert measured["performance_index"].notna().sum() == len(mine) == len(points) > 0
    by_start = mine.set_index("interval_start_at")
    np.testing.assert_allclose(measured["performance_index"],
                               by_start.loc[measured["interval_start_at"], "performance_index"], rtol=0)
    tps = points.set_index("interval_start_at").loc[measured["interval_start_at"], "tps"]
    np.testing.assert_allclose(measured["tps"], tps, rtol=0)
    # the goal's own percentile from the buckets is the bound the mart reads the PI off (resp_at_goal_percentile_ms)
    bounded = by_start.loc[measured["interval_start_at"], "resp_at_goal_percentile_ms"].to_numpy(float)
    np.testing.assert_allclose(measured["resp_p90_ms"], bounded, rtol=1e-12)
    # and the percentiles are in order where their buckets are closed
    both = measured.dropna(subset=["resp_p50_ms", "resp_p95_ms"])
    assert len(both) > 0 and (both["resp_p50_ms"] <= both["resp_p90_ms"]).all()
    assert (both["resp_p90_ms"] <= both["resp_p95_ms"]).all()
    # another goal's PI is not this goal's: none set beside the forecast
    average = goal_answers.PeriodGoal(None, ResponseShape(1.0, 0.8, 0.2, 0.6), ("average", 5.0, math.nan))
    other = goal_curves.measured_goal_points(points, pi, marts["fct_rt_buckets"], [average])
    assert other["performance_index"].isna().all()
    # nothing published: nothing measured, and no error
    empty = goal_curves.measured_goal_points(points, pd.DataFrame(), pd.DataFrame(), goals)
    assert empty.empty and list(empty.columns) == list(measured.columns)


def test_the_goal_charts_name_their_traces(week):
    results, marts, curve = week
    points = marts["fct_measurements"][marts["fct_measurements"]["workload"] == sd.CONFIG.class_name]
    goal = goal_curves.response_goal(results)
    measured = goal_curves.measured_goal_points(points, marts["fct_performance_index"], marts["fct_rt_buckets"],
                                                goal_answers.period_goals(results))
    said = _goal_columns_at(results, float(curve["tps"].iloc[0]))
    fig = figures.pi_curve_figure(curve, measured, goal_words=said["goal"], crossing=said, configuration="2 GCP")
    names = [t.name for t in fig.data]
    assert {"PI forecast", "95% band", "PI = 1 (goal met exactly)", "measured PI (RMF intervals)",
            f"PI passes 1 at {said['pi_tps']:.4g} tps",
            f"PI 1 95% band {said['pi_tps_lo']:.4g}-{said['pi_tps_hi']:.4g} tps"} <= set(names)
    line = fig.data[names.index("PI = 1 (goal met exactly)")]
    assert list(line.y) == [1.0, 1.0]
    assert len(fig.data[names.index("measured PI (RMF intervals)")].x) == len(measured)
    # axes with units; the load axis reaches past the crossing's band
    assert fig.layout.xaxis.title.text == "class load (tps)"
    assert fig.layout.yaxis.title.text == "PI (actual / goal)"
    assert fig.layout.xaxis.range[1] > said["pi_tps_hi"]
    assert said["goal"] in fig.layout.title.text

    pct = figures.percentile_curve_figure(curve, measured, goal=goal, crossing=said)
    names = {t.name for t in pct.data}
    assert {"p50 forecast", "p90 forecast", "p95 forecast", "p90 95% band",
            "goal: 90 % within 5 ms", "p90 measured"} <= names
    assert pct.layout.yaxis.title.text == "response time (ms)"
    # past saturation the forecast has no value: no inf reaches the chart (plotly would drop the whole line)
    for trace in (*fig.data, *pct.data):
        assert not np.isinf(np.asarray(trace.y, dtype=float)).any(), trace.name


# --- a multi-period class: each period's PI --------------------------------------------------------

#: tests/smf/test_class_periods.py's week: 30 % of the transactions in period 2, an average goal of
#: 4 ms, responses 1.5 x the class's; period 1 keeps the percentile goal 90 % within 5 ms
SECOND_PERIOD = (0.3, 4, 1.5)


@pytest.fixture(scope="module")
def two_periods():
    return _fitted_week(second_period=SECOND_PERIOD)


def test_a_multi_period_class_draws_each_periods_pi(two_periods):
    results, marts = two_periods
    assert [g.period for g in goal_answers.period_goals(results)] == [1, 2]
    assert goal_curves.response_goal(results) is None  # a goal per period, no class percentile
    curve = goal_curves.goal_curve_on(results, LPAR, points=POINTS)
    assert {"pi_p1", "pi_lo_p1", "pi_hi_p1", "pi_p2", "pi", "pi_lo", "pi_hi"} <= set(curve.columns)
    assert "resp_p90_ms" not in curve
    # at a load of the curve, goal_columns' own per-period and binding PI
    at = curve.iloc[30]
    said = _goal_columns_at(results, float(at["tps"]))
    for col in ("pi_p1", "pi_lo_p1", "pi_hi_p1", "pi_p2", "pi_lo_p2", "pi_hi_p2", "pi", "pi_lo", "pi_hi"):
        np.testing.assert_allclose(at[col], said[col], rtol=1e-9, err_msg=col)
    # the binding period's crossing of 1 on the curve, within one step of the forecast's
    first = said["pi_period"]
    x = curve["tps"].to_numpy()
    assert abs(_crossing(x, curve[f"pi_p{first}"].to_numpy(), 1.0) - said["pi_tps"]) < x[1] - x[0]

    points = marts["fct_measurements"][marts["fct_measurements"]["workload"] == sd.CONFIG.class_name]
    measured = goal_curves.measured_goal_points(points, marts["fct_performance_index"], marts["fct_rt_buckets"],
                                                goal_answers.period_goals(results))
    pi = marts["fct_performance_index"]
    for period in (1, 2):
        mine = pi[(pi["class_name"] == sd.CONFIG.class_name) & (pi["period"] == period)
                  & pi["performance_index"].notna()]
        assert (measured["period"] == period).sum() == len(mine) > 0
        assert measured.loc[measured["period"] == period, "performance_index"].notna().all()
    # both periods of an interval at the class's load: their tps summed
    total = points.groupby("interval_start_at")["tps"].sum()
    np.testing.assert_allclose(measured["tps"], total.loc[measured["interval_start_at"]], rtol=1e-12)

    fig = figures.pi_curve_figure(curve, measured, goal_words=said["goal"], crossing=said)
    names = {t.name for t in fig.data}
    assert {"period 1 PI forecast", "period 2 PI forecast", "period 1 measured PI", "period 2 measured PI",
            "PI = 1 (goal met exactly)", f"PI passes 1 at {said['pi_tps']:.4g} tps (period {first})"} <= names
    assert "PI forecast" not in names
