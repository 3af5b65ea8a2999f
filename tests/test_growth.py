"""kneecap.growth: peak series, growth-model selection and knee-crossing dates."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kneecap import growth
from kneecap.growth import _fit as growth_fit
from kneecap.growth import crossing_date, fit_growth, peak_series
from kneecap.growth._crossing import draw_thresholds

START = pd.Timestamp("2026-01-05")  # a Monday
DAY = pd.Timedelta(days=1)


def daily(values: np.ndarray, start: pd.Timestamp = START) -> pd.Series:
    index = pd.date_range(start, periods=len(values), freq="D", name="period_start")
    return pd.Series(np.asarray(values, dtype=float), index=index, name="peak_tps")


def linear_trend(n_days: int = 60, base_tps: float = 100.0, slope_tps_per_day: float = 2.0,
                 noise_sd: float = 2.0, seed: int = 7) -> pd.Series:
    rng = np.random.default_rng(seed)
    days = np.arange(n_days)
    return daily(base_tps + slope_tps_per_day * days + rng.normal(0.0, noise_sd, n_days))


def weekly_pattern(n_days: int, seed: int = 3) -> pd.Series:
    """Online load: weekday peaks, a deep weekend trough, slow growth."""
    rng = np.random.default_rng(seed)
    days = np.arange(n_days)
    # START is a Monday, so position % 7 is the weekday.
    weekday_effect = np.array([10.0, 15.0, 15.0, 12.0, 8.0, -35.0, -45.0])[days % 7]
    return daily(300.0 + 0.5 * days + weekday_effect + rng.normal(0.0, 2.0, n_days))


@pytest.fixture(scope="module")
def trend_fit() -> growth.GrowthResults:
    return fit_growth(linear_trend())


@pytest.fixture(scope="module")
def trend_paths(trend_fit: growth.GrowthResults) -> growth.PeakPaths:
    return trend_fit.simulate(730)


def _days(date: pd.Timestamp, anchor: pd.Timestamp) -> float:
    return (date - anchor) / DAY


# ---------------------------------------------------------------------------------------------
# Crossing dates on a known trend
# ---------------------------------------------------------------------------------------------


def test_crossing_date_recovers_known_linear_trend(trend_fit: growth.GrowthResults,
                                                   trend_paths: growth.PeakPaths) -> None:
    peaks = trend_fit.history
    last_time = peaks.index[-1]
    days_ahead = 40
    # The noise-free trend reaches the threshold exactly `days_ahead` days after the last peak.
    threshold_tps = 100.0 + 2.0 * (len(peaks) - 1 + days_ahead)
    true_date = last_time + days_ahead * DAY

    crossing = crossing_date(trend_paths, threshold_tps)

    # the damped trend's paths (14 % of them by its rolling-origin weight) level off, and some
    # of those never get there
    assert crossing["already"] is False and 0.0 < crossing["unreached_share"] < 0.05
    assert abs(_days(crossing["date"], last_time) - days_ahead) <= 0.10 * days_ahead
    assert crossing["date_lo"] <= true_date <= crossing["date_hi"]
    assert (crossing["date_lo"] <= crossing["date_earliest"] < crossing["date"]
            < crossing["date_p90"] <= crossing["date_hi"])
    assert crossing["horizon_end"] == last_time + 730 * DAY
    assert all(isinstance(crossing[key], pd.Timestamp)
               for key in ("date", "date_earliest", "date_p90", "date_lo", "date_hi"))


def test_linear_baseline_alone_also_recovers_the_trend() -> None:
    peaks = linear_trend(seed=11)
    results = fit_growth(peaks, candidates=("linear",))
    assert results.method == "linear"
    assert list(results.competitors["method"]) == ["linear"]
    assert results.weights.to_dict() == {"linear": 1.0}
    threshold_tps = 100.0 + 2.0 * (len(peaks) - 1 + 40)
    crossing = crossing_date(results.simulate(120), threshold_tps)
    assert abs(_days(crossing["date"], peaks.index[-1]) - 40) <= 4
    assert crossing["date_lo"] <= peaks.index[-1] + 40 * DAY <= crossing["date_hi"]


def test_crossing_time_is_interpolated_between_periods() -> None:
    # A noiseless line, fitted by OLS, reaches the threshold half-way through a day: every path
    # is the line, so every quantile is that instant.
    peaks = daily(100.0 + 2.0 * np.arange(20))
    results = fit_growth(peaks, candidates=("linear",))
    threshold_tps = 100.0 + 2.0 * (19 + 10.5)
    crossing = crossing_date(results.simulate(60), threshold_tps)
    expected = peaks.index[-1] + pd.Timedelta(days=10.5)
    for key in ("date", "date_earliest", "date_p90", "date_lo", "date_hi"):
        assert abs(crossing[key] - expected) <= pd.Timedelta(seconds=1), key


def test_knee_interval_widens_the_date_range(trend_paths: growth.PeakPaths) -> None:
    threshold_tps = 260.0
    plain = crossing_date(trend_paths, threshold_tps)
    widened = crossing_date(trend_paths, threshold_tps, threshold_lo=240.0, threshold_hi=280.0)
    # the interval is symmetric in tps, so nearly so in days: the median moves by well under a day
    assert abs(widened["date"] - plain["date"]) < DAY
    for early in ("date_lo", "date_earliest"):
        assert widened[early] < plain[early]
    for late in ("date_p90", "date_hi"):
        assert widened[late] > plain[late]


def test_crossing_date_rejects_bad_thresholds(trend_paths: growth.PeakPaths) -> None:
    with pytest.raises(ValueError, match="threshold_lo <= threshold_tps <= threshold_hi"):
        crossing_date(trend_paths, 250.0, threshold_lo=260.0)
    with pytest.raises(ValueError, match="positive finite"):
        crossing_date(trend_paths, math.nan)
    with pytest.raises(ValueError, match="positive finite"):
        crossing_date(trend_paths, 250.0, threshold_lo=-1.0)
    with pytest.raises(ValueError, match="not both"):
        crossing_date(trend_paths, 250.0, threshold_lo=240.0, threshold_draws=np.array([250.0, 251.0]))
    with pytest.raises(ValueError, match="threshold_draws"):
        crossing_date(trend_paths, 250.0, threshold_draws=np.array([250.0, math.inf]))
    with pytest.raises(ValueError, match="threshold_alpha"):
        crossing_date(trend_paths, 250.0, threshold_alpha=1.5)


def test_simulate_rejects_bad_arguments(trend_fit: growth.GrowthResults) -> None:
    with pytest.raises(ValueError, match="horizon"):
        trend_fit.simulate(0)
    with pytest.raises(ValueError, match="n_paths"):
        trend_fit.simulate(10, n_paths=10)


def test_forecast_frame(trend_fit: growth.GrowthResults) -> None:
    frame = trend_fit.forecast(10)
    assert list(frame.columns) == ["tps", "tps_lo", "tps_hi"]
    assert frame.index[0] == trend_fit.history.index[-1] + DAY
    assert len(frame) == 10 and frame.index.freq == pd.tseries.frequencies.to_offset("D")
    assert np.all(frame["tps_lo"] <= frame["tps"]) and np.all(frame["tps"] <= frame["tps_hi"])
    # Uncertainty grows with the look-ahead.
    width = frame["tps_hi"] - frame["tps_lo"]
    assert width.iloc[-1] > width.iloc[0]
    # A narrower (1 - alpha) interval for a larger alpha.
    wide = fit_growth(trend_fit.history, alpha=0.01, candidates=("linear",)).forecast(10)
    narrow = fit_growth(trend_fit.history, alpha=0.5, candidates=("linear",)).forecast(10)
    assert np.all((narrow["tps_hi"] - narrow["tps_lo"]) < (wide["tps_hi"] - wide["tps_lo"]))
    with pytest.raises(ValueError, match="horizon"):
        trend_fit.forecast(0)


def test_summary_is_one_line(trend_fit: growth.GrowthResults) -> None:
    line = trend_fit.summary()
    assert "\n" not in line
    assert trend_fit.method in line and "60 daily peaks" in line


def test_competitors_table(trend_fit: growth.GrowthResults) -> None:
    table = trend_fit.competitors
    assert list(table.columns) == ["method", "rolling_origin_mape_pct", "chosen", "note"]
    assert list(table["method"]) == list(growth.CANDIDATES)
    assert table["chosen"].sum() == 1
    assert table.loc[table["chosen"], "method"].item() == trend_fit.method
    scored = table.dropna(subset=["rolling_origin_mape_pct"])
    assert trend_fit.method in set(scored["method"])
    assert scored.set_index("method")["rolling_origin_mape_pct"][trend_fit.method] == pytest.approx(
        scored["rolling_origin_mape_pct"].min())


# ---------------------------------------------------------------------------------------------
# Candidate offering and selection
# ---------------------------------------------------------------------------------------------


def test_weekly_candidates_offered_and_beat_linear_on_weekly_pattern() -> None:
    results = fit_growth(weekly_pattern(35))
    errors = results.competitors.set_index("method")["rolling_origin_mape_pct"]
    for seasonal in ("ets_weekly", "sarimax_weekly"):
        assert seasonal in errors.index
        assert math.isfinite(errors[seasonal])
    assert errors["ets_weekly"] < errors["linear"]
    assert min(errors["ets_weekly"], errors["sarimax_weekly"]) < errors["linear"]
    assert results.method in growth.SEASONAL_CANDIDATES
    # The forecast keeps the weekend trough: Saturdays and Sundays below the weekdays around them.
    frame = results.forecast(14)
    weekend = frame.index.day_of_week >= 5
    assert frame.loc[weekend, "tps"].mean() < frame.loc[~weekend, "tps"].mean() - 20.0


def test_weekly_candidates_not_offered_below_three_weeks() -> None:
    results = fit_growth(weekly_pattern(20), candidates=("linear", "ets_trend", "ets_weekly"))
    table = results.competitors.set_index("method")
    assert math.isnan(table.loc["ets_weekly", "rolling_origin_mape_pct"])
    assert "not offered" in table.loc["ets_weekly", "note"]
    assert "3 full weeks" in table.loc["ets_weekly", "note"]
    assert results.method != "ets_weekly"


def test_weekly_candidates_not_offered_on_weekly_series() -> None:
    rng = np.random.default_rng(5)
    index = pd.date_range("2025-01-06", periods=30, freq="W-MON", name="period_start")
    peaks = pd.Series(500.0 + 4.0 * np.arange(30) + rng.normal(0.0, 3.0, 30), index=index)
    results = fit_growth(peaks, candidates=("linear", "ets_trend", "sarimax_weekly"))
    table = results.competitors.set_index("method")
    assert "not offered" in table.loc["sarimax_weekly", "note"]
    assert results.forecast(2).index[0] == index[-1] + pd.Timedelta(weeks=1)
    assert "weekly peaks" in results.summary()


def test_short_history_fits_non_seasonal() -> None:
    peaks = linear_trend(n_days=6)
    results = fit_growth(peaks)
    assert results.method not in growth.SEASONAL_CANDIDATES
    errors = results.competitors.set_index("method")["rolling_origin_mape_pct"]
    assert math.isfinite(errors["linear"])
    assert math.isfinite(errors["ets_trend"])  # non-seasonal ETS still works on 6 points
    frame = results.forecast(5)
    assert np.all(np.isfinite(frame.to_numpy()))


@pytest.fixture
def damped_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """The damped-trend candidate's fit raises, as a singular design does."""
    real_fit = growth_fit.fit_candidate

    def fit_or_fail(method: str, y: np.ndarray):
        if method == "ets_damped":
            raise np.linalg.LinAlgError("singular matrix")
        return real_fit(method, y)

    monkeypatch.setattr(growth_fit, "fit_candidate", fit_or_fail)


