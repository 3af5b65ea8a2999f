"""What every family's answer to a scenario shares: statuses, saturation, extrapolation, growth dates.

A results class answers one scenario with :meth:`answer` (:class:`kneecap.modeling.base.Results`);
:func:`kneecap.forecasting.forecast_scenario` adds the factor adjustments, the warnings and the
cost model's answer around it. The pieces several families use live here: the row's ``status``
values, :class:`Saturated`, :func:`saturation_message`, :func:`extrapolation` and
:func:`predicted_answer` (the answer of a family whose only answer is its prediction at the
scenario's load). When a history of peaks reaches a knee is the caller's to say
(:func:`kneecap.forecasting.growth_answers`, passed to ``answer`` as ``growth``): the trend
models are not the families'.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from kneecap.modeling.base import ModelError

if TYPE_CHECKING:
    from kneecap.modeling.dispatch import Dispatch


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
