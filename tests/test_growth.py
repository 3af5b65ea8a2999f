"""kneecap.growth: peak series, growth-model selection and knee-crossing dates."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kneecap import growth
from kneecap.growth import crossing_date, fit_growth, peak_series

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


# ---------------------------------------------------------------------------------------------
# Crossing dates on a known trend
# ---------------------------------------------------------------------------------------------


def test_crossing_date_recovers_known_linear_trend(trend_fit: growth.GrowthResults) -> None:
    peaks = trend_fit.history
    last_time = peaks.index[-1]
    days_ahead = 40
    # The noise-free trend reaches the threshold exactly `days_ahead` days after the last peak.
    threshold_tps = 100.0 + 2.0 * (len(peaks) - 1 + days_ahead)
    true_date = last_time + days_ahead * DAY

    crossing = crossing_date(trend_fit, threshold_tps)

    assert crossing["already"] is False
    estimated_days = (crossing["date"] - last_time) / DAY
    assert abs(estimated_days - days_ahead) <= 0.10 * days_ahead
    assert crossing["date_lo"] <= true_date <= crossing["date_hi"]
    assert crossing["date_lo"] <= crossing["date"] <= crossing["date_hi"]
    assert crossing["horizon_end"] == last_time + 730 * DAY
    assert all(isinstance(crossing[key], pd.Timestamp) for key in ("date", "date_lo", "date_hi"))


def test_linear_baseline_alone_also_recovers_the_trend() -> None:
    peaks = linear_trend(seed=11)
    results = fit_growth(peaks, candidates=("linear",))
    assert results.method == "linear"
    assert list(results.competitors["method"]) == ["linear"]
    threshold_tps = 100.0 + 2.0 * (len(peaks) - 1 + 40)
    crossing = crossing_date(results, threshold_tps)
    assert abs((crossing["date"] - peaks.index[-1]) / DAY - 40) <= 4
    assert crossing["date_lo"] <= peaks.index[-1] + 40 * DAY <= crossing["date_hi"]


def test_crossing_time_is_interpolated_between_periods() -> None:
    # A noiseless line, fitted by OLS, reaches the threshold half-way through a day.
    peaks = daily(100.0 + 2.0 * np.arange(20))
    results = fit_growth(peaks, candidates=("linear",))
    threshold_tps = 100.0 + 2.0 * (19 + 10.5)
    crossing = crossing_date(results, threshold_tps)
    expected = peaks.index[-1] + pd.Timedelta(days=10.5)
    for key in ("date", "date_lo", "date_hi"):
        assert abs(crossing[key] - expected) <= pd.Timedelta(seconds=1), key


def test_knee_interval_widens_the_date_range(trend_fit: growth.GrowthResults) -> None:
    threshold_tps = 260.0
    plain = crossing_date(trend_fit, threshold_tps)
    widened = crossing_date(trend_fit, threshold_tps, threshold_lo=240.0, threshold_hi=280.0)
    assert widened["date"] == plain["date"]
    assert widened["date_lo"] < plain["date_lo"]
    assert widened["date_hi"] > plain["date_hi"]


def test_crossing_date_rejects_unordered_thresholds(trend_fit: growth.GrowthResults) -> None:
    with pytest.raises(ValueError, match="threshold_lo <= threshold_tps <= threshold_hi"):
        crossing_date(trend_fit, 250.0, threshold_lo=260.0)
    with pytest.raises(ValueError, match="finite"):
        crossing_date(trend_fit, math.nan)


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


def test_failing_candidate_is_recorded_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    real_fit = growth._fit_candidate

    def fit_or_fail(method: str, y: np.ndarray):
        if method == "ets_damped":
            raise np.linalg.LinAlgError("singular matrix")
        return real_fit(method, y)

    monkeypatch.setattr(growth, "_fit_candidate", fit_or_fail)
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
    crossing = crossing_date(results, 300.0, horizon=365)
    assert crossing["date"] is None
    assert crossing["date_hi"] is None
    assert crossing["already"] is False
    assert crossing["horizon_end"] == peaks.index[-1] + 365 * DAY

    below = crossing_date(results, 150.0)
    assert below["already"] is True
    assert below["date"] == peaks.index[0]  # every observed peak is above 150
    assert below["date_lo"] <= below["date"] <= below["date_hi"]


def test_already_reached_dates_first_observed_period(trend_fit: growth.GrowthResults) -> None:
    peaks = trend_fit.history
    threshold_tps = 150.0
    crossing = crossing_date(trend_fit, threshold_tps)
    assert crossing["already"] is True
    first_at_or_above = peaks.index[np.argmax(peaks.to_numpy() >= threshold_tps)]
    assert crossing["date"] == first_at_or_above
    assert crossing["date"] in peaks.index
    assert peaks[crossing["date"]] >= threshold_tps
    assert (peaks[peaks.index < crossing["date"]] < threshold_tps).all()


def _as_time(date: pd.Timestamp | None) -> pd.Timestamp:
    return pd.Timestamp.max if date is None else date


def test_dates_monotone_over_thresholds(trend_fit: growth.GrowthResults) -> None:
    # From well inside the history to beyond the two-year horizon.
    thresholds = np.linspace(120.0, 2000.0, 25)
    crossings = [crossing_date(trend_fit, float(thr), horizon=400) for thr in thresholds]
    for key in ("date", "date_lo", "date_hi"):
        times = [_as_time(crossing[key]) for crossing in crossings]
        assert times == sorted(times), key
    assert crossings[0]["already"] and not crossings[-1]["already"]
    assert crossings[-1]["date"] is None


@settings(max_examples=40, deadline=None)
@given(low=st.floats(50.0, 1500.0), extra=st.floats(0.0, 500.0))
def test_higher_threshold_never_earlier(trend_fit: growth.GrowthResults, low: float,
                                        extra: float) -> None:
    earlier = crossing_date(trend_fit, low, horizon=365)
    later = crossing_date(trend_fit, low + extra, horizon=365)
    for key in ("date", "date_lo", "date_hi"):
        assert _as_time(earlier[key]) <= _as_time(later[key])


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
