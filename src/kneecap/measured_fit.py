"""A champion against the points it was fitted on: its curves, residuals and the observed knee.

What a planner reads to judge a fit before trusting an answer from it: the response curve at every
configuration the workload was measured in (:func:`measured_configuration_curves`), measured against
fitted at every point with the model's band (:func:`residuals`), where the measured points alone
bend (:func:`observed_knee_point`) and where a WLM class's RMF intervals came from
(:func:`provenance`). Pure functions of a results object and the workload's rows of
``fct_measurements``; the desk caches the curves and residuals (``app/resources.py``) and its
pages call the others.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from kneecap import forecasting
from kneecap.modeling import observed_knee, open_dispatch
from kneecap.modeling.class_periods import merge_periods

#: The targets a residual is computed for, the first one a model predicts and the points measure.
RESIDUAL_TARGETS = ("resp_ms", "tps", "cpu_ms_per_tran")


def is_class_model(model: Any) -> bool:
    """True for a WLM class's response model: load in tps on the zIIP and GCP pools, the other classes around it."""
    return model is not None and model.pools and model.load_unit == "tps"


def measured_configuration_curves(model: Any, points: pd.DataFrame, *, most: int = 6,
                                  points_per_curve: int = 60) -> pd.DataFrame:
    """A closed model's response curve (with band) at each configuration the workload was measured in.

    One curve per (``n_gcp``, ``n_ziip``, ``think_time_ms``) of ``points`` (a cell a row leaves
    empty is the model's first training configuration, :func:`kneecap.forecasting.default_configuration`),
    the first ``most`` of them in the order measured, each from 1 client to 1.3 times the most
    measured. Columns: :func:`kneecap.forecasting.response_curve`'s, ``config`` naming the
    configuration (``'2 GCP / 2 zIIP / Z 200 ms'``) and its three values. Empty for a model that is
    not a closed MVA model (its load is not clients) and for no points.
    """
    # curves by engines and think time: a closed model of the zIIP and GCP pools
    if model is None or not (model.pools and model.load_unit == "clients") or points.empty:
        return pd.DataFrame()
    base = forecasting.default_configuration(model)
    configs = (points[["n_gcp", "n_ziip", "think_time_ms"]]
               .fillna({"n_gcp": base["n_gcp"], "n_ziip": base["n_ziip"], "think_time_ms": base["think_time_ms"]})
               .drop_duplicates().head(most))
    top = float(points["clients"].max()) * 1.3
    frames = []
    for n_gcp, n_ziip, think in configs.itertuples(index=False):
        curve = forecasting.response_curve(model, n_gcp=int(n_gcp), n_ziip=int(n_ziip), think_time_ms=float(think),
                                           max_load=top, points=points_per_curve)
        frames.append(curve.assign(config=f"{int(n_gcp)} GCP / {int(n_ziip)} zIIP / Z {think:g} ms",
                                   n_gcp=n_gcp, n_ziip=n_ziip, think_time_ms=think))
    return pd.concat(frames, ignore_index=True)


