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

A multi-period class (:mod:`kneecap.modeling.class_periods`) carries one distribution and goal per
period, each period's mean a line in the class's (:class:`PeriodGoal`): its forecast row gives each
period's PI (``pi_p<N>``, ``pi_tps_p<N>`` with their bands), and ``pi`` / ``pi_tps`` are the binding
period's (the highest PI, the lowest load at which a PI passes 1, named by ``pi_period``); ``slo:
wlm_goal`` plans for every period's goal at once (the lowest class mean that meets them all).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kneecap.modeling import ModelError
from kneecap.modeling.percentiles import (
    ResponseShape,
    percentile_columns,
    performance_index_forecast,
    quantile_widening,
    widened_band,
)

__all__ = ["GOAL_SLO", "PERCENTILES", "PeriodGoal", "goal_columns", "goal_words", "period_goals", "response_shape",
           "with_slo"]

#: The percentiles every class forecast row gives.
PERCENTILES = (50.0, 90.0, 95.0)
#: ``slo: wlm_goal``: plan for the class's own WLM response time goal (PI <= 1).
GOAL_SLO = "wlm_goal"
# load points of the curve the PI crossing's band is read from (linear between them)
_CURVE_POINTS = 80


def response_shape(results: Any) -> ResponseShape | None:
    """The class's response time distribution, or None (none measured, a multi-period class, no such model)."""
    doc = getattr(results, "response_shape", None)
    return ResponseShape.from_dict(doc) if isinstance(doc, Mapping) and "shift_ms" in doc else None


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


@dataclass(frozen=True)
class PeriodGoal:
    r"""One class period's response time distribution and goal, its mean a line in the class's.

    ``period`` is None for a single-period class (its mean is the class's: ``intercept_ms`` 0,
    ``slope`` 1); ``goal`` ``(goal_type, goal_resp_ms, goal_percentile)`` or None (no response
    time goal); ``share`` the period's share of the class's ended transactions.

    Notes
    -----
    At a class mean :math:`\bar R` the period's mean is :math:`a + b \bar R`
    (:func:`kneecap.modeling.class_periods.period_mean_map`), so the goal is just met at the
    class mean :math:`(\bar R_p^* - a) / b`, :math:`\bar R_p^*` the period mean at which it is
    (:meth:`ResponseShape.mean_for_quantile`).
    """

    period: int | None
    shape: ResponseShape
    goal: tuple[str, float, float] | None
    intercept_ms: float = 0.0
    slope: float = 1.0
    share: float = 1.0

    def words(self) -> str:
        """The goal as WLM states it, with its period in a multi-period class."""
        goal = goal_words(*self.goal) if self.goal else "no response time goal"
        return goal if self.period is None else f"period {self.period}: {goal}"

    def period_mean(self, class_mean_ms: float) -> float:
        """The period's mean response at the class's mean."""
        return self.intercept_ms + self.slope * class_mean_ms

    def widening(self) -> tuple[float, float]:
        """``(lo, hi)`` log factors of the goal percentile's held-out error (0, 0 for an average goal).

        :func:`kneecap.modeling.percentiles.quantile_widening`.
        """
        if self.goal is None or self.goal[0] != "percentile":
            return 0.0, 0.0
        return quantile_widening(self.shape, self.goal[2])

    def class_mean_target(self, widen: float = 0.0) -> float:
        """The class mean at which the period's goal is just met (NaN: none, or below the shift).

        ``widen``: a log factor on the modelled percentile (:meth:`widening`): the mean at which
        the percentile times :math:`e^{widen}` meets the goal.
        """
        if self.goal is None:
            return math.nan
        kind, resp, pct = self.goal
        return (_mean_at(self.shape, kind, resp * math.exp(-widen), pct) - self.intercept_ms) / self.slope

    def pi_band(self, class_means: tuple[float, float, float]) -> tuple[float, float, float]:
        """``(pi, pi_lo, pi_hi)`` at the class's mean and its band's ends ``(mean, lo, hi)``.

        :func:`kneecap.modeling.percentiles.widened_band` by the goal percentile's held-out error
        (:meth:`widening`), the percentiles' rule.
        """
        pis = [self.pi(float(x)) for x in class_means]
        return (pis[0], *widened_band(pis, self.widening()))

    def pi(self, class_mean_ms: float) -> float:
        """The period's forecast PI at the class's mean (:func:`performance_index_forecast`)."""
        assert self.goal is not None
        kind, resp, pct = self.goal
        return float(performance_index_forecast(self.shape, self.period_mean(class_mean_ms), goal_type=kind,
                                                goal_resp_ms=resp, goal_percentile=pct))


