"""kneecap.goal_answers: an SLO as a percentile or the WLM goal, turned into the mean it stands for, and
the forecast's percentile / PI lines (the fitted class on simulated SMF: tests/smf/test_goal_forecast.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from kneecap import forecast_text, goal_answers
from kneecap.modeling import ModelError
from kneecap.modeling.percentiles import ResponseShape

SHAPE = ResponseShape(1.0, 0.8, 0.2, 0.6, {"goal_type": "percentile", "goal_resp_ms": 5.0, "goal_percentile": 90.0})


@dataclass
class _Class:
    response_shape: dict = field(default_factory=SHAPE.to_dict)


def test_a_percentile_slo_is_the_mean_at_which_its_percentile_is_the_target():
    scenario, cols = goal_answers.with_slo(_Class(), {"tps": 10.0, "slo": {"percentile": 95, "resp_ms": 6}})
    assert "slo" not in scenario and cols["slo"] == "95 % within 6 ms" and cols["slo_percentile"] == 95
    np.testing.assert_allclose(SHAPE.quantile(scenario["slo_resp_ms"], 0.95), 6.0, rtol=1e-9)
    goal, goal_cols = goal_answers.with_slo(_Class(), {"slo": "wlm_goal"})
    np.testing.assert_allclose(SHAPE.quantile(goal["slo_resp_ms"], 0.9), 5.0, rtol=1e-9)
    assert goal_cols["slo"] == "WLM goal 90 % within 5 ms (PI <= 1)"
    plain, plain_cols = goal_answers.with_slo(object(), {"slo": 4})
    assert plain == {"slo_resp_ms": 4.0} and plain_cols == {"slo": "mean 4 ms"}
    assert goal_answers.with_slo(object(), {"tps": 1.0}) == ({"tps": 1.0}, {})


@pytest.mark.parametrize(("slo", "results", "match"), [
    ({"percentile": 90, "resp_ms": 5}, object(), "needs the class's response time distribution"),
    ("wlm_goal", object(), "slo: wlm_goal needs a class fitted on SMF 72.3"),
    ({"percentile": 100, "resp_ms": 5}, _Class(), "0 < percentile < 100"),
    ({"percentile": "x", "resp_ms": 5}, _Class(), "must be numbers"),
    ({"percentile": 90}, _Class(), "slo must be a mean in ms"),
    ({"percentile": 90, "resp_ms": 0.5}, _Class(), "below the response no transaction goes under"),
    (-1, _Class(), "positive mean response"),
])
def test_a_bad_slo_is_refused_with_its_reason(slo, results, match):
    with pytest.raises(ModelError, match=match):
        goal_answers.with_slo(results, {"slo": slo})


def _period(period, goal, intercept=0.0, slope=1.0, share=0.5):
    kind, resp, pct = goal
    calibration = {"goal_type": kind, "goal_resp_ms": resp, "goal_percentile": pct, "period": period,
                   "class_mean_intercept_ms": intercept, "class_mean_slope": slope, "ended_share": share}
    return ResponseShape(1.0, 0.8, 0.2, 0.6, calibration).to_dict()


def test_a_wlm_goal_plan_needs_every_periods_goal_met():
    """The lowest class mean meeting both periods' goals; a period whose goal no load meets refuses the
    plan, whichever the order of the periods (a NaN target must not fall out of min())."""
    fast = _period(1, ("percentile", 5.0, 90.0))
    slow = _period(2, ("average", 4.0, float("nan")), slope=1.5)
    _, cols = goal_answers.with_slo(_Class({"periods": [fast, slow]}), {"slo": "wlm_goal"})
    np.testing.assert_allclose(cols["slo_resp_ms"], min(SHAPE.mean_for_quantile(5.0, 0.9), 4.0 / 1.5), rtol=1e-9)
    unmet = _period(2, ("percentile", 0.5, 90.0))
    for periods in ([fast, unmet], [unmet, fast]):
        with pytest.raises(ModelError, match="period 2: 90 % within 0.5 ms is below the response no transaction"):
            goal_answers.with_slo(_Class({"periods": periods}), {"slo": "wlm_goal"})


def test_the_forecast_prints_percentiles_the_pi_and_its_date():
    row = {"workload": "W", "scenario": "s", "tps": 2000.0, "pi": 1.1, "pi_lo": 1.0, "pi_hi": 1.3,
           "goal": "90 % within 5 ms", "pi_tps": 1905.0, "pi_tps_lo": 1772.0, "pi_tps_hi": 2011.0,
           "date_pi": "2026-03-09", "date_pi_earliest": "2026-03-08", "date_pi_p90": "2026-03-10",
           "slo": "WLM goal 90 % within 5 ms (PI <= 1)", "slo_resp_ms": 3.01}
    for p, v in ((50, 2.0), (90, 5.5), (95, 6.5)):
        row.update({f"resp_p{p}_ms": v, f"resp_p{p}_ms_lo": v * 0.9, f"resp_p{p}_ms_hi": v * 1.1})
    lines = forecast_text.goal_lines(row)
    assert lines == [
        "forecast: W / s: response percentiles at 2,000 tps: p50 2 ms (1.8-2.2), p90 5.5 ms (4.95-6.05), "
        "p95 6.5 ms (5.85-7.15)",
        "forecast: W / s: WLM goal 90 % within 5 ms: PI 1.10 (1.00-1.30) at 2,000 tps; PI passes 1 at 1905 tps "
        "[1772, 2011], PI 1 reached by 2026-03-10 with 90 % probability, earliest 2026-03-08, most likely 2026-03-09",
        "forecast: W / s: SLO WLM goal 90 % within 5 ms (PI <= 1): met while the mean response is <= 3.01 ms "
        "(the plan and the SLO's date use that mean)"]
    assert forecast_text.goal_lines({"workload": "W", "scenario": "s"}) == []
