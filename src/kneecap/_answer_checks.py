"""The checks every forecast answer goes through, and the warnings they write (:data:`ANSWER_CHECKS`).

A band that misses the model's own training points, a load beyond the trained range, dispatcher
structures the history cannot tell apart that put the knee apart. :func:`kneecap.forecasting.forecast_scenario`
joins the warnings into its ``warnings`` column; the names are re-exported there.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

#: How far apart (relative) the help rules' knees may be before a forecast says so: beyond the
#: dispatch model's own error against its simulation, the disagreement is the structure's.
STRUCTURE_DISAGREEMENT = 0.04


def knees_apart(low: float, high: float) -> bool:
    """Whether two structures' knees lie more than :data:`STRUCTURE_DISAGREEMENT` apart (both finite)."""
    return math.isfinite(low) and math.isfinite(high) and high > low * (1 + STRUCTURE_DISAGREEMENT)


def structure_disagreement(knee_by_rule: Mapping[str, float]) -> str | None:
    """One line when the dispatcher structures the intervals cannot tell apart put the knee apart."""
    finite = {rule: x for rule, x in knee_by_rule.items() if math.isfinite(x)}
    if len(finite) < 2:
        return None
    low, high = min(finite.values()), max(finite.values())
    if not knees_apart(low, high):
        return None
    knees = ", ".join(f"{x:,.0f} tps ({rule} help)" for rule, x in sorted(finite.items(), key=lambda kv: kv[1]))
    return (f"the GCP-help rules the intervals cannot tell apart put the knee at {knees}, "
            f"{100 * (high / low - 1):.1f} % apart: the band spans both")


#: An answer whose load is more than this multiple of the largest trained load gets a warning:
#: there the model's form, not a measurement, carries the answer.
EXTRAPOLATION_WARN_X = 1.3
#: How :func:`forecast_scenario` joins an answer's warnings into its ``warnings`` column.
WARNINGS_SEPARATOR = "; "


def band_check(results: Any) -> dict[str, Any] | None:
    r"""The model's own training points against its band: how many lie outside it, and the worst.

    For a results object that keeps its training rows (``train_points``, by column, with the
    measured ``resp_ms``, or ``tps`` where the model is fitted to throughput alone) and predicts
    that target with a band; None for one that does not. A combination of model families is
    checked through the member with the largest weight, whose band it reports.
    Computed once per results object (the answer is kept until the object is freed).

    Returns
    -------
    dict or None
        ``n_points``, ``n_outside``, ``alpha`` and, when a point lies outside, ``worst``: that
        point's columns with its measured ``resp_ms``, ``fitted_ms``, ``band_lo_ms`` and
        ``band_hi_ms``. The worst is the point furthest outside in log terms,
        :math:`\max(\log(y / hi), \log(lo / y))`.
    """
    key = id(results)
    if key in BAND_CHECKS:
        return BAND_CHECKS[key]
    found = cached_band_check(results)
    try:
        weakref.finalize(results, BAND_CHECKS.pop, key, None)
    except TypeError:  # an object that cannot be referenced weakly is checked every time
        return found
    BAND_CHECKS[key] = found
    return found


BAND_CHECKS: dict[int, dict[str, Any] | None] = {}


