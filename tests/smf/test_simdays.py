"""Simulated days with known truth (tests/smf/simdays.py): fresh grid, round trip, knee date."""

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.smf import simdays as sd


@pytest.fixture(scope="module")
def grid() -> pd.DataFrame:
    return sd.load_grid()


@pytest.fixture(scope="module")
def days(grid):
    return sd.simulated_days(grid=grid)


def test_grid_matches_its_settings(grid):
    """The CSV was made from the current CONFIG and grid plan (else rerun --write-grid)."""
    plan = pd.DataFrame(sd.grid_plan())
    assert grid["tps_offered"].tolist() == plan["tps"].tolist()
    for col in ("replications", "transactions", "warmup_fraction", "seed"):
        assert grid[col].tolist() == plan[col].tolist(), col
    scenario = sd.CONFIG.scenario(1.0)
    for name in ("n_gcp", "n_ziip", "cpu_ms_per_tran", "ziip_eligible_fraction", "delay_ms",
                 "honor_priority", "help_wait_ms", "help_rule", "gcp_bursts", "eligible_bursts",
                 "burst_dist", "bg_gcp_busy_pct", "bg_ziip_busy_pct", "bg_burst_ms"):
        assert (grid[name] == getattr(scenario, name)).all(), name
    assert (grid["knee_k"] == sd.CONFIG.knee_k).all()
    params = yaml.safe_load((Path(__file__).resolve().parents[2] / "params.yaml").read_text())
    assert sd.CONFIG.knee_k == params["train"]["knee_k"]


def test_grid_is_fresh(grid):
    """Re-simulating the cheapest level with the same seed gives the CSV row bit for bit."""
    plan = sd.grid_plan((sd.CHEAP_LEVEL,))[0]
    row = sd.simulate_level(plan.pop("tps"), **plan)
    stored = grid[grid["tps_offered"] == sd.CHEAP_LEVEL].reset_index(drop=True)
    assert len(stored) == 1
    assert list(stored.columns) == list(row.columns)
    pd.testing.assert_frame_equal(row, stored, check_dtype=False, check_exact=True)


def test_grid_response_increases_and_knee_inside(grid):
    g = grid.sort_values("tps_offered")
    assert (np.diff(g["resp_ms"]) > 0).all(), g[["tps_offered", "resp_ms"]]
    x = g["tps_offered"].to_numpy()
    # from ~5 % class zIIP busy to 95 % of the pools' capacity
    assert g["cpu_ziip_pct"].iloc[0] / sd.CONFIG.n_ziip == pytest.approx(5.0, abs=1.0)
    assert x[-1] == pytest.approx(0.95 * sd.CONFIG.max_tps)
    knee = sd.true_knee_tps(grid)
    assert x[0] < knee < x[-1]
    unloaded = sd.unloaded_resp_ms(grid)
    assert sd.CONFIG.delay_ms + sd.CONFIG.cpu_ms_per_tran < unloaded < g["resp_ms"].iloc[0]
    resp_at_knee = sd.grid_at(grid, knee)["resp_ms"][0]
    assert resp_at_knee == pytest.approx(sd.CONFIG.knee_k * unloaded, rel=1e-12)
    # tight intervals below 85 % zIIP busy
    below = g[g["ziip_busy_pct"] < 85]
    assert len(below) >= 8
    assert max(sd.half_width_pct(r) for _, r in below.iterrows()) < 3.0
    # the class's CPU follows U = X D; background busy as configured (within sampling)
    np.testing.assert_allclose(g["cpu_total_pct"] / g["tps"],
                               sd.CONFIG.cpu_ms_per_tran / 10, rtol=0.01)
    at = sd.grid_at(grid, x[:5])
    np.testing.assert_allclose(at["bg_ziip_pct"], sd.CONFIG.bg_ziip_busy_pct * 2, rtol=0.05)


