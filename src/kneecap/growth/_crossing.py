"""When simulated peak paths reach a threshold: the distribution of crossing dates, put on period starts."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from kneecap.growth._results import EARLIEST_QUANTILE, REACHED_BY_QUANTILE, PeakPaths


def draw_thresholds(u: np.ndarray, mid: float, lo: float, hi: float, alpha: float,
                    draws: np.ndarray | None) -> np.ndarray:
    """Thresholds at probabilities ``u``: the draws' empirical quantiles, or a split log-normal."""
    if draws is not None:
        return np.quantile(draws, u, method="inverted_cdf")
    from scipy.special import ndtri

    from kneecap.modeling.base import split_lognormal

    return split_lognormal(ndtri(u), mid, lo, hi, alpha)


def first_reach_days(paths: PeakPaths, thresholds: np.ndarray) -> np.ndarray:
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
    days = first_reach_days(paths, draw_thresholds(u, mid, lo, hi, alpha, draws))
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