def cached_band_check(results: Any) -> dict[str, Any] | None:
    members = getattr(results, "members", None)
    if isinstance(members, Mapping) and members:
        weights = getattr(results, "weights", {}) or {}
        results = members[max(members, key=lambda name: weights.get(name, 0.0))]
    points = getattr(results, "train_points", None)
    target = "resp_ms" if points and "resp_ms" in points else "tps" if points and "tps" in points else None
    if target is None:
        return None
    frame = pd.DataFrame(points)
    measured = frame.pop(target).to_numpy(dtype=float)
    pred = results.predict(frame)
    if not {target, f"{target}_lo", f"{target}_hi"} <= set(pred.columns) or not len(measured):
        return None
    lo, hi = pred[f"{target}_lo"].to_numpy(dtype=float), pred[f"{target}_hi"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = np.where(measured > hi, np.log(measured / hi), np.where(measured < lo, np.log(lo / measured), 0.0))
    excess = np.nan_to_num(excess, nan=0.0)
    out: dict[str, Any] = {"n_points": len(measured), "n_outside": int((excess > 0).sum()),
                           "alpha": float(getattr(results, "alpha", 0.05))}
    if out["n_outside"]:
        i = int(np.argmax(excess))
        # keys read as for a response (``resp_ms``, ``fitted_ms``, ``band_lo_ms``, ...) or a
        # throughput (``tps``, ``fitted_tps``, ``band_lo_tps``, ...)
        unit = "ms" if target == "resp_ms" else "tps"
        out["worst"] = {**{k: float(v) for k, v in frame.iloc[i].items()}, target: float(measured[i]),
                        f"fitted_{unit}": float(pred[target].iloc[i]), f"band_lo_{unit}": float(lo[i]),
                        f"band_hi_{unit}": float(hi[i])}
    return out


def point_words(point: Mapping[str, float]) -> str:
    """'250 clients (3 GCP + 1 zIIP, think 100 ms)' or '1200 tps': where a training point was measured."""
    if "clients" not in point:
        return f"{point['tps']:.4g} tps" if "tps" in point else "a training point"
    where = f"{point['clients']:g} clients"
    if "n_gcp" in point:
        where += (f" ({point['n_gcp']:g} GCP + {point.get('n_ziip', 0.0):g} zIIP, "
                  f"think {point.get('think_time_ms', 0.0):g} ms)")
    return where


def outside_band(results: Any, row: Mapping[str, Any]) -> list[str]:
    check = band_check(results) if results is not None else None
    if not check or not check["n_outside"]:
        return []
    worst, level = check["worst"], 100 * (1 - check["alpha"])
    unit = "ms" if "fitted_ms" in worst else "tps"
    measured, g = worst["resp_ms" if unit == "ms" else "tps"], ".3g" if unit == "ms" else ".4g"
    return [f"training point {point_words(worst)} measured {measured:{g}} {unit} lies outside the model's own "
            f"{level:g} % band {worst[f'band_lo_{unit}']:{g}}-{worst[f'band_hi_{unit}']:{g}} {unit} (fitted "
            f"{worst[f'fitted_{unit}']:{g}} {unit}): {check['n_outside']} of {check['n_points']} training points "
            f"{'lies' if check['n_outside'] == 1 else 'lie'} outside it, where a {level:g} % band leaves out about "
            f"{check['alpha'] * check['n_points']:.2g} by chance"]


def beyond_trained(results: Any, row: Mapping[str, Any]) -> list[str]:
    ratio = row.get("extrapolation_x")
    if ratio is None or not ratio > EXTRAPOLATION_WARN_X:
        return []
    return [f"beyond {EXTRAPOLATION_WARN_X:g}x the trained load: {row['extrapolation']}"]


def structures_disagree(results: Any, row: Mapping[str, Any]) -> list[str]:
    by_rule = {key[len("knee_tps_"):-len("_help")]: float(value) for key, value in row.items()
               if key.startswith("knee_tps_") and key.endswith("_help") and value is not None}
    found = structure_disagreement(by_rule)
    return [found] if found else []


def structure_knees(res: Any, *, n_gcp: int, n_ziip: int, think_time_ms: float, k: float) -> dict[str, Any]:
    """The knees of the dispatcher structures a closed fit draws, as an answer's keys.

    ``knee_clients_structure_lo`` / ``_hi`` and ``knee_clients_by_structure``
    (:meth:`kneecap.modeling.closed.ClosedMVAResults.structure_knees`); :data:`ANSWER_CHECKS`
    warns when they lie more than :data:`STRUCTURE_DISAGREEMENT` apart.
    """
    return res.structure_knees(n_gcp=n_gcp, n_ziip=n_ziip, think_time_ms=think_time_ms, k=k)


def closed_structures_disagree(results: Any, row: Mapping[str, Any]) -> list[str]:
    low, high = (math.nan if row.get(key) is None else float(row[key])
                 for key in ("knee_clients_structure_lo", "knee_clients_structure_hi"))
    if not knees_apart(low, high):
        return []
    return [f"the dispatcher structures the table cannot tell apart put the knee at {low:,.0f} to {high:,.0f} "
            f"clients ({row.get('knee_clients_by_structure', '')}), {100 * (high / low - 1):.1f} % apart: "
            "the band spans them"]


def own_warnings(results: Any, row: Mapping[str, Any]) -> list[str]:
    own = getattr(results, "warnings", None)
    return [str(w) for w in own(row)] if callable(own) else []


#: The checks every answer goes through: ``check(results, row) -> list of sentences``.
ANSWER_CHECKS: tuple[Callable[[Any, Mapping[str, Any]], list[str]], ...] = (
    outside_band, beyond_trained, structures_disagree, closed_structures_disagree, own_warnings)


def answer_warnings(results: Any, row: Mapping[str, Any]) -> list[str]:
    """The warnings that qualify one answer of ``results`` (a forecast row, or any mapping with its keys).

    One sentence each, none containing :data:`WARNINGS_SEPARATOR`: a training point outside the
    model's own band (:func:`band_check`), a load beyond :data:`EXTRAPOLATION_WARN_X` times the
    largest trained load (the row's ``extrapolation_x`` and ``extrapolation``, from
    :func:`extrapolation`), help rules whose knees (the row's ``knee_tps_<rule>_help``) are further
    apart than :data:`STRUCTURE_DISAGREEMENT` (:func:`structure_disagreement`), and whatever the
    results object says itself: a results class with a
    method ``warnings(row) -> list[str]`` contributes its own (e.g. dispatcher structures that
    disagree by more than the band). A check that needs no results method is one more entry in
    :data:`ANSWER_CHECKS`.
    """
    found: list[str] = []
    for check in ANSWER_CHECKS:
        found.extend(w.replace(WARNINGS_SEPARATOR, ", ") for w in check(results, row))
    return found
