"""The LPAR dispatcher simulation against queueing results it must reproduce exactly in the limit.

Every comparison is with an independent analytic value: M/M/c (Erlang C), M/G/1
(Pollaczek-Khinchine), exact MVA of a product-form closed network, and hand computation. A
simulated mean passes if the analytic value lies in its 95 % replication interval or within 5 %.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from kneecap.modeling.queueing import mmc_resp_ms, multiserver_mva
from kneecap.simulation import (
    METRICS,
    SimScenario,
    replicate,
    response_model_defaults,
    simulate,
    simulate_many,
    simulate_specs,
)


def _row(scenario: SimScenario, **kwargs) -> pd.Series:
    return simulate(scenario, **kwargs).iloc[0]


def _assert_matches(row: pd.Series, metric: str, truth: float, rel: float = 0.05) -> None:
    """Analytic value inside the replication interval, or within ``rel`` of the simulated mean."""
    value, lo, hi = row[metric], row[f"{metric}_lo"], row[f"{metric}_hi"]
    assert lo <= truth <= hi or abs(value - truth) <= rel * truth, (
        f"{metric}: simulated {value:.4f} [{lo:.4f}, {hi:.4f}], analytic {truth:.4f}")


def _scenario(**overrides) -> SimScenario:
    fields = {"n_gcp": 2, "n_ziip": 1, "cpu_ms_per_tran": 1.0, "ziip_eligible_fraction": 0.5,
              "clients": 20, "think_time_ms": 10.0}
    return SimScenario(**{**fields, **overrides})


# --- against analytic queueing results ------------------------------------------------------------


def test_open_single_burst_without_ziips_is_mmc():
    # f = 0 and one GCP burst: Poisson arrivals, exponential service, 2 FCFS servers = M/M/2
    scenario = _scenario(n_ziip=0, ziip_eligible_fraction=0.0, clients=None, think_time_ms=0.0,
                         tps=1500.0)
    row = _row(scenario)
    _assert_matches(row, "resp_ms", mmc_resp_ms(1500.0, 1.0, 2))
    _assert_matches(row, "tps", 1500.0, rel=0.02)


@pytest.mark.parametrize("speed_field,f,n_gcp,n_ziip", [("gcp_speed", 0.0, 2, 0), ("ziip_speed", 1.0, 1, 2)])
def test_open_single_burst_on_engines_of_another_speed_is_mmc_at_their_speed(speed_field, f, n_gcp, n_ziip):
    # D = 1 ms of work on engines doing 0.5 (GCPs) or 2 (zIIPs, IIPHONORPRIORITY=NO) per ms:
    # M/M/c with service D / speed
    speed = 0.5 if speed_field == "gcp_speed" else 2.0
    scenario = _scenario(n_gcp=n_gcp, n_ziip=n_ziip, ziip_eligible_fraction=f, clients=None, think_time_ms=0.0,
                         tps=600.0, honor_priority=False, **{speed_field: speed})
    row = _row(scenario)
    _assert_matches(row, "resp_ms", mmc_resp_ms(600.0, 1.0 / speed, 2))
    busy = "gcp_busy_pct" if speed_field == "gcp_speed" else "ziip_busy_pct"
    _assert_matches(row, busy, 100.0 * 0.6 / speed / 2, rel=0.02)


def test_open_gamma_bursts_on_one_gcp_follow_pollaczek_khinchine():
    # M/G/1: R = S + rho S (1 + cv^2) / (2 (1 - rho)) (Kleinrock 1975, §5.7)
    s_ms, cv, tps = 1.0, 0.5, 700.0
    rho = tps / 1000.0 * s_ms
    scenario = _scenario(n_gcp=1, n_ziip=0, ziip_eligible_fraction=0.0, clients=None,
                         think_time_ms=0.0, tps=tps, burst_dist="gamma", burst_cv=cv)
    _assert_matches(_row(scenario), "resp_ms", s_ms + rho * s_ms * (1 + cv**2) / (2 * (1 - rho)))


def test_background_gcp_work_shares_the_fcfs_queue():
    # one GCP, FCFS, two Poisson streams of exponential bursts: M/G/1 with a mixed service time,
    # W = (sum lambda_i E[S_i^2]) / (2 (1 - rho)), E[S^2] = 2 m^2 (Kleinrock 1975, §5.7)
    tps, d_ms, bg_pct, bg_ms = 300.0, 1.0, 30.0, 0.5
    lam_class, lam_bg = tps / 1000.0, bg_pct / 100.0 / bg_ms
    rho = lam_class * d_ms + bg_pct / 100.0
    wait = (lam_class * 2 * d_ms**2 + lam_bg * 2 * bg_ms**2) / (2 * (1 - rho))
    scenario = _scenario(n_gcp=1, n_ziip=0, ziip_eligible_fraction=0.0, clients=None,
                         think_time_ms=0.0, tps=tps, bg_gcp_busy_pct=bg_pct, bg_burst_ms=bg_ms)
    row = _row(scenario, transactions=10000)
    _assert_matches(row, "resp_ms", d_ms + wait)
    _assert_matches(row, "gcp_busy_pct", rho * 100.0, rel=0.02)


def test_closed_zero_think_on_one_gcp_is_exact():
    # N clients resubmitting at once keep one GCP busy; FCFS with equal bursts gives every
    # transaction N - 1 bursts ahead of it: R = N D and X = 1000 / D exactly (hand computation)
    clients, d_ms = 7, 0.5
    scenario = _scenario(n_gcp=1, n_ziip=0, cpu_ms_per_tran=d_ms, ziip_eligible_fraction=0.0,
                         clients=clients, think_time_ms=0.0, burst_dist="deterministic")
    row = _row(scenario, replications=2, transactions=2000)
    np.testing.assert_allclose(row[["resp_ms", "resp_p95_ms"]].astype(float), clients * d_ms,
                               rtol=1e-9)
    np.testing.assert_allclose(row["tps"], 1000.0 / d_ms, rtol=1e-9)
    np.testing.assert_allclose(row["gcp_busy_pct"], 100.0, rtol=1e-9)


def test_closed_with_think_time_matches_exact_mva():
    # one exponential FCFS station with 2 servers plus think and delay: product form, so exact
    # multi-server MVA (Reiser and Lavenberg 1980) is the truth
    scenario = _scenario(n_ziip=0, ziip_eligible_fraction=0.0, clients=30, delay_ms=2.0)
    mva = multiserver_mva((1.0,), (2,), delay_ms=2.0, think_time_ms=10.0, n_max=30)
    row = _row(scenario)
    _assert_matches(row, "resp_ms", mva.resp_ms[-1])
    _assert_matches(row, "tps", mva.tps[-1])


def test_closed_without_help_is_the_two_station_mva():
    # IIPHONORPRIORITY=NO: zIIP and GCP pools are separate FCFS exponential stations, which BCMP
    # admits whatever order a transaction visits them in; exact MVA over both is the truth
    scenario = _scenario(ziip_eligible_fraction=0.4, clients=30, delay_ms=2.0, honor_priority=False)
    mva = multiserver_mva((0.4, 0.6), (1, 2), delay_ms=2.0, think_time_ms=10.0, n_max=30)
    row = _row(scenario)
    _assert_matches(row, "resp_ms", mva.resp_ms[-1])
    _assert_matches(row, "ziip_busy_pct", mva.station_busy[-1, 0] * 100.0)


def test_help_without_wait_pools_every_engine_for_eligible_work():
    # ZIIPAWMT = 0 and only eligible work: a burst takes any free engine and a freed engine takes
    # the oldest waiting burst, i.e. M/M/(n_gcp + n_ziip)
    scenario = _scenario(n_gcp=1, ziip_eligible_fraction=1.0, clients=None, think_time_ms=0.0,
                         tps=1600.0, help_wait_ms=0.0)
    row = _row(scenario)
    _assert_matches(row, "resp_ms", mmc_resp_ms(1600.0, 1.0, 2))
    # a free zIIP is taken before a free GCP, but together they do all the work: U = X D
    np.testing.assert_allclose(row["gcp_busy_pct"] + row["ziip_busy_pct"], 160.0, rtol=0.02)
    assert row["ziip_busy_pct"] > row["gcp_busy_pct"]


@pytest.mark.parametrize("help_rule", ["pool", "burst"])
def test_help_wait_longer_than_the_run_changes_nothing(help_rule):
    # no eligible burst ever waits ZIIPAWMT, so the helpers must leave the run exactly as with NO
    hurried = _scenario(ziip_eligible_fraction=0.8, clients=40, help_rule=help_rule)
    never = _scenario(ziip_eligible_fraction=0.8, clients=40, help_wait_ms=1e12, help_rule=help_rule)
    honest = _scenario(ziip_eligible_fraction=0.8, clients=40, honor_priority=False)
    kw = {"replications": 2, "transactions": 5000}
    pd.testing.assert_frame_equal(simulate(never, **kw)[list(METRICS)],
                                  simulate(honest, **kw)[list(METRICS)])
    assert _row(hurried, **kw)["ziip_eligible_on_gcp_share_pct"] > 0


def test_pool_rule_helps_sooner_than_the_burst_rule():
    # a lone zIIP offered 1.2 engines of eligible work: once the pool needs help, bursts queued
    # behind the one that waited ZIIPAWMT go to idle GCPs without waiting out their own ZIIPAWMT,
    # so eligible work waits less and more of it runs on GCPs (same random streams)
    load = {"clients": None, "think_time_ms": 0.0, "tps": 1500.0, "ziip_eligible_fraction": 0.8,
            "eligible_bursts": 4}
    pool = _row(_scenario(**load, help_rule="pool"))
    burst = _row(_scenario(**load, help_rule="burst"))
    assert pool["resp_ms_hi"] < burst["resp_ms_lo"]
    assert pool["ziip_eligible_on_gcp_share_pct"] > burst["ziip_eligible_on_gcp_share_pct"]
    # and with ZIIPAWMT = 0 both rules are the same dispatcher: help as soon as no zIIP is free
    zero = {**load, "help_wait_ms": 0.0}
    kw = {"replications": 2, "transactions": 5000}
    pd.testing.assert_frame_equal(simulate(_scenario(**zero, help_rule="pool"), **kw)[list(METRICS)],
                                  simulate(_scenario(**zero, help_rule="burst"), **kw)[list(METRICS)])


# --- the RMF-style measurements -----------------------------------------------------------------


def test_cpu_follows_the_utilisation_law_and_adds_up():
    d_ms = 1.2
    row = _row(_scenario(cpu_ms_per_tran=d_ms, ziip_eligible_fraction=0.6, gcp_bursts=2,
                         eligible_bursts=3, delay_ms=1.0, bg_gcp_busy_pct=10.0), transactions=10000)
    # U = X D (Denning and Buzen 1978): APPL% = tps * D / 10 with D in ms
    np.testing.assert_allclose(row["cpu_total_pct"], row["tps"] * d_ms / 10.0, rtol=0.01)
    np.testing.assert_allclose(row["cpu_total_pct"], row["cpu_gcp_pct"] + row["cpu_ziip_pct"],
                               rtol=1e-9)
    np.testing.assert_allclose(row["ziip_eligible_pct"],
                               row["cpu_ziip_pct"] + row["ziip_eligible_on_gcp_pct"], rtol=1e-9)
    np.testing.assert_allclose(row["ziip_eligible_pct"] / row["cpu_total_pct"], 0.6, rtol=0.02)


def test_without_help_no_eligible_work_runs_on_a_gcp():
    row = _row(_scenario(ziip_eligible_fraction=0.9, clients=50, honor_priority=False,
                         bg_ziip_busy_pct=20.0), replications=2, transactions=5000)
    assert row["ziip_eligible_on_gcp_pct"] == 0.0
    assert row["ziip_eligible_on_gcp_share_pct"] == 0.0


def test_without_ziips_all_eligible_work_is_iipcp():
    row = _row(_scenario(n_ziip=0, ziip_eligible_fraction=0.3), replications=2, transactions=5000)
    assert row["ziip_eligible_on_gcp_share_pct"] == 100.0
    assert row["cpu_ziip_pct"] == 0.0
    assert np.isnan(row["ziip_busy_pct"])
    np.testing.assert_allclose(row["ziip_eligible_on_gcp_pct"], row["ziip_eligible_pct"],
                               rtol=1e-12)


def test_gcps_keep_a_saturated_ziip_stable_only_with_help():
    # 1.2 engines of eligible work on one zIIP: with help the GCPs take the excess, so at least
    # 0.2 / 1.2 of the eligible CPU runs on GCPs; without help the queue would grow for ever
    open_load = {"clients": None, "think_time_ms": 0.0, "tps": 1500.0,
                 "ziip_eligible_fraction": 0.8}
    row = _row(_scenario(**open_load))
    _assert_matches(row, "tps", 1500.0, rel=0.02)
    assert row["ziip_eligible_on_gcp_share_pct"] > 100.0 * (1 - 1 / 1.2)
    assert row["resp_ms"] < 10.0
    with pytest.raises(ValueError, match="zIIP pool"):
        simulate(_scenario(**open_load, honor_priority=False))


def test_open_load_beyond_the_gcps_is_refused():
    with pytest.raises(ValueError, match="GCP pool"):
        simulate(_scenario(n_ziip=0, clients=None, think_time_ms=0.0, tps=1900.0,
                           bg_gcp_busy_pct=10.0))


def test_same_seed_same_table_other_seed_other_draws():
    scenario = _scenario(bg_gcp_busy_pct=20.0, bg_ziip_busy_pct=10.0, burst_dist="gamma",
                         burst_cv=1.5)
    kw = {"replications": 2, "transactions": 3000}
    first = simulate(scenario, seed=7, **kw)
    pd.testing.assert_frame_equal(first, simulate(scenario, seed=7, **kw))
    assert simulate(scenario, seed=8, **kw)["resp_ms"].iloc[0] != first["resp_ms"].iloc[0]


def test_replications_run_in_batches_are_the_ones_simulate_runs():
    """Replication k draws stream k of the seed, so adding replications extends the experiment."""
    scenario = _scenario(bg_gcp_busy_pct=20.0)
    kw = {"transactions": 2000, "seed": 5}
    runs = replicate(scenario, range(2), **kw) + replicate(scenario, [2], **kw)
    table = simulate(scenario, replications=3, **kw).iloc[0]
    assert table["resp_ms"] == pytest.approx(np.mean([run["resp_ms"] for run in runs]), rel=1e-12)
    assert replicate(scenario, [2], **kw) == runs[2:]
    with pytest.raises(ValueError, match="replication numbers"):
        replicate(scenario, [-1], **kw)


# --- the WLM CPU states (what 72.3 using/delay samples estimate) -------------------------------

STATES = ("n_gcp_using", "n_ziip_using", "n_ziip_on_cp_using", "n_gcp_delay", "n_ziip_delay")


def _in_cpu(row: pd.Series) -> float:
    """Little's law on the CPU part of a transaction: tps x (response - delay_ms)."""
    return row["tps"] / 1000.0 * (row["resp_ms"] - row["delay_ms"])


