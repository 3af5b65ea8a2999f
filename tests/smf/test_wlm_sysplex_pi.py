"""The sysplex Performance Index on SMF: 72.3 records of several systems of one sysplex -> kneecap's
reader -> the pipeline's SQL (fct_sysplex_performance_index), against counts summed by hand and
against kneecap.wlm.sysplex_performance_index on a simulated two-system sysplex."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from kneecap import warehouse, wlm
from kneecap.smf import type72
from tests.bundled import read_bundled
from tests.conftest import REPO
from tests.smf import simdays as sd
from tests.smf import synth

START = dt.datetime(2026, 3, 2, 10, 0)
INTERVAL_S = 900.0
GOAL_MS, GOAL_PCT, GOAL_VEL = 5, 90, 40
#: SYSA: 95 of 100 transactions within the goal (bucket 6, 100 %): local PI 1.0
FAST = (0, 0, 0, 0, 50, 45, 5, 0, 0, 0, 0, 0, 0, 0)
#: SYSB: a slow tail, 90 % reached only in bucket 12 (200 % of the goal): local PI 2.0
SLOW = (0, 0, 0, 0, 20, 20, 10, 10, 10, 10, 5, 5, 5, 5)


def _marts(records: list[bytes]) -> dict[str, pd.DataFrame]:
    w72, c70 = sd.decode_days(records)
    measurements, sources = read_bundled()
    return warehouse.build_marts(measurements, sources, {"smf72_workload": w72, "smf70_cpu": c70},
                                 sql_root=REPO / "pipelines" / "sql")


def _percentile(counts, *, scale: int = 1) -> synth.Period:
    counts = tuple(scale * c for c in counts)
    return synth.Period(ended=sum(counts), resp_ms=4.0, goal="percentile", goal_value=GOAL_MS,
                        goal_percentile=GOAL_PCT, rt_midpoint_ms=GOAL_MS, rt_buckets=counts,
                        total_using=100, total_delay=100)


def _average(ended: int, resp_ms: float) -> synth.Period:
    return synth.Period(ended=ended, resp_ms=resp_ms, goal="average", goal_value=GOAL_MS, total_using=100,
                        total_delay=100)


def _velocity(using: int, delay: int) -> synth.Period:
    return synth.Period(ended=10, resp_ms=100.0, goal="velocity", goal_value=GOAL_VEL, total_using=using,
                        total_delay=delay)


def _records(sid: str, at: dt.datetime, periods: dict[str, synth.Period], sysplex: str = "PLEX1") -> list[bytes]:
    return [synth.record_72_3(sid, sysplex, at, INTERVAL_S, name, "WKL", [p]) for name, p in periods.items()]


def _bound_of_first_bucket_reaching(counts, percentile: int) -> float:
    """Plain loop over the summed counts: the PI of the first bucket by which ``percentile`` % completed."""
    bounds = [b / 100 for b in synth.RT_MAP_PCT] + [wlm.OPEN_BUCKET_PI]
    total, done = sum(counts), 0
    for bound, n in zip(bounds, counts, strict=True):
        done += n
        if 100 * done >= percentile * total:
            return bound
    raise AssertionError("unreachable: the last bucket holds the rest")


def _row(marts: dict[str, pd.DataFrame], table: str, **where) -> pd.Series:
    frame = marts[table]
    for column, value in where.items():
        frame = frame[frame[column] == value]
    assert len(frame) == 1, frame
    return frame.iloc[0]


def test_two_systems_with_the_same_counts_have_their_local_pi():
    periods = {"PCTCL": _percentile(SLOW), "AVGCL": _average(1000, 6.0), "VELCL": _velocity(300, 700)}
    marts = _marts(_records("SYSA", START, periods) + _records("SYSB", START, periods))
    for name in periods:
        local = marts["fct_performance_index"].query("class_name == @name")
        plex = _row(marts, "fct_sysplex_performance_index", class_name=name)
        assert len(local) == 2 and local["performance_index"].nunique() == 1
        assert plex["performance_index"] == pytest.approx(local["performance_index"].iloc[0], rel=1e-12)
        assert plex["min_local_performance_index"] == plex["max_local_performance_index"]
        assert (plex["n_systems"], plex["n_systems_missing"]) == (2, 0)
        assert plex["ended"] == 2 * periods[name].ended and plex["is_goal_same_on_every_system"]
    # and the local PIs are what the counts say: 2.0 (bucket 12), 6 / 5 ms, 40 / 30 %
    assert _row(marts, "fct_sysplex_performance_index", class_name="PCTCL")["performance_index"] == 2.0
    assert _row(marts, "fct_sysplex_performance_index", class_name="AVGCL")["performance_index"] == pytest.approx(1.2)
    assert _row(marts, "fct_sysplex_performance_index", class_name="VELCL")["performance_index"] == pytest.approx(
        40 / 30)


@pytest.mark.parametrize("slow_scale", [1, 3, 9, 20])
def test_a_slow_tail_moves_the_sysplex_pi_as_the_summed_buckets_say(slow_scale):
    """SYSA (900 fast transactions) beside SYSB (a slow tail, 100 x ``slow_scale``): the sysplex PI
    is the bucket the summed counts reach, computed here by a loop; neither system's own."""
    fast = _percentile(FAST, scale=9)
    slow = _percentile(SLOW, scale=slow_scale)
    marts = _marts(_records("SYSA", START, {"PCTCL": fast}) + _records("SYSB", START, {"PCTCL": slow}))
    summed = [a + b for a, b in zip(fast.rt_buckets, slow.rt_buckets, strict=True)]
    expected = _bound_of_first_bucket_reaching(summed, GOAL_PCT)
    local = marts["fct_performance_index"].set_index("system_id")["performance_index"]
    assert (local["SYSA"], local["SYSB"]) == (1.0, 2.0)
    plex = _row(marts, "fct_sysplex_performance_index", class_name="PCTCL")
    assert plex["performance_index"] == pytest.approx(expected, rel=1e-12)
    assert plex["resp_at_goal_percentile_ms"] == pytest.approx(expected * GOAL_MS, rel=1e-12)
    assert plex["ended"] == sum(summed)
    # the more slow transactions, the later the summed distribution reaches 90 %: from 1.1 to SYSB's 2.0
    assert expected == {1: 1.1, 3: 1.2, 9: 1.4, 20: 2.0}[slow_scale]


