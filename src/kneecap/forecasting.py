"""The one place questions get answered: the app's pages, ``kneecap forecast`` and the backtest call these.

Pure functions over fitted results objects (loading them from the registry is the caller's job,
through :mod:`kneecap.tracking`). Each model family answers a scenario itself (its ``answer``,
:class:`kneecap.modeling.base.Results`); this module checks the scenario, asks the response and
cost models, applies catalogue factors and adds the warnings. A *scenario* is a mapping:
``workload`` plus any of ``clients``, ``tps``, ``think_time_ms``, ``n_gcp``, ``n_ziip``,
``req_bytes``, ``resp_bytes``, ``slo_resp_ms``, ``current_clients``, ``growth_pct_per_year`` and
the factor labels a cost model was fitted with (``transport``, ``pooling``, ``release``, ``api``,
``config``).

Three more keys describe a what-if rather than a model input:

- ``cs_workload``: a Communications Server workload name such as ``CRR30(200B/200B)``; its clients
  and payload bytes fill ``clients``, ``req_bytes`` and ``resp_bytes`` (a value given as well must
  agree) and its pattern is reported (:mod:`kneecap.workloads`).
- ``factors``: catalogue factor ids, or ``{id, share}`` mappings, applied to the workload's fitted
  CPU cost (:mod:`kneecap.factors`); the row then carries every answer twice, unadjusted and with
  the suffix ``_adjusted``, plus the factors' changes and citations.
- ``processor``: ``{from, to, ratio_doubt_pct}``, a change of processor model answered on the
  target's engine speeds from published capacities (:mod:`kneecap.processors`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kneecap import factors as factor_catalogue
from kneecap import goal_answers, peak_load, processors
from kneecap import workloads as cs_workloads
from kneecap._answer_checks import (
    ANSWER_CHECKS,
    EXTRAPOLATION_WARN_X,
    STRUCTURE_DISAGREEMENT,
    WARNINGS_SEPARATOR,
    answer_warnings,
    band_check,
    knees_apart,
    structure_disagreement,
    structure_knees,
)
from kneecap.config import GrowthConfig
from kneecap.modeling import ModelError
from kneecap.modeling.answers import (
    ANSWERED,
    FAILED,
    SATURATED,
    Saturated,
    extrapolation,
    latched_help_caveat,
    saturation_message,
)
from kneecap.modeling.engines import ENGINE_KEYS, engine_costs, engine_words, on_engines
from kneecap.modeling.knee import Knee
from kneecap.modeling.ziip import PlannerPolicy
from kneecap.scenario_checks import MAX_CLIENTS, MAX_TPS, SCENARIO_RANGES, check_scenario

#: Names other modules read from here, kept where they were before the family answers moved
#: to :mod:`kneecap.modeling.answers` and the answers' checks to a module of their own.
__all__ = ["ANSWERED", "ANSWER_CHECKS", "EXTRAPOLATION_WARN_X", "FAILED", "SATURATED", "STRUCTURE_DISAGREEMENT",
           "WARNINGS_SEPARATOR", "Saturated", "answer_warnings", "band_check", "extrapolation", "knees_apart",
           "latched_help_caveat", "saturation_message", "structure_disagreement", "structure_knees",
           "MAX_CLIENTS", "MAX_TPS", "SCENARIO_RANGES", "check_scenario"]

FACTOR_KEYS = ("transport", "pooling", "release", "api", "config")
SCENARIO_KEYS = ("workload", "name", "clients", "tps", "think_time_ms", "n_gcp", "n_ziip", "req_bytes",
                 "resp_bytes", "n_queues", "slo_resp_ms", "current_clients", "growth_pct_per_year", *FACTOR_KEYS,
                 "cs_workload", "factors", "bg_load_factor", "current_tps", "slo", *ENGINE_KEYS,
                 "peak_by", "peak_pct", "processor")

#: Answer columns a scenario with ``factors`` repeats with the suffix ``_adjusted``.
ADJUSTED_COLUMNS = ("demand_ms_per_tran", "ziip_eligible_fraction", "resp_ms", "resp_ms_lo", "resp_ms_hi",
                    "tps", "tps_lo", "tps_hi", "ziip_busy_pct", "gcp_busy_pct", "ziip_eligible_on_gcp_share_pct",
                    "ziip_eligible_on_gcp_pct", "knee_clients", "knee_clients_lo", "knee_clients_hi",
                    "saturation_clients", "max_tps", "recommended_n_ziip", "recommended_n_gcp",
                    "slo_margin_ms", "recommendation", "binding_rule", "binding_sentence", "years_to_knee",
                    "cpu_ms_per_tran", "cpu_ms_per_tran_lo", "cpu_ms_per_tran_hi", "status", "status_message")


#: Planner policy and knee rule (params.yaml ``planner`` and ``train.knee_k``).
Policy = PlannerPolicy


@dataclass(frozen=True)
class GrowthPolicy(GrowthConfig):
    """How a class's growth is read from its history (params.yaml ``growth``).

    ``freq``: ``"D"`` daily or ``"W"`` weekly peaks; ``stat``: ``"max"`` or ``"pNN"`` (a percentile
    of the period's intervals); ``hours``: ``[first, last)`` hours of day the peak is taken in;
    ``horizon``: periods ahead a crossing is looked for (beyond it the date is ``None``). The
    fields, their defaults and checks are :class:`kneecap.config.GrowthConfig`'s, written once there.
    """


@dataclass
class WorkloadModels:
    """A workload's registered champions: a response model and/or a cost model."""

    workload: str
    response: Any = None
    cost: Any = None


def default_configuration(results: Any) -> dict[str, float]:
    """The first training configuration (n_gcp, n_ziip, think time) of a closed fit: what the sliders start at."""
    return results.default_configuration()


def response_curve(results: Any, *, max_load: float, points: int = 80, max_draws: int | None = None,
                   **configuration: Any) -> pd.DataFrame:
    """Predicted response, throughput and pool utilisation with bands over a grid of load (``results.curve``).

    Closed models: ``clients`` from 1 to ``max_load``; open models: ``tps`` up to ``max_load``.
    ``configuration`` (engines, think time, the other classes' load) is passed where given (not None).
    """
    return results.curve(max_load=max_load, points=points, max_draws=max_draws,
                         **{key: value for key, value in configuration.items() if value is not None})


def knee(results: Any, *, n_gcp: int, n_ziip: int, think_time_ms: float, k: float,
         max_draws: int | None = None, solve_to: int = 0) -> Knee | None:
    """A closed fit's knee with its interval in one configuration (:class:`kneecap.modeling.knee.Knee`).

    ``solve_to``: clients up to which a curve of the same configuration will be drawn; the knee's
    solve then covers it, and the curve reuses it (:meth:`kneecap.modeling.closed.ClosedMVAResults.knee`).
    """
    return results.knee(n_gcp=n_gcp, n_ziip=n_ziip, think_time_ms=think_time_ms, k=k,
                        max_draws=max_draws, solve_to=solve_to)


def clients_for_tps(results: Any, tps: float, *, n_gcp: int, n_ziip: int, think_time_ms: float) -> int:
    """Fewest clients whose predicted throughput reaches ``tps`` (a closed fit asked by rate)."""
    return results.clients_for_tps(tps, n_gcp=n_gcp, n_ziip=n_ziip, think_time_ms=think_time_ms)


def band_width(curve: pd.DataFrame, load: str, at: float) -> dict[str, float] | None:
    """The response's 95 % band on ``curve`` at ``load`` = ``at`` (interpolated between the curve's loads).

    ``curve``: a response curve (``load``, ``resp_ms``, ``resp_ms_lo``, ``resp_ms_hi``); its rows
    without a finite band (past saturation) are left out. Returns ``load``, ``resp_ms``, ``lo``,
    ``hi`` and ``half_pct``, the band's half width in % of the response; None outside the curve.
    """
    band = curve[[load, "resp_ms", "resp_ms_lo", "resp_ms_hi"]].replace([np.inf, -np.inf], np.nan).dropna()
    band = band.sort_values(load)
    if band.empty or not band[load].iloc[0] <= at <= band[load].iloc[-1]:
        return None
    x = band[load].to_numpy(float)
    resp, lo, hi = (float(np.interp(at, x, band[c].to_numpy(float))) for c in ("resp_ms", "resp_ms_lo", "resp_ms_hi"))
    return {"load": float(at), "resp_ms": resp, "lo": lo, "hi": hi, "half_pct": 100 * (hi - lo) / 2 / resp}


def band_sentence(curve: pd.DataFrame, load: str, unit: str, knee_load: float) -> str | None:
    """How wide the response's 95 % band is at the lowest load drawn and at the knee, in words.

    A band a few % wide at low load is thinner than the line on an axis scaled to the knee's
    response: said in words, so that a reader does not take it for a band left out. None when the
    curve has no finite band.

    Examples
    --------
    >>> curve = pd.DataFrame({"tps": [10.0, 100.0, 200.0], "resp_ms": [20.0, 30.0, 60.0],
    ...                       "resp_ms_lo": [19.0, 27.0, 48.0], "resp_ms_hi": [21.0, 33.0, 72.0]})
    >>> band_sentence(curve, "tps", "tps", knee_load=150.0)
    '+/-5 % of the response at 10 tps (19-21 ms), +/-16.7 % at the knee (150 tps)'
    """
    low = band_width(curve, load, float(curve[load].min()))
    if low is None:
        return None
    words = (f"+/-{low['half_pct']:.3g} % of the response at {low['load']:.4g} {unit} "
             f"({low['lo']:.3g}-{low['hi']:.3g} ms)")
    at_knee = band_width(curve, load, knee_load)
    if at_knee is not None:
        words += f", +/-{at_knee['half_pct']:.3g} % at the knee ({knee_load:.4g} {unit})"
    return words


def adjusted_models(models: WorkloadModels, adjustment: factor_catalogue.Adjustment) -> WorkloadModels:
    r"""The workload's response model with the factor-adjusted CPU demand and eligible share.

    The fitted demand :math:`D` becomes ``adjustment.adjusted_demand_ms`` and the band keeps its
    relative width (the family's ``with_demand``). Only a family with a CPU demand of its own
    (``factor_demand()`` not None) has one to adjust; the cost model is returned as is
    (:func:`forecast_scenario` adjusts its predictions).
    """
    res = models.response
    if res is None or res.factor_demand() is None:
        return models
    adjusted = res.with_demand(adjustment.adjusted_demand_ms, adjustment.adjusted_eligible_fraction,
                               adjustment.ratio)
    return WorkloadModels(models.workload, adjusted, models.cost)


def factor_models(models: WorkloadModels, selections: Iterable[str | Mapping[str, Any]],
                  catalogue: Mapping[str, factor_catalogue.Factor]
                  ) -> tuple[WorkloadModels, factor_catalogue.Adjustment]:
    """The workload's response model with catalogue factors applied, and the adjustment.

    Raises
    ------
    ModelError
        When the response model has no CPU demand of its own to adjust (a closed MVA fit has).
    kneecap.factors.FactorError
        When a factor cannot be applied (see :func:`kneecap.factors.adjust_demand`).
    """
    res = models.response
    demand = res.factor_demand() if res is not None else None
    if demand is None:
        raise ModelError(f"{models.workload}: factors change a closed model's CPU demand; "
                         f"the response model is {getattr(res, 'family', None)!r}")
    cpu_ms_per_tran, ziip_eligible_fraction = demand
    adjustment = factor_catalogue.adjust_demand(cpu_ms_per_tran, ziip_eligible_fraction, list(selections), catalogue)
    return adjusted_models(models, adjustment), adjustment


def forecast_scenario(models: WorkloadModels, scenario: Mapping[str, Any], policy: Policy,
                      catalogue: Mapping[str, factor_catalogue.Factor] | None = None, *,
                      growth: GrowthPolicy | None = None, machines: processors.Catalogue | None = None
                      ) -> dict[str, Any]:
    """Every answer one scenario supports: response with band, knee, zIIP plan, cost, time to knee.

    The row's ``status`` is ``answered``, or ``saturated`` with a ``status_message`` when the load
    is past what the configuration carries (its response then empty); ``warnings`` joins with
    :data:`WARNINGS_SEPARATOR` what qualifies the answers (:func:`answer_warnings`).

    With ``factors`` (and the ``catalogue`` they come from) each answer is also given for the
    workload's CPU cost adjusted by those factors (:func:`kneecap.factors.adjust_demand`): columns
    :data:`ADJUSTED_COLUMNS` with the suffix ``_adjusted``, plus ``factors``, ``factor_changes``
    and ``factor_citations``.
    """
    unknown = sorted(set(scenario) - set(SCENARIO_KEYS))
    if unknown:
        raise ModelError(f"unknown scenario key(s) {', '.join(unknown)}; known: {', '.join(SCENARIO_KEYS)}")
    check_scenario(scenario)
    if scenario.get("processor") is not None:  # answered on the target processor's engines
        ask = functools.partial(forecast_scenario, models, policy=policy, catalogue=catalogue, growth=growth)
        return processors.answer_on_target(ask, scenario, machines, models.response)
    scenario = cs_workloads.with_workload_name(scenario)
    check_scenario(scenario)
    selections = scenario.pop("factors", None) or []
    if isinstance(selections, (str, Mapping)):
        selections = [selections]
    row = _answers(models, scenario, policy, growth)
    row.setdefault("status", ANSWERED)
    row["warnings"] = WARNINGS_SEPARATOR.join(answer_warnings(models.response, row)) or None
    if scenario.get("bg_load_factor") is not None:  # the machine asked about, said in the answer's first words
        row["bg_load_factor"] = float(scenario["bg_load_factor"])
    if scenario.get("cs_workload") is not None:
        parsed = cs_workloads.parse_workload_name(scenario["cs_workload"])
        row.update(cs_workload=cs_workloads.format_workload_name(parsed), pattern=parsed.pattern,
                   connect_per_tran=parsed.connect_per_tran, req_bytes=parsed.req_bytes,
                   resp_bytes=parsed.resp_bytes)
    if not selections:
        return row
    if catalogue is None:
        raise ModelError("the scenario names factors but no factor catalogue was given")
    res = models.response
    if res is not None and res.factor_demand() is not None:
        adjusted_pair, adjustment = factor_models(models, selections, catalogue)
        adjusted = _answers(adjusted_pair, scenario, policy, growth)
        adjusted.setdefault("status", ANSWERED)
        adjusted.update(demand_ms_per_tran=adjustment.adjusted_demand_ms,
                        ziip_eligible_fraction=adjustment.adjusted_eligible_fraction)
    elif "cpu_ms_per_tran" in row:
        adjustment = factor_catalogue.adjust_demand(row["cpu_ms_per_tran"], 0.0, selections, catalogue)
        adjusted = dict(row)
    else:
        raise ModelError(f"{models.workload}: no fitted CPU cost to apply factors to (needs a closed "
                         "response model or a cost model the scenario can predict)")
    if "cpu_ms_per_tran" in row:
        for col in ("cpu_ms_per_tran", "cpu_ms_per_tran_lo", "cpu_ms_per_tran_hi"):
            adjusted[col] = factor_catalogue.adjust_demand(row[col], 0.0, selections, catalogue).adjusted_demand_ms
    for col in ADJUSTED_COLUMNS:
        if col in adjusted:
            row[f"{col}_adjusted"] = adjusted[col]
    row.update(factors=", ".join(a.factor_id for a in adjustment.applied),
               factor_changes=adjustment.describe(),
               factor_citations=" | ".join(f"{a.factor_id}: {a.citation}" for a in adjustment.applied))
    return row


def _answers(models: WorkloadModels, scenario: Mapping[str, Any], policy: Policy,
             growth: GrowthPolicy | None = None) -> dict[str, Any]:
    """The unadjusted answers of one scenario: the response family's, then the cost model's.

    The cost model is asked at the scenario's ``tps``, or at the throughput the response model
    answered with (see :func:`forecast_scenario`).
    """
    row: dict[str, Any] = {"workload": models.workload, "scenario": scenario.get("name", "")}
    engines = {key: scenario[key] for key in ENGINE_KEYS if scenario.get(key) is not None}
    if models.response is not None:
        # the LPAR's engines when not all alike (speeds, zIIPs in SMT-2): the answers on them
        response = on_engines(models.response, **engines) if engines else models.response
        # tps: peak is the class's forecast peak; an slo in percentiles or the WLM goal a mean SLO
        scenario, peak = peak_load.with_planned_peak(response, scenario, functools.partial(growth_paths, policy=growth),
                                                     pct=(growth or GrowthPolicy()).plan_peak_pct)
        row.update(peak)
        scenario, slo = goal_answers.with_slo(response, scenario)
        row.update(response.answer(scenario, policy, growth=functools.partial(growth_answers, policy=growth)))
        on = getattr(response, "engines", engines)  # a class fitted on engines not alike: the measured ones
        if on and "ziip_eligible_on_gcp_share_pct" in row:
            row.update(engine_costs(row, on), engines=engine_words(on) or None)
        row.update(**slo, **goal_answers.goal_columns(response, scenario, row,
                                                      growth=functools.partial(goal_growth, policy=growth)))
    if models.cost is not None:
        answered_tps = {"tps": row["tps"]} if "tps" in row else {}
        row.update(models.cost.answer({**answered_tps, **scenario}, policy))
    if models.response is None and models.cost is None:
        raise ModelError(f"{models.workload}: no registered model")
    return row


def class_history(results: Any) -> pd.DataFrame:
    """The class's fitted intervals (``interval_start_at``, ``tps``) the model carries."""
    return history_frame(results.history)


def slo_tps(results: Any, slo_resp_ms: float, *, lpar: Mapping[str, Any] | None = None,
            tol: float = 1e-4) -> float:
    """The class tps at which the predicted response reaches ``slo_resp_ms`` (NaN: unreachable).

    :meth:`kneecap.modeling.open_dispatch.OpenDispatchResults.slo_tps`.
    """
    return results.slo_tps(slo_resp_ms, lpar=lpar, tol=tol)


def iso_day(value: Any) -> str | None:
    """A date (or timestamp) as ``YYYY-MM-DD``; None for none."""
    return None if value is None or value is pd.NaT else pd.Timestamp(value).date().isoformat()


def history_frame(history: Iterable[Any]) -> pd.DataFrame:
    """A results object's ``history`` (``[[interval_start_at ISO, tps], ...]``) as a frame."""
    frame = pd.DataFrame(list(history), columns=["interval_start_at", "tps"])
    frame["interval_start_at"] = pd.to_datetime(frame["interval_start_at"])
    return frame


#: Suffixes of the crossing dates :func:`class_growth` returns for a target ``name``
#: (``date_<name><suffix>``): median, earliest plausible (5 %), reached by with 90 %
#: probability, and the (1 - alpha) range.
DATE_SUFFIXES = ("", "_earliest", "_p90", "_lo", "_hi")


def class_growth(results: Any, *, knee_tps: float, knee_tps_lo: float | None = None,
                 knee_tps_hi: float | None = None, knee_tps_draws: Sequence[float] | None = None,
                 slo_tps: float | None = None, policy: GrowthPolicy | None = None,
                 alpha: float = 0.05) -> dict[str, Any]:
    """When the class's peak load reaches its knee (and the SLO's load), from its interval history.

    The peak interval tps per ``freq`` period (:func:`kneecap.growth.peak_series`) is fitted by the
    competing trend models (:func:`kneecap.growth.fit_growth`); whole future paths are drawn from
    all of them by their rolling-origin weights (:meth:`kneecap.growth.GrowthResults.simulate`),
    and each path's first reach of a draw of the knee (from ``knee_tps_draws`` when given, the refits'
    own knees: :func:`kneecap.modeling.open_dispatch.knee_draws`; else a split log-normal through
    ``knee_tps_lo``, ``knee_tps``, ``knee_tps_hi`` at ``alpha``) is one crossing
    (:func:`kneecap.growth.crossing_date`). The dates are that distribution's quantiles put on
    period starts (:func:`kneecap.growth.round_to_periods`: the early ends down, the rest up, so a
    real spread never prints as one day): ``date_knee`` the median, ``date_knee_earliest`` the
    5 % quantile, ``date_knee_p90`` the date by which it is reached with 90 % probability,
    ``date_knee_lo`` / ``_hi`` the ``alpha/2`` and ``1 - alpha/2`` quantiles; ``None`` past the
    horizon. ``knee_unreached_pct`` is the % of paths that do not reach it within the horizon
    (over 10 % and ``date_knee_p90`` is ``None``). The SLO's load is a point, not an interval.

    Returns
    -------
    dict
        ``peaks`` (Series), ``forecast`` (DataFrame ``tps``, ``tps_lo``, ``tps_hi``: the chosen
        model's band), ``method``, ``weights`` (each candidate's share of the paths),
        ``competitors``, ``summary``, and ``date_knee`` with the suffixes of
        :data:`DATE_SUFFIXES`, ``knee_unreached_pct``, ``knee_already``, plus the same for ``slo``
        when ``slo_tps`` is given.
    """
    from kneecap import growth

    policy = policy or GrowthPolicy()
    horizon = int(policy.horizon)
    history = tuple(map(tuple, results.history))
    peaks, fitted = _growth_fit(history, policy, alpha)
    paths = _growth_paths(history, policy, alpha)
    out: dict[str, Any] = {"peaks": peaks.copy(), "forecast": fitted.forecast(horizon), "method": fitted.method,
                           "weights": paths.weights.copy(), "competitors": fitted.competitors,
                           "summary": fitted.summary()}
    draws = None if knee_tps_draws is None or len(knee_tps_draws) == 0 else np.asarray(knee_tps_draws, dtype=float)
    targets = {"knee": (knee_tps, knee_tps_lo, knee_tps_hi, draws)}
    if slo_tps is not None and math.isfinite(slo_tps):
        targets["slo"] = (slo_tps, None, None, None)
    for name, (mid, lo, hi, sample) in targets.items():
        interval = {"threshold_draws": sample} if sample is not None else {"threshold_lo": lo, "threshold_hi": hi}
        when = growth.round_to_periods(
            growth.crossing_date(paths, mid, threshold_alpha=alpha, **interval), peaks.index)
        out.update({f"date_{name}{suffix}": when[f"date{suffix}"] for suffix in DATE_SUFFIXES})
        out[f"{name}_unreached_pct"] = 100.0 * when["unreached_share"]
        out[f"{name}_already"] = bool(when["already"])
    return out


# The trend fit (about a second: every candidate model refitted at each rolling origin) depends
# only on the history and the policy, and a scenarios file often asks one class several questions
@functools.lru_cache(maxsize=16)
def _growth_fit(history: tuple[tuple[Any, float], ...], policy: GrowthPolicy,
                alpha: float) -> tuple[pd.Series, Any]:
    from kneecap import growth

    peaks = growth.peak_series(history_frame(history), freq=policy.freq, stat=policy.stat, hours=policy.hours)
    return peaks, growth.fit_growth(peaks, alpha=alpha)


# the paths too (seeded, so the same for the same fit): the knee's date and the PI's share them
@functools.lru_cache(maxsize=16)
def _growth_paths(history: tuple[tuple[Any, float], ...], policy: GrowthPolicy, alpha: float) -> Any:
    return _growth_fit(history, policy, alpha)[1].simulate(int(policy.horizon))


def growth_paths(results: Any, *, policy: GrowthPolicy | None = None) -> Any:
    """The class's simulated peak paths over the growth horizon (:meth:`kneecap.growth.GrowthResults.simulate`).

    The same (cached, seeded) paths :func:`class_growth` reads the knee's date from.
    """
    return _growth_paths(tuple(map(tuple, results.history)), policy or GrowthPolicy(), results.alpha)


def growth_answers(results: Any, knee: Any, slo_tps: float | None, *, policy: GrowthPolicy | None = None
                   ) -> dict[str, Any]:
    """When the peaks of ``results.history`` reach ``knee`` and ``slo_tps``, as a forecast row's columns.

    ``knee`` is a :class:`kneecap.modeling.knee.Knee` in tps; the dates come from
    :func:`class_growth`. The columns: ``growth`` (the trend's summary), ``peak_tps_last`` and
    ``peak_date_last``, and per target (``knee``, ``slo``) ``date_<target><suffix>`` for :data:`DATE_SUFFIXES`,
    ``<target>_unreached_pct`` and ``<target>_already``; a history too short for a trend gives
    ``growth`` = ``no growth forecast: ...`` and nothing else.
    """
    row: dict[str, Any] = {}
    try:
        grown = class_growth(results, knee_tps=knee.load, knee_tps_lo=knee.load_lo, knee_tps_hi=knee.load_hi,
                             knee_tps_draws=knee.draws, slo_tps=slo_tps, policy=policy, alpha=results.alpha)
    except ValueError as exc:  # too short a history for a trend: said, not guessed
        row["growth"] = f"no growth forecast: {exc}"
        return row
    row.update(growth=grown["summary"], peak_tps_last=float(grown["peaks"].dropna().iloc[-1]),
               peak_date_last=iso_day(grown["peaks"].dropna().index[-1]))
    for name in ("knee", "slo"):
        if f"date_{name}" in grown:
            row.update({f"date_{name}{suffix}": iso_day(grown[f"date_{name}{suffix}"]) for suffix in DATE_SUFFIXES})
            row[f"{name}_unreached_pct"] = grown[f"{name}_unreached_pct"]
            row[f"{name}_already"] = grown[f"{name}_already"]
    if slo_tps is not None:
        row["slo_tps"] = slo_tps
    return row


def goal_growth(results: Any, pi_tps: float, lo: float, hi: float, *, policy: GrowthPolicy | None = None
                ) -> dict[str, Any]:
    """When the class's peaks reach the load at which its PI passes 1 (``pi_tps``, band ``lo``-``hi``).

    The knee's machinery (:func:`class_growth`) with that load as the threshold: ``date_pi`` with
    the suffixes of :data:`DATE_SUFFIXES`, ``pi_unreached_pct`` and ``pi_already``; ``{}`` without a
    history long enough for a trend.
    """
    if not results.history:
        return {}
    banded = math.isfinite(lo) and math.isfinite(hi)
    try:
        grown = class_growth(results, knee_tps=pi_tps, knee_tps_lo=lo if banded else None,
                             knee_tps_hi=hi if banded else None, policy=policy, alpha=results.alpha)
    except ValueError:
        return {}
    out: dict[str, Any] = {f"date_pi{suffix}": iso_day(grown[f"date_knee{suffix}"]) for suffix in DATE_SUFFIXES}
    return {**out, "pi_unreached_pct": grown["knee_unreached_pct"], "pi_already": grown["knee_already"]}


def reach_sentence(answer: Mapping[str, Any], name: str, label: str, *, horizon_end: Any = None) -> str:
    """When ``answer`` (a :func:`class_growth` result or a ``kneecap forecast`` row) says ``name`` is reached.

    ``'<label> reached by P90 with 90 % probability, earliest E, most likely M'``; when more than 10 % of
    the paths miss it within the horizon, ``'<label> may not be reached within the horizon: N % of the
    simulated paths do not reach it; earliest E, most likely M'``; ``'<label> not within the horizon'`` when
    even the earliest date lies beyond it; ``'<label> already reached ...'`` when the last peak is at or
    above it. ``horizon_end``, when given, is named. The one wording the CLI and the desk print.
    """
    def day(key: str) -> str | None:
        value = answer.get(f"date_{name}{key}")
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else iso_day(value)

    to = f" (forecast to {iso_day(horizon_end)})" if horizon_end is not None else ""
    if answer.get(f"{name}_already"):
        first = day("")
        return f"{label} already reached" + (f": the peak first got there on {first}" if first else "")
    earliest, likely, by_p90 = day("_earliest"), day(""), day("_p90")
    unreached = float(answer.get(f"{name}_unreached_pct") or 0.0)
    if earliest is None:
        return f"{label} not within the horizon{to}"
    most = f"most likely {likely}" if likely is not None else "most likely beyond the horizon"
    if by_p90 is None:
        return (f"{label} may not be reached within the horizon{to}: {unreached:.0f} % of the simulated paths do "
                f"not reach it; earliest {earliest}, {most}")
    return f"{label} reached by {by_p90} with 90 % probability, earliest {earliest}, {most}"


def forecast_scenarios(scenarios: Iterable[Mapping[str, Any]], load: Callable[[str], WorkloadModels],
                       policy: Policy, catalogue: Mapping[str, factor_catalogue.Factor] | None = None, *,
                       growth: GrowthPolicy | None = None, machines: processors.Catalogue | None = None,
                       on_row: Callable[[int], None] | None = None) -> pd.DataFrame:
    """One row per scenario, each with its ``status``: answered, saturated or failed.

    A scenario that fails (unknown workload, bad key, a number out of :data:`SCENARIO_RANGES`,
    malformed workload name, a factor that cannot be applied) gets its ``error`` (also its
    ``status_message``) and the others still run. A load past what the configuration carries is
    saturated, not failed: its ``status_message`` says so with the saturation load
    (:func:`saturation_message`), its response is empty, and the rest of its answers (knee, plan)
    are given.
    """
    rows = []
    cache: dict[str, WorkloadModels | Exception] = {}
    for i, scenario in enumerate(scenarios):
        workload = str(scenario.get("workload", ""))
        try:
            if not workload:
                raise ModelError(f"scenario {i + 1}: no workload named")
            # out-of-range numbers are refused before a model is loaded or solved
            check_scenario(scenario, repr(str(scenario["name"])) if "name" in scenario else f"#{i + 1}")
            if workload not in cache:
                try:
                    cache[workload] = load(workload)
                except Exception as exc:  # noqa: BLE001 - reported per scenario, the rest still run
                    cache[workload] = exc
            models = cache[workload]
            if isinstance(models, Exception):
                raise ModelError(f"{workload}: {models}")
            rows.append({**forecast_scenario(models, scenario, policy, catalogue, growth=growth, machines=machines),
                         "error": None})
        except (ModelError, ValueError, KeyError) as exc:
            rows.append({"workload": workload, "scenario": scenario.get("name", ""), "status": FAILED,
                         "status_message": str(exc), "error": str(exc)})
        if on_row is not None:
            on_row(i)
    frame = pd.DataFrame(rows)
    for col in ("years_to_knee", "knee_clients", "knee_clients_hi", "years_to_knee_adjusted",
                "knee_clients_adjusted", "knee_clients_hi_adjusted"):
        if col in frame:
            frame[col] = frame[col].replace([math.inf], np.nan)
    return frame


# --- the answers as a person reads them -----------------------------------------------------------

#: The columns of :func:`answer_summary`, in order: a short table ``kneecap forecast`` prints.
SUMMARY_COLUMNS = ("scenario", "configuration", "load", "response (95 % band)", "knee (95 % band)",
                   "knee reached", "CPU cost (95 % band)", "plan", "status", "notes")


def sig3(value: Any) -> str:
    """A number to 3 significant figures, with thousands separators and no exponent ('-' for none).

    Examples
    --------
    >>> [sig3(x) for x in (4206.2, 5.034, 0.22831, 356.4, 1_234_567, 0.0, float("nan"), None)]
    ['4,210', '5.03', '0.228', '356', '1,230,000', '0', '-', '-']
    """
    if value is None or isinstance(value, bool):
        return "-"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "-"
    if not math.isfinite(number):
        return "-"
    if number == 0:
        return "0"
    rounded = round(number, 2 - math.floor(math.log10(abs(number))))
    # the rounding may carry into a new digit (99.96 -> 100.0): the decimals follow the rounded value
    magnitude = math.floor(math.log10(abs(rounded)))
    return f"{rounded:,.{max(0, 2 - magnitude)}f}"


def _number(row: Mapping[str, Any], column: str) -> float | None:
    """``row[column]`` as a finite float, or None when absent, empty or not finite."""
    value = row.get(column)
    if value is None or isinstance(value, (bool, str)):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _text(row: Mapping[str, Any], column: str) -> str | None:
    value = row.get(column)
    return value if isinstance(value, str) and value else None


def _with_band(row: Mapping[str, Any], column: str, unit: str) -> str:
    """'5.03 ms (4.81-5.27)': a value with its band, each to 3 significant figures."""
    mid, lo, hi = (_number(row, c) for c in (column, f"{column}_lo", f"{column}_hi"))
    if mid is None:
        return "-"
    band = f" ({sig3(lo)}-{sig3(hi)})" if lo is not None and hi is not None else ""
    return f"{sig3(mid)} {unit}{band}"


def _configuration_words(row: Mapping[str, Any]) -> str:
    """The machine an answer is for: '2 GCP + 2 zIIP, Z 200 ms' (closed), '2 GCP + 2 zIIP' (a class).

    A class's other classes' load is named when not as measured (', other classes x1.5'); '-' when
    the model has no engines.
    """
    gcp, ziip = _number(row, "n_gcp"), _number(row, "n_ziip")
    if gcp is None:
        return "-"
    words = f"{gcp:g} GCP + {ziip or 0:g} zIIP"
    think = _number(row, "think_time_ms")
    other = _number(row, "bg_load_factor")
    if other is not None and other != 1:
        words += f", other classes x{other:g}"
    words += f", {row['engines']}" if isinstance(row.get("engines"), str) and row["engines"] else ""
    return words if think is None else f"{words}, Z {sig3(think)} ms"


def _load_words(row: Mapping[str, Any]) -> str:
    """'500 clients, 2,420 tps' (closed), '1,500 tps -> 301 clients' (closed by rate), '1,500 tps'."""
    clients, tps = _number(row, "clients"), _number(row, "tps")
    if _number(row, "clients_for_tps") is not None and tps is not None:
        return f"{sig3(tps)} tps -> {clients:,.0f} clients"
    if clients is not None:
        return f"{clients:,.0f} clients" + (f", {sig3(tps)} tps" if tps is not None else "")
    return f"{sig3(tps)} tps" if tps is not None else "-"


def _knee_words(row: Mapping[str, Any]) -> str:
    if _number(row, "knee_clients") is not None:
        return _with_band(row, "knee_clients", "clients")
    if _number(row, "knee_tps") is not None:
        return _with_band(row, "knee_tps", "tps")
    return "-"


def _reached_words(row: Mapping[str, Any]) -> str:
    """When the knee is reached: a class's growth dates, or a closed workload's years at its growth."""
    if row.get("knee_already") is True:
        return "already reached"
    earliest, likely, by_p90 = (_text(row, f"date_knee{s}") for s in ("_earliest", "", "_p90"))
    if earliest is not None:
        return (f"{likely or 'beyond the horizon'} (earliest {earliest}, 90 % by "
                f"{by_p90 or 'beyond the horizon'})")
    growth = _text(row, "growth")
    if growth is not None and growth.startswith("no growth"):
        return "no growth forecast"
    if "date_knee_earliest" in row and growth is not None:
        return "not within the horizon"
    years = _number(row, "years_to_knee")
    return f"in {sig3(years)} years" if years is not None else "-"


def _plan_words(row: Mapping[str, Any]) -> str:
    slo = _number(row, "slo_resp_ms")
    if slo is None:
        return "-"
    ziip, gcp = _number(row, "recommended_n_ziip"), _number(row, "recommended_n_gcp")
    said = _text(row, "slo") or f"{slo:g} ms"  # a percentile or WLM goal SLO as it was asked
    if ziip is None:
        return f"none meets SLO {said}"
    return f"{gcp if gcp is not None else _number(row, 'n_gcp') or 0:g} GCP + {ziip:g} zIIP for SLO {said}"


def _notes(row: Mapping[str, Any]) -> str:
    """Why a row has no answer, what qualifies it, and where its factor-adjusted answers are."""
    notes = []
    if row.get("status") in (SATURATED, FAILED) and _text(row, "status_message"):
        notes.append(str(row["status_message"]))
    if _text(row, "warnings") and row.get("status") != FAILED:
        notes.append(str(row["warnings"]))
    if _text(row, "factors") and row.get("status") != FAILED:
        notes.append(f"with {row['factors']}: see the *_adjusted columns")
    return WARNINGS_SEPARATOR.join(notes)


def answer_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The answers of a :func:`forecast_scenarios` table as a person reads them: one row per scenario.

    Columns :data:`SUMMARY_COLUMNS`, every cell a string with its unit, numbers to 3 significant
    figures (:func:`sig3`) and bands in brackets: the scenario (``workload / name``), the
    configuration answered for, the load (clients and the tps they give, or the tps asked), the
    response with its 95 % band (``saturated`` past what the configuration carries), the knee with
    its band, when the knee is reached (a class's growth dates, or a closed workload's years at the
    scenario's growth), the CPU cost per transaction a cost model gives, the zIIP plan for the SLO
    (engines, SLO as given), the status, and the notes: the saturation or
    failure message, the warnings, and where factor-adjusted answers are. Empty cells are ``-``.
    """
    rows = []
    for row in table.to_dict("records"):
        status = row.get("status") or (FAILED if _text(row, "error") else ANSWERED)
        row["status"] = status
        response = "saturated" if status == SATURATED else _with_band(row, "resp_ms", "ms")
        rows.append(dict(zip(SUMMARY_COLUMNS, (
            f"{row.get('workload') or '?'} / {row.get('scenario') or '-'}", _configuration_words(row),
            _load_words(row), response if status != FAILED else "-", _knee_words(row), _reached_words(row),
            _with_band(row, "cpu_ms_per_tran", "ms/tran"), _plan_words(row), status, _notes(row)))))
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
