r"""The load a scenario plans for when it asks for the forecast peak (``tps: peak``).

A capacity planner sizes for the peak the class will see by a date, not for a load typed in. A
WLM class fitted on SMF intervals carries its history; its peaks per period (day or week) are
forecast by the competing trend models, and whole future paths are drawn from all of them
(:meth:`kneecap.growth.GrowthResults.simulate`, the same paths the knee's date is read from).
A scenario with ``tps: peak`` (and optionally ``peak_by: YYYY-MM-DD``, default the end of the
growth horizon) is answered at the *planned peak*:

.. math::

    \lambda_{plan} = Q_q\Big(\max_{t \le t_{by}} \lambda_{i,t}\Big)

the ``q`` quantile (params.yaml ``growth.plan_peak_pct``, or the scenario's ``peak_pct``) over
the paths :math:`i` of each path's highest peak up to the date :math:`t_{by}`: the load that
``q`` % of the futures the history leaves open stay below. The path's highest peak, not its
value on the date, because the plan must hold on the busiest day of the window, and a noisy
series of daily peaks reaches past its trend on some day. The load is then an ordinary ``tps``
to the model: the response, the knee, the PI at that load and the zIIP plan (``slo: wlm_goal``:
every goal the class carries, PI <= 1) are asked there.

References
----------
R. J. Hyndman and G. Athanasopoulos, *Forecasting: Principles and Practice*, 3rd ed., OTexts,
2021, §5.5 (forecast distributions from simulated future sample paths).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kneecap.modeling import ModelError

__all__ = ["PEAK_TPS", "PlannedPeak", "asks_for_peak", "peak_by", "planned_peak", "with_planned_peak"]

#: ``tps: peak``: plan at the class's forecast peak.
PEAK_TPS = "peak"


def asks_for_peak(scenario: Mapping[str, Any]) -> bool:
    """Whether the scenario's load is the forecast peak (``tps: peak``)."""
    tps = scenario.get("tps")
    return isinstance(tps, str) and tps.strip().lower() == PEAK_TPS


def peak_by(value: Any) -> pd.Timestamp | None:
    """A scenario's ``peak_by`` as a day, or None when not given.

    Raises
    ------
    ModelError
        Not a date (YAML reads ``2027-11-30`` as a date, a quoted one is a string).

    Examples
    --------
    >>> peak_by("2027-11-30"), peak_by(None)
    (Timestamp('2027-11-30 00:00:00'), None)
    """
    if value is None:
        return None
    if isinstance(value, (_dt.date, pd.Timestamp)):
        return pd.Timestamp(value).normalize()
    try:
        return pd.Timestamp(_dt.date.fromisoformat(str(value).strip()))
    except ValueError:
        raise ModelError(f"peak_by must be a date YYYY-MM-DD, got {value!r}") from None


@dataclass(frozen=True)
class PlannedPeak:
    """The forecast peak a scenario plans for (:func:`planned_peak`).

    ``tps`` is the planned load (the ``pct`` quantile of the paths' highest peak up to ``by``),
    ``median_tps`` and ``lo_tps`` / ``hi_tps`` (the ``alpha / 2`` and ``1 - alpha / 2``
    quantiles) say how open the future is; ``last_tps`` / ``last_day`` the last measured peak.
    """

    tps: float
    median_tps: float
    lo_tps: float
    hi_tps: float
    pct: float
    by: pd.Timestamp
    last_tps: float
    last_day: pd.Timestamp

    def columns(self) -> dict[str, Any]:
        """A forecast row's columns: ``peak_tps`` (the planned load) and what it was read from."""
        return {"peak_tps": self.tps, "peak_tps_median": self.median_tps, "peak_tps_lo": self.lo_tps,
                "peak_tps_hi": self.hi_tps, "peak_pct": self.pct, "peak_by": self.by.date().isoformat(),
                "load_from": self.words()}

    def words(self) -> str:
        """The load in words, as the answer's first words say where its load came from."""
        return (f"the forecast peak to {self.by.date().isoformat()}: {self.pct:g} % of the growth paths stay "
                f"below {_tps(self.tps)} tps (median {_tps(self.median_tps)}, range {_tps(self.lo_tps)}-"
                f"{_tps(self.hi_tps)}; last measured peak {_tps(self.last_tps)} tps on "
                f"{self.last_day.date().isoformat()})")