def test_failing_candidate_is_recorded_not_raised(damped_fails: None) -> None:
    results = fit_growth(linear_trend(n_days=20), candidates=("ets_trend", "ets_damped"))
    table = results.competitors.set_index("method")
    assert math.isnan(table.loc["ets_damped", "rolling_origin_mape_pct"])
    assert "LinAlgError" in table.loc["ets_damped", "note"]
    assert results.method in {"linear", "ets_trend"}


def test_interior_gap_is_interpolated_not_scored() -> None:
    peaks = linear_trend(n_days=30)
    gapped = peaks.copy()
    gapped.iloc[[10, 25]] = np.nan
    results = fit_growth(gapped, candidates=("linear",))
    assert results.history.isna().sum() == 2
    assert np.all(np.isfinite(results.fitted_values))
    # Leading and trailing gaps are trimmed, not invented.
    padded = pd.concat([pd.Series([np.nan], index=[peaks.index[0] - DAY]), peaks,
                        pd.Series([np.nan], index=[peaks.index[-1] + DAY])]).asfreq("D")
    assert fit_growth(padded, candidates=("linear",)).history.index.equals(peaks.index)


def test_dropped_periods_are_reinserted_as_gaps() -> None:
    peaks = linear_trend(n_days=30)
    dropped = peaks.drop(peaks.index[[5, 6, 17]])
    dropped.index = pd.DatetimeIndex(list(dropped.index))  # no freq, as after dropna()
    results = fit_growth(dropped, candidates=("linear",))
    assert results.history.index.equals(peaks.index)
    assert results.history.isna().sum() == 3
    irregular = peaks.iloc[:6].copy()
    irregular.index = irregular.index + pd.to_timedelta([0, 0, 0, 0, 0, 12], unit="h")
    with pytest.raises(ValueError, match="regular"):
        fit_growth(irregular)