def period_goals(results: Any) -> list[PeriodGoal]:
    """Each period's :class:`PeriodGoal` a fitted class carries (one for a single-period class; [] for none)."""
    doc = getattr(results, "response_shape", None)
    if not isinstance(doc, Mapping) or not doc:
        return []
    if "periods" not in doc:
        shape = ResponseShape.from_dict(doc)
        return [PeriodGoal(None, shape, _goal(shape))]
    out = []
    for d in doc["periods"]:
        shape = ResponseShape.from_dict(d)
        c = shape.calibration
        out.append(PeriodGoal(int(c["period"]), shape, _goal(shape), float(c["class_mean_intercept_ms"]),
                              float(c["class_mean_slope"]), float(c["ended_share"])))
    return out


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
        goals = [g for g in period_goals(results) if g.goal is not None]
        if not goals:
            raise ModelError("slo: wlm_goal needs a class fitted on SMF 72.3 intervals with a response time goal "
                             "(percentile or average) and its response time distribution")
        if len(goals) == 1 and goals[0].period is None:
            words = f"WLM goal {goals[0].words()} (PI <= 1)"
        else:
            words = f"WLM goals {'; '.join(g.words() for g in goals)} (PI <= 1 in every period)"
        targets = [g.class_mean_target() for g in goals]
        unmet = [g for g, t in zip(goals, targets) if not (math.isfinite(t) and t > 0)]
        if unmet:  # one period's goal no load meets makes the whole plan impossible (min() would skip a NaN)
            raise ModelError(f"slo {words}: {unmet[0].words()} is below the response no transaction goes under "
                             f"({unmet[0].shape.shift_ms:.3g} ms)")
        mean = min(targets)
        out["slo_resp_ms"] = mean
        cols = {"slo": words, "slo_resp_ms": mean}
        kind, resp, pct = goals[0].goal  # type: ignore[misc]
        if len(goals) == 1 and goals[0].period is None and kind == "percentile":
            cols.update(slo_percentile=pct, slo_percentile_resp_ms=resp)
        return out, cols
    if isinstance(slo, Mapping) and set(slo) == {"percentile", "resp_ms"}:
        try:
            pct, resp = float(slo["percentile"]), float(slo["resp_ms"])
        except (TypeError, ValueError):
            raise ModelError(f"slo percentile and resp_ms must be numbers, got {slo!r}") from None
        if not (0 < pct < 100 and math.isfinite(resp) and resp > 0):
            raise ModelError(f"slo needs 0 < percentile < 100 and resp_ms > 0, got {slo!r}")
        if shape is None and period_goals(results):
            raise ModelError("a percentile SLO on a multi-period class names no period: give slo: wlm_goal (every "
                             "period's own goal) or a mean")
        if shape is None:
            raise ModelError("a percentile SLO needs the class's response time distribution: fit it on SMF 72.3 "
                             "intervals that carry the response time buckets (or give the SLO as a mean)")
        words = f"{pct:g} % within {resp:g} ms"
    else:
        raise ModelError(f"slo must be a mean in ms, {{percentile: P, resp_ms: T}} or {GOAL_SLO}, got {slo!r}")
    mean = _mean_at(shape, "percentile", resp, pct)
    if not math.isfinite(mean):
        raise ModelError(f"slo {words}: below the response no transaction goes under ({shape.shift_ms:.3g} ms)")
    out["slo_resp_ms"] = mean
    return out, {"slo": words, "slo_resp_ms": mean, "slo_percentile": pct, "slo_percentile_resp_ms": resp}


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
    goals = period_goals(results)
    if not goals:
        return {}
    shape = response_shape(results)  # the class's own; None for a multi-period class
    out: dict[str, Any] = {"resp_shape_cdf_error": max(g.shape.calibration.get("cdf_error_mean", math.nan)
                                                       for g in goals)}
    given = row.get("resp_ms")
    mean = float(given) if isinstance(given, float) else math.nan
    means = (mean, row.get("resp_ms_lo", math.nan), row.get("resp_ms_hi", math.nan))
    answered = math.isfinite(mean)
    if answered and shape is not None:
        out.update(percentile_columns(shape, mean, row["resp_ms_lo"], row["resp_ms_hi"], PERCENTILES))
    goals = [g for g in goals if g.goal is not None]
    if not goals:
        return out
    lpar = {k: scenario[k] for k in ("n_gcp", "n_ziip", "bg_load_factor") if scenario.get(k) is not None}
    try:
        curve = results.curve(points=_CURVE_POINTS, **lpar)
    except ModelError:
        curve = None
    each = [_period_pi(results, g, means if answered else None, curve, lpar) for g in goals]
    out["goal"] = "; ".join(g.words() for g in goals)
    if len(goals) > 1 or goals[0].period is not None:
        for g, cols in zip(goals, each):
            out.update({f"{k}_p{g.period}": v for k, v in cols.items()})
        # the binding period: the highest PI at the load asked, the first to pass 1 as load grows
        if answered:
            out.update(pi=max(c["pi"] for c in each), pi_lo=max(c["pi_lo"] for c in each),
                       pi_hi=max(c["pi_hi"] for c in each))
        reach = [c.get("pi_tps", math.nan) for c in each]
        if curve is not None:
            first = int(np.nanargmin(reach)) if np.isfinite(reach).any() else 0
            out.update({k: each[first][k] for k in ("pi_tps", "pi_tps_lo", "pi_tps_hi")},
                       pi_period=goals[first].period)
    else:
        out.update(each[0])
    if growth is not None and math.isfinite(out.get("pi_tps", math.nan)):
        out.update(growth(results, out["pi_tps"], out["pi_tps_lo"], out["pi_tps_hi"]))
    return out