def test_states_are_in_metrics_with_intervals():
    row = _row(_scenario(), replications=2, transactions=2000)
    for name in STATES:
        assert name in METRICS
        assert row[f"{name}_lo"] <= row[name] <= row[f"{name}_hi"], name


def test_using_states_follow_littles_law_and_every_cpu_moment_is_in_one_state():
    # N = X R: the class's CPU bursts in service are tps x CPU per transaction on each kind, and
    # a transaction past its delay_ms is running or queued, so the five states add up to
    # tps x (response - delay_ms) (Little 1961); help moves eligible work between IIP and IIPCP
    d_ms, f = 1.2, 0.6
    row = _row(_scenario(cpu_ms_per_tran=d_ms, ziip_eligible_fraction=f, gcp_bursts=2,
                         eligible_bursts=3, delay_ms=1.0, bg_gcp_busy_pct=10.0,
                         bg_ziip_busy_pct=10.0, help_wait_ms=0.5), transactions=10000)
    lam = row["tps"] / 1000.0
    np.testing.assert_allclose(row["n_ziip_using"] + row["n_ziip_on_cp_using"], lam * f * d_ms,
                               rtol=0.02)
    np.testing.assert_allclose(row["n_gcp_using"], lam * (1 - f) * d_ms, rtol=0.02)
    assert row["n_ziip_on_cp_using"] > 0 and row["n_gcp_delay"] > 0 and row["n_ziip_delay"] > 0
    np.testing.assert_allclose(sum(row[name] for name in STATES), _in_cpu(row), rtol=0.01)
    # the using states are the class's APPL% CP-native / IIP / IIPCP over 100, the same integrals
    np.testing.assert_allclose(row["n_ziip_using"], row["cpu_ziip_pct"] / 100.0, rtol=1e-9)
    np.testing.assert_allclose(row["n_ziip_on_cp_using"], row["ziip_eligible_on_gcp_pct"] / 100.0,
                               rtol=1e-9)
    np.testing.assert_allclose(row["n_gcp_using"] + row["n_ziip_on_cp_using"],
                               row["cpu_gcp_pct"] / 100.0, rtol=1e-9)


