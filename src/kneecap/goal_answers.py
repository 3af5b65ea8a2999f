"""A WLM class's answers about its response time distribution and its goal, for ``kneecap forecast``.

The class model predicts a mean response with a band; where it was fitted on intervals with SMF
72.3 response time buckets it also carries the distribution around that mean
(:class:`kneecap.modeling.percentiles.ResponseShape`). From it a forecast row gets:

- ``resp_p50_ms``, ``resp_p90_ms``, ``resp_p95_ms`` with ``_lo`` / ``_hi`` (the percentiles at the
  ends of the mean's band, :func:`kneecap.modeling.percentiles.percentile_columns`);
- the class's goal (``goal``, as WLM states it) and its forecast Performance Index ``pi`` with
  ``pi_lo`` / ``pi_hi`` at the scenario's load (actual over goal, as IBM defines it:
  :func:`kneecap.modeling.percentiles.performance_index_forecast`);
- ``pi_tps`` with ``pi_tps_lo`` / ``pi_tps_hi``: the load at which the PI passes 1 on the
  scenario's engines, and ``date_pi`` (with the suffixes of :data:`kneecap.forecasting.DATE_SUFFIXES`)
  when the class's growing peaks reach it, by the same paths and crossing rule as the knee's date.

And a scenario's SLO may be a percentile (``slo: {percentile: 90, resp_ms: 5}``) or the class's
own WLM goal (``slo: wlm_goal``: PI <= 1), besides a mean (``slo: 5``, as ``slo_resp_ms``). The
distribution depends on the mean alone (the shift and CPU service are the class's), so each is
the mean response at which it is just met (:meth:`ResponseShape.mean_for_quantile`), and the
planner and the SLO's date use that mean.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from kneecap.modeling import ModelError
from kneecap.modeling.percentiles import ResponseShape, percentile_columns, performance_index_forecast

__all__ = ["GOAL_SLO", "PERCENTILES", "goal_columns", "goal_words", "response_shape", "with_slo"]

#: The percentiles every class forecast row gives.
PERCENTILES = (50.0, 90.0, 95.0)
#: ``slo: wlm_goal``: plan for the class's own WLM response time goal (PI <= 1).
GOAL_SLO = "wlm_goal"
# load points of the curve the PI crossing's band is read from (linear between them)
_CURVE_POINTS = 80


def response_shape(results: Any) -> ResponseShape | None:
    """The response time distribution a fitted model carries, or None (none measured, or no such model)."""
    doc = getattr(results, "response_shape", None)
    return ResponseShape.from_dict(doc) if isinstance(doc, Mapping) and doc else None


def _goal(shape: ResponseShape | None) -> tuple[str, float, float] | None:
    """``(goal_type, goal_resp_ms, goal_percentile)`` of a response time goal the buckets were read under."""
    if shape is None:
        return None
    c = shape.calibration
    kind, resp, pct = c.get("goal_type"), c.get("goal_resp_ms"), c.get("goal_percentile")
    if kind == "average" and resp and resp > 0:
        return "average", float(resp), math.nan
    if kind == "percentile" and resp and resp > 0 and pct and 0 < pct < 100:
        return "percentile", float(resp), float(pct)
    return None


def goal_words(goal_type: str, goal_resp_ms: float, goal_percentile: float) -> str:
    """A response time goal as WLM states it.

    Examples
    --------
    >>> goal_words("percentile", 5.0, 90.0), goal_words("average", 2.5, float("nan"))
    ('90 % within 5 ms', 'average 2.5 ms')
    """
    if goal_type == "average":
        return f"average {goal_resp_ms:g} ms"
    return f"{goal_percentile:g} % within {goal_resp_ms:g} ms"


def _mean_at(shape: ResponseShape, goal_type: str, resp_ms: float, percentile: float) -> float:
    return resp_ms if goal_type == "average" else shape.mean_for_quantile(resp_ms, percentile / 100.0)


def with_slo(results: Any, scenario: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario with its ``slo`` turned into the mean ``slo_resp_ms`` it means, and the SLO's columns.

    ``slo``: a number (a mean response, as ``slo_resp_ms``), ``{percentile: P, resp_ms: T}``
    (P % of transactions within T ms) or ``wlm_goal`` (the class's WLM response time goal, PI <= 1).
    The columns: ``slo`` (in words), ``slo_percentile`` and ``slo_percentile_resp_ms`` for a
    percentile, and ``slo_resp_ms`` (the mean at which it is just met).

    Raises
    ------
    ModelError
        Both ``slo`` and ``slo_resp_ms``; a malformed ``slo``; a percentile or goal SLO for a model
        with no measured response time distribution, or a goal that is not a response time goal.
    """
    out = dict(scenario)
    slo = out.pop("slo", None)
    if slo is None:
        return out, {}
    if out.get("slo_resp_ms") is not None:
        raise ModelError("give slo or slo_resp_ms, not both")
    if isinstance(slo, (int, float)) and not isinstance(slo, bool):
        if not (math.isfinite(slo) and slo > 0):
            raise ModelError(f"slo must be a positive mean response in ms, got {slo!r}")
        out["slo_resp_ms"] = float(slo)
        return out, {"slo": f"mean {float(slo):g} ms"}
    shape = response_shape(results)
    if slo == GOAL_SLO:
        goal = _goal(shape)
        if goal is None or shape is None:
            raise ModelError("slo: wlm_goal needs a class fitted on SMF 72.3 intervals with a response time goal "
                             "(percentile or average) and its response time distribution")
        kind, resp, pct = goal
        words = f"WLM goal {goal_words(kind, resp, pct)} (PI <= 1)"
    elif isinstance(slo, Mapping) and set(slo) == {"percentile", "resp_ms"}:
        try:
            pct, resp = float(slo["percentile"]), float(slo["resp_ms"])
        except (TypeError, ValueError):
            raise ModelError(f"slo percentile and resp_ms must be numbers, got {slo!r}") from None
        if not (0 < pct < 100 and math.isfinite(resp) and resp > 0):
            raise ModelError(f"slo needs 0 < percentile < 100 and resp_ms > 0, got {slo!r}")
        if shape is None:
            raise ModelError("a percentile SLO needs the class's response time distribution: fit it on SMF 72.3 "
                             "intervals that carry the response time buckets (or give the SLO as a mean)")
        kind, words = "percentile", f"{pct:g} % within {resp:g} ms"
    else:
        raise ModelError(f"slo must be a mean in ms, {{percentile: P, resp_ms: T}} or {GOAL_SLO}, got {slo!r}")
    mean = _mean_at(shape, kind, resp, pct)
    if not math.isfinite(mean):
        raise ModelError(f"slo {words}: below the response no transaction goes under ({shape.shift_ms:.3g} ms)")
    out["slo_resp_ms"] = mean
    cols = {"slo": words, "slo_resp_ms": mean}
    if kind == "percentile":
        cols.update(slo_percentile=pct, slo_percentile_resp_ms=resp)
    return out, cols


