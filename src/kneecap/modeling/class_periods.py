r"""A multi-period WLM service class: one row per interval for the queue, one goal per period.

WLM moves a transaction of a multi-period service class from period 1 to period 2 (and on) as it
accumulates service units past the period's duration; SMF 72.3 reports each period on its own
(ended, response time, APPL%, samples, goal and response time buckets), and the marts keep one
row per class period per interval (``point_id`` ending ``/S:<class>/<period>``). The class is one
stream of work on the LPAR's engines: the dispatch model (:mod:`kneecap.modeling.open_dispatch`)
takes one row per interval, its periods' load and CPU summed and its mean response the
ended-weighted mean of theirs (:func:`merge_periods`). Each period with a response time goal keeps
its own distribution and its own relation to the class's mean (:func:`period_mean_map`), so the
goals of all periods can be judged at a modelled load (:mod:`kneecap.goal_answers`).

References
----------
IBM, *z/OS MVS Planning: Workload Management*, "Defining service classes and performance goals"
(periods, duration in service units); IBM, *z/OS MVS System Management Facilities (SMF)*, record
type 72 subtype 3, "Service/Report Class Period Data Section" (one section per period).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["SUMMED_COLUMNS", "class_point_id", "merge_periods", "period_mean_map", "period_of"]

#: Columns of a class period's row that add up over the class's periods in one interval: the
#: rate, the APPL% and CPU seconds, the WLM state samples, the zIIP time.
SUMMED_COLUMNS = ("tps", "cpu_total_pct", "cpu_gcp_pct", "cpu_ziip_pct", "ziip_eligible_pct",
                  "ziip_eligible_on_gcp_pct", "cpu_s", "cpu_using_samples", "cpu_delay_samples",
                  "ziip_using_samples", "ziip_on_cp_using_samples", "ziip_delay_samples", "ziip_s",
                  "ziip_cp_equiv_s")
_PERIOD = r"/S:[^/]+/(\d+)$"


def period_of(point_id: pd.Series) -> pd.Series:
    """The service class period of each ``point_id`` (``<system>/<start>/S:<class>/<period>``); NaN if none.

    Examples
    --------
    >>> period_of(pd.Series(["SYSA/2026-03-02T13:00:00/S:ZCONHI/2", "line3"])).tolist()
    [2.0, nan]
    """
    return pd.to_numeric(point_id.astype(str).str.extract(_PERIOD, expand=False), errors="coerce")


def class_point_id(point_id: pd.Series) -> pd.Series:
    """``point_id`` without its period: the class's interval (``<system>/<start>/S:<class>``)."""
    return point_id.astype(str).str.replace(_PERIOD, lambda m: m.group(0).rsplit("/", 1)[0], regex=True)


def merge_periods(table: pd.DataFrame) -> pd.DataFrame:
    r"""One row per service class interval: the class's periods in that interval merged.

    Rows of a class with one period per interval (and every row that is not a service class
    period) come back as they are; where an interval has several periods their row becomes one:
    :data:`SUMMED_COLUMNS` summed, the mean response weighted by each period's ended
    transactions,

    .. math::

        \bar R = \frac{\sum_p \lambda_p \bar R_p}{\sum_p \lambda_p}, \qquad
        D = \frac{\sum_p \mathrm{cpu}_p}{\sum_p \lambda_p T} ,

    the CPU per transaction from the summed CPU seconds, the other columns the first period's
    (the LPAR's engines and busy are the interval's), the response time buckets and goal empty
    (each period has its own), and ``point_id`` naming the periods merged (``.../S:C/1+2``).
    """
    if "point_id" not in table or table.empty:
        return table
    period = period_of(table["point_id"])
    if period.isna().all():
        return table
    key = class_point_id(table["point_id"])
    multi = key.duplicated(keep=False) & period.notna()
    if not multi.any():
        return table
    rows = table[multi]
    group = rows.groupby(key[multi], sort=False)
    merged = group.first()
    for col in SUMMED_COLUMNS:
        if col in rows:
            merged[col] = group[col].sum(min_count=1)
    if {"tps", "resp_ms"} <= set(rows.columns):
        weight = rows["tps"].where(rows["resp_ms"].notna() & (rows["tps"] > 0))
        total = weight.groupby(key[multi], sort=False).sum(min_count=1)
        merged["resp_ms"] = (rows["resp_ms"] * weight).groupby(key[multi], sort=False).sum(min_count=1) / total
    if {"cpu_s", "tps", "interval_s", "cpu_ms_per_tran"} <= set(merged.columns):
        with np.errstate(divide="ignore", invalid="ignore"):
            merged["cpu_ms_per_tran"] = merged["cpu_s"] / (merged["tps"] * merged["interval_s"]) * 1000.0
    blank = [c for c in rows.columns if c.startswith("rt_") or c.startswith("goal_")]
    merged[blank] = np.nan
    periods = period[multi].astype(int).astype(str).groupby(key[multi], sort=False).agg("+".join)
    merged["point_id"] = merged.index + "/" + periods
    # each merged interval where its first period stood, so the table keeps its order
    at = multi & ~key.duplicated(keep="first")
    out = table.copy()
    out.loc[at, list(merged.columns)] = merged.loc[key[at]].to_numpy()
    return out[~multi | at].reset_index(drop=True)


def period_mean_map(period_resp_ms: np.ndarray, class_resp_ms: np.ndarray,
                    ended: np.ndarray) -> tuple[float, float]:
    r"""A period's mean response as a line in its class's: :math:`\bar R_p = a + b \bar R`.

    Weighted least squares over the intervals (weights: the period's ended transactions), the
    class's mean being what the queueing model predicts at a load. A slope that is not positive
    (the period's response falling as the class's rises: too few intervals, or a flat load) is
    replaced by the ratio of the means through the origin, :math:`a = 0`,
    :math:`b = \sum w \bar R_p / \sum w \bar R`.

    Returns
    -------
    (a, b)
        Intercept in ms and slope; ``(0, 1)`` for a single-period class's own mean.
    """
    y = np.asarray(period_resp_ms, dtype=float)
    x = np.asarray(class_resp_ms, dtype=float)
    w = np.asarray(ended, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(w) & (w > 0)
    x, y, w = x[ok], y[ok], w[ok]
    if not len(x):
        raise ValueError("no interval has both the period's and the class's mean response")
    ratio = float(np.sum(w * y) / np.sum(w * x))
    if len(x) < 3 or np.ptp(x) <= 0:
        return 0.0, ratio
    xm, ym = np.average(x, weights=w), np.average(y, weights=w)
    slope = float(np.sum(w * (x - xm) * (y - ym)) / np.sum(w * (x - xm) ** 2))
    if not slope > 0:
        return 0.0, ratio
    return float(ym - slope * xm), slope