def test_ziip_delay_of_an_open_run_without_help_is_erlang_c():
    # all work eligible, one burst, no help: the zIIPs are an M/M/2 queue (Erlang C), so the
    # zIIP delay count is lambda Wq and the using count lambda D; nothing touches the GCPs
    tps = 1600.0
    scenario = _scenario(n_ziip=2, ziip_eligible_fraction=1.0, clients=None, think_time_ms=0.0,
                         tps=tps, honor_priority=False)
    row = _row(scenario)
    _assert_matches(row, "n_ziip_delay", tps / 1000.0 * (mmc_resp_ms(tps, 1.0, 2) - 1.0))
    _assert_matches(row, "n_ziip_using", tps / 1000.0 * 1.0, rel=0.02)
    assert row[["n_gcp_using", "n_ziip_on_cp_using", "n_gcp_delay"]].eq(0.0).all()


def test_ziip_delay_per_burst_is_the_queue_wait_per_burst():
    # open, all work eligible in 4 bursts, no help: every moment a transaction spends beyond its
    # delay_ms and CPU is zIIP queue wait, so n_ziip_delay / lambda / bursts is the mean wait of
    # a burst in the zIIP queue, (response - delay - D) / bursts (sample-path Little's law)
    tps, bursts = 1500.0, 4
    scenario = _scenario(n_ziip=2, ziip_eligible_fraction=1.0, clients=None, think_time_ms=0.0,
                         tps=tps, delay_ms=0.5, eligible_bursts=bursts, honor_priority=False,
                         bg_ziip_busy_pct=5.0)
    row = _row(scenario, transactions=10000)
    wait_per_burst = (row["resp_ms"] - 0.5 - 1.0) / bursts
    np.testing.assert_allclose(row["n_ziip_delay"] / (row["tps"] / 1000.0) / bursts,
                               wait_per_burst, rtol=0.02)
    assert wait_per_burst > 0.3  # a real queue, not a rounding error


