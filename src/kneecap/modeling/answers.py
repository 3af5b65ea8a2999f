"""What every family's answer to a scenario shares: statuses, saturation, extrapolation, growth dates.

A results class answers one scenario with :meth:`answer` (:class:`kneecap.modeling.base.Results`);
:func:`kneecap.forecasting.forecast_scenario` adds the factor adjustments, the warnings and the
cost model's answer around it. The pieces several families use live here: the row's ``status``
values, :class:`Saturated`, :func:`saturation_message`, :func:`extrapolation`,
:func:`predicted_answer` (the answer of a family whose only answer is its prediction at the
scenario's load) and :func:`class_growth` (when a history of peaks reaches a knee).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kneecap.modeling.base import ModelError

if TYPE_CHECKING:
    from kneecap.modeling.dispatch import Dispatch


@dataclass(frozen=True)
class GrowthPolicy:
    """How a class's growth is read from its history (params.yaml ``growth``).

    ``freq``: ``"D"`` daily or ``"W"`` weekly peaks; ``stat``: ``"max"`` or ``"pNN"`` (a percentile
    of the period's intervals); ``hours``: ``[first, last)`` hours of day the peak is taken in;
    ``horizon``: periods ahead a crossing is looked for (beyond it the date is ``None``).
    """

    freq: str = "D"
    stat: str = "max"
    hours: tuple[int, int] | None = None
    horizon: int = 730


#: A forecast row's ``status``: answered, past what the configuration can carry, or not answered.
ANSWERED, SATURATED, FAILED = "answered", "saturated", "failed"


class Saturated(ModelError):
    """A rate at or past what a configuration carries (``load_tps`` against ``capacity_tps``)."""

    def __init__(self, message: str, *, load_tps: float, capacity_tps: float) -> None:
        super().__init__(message)
        self.load_tps, self.capacity_tps = load_tps, capacity_tps


def saturation_message(load_tps: float, capacity_tps: float | None, n_gcp: int | None = None,
                       n_ziip: int | None = None) -> str:
    """'5,000 tps is past saturation (4,206 tps) on 2 GCP + 2 zIIP': a saturated row's ``status_message``.

    Examples
    --------
    >>> saturation_message(5000.0, 4206.2, 2, 2)
    '5,000 tps is past saturation (4,206 tps) on 2 GCP + 2 zIIP'
    >>> saturation_message(1.5, None)
    "1.5 tps is past the model's capacity"
    """
    def tps(x: float) -> str:
        return f"{x:,.0f} tps" if abs(x) >= 100 else f"{x:.4g} tps"

    if capacity_tps is None or not math.isfinite(capacity_tps):
        text = f"{tps(load_tps)} is past the model's capacity"
    else:
        text = f"{tps(load_tps)} is past saturation ({tps(capacity_tps)})"
    return text if n_gcp is None else f"{text} on {n_gcp} GCP + {n_ziip or 0} zIIP"


def no_response() -> dict[str, float]:
    """A saturated row's response: no number (not ``inf`` read as one)."""
    return {"resp_ms": math.nan, "resp_ms_lo": math.nan, "resp_ms_hi": math.nan}


def extrapolation(trained: Sequence[float], load: float, unit: str, *,
                  configuration: tuple[int, int, float] | None = None,
                  measured: Iterable[Sequence[Any]] | None = None) -> dict[str, Any]:
    """How far a prediction lies from what the model was fitted on.

    ``extrapolation_x`` is ``load`` over the largest trained load (above 1: beyond the trained
    range, where a model that measured its extrapolation error widens its band:
    :func:`kneecap.modeling.base.widen_beyond_trained`), and
    ``extrapolation`` says it in words, naming a closed model's engines and think time when that
    configuration was never measured.
    """
    lo, hi = float(trained[0]), float(trained[1])
    ratio = load / hi if hi > 0 else math.inf
    if load > hi:
        text = f"{ratio:.3g}x the largest trained load ({hi:g} {unit})"
    elif load < lo:
        text = f"below the trained range ({lo:g}-{hi:g} {unit})"
    else:
        text = f"inside the trained range ({lo:g}-{hi:g} {unit})"
    if configuration is not None and measured is not None:
        seen = {(int(g), int(z), float(t)) for g, z, t in measured}
        if configuration not in seen:
            n_gcp, n_ziip, think = configuration
            text += f"; {n_gcp} GCP + {n_ziip} zIIP at think time {think:g} ms never measured"
    return {"extrapolation_x": ratio, "extrapolation": text}


def latched_help_caveat(dispatch: Dispatch, cpu_ms_per_tran: float, ziip_eligible_fraction: float, tps: float,
                        think_time_ms: float, resp_ms: float) -> str | None:
    """A warning for closed load the dispatch model is known to answer far from the dispatcher, else None.

    Where the zIIPs cannot run the class's eligible load (:meth:`Dispatch.ziips_fall_behind`) and
    clients think for less than they wait in the system, GCP help under the pool rule can latch on:
    with every client in the system the zIIP never finds its queue empty, help never stops, and the
    dispatcher simulation's response falls as clients are added, which a model that may not predict
    less for more load cannot follow. Measured with no think time (docs/benchmarks.md, "Closed
    populations and a long ZIIPAWMT"): 14 GCPs + 1 zIIP, ZIIPAWMT 10 ms, simulated 22.4 ms at 15
    clients and 3.0 ms at 25 against the model's 13.3 ms at both (-41 % and +341 %); 2 GCPs + 1
    zIIP at the default ZIIPAWMT +88 % at 12 clients. With 200 ms of think time (the validation
    grid's closed points, hundreds of clients) it is within 10 % up to 85 % busy.
    """
    if not think_time_ms < resp_ms or not dispatch.ziips_fall_behind(tps, cpu_ms_per_tran, ziip_eligible_fraction):
        return None
    return ("closed load with less think time than response where the zIIPs fall behind: GCP help can latch on, "
            "and there the dispatcher simulation's response was from 68 % above to 4.4x below this model's "
            "(docs/benchmarks.md, 'Closed populations and a long ZIIPAWMT'); `kneecap simulate` answers it")


def predicted_answer(results: Any, scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The answer of a family that predicts at a load and no more: its targets at the scenario's load.

    ``model`` and, when the scenario gives ``clients``, ``tps`` or ``think_time_ms``, the predicted
    response and throughput with their bands and a fitted capacity; a load past that capacity is
    ``saturated`` (no response, the capacity named).
    """
    row: dict[str, Any] = {"model": results.family}
    frame = pd.DataFrame([{k: scenario[k] for k in ("clients", "tps", "think_time_ms") if k in scenario}])
    if frame.empty:
        return row
    pred = results.predict(frame).iloc[0]
    for col in ("resp_ms", "resp_ms_lo", "resp_ms_hi", "tps", "tps_lo", "tps_hi",
                "capacity_tps", "capacity_tps_lo", "capacity_tps_hi"):
        if col in pred:
            row[col] = float(pred[col])
    if "saturated" in pred:
        # past the fitted capacity the response is no number: say so beside the capacity
        row["saturated"] = bool(pred["saturated"])
        if row["saturated"]:
            row.update(no_response(), status=SATURATED, status_message=saturation_message(
                float(scenario["tps"]), row.get("capacity_tps")))
    return row


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
    peaks, fitted = _growth_fit(tuple(map(tuple, results.history)), policy, alpha)
    paths = fitted.simulate(horizon)
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


def growth_answers(results: Any, knee: Any, slo_tps: float | None, policy: GrowthPolicy | None) -> dict[str, Any]:
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
