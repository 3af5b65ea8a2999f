r"""Response time percentiles from a mean-response model, calibrated on SMF 72.3's distribution buckets.

A class's queueing model (:mod:`kneecap.modeling.open_dispatch`) predicts the *mean* response at a
load; a WLM goal is often a percentile ("90 % within 5 ms") and RMF judges it by the Performance
Index. This module gives the distribution around the model's mean: a shifted gamma whose shift is
the fitted delay outside the CPU, whose mean is the model's mean, and whose shape follows how much
of the CPU residence is queueing, the shape's two numbers fitted to the class's own response time
distribution buckets (SMF 72.3 R723TRDB) by maximum likelihood.

Why this family. The residence of a transaction on the CPUs is its service (a few bursts: a sum of
exponentials, squared coefficient of variation well below 1) plus its waits. For an M/M/c queue the
wait is an atom at zero and an exponential tail, :math:`P(W > t) = C(c, a)\,e^{-(c\mu - \lambda)t}`
(Erlang C); its squared coefficient of variation :math:`(2 - C)/C` exceeds 1, so the spread grows
with the share of the residence spent waiting. The dispatch model's waits are not M/M/c's (zIIP help
after ZIIPAWMT caps them, several bursts wait in turn), so the shape is not derived but calibrated:
the squared coefficient of variation of the residence is linear in its waiting share, with
coefficients fitted to the buckets (how close it comes to kneecap's dispatcher simulation:
``docs/smf.md``, "Percentiles and the PI forecast").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special

from kneecap.modeling.class_periods import class_point_id, period_mean_map, period_of
from kneecap.wlm import RT_BUCKET_MAX_PCT

__all__ = [
    "CV2_RANGE",
    "ResponseShape",
    "class_response_shape",
    "class_shapes",
    "empirical_quantile",
    "fit_response_shape",
    "held_out_quantile_errors",
    "percentile_columns",
    "performance_index_forecast",
    "quantile_widening",
    "widened_band",
    "rt_bucket_columns",
]

#: Bounds of the residence's squared coefficient of variation (a gamma shape of 100 to 1/4): a
#: residence steadier than 100 equal bursts or wilder than a 1/4-shape gamma is not a CPU queue.
CV2_RANGE = (0.01, 4.0)
_COUNT = "rt_bucket_{:02d}_count"
_BOUND = "rt_bucket_{:02d}_max_pct"


def rt_bucket_columns() -> tuple[list[str], list[str]]:
    """The 72.3 bucket columns of ``smf72_workload``: the 14 counts and the 13 upper bounds (% of goal)."""
    return [_COUNT.format(j) for j in range(1, 15)], [_BOUND.format(j) for j in range(1, 14)]


@dataclass(frozen=True)
class ResponseShape:
    r"""The response time distribution around a mean: ``shift_ms`` + a gamma residence.

    Parameters
    ----------
    shift_ms : the response no transaction goes below (the model's delay outside the CPU, ``R0``).
    service_ms : the CPU service per transaction (``D``): the residence with no wait.
    cv2_base, cv2_slope : the residence's squared coefficient of variation is
        ``cv2_base + cv2_slope * w``, ``w`` its waiting share (clipped to :data:`CV2_RANGE`).
    calibration : how the two were fitted and how well the fitted distribution matches the
        buckets (:func:`fit_response_shape`); the class's WLM goal where it has one.

    Notes
    -----
    With mean response :math:`\bar R`, residence mean :math:`m = \bar R - s`, waiting share
    :math:`w = \max(m - D, 0)/m` and :math:`\kappa = \mathrm{clip}(a + b\,w)`, the response is
    :math:`R = s + G`, :math:`G \sim \mathrm{Gamma}(k = 1/\kappa,\ \theta = m\kappa)` (mean
    :math:`m`), so

    .. math::

        P(R \le t) = P\!\left(k, \frac{t - s}{\theta}\right), \qquad
        R_p = s + \theta\, P^{-1}(k, p),

    :math:`P` the regularized lower incomplete gamma function. The mean of :math:`R` is the
    model's mean exactly. With :math:`s`, :math:`D` fixed, :math:`R_p` depends on the mean alone,
    so a percentile target is one mean target (:meth:`mean_for_quantile`).

    References
    ----------
    Johnson, Kotz & Balakrishnan (1994), *Continuous Univariate Distributions*, vol. 1, 2nd ed.,
    ch. 17 (the gamma distribution). Kleinrock (1975), *Queueing Systems*, vol. 1 (M/M/m: the
    waiting time's atom at zero and exponential tail).
    """

    shift_ms: float
    service_ms: float
    cv2_base: float
    cv2_slope: float
    calibration: dict[str, Any] = field(default_factory=dict)

    def cv2(self, mean_ms: np.ndarray | float) -> np.ndarray:
        """The residence's squared coefficient of variation at ``mean_ms`` (NaN where mean <= shift)."""
        m = np.asarray(mean_ms, dtype=np.float64) - self.shift_ms
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(m > 0, np.maximum(m - self.service_ms, 0.0) / m, np.nan)
        return np.clip(self.cv2_base + self.cv2_slope * w, *CV2_RANGE)

    def quantile(self, mean_ms: np.ndarray | float, p: float) -> np.ndarray:
        """The response at probability ``p`` (0 < p < 1) when the mean response is ``mean_ms``.

        NaN where the mean is at or below the shift; ``inf`` where the mean is.
        """
        mean = np.asarray(mean_ms, dtype=np.float64)
        kappa = self.cv2(mean)
        m = mean - self.shift_ms
        with np.errstate(invalid="ignore"):
            q = self.shift_ms + m * kappa * special.gammaincinv(1.0 / kappa, p)
        return np.where(np.isposinf(mean), np.inf, np.where(m > 0, q, np.nan))

    def cdf(self, t_ms: np.ndarray | float, mean_ms: np.ndarray | float) -> np.ndarray:
        """``P(R <= t_ms)`` at mean ``mean_ms`` (broadcast: means as rows, times as columns)."""
        mean = np.asarray(mean_ms, dtype=np.float64)
        kappa = self.cv2(mean)
        m = mean - self.shift_ms
        x = (np.asarray(t_ms, dtype=np.float64) - self.shift_ms) / (m * kappa)
        return special.gammainc(1.0 / kappa, np.maximum(x, 0.0))

    def bucket_probabilities(self, mean_ms: np.ndarray, goal_ms: np.ndarray | float,
                             max_pct: np.ndarray | None = None) -> np.ndarray:
        """Expected share of the transactions in each of the 14 buckets of a goal, shape (n, 14)."""
        mean = np.atleast_1d(np.asarray(mean_ms, dtype=np.float64))
        bounds = np.broadcast_to(np.atleast_2d(np.asarray(RT_BUCKET_MAX_PCT if max_pct is None else max_pct,
                                                          dtype=np.float64)), (mean.size, 13))
        goal = np.broadcast_to(np.asarray(goal_ms, dtype=np.float64), mean.shape)
        cum = self.cdf(bounds / 100.0 * goal[:, None], mean[:, None])
        edges = np.hstack([np.zeros((mean.size, 1)), cum, np.ones((mean.size, 1))])
        return np.clip(np.diff(edges, axis=1), 0.0, None)

    def mean_for_quantile(self, resp_ms: float, p: float) -> float:
        """The mean response at which the ``p`` quantile is ``resp_ms`` (NaN: below the shift).

        The quantile rises with the mean over the means searched (a geometric grid of the
        residence from 1e-6 to 1e4 times ``resp_ms``); the first crossing is refined by Brent's
        method.
        """
        if not resp_ms > self.shift_ms:
            return math.nan
        grid = self.shift_ms + np.geomspace(1e-6, 1e4, 2001) * resp_ms
        q = self.quantile(grid, p) - resp_ms
        above = np.flatnonzero(q >= 0)
        if not above.size or above[0] == 0:
            return math.nan
        i = int(above[0])
        return float(optimize.brentq(lambda x: float(self.quantile(x, p)) - resp_ms, grid[i - 1], grid[i]))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able document (read back by :meth:`from_dict`)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ResponseShape:
        """The shape from :meth:`to_dict`."""
        return cls(**{k: d[k] for k in ("shift_ms", "service_ms", "cv2_base", "cv2_slope")},
                   calibration=dict(d.get("calibration", {})))


def fit_response_shape(mean_ms: np.ndarray, counts: np.ndarray, goal_ms: np.ndarray, *, shift_ms: float,
                       service_ms: float, max_pct: np.ndarray | None = None) -> ResponseShape:
    r"""Fit the shape's two numbers to measured response time distribution buckets.

    Parameters
    ----------
    mean_ms : shape (n,), each interval's measured mean response.
    counts : shape (n, 14), transactions completed per bucket (R723TRDB).
    goal_ms : shape (n,) or float, the buckets' midpoint (the goal).
    shift_ms, service_ms : the model's delay outside the CPU and CPU per transaction.
    max_pct : shape (n, 13) or (13,), the buckets' upper bounds in % of the midpoint.

    Returns
    -------
    ResponseShape
        With ``calibration``: ``intervals`` used, ``transactions``, ``left_out`` (intervals whose
        mean was at or below the shift), ``cdf_error_mean`` / ``cdf_error_max`` (the mean and
        largest absolute difference, over intervals and bounds, between the fitted and measured
        share of transactions within a bound, transaction-weighted for the mean),
        ``cdf_error_at_goal`` (the same at the goal only, where a goal's PI is read).

    Notes
    -----
    Maximum likelihood of the grouped (bucketed) responses, the buckets of each interval a
    multinomial draw with the shape's expected shares at the interval's measured mean
    :math:`\bar R_i` (the shape, not the mean model, is fitted):

    .. math::

        \hat a, \hat b = \arg\max \sum_i \sum_{j=1}^{14} c_{ij} \log p_j(\bar R_i; a, b).

    Starts from a coarse grid, refined by L-BFGS-B within :data:`CV2_RANGE`.

    References
    ----------
    IBM, *z/OS MVS System Management Facilities (SMF)*, record type 72 subtype 3, "Response Time
    Distribution Data Section".
    """
    mean = np.asarray(mean_ms, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64).reshape(mean.size, 14)
    goal = np.broadcast_to(np.asarray(goal_ms, dtype=np.float64), mean.shape)
    bounds = np.broadcast_to(np.atleast_2d(np.asarray(RT_BUCKET_MAX_PCT if max_pct is None else max_pct,
                                                      dtype=np.float64)), (mean.size, 13))
    ok = np.isfinite(mean) & (mean > shift_ms) & (c.sum(axis=1) > 0) & np.isfinite(goal) & (goal > 0)
    ok &= np.isfinite(bounds).all(axis=1)
    if not ok.any():
        raise ValueError("no interval has a mean above the shift and a response time distribution")
    mean, c, goal, bounds = mean[ok], c[ok], goal[ok], bounds[ok]

    def shape(theta: np.ndarray) -> ResponseShape:
        return ResponseShape(shift_ms, service_ms, float(theta[0]), float(theta[1]))

    def nll(theta: np.ndarray) -> float:
        p = shape(theta).bucket_probabilities(mean, goal, bounds)
        return float(-np.sum(c * np.log(np.maximum(p, 1e-300))))

    starts = [np.array([a, b]) for a in (0.05, 0.2, 0.5, 1.0) for b in (0.0, 0.5, 1.5)]
    best = min(starts, key=nll)
    res = optimize.minimize(nll, best, method="L-BFGS-B", bounds=[CV2_RANGE, (-4.0, 4.0)])
    fitted = shape(res.x if res.fun <= nll(best) else best)
    p = fitted.bucket_probabilities(mean, goal, bounds)
    total = c.sum(axis=1)
    err = np.abs(np.cumsum(p, axis=1)[:, :13] - np.cumsum(c, axis=1)[:, :13] / total[:, None])
    at_goal = np.argmin(np.abs(bounds - 100.0), axis=1)
    calibration = {"intervals": int(ok.sum()), "transactions": float(total.sum()), "left_out": int((~ok).sum()),
                   "cdf_error_mean": float(np.average(err.mean(axis=1), weights=total)),
                   "cdf_error_max": float(err.max()),
                   "cdf_error_at_goal": float(np.average(err[np.arange(len(err)), at_goal], weights=total))}
    return ResponseShape(shift_ms, service_ms, fitted.cv2_base, fitted.cv2_slope, calibration)


def class_response_shape(rows: pd.DataFrame, *, shift_ms: float, service_ms: float,
                         alpha: float = 0.05, held_out: bool = True) -> dict[str, Any]:
    """:func:`fit_response_shape` on a class's intervals that carry 72.3 buckets, as a stored document.

    ``rows``: intervals with ``resp_ms``, the buckets' midpoint ``rt_midpoint_ms`` (else
    ``goal_resp_ms``: the midpoint of a response time goal), the 14 ``rt_bucket_NN_count``
    columns and optionally the 13 ``rt_bucket_NN_max_pct`` and ``goal_type`` /
    ``goal_resp_ms`` / ``goal_percentile``. ``{}`` when the rows carry no buckets. The class's
    goal (the most frequent among the rows with buckets) is kept in ``calibration``, and with
    ``held_out`` and ``interval_start_at`` the percentiles' held-out error
    (:func:`held_out_quantile_errors`; a refit that only scores the mean's band skips it).
    """
    counts, bounds = rt_bucket_columns()
    midpoint = "rt_midpoint_ms" if "rt_midpoint_ms" in rows else "goal_resp_ms"
    if not set(counts) <= set(rows.columns) or midpoint not in rows:
        return {}
    have = rows[rows[counts].notna().all(axis=1) & (rows[counts].sum(axis=1) > 0)]
    if have.empty:
        return {}
    max_pct = have[bounds].to_numpy(float) if set(bounds) <= set(have.columns) else None
    try:
        shape = fit_response_shape(have["resp_ms"].to_numpy(float), have[counts].to_numpy(float),
                                   have[midpoint].to_numpy(float), shift_ms=shift_ms, service_ms=service_ms,
                                   max_pct=max_pct)
    except ValueError:
        return {}
    doc = shape.to_dict()
    wanted = set(QUANTILE_ERROR_PERCENTILES)
    if {"goal_type", "goal_resp_ms", "goal_percentile"} <= set(have.columns):
        goals = have.groupby(["goal_type", "goal_resp_ms", "goal_percentile"], dropna=False).size()
        kind, resp, pct = goals.idxmax()
        doc["calibration"].update(goal_type=str(kind), goal_resp_ms=float(resp),
                                  goal_percentile=float(pct) if pd.notna(pct) else math.nan)
        if kind == "percentile" and pd.notna(pct):
            wanted.add(float(pct))
    if held_out and "interval_start_at" in have:
        doc["calibration"].update(held_out_quantile_errors(
            have, counts=counts, midpoint=midpoint, max_pct=max_pct, shift_ms=shift_ms, service_ms=service_ms,
            percentiles=tuple(sorted(wanted)), alpha=alpha))
    return doc


#: Percentiles whose held-out error every class shape records (its goal's percentile too).
QUANTILE_ERROR_PERCENTILES = (50.0, 90.0, 95.0)
# fewer held-out transactions than this and the shape's error is not said: no band widening
_MIN_HELD_OUT_TRANSACTIONS = 1000


def empirical_quantile(counts: np.ndarray, bounds_ms: np.ndarray, p: float, *, floor_ms: float = 0.0,
                       within: tuple[ResponseShape, float] | None = None) -> float:
    """The ``p`` quantile of one interval's bucketed responses, read inside the bucket it falls in.

    ``counts`` (14,), ``bounds_ms`` (13,) the buckets' upper bounds in ms; ``floor_ms`` the
    response no transaction goes below (the first bucket spans it to its bound). Inside the
    bucket the responses are spread linearly, or, with ``within`` ``(shape, mean_ms)``, as that
    distribution spreads them there (its CDF mapped linearly onto the bucket's share), so a
    bucket 10 % of the goal wide adds no error of its own where the distribution is the truth.
    NaN past the last bound (the open bucket 14) or without transactions.

    Examples
    --------
    >>> empirical_quantile(np.array([0, 5, 5] + [0] * 11), np.arange(1.0, 14.0), 0.75)
    2.5
    """
    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    if not total > 0:
        return math.nan
    cum = np.concatenate([[0.0], np.cumsum(c[:13]) / total])
    edges = np.concatenate([[min(floor_ms, float(bounds_ms[0]))], np.asarray(bounds_ms, dtype=np.float64)])
    if p > cum[-1]:
        return math.nan
    i = int(np.argmax(cum >= p))
    if i == 0:
        return float(edges[0])
    share = (p - cum[i - 1]) / (cum[i] - cum[i - 1])
    if within is not None:
        shape, mean = within
        f_lo, f_hi = (float(f) for f in shape.cdf(edges[i - 1: i + 1], mean))
        if f_hi > f_lo:
            return float(shape.quantile(mean, min(max(f_lo + share * (f_hi - f_lo), 1e-12), 1 - 1e-12)))
    return float(edges[i - 1] + share * (edges[i] - edges[i - 1]))


def held_out_quantile_errors(rows: pd.DataFrame, *, counts: list[str], midpoint: str, max_pct: np.ndarray | None,
                             shift_ms: float, service_ms: float, percentiles: tuple[float, ...],
                             alpha: float = 0.05) -> dict[str, Any]:
    r"""How far the shape's percentiles miss on days it was not fitted on: the band's widening.

    Rolling origins by day: the shape fitted on the days before day :math:`k` (two at least) is
    asked, at each interval of day :math:`k` and its measured mean, for the percentile
    :math:`q_p`; the interval's own buckets give :math:`\hat q_p` (:func:`empirical_quantile`).
    The ``alpha / 2`` and ``1 - alpha / 2`` quantiles of :math:`\log(\hat q_p / q_p)` over the
    held-out intervals, weighted by their transactions, are the percentile's error band: a
    percentile forecast's band is the mean band's percentiles times :math:`e^{\min(lo, 0)}` and
    :math:`e^{\max(hi, 0)}` (:func:`percentile_columns`). Inside a bucket the earlier days' shape
    spreads the responses (``within`` of :func:`empirical_quantile`), so what is measured is where
    the buckets themselves disagree with it, not the buckets' width.

    Returns
    -------
    dict
        ``quantile_log_error`` ``{"90": [lo, hi], ...}`` (string keys, for JSON) and
        ``quantile_error_transactions``; ``{}`` with fewer than three days or
        :data:`_MIN_HELD_OUT_TRANSACTIONS` held-out transactions.
    """
    day = pd.to_datetime(rows["interval_start_at"]).dt.normalize().to_numpy()
    days = np.unique(day)
    if len(days) < 3:
        return {}
    c = rows[counts].to_numpy(float)
    mean = rows["resp_ms"].to_numpy(float)
    goal = rows[midpoint].to_numpy(float)
    bounds = np.broadcast_to(np.atleast_2d(RT_BUCKET_MAX_PCT if max_pct is None else max_pct), (len(rows), 13))
    errors: dict[float, list[float]] = {p: [] for p in percentiles}
    weights: dict[float, list[float]] = {p: [] for p in percentiles}
    for k in days[2:]:
        train, test = day < k, np.flatnonzero(day == k)
        try:
            shape = fit_response_shape(mean[train], c[train], goal[train], shift_ms=shift_ms,
                                       service_ms=service_ms, max_pct=bounds[train])
        except ValueError:
            continue
        for i in test:
            for p in percentiles:
                measured = empirical_quantile(c[i], bounds[i] / 100.0 * goal[i], p / 100.0, floor_ms=shift_ms,
                                              within=(shape, mean[i]))
                predicted = float(shape.quantile(mean[i], p / 100.0))
                if measured > 0 and predicted > 0 and math.isfinite(measured) and math.isfinite(predicted):
                    errors[p].append(math.log(measured / predicted))
                    weights[p].append(float(c[i].sum()))
    total = sum(weights[percentiles[0]]) if percentiles else 0.0
    if total < _MIN_HELD_OUT_TRANSACTIONS:
        return {}
    band = {}
    for p in percentiles:
        if errors[p]:
            band[f"{p:g}"] = [_weighted_quantile(errors[p], weights[p], alpha / 2),
                              _weighted_quantile(errors[p], weights[p], 1 - alpha / 2)]
    return {"quantile_log_error": band, "quantile_error_transactions": total}


def _weighted_quantile(values: list[float], weights: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` with ``weights`` (the inverse of the weighted empirical CDF)."""
    order = np.argsort(values)
    v, w = np.asarray(values)[order], np.asarray(weights)[order]
    cdf = np.cumsum(w) / w.sum()
    return float(v[min(int(np.searchsorted(cdf, q)), len(v) - 1)])


def widened_band(values: list[float], widening: tuple[float, float]) -> tuple[float, float]:
    """``(lo, hi)`` of a value at the mean and its band's ends, widened by ``(lo, hi)`` log factors.

    The lowest finite value times :math:`e^{lo}` (NaN: none is finite) and the highest times
    :math:`e^{hi}`, ``inf`` where an end is not finite (past saturation the band is open above).
    """
    finite = [v for v in values if math.isfinite(v)]
    return (min(finite) * math.exp(widening[0]) if finite else math.nan,
            max(values) * math.exp(widening[1]) if len(finite) == len(values) else math.inf)


def quantile_widening(shape: ResponseShape, percentile: float) -> tuple[float, float]:
    """``(lo, hi)`` log factors a ``percentile`` band is widened by (0, 0 where none was measured)."""
    band = shape.calibration.get("quantile_log_error", {}).get(f"{float(percentile):g}")
    if not band:
        return 0.0, 0.0
    return min(float(band[0]), 0.0), max(float(band[1]), 0.0)


def percentile_columns(shape: ResponseShape, mean_ms: float, lo_ms: float, hi_ms: float,
                       percentiles: tuple[float, ...] = (50.0, 90.0, 95.0)) -> dict[str, float]:
    """``resp_pNN_ms`` with ``_lo`` / ``_hi`` for each percentile, from the mean and its band.

    The band is the percentile at the ends of the mean's band: the mean's doubt (parameters,
    structure, calibration) carried to the percentile through the monotone map from mean to
    percentile (:meth:`ResponseShape.quantile`), widened by the shape's own error on held-out days
    where it was measured (:func:`held_out_quantile_errors`, :func:`quantile_widening`).
    """
    out: dict[str, float] = {}
    for pct in percentiles:
        values = [float(shape.quantile(x, pct / 100.0)) for x in (mean_ms, lo_ms, hi_ms)]
        col = f"resp_p{pct:g}_ms"
        out[col] = values[0]
        out[f"{col}_lo"], out[f"{col}_hi"] = widened_band(values, quantile_widening(shape, pct))
    return out


def performance_index_forecast(shape: ResponseShape, mean_ms: np.ndarray | float, *, goal_type: str,
                               goal_resp_ms: float, goal_percentile: float | None = None) -> np.ndarray:
    r"""The Performance Index a response time goal would have at a modelled mean response.

    Notes
    -----
    "For work with response time goals, the performance index is the actual divided by goal"
    (IBM): for a percentile goal :math:`p` within :math:`G`, :math:`\mathrm{PI} = R_p / G`, the
    response at the goal's percentile (:meth:`ResponseShape.quantile`) over the goal; for an
    average goal :math:`\mathrm{PI} = \bar R / G`. RMF reads a percentile goal's PI off the
    buckets (the bound of the bucket that reaches the percentile, :mod:`kneecap.wlm`); this is the
    continuous value the bucket bound rounds up, and both pass 1 at the same load (where
    :math:`R_p = G`, the bucket bound being 100 % of the goal).

    References
    ----------
    IBM, *z/OS MVS Programming: Workload Management Services*, "Performance Index".
    """
    mean = np.asarray(mean_ms, dtype=np.float64)
    if goal_type == "average":
        return mean / goal_resp_ms
    if goal_type == "percentile" and goal_percentile is not None and 0 < goal_percentile < 100:
        return shape.quantile(mean, goal_percentile / 100.0) / goal_resp_ms
    raise ValueError(f"a PI forecast needs a response time goal (average, or percentile 1-99), got {goal_type!r} "
                     f"with percentile {goal_percentile!r}")


def class_shapes(by_period: pd.DataFrame, class_rows: pd.DataFrame, *, shift_ms: float,
                 service_ms: float, alpha: float = 0.05, held_out: bool = True) -> dict[str, Any]:
    """The stored distribution document of a class: its own shape, or one per period with buckets.

    A class whose rows are all period 1 (or not class periods) gets :func:`class_response_shape`
    of ``class_rows`` at ``shift_ms`` and ``service_ms``; a multi-period class one per period
    (``held_out``: with the percentiles' held-out error).

    ``by_period``: the class's rows one per period per interval (``point_id`` ending
    ``/S:<class>/<period>``); ``class_rows``: the intervals the class model was fitted on, its
    periods merged (:func:`kneecap.modeling.class_periods.merge_periods`). Each period's shape is
    :func:`class_response_shape` of its own buckets, with the period's CPU per transaction as
    its service and a shift no period mean goes below (the class's ``shift_ms``, or 0.9 of the
    period's lowest mean if lower); its ``calibration`` adds ``period``, ``ended_share`` (its
    share of the class's ended transactions) and the line mapping the class's mean to the
    period's (``class_mean_intercept_ms``, ``class_mean_slope``:
    :func:`kneecap.modeling.class_periods.period_mean_map`). ``{"periods": [...]}``, or ``{}``
    when no period carries buckets.
    """
    period = period_of(by_period["point_id"]) if "point_id" in by_period else pd.Series(np.nan, by_period.index)
    if not (period > 1).any():
        return class_response_shape(class_rows, shift_ms=shift_ms, service_ms=service_ms, alpha=alpha,
                                    held_out=held_out)
    class_mean = class_rows.set_index(class_rows["point_id"].astype(str).str.rsplit("/", n=1).str[0])["resp_ms"]
    key = class_point_id(by_period["point_id"])
    fitted = key.isin(class_mean.index)
    ended = (by_period["tps"] * by_period["interval_s"]).where(fitted)
    docs = []
    for p in sorted(period[fitted].dropna().unique()):
        mine = fitted & (period == p) & by_period["resp_ms"].gt(0)
        rows = by_period[mine]
        if rows.empty:
            continue
        a, b = period_mean_map(rows["resp_ms"].to_numpy(float), class_mean.loc[key[mine]].to_numpy(float),
                               ended[mine].to_numpy(float))
        w = ended[mine].to_numpy(float)
        service = float(np.average(rows["cpu_ms_per_tran"].to_numpy(float), weights=w))
        shift = min(shift_ms, 0.9 * float(rows["resp_ms"].min()))
        doc = class_response_shape(rows, shift_ms=shift, service_ms=service, alpha=alpha, held_out=held_out)
        if not doc:
            continue
        doc["calibration"].update(period=int(p), ended_share=float(w.sum() / np.nansum(ended)),
                                  class_mean_intercept_ms=a, class_mean_slope=b)
        docs.append(doc)
    return {"periods": docs} if docs else {}