def test_without_ziips_eligible_work_is_iipcp_and_waits_as_cpu_delay():
    # no zIIP online: eligible bursts are GCP work that RMF still reports as IIPCP, and their
    # waits are CPU delay (there is no zIIP to wait for)
    f, d_ms = 0.3, 1.0
    row = _row(_scenario(n_ziip=0, ziip_eligible_fraction=f, delay_ms=1.0), transactions=10000)
    assert row["n_ziip_using"] == 0.0 and row["n_ziip_delay"] == 0.0
    lam = row["tps"] / 1000.0
    np.testing.assert_allclose(row["n_ziip_on_cp_using"], lam * f * d_ms, rtol=0.02)
    np.testing.assert_allclose(row["n_gcp_using"], lam * (1 - f) * d_ms, rtol=0.02)
    np.testing.assert_allclose(row["n_gcp_delay"],
                               _in_cpu(row) - row["n_gcp_using"] - row["n_ziip_on_cp_using"],
                               rtol=0.01)


def test_without_help_no_eligible_work_is_using_a_gcp():
    row = _row(_scenario(ziip_eligible_fraction=0.9, clients=50, honor_priority=False),
               replications=2, transactions=5000)
    assert row["n_ziip_on_cp_using"] == 0.0
    assert row["n_ziip_delay"] > row["n_gcp_delay"] > 0