def test_average_and_velocity_goals_sum_response_time_and_samples():
    marts = _marts(_records("SYSA", START, {"AVGCL": _average(900, 4.0), "VELCL": _velocity(300, 100)})
                   + _records("SYSB", START, {"AVGCL": _average(100, 20.0), "VELCL": _velocity(50, 450)}))
    # every transaction weighs the same: (900 x 4 + 100 x 20) / 1000 = 5.6 ms against 5 ms
    average = _row(marts, "fct_sysplex_performance_index", class_name="AVGCL")
    assert average["resp_ms"] == pytest.approx((900 * 4.0 + 100 * 20.0) / 1000, rel=1e-9)
    assert average["performance_index"] == pytest.approx((900 * 4.0 + 100 * 20.0) / 1000 / GOAL_MS, rel=1e-9)
    # the samples are summed: 350 using of 900, not the mean of 75 % and 10 %
    velocity = _row(marts, "fct_sysplex_performance_index", class_name="VELCL")
    assert velocity["velocity_pct"] == pytest.approx(100 * 350 / 900, rel=1e-12)
    assert velocity["performance_index"] == pytest.approx(GOAL_VEL / (100 * 350 / 900), rel=1e-12)
    assert (velocity["min_local_performance_index"], velocity["max_local_performance_index"]) == pytest.approx(
        (GOAL_VEL / 75, GOAL_VEL / 10))


def test_intervals_are_matched_on_their_start_and_missing_systems_counted():
    quarter = dt.timedelta(minutes=15)
    period = {"PCTCL": _percentile(FAST)}
    records = [*_records("SYSA", START, period), *_records("SYSA", START + quarter, period),
               *_records("SYSB", START, period),  # SYSB's 10:15 interval never arrived
               # SYSC's RMF interval is not synchronised: it starts 30 s later than the others'
               *_records("SYSC", START + dt.timedelta(seconds=30), period),
               # another sysplex with a class of the same name at the same start stays apart
               *_records("SYSD", START, period, sysplex="PLEX2")]
    plex = _marts(records)["fct_sysplex_performance_index"]
    got = plex.set_index(["sysplex", "interval_start_at"])[["n_systems", "n_systems_missing"]]
    at = pd.Timestamp
    assert got.to_dict("index") == {
        ("PLEX1", at(START)): {"n_systems": 2, "n_systems_missing": 1},
        ("PLEX1", at(START + dt.timedelta(seconds=30))): {"n_systems": 1, "n_systems_missing": 2},
        ("PLEX1", at(START + quarter)): {"n_systems": 1, "n_systems_missing": 2},
        ("PLEX2", at(START)): {"n_systems": 1, "n_systems_missing": 0},
    }
    # with one system counted the sysplex PI is that system's own
    assert (plex["performance_index"] == 1.0).all()