def test_tie_goes_to_the_simpler_model() -> None:
    # A noiseless line: every model that fits it scores ~0 %, and the baseline should win.
    results = fit_growth(daily(50.0 + 3.0 * np.arange(30)), candidates=("linear", "sarimax_weekly"))
    assert results.method == "linear"


@pytest.mark.parametrize("n_points", [0, 1, 3])
def test_too_few_points(n_points: int) -> None:
    with pytest.raises(ValueError, match=rf"needs at least 4 .*got {n_points}"):
        fit_growth(linear_trend(n_days=n_points) if n_points else daily(np.array([])))


def test_missing_values_do_not_count_as_points() -> None:
    peaks = linear_trend(n_days=6)
    peaks.iloc[[1, 2, 4]] = np.nan
    with pytest.raises(ValueError, match="needs at least 4 .*got 3"):
        fit_growth(peaks)


def test_unknown_candidate_rejected() -> None:
    with pytest.raises(ValueError, match="prophet"):
        fit_growth(linear_trend(n_days=10), candidates=("prophet",))


# ---------------------------------------------------------------------------------------------
# Flat series, thresholds already reached, monotonicity
# ---------------------------------------------------------------------------------------------


def test_flat_series_never_reaches_a_high_threshold() -> None:
    rng = np.random.default_rng(2)
    peaks = daily(200.0 + rng.normal(0.0, 2.0, 60))
    results = fit_growth(peaks, candidates=("linear", "ets_trend", "ets_damped"))
    paths = results.simulate(365)
    crossing = crossing_date(paths, 300.0)
    assert crossing["date"] is None and crossing["date_p90"] is None and crossing["date_hi"] is None
    assert crossing["unreached_share"] > 0.9
    assert crossing["already"] is False
    assert crossing["horizon_end"] == peaks.index[-1] + 365 * DAY

    below = crossing_date(paths, 150.0)
    assert below["already"] is True and below["unreached_share"] == 0.0
    # every observed peak is above 150: every path's crossing is the first observed day
    for key in ("date", "date_earliest", "date_p90", "date_lo", "date_hi"):
        assert below[key] == peaks.index[0], key