def test_closed_zero_think_on_one_gcp_has_one_using_and_the_rest_delayed():
    # hand computation: 7 clients always present, one running and 6 queued behind it
    scenario = _scenario(n_gcp=1, n_ziip=0, cpu_ms_per_tran=0.5, ziip_eligible_fraction=0.0,
                         clients=7, think_time_ms=0.0, burst_dist="deterministic")
    row = _row(scenario, replications=2, transactions=2000)
    np.testing.assert_allclose(row["n_gcp_using"], 1.0, rtol=1e-9)
    np.testing.assert_allclose(row["n_gcp_delay"], 6.0, rtol=1e-9)


def test_background_work_is_in_no_class_state():
    # the same class load with and without background: background adds waiting, not using
    kw = {"replications": 3, "transactions": 5000}
    load = {"clients": None, "think_time_ms": 0.0, "tps": 600.0, "help_wait_ms": 1e12}
    quiet = _row(_scenario(**load), **kw)
    busy = _row(_scenario(**load, bg_gcp_busy_pct=40.0, bg_ziip_busy_pct=40.0), **kw)
    for row in (quiet, busy):
        np.testing.assert_allclose(row["n_gcp_using"] + row["n_ziip_using"], 0.6, rtol=0.03)
    assert busy["n_gcp_delay"] > 1.5 * quiet["n_gcp_delay"]
    assert busy["n_ziip_delay"] > 1.5 * quiet["n_ziip_delay"]