def _tps(value: float) -> str:
    """A load as read: whole tps with thousands separators from 1,000 up, four figures below.

    Examples
    --------
    >>> _tps(36950.4), _tps(12.345)
    ('36,950', '12.35')
    """
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def planned_peak(paths: Any, *, by: pd.Timestamp | None = None, pct: float = 90.0) -> PlannedPeak:
    r"""The planned peak of simulated growth paths (module docstring's :math:`\lambda_{plan}`).

    Parameters
    ----------
    paths : kneecap.growth.PeakPaths
        Whole future paths of the peak per period (``paths_tps``, ``times``, ``history``, ``alpha``).
    by : Timestamp, optional
        The last day the peak is taken to; default the paths' last period.
    pct : float
        The quantile over the paths, %, in (0, 100).

    Raises
    ------
    ModelError
        ``by`` before the first forecast period or past the last (the growth horizon), or ``pct``
        out of range.
    """
    if not 0 < float(pct) < 100:
        raise ModelError(f"the planned peak's percentile must be in (0, 100), got {pct!r}")
    times = pd.DatetimeIndex(paths.times)
    end = times[-1] if by is None else pd.Timestamp(by)
    if end < times[0]:
        raise ModelError(f"peak_by {end.date().isoformat()} is not after the last measured peak "
                         f"({pd.Timestamp(paths.history.index[-1]).date().isoformat()}): the forecast starts "
                         f"{times[0].date().isoformat()}")
    if end > times[-1]:
        raise ModelError(f"peak_by {end.date().isoformat()} is past the growth horizon (forecast to "
                         f"{times[-1].date().isoformat()}; params.yaml growth.horizon)")
    highest = np.asarray(paths.paths_tps, dtype=float)[:, times <= end].max(axis=1)
    alpha = float(paths.alpha)
    q = np.quantile(highest, [float(pct) / 100.0, 0.5, alpha / 2.0, 1.0 - alpha / 2.0])
    history = paths.history.dropna()
    return PlannedPeak(tps=float(q[0]), median_tps=float(q[1]), lo_tps=float(q[2]), hi_tps=float(q[3]),
                       pct=float(pct), by=end, last_tps=float(history.iloc[-1]),
                       last_day=pd.Timestamp(history.index[-1]))


def with_planned_peak(results: Any, scenario: Mapping[str, Any], paths: Callable[[Any], Any], *,
                      pct: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario with ``tps: peak`` (and ``peak_by``, ``peak_pct``) turned into the planned load.

    ``paths(results)`` draws the class's growth paths (:func:`kneecap.forecasting.growth_paths`);
    ``pct`` the default quantile. Returns the scenario as the model reads it and the row's
    columns (:meth:`PlannedPeak.columns`); a scenario that does not ask for the peak comes back
    unchanged (``peak_by`` / ``peak_pct`` without ``tps: peak`` are refused).

    Raises
    ------
    ModelError
        No class history to forecast from, a history too short for a trend, a bad ``peak_by`` or
        ``peak_pct``.
    """
    out = dict(scenario)
    by, share = out.pop("peak_by", None), out.pop("peak_pct", None)
    if not asks_for_peak(out):
        if by is not None or share is not None:
            raise ModelError("peak_by and peak_pct go with tps: peak (plan at the forecast peak)")
        return out, {}
    if not getattr(results, "history", None):
        raise ModelError("tps: peak needs a WLM class fitted on SMF intervals: the forecast peak is read from "
                         "the class's own history of peaks")
    if share is not None:
        try:
            pct = float(share)
        except (TypeError, ValueError):
            raise ModelError(f"peak_pct must be a number, got {share!r}") from None
        if not math.isfinite(pct):
            raise ModelError(f"peak_pct must be a finite number, got {share!r}")
    try:
        drawn = paths(results)
    except ValueError as exc:  # too short a history for a trend: said, not guessed
        raise ModelError(f"tps: peak: no growth forecast: {exc}") from None
    peak = planned_peak(drawn, by=peak_by(by), pct=pct)
    out["tps"] = peak.tps
    return out, peak.columns()