def _crossing(curve: Any, column: str, level: float) -> float:
    """First load of ``curve`` at which ``column`` reaches ``level`` (linear between points; NaN: never)."""
    y = curve[column].to_numpy(float)
    x = curve["tps"].to_numpy(float)
    above = np.flatnonzero(~(y < level))
    if not above.size:
        return math.nan
    i = int(above[0])
    if i == 0 or not math.isfinite(y[i]):
        return float(x[i])
    return float(x[i - 1] + (level - y[i - 1]) * (x[i] - x[i - 1]) / (y[i] - y[i - 1]))


def goal_columns(results: Any, scenario: Mapping[str, Any], row: Mapping[str, Any], *,
                 growth: Any = None) -> dict[str, Any]:
    r"""The percentile and Performance Index columns of one answered class scenario (module docstring).

    ``row``: the family's answer (``resp_ms`` and its band where the scenario gave a load, the
    knee); ``growth``: ``(results, knee_tps, lo, hi) -> columns`` of the date a load is reached
    (:func:`kneecap.forecasting.class_growth` through :func:`kneecap.forecasting.goal_growth`), or
    None. ``{}`` for a model without a measured distribution.

    Notes
    -----
    ``pi_tps`` is where the mean reaches :math:`\bar R^*`, the mean at which the goal is just met
    (:meth:`ResponseShape.mean_for_quantile`), on the scenario's engines and other classes (the
    model's ``slo_tps``; NaN past 95 % of saturation); ``pi_tps_lo`` / ``_hi`` where the upper /
    lower end of the mean's band reaches it on the model's curve (the band's doubt carried to the
    load, the shape held).
    """
    shape = response_shape(results)
    if shape is None:
        return {}
    out: dict[str, Any] = {"resp_shape_cdf_error": shape.calibration.get("cdf_error_mean", math.nan)}
    given = row.get("resp_ms")
    mean = float(given) if isinstance(given, float) else math.nan
    answered = math.isfinite(mean)
    if answered:
        out.update(percentile_columns(shape, mean, row["resp_ms_lo"], row["resp_ms_hi"], PERCENTILES))
    goal = _goal(shape)
    if goal is None:
        return out
    kind, resp, pct = goal
    out["goal"] = goal_words(kind, resp, pct)
    if answered:
        pis = [float(performance_index_forecast(shape, x, goal_type=kind, goal_resp_ms=resp, goal_percentile=pct))
               for x in (mean, row["resp_ms_lo"], row["resp_ms_hi"])]
        out.update(pi=pis[0], pi_lo=min(pis), pi_hi=max(pis))
    target = _mean_at(shape, kind, resp, pct)
    lpar = {k: scenario[k] for k in ("n_gcp", "n_ziip", "bg_load_factor") if scenario.get(k) is not None}
    try:
        curve = results.curve(points=_CURVE_POINTS, **lpar)
    except ModelError:
        return out
    top = float(curve["tps"].iloc[-1])
    at = float(results.slo_tps(target, lpar=lpar))  # the point by bisection, the band off the curve
    at = at if at <= top else math.nan
    lo, hi = _crossing(curve, "resp_ms_hi", target), _crossing(curve, "resp_ms_lo", target)
    # the band's ends read between curve points; it holds the point found exactly
    out.update(pi_tps=at, pi_tps_lo=min(lo, at) if math.isfinite(at) else lo,
               pi_tps_hi=max(hi, at) if math.isfinite(hi) and math.isfinite(at) else hi)
    if growth is not None and math.isfinite(out["pi_tps"]):
        out.update(growth(results, out["pi_tps"], out["pi_tps_lo"], out["pi_tps_hi"]))
    return out
