r"""When, at our growth rate, a class's peak load reaches its knee.

Pure functions over a history of RMF interval throughput (no file I/O, no tracking, no UI):

1. :func:`peak_series` turns interval rows (``interval_start_at``, ``tps``) into one peak value per
   calendar day or week;
2. :func:`fit_growth` fits competing trend models to those peaks and keeps the one with the lowest
   rolling-origin (time-series cross-validation) mean absolute percentage error;
3. :meth:`GrowthResults.simulate` draws whole future paths of the peak from every candidate,
   in proportion to its rolling-origin weight, and :func:`crossing_date` reads off the
   distribution of when they reach a threshold such as a fitted knee's throughput (itself
   uncertain); :func:`round_to_periods` puts those dates on period starts.

Candidates (all from statsmodels):

``linear``
    OLS trend :math:`y_t = \beta_0 + \beta_1 t + \varepsilon_t`, the naive baseline, always
    present.
``ets_trend``
    ETS(A,A,N), Holt's linear trend with additive errors.
``ets_damped``
    ETS(A,Ad,N), Gardner-McKenzie damped trend with additive errors.
``ets_weekly``
    ETS(A,A,A), additive Holt-Winters with period 7 (daily series only).
``sarimax_weekly``
    SARIMA(0,1,1)(0,1,1)\ :sub:`7`, the "airline" model with period 7 (daily series only).

References
----------
.. [1] R. J. Hyndman and G. Athanasopoulos, *Forecasting: Principles and Practice*, 3rd ed.,
   OTexts, 2021. §5.10 (time-series cross-validation), ch. 7 (linear trend regression), ch. 8
   (exponential smoothing: §8.2 trend methods, §8.3 Holt-Winters, §8.5 ETS state space models,
   §8.7 prediction intervals), §9.9 (seasonal ARIMA). https://otexts.com/fpp3/
.. [2] statsmodels 0.15 documentation: ``statsmodels.tsa.exponential_smoothing.ets.ETSModel``,
   ``statsmodels.tsa.statespace.sarimax.SARIMAX``, ``statsmodels.regression.linear_model.OLS``
   (``get_prediction(...).summary_frame``). https://www.statsmodels.org/
"""

from __future__ import annotations

import contextlib
import math
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

#: Every candidate :func:`fit_growth` knows, simplest first (ties in error go to the earlier one).
CANDIDATES = ("linear", "ets_trend", "ets_damped", "ets_weekly", "sarimax_weekly")
#: Candidates that model a weekly cycle; offered only on daily series of at least
#: :data:`MIN_SEASONAL_POINTS` periods.
SEASONAL_CANDIDATES = frozenset({"ets_weekly", "sarimax_weekly"})
#: Days in the weekly cycle of a daily series.
WEEKLY_PERIOD = 7
#: Fewest periods :func:`fit_growth` accepts (a trend plus a residual spread needs more than 3).
MIN_POINTS = 4
#: Fewest daily periods (three full weeks) before a weekly-seasonal candidate is offered.
MIN_SEASONAL_POINTS = 3 * WEEKLY_PERIOD
#: Longest look-ahead, in periods, scored at each rolling origin (one week of daily peaks).
CV_STEPS = 7
#: Most rolling origins scored per candidate; each origin is a refit, and refits dominate run time.
MAX_ORIGINS = 8
#: Shortest training window at a rolling origin: 3 for the trend-only candidates (OLS needs one
#: residual degree of freedom), two full cycles for the seasonal ones (statsmodels' heuristic
#: start values for the seasonal states need them).
_MIN_TRAIN = 3
_MIN_TRAIN_SEASONAL = 2 * WEEKLY_PERIOD

#: MAPEs within this fraction of the best (plus 1e-9 points) are ties, resolved towards the
#: simpler model: on a short, near-straight history ETS settles on the OLS line and wins by
#: optimiser noise, while OLS' t-based interval is the more honest about parameter uncertainty.
_TIE_RELATIVE = 1e-4

#: Future peak paths :meth:`GrowthResults.simulate` draws by default. The Monte Carlo error of a
#: 5 % or 90 % quantile of 2,000 draws is about 0.5-0.7 percentage points of probability.
N_PATHS = 2000
#: The crossing-time quantile reported as the earliest plausible date (``date_earliest``).
EARLIEST_QUANTILE = 0.05
#: The crossing-time quantile reported as "reached by this date with 90 % probability"
#: (``date_p90``); when more than ``1 - REACHED_BY_QUANTILE`` of the paths never reach the
#: threshold within the horizon it is ``None``.
REACHED_BY_QUANTILE = 0.90
#: Rolling-origin MAPE floor (%) before it is squared and inverted into a weight: a noiseless
#: series scores ~1e-14 % and would otherwise overflow.
_WEIGHT_MAPE_FLOOR_PCT = 1e-6

_FREQ_OFFSETS = {"D": "D", "W": "W-MON"}
_STAT_PATTERN = re.compile(r"^p(\d+(?:\.\d+)?)$")


# --------------------------------------------------------------------------------------------
# Peaks from intervals
# --------------------------------------------------------------------------------------------


