r"""A WLM class's Performance Index and response percentiles against its load: forecast and measured.

The forecast (:func:`goal_curve`) is the class model's response curve, the mean with its band at
each load (``results.curve(...)``), mapped load by load through the response time distribution
the model carries (:class:`kneecap.modeling.percentiles.ResponseShape`), as
:func:`kneecap.goal_answers.goal_columns` maps one load: the percentiles at the mean and at the
band's ends (:func:`~kneecap.modeling.percentiles.percentile_columns`), and the goal's Performance
Index the same way (:func:`~kneecap.modeling.percentiles.performance_index_forecast`).

The measured (:func:`measured_goal_points`): per RMF interval of the class, its load beside the PI
RMF measured (``fct_performance_index``) and the percentiles its SMF 72.3 buckets reach (the upper
bound of the bucket in which the percentile of the transactions completed, the rule RMF reads a
percentile goal's PI by, :func:`kneecap.wlm.percentile_performance_index`). A bucket bound is an
upper bound, and a coarse one (the bounds are 50, 60, ..., 150, 200 and 400 % of the goal).

Nothing here reads a file or draws: the desk and the report pass the class's curve and marts in,
and draw with :mod:`kneecap.report.figures`. No pipeline stage imports this module (``dvc.yaml``):
it serves the desk and ``kneecap report`` only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from kneecap import goal_answers, training, wlm
from kneecap.modeling import ModelError
from kneecap.modeling.percentiles import percentile_columns, performance_index_forecast, rt_bucket_columns

__all__ = ["goal_curve", "goal_curve_on", "measured_goal_points", "response_goal"]

#: Columns of the response curve a goal curve is read from (``results.curve``).
CURVE_COLUMNS = ("tps", "resp_ms", "resp_ms_lo", "resp_ms_hi")


def _band(values: Iterable[float]) -> tuple[float, float]:
    """Lowest and highest of a value at the mean and at its band's ends (percentile_columns' rule).

    The lowest finite one (NaN: none is); the highest, or ``inf`` where an end is not finite
    (past saturation a draw has no response: the band is open above).
    """
    found = list(values)
    finite = [v for v in found if math.isfinite(v)]
    return (min(finite) if finite else math.nan,
            max(found) if len(finite) == len(found) else math.inf)


def response_goal(results: Any) -> tuple[str, float, float] | None:
    """The WLM response time goal a class model's distribution was calibrated under, or None.

    ``(goal_type, goal_resp_ms, goal_percentile)``: ``("percentile", T, P)`` for "P % within T
    ms", ``("average", T, nan)``; None for a model without a measured distribution, whose class
    has no response time goal (velocity, discretionary), or whose goal is below the response no
    transaction goes under (no load meets it). The goal as ``slo: wlm_goal``
    reads it (:func:`kneecap.goal_answers.with_slo`), so the rule that finds it is that one.
    """
    if goal_answers.response_shape(results) is None:
        return None
    try:
        _, said = goal_answers.with_slo(results, {"slo": goal_answers.GOAL_SLO})
    except ModelError:  # no response time goal: a velocity or discretionary class has no PI forecast
        return None
    if "slo_percentile" in said:
        return "percentile", float(said["slo_percentile_resp_ms"]), float(said["slo_percentile"])
    return "average", float(said["slo_resp_ms"]), math.nan


def _point_id(rows: pd.DataFrame) -> pd.Series:
    """``fct_measurements``' ``point_id`` of rows keyed by system, interval, service class and period.

    ``system/YYYY-MM-DDTHH:MM:SS/S:class/period``, as ``int_smf_measurements`` writes it for a
    service class and :func:`kneecap.training.with_rt_buckets` matches the buckets by (written
    again here, not shared: the train stage depends on ``training.py``, and this module serves no
    stage; ``tests/test_goal_curves.py`` holds the two equal on the synthetic week).
    """
    start = pd.to_datetime(rows["interval_start_at"])
    return (rows["system_id"].astype(str) + "/" + start.dt.strftime("%Y-%m-%dT%H:%M:%S") + "/S:"
            + rows["class_name"].astype(str) + "/" + rows["period"].astype(int).astype(str))


def goal_curve(results: Any, curve: pd.DataFrame) -> pd.DataFrame:
    r"""The class's response percentiles and its goal's PI along a response curve, each with its band.

    Parameters
    ----------
    results : fitted class model
        One that carries a response time distribution (:func:`kneecap.goal_answers.response_shape`).
    curve : DataFrame
        Its response curve on the engines asked: ``tps``, ``resp_ms``, ``resp_ms_lo``,
        ``resp_ms_hi`` (``results.curve(points=..., **lpar)``, or
        :func:`kneecap.forecasting.response_curve`).

    Returns
    -------
    DataFrame
        One row per curve row: its ``tps`` and mean response with band, ``resp_p50_ms``,
        ``resp_p90_ms``, ``resp_p95_ms`` each with ``_lo`` / ``_hi``, and for a class with a
        response time goal ``pi``, ``pi_lo``, ``pi_hi``. Empty for a model without a measured
        distribution.

    Notes
    -----
    At each load the percentile :math:`R_p(\bar R)` and the PI are taken at the mean
    :math:`\bar R` and at the ends of its band, the shape held (the map from mean to percentile
    rises, so the band's ends map to the percentile's); the band is the lowest and highest of the
    three, open above (``inf``) where an end of the mean's band is. At a load of the curve the
    columns are :func:`kneecap.goal_answers.goal_columns`' for that load; PI 1 is crossed where
    the mean reaches the goal's :math:`\bar R^*`, so between two curve points around
    ``pi_tps``.
    """
    shape = goal_answers.response_shape(results)
    if shape is None:
        return pd.DataFrame()
    goal = response_goal(results)
    rows = []
    for tps, mean, lo, hi in curve[list(CURVE_COLUMNS)].itertuples(index=False):
        row: dict[str, float] = {"tps": float(tps), "resp_ms": float(mean), "resp_ms_lo": float(lo),
                                 "resp_ms_hi": float(hi)}
        row.update(percentile_columns(shape, float(mean), float(lo), float(hi), goal_answers.PERCENTILES))
        if goal is not None:
            kind, resp, pct = goal
            pis = [float(performance_index_forecast(shape, x, goal_type=kind, goal_resp_ms=resp, goal_percentile=pct))
                   for x in (float(mean), float(lo), float(hi))]
            row["pi"] = pis[0]
            row["pi_lo"], row["pi_hi"] = _band(pis)
        rows.append(row)
    return pd.DataFrame(rows)


def goal_curve_on(results: Any, lpar: Mapping[str, Any], *, points: int = 80) -> pd.DataFrame:
    """:func:`goal_curve` on the model's own curve on the LPAR ``lpar``, up to 95 % of saturation.

    ``lpar``: ``n_gcp``, ``n_ziip``, ``bg_load_factor`` (the model's own where not given), as
    :func:`kneecap.goal_answers.goal_columns` takes them from a scenario and reads the PI's load
    off the same curve. Empty for a model without a measured distribution, or where the other
    classes fill a pool the class needs (no load can be carried: no curve).
    """
    if goal_answers.response_shape(results) is None:
        return pd.DataFrame()
    try:
        curve = results.curve(points=points, **{k: v for k, v in lpar.items() if v is not None})
    except ModelError:
        return pd.DataFrame()
    return goal_curve(results, curve)


def measured_goal_points(points: pd.DataFrame, performance_index: pd.DataFrame, rt_buckets: pd.DataFrame,
                         goal: tuple[str, float, float] | None) -> pd.DataFrame:
    """Per measured interval of a class: its load, the PI RMF measured for its goal, its bucket percentiles.

    Parameters
    ----------
    points : DataFrame
        The class's rows of ``fct_measurements`` (``point_id``, ``tps``, ``system_id``,
        ``interval_start_at``).
    performance_index : DataFrame
        The ``fct_performance_index`` mart (may be empty).
    rt_buckets : DataFrame
        The ``fct_rt_buckets`` mart (may be empty).
    goal : (goal_type, goal_resp_ms, goal_percentile) or None
        The goal the model forecasts the PI of (:func:`response_goal`): only
        periods with that goal give a measured PI to set beside it.

    Returns
    -------
    DataFrame
        ``point_id``, ``system_id``, ``interval_start_at``, ``tps``, ``performance_index`` (NaN:
        none measured for the goal) and ``resp_p50_ms``, ``resp_p90_ms``, ``resp_p95_ms``: the
        upper bound in ms of the 72.3 bucket the percentile of the interval's transactions
        completed in (NaN: no buckets, or the open bucket past 400 % of the midpoint). Intervals
        with a load and at least one of them.
    """
    cols = ["point_id", "system_id", "interval_start_at", "tps", "performance_index",
            *(f"resp_p{p:g}_ms" for p in goal_answers.PERCENTILES)]
    needed = {"point_id", "tps", "system_id", "interval_start_at"}
    if points.empty or not needed <= set(points.columns):
        return pd.DataFrame(columns=cols)
    out = points[points["tps"].notna()].reset_index(drop=True)
    out = out.assign(performance_index=math.nan)
    if not performance_index.empty and goal is not None:
        kind, goal_resp_ms, goal_pct = goal
        same = (performance_index["goal_type"] == kind) & np.isclose(performance_index["goal_resp_ms"], goal_resp_ms)
        if kind == "percentile":
            same &= np.isclose(performance_index["goal_percentile"], goal_pct)
        measured = performance_index[same & performance_index["performance_index"].notna()]
        if len(measured):
            by_point = pd.Series(measured["performance_index"].to_numpy(float),
                                 index=_point_id(measured))
            out["performance_index"] = out["point_id"].map(by_point).astype(float)
    for pct in goal_answers.PERCENTILES:
        out[f"resp_p{pct:g}_ms"] = math.nan
    if not rt_buckets.empty and not performance_index.empty:
        wide = training.with_rt_buckets(out[["point_id"]], rt_buckets, performance_index)
        counts, bounds = rt_bucket_columns()
        if set(counts) <= set(wide.columns):
            have = wide[counts].notna().all(axis=1).to_numpy()
            count = wide[counts].fillna(0.0).to_numpy(float)
            max_pct = np.nan_to_num(wide[bounds].to_numpy(float), nan=1.0)  # rows without buckets: left out below
            midpoint = wide["rt_midpoint_ms"].to_numpy(float)
            for pct in goal_answers.PERCENTILES:
                # the bound of the bucket reached, over the midpoint (RMF's percentile-goal PI rule)
                ratio, bucket = wlm.percentile_performance_index(count, pct, max_pct=max_pct)
                bounded = have & (bucket >= 1) & (bucket <= 13)
                out[f"resp_p{pct:g}_ms"] = np.where(bounded, ratio * midpoint, math.nan)
    keep = out[cols[4:]].notna().any(axis=1)
    return out.loc[keep, cols].reset_index(drop=True)
