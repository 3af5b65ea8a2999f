"""Response time percentiles around a modelled mean (kneecap.modeling.percentiles): the shifted
gamma's own identities, recovery of a known shape from multinomial buckets, and the simulated
days' buckets against the dispatcher simulation's own response quantiles."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from kneecap import wlm
from kneecap.modeling.percentiles import (
    ResponseShape,
    class_response_shape,
    empirical_quantile,
    fit_response_shape,
    percentile_columns,
    performance_index_forecast,
    rt_bucket_columns,
)
from kneecap.simulation import response_sample
from tests.smf import simdays as sd

SHAPE = ResponseShape(shift_ms=1.0, service_ms=0.8, cv2_base=0.2, cv2_slope=0.6)


@pytest.mark.parametrize("mean", [1.5, 2.0, 4.0, 12.0])
def test_the_distribution_has_the_models_mean(mean):
    # E[R] = shift + integral of P(R > t) over t >= shift, by quadrature
    tail, _ = integrate.quad(lambda t: 1.0 - float(SHAPE.cdf(t, mean)), SHAPE.shift_ms, np.inf, limit=200)
    np.testing.assert_allclose(SHAPE.shift_ms + tail, mean, rtol=1e-6)


def test_quantile_inverts_the_cdf_and_the_mean_for_a_quantile_inverts_the_quantile():
    means = np.array([1.2, 2.0, 3.3, 9.0])
    for p in (0.5, 0.9, 0.95):
        q = SHAPE.quantile(means, p)
        np.testing.assert_allclose(SHAPE.cdf(q, means), p, rtol=1e-9)
        for mean, target in zip(means, q):
            np.testing.assert_allclose(SHAPE.mean_for_quantile(float(target), p), mean, rtol=1e-7)
    assert np.isnan(SHAPE.quantile(0.9, 0.9))  # a mean below the shift has no distribution
    assert np.isnan(SHAPE.mean_for_quantile(0.5, 0.9))


def test_bucket_probabilities_sum_to_one_and_the_rmf_pi_is_the_bound_above_the_continuous_pi():
    means = np.linspace(1.3, 8.0, 40)
    p = SHAPE.bucket_probabilities(means, 5.0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    continuous = performance_index_forecast(SHAPE, means, goal_type="percentile", goal_resp_ms=5.0,
                                            goal_percentile=90)
    rmf, bucket = wlm.percentile_performance_index(p, 90)
    bounds = np.array([0.0, *wlm.RT_BUCKET_MAX_PCT]) / 100
    closed = bucket < 14
    # RMF's PI is the upper bound of the bucket holding the percentile: the continuous PI lies in it
    assert (continuous[closed] <= rmf[closed] + 1e-9).all()
    assert (continuous[closed] >= bounds[bucket[closed] - 1] - 1e-9).all()
    # both pass 1 at the same mean: where the p90 is the goal
    at_goal = SHAPE.mean_for_quantile(5.0, 0.9)
    assert ((continuous > 1) == (means > at_goal)).all() and ((rmf > 1) == (means > at_goal)).all()
    np.testing.assert_allclose(performance_index_forecast(SHAPE, 4.0, goal_type="average", goal_resp_ms=5.0), 0.8)
    with pytest.raises(ValueError, match="needs a response time goal"):
        performance_index_forecast(SHAPE, 4.0, goal_type="velocity", goal_resp_ms=5.0)


def test_the_fit_recovers_a_known_shape_from_multinomial_buckets():
    rng = np.random.default_rng(38)
    means = rng.uniform(1.3, 6.0, 300)
    counts = rng.multinomial(20000, SHAPE.bucket_probabilities(means, 5.0))
    fitted = fit_response_shape(means, counts, 5.0, shift_ms=SHAPE.shift_ms, service_ms=SHAPE.service_ms)
    np.testing.assert_allclose([fitted.cv2_base, fitted.cv2_slope], [SHAPE.cv2_base, SHAPE.cv2_slope], atol=0.01)
    assert fitted.calibration["intervals"] == 300 and fitted.calibration["cdf_error_mean"] < 0.01
    with pytest.raises(ValueError, match="no interval has a mean above the shift"):
        fit_response_shape(np.array([0.5]), counts[:1], 5.0, shift_ms=1.0, service_ms=0.8)


def test_bands_carry_the_means_band():
    cols = percentile_columns(SHAPE, 3.0, 2.5, 3.6)
    for pct in (50, 90, 95):
        c = f"resp_p{pct}_ms"
        assert cols[f"{c}_lo"] < cols[c] < cols[f"{c}_hi"]
        np.testing.assert_allclose(cols[f"{c}_hi"], SHAPE.quantile(3.6, pct / 100))
    assert cols["resp_p50_ms"] < cols["resp_p90_ms"] < cols["resp_p95_ms"]
    assert percentile_columns(SHAPE, np.inf, 3.0, np.inf)["resp_p90_ms_hi"] == np.inf


def _bucket_days(cdf, rng, *, days=6, per_day=48, transactions=4000):
    """Intervals over ``days`` whose buckets are drawn from ``cdf(bounds_ms, mean)`` (goal 5 ms)."""
    n = days * per_day
    means = rng.uniform(1.4, 5.0, n)
    bounds = np.asarray(wlm.RT_BUCKET_MAX_PCT) / 100.0 * 5.0
    cum = np.array([cdf(bounds, m) for m in means])
    probs = np.clip(np.diff(np.hstack([np.zeros((n, 1)), cum, np.ones((n, 1))]), axis=1), 0.0, None)
    counts, _ = rt_bucket_columns()
    rows = pd.DataFrame(rng.multinomial(transactions, probs / probs.sum(axis=1, keepdims=True)), columns=counts)
    start = pd.Timestamp("2026-03-02")
    return rows.assign(resp_ms=means, goal_resp_ms=5.0, goal_type="percentile", goal_percentile=90.0,
                       interval_start_at=[start + pd.Timedelta(minutes=30 * i) for i in range(n)])


def _lognormal_residence(sigma):
    """``(cdf, quantile)`` of 1 ms + a log-normal residence of the given log-sd around the mean."""
    def mu(mean):
        return np.log(mean - 1.0) - sigma ** 2 / 2

    def cdf(t, mean):
        return stats.norm.cdf((np.log(np.maximum(t - 1.0, 1e-12)) - mu(mean)) / sigma)

    def quantile(mean, p):
        return 1.0 + float(np.exp(mu(mean) + sigma * stats.norm.ppf(p)))
    return cdf, quantile


def test_empirical_quantile_reads_the_buckets_linearly_from_the_floor():
    counts = np.array([10, 10] + [0] * 12)
    assert empirical_quantile(counts, np.arange(2.0, 15.0), 0.25, floor_ms=1.0) == pytest.approx(1.5)
    assert empirical_quantile(counts, np.arange(2.0, 15.0), 0.75) == pytest.approx(2.5)
    assert np.isnan(empirical_quantile(np.array([0] * 13 + [5]), np.arange(2.0, 15.0), 0.5))
    assert np.isnan(empirical_quantile(np.zeros(14), np.arange(2.0, 15.0), 0.5))


def test_the_held_out_error_is_small_where_the_shape_is_the_truth():
    rows = _bucket_days(lambda t, m: SHAPE.cdf(t, m), np.random.default_rng(7))
    doc = class_response_shape(rows, shift_ms=SHAPE.shift_ms, service_ms=SHAPE.service_ms)
    errors = doc["calibration"]["quantile_log_error"]
    assert set(errors) == {"50", "90", "95"}
    for lo, hi in errors.values():
        assert lo <= 0 <= hi and max(-lo, hi) < 0.1, errors  # bucket interpolation and draws alone
    # a day too few: nothing held out, no widening claimed
    two_days = rows[pd.to_datetime(rows["interval_start_at"]) < pd.Timestamp("2026-03-04")]
    assert "quantile_log_error" not in class_response_shape(two_days, shift_ms=1.0, service_ms=0.8)["calibration"]


def test_a_wrong_family_widens_the_percentile_band_until_it_holds_the_truth():
    """Buckets from a heavy-tailed log-normal residence the gamma cannot follow: the fitted shape's p95 at
    a mean it was not fitted at misses the truth, and the band widened by the held-out error holds it."""
    cdf, quantile = _lognormal_residence(1.1)
    rows = _bucket_days(cdf, np.random.default_rng(11))
    doc = class_response_shape(rows, shift_ms=1.0, service_ms=0.8)
    shape = ResponseShape.from_dict(doc)
    lo, hi = doc["calibration"]["quantile_log_error"]["95"]
    assert hi - lo > 0.1, (lo, hi)  # the shape's own error is measured as more than the draws' scatter
    mean = 4.0
    truth = quantile(mean, 0.95)
    held = ResponseShape(shape.shift_ms, shape.service_ms, shape.cv2_base, shape.cv2_slope)  # no widening
    assert not abs(float(held.quantile(mean, 0.95)) / truth - 1) < 0.02  # the family is wrong there
    bare = percentile_columns(held, mean, mean, mean)
    widened = percentile_columns(shape, mean, mean, mean)
    assert not bare["resp_p95_ms_lo"] <= truth <= bare["resp_p95_ms_hi"]
    assert widened["resp_p95_ms_lo"] <= truth <= widened["resp_p95_ms_hi"]


@pytest.fixture(scope="module")
def simulated():
    _, truth = sd.simulated_days()
    return truth.per_interval


def test_simulated_days_buckets_give_the_simulations_own_p90_up_to_the_knee(simulated):
    """The shape fitted on the ten days' buckets (their peaks reach 2174 tps) against the p90 of the
    dispatcher simulation's own transactions (tests/smf/data/simdays_resp_quantiles.csv, written
    by an independent run) at every grid level up to the knee (2453 tps), the mean being the grid's."""
    counts, _ = rt_bucket_columns()
    rows = simulated.assign(goal_resp_ms=float(sd.GOAL_RESP_MS), goal_type="percentile",
                            goal_percentile=float(sd.GOAL_PERCENTILE))
    doc = class_response_shape(rows, shift_ms=sd.CONFIG.delay_ms, service_ms=sd.CONFIG.cpu_ms_per_tran)
    shape = ResponseShape.from_dict(doc)
    assert doc["calibration"]["goal_type"] == "percentile" and doc["calibration"]["goal_percentile"] == 90
    assert doc["calibration"]["intervals"] == len(simulated) == 960
    quantiles = sd.load_resp_quantiles()
    grid = sd.load_grid().set_index("tps_offered")
    errors = []
    for level, group in quantiles.groupby("tps_offered"):
        if level > 2453:
            continue
        mean = float(grid.loc[level, "resp_ms"])
        true_p90 = float(group.loc[np.isclose(group["prob"], 0.9), "resp_over_mean"].iloc[0]) * mean
        errors.append(float(shape.quantile(mean, 0.9)) / true_p90 - 1)
    assert len(errors) == 14
    assert np.max(np.abs(errors)) < 0.05, errors
    assert class_response_shape(pd.DataFrame({"resp_ms": [2.0]}), shift_ms=1.0, service_ms=0.8) == {}
    assert all(c in simulated for c in counts)


@pytest.mark.parametrize(("n_gcp", "n_ziip", "tps"), [(2, 3, 2500.0), (2, 3, 3300.0), (3, 2, 2200.0)])
def test_the_shape_holds_on_engine_counts_it_was_not_fitted_on(simulated, n_gcp, n_ziip, tps):
    """The shape depends on the mean alone: fitted on the 2 GCP + 2 zIIP days, its percentiles at the
    mean the simulation gives on another LPAR against that simulation's own transactions."""
    rows = simulated.assign(goal_resp_ms=float(sd.GOAL_RESP_MS))
    shape = ResponseShape.from_dict(class_response_shape(rows, shift_ms=sd.CONFIG.delay_ms,
                                                         service_ms=sd.CONFIG.cpu_ms_per_tran))
    other = replace(sd.CONFIG, n_gcp=n_gcp, n_ziip=n_ziip).scenario(tps)
    resp = response_sample(other, transactions=40000, warmup_fraction=0.1, seed=7)
    for p in (0.5, 0.9, 0.95):
        np.testing.assert_allclose(shape.quantile(resp.mean(), p), np.quantile(resp, p), rtol=0.05)
