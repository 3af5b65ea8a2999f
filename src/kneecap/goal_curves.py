r"""A WLM class's Performance Index and response percentiles against its load: forecast and measured.

The forecast (:func:`goal_curve`) is the class model's response curve, the mean with its band at
each load (``results.curve(...)``), mapped load by load through the response time distribution
the model carries (:class:`kneecap.modeling.percentiles.ResponseShape`), as
:func:`kneecap.goal_answers.goal_columns` maps one load: the percentiles at the mean and at the
band's ends (:func:`~kneecap.modeling.percentiles.percentile_columns`), and the goal's Performance
Index the same way (:func:`~kneecap.modeling.percentiles.performance_index_forecast`). A
multi-period class has a distribution and goal per period, its mean a line in the class's
(:class:`kneecap.goal_answers.PeriodGoal`): each period's PI, and no class percentile.

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
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kneecap import goal_answers, training, wlm
from kneecap.modeling import ModelError
from kneecap.modeling.class_periods import class_point_id, period_of
from kneecap.modeling.percentiles import percentile_columns, rt_bucket_columns

__all__ = ["goal_curve", "goal_curve_on", "measured_goal_points", "response_goal"]

#: Columns of the response curve a goal curve is read from (``results.curve``).
CURVE_COLUMNS = ("tps", "resp_ms", "resp_ms_lo", "resp_ms_hi")


def response_goal(results: Any) -> tuple[str, float, float] | None:
    """The WLM response time goal of a single-period class's distribution, or None.

    ``(goal_type, goal_resp_ms, goal_percentile)``: ``("percentile", T, P)`` for "P % within T
    ms", ``("average", T, nan)``; None for a model without a measured distribution, a class with
    no response time goal (velocity, discretionary) or a multi-period class (a goal per period:
    :func:`kneecap.goal_answers.period_goals`).
    """
    goals = goal_answers.period_goals(results)
    return goals[0].goal if len(goals) == 1 and goals[0].period is None else None


def goal_curve(results: Any, curve: pd.DataFrame) -> pd.DataFrame:
    r"""The class's response percentiles and its goals' PI along a response curve, each with its band.

    Parameters
    ----------
    results : fitted class model
        One that carries a response time distribution (:func:`kneecap.goal_answers.period_goals`).
    curve : DataFrame
        Its response curve on the engines asked: ``tps``, ``resp_ms``, ``resp_ms_lo``,
        ``resp_ms_hi`` (``results.curve(points=..., **lpar)``, or
        :func:`kneecap.forecasting.response_curve`).

    Returns
    -------
    DataFrame
        One row per curve row: its ``tps`` and mean response with band; for a class with one
        distribution ``resp_p50_ms``, ``resp_p90_ms``, ``resp_p95_ms`` each with ``_lo`` / ``_hi``;
        with a response time goal ``pi``, ``pi_lo``, ``pi_hi``. A multi-period class (one
        distribution and goal per period, no class percentile) gives each period's PI as
        ``pi_p<N>`` with ``pi_lo_p<N>`` / ``pi_hi_p<N>``, and ``pi`` / ``pi_lo`` / ``pi_hi`` the highest of them
        (the binding period's), as :func:`kneecap.goal_answers.goal_columns` gives them. Empty
        for a model without a measured distribution.

    Notes
    -----
    At each load the percentile :math:`R_p(\bar R)` and the PI are taken at the mean
    :math:`\bar R` and at the ends of its band, the shape held (the map from mean to percentile
    rises, so the band's ends map to the percentile's); the band is the lowest and highest of the
    three, open above (``inf``) where an end of the mean's band is. A period's PI is taken at its
    own mean, :math:`a + b \bar R` (:class:`kneecap.goal_answers.PeriodGoal`). At a load of the
    curve the columns are ``goal_columns``' for that load; PI 1 is crossed where the mean reaches
    the goal's :math:`\bar R^*`, so between two curve points around ``pi_tps``.
    """
    periods = goal_answers.period_goals(results)
    if not periods:
        return pd.DataFrame()
    shape = goal_answers.response_shape(results)  # the class's own; None for a multi-period class
    goals = [g for g in periods if g.goal is not None]
    single = len(goals) == 1 and goals[0].period is None
    rows = []
    for tps, mean, lo, hi in curve[list(CURVE_COLUMNS)].itertuples(index=False):
        means = (float(mean), float(lo), float(hi))
        row: dict[str, float] = {"tps": float(tps), "resp_ms": means[0], "resp_ms_lo": means[1],
                                 "resp_ms_hi": means[2]}
        if shape is not None:
            row.update(percentile_columns(shape, *means, goal_answers.PERCENTILES))
        each = []
        for g in goals:
            each.append(g.pi_band(means))
            if not single:
                # named as goal_columns names a period's columns
                row[f"pi_p{g.period}"], row[f"pi_lo_p{g.period}"], row[f"pi_hi_p{g.period}"] = each[-1]
        if each:  # the binding period's: the highest PI, and the highest of each end of the bands
            row["pi"], row["pi_lo"], row["pi_hi"] = (max(e[i] for e in each) for i in range(3))
        rows.append(row)
    return pd.DataFrame(rows)


def goal_curve_on(results: Any, lpar: Mapping[str, Any], *, points: int = 80) -> pd.DataFrame:
    """:func:`goal_curve` on the model's own curve on the LPAR ``lpar``, up to 95 % of saturation.

    ``lpar``: ``n_gcp``, ``n_ziip``, ``bg_load_factor`` (the model's own where not given), as
    :func:`kneecap.goal_answers.goal_columns` takes them from a scenario and reads the PI's load
    off the same curve. Empty for a model without a measured distribution, or where the other
    classes fill a pool the class needs (no load can be carried: no curve).
    """
    if not goal_answers.period_goals(results):
        return pd.DataFrame()
    try:
        curve = results.curve(points=points, **{k: v for k, v in lpar.items() if v is not None})
    except ModelError:
        return pd.DataFrame()
    return goal_curve(results, curve)


def measured_goal_points(points: pd.DataFrame, performance_index: pd.DataFrame, rt_buckets: pd.DataFrame,
                         goals: Sequence[goal_answers.PeriodGoal]) -> pd.DataFrame:
    """Per measured interval and period of a class: its load, the PI RMF measured for its goal, its bucket percentiles.

    Parameters
    ----------
    points : DataFrame
        The class's rows of ``fct_measurements``, one per interval and service class period
        (``point_id``, ``tps``, ``system_id``, ``interval_start_at``, ``service_class``).
    performance_index : DataFrame
        The ``fct_performance_index`` mart (may be empty).
    rt_buckets : DataFrame
        The ``fct_rt_buckets`` mart (may be empty).
    goals : sequence of PeriodGoal
        The goals the model forecasts the PI of (:func:`kneecap.goal_answers.period_goals`): a
        period gives a measured PI only under the goal forecast for it (a single-period class's
        goal for any period that has it).

    Returns
    -------
    DataFrame
        ``point_id``, ``system_id``, ``interval_start_at``, ``period``, ``tps`` (the class's: its
        periods' summed in the interval, the load the class model is drawn against),
        ``performance_index`` (NaN: none measured for the goal) and ``resp_p50_ms``,
        ``resp_p90_ms``, ``resp_p95_ms``: the upper bound in ms of the 72.3 bucket the
        percentile of the period's transactions completed in (NaN: no buckets, or the open bucket
        past 400 % of the midpoint). Rows with a load and at least one of them.
    """
    cols = ["point_id", "system_id", "interval_start_at", "period", "tps", "performance_index",
            *(f"resp_p{p:g}_ms" for p in goal_answers.PERCENTILES)]
    needed = {"point_id", "tps", "system_id", "interval_start_at", "service_class"}
    if points.empty or not needed <= set(points.columns):
        return pd.DataFrame(columns=cols)
    out = points[points["tps"].notna()].reset_index(drop=True)
    # the class's load in the interval: its periods' summed, as the class model is fitted (merge_periods)
    interval = class_point_id(out["point_id"])
    out = out.assign(period=period_of(out["point_id"]), performance_index=math.nan,
                     tps=out.groupby(interval)["tps"].transform("sum"))
    if not performance_index.empty and goals:
        key = ["system_id", "interval_start_at", "class_name", "period"]
        ours = pd.DataFrame({"system_id": out["system_id"], "interval_start_at": out["interval_start_at"],
                             "class_name": out["service_class"], "period": out["period"]})
        measured = performance_index[performance_index["performance_index"].notna()]
        found = ours.merge(measured[[*key, "goal_type", "goal_resp_ms", "goal_percentile", "performance_index"]],
                           on=key, how="left")
        under = pd.Series(False, index=found.index)
        for g in goals:
            if g.goal is None:
                continue
            kind, goal_resp_ms, goal_pct = g.goal
            same = (found["goal_type"] == kind) & np.isclose(found["goal_resp_ms"], goal_resp_ms)
            if kind == "percentile":
                same &= np.isclose(found["goal_percentile"], goal_pct)
            under |= same & (found["period"] == g.period if g.period is not None else True)
        out["performance_index"] = found["performance_index"].where(under).astype(float).to_numpy()
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
    keep = out[cols[5:]].notna().any(axis=1)
    return out.loc[keep, cols].reset_index(drop=True)