def residuals(model: Any, points: pd.DataFrame) -> pd.DataFrame:
    r"""Measured against fitted at every measured point, with the model's band and the residual in %.

    The target is the first of :data:`RESIDUAL_TARGETS` the model predicts and ``points`` has;
    rows without a measured value of it are left out. A WLM class (open dispatch model) is
    predicted on each interval's own LPAR: its engines and the other classes' busy per engine
    measured in that interval (:func:`kneecap.modeling.open_dispatch.other_classes_busy`, the rule
    its fit uses), so a residual compares the model with the interval it was fitted on.

    Returns the point's id (and interval start, where the points have one), its load and
    configuration, ``target``, ``measured``, ``fitted``, the band ``lo`` / ``hi`` (the fitted value
    itself for a model without one) and ``residual_pct``; empty when nothing can be compared.

    Notes
    -----
    .. math:: \text{residual\_pct} = 100 \left( \frac{\text{fitted}}{\text{measured}} - 1 \right)
    """
    targets = [t for t in RESIDUAL_TARGETS if model is not None and t in model.targets and t in points]
    if not targets:
        return pd.DataFrame()
    target = targets[0]
    if is_class_model(model):  # a multi-period class is one stream: its fit's rows, the periods merged
        points = merge_periods(points)
    rows = points.dropna(subset=[target]).reset_index(drop=True)
    if is_class_model(model):
        rows = rows[rows["tps"].notna() & (rows["tps"] >= 0)].reset_index(drop=True)
        rows = pd.concat([rows, open_dispatch.other_classes_busy(rows)], axis=1)
    if rows.empty:
        return pd.DataFrame()
    pred = model.predict(rows)
    timed = "interval_start_at" in rows and rows["interval_start_at"].notna().any()
    keep = ("point_id", *(("interval_start_at",) if timed else ()),
            *(("tps", "n_gcp", "n_ziip", "bg_gcp_busy_pct", "bg_ziip_busy_pct") if is_class_model(model)
              else ("clients", "n_gcp", "n_ziip", "think_time_ms")))
    out = rows[[c for c in keep if c in rows]].copy()
    out["target"] = target
    out["measured"] = rows[target].to_numpy(float)
    out["fitted"] = pred[target].to_numpy(float)
    out["lo"] = pred[f"{target}_lo"].to_numpy(float) if f"{target}_lo" in pred else out["fitted"]
    out["hi"] = pred[f"{target}_hi"].to_numpy(float) if f"{target}_hi" in pred else out["fitted"]
    out["residual_pct"] = (out["fitted"] / out["measured"] - 1) * 100
    return out


def observed_knee_point(points: pd.DataFrame) -> dict[str, float] | None:
    """The Kneedle knee of one configuration's measured points, ``{"clients", "resp_ms"}``, or None.

    None for fewer than three points, points without clients, or a curve with no knee
    (:func:`kneecap.modeling.observed_knee`, which cites Satopää et al. 2011).
    """
    if len(points) < 3 or "clients" not in points:
        return None
    clients = observed_knee(points["clients"].to_numpy(dtype=float), points["resp_ms"].to_numpy(dtype=float))
    if clients is None:
        return None
    at = points.loc[points["clients"] == clients, "resp_ms"]
    return {"clients": float(clients), "resp_ms": float(at.iloc[0])}


#: The columns of :func:`provenance`.
PROVENANCE_COLUMNS = ["system_id", "source_id", "intervals", "first_interval_start", "last_interval_start",
                      "interval_s", "days"]


def provenance(points: pd.DataFrame) -> pd.DataFrame:
    """Where a WLM class's RMF intervals came from: one row per system and source.

    Each row has the interval count, the first and last interval start, the interval length(s) in
    seconds (``'900'``, ``'900, 1800'``; ``'-'`` when none is known) and the days the intervals
    fall on. Empty (:data:`PROVENANCE_COLUMNS`) for points without interval starts (tables of runs).
    """
    if points.empty or "interval_start_at" not in points or points["interval_start_at"].isna().all():
        return pd.DataFrame(columns=PROVENANCE_COLUMNS)
    rows = points[points["interval_start_at"].notna()].copy()
    rows["interval_start_at"] = pd.to_datetime(rows["interval_start_at"])
    rows["system_id"] = rows["system_id"].fillna("?") if "system_id" in rows else "?"
    rows["interval_s"] = pd.to_numeric(rows.get("interval_s"), errors="coerce")
    out = []
    for (system, source), g in rows.groupby(["system_id", "source_id"], sort=True):
        lengths = sorted(g["interval_s"].dropna().unique())
        out.append({"system_id": system, "source_id": source, "intervals": len(g),
                    "first_interval_start": g["interval_start_at"].min(),
                    "last_interval_start": g["interval_start_at"].max(),
                    "interval_s": ", ".join(f"{x:g}" for x in lengths) or "-",
                    "days": int(g["interval_start_at"].dt.normalize().nunique())})
    return pd.DataFrame(out, columns=PROVENANCE_COLUMNS)
