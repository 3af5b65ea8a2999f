"""The train stage's logic: fit every workload in ``fct_measurements`` (pure; no I/O, no mlflow).

One response model (closed MVA, USL, M/M/c, configuration regression or a weighted combination
of families, chosen per workload by
:func:`kneecap.modeling.choose_response_model`) and one CPU-cost model per workload that has the
data. Each comes back with the metrics and parameters the train stage logs to MLflow.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kneecap import modeling, schema
from kneecap.config import Params
from kneecap.modeling import ModelError, ModelingConfig
from kneecap.modeling.class_periods import merge_periods

RESPONSE = "response"
COST = "cost"


@dataclass
class TrainedModel:
    """One fitted model of one workload and kind, with what is logged beside it: competitors, metrics, params, notes."""

    workload: str
    kind: str
    family: str
    results: Any
    competitors: pd.DataFrame
    metrics: dict[str, float]
    params: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def headline(self) -> list[str]:
        """The results' summary lines, then the notes (what the train stage prints per model)."""
        lines = self.results.summary().splitlines()
        return lines + self.notes


def modeling_config(params: Params) -> ModelingConfig:
    """The :class:`ModelingConfig` the fits use, from ``params.yaml`` ``common`` and ``train``."""
    return ModelingConfig(alpha=params.common.alpha, seed=params.common.seed, n_boot=params.train.n_boot,
                          ziip_eligible_fraction=params.train.assumed_ziip_eligible_fraction,
                          honor_priority=params.train.honor_priority, help_wait_ms=params.train.help_wait_ms,
                          help_rule=params.train.help_rule, eligible_bursts=params.train.eligible_bursts,
                          gcp_bursts=params.train.gcp_bursts,
                          max_cv_error_pct=params.train.max_cv_error_pct,
                          open_min_transactions=params.train.open_min_transactions,
                          open_hours=params.train.open_hours, open_help_rules=params.train.open_help_rules,
                          open_help_rule_prior=params.train.open_help_rule_prior,
                          closed_help_rules=params.train.closed_help_rules,
                          closed_eligible_bursts=params.train.closed_eligible_bursts,
                          combine_min_loads=params.train.combine_min_loads,
                          combine_weight_power=params.train.combine_weight_power,
                          usl_method=params.train.usl_method)


def current_error_pct(results: Any, rows: pd.DataFrame, kind: str) -> float:
    """MAPE of a fitted model on a workload's current measured rows.

    This is what a retrained version and the champion are compared on (the champion may have been
    fitted on rows since corrected or added, so for it these are partly held out). NaN when the
    model cannot predict the rows.
    """
    try:
        if kind == COST:
            return float(modeling.cost.cost_mape(results, rows))
        frame = results.inputs_of(rows.drop(columns=[c for c in ("resp_ms",) if c in rows]))
        pred = results.predict(frame)
    except (ModelError, ValueError, KeyError):
        return float("nan")
    errors = []
    for target in ("resp_ms", "tps"):
        if target in pred and target in rows and not (target == "tps" and "clients" not in frame):
            actual = pd.to_numeric(rows[target], errors="coerce").to_numpy(dtype=float)
            got = pred[target].to_numpy(dtype=float)
            ok = np.isfinite(actual) & np.isfinite(got) & (actual > 0)
            if ok.any():
                errors.append(modeling.mape_pct(actual[ok], got[ok]))
    return float(np.mean(errors)) if errors else float("nan")


def input_example(model: TrainedModel, rows: pd.DataFrame, n: int = 5) -> pd.DataFrame:
    """A few of the workload's measured rows as the model takes them; logged as the model's example.

    The canonical measurement, factor and LPAR columns, without the columns the model predicts (so
    throughput stays an input of open and CPU-cost models, which are asked at a given tps).
    """
    targets = set(getattr(model.results, "targets", ()))
    keep = [c for c in (*schema.NUMERIC_COLUMNS, *schema.FACTOR_COLUMNS, *schema.LPAR_COLUMNS)
            if c in rows.columns and c not in targets and c != "resp_ms"]
    return rows[keep].head(n).reset_index(drop=True)