def peak_series(
    intervals: pd.DataFrame,
    *,
    freq: str = "D",
    stat: str = "max",
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
    if freq not in _FREQ_OFFSETS:
        raise ValueError(f"peak_series: freq must be one of {sorted(_FREQ_OFFSETS)}, got {freq!r}")
    quantile = _parse_stat(stat)
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
    full_index = pd.date_range(peak_tps.index.min(), peak_tps.index.max(), freq=_FREQ_OFFSETS[freq],
                               name="period_start")
    return peak_tps.reindex(full_index).astype(float).rename("peak_tps")


def _parse_stat(stat: str) -> float | None:
    """The quantile in [0, 1] a ``stat`` asks for, or None for ``"max"``."""
    if stat == "max":
        return None
    match = _STAT_PATTERN.match(str(stat))
    if match is None or not 0.0 < float(match.group(1)) <= 100.0:
        raise ValueError(
            f"peak_series: stat must be 'max' or 'pNN' with 0 < NN <= 100, got {stat!r}"
        )
    return float(match.group(1)) / 100.0


# --------------------------------------------------------------------------------------------
# Fitting
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _quiet_single_thread() -> Iterator[None]:
    """Silence statsmodels' fit chatter and keep BLAS on one thread, for this block only.

    The matrices in these fits are tiny; on a shared two-core machine OpenBLAS' thread hand-off
    made one SARIMAX fit take seconds instead of a tenth of one.
    """
    from statsmodels.tools.sm_exceptions import (
        ConvergenceWarning,
        EstimationWarning,
        ValueWarning,
    )

    with contextlib.ExitStack() as stack:
        stack.enter_context(warnings.catch_warnings())
        for category in (ConvergenceWarning, EstimationWarning, ValueWarning):
            warnings.simplefilter("ignore", category)
        # Optimisers probing extreme smoothing parameters overflow harmlessly on the way.
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"statsmodels\.")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"scipy\.")
        from threadpoolctl import threadpool_limits

        stack.enter_context(threadpool_limits(limits=1, user_api="blas"))
        yield


def _fit_candidate(method: str, y: np.ndarray) -> Any:
    """Fit one candidate to ``y`` (positions 0..n-1); return the statsmodels results object."""
    if method == "linear":
        # Not statsmodels.api: importing that pulls in every model and costs seconds.
        from statsmodels.regression.linear_model import OLS

        return OLS(y, _trend_design(0, len(y))).fit()
    if method in ("ets_trend", "ets_damped", "ets_weekly"):
        from statsmodels.tsa.exponential_smoothing.ets import ETSModel

        seasonal = method == "ets_weekly"
        # A RangeIndex Series, not an ndarray: ETS get_prediction in statsmodels 0.15 needs the
        # predicted mean to carry an index.
        model = ETSModel(
            pd.Series(y),
            error="add",
            trend="add",
            damped_trend=method == "ets_damped",
            seasonal="add" if seasonal else None,
            seasonal_periods=WEEKLY_PERIOD if seasonal else None,
        )
        return model.fit(disp=False)
    if method == "sarimax_weekly":
        from statsmodels.tsa.statespace.sarimax import SARIMAX

        model = SARIMAX(y, order=(0, 1, 1), seasonal_order=(0, 1, 1, WEEKLY_PERIOD))
        return model.fit(disp=False)
    raise ValueError(f"unknown growth method {method!r}; known: {', '.join(CANDIDATES)}")


def _trend_design(first: int, count: int) -> np.ndarray:
    """OLS design rows ``[1, t]`` for positions first .. first+count-1."""
    t = np.arange(first, first + count, dtype=float)
    return np.column_stack([np.ones_like(t), t])


def _point_forecast(method: str, fitted: Any, n_train: int, steps: int) -> np.ndarray:
    """Point forecasts for positions n_train .. n_train+steps-1."""
    if method == "linear":
        return np.asarray(fitted.predict(_trend_design(n_train, steps)), dtype=float)
    return np.asarray(fitted.forecast(steps), dtype=float)