def test_already_reached_dates_first_observed_period(trend_paths: growth.PeakPaths) -> None:
    peaks = trend_paths.history
    threshold_tps = 150.0
    crossing = crossing_date(trend_paths, threshold_tps)
    assert crossing["already"] is True
    first_at_or_above = peaks.index[np.argmax(peaks.to_numpy() >= threshold_tps)]
    assert crossing["date"] == first_at_or_above
    assert crossing["date"] in peaks.index
    assert peaks[crossing["date"]] >= threshold_tps
    assert (peaks[peaks.index < crossing["date"]] < threshold_tps).all()


def _as_time(date: pd.Timestamp | None) -> pd.Timestamp:
    return pd.Timestamp.max if date is None else date


DATE_KEYS = ("date", "date_earliest", "date_p90", "date_lo", "date_hi")


def test_dates_monotone_over_thresholds(trend_paths: growth.PeakPaths) -> None:
    # From well inside the history to beyond the two-year horizon.
    thresholds = np.linspace(120.0, 2000.0, 25)
    crossings = [crossing_date(trend_paths, float(thr)) for thr in thresholds]
    for key in DATE_KEYS:
        times = [_as_time(crossing[key]) for crossing in crossings]
        assert times == sorted(times), key
    assert crossings[0]["already"] and not crossings[-1]["already"]
    assert crossings[-1]["date"] is None and crossings[-1]["unreached_share"] > 0.5


@settings(max_examples=40, deadline=None)
@given(low=st.floats(50.0, 1500.0), extra=st.floats(0.0, 500.0))
def test_higher_threshold_never_earlier(trend_paths: growth.PeakPaths, low: float,
                                        extra: float) -> None:
    earlier = crossing_date(trend_paths, low)
    later = crossing_date(trend_paths, low + extra)
    for key in DATE_KEYS:
        assert _as_time(earlier[key]) <= _as_time(later[key])


# ---------------------------------------------------------------------------------------------
# The crossing-date distribution: form and parameter uncertainty, the knee's, rounding
# ---------------------------------------------------------------------------------------------


def six_days(seed: int, slope_tps_per_day: float = 5.0, noise_sd: float = 3.0) -> pd.Series:
    """Six daily peaks of a linear trend plus noise: the history of the issue's zero-width date."""
    return linear_trend(n_days=6, base_tps=100.0, slope_tps_per_day=slope_tps_per_day,
                        noise_sd=noise_sd, seed=seed)


@pytest.fixture(scope="module")
def six_fit() -> growth.GrowthResults:
    return fit_growth(six_days(seed=4))


@pytest.fixture(scope="module")
def six_paths(six_fit: growth.GrowthResults) -> growth.PeakPaths:
    return six_fit.simulate(120)


def test_six_points_give_more_than_one_trend_form(six_fit: growth.GrowthResults,
                                                  six_paths: growth.PeakPaths) -> None:
    weights = six_fit.weights
    assert set(weights.index) == {"linear", "ets_trend", "ets_damped"}  # weekly ones not offered
    np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-12)
    assert (weights > 0.05).all()
    # inverse squared rolling-origin MAPE
    mape = six_fit.competitors.set_index("method")["rolling_origin_mape_pct"][weights.index]
    np.testing.assert_allclose(weights.to_numpy(), (mape**-2 / (mape**-2).sum()).to_numpy(), rtol=1e-12)
    counts = pd.Series(six_paths.methods).value_counts()
    assert set(counts.index) == set(weights.index) and counts.sum() == growth.N_PATHS
    np.testing.assert_allclose(counts[weights.index] / growth.N_PATHS, weights, atol=1 / growth.N_PATHS)


def test_failed_candidate_gets_no_paths(damped_fails: None) -> None:
    results = fit_growth(six_days(seed=4))
    assert "ets_damped" not in results.weights.index
    assert set(results.simulate(10, n_paths=200).methods) == {"linear", "ets_trend"}


def test_ols_paths_reproduce_statsmodels_prediction_interval() -> None:
    # The OLS posterior predictive's per-step quantiles are the t-based obs_ci statsmodels
    # computes in closed form (independent implementation); 20,000 paths, 3 % on the width.
    results = fit_growth(linear_trend(n_days=12, seed=5), candidates=("linear",), alpha=0.10)
    paths = results.simulate(10, n_paths=20_000)
    frame = results.forecast(10)
    lower, upper = np.quantile(paths.paths_tps, [0.05, 0.95], axis=0)
    np.testing.assert_allclose(upper - lower, (frame["tps_hi"] - frame["tps_lo"]).to_numpy(), rtol=0.03)
    np.testing.assert_allclose(np.median(paths.paths_tps, axis=0), frame["tps"].to_numpy(), rtol=0.005)


def test_ets_paths_are_wider_than_its_fixed_parameter_interval() -> None:
    # The ETS paths add the initial states' uncertainty (and a degrees-of-freedom corrected noise
    # scale) to statsmodels' closed-form interval, which holds the fitted parameters fixed.
    results = fit_growth(linear_trend(n_days=10, seed=6), candidates=("ets_trend",))
    results = growth.GrowthResults(**{**results.__dict__, "method": "ets_trend",
                                      "fitted": results.candidate_fits["ets_trend"]})
    only_ets = results.competitors.assign(rolling_origin_mape_pct=np.where(
        results.competitors["method"] == "ets_trend", 1.0, np.nan))
    results = growth.GrowthResults(**{**results.__dict__, "competitors": only_ets})
    paths = results.simulate(15, n_paths=10_000)
    assert set(paths.methods) == {"ets_trend"}
    frame = results.forecast(15)
    lower, upper = np.quantile(paths.paths_tps, [0.025, 0.975], axis=0)
    assert np.all(upper - lower > (frame["tps_hi"] - frame["tps_lo"]).to_numpy())
    np.testing.assert_allclose(np.median(paths.paths_tps, axis=0), frame["tps"].to_numpy(), rtol=0.01)