def fit_plot_tables(model: TrainedModel, rows: pd.DataFrame, points: int = 40) -> dict[str, pd.DataFrame]:
    """A response model's curve beside the points it was fitted on, one table per configuration.

    Keyed ``<workload>__<configuration>`` (the family's ``plot_groups``: ``2gcp_2ziip_z200`` for a
    closed workload, ``lpar`` for an SMF class), each table has ``load`` (clients, or tps),
    ``measured_resp_ms`` (empty between measured loads), ``model_resp_ms`` with its band
    ``model_resp_ms_lo`` / ``_hi``, and ``residual_pct`` (measured over predicted, %) on measured
    loads: what ``dvc plots`` draws. Curves run to 1.25 x the largest measured load of each
    configuration, so the knee region a planner reads just past the data is on the plot. Empty
    for cost models and for families without a response curve.
    """
    res = model.results
    if model.kind != RESPONSE:
        return {}
    load = res.load_unit
    tables: dict[str, pd.DataFrame] = {}
    for key, configuration, measured in res.plot_groups(rows):
        curve = res.curve(max_load=1.25 * float(measured[load].max()), points=points, **configuration)
        pred = res.predict(res.inputs_of(measured.drop(columns=["resp_ms"])).reset_index(drop=True))
        tables[f"{model.workload}__{key}"] = _plot_table(curve[load], curve, measured[load], measured["resp_ms"],
                                                         pred["resp_ms"])
    return tables


def preview_curves(fct: pd.DataFrame, params: Params) -> list[dict[str, Any]]:
    """Fit the response models rows support and draw them, without registering anything.

    What the desk shows for an uploaded table before it is added to the project: per workload
    and configuration, ``workload``, ``family``, ``key`` (as :func:`fit_plot_tables`), ``table``
    (the curve, its band and the measured points) and ``note`` (the knee, for closed models).
    """
    previews = []
    for workload in sorted(fct["workload"].dropna().unique()):
        rows = fct[fct["workload"] == workload].reset_index(drop=True)
        for model in train_workload(str(workload), rows, params):
            for key, table in fit_plot_tables(model, rows).items():
                previews.append({"workload": str(workload), "family": model.family, "key": key,
                                 "table": table, "note": "; ".join(model.notes)})
    return previews


def _plot_table(curve_load: pd.Series, curve: pd.DataFrame, load: pd.Series, resp_ms: pd.Series,
                predicted: pd.Series) -> pd.DataFrame:
    model_rows = pd.DataFrame({"load": curve_load.to_numpy(dtype=float),
                               "model_resp_ms": curve["resp_ms"].to_numpy(dtype=float),
                               "model_resp_ms_lo": curve.get("resp_ms_lo", curve["resp_ms"]).to_numpy(dtype=float),
                               "model_resp_ms_hi": curve.get("resp_ms_hi", curve["resp_ms"]).to_numpy(dtype=float)})
    actual = pd.to_numeric(resp_ms, errors="coerce").to_numpy(dtype=float)
    got = predicted.to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        residual = 100.0 * (actual / got - 1.0)
    measured_rows = pd.DataFrame({"load": load.to_numpy(dtype=float), "measured_resp_ms": actual,
                                  "model_resp_ms": got, "residual_pct": residual})
    return pd.concat([model_rows, measured_rows], ignore_index=True).sort_values("load", kind="stable",
                                                                               ignore_index=True)


def promotion(new_error_pct: float, champion_error_pct: float, *, policy: str,
              tolerance_pct: float) -> tuple[bool, str]:
    """Whether a retrained version replaces the champion, and why (one line)."""
    if policy == "never":
        return False, "train.promote is 'never': promote by hand (`kneecap promote`)"
    if not np.isfinite(new_error_pct):
        return False, "the new version cannot predict the current measurements"
    if not np.isfinite(champion_error_pct):
        return True, f"the champion cannot predict the current measurements (new version {new_error_pct:.2f} %)"
    if new_error_pct <= champion_error_pct + tolerance_pct:
        return True, (f"error on the current measurements {new_error_pct:.2f} % vs champion "
                      f"{champion_error_pct:.2f} % (tolerance {tolerance_pct:g} points)")
    return False, (f"error on the current measurements {new_error_pct:.2f} % is worse than the champion's "
                   f"{champion_error_pct:.2f} % by more than {tolerance_pct:g} points: kept as challenger")


