"""Peaks from intervals: one peak throughput per calendar day or week, and the spacing of a peak series."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from kneecap.config import GrowthConfig

FREQ_OFFSETS = {"D": "D", "W": "W-MON"}
STAT_PATTERN = re.compile(r"^p(\d+(?:\.\d+)?)$")


def peak_series(
    intervals: pd.DataFrame,
    *,
    freq: str = GrowthConfig.freq,
    stat: str = GrowthConfig.stat,
    hours: tuple[int, int] | None = None,
    min_intervals: int = 1,
) -> pd.Series:
    """One peak throughput per calendar day or week from RMF interval rows.

    Parameters
    ----------
    intervals : pandas.DataFrame
        Columns ``interval_start_at`` (datetime64, or anything :func:`pandas.to_datetime` reads)
        and ``tps`` (transactions per second over the interval). Rows with a missing ``tps`` are
        ignored. Time-zone-aware stamps are read in their own wall-clock time.
    freq : {"D", "W"}
        Calendar period: a day, or an ISO week (Monday to Sunday).
    stat : str
        ``"max"`` for the busiest interval of the period, or ``"pNN"`` (e.g. ``"p95"``,
        ``"p99.5"``) for the NN-th percentile of the period's intervals (numpy's default linear
        interpolation between order statistics). A high percentile is less sensitive to one
        freak interval than the maximum.
    hours : tuple of int, optional
        ``(start, end)`` with ``0 <= start < end <= 24``: keep only intervals whose start hour
        ``h`` satisfies ``start <= h < end`` (the online day's peak hours). Windows that wrap
        midnight are not supported, because they would split one night over two calendar days.
    min_intervals : int
        Periods with fewer kept intervals than this are dropped (a half-measured day understates
        its peak).

    Returns
    -------
    pandas.Series
        Named ``peak_tps``, indexed by period start (``period_start``: midnight, or the Monday of
        the week) on a regular :class:`pandas.DatetimeIndex` with ``freq`` set, from the first to
        the last period that has a value. Periods inside that range with no (or too few)
        intervals are present as NaN; :func:`fit_growth` interpolates them linearly for fitting
        and leaves them out of the error it scores.

    Raises
    ------
    ValueError
        A required column is missing, an option is malformed, or no interval is left after
        filtering.

    Examples
    --------
    >>> rows = pd.DataFrame({
    ...     "interval_start_at": pd.to_datetime(["2026-01-05 09:00", "2026-01-05 10:00",
    ...                                          "2026-01-06 09:00"]),
    ...     "tps": [120.0, 150.0, 130.0]})
    >>> peak_series(rows).tolist()
    [150.0, 130.0]
    """
    missing = [col for col in ("interval_start_at", "tps") if col not in intervals.columns]
    if missing:
        raise ValueError(
            f"peak_series: missing column(s) {', '.join(missing)}; "
            f"got {', '.join(map(str, intervals.columns)) or 'no columns'}"
        )
    if freq not in FREQ_OFFSETS:
        raise ValueError(f"peak_series: freq must be one of {sorted(FREQ_OFFSETS)}, got {freq!r}")
    quantile = parse_stat(stat)
    if hours is not None:
        start_hour, end_hour = hours
        if not (0 <= start_hour < end_hour <= 24):
            raise ValueError(
                "peak_series: hours must be (start, end) with 0 <= start < end <= 24, "
                f"got {hours!r}"
            )
    if int(min_intervals) != min_intervals or min_intervals < 1:
        raise ValueError(
            f"peak_series: min_intervals must be a whole number >= 1, got {min_intervals!r}"
        )

    started = pd.to_datetime(intervals["interval_start_at"])
    if getattr(started.dt, "tz", None) is not None:
        # Peak hours are meant in the LPAR's local clock, which is the stamp's own wall time.
        started = started.dt.tz_localize(None)
    tps = pd.to_numeric(intervals["tps"], errors="coerce")
    keep = tps.notna() & started.notna()
    if hours is not None:
        keep &= (started.dt.hour >= hours[0]) & (started.dt.hour < hours[1])
    started, tps = started[keep], tps[keep]
    if tps.empty:
        window = f" in hours [{hours[0]}, {hours[1]})" if hours is not None else ""
        raise ValueError(f"peak_series: no interval with a tps value left{window}")

    period_start = started.dt.to_period(freq).dt.start_time.rename("period_start")
    grouped = tps.groupby(period_start)
    peak_tps = grouped.max() if quantile is None else grouped.quantile(quantile)
    counts = grouped.size()
    peak_tps = peak_tps[counts >= min_intervals]
    if peak_tps.empty:
        raise ValueError(
            f"peak_series: no period has at least min_intervals={min_intervals} intervals "
            f"(most in one period: {int(counts.max())})"
        )
    full_index = pd.date_range(peak_tps.index.min(), peak_tps.index.max(), freq=FREQ_OFFSETS[freq],
                               name="period_start")
    return peak_tps.reindex(full_index).astype(float).rename("peak_tps")


def parse_stat(stat: str) -> float | None:
    """The quantile in [0, 1] a ``stat`` asks for, or None for ``"max"``."""
    if stat == "max":
        return None
    match = STAT_PATTERN.match(str(stat))
    if match is None or not 0.0 < float(match.group(1)) <= 100.0:
        raise ValueError(
            f"peak_series: stat must be 'max' or 'pNN' with 0 < NN <= 100, got {stat!r}"
        )
    return float(match.group(1)) / 100.0


def regular_freq(index: pd.DatetimeIndex) -> pd.DateOffset:
    """The index's spacing as an offset, or ValueError if it has none.

    An index with whole missing periods (e.g. after ``dropna()``) is accepted when every gap is a
    whole multiple of its smallest step; the caller re-inserts the missing periods as NaN.
    """
    freq = index.freq
    if freq is None and len(index) >= 3:
        inferred = pd.infer_freq(index)
        freq = pd.tseries.frequencies.to_offset(inferred) if inferred else None
    if freq is None and len(index) >= 2:
        day_counts = np.diff(index.normalize().to_numpy()) / np.timedelta64(1, "D")
        smallest = day_counts.min()
        whole_days = bool(np.all(index == index.normalize()))
        if whole_days and smallest >= 1 and np.all(day_counts % smallest == 0):
            step_days = int(smallest)
            freq = (pd.offsets.Week(weekday=int(index[0].weekday())) if step_days == 7
                    else pd.offsets.Day(step_days))
    if freq is None:
        raise ValueError(
            "fit_growth: peaks need a regular, increasing DatetimeIndex (one value per day or "
            "week, as peak_series returns)"
        )
    return freq


def is_daily(freq: pd.DateOffset) -> bool:
    return pd.Timedelta(days=1) == offset_length(freq)


def freq_label(freq: pd.DateOffset) -> str:
    if is_daily(freq):
        return "daily"
    if isinstance(freq, pd.offsets.Week) and freq.n == 1:
        return "weekly"
    return freq.freqstr


def offset_length(freq: pd.DateOffset) -> pd.Timedelta | None:
    try:
        return pd.Timedelta(freq)
    except (TypeError, ValueError):
        return None