def test_split_lognormal_passes_through_the_interval() -> None:
    alpha = 0.05
    u = np.array([alpha / 2, 0.5, 1 - alpha / 2])
    np.testing.assert_allclose(draw_thresholds(u, 100.0, 90.0, 120.0, alpha, None),
                               [90.0, 100.0, 120.0], rtol=1e-12)
    assert np.all(draw_thresholds(u, 100.0, 100.0, 100.0, alpha, None) == 100.0)
    draws = np.arange(1.0, 101.0)
    np.testing.assert_array_equal(draw_thresholds(np.array([0.01, 0.5, 1.0]), 0.0, 0.0, 0.0,
                                                  alpha, draws), [1.0, 50.0, 100.0])


def test_bootstrap_draws_of_the_knee(six_paths: growth.PeakPaths) -> None:
    point = 130.0  # the last of the six peaks is 125 tps
    constant = crossing_date(six_paths, point, threshold_draws=np.full(200, point))
    assert constant == crossing_date(six_paths, point)
    spread = crossing_date(six_paths, point,
                           threshold_draws=point * np.exp(np.random.default_rng(3).normal(0.0, 0.03, 200)))
    assert spread["date_earliest"] < constant["date_earliest"]
    assert spread["date_p90"] > constant["date_p90"]
    higher = crossing_date(six_paths, point,
                           threshold_draws=1.05 * point * np.exp(np.random.default_rng(3).normal(0.0, 0.03, 200)))
    for key in DATE_KEYS:
        assert _as_time(higher[key]) >= _as_time(spread[key]), key


def test_simulation_is_seeded(six_fit: growth.GrowthResults, six_paths: growth.PeakPaths) -> None:
    again = six_fit.simulate(120)
    np.testing.assert_array_equal(again.paths_tps, six_paths.paths_tps)
    assert crossing_date(again, 150.0, threshold_lo=140.0, threshold_hi=165.0) == \
        crossing_date(six_paths, 150.0, threshold_lo=140.0, threshold_hi=165.0)
    other = six_fit.simulate(120, seed=1)
    assert not np.array_equal(other.paths_tps, six_paths.paths_tps)


def test_round_to_periods_goes_outward() -> None:
    days = pd.date_range(START, periods=6, freq="D")
    noon = START + pd.Timedelta(days=10, hours=12)
    crossing = {"date_lo": noon, "date_earliest": noon, "date": noon, "date_p90": noon,
                "date_hi": None, "unreached_share": 0.02}
    rounded = growth.round_to_periods(crossing, days)
    assert rounded["date_lo"] == rounded["date_earliest"] == START + 10 * DAY
    assert rounded["date"] == rounded["date_p90"] == START + 11 * DAY
    assert rounded["date_hi"] is None and rounded["unreached_share"] == 0.02
    on_day = growth.round_to_periods({**crossing, "date_earliest": START + 3 * DAY,
                                      "date_p90": START + 3 * DAY}, days)
    assert on_day["date_earliest"] == on_day["date_p90"] == START + 3 * DAY  # no spread, no width
    weeks = pd.date_range(START, periods=4, freq="W-MON")
    weekly = growth.round_to_periods(crossing, weeks)
    assert weekly["date_earliest"] == START + 7 * DAY and weekly["date_p90"] == START + 14 * DAY
    with pytest.raises(ValueError, match="two period starts"):
        growth.round_to_periods(crossing, days[:1])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), slope=st.floats(2.0, 10.0), noise_sd=st.floats(0.5, 5.0),
       knee_width=st.floats(0.002, 0.10), lead_days=st.floats(1.0, 30.0))
def test_noisy_six_days_never_give_a_zero_width_date_range(seed: int, slope: float, noise_sd: float,
                                                           knee_width: float, lead_days: float) -> None:
    # The issue: six daily peaks printed "2026-06-10 (2026-06-10 .. 2026-06-10)" on a four-day lead.
    peaks = six_days(seed, slope_tps_per_day=slope, noise_sd=noise_sd)
    results = fit_growth(peaks)
    knee = 100.0 + slope * (5 + lead_days)
    if knee <= peaks.iloc[-1]:
        knee = peaks.iloc[-1] + slope * lead_days
    crossing = crossing_date(results.simulate(120, n_paths=500), knee,
                             threshold_lo=knee * (1 - knee_width), threshold_hi=knee * (1 + knee_width))
    if crossing["date_p90"] is None:  # a falling or levelling-off fit: said, not dated
        assert crossing["unreached_share"] > 0.10
        return
    assert crossing["date_p90"] - crossing["date_earliest"] > pd.Timedelta(hours=1)
    printed = growth.round_to_periods(crossing, results.history.index)
    assert printed["date_p90"] - printed["date_earliest"] >= DAY
    assert printed["date_earliest"] <= printed["date"] <= printed["date_p90"]