def _finite(d: dict[str, Any]) -> dict[str, float]:
    out = {}
    for key, value in d.items():
        if value is None:
            continue
        value = float(value)
        if np.isfinite(value):
            out[key] = value
    return out


def train_workload(workload: str, rows: pd.DataFrame, params: Params) -> Iterator[TrainedModel]:
    """Fit the response and cost models one workload's rows support."""
    cfg = modeling_config(params)
    fit_params = {"alpha": cfg.alpha, "seed": cfg.seed, "n_boot": cfg.n_boot,
                  "honor_priority": cfg.honor_priority, "help_wait_ms": cfg.help_wait_ms,
                  "help_rule": cfg.help_rule, "eligible_bursts": cfg.eligible_bursts, "gcp_bursts": cfg.gcp_bursts,
                  "assumed_ziip_eligible_fraction": cfg.ziip_eligible_fraction, "n_rows": len(rows)}
    # response time is what locates a knee: without it throughput alone is fixed by the think time
    response_rows = rows[rows["resp_ms"].notna()] if "resp_ms" in rows else rows.iloc[0:0]
    enough = len(response_rows) >= params.train.min_points
    if enough:
        try:
            choice = modeling.choose_response_model(response_rows, cfg)
        except ModelError:
            choice = None
        if choice is not None:
            res = choice.results
            metrics = {f"train_mape_{k}": v for k, v in getattr(res, "train_mape", {}).items()}
            if hasattr(res, "loo_mape_pct"):
                metrics["loo_mape_pct"] = res.loo_mape_pct
            report = res.fit_report(response_rows, knee_k=params.train.knee_k, config=cfg)
            metrics.update(report.metrics)
            notes, extra = report.notes, report.params
            shape = getattr(res, "response_shape", None) or {}
            # the response time distribution's fit to the 72.3 buckets (modeling.percentiles): the
            # class's, or each period's of a multi-period class (suffix _p<period>)
            for doc in shape.get("periods", [shape] if shape else []):
                fit = doc["calibration"]
                tag = f"_p{fit['period']}" if "period" in fit else ""
                metrics.update({f"resp_shape{tag}_cv2_base": doc["cv2_base"], f"resp_shape{tag}_cv2_slope":
                                doc["cv2_slope"], f"resp_shape{tag}_cdf_error": fit["cdf_error_mean"],
                                f"resp_shape{tag}_cdf_error_at_goal": fit["cdf_error_at_goal"]})
                # the percentiles' held-out error the bands are widened by (modeling.percentiles)
                for pct, (lo, hi) in fit.get("quantile_log_error", {}).items():
                    metrics.update({f"resp_shape{tag}_p{pct}_log_error_lo": lo,
                                    f"resp_shape{tag}_p{pct}_log_error_hi": hi})
                of = f"period {fit['period']}'s" if tag else "the"
                notes = [*notes, f"response time distribution: fitted to {of} buckets of {fit['intervals']} "
                                 f"interval(s), mean bucket-CDF gap {fit['cdf_error_mean']:.4f}"]
            yield TrainedModel(workload, RESPONSE, choice.family, res, choice.competitors,
                               _finite(metrics), {**fit_params, "family": choice.family, **extra}, notes)
    # a multi-period class's cost is the class's: its periods' CPU and transactions summed per interval
    cost_rows = modeling.cost.cost_table(merge_periods(rows))
    if len(cost_rows) >= params.train.min_points:
        choice = modeling.choose_cost_model(cost_rows, cfg)
        res = choice.results
        metrics = {"loo_mape_pct": res.loo_mape_pct, "n_rows": float(len(cost_rows))}
        elig = res.eligible_fraction()
        if elig.get("fraction") is not None:
            metrics["ziip_eligible_fraction"] = elig["fraction"]
        yield TrainedModel(workload, COST, choice.family, res, choice.competitors, _finite(metrics),
                           {**fit_params, "form": res.design.form,
                            "drivers": ",".join(res.design.numeric) or "-",
                            "factors": ",".join(res.design.factors) or "-"},
                           [res.selection_note])