def test_systems_with_different_goals_have_no_sysplex_pi():
    other = replace(_percentile(FAST), goal_value=2 * GOAL_MS, rt_midpoint_ms=2 * GOAL_MS)
    marts = _marts(_records("SYSA", START, {"PCTCL": _percentile(FAST)}) + _records("SYSB", START, {"PCTCL": other}))
    plex = _row(marts, "fct_sysplex_performance_index", class_name="PCTCL")
    assert not plex["is_goal_same_on_every_system"] and np.isnan(plex["performance_index"])
    assert marts["fct_performance_index"]["performance_index"].notna().all()  # each system still has its own


@pytest.fixture(scope="module")
def two_system_days():
    """Two days of the dispatcher simulation's class on SYSA (daily peak 1800 tps, near its goal:
    90 % within 5 ms holds at 1500 tps and not at 2150, tests/smf/test_wlm_pi.py) and on SYSB at
    1.25 times the load (a slower tail), both in PLEX1 with the percentile goal and its 72.3 buckets."""
    quantiles = sd.load_resp_quantiles()
    sysa, _ = sd.simulated_days(days=2, seed=11, resp_quantiles=quantiles, day1_peak_tps=1800.0)
    sysb, _ = sd.simulated_days(days=2, seed=12, resp_quantiles=quantiles,
                                config=replace(sd.CONFIG, system_id="SYSB"), day1_peak_tps=1.25 * 1800.0)
    w72, _ = sd.decode_days(sysa + sysb)
    return w72, _marts(sysa + sysb)


def test_the_mart_and_kneecap_wlm_give_the_same_sysplex_pi(two_system_days):
    w72, marts = two_system_days
    plex = marts["fct_sysplex_performance_index"].set_index(["class_name", "interval_start_at"])
    rows = w72[~w72["is_report_class"]]
    assert len(plex) == rows.groupby(["class_name", "interval_start_at"]).ngroups == 2 * 192
    expected = []
    for (name, at), g in rows.groupby(["class_name", "interval_start_at"], sort=True):
        first = g.iloc[0]
        expected.append(((name, at), wlm.sysplex_performance_index(
            first["goal_type"], counts=g[list(type72.RT_COUNT_COLUMNS)].fillna(0).to_numpy(),
            max_pct=g[list(type72.RT_BOUND_COLUMNS)].to_numpy()[0], goal_percentile=first["goal_percentile"],
            ended=g["ended"].to_numpy(), resp_ms=g["resp_ms"].to_numpy(), goal_resp_ms=first["goal_resp_ms"],
            using_samples=g["total_using_samples"].to_numpy(), delay_samples=g["total_delay_samples"].to_numpy(),
            goal_velocity_pct=first["goal_velocity_pct"])))
    keys = [k for k, _ in expected]
    np.testing.assert_allclose(plex.loc[keys, "performance_index"].to_numpy(float), [v for _, v in expected],
                               rtol=1e-12)
    assert (plex["n_systems"] == 2).all() and (plex["n_systems_missing"] == 0).all()


def test_the_slower_system_pulls_the_sysplex_pi_up_only_as_far_as_its_share(two_system_days):
    _, marts = two_system_days
    plex = marts["fct_sysplex_performance_index"].query("class_name == @sd.CONFIG.class_name")
    local = marts["fct_performance_index"].query("class_name == @sd.CONFIG.class_name")
    by_system = local.pivot(index="interval_start_at", columns="system_id", values="performance_index")
    pi = plex.set_index("interval_start_at")["performance_index"].loc[by_system.index]
    # a percentile of the summed distribution lies between the systems' own percentiles
    assert (pi >= by_system.min(axis=1) - 1e-12).all() and (pi <= by_system.max(axis=1) + 1e-12).all()
    # and the slower system (1.25 x the load) misses more often than the sysplex as a whole
    assert (by_system["SYSB"] > 1).sum() > (pi > 1).sum() > 0