@settings(max_examples=40, deadline=None)
@given(knee=st.floats(110.0, 400.0), factor=st.floats(1.0, 1.5), width=st.floats(0.0, 0.1))
def test_higher_knee_never_gives_an_earlier_date(six_paths: growth.PeakPaths, knee: float, factor: float,
                                                 width: float) -> None:
    def at(point: float) -> dict:
        return crossing_date(six_paths, point, threshold_lo=point * (1 - width),
                             threshold_hi=point * (1 + width))

    lower, higher = at(knee), at(knee * factor)
    for key in DATE_KEYS:
        assert _as_time(lower[key]) <= _as_time(higher[key]), key


def _true_first_reach_days(future_tps: np.ndarray, threshold: float, last_tps: float) -> float:
    """Days after the last observed day to the first reach, interpolated as crossing_date does."""
    before = last_tps
    for j, tps in enumerate(future_tps):
        if tps >= threshold:
            return j + (threshold - before) / (tps - before)
        before = tps
    return math.inf


def _reached_by_coverage(shape: str, n_histories: int, seed: int,
                         time_constant_days: float = 60.0) -> tuple[float, float, float, float]:
    """Over simulated six-day histories: the share whose true knee day is on or before the 90 % date
    (a 90 % date past the horizon, "may not be reached", covers, and is right when the truth is
    never), the share of those dated, the share covered among the dated, and the median days from
    the earliest plausible date to the 90 % date among the dated.

    Each history: a trend from 1,000 tps growing 1-3 % a day (linear; slowing: the growth rate
    decays with ``time_constant_days``; plateau: growth stops at day 4), normal noise of 0.5-2 % on
    every daily peak, the knee where the trend is 3-20 days after the last fitted day (for a
    plateau, where the line before it would be, so the truth is mostly "never"), and a knee
    estimate off by a log-normal error of 0.5-3 % with its matching 95 % interval. The truth is the
    first day the noisy future peaks reach the true knee.
    """
    rng = np.random.default_rng(seed)
    covered, undated, widths = [], [], []
    while len(covered) < n_histories:
        slope = 1000.0 * rng.uniform(0.01, 0.03)
        days = np.arange(6 + 60, dtype=float)
        tau = time_constant_days
        line = 1000.0 + slope * days
        trend = {"linear": line, "slowing": 1000.0 + slope * tau * (1 - np.exp(-days / tau)),
                 "plateau": 1000.0 + slope * np.minimum(days, 4.0)}[shape]
        peaks = trend + rng.normal(0.0, 1000.0 * rng.uniform(0.005, 0.02), len(days))
        knee_true = float(np.interp(5 + rng.uniform(3.0, 20.0), days,
                                    line if shape == "plateau" else trend))
        knee_sd = rng.uniform(0.005, 0.03)
        knee = knee_true * math.exp(knee_sd * rng.standard_normal())
        if peaks[5] >= knee_true:
            continue
        results = fit_growth(daily(peaks[:6]))
        crossing = crossing_date(results.simulate(60, n_paths=1000), knee,
                                 threshold_lo=knee * math.exp(-1.96 * knee_sd),
                                 threshold_hi=knee * math.exp(1.96 * knee_sd))
        by = math.inf if crossing["date_p90"] is None else _days(crossing["date_p90"], results.history.index[-1])
        covered.append(_true_first_reach_days(peaks[6:], knee_true, peaks[5]) <= by)
        undated.append(crossing["date_p90"] is None)
        if crossing["date_p90"] is not None:
            widths.append((crossing["date_p90"] - crossing["date_earliest"]) / DAY)
    covered_, dated = np.array(covered), ~np.array(undated)
    return (float(covered_.mean()), float(dated.mean()),
            float(covered_[dated].mean()) if dated.any() else math.nan,
            float(np.median(widths)) if widths else math.nan)


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["linear", "slowing"])
def test_reached_by_date_is_calibrated_on_synthetic_truth(shape: str) -> None:
    # Measured (200 histories each, seed 2026, ~1 min per shape): the true knee day was on or before
    # the 90 % date in 96.5 % (linear) and 90.0 % (slowing) of histories; 58 % and 55 % of them had
    # a 90 % date within the 60 days (the rest "may not be reached": on six points the damped trend
    # fits about as well as a line and takes ~30 % of the paths, some of which level off), and
    # among those the true day was on or before it in 94.0 % and 81.8 %. Without the damped
    # candidate (linear histories): 90.5 % covered, 94 % dated. A faster slowdown
    # (time_constant_days=20) is not: 76.5 % covered, 58.0 % of the dated; growth halving in two
    # weeks does not show in six points, and no candidate bends that fast (docs/models.md).
    coverage, dated, covered_when_dated, _ = _reached_by_coverage(shape, n_histories=200, seed=2026)
    assert coverage >= 0.85, coverage
    assert covered_when_dated >= 0.80, covered_when_dated
    assert dated >= 0.50, dated  # "may not be reached" always covers; it must not be the usual answer


@pytest.mark.slow
def test_a_plateau_on_six_points_is_mostly_not_dated() -> None:
    # Growth that stops after day 4 of six, the knee where the line before it would be 3-20 days
    # on: the truth is mostly "never". Measured (200 histories, seed 2026): 78 % covered (the
    # answer was "may not be reached", or the true day was on or before the 90 % date), 22 %
    # dated. The damped trend's paths carry that: with paths from the straight line alone (what
    # forecast's n <= npars + 4 rule gives on six points) 7 % were covered, from the line and
    # Holt's trend 11 %; with the damped trend's weight cut by Akaike's FPE, (n + k) / (n - k),
    # 67 % (and the slowing shape above 83.5 %, under its 85 %).
    coverage, dated, _, _ = _reached_by_coverage("plateau", n_histories=200, seed=2026)
    assert coverage >= 0.70, coverage
    assert dated <= 0.40, dated