def _interval_forecast(
    method: str, fitted: Any, n_train: int, steps: int, alpha: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point forecast and (1 - alpha) prediction interval for the next ``steps`` positions."""
    if method == "linear":
        frame = fitted.get_prediction(_trend_design(n_train, steps)).summary_frame(alpha=alpha)
        return (frame["mean"].to_numpy(float), frame["obs_ci_lower"].to_numpy(float),
                frame["obs_ci_upper"].to_numpy(float))
    if method.startswith("ets"):
        # Additive-error ETS has closed-form forecast variances (FPP3 §8.7), which statsmodels
        # uses ("exact"); random_state only matters if it ever falls back to simulation.
        frame = fitted.get_prediction(start=n_train, end=n_train + steps - 1,
                                      random_state=seed).summary_frame(alpha=alpha)
        return (frame["mean"].to_numpy(float), frame["pi_lower"].to_numpy(float),
                frame["pi_upper"].to_numpy(float))
    # SARIMAX forecast intervals include the observation noise, so they are prediction intervals.
    frame = fitted.get_forecast(steps).summary_frame(alpha=alpha)
    return (frame["mean"].to_numpy(float), frame["mean_ci_lower"].to_numpy(float),
            frame["mean_ci_upper"].to_numpy(float))


def _did_not_converge(fitted: Any) -> bool:
    retvals = getattr(fitted, "mle_retvals", None)
    return isinstance(retvals, dict) and retvals.get("converged") is False


@dataclass
class GrowthResults:
    """A chosen growth model for one class's peak throughput, ready to forecast.

    Attributes
    ----------
    method : str
        The chosen candidate (one of :data:`CANDIDATES`).
    competitors : pandas.DataFrame
        One row per candidate considered: ``method``, ``rolling_origin_mape_pct`` (NaN when the
        candidate was not offered or failed), ``chosen`` and ``note`` (why it was not offered,
        why it failed, or how it was scored).
    history : pandas.Series
        The peaks fitted: the input with leading and trailing NaN removed; interior NaN stay NaN
        here (they were interpolated for fitting only).
    alpha : float
        Prediction intervals are (1 - alpha) intervals.
    freq : pandas.DateOffset
        Spacing of ``history`` and of the forecast periods.
    fitted : object
        The statsmodels results of ``method`` fitted on the whole history.
    fitted_values : numpy.ndarray
        The series the final model saw (``history`` with interior gaps interpolated).
    seed : int
        Random state of :meth:`simulate` (and of simulation-based intervals).
    candidate_fits : dict
        The statsmodels results of every candidate that was fitted and scored on the whole
        history (the chosen one among them), by method.
    """

    method: str
    competitors: pd.DataFrame
    history: pd.Series
    alpha: float
    freq: pd.DateOffset
    fitted: Any = field(repr=False)
    fitted_values: np.ndarray = field(repr=False)
    seed: int = 0
    candidate_fits: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def weights(self) -> pd.Series:
        r"""Each candidate's share of the simulated futures, from its rolling-origin error.

        Inverse squared MAPE, normalised:
        :math:`w_m \propto 1 / \mathrm{MAPE}_m^2`. For zero-mean normal errors the mean absolute
        error is :math:`\sigma \sqrt{2/\pi}`, so these are Bates and Granger's inverse-MSE
        combination weights computed from the score :func:`fit_growth` keeps. Candidates that
        were not offered, failed or were not scored get none; when nothing was scored the chosen
        method gets all.

        A trend candidate earns paths by this score alone, whatever its parameter count
        :math:`k` (``linear`` 2; ``ets_trend`` 4 and ``ets_damped`` 5: smoothing parameters,
        damping and initial states). A count rule was considered and is not applied: forecast's
        ``ets()`` does not estimate a damped trend on :math:`n \le k + 4` points [2]_, and
        Akaike's final prediction error scales a mean squared error by :math:`(n + k) / (n - k)`
        [3]_; on six daily peaks the first leaves the straight line alone and the second
        divides the damped trend's weight relative to the line's by 5.5 (11 against 2). Six
        points cannot tell a line from growth that slows or stops, and the paths must keep both
        forms: without the damped trend a knee that a levelling-off load never reaches is dated
        as if the line went on, and with less of it the 90 % date of a slowing load comes too
        early (measured on synthetic truth in ``tests/test_growth.py``). The cost is that a linear load on six
        points is often answered "may not be reached within the horizon" rather than dated.
        The weekly-seasonal candidates are gated by :data:`MIN_SEASONAL_POINTS`, because their
        seasonal states need whole cycles to be estimated at all.

        References
        ----------
        .. [1] J. M. Bates and C. W. J. Granger, "The combination of forecasts", *Operational
           Research Quarterly* 20 (1969) 451-468.
        .. [2] R. J. Hyndman et al., R package ``forecast``, ``ets()`` (``R/ets.R``: "Not
           enough data to use damping" when ``n <= npars + 4``).
           https://github.com/robjhyndman/forecast
        .. [3] H. Akaike, "Fitting autoregressive models for prediction", *Annals of the
           Institute of Statistical Mathematics* 21 (1969) 243-247.
        """
        fits = self.candidate_fits or {self.method: self.fitted}
        return _candidate_weights(self.competitors, fits, self.method)

    def simulate(self, horizon: int, *, n_paths: int = N_PATHS,
                 seed: int | None = None) -> PeakPaths:
        r"""Whole future paths of the peak, from every candidate in proportion to its weight.

        ``n_paths`` are allotted to the candidates by :attr:`weights` (largest remainders), so a
        short history that several trend forms fit about equally well does not yield the one
        straight line of the chosen candidate. Each candidate's paths:

        - ``linear``: the OLS posterior predictive (parameters drawn from the coefficient
          covariance with :math:`\sigma^2` drawn from its scaled inverse chi-square, plus
          residual noise), whose per-step quantiles are the t-based ``obs_ci``;
        - ETS: ``ETSResults.simulate(anchor="end")`` (innovations carried through level, trend
          and season), each path with its own noise scale and its own draw of the initial states,
          as for OLS, given the smoothing parameters at their estimates (:func:`_simulate_ets`);
        - ``sarimax_weekly``: ``SARIMAXResults.simulate(anchor="end")`` at the estimated
          parameters.

        Parameters
        ----------
        horizon : int
            Future periods per path (>= 1).
        n_paths : int
            Paths drawn (>= 100).
        seed : int, optional
            Random state; default :attr:`seed`. The same seed gives the same paths.

        Returns
        -------
        PeakPaths

        References
        ----------
        .. [1] R. J. Hyndman and G. Athanasopoulos, *Forecasting: Principles and Practice*, 3rd
           ed., OTexts, 2021, §5.5 (simulated future sample paths), §8.7 (ETS prediction
           intervals). https://otexts.com/fpp3/
        .. [2] A. Gelman et al., *Bayesian Data Analysis*, 3rd ed., CRC Press, 2013, §14.2
           (the posterior predictive of normal linear regression under a flat prior).
        """
        if int(horizon) != horizon or horizon < 1:
            raise ValueError(f"simulate: horizon must be a whole number >= 1, got {horizon!r}")
        if int(n_paths) != n_paths or n_paths < 100:
            raise ValueError(f"simulate: n_paths must be a whole number >= 100, got {n_paths!r}")
        return _simulate(self, int(horizon), int(n_paths), self.seed if seed is None else int(seed))

    def forecast(self, horizon: int) -> pd.DataFrame:
        """Forecast the next ``horizon`` periods after the last observed one.

        Parameters
        ----------
        horizon : int
            Number of future periods (>= 1).

        Returns
        -------
        pandas.DataFrame
            Indexed by future period start (``period_start``), columns ``tps`` (point forecast),
            ``tps_lo`` and ``tps_hi`` (the (1 - alpha) prediction interval: OLS ``obs_ci``, the
            closed-form ETS interval, or the SARIMAX forecast interval). All three are clipped
            at 0 because a throughput cannot be negative.
        """
        if int(horizon) != horizon or horizon < 1:
            raise ValueError(f"forecast: horizon must be a whole number >= 1, got {horizon!r}")
        horizon = int(horizon)
        with _quiet_single_thread():
            mean, lower, upper = _interval_forecast(
                self.method, self.fitted, len(self.fitted_values), horizon, self.alpha, self.seed
            )
        index = pd.date_range(self.history.index[-1] + self.freq, periods=horizon, freq=self.freq,
                              name="period_start")
        return pd.DataFrame(
            {"tps": np.clip(mean, 0.0, None), "tps_lo": np.clip(lower, 0.0, None),
             "tps_hi": np.clip(upper, 0.0, None)},
            index=index,
        )

    def summary(self) -> str:
        """One line: the chosen method, its error against the baseline's, and the history."""
        errors = self.competitors.set_index("method")["rolling_origin_mape_pct"]
        evaluated = int(errors.notna().sum())
        chosen_error = errors.get(self.method, math.nan)
        baseline = errors.get("linear", math.nan)
        observed = self.history.dropna()
        return (
            f"{self.method} chosen from {evaluated} evaluated candidate(s) "
            f"(rolling-origin MAPE {chosen_error:.2f}% vs linear {baseline:.2f}%) on "
            f"{len(observed)} {_freq_label(self.freq)} peaks {self.history.index[0]:%Y-%m-%d}.."
            f"{self.history.index[-1]:%Y-%m-%d}, last peak {observed.iloc[-1]:.1f} tps"
        )


def _regular_freq(index: pd.DatetimeIndex) -> pd.DateOffset:
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


def _is_daily(freq: pd.DateOffset) -> bool:
    return pd.Timedelta(days=1) == _offset_length(freq)


def _freq_label(freq: pd.DateOffset) -> str:
    if _is_daily(freq):
        return "daily"
    if isinstance(freq, pd.offsets.Week) and freq.n == 1:
        return "weekly"
    return freq.freqstr


def _offset_length(freq: pd.DateOffset) -> pd.Timedelta | None:
    try:
        return pd.Timedelta(freq)
    except (TypeError, ValueError):
        return None


def _rolling_origins(n: int, min_train: int) -> list[int]:
    """Training-window lengths at which to score.

    At most :data:`MAX_ORIGINS`, evenly spread, always including the latest (n - 1, which scores one
    step).
    """
    if n <= min_train:
        return []
    spread = np.linspace(min_train, n - 1, num=min(MAX_ORIGINS, n - min_train))
    return sorted({int(round(origin)) for origin in spread})


def _rolling_origin_mape(method: str, y: np.ndarray, observed: np.ndarray,
                         origins: list[int]) -> tuple[float, int]:
    """Pooled MAPE (%) over every scored forecast and the number of errors pooled.

    Raises whatever the candidate's fit raises; a non-finite forecast raises FloatingPointError.
    """
    abs_pct_errors: list[np.ndarray] = []
    for origin in origins:
        steps = min(CV_STEPS, len(y) - origin)
        fitted = _fit_candidate(method, y[:origin])
        forecast = _point_forecast(method, fitted, origin, steps)
        if not np.all(np.isfinite(forecast)):
            raise FloatingPointError(f"non-finite forecast from origin {origin}")
        actual = y[origin:origin + steps]
        # Interpolated gaps are not data, and an APE is undefined at a zero actual.
        scored = observed[origin:origin + steps] & (actual > 0)
        abs_pct_errors.append(np.abs(actual[scored] - forecast[scored]) / actual[scored])
    pooled = np.concatenate(abs_pct_errors) if abs_pct_errors else np.array([])
    if pooled.size == 0:
        return math.nan, 0
    return 100.0 * float(pooled.mean()), int(pooled.size)


def fit_growth(
    peaks: pd.Series,
    *,
    alpha: float = 0.05,
    candidates: tuple[str, ...] | None = None,
    seed: int = 0,
) -> GrowthResults:
    r"""Fit competing growth models to a peak series and keep the best forecaster.

    Candidates (see the module docstring; ``h`` is the look-ahead, :math:`\ell` level,
    :math:`b` trend, :math:`s` season, :math:`m = 7`):

    - ``linear``: OLS of peak tps on the period number, :math:`\hat y_{T+h} = \hat\beta_0 +
      \hat\beta_1 (T+h)`; always fitted, whatever ``candidates`` says, as the naive baseline.
    - ``ets_trend``, Holt's linear trend (FPP3 §8.2): :math:`\hat y_{t+h|t} = \ell_t + h b_t`,
      :math:`\ell_t = \alpha y_t + (1-\alpha)(\ell_{t-1} + b_{t-1})`,
      :math:`b_t = \beta^*(\ell_t - \ell_{t-1}) + (1-\beta^*) b_{t-1}`.
    - ``ets_damped``, damped trend (FPP3 §8.2): :math:`\hat y_{t+h|t} = \ell_t +
      (\phi + \phi^2 + \dots + \phi^h) b_t`, :math:`\ell_t = \alpha y_t + (1-\alpha)(\ell_{t-1}
      + \phi b_{t-1})`, :math:`b_t = \beta^*(\ell_t - \ell_{t-1}) + (1-\beta^*)\phi b_{t-1}`;
      growth levels off instead of continuing for ever.
    - ``ets_weekly``, additive Holt-Winters (FPP3 §8.3): :math:`\hat y_{t+h|t} = \ell_t + h b_t
      + s_{t+h-m(k+1)}`.
    - ``sarimax_weekly``: :math:`(1-B)(1-B^7) y_t = (1+\theta B)(1+\Theta B^7)\varepsilon_t`
      (FPP3 §9.9).

    The ETS models are statsmodels ``ETSModel`` with additive errors, fitted by maximum
    likelihood with estimated initial states. The two weekly candidates are offered only on a
    daily series of at least 21 periods (three full weeks); otherwise they are listed in
    ``competitors`` as not offered.

    Selection is by rolling-origin time-series cross-validation (FPP3 §5.10) with an expanding
    window and up to :data:`CV_STEPS`-step-ahead forecasts: at each origin ``k`` every candidate
    is refitted on periods ``0..k-1`` and forecasts periods ``k..k+6`` (fewer near the end); the
    absolute percentage errors of all those forecasts are pooled into one MAPE,
    :math:`100 \cdot \mathrm{mean}\,|y - \hat y| / |y|`. Origins start after 3 periods (14 when a
    weekly candidate is offered, so every candidate is scored on the same forecasts) and are
    thinned to at most :data:`MAX_ORIGINS`, evenly spread and always including the latest. The
    lowest MAPE wins; a tie (within 0.01 % of the best MAPE, i.e. optimiser noise) goes to the
    simpler candidate (earlier in :data:`CANDIDATES`).

    A candidate whose final fit raises, does not converge, or whose refits raise or forecast
    non-finite values is dropped and the reason is recorded in ``competitors.note``.

    Interior missing periods (NaN, e.g. from :func:`peak_series`) are linearly interpolated for
    fitting but never scored; leading and trailing NaN are dropped.

    Parameters
    ----------
    peaks : pandas.Series
        Peak tps on a regular daily or weekly :class:`pandas.DatetimeIndex` of period starts,
        as :func:`peak_series` returns.
    alpha : float
        Forecasts carry (1 - alpha) prediction intervals.
    candidates : tuple of str, optional
        Subset of :data:`CANDIDATES` to consider (default: all). ``linear`` is always added.
    seed : int
        Random state of :meth:`GrowthResults.simulate`. Every candidate's forecast interval here
        is closed-form and does not depend on it.

    Returns
    -------
    GrowthResults

    Raises
    ------
    ValueError
        Fewer than 4 observed periods, an irregular index, an unknown candidate or a bad alpha.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"fit_growth: alpha must be in (0, 1), got {alpha!r}")
    requested = CANDIDATES if candidates is None else tuple(dict.fromkeys(candidates))
    unknown = [name for name in requested if name not in CANDIDATES]
    if unknown:
        raise ValueError(
            f"fit_growth: unknown candidate(s) {unknown}; known: {', '.join(CANDIDATES)}"
        )
    if "linear" not in requested:
        requested = ("linear", *requested)
    requested = tuple(name for name in CANDIDATES if name in requested)

    if not isinstance(peaks.index, pd.DatetimeIndex):
        raise ValueError(
            "fit_growth: peaks need a DatetimeIndex of period starts (see peak_series)"
        )
    values = pd.to_numeric(peaks, errors="coerce").astype(float)
    n_observed = int(values.notna().sum())
    if n_observed < MIN_POINTS:
        raise ValueError(
            f"fit_growth needs at least {MIN_POINTS} observed periods to fit a trend, "
            f"got {n_observed}"
        )
    values = values[~values.index.duplicated(keep="last")].sort_index()
    freq = _regular_freq(values.index)
    first, last = values.first_valid_index(), values.last_valid_index()
    regular_index = pd.date_range(first, last, freq=freq, name=peaks.index.name or "period_start")
    if not values.index[values.notna().to_numpy()].isin(regular_index).all():
        raise ValueError("fit_growth: peaks' dates do not fall on one regular grid of periods")
    history = values.reindex(regular_index)
    history.name = peaks.name or "peak_tps"
    observed = history.notna().to_numpy()
    y = history.interpolate(method="linear").to_numpy(float)
    n = len(y)

    seasonal_ok = _is_daily(freq) and n >= MIN_SEASONAL_POINTS
    offered = [name for name in requested if seasonal_ok or name not in SEASONAL_CANDIDATES]
    any_seasonal = any(name in SEASONAL_CANDIDATES for name in offered)
    min_train = _MIN_TRAIN_SEASONAL if any_seasonal else _MIN_TRAIN
    origins = _rolling_origins(n, min_train)

    rows: list[dict[str, Any]] = []
    final_fits: dict[str, Any] = {}
    with _quiet_single_thread():
        for method in requested:
            row: dict[str, Any] = {"method": method, "rolling_origin_mape_pct": math.nan,
                                   "chosen": False, "note": ""}
            rows.append(row)
            if method not in offered:
                row["note"] = (f"not offered: weekly seasonality needs a daily series of at least "
                               f"{MIN_SEASONAL_POINTS} periods (3 full weeks); have {n} "
                               f"{_freq_label(freq)} periods")
                continue
            try:
                final = _fit_candidate(method, y)
                if _did_not_converge(final):
                    row["note"] = "dropped: optimiser did not converge on the full history"
                    continue
                mape_pct, n_errors = _rolling_origin_mape(method, y, observed, origins)
            except Exception as exc:  # noqa: BLE001
                if method == "linear":
                    raise  # the baseline failing means the data, not the model, is broken
                # statsmodels' optimisers and linear algebra raise many exception types
                # (ValueError, LinAlgError, IndexError, ...); any of them only drops a candidate.
                row["note"] = f"dropped: {type(exc).__name__}: {exc}"
                continue
            final_fits[method] = final
            row["rolling_origin_mape_pct"] = mape_pct
            row["note"] = (f"expanding window, {len(origins)} origin(s), "
                           f"up to {CV_STEPS}-step-ahead, {n_errors} scored forecast(s)")

    competitors = pd.DataFrame(rows,
                               columns=["method", "rolling_origin_mape_pct", "chosen", "note"])
    scored = competitors[competitors["method"].isin(list(final_fits))]
    finite = scored[np.isfinite(scored["rolling_origin_mape_pct"].astype(float))]
    if finite.empty:
        method = "linear"
    else:
        # Rows are in CANDIDATES order, so the first within noise of the best is the simplest
        # (a noiseless line scores ~1e-14 % for several models).
        best_pct = float(finite["rolling_origin_mape_pct"].min())
        near_best = finite["rolling_origin_mape_pct"] <= best_pct * (1 + _TIE_RELATIVE) + 1e-9
        method = str(finite.loc[near_best, "method"].iloc[0])
    competitors.loc[competitors["method"] == method, "chosen"] = True
    if finite.empty:
        competitors.loc[competitors["method"] == method, "note"] += (
            "; chosen by default (nothing scored)"
        )

    return GrowthResults(method=method, competitors=competitors, history=history,
                         alpha=float(alpha), freq=freq, fitted=final_fits[method],
                         fitted_values=y, seed=seed, candidate_fits=final_fits)


# --------------------------------------------------------------------------------------------
# Simulated futures and the crossing-date distribution
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PeakPaths:
    """Simulated future peaks: whole paths, drawn from every candidate in proportion to its weight.

    Attributes
    ----------
    paths_tps : numpy.ndarray
        ``(n_paths, horizon)`` simulated peak tps, clipped at 0; row ``i`` is one future.
    times : pandas.DatetimeIndex
        The ``horizon`` forecast period starts (the columns of ``paths_tps``).
    methods : numpy.ndarray
        ``(n_paths,)`` the candidate each path was drawn from.
    weights : pandas.Series
        Candidate weights (:attr:`GrowthResults.weights`) the paths were allotted by.
    history : pandas.Series
        The observed peaks (no NaN) the paths continue from.
    alpha : float
        ``date_lo`` / ``date_hi`` of :func:`crossing_date` are the ``alpha / 2`` and
        ``1 - alpha / 2`` quantiles.
    seed : int
        The random state the paths were drawn with; :func:`crossing_date` draws its threshold
        draws from it too.
    """

    paths_tps: np.ndarray = field(repr=False)
    times: pd.DatetimeIndex
    methods: np.ndarray = field(repr=False)
    weights: pd.Series
    history: pd.Series = field(repr=False)
    alpha: float
    seed: int


def _candidate_weights(competitors: pd.DataFrame, fitted: Any, chosen: str) -> pd.Series:
    """Inverse squared rolling-origin MAPE of every candidate that has a final fit, summing to 1."""
    errors = competitors.set_index("method")["rolling_origin_mape_pct"].astype(float)
    usable = [m for m in errors.index if m in fitted and math.isfinite(errors[m])]
    if not usable:
        return pd.Series({chosen: 1.0}, name="weight")
    floor = np.maximum(errors[usable].to_numpy(float), _WEIGHT_MAPE_FLOOR_PCT)
    raw = 1.0 / floor**2
    return pd.Series(raw / raw.sum(), index=usable, name="weight")


def _allot(n_paths: int, weights: np.ndarray) -> np.ndarray:
    """Whole path counts proportional to ``weights`` (largest remainders), summing to ``n_paths``."""
    exact = n_paths * weights
    counts = np.floor(exact).astype(int)
    short = n_paths - int(counts.sum())
    if short > 0:
        counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return counts


def _simulate_ols(fitted: Any, n_train: int, steps: int, count: int,
                  rng: np.random.Generator) -> np.ndarray:
    r"""OLS trend paths from the posterior predictive under a flat prior.

    :math:`\sigma^2 = s^2 \nu / \chi^2_\nu` (:math:`\nu` residual degrees of freedom),
    :math:`\beta \sim N(\hat\beta, \sigma^2 (X^\top X)^{-1})`, then
    :math:`y_{T+h} = \beta_0 + \beta_1 (T+h) + \varepsilon`, :math:`\varepsilon \sim N(0,
    \sigma^2)`: each step's marginal is the t-based ``obs_ci`` of :meth:`GrowthResults.forecast`.
    """
    df = float(fitted.df_resid)
    sigma2 = float(fitted.scale) * df / rng.chisquare(df, count)
    root = np.linalg.cholesky(np.asarray(fitted.normalized_cov_params, float))
    sigma = np.sqrt(sigma2)[:, None]
    beta = np.asarray(fitted.params, float) + sigma * (rng.standard_normal((count, 2)) @ root.T)
    mean = beta @ _trend_design(n_train, steps).T
    return mean + sigma * rng.standard_normal((count, steps))


def _simulate_ets(fitted: Any, steps: int, count: int, rng: np.random.Generator) -> np.ndarray:
    r"""``(count, steps)`` additive-ETS paths with the initial states and the noise scale drawn.

    With additive errors and the smoothing parameters held at their estimates, the one-step
    predictions and the forecasts are affine in the initial states :math:`s` (level, trend,
    seasonal): :math:`\hat y = c + A s`, :math:`\hat y_{T+h} = d + J s`, with :math:`A` and
    :math:`J` found exactly by unit steps. So, as for OLS, :math:`\sigma^2 = s^2 \nu /
    \chi^2_\nu` with :math:`\nu = n - \dim s`, :math:`s \sim N(\hat s, \sigma^2
    (A^\top A)^{-1})`, and statsmodels' ``simulate(anchor="end")`` carries innovations
    :math:`N(0, \sigma^2)` through the states. The smoothing parameters are not drawn: on a short
    history they often sit on a bound (:math:`\alpha \to 0`), where the Hessian is no covariance.
    """
    model = fitted.model
    params = np.asarray(fitted.params, float)
    states = [i for i, name in enumerate(model.param_names) if name.startswith("initial_")]
    at_estimate = model.smooth(params)
    one_step = np.asarray(at_estimate.fittedvalues, float)
    ahead = np.asarray(at_estimate.forecast(steps), float)
    design = np.empty((len(one_step), len(states)))
    jacobian = np.empty((steps, len(states)))
    for column, i in enumerate(states):
        moved = params.copy()
        moved[i] += 1.0
        stepped = model.smooth(moved)
        design[:, column] = np.asarray(stepped.fittedvalues, float) - one_step
        jacobian[:, column] = np.asarray(stepped.forecast(steps), float) - ahead
    resid = np.asarray(model.endog, float).ravel() - one_step
    df = max(len(resid) - len(states), 1)
    sigma = np.sqrt(float(resid @ resid) / df * df / rng.chisquare(df, count))
    _, singular, right = np.linalg.svd(design, full_matrices=False)
    keep = singular > singular.max() * 1e-10
    root = right[keep].T / singular[keep]  # (A'A)^-1 = root root'
    shift = (sigma[:, None] * (rng.standard_normal((count, int(keep.sum()))) @ root.T)) @ jacobian.T
    errors = sigma[None, :] * rng.standard_normal((steps, count))
    simulated = fitted.simulate(steps, anchor="end", repetitions=count, random_errors=errors)
    return np.asarray(simulated, float).reshape(steps, count).T + shift


def _simulate_candidate(method: str, fitted: Any, n_train: int, steps: int, count: int,
                        rng: np.random.Generator) -> np.ndarray:
    """``(count, steps)`` simulated future peaks from one fitted candidate."""
    if method == "linear":
        return _simulate_ols(fitted, n_train, steps, count, rng)
    if method.startswith("ets"):
        return _simulate_ets(fitted, steps, count, rng)
    # SARIMAX: statsmodels' state-space simulation from the last filtered state, at the estimates
    simulated = fitted.simulate(steps, anchor="end", repetitions=count, rng=rng)
    return np.asarray(simulated, float).reshape(steps, count).T


def _simulate(results: GrowthResults, horizon: int, n_paths: int, seed: int) -> PeakPaths:
    weights = results.weights
    counts = _allot(n_paths, weights.to_numpy(float))
    rng = np.random.default_rng(seed)
    blocks, methods = [], []
    n_train = len(results.fitted_values)
    with _quiet_single_thread():
        for method, count in zip(weights.index, counts, strict=True):
            if count:
                blocks.append(_simulate_candidate(method, results.candidate_fits[method], n_train,
                                                  horizon, int(count), rng))
                methods.extend([method] * int(count))
    times = pd.date_range(results.history.index[-1] + results.freq, periods=horizon,
                          freq=results.freq, name="period_start")
    return PeakPaths(paths_tps=np.clip(np.vstack(blocks), 0.0, None), times=times,
                     methods=np.array(methods), weights=weights, history=results.history.dropna(),
                     alpha=results.alpha, seed=seed)


def _threshold_draws(u: np.ndarray, mid: float, lo: float, hi: float, alpha: float,
                     draws: np.ndarray | None) -> np.ndarray:
    """Thresholds at probabilities ``u``: the draws' empirical quantiles, or a split log-normal."""
    if draws is not None:
        return np.quantile(draws, u, method="inverted_cdf")
    from scipy.special import ndtri

    from kneecap.modeling.base import split_lognormal

    return split_lognormal(ndtri(u), mid, lo, hi, alpha)


def _first_reach_days(paths: PeakPaths, thresholds: np.ndarray) -> np.ndarray:
    """Per path, days from the last observed period start to its first reach of its threshold.

    Negative (a past period start) where the last observed peak is already at or above the
    path's threshold; ``inf`` where the path stays below it to the horizon.
    """
    history = paths.history
    anchor_time, anchor_tps = pd.Timestamp(history.index[-1]), float(history.iloc[-1])
    day = pd.Timedelta(days=1)
    future_days = np.asarray((paths.times - anchor_time) / day, float)
    tps = paths.paths_tps
    rows = np.arange(len(tps))
    above = tps >= thresholds[:, None]
    hit = above.any(axis=1)
    first = above.argmax(axis=1)
    before = first - 1
    before_tps = np.where(first == 0, anchor_tps, tps[rows, np.maximum(before, 0)])
    before_day = np.where(first == 0, 0.0, future_days[np.maximum(before, 0)])
    after_tps, after_day = tps[rows, first], future_days[first]
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = (thresholds - before_tps) / (after_tps - before_tps)
    days = np.where(hit, before_day + fraction * (after_day - before_day), np.inf)
    already = anchor_tps >= thresholds
    if already.any():
        observed_days = np.asarray((history.index - anchor_time) / day, float)
        running_max = np.maximum.accumulate(history.to_numpy(float))
        days[already] = observed_days[np.searchsorted(running_max, thresholds[already], side="left")]
    return days


def crossing_date(
    paths: PeakPaths,
    threshold_tps: float,
    *,
    threshold_lo: float | None = None,
    threshold_hi: float | None = None,
    threshold_draws: np.ndarray | None = None,
    threshold_alpha: float | None = None,
) -> dict[str, Any]:
    r"""When the peak load reaches ``threshold_tps`` (e.g. a knee's throughput): its distribution.

    Each simulated future (:meth:`GrowthResults.simulate`) is paired with one draw of the
    threshold; the path's first reach of its draw is one crossing time, and the dates reported
    are quantiles over all paths.

    Parameters
    ----------
    paths : PeakPaths
        From :meth:`GrowthResults.simulate`.
    threshold_tps : float
        The throughput to reach (> 0): the threshold's point value and median.
    threshold_lo, threshold_hi : float, optional
        The threshold's ``(1 - threshold_alpha)`` interval (e.g. the knee's); default
        ``threshold_tps``. Need ``0 < threshold_lo <= threshold_tps <= threshold_hi``.
    threshold_draws : numpy.ndarray, optional
        Draws of the threshold (e.g. the knee of each bootstrap refit), used instead of an interval
        when the caller has them.
    threshold_alpha : float, optional
        Level of the interval ``threshold_lo`` .. ``threshold_hi``; default ``paths.alpha``.

    Returns
    -------
    dict
        ``date``
            median crossing time;
        ``date_earliest``
            its :data:`EARLIEST_QUANTILE` (5 %) quantile, the earliest plausible date;
        ``date_p90``
            its :data:`REACHED_BY_QUANTILE` quantile: reached by then with 90 % probability;
        ``date_lo``, ``date_hi``
            its ``alpha / 2`` and ``1 - alpha / 2`` quantiles;
        ``unreached_share``
            share of the paths that do not reach their threshold within the horizon;
        ``already``
            True when the last observed peak is already at or above ``threshold_tps``;
        ``horizon_end``
            the last forecast period start.

        Dates are :class:`pandas.Timestamp` (to the second); a quantile beyond the horizon is
        ``None``, never extrapolated (so ``date_p90`` is ``None`` exactly when
        ``unreached_share`` is over 10 %).

    Raises
    ------
    ValueError
        A threshold that is not a positive finite number, an unordered interval, an interval
        given together with draws, or a bad ``threshold_alpha``.

    Notes
    -----
    Path :math:`i` is a whole simulated future :math:`y_{i,1..H}` (so a path that rises early
    stays high, which per-step quantiles would not know) and :math:`k_i` its threshold draw. Its
    crossing time is linearly interpolated between the last period below and the first at or
    above :math:`k_i`, starting from the last observed peak :math:`(t_0, y_0)`:

    .. math::

        T_i = t_{j-1} + \frac{k_i - y_{i,j-1}}{y_{i,j} - y_{i,j-1}} (t_j - t_{j-1}),
        \quad j = \min\{j : y_{i,j} \ge k_i\},

    :math:`T_i = \infty` when no :math:`j \le H` exists, and, when :math:`y_0 \ge k_i`, the start
    of the first observed period whose peak reached :math:`k_i`. The threshold draws are
    :math:`k_i = Q(u_i)` with :math:`u_i \sim U(0, 1)` from ``paths.seed``: :math:`Q` the
    draws' empirical quantile function, or a split log-normal through the interval,

    .. math::

        \log k = \log k_{\mathrm{mid}} + z \cdot
        \begin{cases} \log(k_{\mathrm{mid}} / k_{\mathrm{lo}}) / z_{1-\alpha/2} & z < 0 \\
                      \log(k_{\mathrm{hi}} / k_{\mathrm{mid}}) / z_{1-\alpha/2} & z \ge 0
        \end{cases}, \quad z = \Phi^{-1}(u),

    whose median is the point and whose :math:`\alpha/2`, :math:`1-\alpha/2` quantiles are the
    interval's ends (positive, and skewed as the interval is). The :math:`u_i` do not depend on the
    threshold, so for the same paths a higher threshold (its interval or draws moved up with it)
    raises every :math:`k_i`, no path's :math:`T_i` gets earlier, and no reported date does.

    References
    ----------
    .. [1] R. J. Hyndman and G. Athanasopoulos, *Forecasting: Principles and Practice*, 3rd ed.,
       OTexts, 2021, §5.5 (forecast distributions from simulated future sample paths).
       https://otexts.com/fpp3/
    .. [2] K. F. Wallis, "Combining density and interval forecasts: a modest proposal", *Oxford
       Bulletin of Economics and Statistics* 67 (2005) 983-994 (the combined forecast
       distribution is the weighted mixture of the candidates').
    """
    alpha = paths.alpha if threshold_alpha is None else float(threshold_alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"crossing_date: threshold_alpha must be in (0, 1), got {threshold_alpha!r}")
    values = {"threshold_tps": threshold_tps, "threshold_lo": threshold_lo,
              "threshold_hi": threshold_hi}
    for name, value in values.items():
        if value is not None and not (math.isfinite(float(value)) and float(value) > 0):
            raise ValueError(f"crossing_date: {name} must be a positive finite number, got {value!r}")
    draws = None
    if threshold_draws is not None:
        if threshold_lo is not None or threshold_hi is not None:
            raise ValueError("crossing_date: give threshold_draws or threshold_lo/threshold_hi, "
                             "not both")
        draws = np.asarray(threshold_draws, float).ravel()
        if draws.size == 0 or not np.all(np.isfinite(draws) & (draws > 0)):
            raise ValueError("crossing_date: threshold_draws must be positive finite numbers")
    mid = float(threshold_tps)
    lo = mid if threshold_lo is None else float(threshold_lo)
    hi = mid if threshold_hi is None else float(threshold_hi)
    if not lo <= mid <= hi:
        raise ValueError(
            f"crossing_date: need threshold_lo <= threshold_tps <= threshold_hi, got "
            f"{lo} / {mid} / {hi}"
        )

    # A stream of its own (not the paths'), so the thresholds pair the same way with every path
    # whatever the threshold asked.
    u = np.random.default_rng([paths.seed, 1]).random(len(paths.paths_tps))
    days = _first_reach_days(paths, _threshold_draws(u, mid, lo, hi, alpha, draws))
    levels = {"date_lo": alpha / 2.0, "date_earliest": EARLIEST_QUANTILE, "date": 0.5,
              "date_p90": REACHED_BY_QUANTILE, "date_hi": 1.0 - alpha / 2.0}
    quantiles = np.quantile(days, list(levels.values()), method="inverted_cdf")
    anchor_time = pd.Timestamp(paths.history.index[-1])
    out: dict[str, Any] = {
        key: (None if not math.isfinite(q) else
              (anchor_time + pd.to_timedelta(float(q), unit="D")).round("s"))
        for key, q in zip(levels, quantiles, strict=True)
    }
    out.update(unreached_share=float(np.mean(np.isinf(days))),
               already=bool(float(paths.history.iloc[-1]) >= mid),
               horizon_end=pd.Timestamp(paths.times[-1]))
    return out


def round_to_periods(crossing: dict[str, Any], periods: pd.DatetimeIndex) -> dict[str, Any]:
    """Crossing dates on period starts, outward: early ends down, late ends and the median up.

    ``date_lo`` and ``date_earliest`` go to the start of the period they fall in (floor);
    ``date``, ``date_p90`` and ``date_hi`` to the first period start at or after them (ceil: the
    first period whose peak has reached the threshold). Because the early ends round down and
    the late ends up, a non-zero spread between ``date_earliest`` and ``date_p90`` always keeps
    at least one period between them: rounding never prints a zero-width range.

    Parameters
    ----------
    crossing : dict
        From :func:`crossing_date`; other keys are passed through.
    periods : pandas.DatetimeIndex
        A regular grid of period starts (e.g. the peaks' index); it may end before the dates.

    Returns
    -------
    dict
        ``crossing`` with its five dates rounded (``None`` stays ``None``).
    """
    if len(periods) < 2:
        raise ValueError("round_to_periods: need at least two period starts to know the spacing")
    origin = pd.Timestamp(periods[0])
    step = (pd.Timestamp(periods[1]) - origin).value

    def on_grid(when: pd.Timestamp | None, up: bool) -> pd.Timestamp | None:
        if when is None:
            return None
        offset = (pd.Timestamp(when) - origin).value
        whole = -(-offset // step) if up else offset // step
        return origin + pd.Timedelta(whole * step, unit="ns")

    out = dict(crossing)
    for key, up in (("date_lo", False), ("date_earliest", False), ("date", True),
                    ("date_p90", True), ("date_hi", True)):
        out[key] = on_grid(crossing[key], up)
    return out