def _period_pi(results: Any, goal: PeriodGoal, means: tuple[float, float, float] | None, curve: Any,
               lpar: Mapping[str, Any]) -> dict[str, Any]:
    """One period's ``pi`` with its band at the class ``means`` (point, lo, hi), and its ``pi_tps`` band."""
    out: dict[str, Any] = {}
    widen_lo, widen_hi = goal.widening()  # the shape's own held-out error, beside the mean's band
    if means is not None:
        out.update(zip(("pi", "pi_lo", "pi_hi"), goal.pi_band(means)))
    if curve is None:
        return out
    target = goal.class_mean_target()
    top = float(curve["tps"].iloc[-1])
    at = float(results.slo_tps(target, lpar=lpar))  # the point by bisection, the band off the curve
    at = at if at <= top else math.nan
    lo = _crossing(curve, "resp_ms_hi", goal.class_mean_target(widen_hi))
    hi = _crossing(curve, "resp_ms_lo", goal.class_mean_target(widen_lo))
    # the band's ends read between curve points; it holds the point found exactly
    out.update(pi_tps=at, pi_tps_lo=min(lo, at) if math.isfinite(at) else lo,
               pi_tps_hi=max(hi, at) if math.isfinite(hi) and math.isfinite(at) else hi)
    return out