# ---------------------------------------------------------------------------------------------
# peak_series
# ---------------------------------------------------------------------------------------------


def hourly_intervals(days: int = 3) -> pd.DataFrame:
    """Hourly intervals: online load 9..17 peaking at 10:00, a bigger batch spike at 03:00."""
    stamps = pd.date_range(START, periods=24 * days, freq="h")
    hour = stamps.hour.to_numpy()
    day = (stamps - START).days.to_numpy()
    online = np.where((hour >= 9) & (hour < 17), 100.0 + 10.0 * day - np.abs(hour - 10), 5.0)
    tps = np.where(hour == 3, 400.0, online)
    return pd.DataFrame({"interval_start_at": stamps, "tps": tps})


def test_peak_series_daily_max_and_hours_filter() -> None:
    rows = hourly_intervals()
    all_hours = peak_series(rows)
    assert isinstance(all_hours.index, pd.DatetimeIndex)
    assert all_hours.index.freqstr == "D"
    assert list(all_hours.index) == list(pd.date_range(START, periods=3, freq="D"))
    assert (all_hours == 400.0).all()  # the batch spike dominates

    online = peak_series(rows, hours=(8, 18))
    expected = rows[rows["interval_start_at"].dt.hour.between(8, 17)].groupby(
        rows["interval_start_at"].dt.normalize())["tps"].max()
    assert online.to_numpy() == pytest.approx(expected.to_numpy())
    assert online.to_numpy() == pytest.approx([100.0, 110.0, 120.0])


def test_peak_series_percentile() -> None:
    stamps = pd.date_range(START, periods=100, freq="min")
    values = np.arange(1.0, 101.0)
    rows = pd.DataFrame({"interval_start_at": stamps, "tps": values})
    assert peak_series(rows, stat="p95").item() == pytest.approx(np.percentile(values, 95))
    assert peak_series(rows, stat="p50").item() == pytest.approx(np.median(values))
    assert peak_series(rows, stat="max").item() == 100.0
    with pytest.raises(ValueError, match="pNN"):
        peak_series(rows, stat="p101")
    with pytest.raises(ValueError, match="pNN"):
        peak_series(rows, stat="mean")


def test_peak_series_min_intervals_drops_thin_periods() -> None:
    rows = hourly_intervals(days=4)
    day_two = rows["interval_start_at"].dt.normalize() == START + DAY
    day_four = rows["interval_start_at"].dt.normalize() == START + 3 * DAY
    hour = rows["interval_start_at"].dt.hour
    thinned = rows[(~day_two | (hour < 3)) & (~day_four | (hour < 2))]

    kept = peak_series(thinned, min_intervals=4)
    # Day 2 (3 intervals) stays as an interior gap; day 4 (2 intervals) falls off the end.
    assert list(kept.index) == list(pd.date_range(START, periods=3, freq="D"))
    assert kept.isna().tolist() == [False, True, False]
    assert peak_series(thinned).notna().all()
    with pytest.raises(ValueError, match="min_intervals"):
        peak_series(thinned, min_intervals=25)


def test_peak_series_weekly_periods_start_on_monday() -> None:
    rows = hourly_intervals(days=15)
    weekly = peak_series(rows, freq="W", hours=(9, 17))
    assert list(weekly.index) == [START, START + 7 * DAY, START + 14 * DAY]
    assert (weekly.index.day_of_week == 0).all()
    # The last day of each week carries its peak (load grows 10 tps a day).
    assert weekly.to_numpy() == pytest.approx([100.0 + 60.0, 100.0 + 130.0, 100.0 + 140.0])


@pytest.mark.parametrize("dropped", ["tps", "interval_start_at"])
def test_peak_series_names_missing_column(dropped: str) -> None:
    rows = hourly_intervals(days=1).drop(columns=[dropped])
    with pytest.raises(ValueError, match=f"missing column.*{dropped}"):
        peak_series(rows)


def test_peak_series_no_interval_left() -> None:
    rows = hourly_intervals(days=1)
    rows.loc[rows["interval_start_at"].dt.hour >= 20, "tps"] = np.nan
    with pytest.raises(ValueError, match="no interval"):
        peak_series(rows, hours=(20, 24))
    with pytest.raises(ValueError, match="hours"):
        peak_series(rows, hours=(22, 6))
    with pytest.raises(ValueError, match="freq"):
        peak_series(rows, freq="M")


def test_peak_series_feeds_fit_growth() -> None:
    # 30 days of 15-minute intervals with a daily online hump growing 3 tps a day.
    stamps = pd.date_range(START, periods=30 * 96, freq="15min")
    rng = np.random.default_rng(9)
    day = (stamps - START).days.to_numpy()
    hour = stamps.hour.to_numpy() + stamps.minute.to_numpy() / 60.0
    hump = np.clip(1.0 - ((hour - 11.0) / 4.0) ** 2, 0.0, None)
    tps = (150.0 + 3.0 * day) * hump + 10.0 + rng.normal(0.0, 1.0, len(stamps))
    peaks = peak_series(pd.DataFrame({"interval_start_at": stamps, "tps": tps}), stat="p95",
                        hours=(8, 15))
    results = fit_growth(peaks, candidates=("linear", "ets_trend"))
    slope = (results.forecast(11)["tps"].iloc[-1] - results.forecast(1)["tps"].iloc[0]) / 10.0
    assert slope == pytest.approx(3.0, rel=0.15)