def test_grid_states_obey_littles_law(grid):
    """Time-average counts in each CPU state: N = X x time per transaction (Little 1961)."""
    c = sd.CONFIG
    lam = grid["tps"] / 1000.0  # per ms
    # using: the class's CPU in service, by kind, and the same integrals as the APPL%s
    np.testing.assert_allclose(grid["n_ziip_using"] + grid["n_ziip_on_cp_using"],
                               lam * c.ziip_eligible_fraction * c.cpu_ms_per_tran, rtol=0.02)
    np.testing.assert_allclose(grid["n_gcp_using"],
                               lam * (1 - c.ziip_eligible_fraction) * c.cpu_ms_per_tran, rtol=0.02)
    np.testing.assert_allclose(grid["n_ziip_using"], grid["cpu_ziip_pct"] / 100, rtol=1e-9)
    np.testing.assert_allclose(grid["n_ziip_on_cp_using"] * 100, grid["ziip_eligible_on_gcp_pct"],
                               rtol=1e-9, atol=1e-12)
    # every moment of a transaction past its delay_ms is in exactly one state
    in_cpu = sum(grid[state] for state in sd.STATES)
    np.testing.assert_allclose(in_cpu, lam * (grid["resp_ms"] - c.delay_ms), rtol=0.01)
    # zIIP delay per using grows with zIIP busy and dominates from 400 tps (at 140 tps the GCPs,
    # 30 % busy with background, delay more than the 15 % busy zIIPs); IIPCP only once GCPs help
    g = grid.sort_values("tps_offered")
    assert (np.diff(g["n_ziip_delay"] / g["n_ziip_using"]) > 0).all()
    assert (g["n_gcp_delay"] > g["n_ziip_delay"]).iloc[0]
    assert (g["n_ziip_delay"] > g["n_gcp_delay"]).iloc[1:].all()
    assert (g.loc[g["ziip_eligible_on_gcp_share_pct"] == 0, "n_ziip_on_cp_using"] == 0).all()
    assert (g.loc[g["ziip_busy_pct"] > 90, "n_ziip_on_cp_using"] > 0).all()


def test_days_round_trip_through_kneecap_readers(days):
    records, truth = days
    assert len(truth.per_interval) == 10 * 96
    assert len(records) == 3 * len(truth.per_interval)
    errs = sd.check_round_trip(records, truth)
    assert errs["resp_ms"] < 1e-9 and errs["gcp_busy_pct"] < 1e-6 and errs["samples"] == 0.0


def test_decoded_samples_are_what_was_written(days):
    """kneecap's reader gives back the seven sample counts of the class, to the sample."""
    records, truth = days
    w, _ = sd.decode_days(records)
    cls = (w[w["class_name"] == sd.CONFIG.class_name].set_index("interval_start_at")
           .loc[truth.per_interval["interval_start_at"]])
    for name in sd.SAMPLE_FIELDS:
        assert cls[name].tolist() == truth.per_interval[name].tolist(), name


def test_samples_are_the_true_states_with_poisson_noise(days):
    """Samples = time-average count x interval / 250 ms plus Poisson noise; fields as mapped."""
    _, truth = days
    p = truth.per_interval
    per_state = truth.interval_s * sd.SAMPLES_PER_S
    expected = {name: sum(p[state] for state in parts) * per_state
                for name, parts in sd.SAMPLE_FIELDS.items()}
    for name, mean in expected.items():
        assert (p[name][mean == 0] == 0).all(), name  # IIPCP: none before GCPs help
        live = mean > 0
        assert live.sum() >= 50, name
        z = (p[name][live] - mean[live]) / np.sqrt(mean[live])
        assert abs(z.mean()) < 4 / np.sqrt(live.sum()), name  # 4 standard errors
        assert z.std() == pytest.approx(1.0, rel=0.2), name
    # totals are the sums of the parts, IIPCP inside CPU using
    assert (p["total_using_samples"] == p["cpu_using_samples"] + p["ziip_using_samples"]).all()
    assert (p["total_delay_samples"] == p["cpu_delay_samples"] + p["ziip_delay_samples"]).all()
    assert (p["ziip_on_cp_using_samples"] <= p["cpu_using_samples"]).all()
    # the true using states are the APPL%s written (same integrals in the simulation)
    np.testing.assert_allclose(p["n_ziip_using"], p["appl_iip_pct"] / 100, rtol=1e-9)
    np.testing.assert_allclose(p["n_gcp_using"] + p["n_ziip_on_cp_using"],
                               p["appl_cp_pct"] / 100, rtol=1e-9)
    # Little's law per interval: states add up to throughput x (response - delay_ms)
    np.testing.assert_allclose(sum(p[state] for state in sd.STATES),
                               p["tps"] * (p["resp_ms_true"] - sd.CONFIG.delay_ms) / 1000,
                               rtol=0.02)
    # delay/using ratios: the second signal rises with the load
    peak = truth.daily_peaks
    ratio = p["ziip_delay_samples"] / p["ziip_using_samples"]
    at_peaks = ratio[p["interval_start_at"].dt.hour.eq(13) & p["interval_start_at"].dt.minute.eq(0)]
    assert len(at_peaks) == len(peak)
    assert at_peaks.iloc[-1] > 2 * at_peaks.iloc[0]


