"""kneecap.training.with_rt_buckets: the 72.3 buckets and goal beside each SMF class interval of
fct_measurements, as the train stage joins them (on simulated SMF: tests/smf/test_goal_forecast.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kneecap import training, wlm

T0 = pd.Timestamp("2026-03-02 13:00:00")


def _buckets(class_name: str, report: bool, midpoint_ms: float, counts: list[int]) -> pd.DataFrame:
    bounds = [*wlm.RT_BUCKET_MAX_PCT, np.nan]
    return pd.DataFrame({"system_id": "SYSA", "interval_start_at": T0, "class_name": class_name,
                         "is_report_class": report, "period": 1, "bucket": range(1, 15), "max_pct": bounds,
                         "max_ms": [b / 100 * midpoint_ms for b in bounds], "n_transactions": counts})


def test_each_service_class_interval_gets_its_own_buckets_midpoint_and_goal():
    fct = pd.DataFrame({"workload": ["VELO", "RESP", "RESP"], "resp_ms": [3.0, 2.0, 2.0],
                        "point_id": ["SYSA/2026-03-02T13:00:00/S:VELO/1", "SYSA/2026-03-02T13:00:00/S:RESP/1",
                                     "SYSA/2026-03-02T13:15:00/S:RESP/1"]})
    velocity = list(range(14))
    response = [10 * j for j in range(14)]
    rt = pd.concat([_buckets("VELO", False, 2.4, velocity), _buckets("RESP", False, 5.0, response),
                    _buckets("RESP", True, 5.0, [1] * 14)])  # a report class of the same name: not joined
    goals = pd.DataFrame({"system_id": "SYSA", "interval_start_at": T0, "class_name": ["VELO", "RESP"], "period": 1,
                          "goal_type": ["velocity", "percentile"], "goal_resp_ms": [np.nan, 5.0],
                          "goal_percentile": [np.nan, 90.0]})
    out = training.with_rt_buckets(fct, rt, goals)
    assert len(out) == 3 and list(out["workload"]) == ["VELO", "RESP", "RESP"]
    counts = [f"rt_bucket_{j:02d}_count" for j in range(1, 15)]
    np.testing.assert_array_equal(out.loc[0, counts].to_numpy(float), velocity)
    np.testing.assert_array_equal(out.loc[1, counts].to_numpy(float), response)
    assert out.loc[2, counts].isna().all()  # an interval with no buckets
    # the midpoint: R723RTDM for the velocity goal, the goal for the response time goal
    np.testing.assert_allclose(out["rt_midpoint_ms"].to_numpy()[:2], [2.4, 5.0], rtol=1e-12)
    assert out.loc[1, "goal_type"] == "percentile" and out.loc[1, "goal_percentile"] == 90
    np.testing.assert_allclose(out.loc[1, [f"rt_bucket_{j:02d}_max_pct" for j in range(1, 14)]].to_numpy(float),
                               wlm.RT_BUCKET_MAX_PCT)
    assert training.with_rt_buckets(fct, None, goals) is fct
    assert training.with_rt_buckets(fct, rt.iloc[0:0], goals) is fct
