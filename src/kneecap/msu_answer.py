r"""A WLM class's MSU answers: eligible work on GCPs at the peak R4HA, what one more zIIP saves, the peak ahead.

:func:`msu_answer` takes the class's priced intervals (:func:`kneecap.msu.class_msu`), its LPAR's R4HA
(:func:`kneecap.msu.lpar_r4ha`) and, where there is one, the class's fitted open dispatch model, and
gives the ``msu_*`` columns of :data:`MSU_COLUMNS`:

* the peak R4HA of the latest reporting month (complete windows, SCRT's hourly means) and the peak of
  the SMF70LAC WLM recorded, taken the same way;
* the class's GCP MSU and its zIIP-eligible MSU on GCPs at that peak: the R4HA of its own interval
  MSU, averaged over the peak hour (the average is linear, so this is its share of the peak);
* ``msu_saved_one_ziip``: how much lower the month's peak R4HA is when the LPAR has one more zIIP.
  Per interval :math:`i` the measured eligible MSU on GCPs :math:`G_i` (APPL% IIPCP) shrinks by the
  part the model moves off the GCPs, :math:`G_i\,(1 - s_i(n+1)/s_i(n))`, ``s`` the model's
  ``ziip_eligible_on_gcp_share_pct`` at the interval's tps on ``n`` and ``n + 1`` zIIPs (none where
  the model has no spill on ``n``: what it cannot explain it does not move); the LPAR's interval MSU
  less those savings, averaged again, gives the new peak, and the saving is old peak minus new (at
  most the eligible MSU on GCPs in the peak's window). The band repeats it for each bootstrap refit of
  the class model (its CPU demand, eligible share, burst count and help rule drawn), at the
  ``alpha/2`` and ``1 - alpha/2`` quantiles. Without a class model every MSU of eligible work on GCPs
  at the peak is what a zIIP could take at most: the answer is then that upper bound with the band
  ``[0, bound]``, and ``msu_note`` says so;
* ``msu_peak_r4ha_forecast``: the month's peak R4HA when the class's load has grown as its growth
  model forecasts ``horizon_days`` ahead (:func:`kneecap.growth.fit_growth` on its daily peaks): each
  interval's tps times the forecast's ratio to the last peak, the class's GCP MSU changed by the model's
  ``cpu_gcp_pct`` there (IIPCP included, so a spill that grows with load is in it), the other classes
  as measured; ``_lo`` / ``_hi`` at the forecast's interval. Without a model the class's GCP MSU
  scales with the ratio.

The class model's other classes are its base LPAR's (:meth:`OpenDispatchResults.lpar`), the engines
the scenario's (else the base's).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from kneecap import msu
from kneecap.modeling.class_periods import merge_periods

__all__ = ["MSU_COLUMNS", "msu_answer", "class_msu_answer"]

#: The ``msu_*`` columns of a forecast row, in order.
MSU_COLUMNS = ("msu_system_id", "msu_per_cpu_s", "msu_month", "msu_peak_r4ha", "msu_peak_hour", "msu_peak_lac",
               "msu_class_gcp_at_peak", "msu_eligible_on_gcp_at_peak", "msu_saved_one_ziip", "msu_saved_one_ziip_lo",
               "msu_saved_one_ziip_hi", "msu_peak_r4ha_forecast", "msu_peak_r4ha_forecast_lo",
               "msu_peak_r4ha_forecast_hi", "msu_forecast_date", "msu_note")

#: Columns of a model's ``boot_params`` row (:class:`kneecap.modeling.open_dispatch.OpenDispatchResults`).
_THETA = ("delay_ms", "cpu_ms_per_tran", "ziip_eligible_fraction", "eligible_bursts", "help_rule")


def _has_share_model(results: Any) -> bool:
    return results is not None and "ziip_eligible_on_gcp_pct" in getattr(results, "targets", ()) and hasattr(
        results, "boot_params") and hasattr(results, "help_rule")


def _draws(results: Any, max_draws: int) -> list[Any]:
    """The fitted model and its first ``max_draws`` bootstrap refits as models of their own (no bootstrap)."""
    from kneecap.modeling.dispatch import HELP_RULES

    empty = np.zeros((0, len(_THETA)))
    out = [replace(results, boot_params=empty)]
    for theta in np.asarray(results.boot_params, dtype=float)[:max_draws]:
        out.append(replace(results, boot_params=empty, delay_ms=float(theta[0]), cpu_ms_per_tran=float(theta[1]),
                           ziip_eligible_fraction=float(theta[2]), eligible_bursts=int(theta[3]),
                           help_rule=HELP_RULES[int(theta[4])]))
    return out


def _month_peak(frame: pd.DataFrame, column: str, month: pd.Period) -> tuple[float, Any]:
    """Peak of SCRT's hourly means of ``column`` over the complete windows of ``month``."""
    done = frame[frame["is_complete"]]
    hourly = msu.hourly_average(done["interval_start_at"], done[column])
    hourly = hourly[msu.billing_month(hourly.index) == month]
    if hourly.dropna().empty:
        return math.nan, None
    return float(hourly.max()), hourly.idxmax()