def workload_rows(group: pd.DataFrame, columns: list[str], dtypes: dict[str, Any], *, order: str) -> pd.DataFrame:
    """One workload's rows as :func:`train_workloads` hands them to :func:`train_workload`, from a copy.

    For rows that travelled through Arrow (a Spark task, :func:`kneecap.spark_fits.train_workloads`):
    put back in their original order (column ``order``), with the original ``columns`` and their
    pandas ``dtypes``; a text column that was ``object`` holds None for a missing value again.

    Examples
    --------
    >>> g = pd.DataFrame({"w": ["b", "a"], "n": [2.0, 1.0], "pos": [1, 0]})
    >>> workload_rows(g, ["w", "n"], {"w": object, "n": np.dtype("int64")}, order="pos").to_dict("list")
    {'w': ['a', 'b'], 'n': [1, 2]}
    """
    rows = group.sort_values(order, kind="stable").reset_index(drop=True)[columns]
    for column in columns:
        want = dtypes[column]
        if rows[column].dtype != want:
            cast = rows[column].astype(want)
            rows[column] = cast.where(rows[column].notna(), None) if pd.api.types.is_object_dtype(want) else cast
    return rows


def train_workloads(fct: pd.DataFrame, workloads: pd.DataFrame, params: Params) -> list[TrainedModel]:
    """Every model the published marts support, in workload order."""
    trained: list[TrainedModel] = []
    for workload in sorted(workloads["workload"].unique()):
        rows = fct[fct["workload"] == workload].reset_index(drop=True)
        trained.extend(train_workload(workload, rows, params))
    return trained


def with_rt_buckets(fct: pd.DataFrame, rt_buckets: pd.DataFrame | None, goals: pd.DataFrame | None) -> pd.DataFrame:
    """``fct_measurements`` with each SMF service class interval's 72.3 response time buckets and goal.

    ``rt_buckets``: the ``fct_rt_buckets`` mart (one row per bucket); ``goals``: the
    ``fct_performance_index`` mart (``goal_type``, ``goal_resp_ms``, ``goal_percentile`` per
    period). Adds ``rt_bucket_NN_count`` (14), ``rt_bucket_NN_max_pct`` (13), ``rt_midpoint_ms``
    (the buckets' midpoint), ``goal_type``, ``goal_resp_ms`` and ``goal_percentile``, matched on
    ``point_id`` (system / interval start / ``S:`` class / period, as ``int_smf_measurements``
    writes it); empty for other rows, and ``fct`` unchanged when there are no buckets (or either
    mart is None). The open dispatch fit calibrates its response time distribution on them
    (:func:`kneecap.modeling.percentiles.class_response_shape`).
    """
    if rt_buckets is None or goals is None or rt_buckets.empty or goals.empty:
        return fct
    svc = rt_buckets[~rt_buckets["is_report_class"].astype(bool)]
    key = ["system_id", "interval_start_at", "class_name", "period"]
    wide = svc.pivot_table(index=key, columns="bucket", values=["n_transactions", "max_pct", "max_ms"],
                           aggfunc="first")
    out = pd.DataFrame(index=wide.index)
    # the buckets' midpoint: the goal for response time goals, R723RTDM for velocity goals
    out["rt_midpoint_ms"] = (wide[("max_ms", 1)] / wide[("max_pct", 1)] * 100.0).astype(float)
    for j in range(1, 15):
        out[f"rt_bucket_{j:02d}_count"] = wide[("n_transactions", j)].astype(float)
        if j < 14:
            out[f"rt_bucket_{j:02d}_max_pct"] = wide[("max_pct", j)].astype(float)
    out = out.join(goals.set_index(key)[["goal_type", "goal_resp_ms", "goal_percentile"]], how="left").reset_index()
    start = pd.to_datetime(out["interval_start_at"])
    out["point_id"] = (out["system_id"] + "/" + start.dt.strftime("%Y-%m-%dT%H:%M:%S") + "/S:" + out["class_name"]
                       + "/" + out["period"].astype(int).astype(str))
    return fct.merge(out.drop(columns=key), on="point_id", how="left")