def test_days_are_seeded_and_noisy(days, grid):
    records, truth = days
    again, truth2 = sd.simulated_days(grid=grid)
    assert again == records
    pd.testing.assert_frame_equal(truth2.per_interval, truth.per_interval)
    p = truth.per_interval
    ratio = np.log(p["resp_ms"] / p["resp_ms_true"])
    assert ratio.std() == pytest.approx(sd.RESP_NOISE, rel=0.15)
    z = (p["ended"] - p["tps_offered"] * truth.interval_s) / np.sqrt(
        p["tps_offered"] * truth.interval_s)
    assert abs(z.mean()) < 0.2 and z.std() == pytest.approx(1.0, rel=0.15)
    other, _ = sd.simulated_days(grid=grid, seed=truth.seed + 1)
    assert other != records


def test_peaks_stay_below_the_knee_which_comes_after_the_data(days):
    _, truth = days
    peaks = truth.daily_peaks
    assert peaks["day"].tolist() == list(range(1, 11))
    assert (peaks["peak_tps"] < truth.knee_tps).all()
    assert truth.per_interval["tps_offered"].max() < truth.knee_tps
    last = truth.per_interval["interval_start_at"].max().date()
    assert truth.knee_date > last
    assert 12.0 <= truth.knee_day <= 14.5
    assert truth.knee_date == dt.date(2026, 3, 1) + dt.timedelta(days=int(np.ceil(truth.knee_day)))
    # response clearly rising: peaks of days 7-10 at ~75-90 % zIIP busy
    late = peaks[peaks["day"] >= 7]
    assert late["peak_ziip_busy_pct"].between(74, 92).all()
    assert late["peak_ziip_busy_pct"].max() > 84
    assert (np.diff(peaks["peak_resp_ms"]) > 0).all()
    assert peaks["peak_resp_ms"].iloc[-1] > 1.8 * truth.unloaded_resp_ms


@pytest.mark.parametrize("variant", [None, *sorted(sd.VARIANTS)])
def test_delay_states_between_grid_levels_follow_the_simulation(variant):
    """Left out one level at a time, the zIIP delay per transaction is interpolated from the others.

    A queue's wait grows faster than its load, so a straight line overstates it between levels (up to
    58 % on the 4 GCP + 3 zIIP grid); the monotone cubic in its log stays within 10 % everywhere.
    """
    grid = sd.load_grid() if variant is None else sd.load_grid(sd.variant_grid_path(variant))
    g = grid.sort_values("tps_offered")
    x = g["tps_offered"].to_numpy(float)
    y = g["n_ziip_delay"].to_numpy(float) / g["tps"].to_numpy(float)
    rising, linear = [], []
    for i in range(1, len(x) - 1):
        if y[i - 1] > 0:
            xs, ys = np.delete(x, i), np.delete(y, i)
            rising.append(sd._interp_rising(np.array([x[i]]), xs, ys)[0] / y[i] - 1)
            linear.append(np.interp(x[i], xs, ys) / y[i] - 1)
    rising, linear = np.abs(rising), np.abs(linear)
    assert rising.max() < 0.10 and rising.mean() < 0.5 * linear.mean(), (rising.max(), rising.mean(), linear.mean())


def test_response_quantiles_are_fresh():
    """Re-simulating the cheapest level gives the committed response quantiles bit for bit (else
    rerun --write-resp-quantiles), at every grid level and probability."""
    stored = sd.load_resp_quantiles()
    assert sorted(set(stored["tps_offered"])) == sorted(sd.GRID_LEVELS)
    assert (stored.groupby("tps_offered")["prob"].apply(tuple) == sd.RESP_QUANTILE_PROBS).all()
    level = stored[stored["tps_offered"] == sd.CHEAP_LEVEL]["resp_over_mean"].to_numpy()
    np.testing.assert_array_equal(sd.simulate_resp_quantiles(sd.CHEAP_LEVEL), level)