def _changed_peak(lpar: pd.DataFrame, rows: pd.DataFrame, change_msu: np.ndarray, month: pd.Period,
                  capacity_msu: float = math.inf) -> float:
    """The month's peak R4HA when each class interval's MSU/h changes by ``change_msu``.

    The LPAR's interval MSU/h plus the change, kept within ``[0, capacity_msu]`` (its GCPs carry no
    more), averaged again (:func:`kneecap.msu.rolling_average`).
    """
    change = lpar[["interval_start_at"]].merge(
        pd.DataFrame({"interval_start_at": rows["interval_start_at"].to_numpy(), "change": change_msu}),
        on="interval_start_at", how="left")["change"].fillna(0.0).to_numpy()
    changed = np.clip(lpar["lpar_msu_per_h"].to_numpy(dtype=float) + change, 0.0, capacity_msu)
    roll = msu.rolling_average(lpar["interval_start_at"], lpar["interval_s"], changed)
    return _month_peak(roll.rename(columns={"value": "changed"}), "changed", month)[0]


def _frame(rows: pd.DataFrame, n_gcp: int, n_ziip: int, scale: float = 1.0) -> pd.DataFrame:
    return pd.DataFrame({"tps": rows["tps"].fillna(0.0).to_numpy() * scale, "n_gcp": float(n_gcp),
                         "n_ziip": float(n_ziip)})


def _quantiles(point: float, draws: list[float], alpha: float) -> tuple[float, float]:
    values = np.asarray([d for d in draws if math.isfinite(d)])
    if not values.size:
        return point, point
    return (min(point, float(np.quantile(values, alpha / 2))), max(point, float(np.quantile(values, 1 - alpha / 2))))