# --- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("overrides", "message"), [
    ({"n_gcp": 0}, "n_gcp must be >= 1, got 0"),
    ({"n_ziip": -1}, "n_ziip must be >= 0"),
    ({"n_gcp": 2.5}, "n_gcp must be an integer"),
    ({"cpu_ms_per_tran": 0.0}, "cpu_ms_per_tran must be > 0"),
    ({"ziip_eligible_fraction": 1.5}, r"ziip_eligible_fraction must be in \[0, 1\]"),
    ({"tps": 100.0}, "exactly one of clients"),
    ({"clients": None, "think_time_ms": 0.0}, "exactly one of clients"),
    ({"clients": None, "tps": 100.0}, "think_time_ms applies only to closed load"),
    ({"think_time_ms": -1.0}, "think_time_ms must be >= 0"),
    ({"bg_gcp_busy_pct": 100.0}, r"bg_gcp_busy_pct must be in \[0, 100\)"),
    ({"n_ziip": 0, "bg_ziip_busy_pct": 5.0}, "bg_ziip_busy_pct must be 0 when n_ziip is 0"),
    ({"honor_priority": "yes"}, "honor_priority must be true or false"),
    ({"burst_dist": "uniform"}, "burst_dist must be one of"),
    ({"burst_dist": "gamma"}, "burst_cv is required"),
    ({"burst_cv": 0.5}, "burst_cv applies only to burst_dist='gamma'"),
    ({"eligible_bursts": 0}, "eligible_bursts must be >= 1"),
    ({"help_wait_ms": float("nan")}, "help_wait_ms must be a finite number"),
    ({"help_rule": "eager"}, "help_rule must be one of pool, burst"),
])
def test_bad_fields_are_named(overrides, message):
    with pytest.raises(ValueError, match=message):
        _scenario(**overrides)


def test_from_mapping_names_unknown_and_missing_keys():
    good = {"n_gcp": 2, "n_ziip": 1, "cpu_ms_per_tran": 1, "ziip_eligible_fraction": 0.5,
            "clients": 3}
    assert SimScenario.from_mapping(good) == _scenario(clients=3, think_time_ms=0.0)
    with pytest.raises(ValueError, match="unknown scenario field.*'think_tme_ms'"):
        SimScenario.from_mapping({**good, "think_tme_ms": 5})
    with pytest.raises(ValueError, match="missing scenario field.*'n_ziip'"):
        SimScenario.from_mapping({k: v for k, v in good.items() if k != "n_ziip"})


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"replications": 0}, "replications must be"),
    ({"warmup_fraction": 1.0}, "warmup_fraction must be in"),
    ({"transactions": 0}, "transactions must be"),
])
def test_bad_run_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate(_scenario(), **kwargs)


# --- tables of scenarios --------------------------------------------------------------------------


def test_simulate_many_names_rows_and_echoes_inputs():
    scenarios = {"closed": _scenario(),
                 "open": _scenario(clients=None, think_time_ms=0.0, tps=800.0)}
    table = simulate_many(scenarios, replications=2, transactions=2000)
    assert list(table["name"]) == ["closed", "open"]
    assert table.columns[0] == "name"
    assert table.loc[0, "clients"] == 20 and np.isnan(table.loc[0, "tps_offered"])
    assert table.loc[1, "tps_offered"] == 800.0 and np.isnan(table.loc[1, "clients"])


