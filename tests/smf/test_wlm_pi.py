"""The measured Performance Index on SMF: simulated transactions and simulated days -> SMF 72.3 bytes ->
kneecap's reader -> the pipeline's SQL (fct_performance_index), checked against independent counts."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from kneecap import warehouse, wlm
from kneecap.simulation.dispatcher import LparSimulation
from kneecap.smf import type72
from tests.bundled import read_bundled
from tests.conftest import REPO
from tests.smf import simdays as sd
from tests.smf import synth


def _marts(records: list[bytes]) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    w72, c70 = sd.decode_days(records)
    measurements, sources = read_bundled()
    tables = warehouse.build_marts(measurements, sources, {"smf72_workload": w72, "smf70_cpu": c70},
                                   sql_root=REPO / "pipelines" / "sql")
    return w72, tables


def _first_bucket_reaching(counts: np.ndarray, percentile: int) -> int:
    """Plain loop, no numpy cumsum: the 1-based bucket by which `percentile` % have completed."""
    total = int(sum(counts))
    done = 0
    for bucket, n in enumerate(counts, start=1):
        done += int(n)
        if 100 * done >= percentile * total:
            return bucket
    raise AssertionError("unreachable: the last bucket holds the rest")


@pytest.fixture(scope="module")
def days():
    records, truth = sd.simulated_days()
    w72, tables = _marts(records)
    pi = tables["fct_performance_index"]
    cls = pi[pi["class_name"] == sd.CONFIG.class_name].set_index("interval_start_at")
    per = truth.per_interval.set_index("interval_start_at").loc[cls.index]
    return truth, w72, tables, cls, per


def test_measured_pi_is_the_bound_of_the_bucket_counted_from_the_written_buckets(days):
    truth, _, _, cls, per = days
    count_cols = [f"rt_bucket_{j:02d}_count" for j in range(1, 15)]
    bucket = np.array([_first_bucket_reaching(row, sd.GOAL_PERCENTILE) for row in per[count_cols].to_numpy()])
    bound_pct = np.array(list(synth.RT_MAP_PCT) + [np.nan])[bucket - 1]
    expected = np.where(bucket == 14, 5.5, bound_pct / 100)
    assert len(cls) == len(truth.per_interval) == 960
    assert (cls["pi_bucket"].to_numpy() == bucket).all()
    np.testing.assert_allclose(cls["performance_index"].to_numpy(float), expected, rtol=1e-12)
    np.testing.assert_allclose(cls["resp_at_goal_percentile_ms"].to_numpy(float),
                               bound_pct / 100 * sd.GOAL_RESP_MS, rtol=1e-12)
    # the days span both sides of the goal: met at night, missed at the later peaks
    assert cls["performance_index"].min() <= 0.6 and cls["performance_index"].max() >= 1.4


def test_the_mart_and_kneecap_wlm_give_the_same_pi(days):
    _, w72, tables, cls, _ = days
    rows = w72[w72["class_name"] == sd.CONFIG.class_name].set_index("interval_start_at").loc[cls.index]
    pi = wlm.performance_index(
        rows["goal_type"].to_numpy(object), counts=rows[list(type72.RT_COUNT_COLUMNS)].to_numpy(),
        max_pct=rows[list(type72.RT_BOUND_COLUMNS)].to_numpy(), goal_percentile=rows["goal_percentile"].to_numpy(),
        resp_ms=rows["resp_ms"].to_numpy(), goal_resp_ms=rows["goal_resp_ms"].to_numpy(),
        using_samples=rows["total_using_samples"].to_numpy(), delay_samples=rows["total_delay_samples"].to_numpy(),
        goal_velocity_pct=rows["goal_velocity_pct"].to_numpy())
    np.testing.assert_allclose(cls["performance_index"].to_numpy(float), pi, rtol=1e-12)
    background = tables["fct_performance_index"].query("class_name == @sd.CONFIG.bg_class")
    assert len(background) == 960 and (background["performance_index"] == wlm.DISCRETIONARY_PI).all()


def test_the_measured_bucket_holds_the_true_90th_percentile(days):
    """The simulated distribution's own p90 lies in the mart's bucket, unless it sits so close to a
    bound that the multinomial draw of that interval's transactions may fall either side of it."""
    _, _, tables, cls, per = days
    buckets = tables["fct_rt_buckets"].query("class_name == @sd.CONFIG.class_name")
    reached = buckets.merge(cls[["pi_bucket"]].reset_index(), left_on=["interval_start_at", "bucket"],
                            right_on=["interval_start_at", "pi_bucket"]).set_index("interval_start_at").loc[cls.index]
    p90 = per["resp_p90_ms_true"].to_numpy()
    low, high = reached["min_ms"].to_numpy(float), reached["max_ms"].to_numpy(float)
    inside = (low < p90) & (p90 <= np.where(np.isnan(high), np.inf, high))
    # outside: the true share completed by the nearer bound is within 5 standard errors of 90 %
    q_ms = sd.resp_quantiles_at(sd.load_resp_quantiles(), per["tps_offered"].to_numpy(), per["resp_ms"].to_numpy())
    bound = np.where(p90 <= low, low, high)
    share = np.array([np.interp(b, q, sd.RESP_QUANTILE_PROBS) for b, q in zip(bound, q_ms, strict=True)])
    se = np.sqrt(0.9 * 0.1 / per["ended"].to_numpy())
    assert (inside | (np.abs(share - 0.9) <= 5 * se)).all()
    assert inside.mean() > 0.9, inside.mean()