def test_a_class_asked_several_questions_fits_its_growth_once(monkeypatch):
    # kneecap forecast asks one class several scenarios; the trend fit depends only on the history
    # and the growth policy, the crossings on the scenario's thresholds
    from types import SimpleNamespace

    from kneecap import forecasting

    stamps = pd.date_range(START, periods=30 * 24, freq="h")
    rng = np.random.default_rng(11)
    tps = 200.0 + 3.0 * np.arange(len(stamps)) / 24 + rng.normal(0.0, 2.0, len(stamps))
    results = SimpleNamespace(history=[[s.isoformat(), float(x)] for s, x in zip(stamps, tps, strict=True)])
    calls = []
    real_fit = growth.fit_growth
    monkeypatch.setattr(growth, "fit_growth", lambda *a, **k: calls.append(1) or real_fit(*a, **k))
    policy = forecasting.GrowthPolicy(horizon=120)
    forecasting._growth_fit.cache_clear()
    near = forecasting.class_growth(results, knee_tps=320.0, policy=policy)
    far = forecasting.class_growth(results, knee_tps=400.0, policy=policy)
    assert len(calls) == 1
    assert far["date_knee"] > near["date_knee"]
    near["peaks"].iloc[0] = -1.0  # a caller's change does not reach the cached fit
    again = forecasting.class_growth(results, knee_tps=320.0, policy=policy)
    assert again["date_knee"] == near["date_knee"] and again["peaks"].iloc[0] > 0
    forecasting.class_growth(results, knee_tps=320.0, policy=forecasting.GrowthPolicy(horizon=120, stat="p95"))
    assert len(calls) == 2


def test_a_six_day_class_gets_a_date_range_and_one_sentence():
    # issue #33: six days of SMF intervals printed "2026-06-10 (2026-06-10 .. 2026-06-10)"
    from types import SimpleNamespace

    from kneecap import forecasting

    stamps = pd.date_range(START, periods=6 * 24, freq="h")
    rng = np.random.default_rng(12)
    tps = 2000.0 + 40.0 * np.arange(len(stamps)) / 24 + rng.normal(0.0, 20.0, len(stamps))
    results = SimpleNamespace(history=[[s.isoformat(), float(x)] for s, x in zip(stamps, tps, strict=True)])
    forecasting._growth_fit.cache_clear()
    grown = forecasting.class_growth(results, knee_tps=2402.0, knee_tps_lo=2390.0, knee_tps_hi=2415.0,
                                     policy=forecasting.GrowthPolicy(horizon=120))
    assert len(grown["peaks"]) == 6 and len(grown["weights"]) >= 2
    assert grown["date_knee_lo"] <= grown["date_knee_earliest"] <= grown["date_knee"]
    assert grown["date_knee"] <= grown["date_knee_p90"] <= grown["date_knee_hi"]
    assert grown["date_knee_p90"] - grown["date_knee_earliest"] >= DAY
    for key in ("date_knee", "date_knee_earliest", "date_knee_p90"):
        assert grown[key] == grown[key].normalize(), key  # on a day
    sentence = forecasting.reach_sentence(grown, "knee", "knee")
    assert sentence == (f"knee reached by {grown['date_knee_p90']:%Y-%m-%d} with 90 % probability, earliest "
                        f"{grown['date_knee_earliest']:%Y-%m-%d}, most likely {grown['date_knee']:%Y-%m-%d}")


def test_reach_sentence_says_already_undated_and_beyond():
    from kneecap import forecasting

    day = pd.Timestamp("2026-06-10")
    dated = {"date_knee": day, "date_knee_earliest": day - 2 * DAY, "date_knee_p90": day + 3 * DAY,
             "knee_unreached_pct": 4.0, "knee_already": False}
    assert forecasting.reach_sentence(dated, "knee", "knee") == (
        "knee reached by 2026-06-13 with 90 % probability, earliest 2026-06-08, most likely 2026-06-10")
    # a CSV row: ISO strings, NaN for an empty date
    row = pd.Series({**{k: (v.date().isoformat() if isinstance(v, pd.Timestamp) else v) for k, v in dated.items()},
                     "date_knee_p90": math.nan, "knee_unreached_pct": 23.0})
    assert forecasting.reach_sentence(row, "knee", "knee", horizon_end=day + 30 * DAY) == (
        "knee may not be reached within the horizon (forecast to 2026-07-10): 23 % of the simulated paths do not "
        "reach it; earliest 2026-06-08, most likely 2026-06-10")
    beyond = {**dated, "date_knee": None, "date_knee_earliest": None, "date_knee_p90": None,
              "knee_unreached_pct": 98.0}
    assert forecasting.reach_sentence(beyond, "knee", "knee") == "knee not within the horizon"
    already = {**dated, "date_knee": day - 9 * DAY, "knee_already": True}
    assert forecasting.reach_sentence(already, "knee", "SLO load") == (
        "SLO load already reached: the peak first got there on 2026-06-01")