def test_specs_take_champion_defaults_and_keep_going_after_a_failure():
    # a fitted model's attributes may be numpy scalars
    champion = SimpleNamespace(cpu_ms_per_tran=np.float64(0.8), ziip_eligible_fraction=0.6,
                               delay_ms=1.5, honor_priority=np.bool_(True), help_wait_ms=3.2,
                               help_rule="pool", eligible_bursts=np.int64(4), gcp_bursts=1)

    def defaults(workload: str) -> dict:
        if workload != "cics":
            raise LookupError(f"no champion model registered for workload {workload!r}")
        return response_model_defaults(champion, workload)

    specs = [{"name": "peak", "workload": "cics", "n_gcp": 2, "n_ziip": 1, "clients": 10,
              "delay_ms": 0.0},
             {"name": "typo", "workload": "cicss", "n_gcp": 2, "n_ziip": 1, "clients": 10}]
    seen = []
    table = simulate_specs(specs, defaults, on_row=seen.append, replications=2, transactions=2000)
    assert [row["name"] for row in seen] == ["peak", "typo"]
    peak, typo = table.iloc[0], table.iloc[1]
    assert peak["cpu_ms_per_tran"] == 0.8 and peak["ziip_eligible_fraction"] == 0.6
    assert peak["delay_ms"] == 0.0  # the scenario's own key wins over the champion's 1.5
    # the dispatch the champion was fitted with comes along, so simulation and model agree
    assert peak["eligible_bursts"] == 4 and peak["help_rule"] == "pool"
    assert pd.isna(peak["error"]) and "cicss" in typo["error"]
    assert table.columns[-1] == "error"


def test_only_a_closed_mva_champion_supplies_a_ziip_split():
    open_model = SimpleNamespace(family="open_mmc", service_ms=1.0, delay_ms=0.5)
    with pytest.raises(LookupError, match="open_mmc, not a closed MVA model"):
        response_model_defaults(open_model, "apireq")


# --- the command ---------------------------------------------------------------------------------


def _kneecap(args, cwd):
    return subprocess.run([sys.executable, "-m", "kneecap.cli", *args], cwd=cwd, env=os.environ,
                          capture_output=True, text=True, timeout=300)


def test_cli_runs_the_good_scenarios_and_reports_the_bad_one(tmp_path):
    scenarios = tmp_path / "s.yaml"
    scenarios.write_text(
        "scenarios:\n"
        "  - {name: closed, n_gcp: 2, n_ziip: 1, cpu_ms_per_tran: 1.0,\n"
        "     ziip_eligible_fraction: 0.5, clients: 20, think_time_ms: 10, delay_ms: 1,\n"
        "     honor_priority: true, help_wait_ms: 3.2}\n"
        "  - {name: open, n_gcp: 2, n_ziip: 1, cpu_ms_per_tran: 1, ziip_eligible_fraction: 0.5,\n"
        "     tps: 800, bg_gcp_busy_pct: 20, bg_ziip_busy_pct: 10}\n"
        "  - {name: typo, n_gcp: 2, n_ziip: 1, cpu_ms_per_tran: 1, ziip_eligible_fraction: 0.5,\n"
        "     clients: 5, think_tme_ms: 3}\n")
    out = tmp_path / "out" / "sim.csv"
    result = _kneecap(["simulate", "--scenarios", str(scenarios), "--out", str(out),
                       "--replications", "2", "--transactions", "2000", "--seed", "3"], tmp_path)
    assert result.returncode == 1, result.stderr
    finished = [line.split(":")[1].strip() for line in result.stderr.splitlines()]
    assert finished == ["closed", "open", "typo"]  # one line per scenario, in order
    table = pd.read_csv(out).set_index("name")
    assert len(table) == 3
    assert "unknown scenario field(s) 'think_tme_ms'" in table.loc["typo", "error"]
    assert table.loc[["closed", "open"], "error"].isna().all()
    assert (table.loc[["closed", "open"], "seed"] == 3).all()
    np.testing.assert_allclose(table.loc["open", "tps"], 800.0, rtol=0.1)


def test_cli_rejects_a_malformed_scenarios_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just a list\n")
    result = _kneecap(["simulate", "--scenarios", str(bad)], tmp_path)
    assert result.returncode == 2 and "'scenarios' list" in result.stderr