def test_pi_from_individual_simulated_transactions():
    """Transactions of kneecap's dispatcher simulation, counted into buckets by the test writer: the
    mart's PI is the bound of the bucket holding the transactions' own 90th percentile."""
    goal_ms, per_interval = 5.0, 2000
    start = dt.datetime(2026, 3, 2, 10, 0)
    records, resp_by_interval = [], []
    for tps in (1500.0, 2150.0):
        sim = LparSimulation(sd.CONFIG.scenario(tps), transactions=4 * per_interval + 400, warmup=400,
                             seed=np.random.SeedSequence(7))
        sim.run()
        resp = np.asarray(sim.resp_ms[400:])
        for part in np.split(resp, 4):
            at = start + dt.timedelta(minutes=15 * len(records))
            period = synth.Period(ended=part.size, resp_ms=float(part.mean()), goal="percentile",
                                  goal_value=5, goal_percentile=90, rt_midpoint_ms=5,
                                  rt_buckets=synth.rt_bucket_counts(part, goal_ms))
            records.append(synth.record_72_3("SYSA", "PLEX1", at, 900.0, "ZCONSIM", "ZCONWKL", [period]))
            resp_by_interval.append(part)
    _, tables = _marts(records)
    pi = tables["fct_performance_index"].sort_values("interval_start_at").reset_index(drop=True)
    assert len(pi) == 8
    edges = np.concatenate([[0.0], np.array(synth.RT_MAP_PCT) / 100 * goal_ms, [np.inf]])
    for row, resp in zip(pi.itertuples(), resp_by_interval, strict=True):
        # the smallest response with at least 90 % of the interval's transactions at or below it
        r90 = np.sort(resp)[int(np.ceil(0.9 * resp.size)) - 1]
        assert edges[row.pi_bucket - 1] < r90 <= edges[row.pi_bucket]
        assert row.performance_index == pytest.approx(edges[row.pi_bucket] / goal_ms, rel=1e-12)
        np.testing.assert_allclose(row.resp_ms, resp.mean(), rtol=1e-12)
    # 1500 tps meets 90 % in 5 ms, 2150 tps does not (the grid's p95 there is 8.5 ms)
    assert (pi["performance_index"][:4] <= 1.0).all() and (pi["performance_index"][4:] > 1.0).all()