def msu_answer(rows: pd.DataFrame, lpar: pd.DataFrame, results: Any = None, *, n_gcp: int | None = None,
               n_ziip: int | None = None, growth_policy: Any = None, alpha: float = 0.05, max_draws: int = 50,
               horizon_days: int = 30) -> dict[str, Any]:
    """The ``msu_*`` columns (:data:`MSU_COLUMNS`) of one class on one LPAR (module docstring).

    Parameters
    ----------
    rows : pandas.DataFrame
        The class's :func:`kneecap.msu.class_msu` rows on the LPAR, in time order.
    lpar : pandas.DataFrame
        The LPAR's :func:`kneecap.msu.lpar_r4ha`.
    results : OpenDispatchResults, optional
        The class's fitted model (its IIPCP share with and without the extra zIIP, its GCP APPL% at a
        grown load, its history's daily peaks).
    n_gcp, n_ziip : int, optional
        The engines; by default the model's base LPAR, else the engines most intervals had.
    growth_policy : kneecap.forecasting.GrowthPolicy, optional
        How the daily peaks are read (``freq``, ``stat``, ``hours``).
    """
    from kneecap.modeling.base import column_or

    out: dict[str, Any] = dict.fromkeys(MSU_COLUMNS, None)
    notes: list[str] = []
    done = lpar[lpar["is_complete"]]
    if rows.empty or done.empty:
        out["msu_note"] = "no MSU: no class interval with the 70.1 capacity fields, or under four hours of data"
        return out
    month = msu.billing_month(done["interval_start_at"]).max()
    peak, hour = _month_peak(lpar, "r4ha_msu_per_h", month)
    lac = _month_peak(lpar.assign(lac=lpar["lac_msu_per_h"].where(lpar["lac_msu_per_h"] > 0)), "lac", month)[0]
    gcp_roll = msu.rolling_average(rows["interval_start_at"], rows["interval_s"], rows["msu_gcp_per_h"])
    elig_roll = msu.rolling_average(rows["interval_start_at"], rows["interval_s"], rows["msu_eligible_on_gcp_per_h"])
    on_gcp = msu.peak_hour_value(elig_roll["interval_start_at"], elig_roll["value"], hour)
    out.update(msu_system_id=str(rows["system_id"].iloc[0]), msu_per_cpu_s=float(rows["msu_per_cpu_s"].median()),
               msu_month=str(month), msu_peak_r4ha=peak, msu_peak_hour=None if hour is None else str(hour),
               msu_peak_lac=lac, msu_class_gcp_at_peak=msu.peak_hour_value(gcp_roll["interval_start_at"],
                                                                          gcp_roll["value"], hour),
               msu_eligible_on_gcp_at_peak=on_gcp)
    model = results if _has_share_model(results) else None
    base = getattr(model, "base", {}) if model is not None else {}
    n_gcp = int(n_gcp if n_gcp is not None else base.get("n_gcp", rows["n_gcp"].mode().iloc[0]))
    n_ziip = int(n_ziip if n_ziip is not None else base.get("n_ziip", rows["n_ziip"].mode().iloc[0]))
    rate = rows["msu_per_cpu_s"].to_numpy(dtype=float)
    if model is not None:
        savings = []
        for draw in _draws(model, max_draws):
            now = column_or(draw.predict(_frame(rows, n_gcp, n_ziip)), "ziip_eligible_on_gcp_share_pct", 0.0)
            more = column_or(draw.predict(_frame(rows, n_gcp, n_ziip + 1)), "ziip_eligible_on_gcp_share_pct", 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                absorbed = np.where(now > 0, np.clip(1.0 - more / np.where(now > 0, now, 1.0), 0.0, 1.0), 0.0)
            moved = rows["msu_eligible_on_gcp_per_h"].to_numpy(dtype=float) * absorbed
            savings.append(peak - _changed_peak(lpar, rows, -moved, month))
        lo, hi = _quantiles(savings[0], savings[1:], alpha)
        out.update(msu_saved_one_ziip=savings[0], msu_saved_one_ziip_lo=lo, msu_saved_one_ziip_hi=hi)
        notes.append(f"one more zIIP: {n_gcp} GCP + {n_ziip} -> {n_ziip + 1} zIIP, the measured eligible work on "
                     f"GCPs less the share of it the class model moves to zIIPs, band over {len(savings) - 1} "
                     "bootstrap refits")
    else:
        out.update(msu_saved_one_ziip=on_gcp, msu_saved_one_ziip_lo=0.0, msu_saved_one_ziip_hi=on_gcp)
        notes.append("one more zIIP: no class model with an IIPCP share, so the whole eligible-on-GCP MSU at the "
                     "peak is given as what it could save at most")
    out.update(_forecast(rows, lpar, model, month, rate, n_gcp=n_gcp, n_ziip=n_ziip, growth_policy=growth_policy,
                         alpha=alpha, horizon_days=horizon_days, notes=notes,
                         capacity_msu=float(msu.msu_per_h(100.0 * n_gcp, np.nanmedian(rate)))))
    out["msu_note"] = "; ".join(notes)
    return out


def _forecast(rows: pd.DataFrame, lpar: pd.DataFrame, model: Any, month: pd.Period, rate: np.ndarray, *,
              n_gcp: int, n_ziip: int, growth_policy: Any, alpha: float, horizon_days: int,
              notes: list[str], capacity_msu: float) -> dict[str, Any]:
    """The ``msu_peak_r4ha_forecast*`` columns and ``msu_forecast_date`` (module docstring).

    No interval's MSU/h exceeds ``capacity_msu``, what the LPAR's GCPs carry busy all hour.
    """
    from kneecap import growth

    freq = getattr(growth_policy, "freq", "D")
    history = (pd.DataFrame(list(model.history), columns=["interval_start_at", "tps"])
               if model is not None and model.history else rows[["interval_start_at", "tps"]])
    try:
        peaks = growth.peak_series(history, freq=freq, stat=getattr(growth_policy, "stat", "max"),
                                   hours=getattr(growth_policy, "hours", None))
        horizon = max(1, int(round(horizon_days / (7 if freq == "W" else 1))))
        ahead = growth.fit_growth(peaks, alpha=alpha).forecast(horizon).iloc[-1]
    except ValueError as exc:
        notes.append(f"no growth forecast: {exc}")
        return {}
    last = float(peaks.dropna().iloc[-1])
    out: dict[str, Any] = {"msu_forecast_date": str(ahead.name.date())}
    if model is not None:
        now = model.predict(_frame(rows, n_gcp, n_ziip))["cpu_gcp_pct"].to_numpy(dtype=float)
    saturated = 0
    for suffix, tps in (("", ahead["tps"]), ("_lo", ahead["tps_lo"]), ("_hi", ahead["tps_hi"])):
        ratio = float(tps) / last if last > 0 else math.nan
        if model is not None:
            grown_pred = model.predict(_frame(rows, n_gcp, n_ziip, ratio))
            change = msu.msu_per_h(grown_pred["cpu_gcp_pct"].to_numpy(dtype=float) - now, rate)
            if not suffix:
                saturated = int(grown_pred["saturated"].sum())
        else:
            change = rows["msu_gcp_per_h"].to_numpy(dtype=float) * (ratio - 1.0)
        out[f"msu_peak_r4ha_forecast{suffix}"] = _changed_peak(lpar, rows, change, month, capacity_msu)
    if saturated:
        notes.append(f"at the forecast load {saturated} of the class's {len(rows)} intervals exceed what the pools "
                     f"carry: the forecast peak is held at the GCPs' {capacity_msu:.4g} MSU/h where it reaches it")
    notes.append(f"peak R4HA at the class's forecast peak load on {out['msu_forecast_date']} "
                 f"(x{ahead['tps'] / last:.3g}, band x{ahead['tps_lo'] / last:.3g}..x{ahead['tps_hi'] / last:.3g}), "
                 "other classes as measured")
    return out


def class_msu_answer(workload: str, measurements: pd.DataFrame, msu_intervals: pd.DataFrame, results: Any = None,
                     scenario: Mapping[str, Any] | None = None, **options: Any) -> dict[str, Any]:
    """:func:`msu_answer` for ``workload`` from the published marts, on the LPAR where its GCP MSU is largest.

    ``measurements`` is ``fct_measurements``, ``msu_intervals`` ``fct_msu_intervals``; ``scenario``'s
    ``n_gcp`` / ``n_ziip`` choose the engines. A multi-period class's periods are merged per interval
    (:func:`kneecap.modeling.class_periods.merge_periods`).
    """
    if msu_intervals.empty or "msu_per_cpu_s" not in msu_intervals or "workload" not in measurements:
        return {**dict.fromkeys(MSU_COLUMNS), "msu_note": "no MSU: the published marts have no fct_msu_intervals "
                                                          "(SMF 70.1 capacity fields)"}
    # a multi-period class is one stream: its periods' CPU summed per interval, as the class model sees it
    priced = msu.class_msu(merge_periods(measurements[measurements["workload"] == workload]), msu_intervals)
    if priced.empty:
        return {**dict.fromkeys(MSU_COLUMNS), "msu_note": f"no MSU for {workload}: no SMF interval of it has the "
                                                          "70.1 capacity fields"}
    system = priced.groupby("system_id")["msu_gcp_per_h"].sum().idxmax()
    rows = priced[priced["system_id"] == system].reset_index(drop=True)
    scenario = scenario or {}
    return msu_answer(rows, msu.lpar_r4ha(msu_intervals, system), results,
                      n_gcp=scenario.get("n_gcp"), n_ziip=scenario.get("n_ziip"), **options)
