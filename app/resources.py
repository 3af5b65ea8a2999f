"""The desk's cached loading: models, marts, the registry, reports and files, and the answers on them.

The only module with st.cache_* in the app, and the only one that reads the store (kneecap.tracking),
the marts (kneecap.warehouse) or files; pages call kneecap's pure functions themselves, and show
tables and inputs with ``tables`` and ``inputs``.

Where things are: the project root is the folder above ``app/``; ``KNEECAP_MARTS`` overrides the
published marts folder (default ``<root>/data/processed``), ``KNEECAP_PARAMS`` the params file,
``MLFLOW_TRACKING_URI`` the tracking store (default ``sqlite:///<root>/mlflow.db``) and
``KNEECAP_REPORTS`` the DVC reports folder (default ``<root>/reports``) and ``KNEECAP_FACTORS`` the
factor catalogue (default ``<root>/data/reference/factors.csv``).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from kneecap import (
    backtest,
    config,
    factors,
    forecasting,
    goal_answers,
    goal_curves,
    measured_fit,
    modeling,
    msu,
    msu_answer,
    peak_load,
    policies,
    processors,
    tracking,
    upload,
    warehouse,
)
from kneecap.modeling.class_periods import merge_periods
from kneecap.modeling.engines import on_engines
from kneecap.report import content

ROOT = Path(__file__).resolve().parents[1]


def marts_dir() -> Path:
    """Folder of the published marts (``KNEECAP_MARTS``, default ``<root>/data/processed``)."""
    return Path(os.environ.get("KNEECAP_MARTS", ROOT / "data" / "processed"))


def reports_dir() -> Path:
    """Folder of the DVC reports (``KNEECAP_REPORTS``, default ``<root>/reports``)."""
    return Path(os.environ.get("KNEECAP_REPORTS", ROOT / "reports"))


MARTS = ("fct_measurements", "dim_workloads", "dim_sources", "fct_cpu_intervals")


@st.cache_resource
def _tracking() -> str:
    return tracking.configure(project_dir=ROOT)


@st.cache_data(ttl=60)
def params() -> config.Params:
    """The project's ``params.yaml`` (``KNEECAP_PARAMS`` overrides the path)."""
    return config.load_params(os.environ.get("KNEECAP_PARAMS", ROOT / "params.yaml"))


def policy() -> forecasting.Policy:
    """The planner policy from ``params.yaml``, as every caller uses it."""
    return policies.planner_policy(params())


# Shared, not copied: st.cache_data would unpickle every mart on every call, several times per
# slider step. Pages filter and derive new frames from these and never change them in place.
@st.cache_resource(ttl=60)
def marts() -> dict[str, pd.DataFrame]:
    """Every published mart, all from one snapshot (``{}`` before the pipeline has published).

    One cached snapshot rather than one cache entry per table: entries read at different times
    could hold tables of two publishes side by side. Read-only: the frames are shared by every
    session.
    """
    try:
        return warehouse.read_snapshot(marts_dir()).tables
    except OSError:  # FileNotFoundError among them; a broken manifest (ValueError) is shown, not hidden
        return {}


def table(name: str) -> pd.DataFrame:
    """A published mart, or an empty frame when the pipeline has not published it yet."""
    return marts().get(name, pd.DataFrame())


def class_points(workload: str) -> pd.DataFrame:
    """A WLM class's intervals as its fit sees them: :func:`measured_points` with its periods merged."""
    return merge_periods(measured_points(workload))


def measured_points(workload: str) -> pd.DataFrame:
    """The workload's rows of ``fct_measurements`` (empty before the pipeline has published)."""
    fct = table("fct_measurements")
    return fct[fct["workload"] == workload].reset_index(drop=True) if not fct.empty else fct


@st.cache_resource(ttl=30)  # shared like marts(): read several times per rerun
def registered() -> pd.DataFrame:
    """Every registered kneecap model version: name, version, aliases, run and metrics (read-only)."""
    _tracking()
    return tracking.registered_models()


def combination_weights() -> pd.DataFrame:
    """Per registered version that combines model families: each member's weight and rolling-origin score."""
    return modeling.combine.registered_weights(registered())


def workloads_with(kind: str) -> list[str]:
    """Workloads that have a champion model of ``kind`` (``response`` or ``cost``), sorted."""
    return tracking.champion_workloads(registered(), kind)


@st.cache_resource(ttl=300)
def models(workload: str, version_key: str = "") -> forecasting.WorkloadModels:
    """The workload's champions (``version_key`` changes when a new champion is promoted).

    A model registered without a champion (not promoted yet, or retired) is left out.
    """
    _tracking()
    found = tracking.load_champions(workload, skip_unpromoted=True)
    return forecasting.WorkloadModels(workload, found.get("response"), found.get("cost"))


def champion_key(workload: str) -> str:
    """The workload's champion names and versions as one string; it changes when a champion does."""
    return tracking.champion_key(registered(), workload)


def response_model(workload: str) -> Any:
    """The workload's champion response model."""
    return models(workload, champion_key(workload)).response


#: The engines an answer is asked on, as a cache key: ``tuple(sorted(engines.items()))``; ``()``
#: is the model's own (its measured engines, or engines alike).
Engines = tuple[tuple[str, Any], ...]


def answering(workload: str, key: str, engines: Engines = ()) -> Any:
    """The champion response model answering on ``engines`` (:func:`kneecap.modeling.engines.on_engines`)."""
    model = models(workload, key).response
    return on_engines(model, **dict(engines)) if engines else model


def model_source(workload: str, kind: str = "response") -> str:
    """Where a curve comes from, for its legend: family, champion version, the tables fitted on."""
    workload_models = models(workload, champion_key(workload))
    model = workload_models.response if kind == "response" else workload_models.cost
    champion = tracking.champion_row(registered(), workload, kind)
    version = f" v{int(champion['version'])}" if champion is not None else ""
    dims = table("dim_workloads")
    sources = dims.loc[dims["workload"] == workload, "source_ids"] if not dims.empty else pd.Series(dtype=object)
    on = f" on {str(sources.iloc[0]).replace(',', ', ')}" if len(sources) and isinstance(sources.iloc[0], str) else ""
    return f"{getattr(model, 'family', type(model).__name__)}{version}{on}"


# Bands and knee intervals from every bootstrap draw (the library's default), so the desk shows the
# intervals the registered metrics and `kneecap forecast` print.
@st.cache_data(max_entries=256)
def curve(workload: str, key: str, n_gcp: int, n_ziip: int, think_time_ms: float, max_clients: int,
          engines: Engines = ()) -> pd.DataFrame:
    """The response curve (with band) of a closed workload up to ``max_clients``, in one configuration."""
    return forecasting.response_curve(answering(workload, key, engines), n_gcp=n_gcp, n_ziip=n_ziip,
                                      think_time_ms=think_time_ms, max_load=max_clients, points=80)


@st.cache_data(max_entries=256)
def knee(workload: str, key: str, n_gcp: int, n_ziip: int, think_time_ms: float, solve_to: int = 0,
         engines: Engines = ()) -> dict[str, Any]:
    """The knee in clients with its interval, in one configuration (:func:`kneecap.forecasting.knee`).

    ``solve_to``: the clients the page's curve goes up to, so that the curve reuses the knee's solve.
    """
    return forecasting.knee(answering(workload, key, engines), n_gcp=n_gcp, n_ziip=n_ziip,
                            think_time_ms=think_time_ms, k=policy().knee_k, solve_to=solve_to)


@st.cache_data(max_entries=256)
def structure_knees(workload: str, key: str, n_gcp: int, n_ziip: int, think_time_ms: float,
                    engines: Engines = ()) -> dict[str, Any]:
    """The knees of the dispatcher structures the champion draws (:func:`kneecap.forecasting.structure_knees`)."""
    return forecasting.structure_knees(answering(workload, key, engines), n_gcp=n_gcp, n_ziip=n_ziip,
                                       think_time_ms=think_time_ms, k=policy().knee_k)


@st.cache_data(max_entries=256)
def point(workload: str, key: str, clients: float, n_gcp: int, n_ziip: int, think_time_ms: float,
          engines: Engines = ()) -> dict[str, float]:
    """The prediction at one number of clients and configuration, as a flat dict."""
    pred = answering(workload, key, engines).predict(pd.DataFrame([{
        "clients": clients, "n_gcp": n_gcp, "n_ziip": n_ziip, "think_time_ms": think_time_ms}]))
    return {k: float(v) for k, v in pred.iloc[0].items()}


@st.cache_data(max_entries=128)
def plan(workload: str, key: str, clients: float, think_time_ms: float, n_gcp: int, slo_resp_ms: float,
         policy: modeling.PlannerPolicy, engines: Engines = ()) -> dict[str, Any]:
    """The cheapest zIIP / GCP mix that meets the SLO for a closed workload, with the table of candidates."""
    result = modeling.plan_ziip(answering(workload, key, engines), clients=clients, think_time_ms=think_time_ms,
                                n_gcp=n_gcp, slo_resp_ms=slo_resp_ms, policy=policy)
    return modeling.ziip.plan_answer(result, slo_resp_ms, policy)


@st.cache_data(max_entries=64)
def plan_smt(workload: str, key: str, clients: float, think_time_ms: float, n_gcp: int, slo_resp_ms: float,
             policy: modeling.PlannerPolicy, mt_capacity: float, engines: Engines = ()) -> dict[str, Any]:
    """The closed workload's plan with its zIIPs in MT-1 and in SMT-2 (:func:`kneecap.modeling.ziip.smt_answer`)."""
    return modeling.ziip.smt_answer(answering(workload, key, engines), mt_capacity, clients=clients,
                           think_time_ms=think_time_ms, n_gcp=n_gcp, slo_resp_ms=slo_resp_ms, policy=policy)


@st.cache_data(max_entries=256)
def answer_warnings(workload: str, key: str, answer: dict[str, Any] | None = None) -> list[str]:
    """The warnings on an answer of the workload's champion (:func:`kneecap.forecasting.answer_warnings`).

    ``answer``: the answer's keys the checks read: its load against the trained one
    (:func:`kneecap.forecasting.extrapolation`), the help rules' knees (``knee_tps_<rule>_help``);
    without it, only the model's own warnings (training points outside its band, ...).
    """
    return forecasting.answer_warnings(models(workload, key).response, answer or {})


def run_competitors(run_id: str) -> pd.DataFrame:
    """The competitors table logged with a training run (empty if none)."""
    return _run_table(run_id, "competitors.json")


@st.cache_data(ttl=300)
def _run_table(run_id: str, name: str) -> pd.DataFrame:
    _tracking()
    return tracking.load_run_table(run_id, name)


def _json(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


@st.cache_data(ttl=60)
def backtest_metrics() -> dict[str, Any] | None:
    """``reports/metrics/backtest.json`` as written by the evaluate stage (None before the first run)."""
    return _json(reports_dir() / "metrics" / "backtest.json")


def backtest_table() -> pd.DataFrame:
    """One row per backtest case and target: held-out MAPE, the goal, and whether it is met."""
    return backtest.summary_table(backtest_metrics())


@st.cache_data(ttl=60)
def validation_report() -> dict[str, Any] | None:
    """``reports/validation/marts.json`` from the validate stage (None before the first run)."""
    return _json(reports_dir() / "validation" / "marts.json")


def mart_counts() -> pd.DataFrame:
    """Rows in each published mart (0 for one not yet published)."""
    published = marts()
    return pd.DataFrame([{"table": name, "rows": len(published.get(name, ()))} for name in MARTS])


def run_metrics(workload: str, kind: str) -> pd.DataFrame:
    """The champion run's metrics (training fit, leave-one-out CV error, ...) as metric/value rows."""
    return tracking.champion_metrics(registered(), workload, kind)


def champion_run(workload: str, kind: str) -> str | None:
    """Run id of the workload's champion of ``kind``, or None."""
    champion = tracking.champion_row(registered(), workload, kind)
    return None if champion is None else str(champion["run_id"])


@st.cache_data(max_entries=64)
def fit_curves(workload: str, key: str, think_cap: int = 6) -> pd.DataFrame:
    """The response model's curve (with band) at every measured configuration of the workload.

    :func:`kneecap.measured_fit.measured_configuration_curves`, at most ``think_cap`` configurations.
    """
    return measured_fit.measured_configuration_curves(models(workload, key).response, measured_points(workload),
                                                      most=think_cap)


@st.cache_data(max_entries=64)
def residuals(workload: str, key: str, kind: str) -> pd.DataFrame:
    """Measured vs fitted for every measured point of the workload (:func:`kneecap.measured_fit.residuals`)."""
    wm = models(workload, key)
    return measured_fit.residuals(wm.response if kind == "response" else wm.cost, measured_points(workload))


# --- SMF classes (open dispatch models on RMF intervals) -------------------------------------------

def class_workloads() -> list[str]:
    """Workloads whose response champion is an open dispatch model (SMF / RMF classes)."""
    return [w for w in workloads_with("response") if measured_fit.is_class_model(response_model(w))]


def class_measured_pi(workload: str) -> pd.DataFrame:
    """The class's measured PI per system and period, and per sysplex where it runs on several of its systems.

    :func:`kneecap.report.content.performance_index_summary`, as the capacity report shows it.
    """
    points = measured_points(workload)
    systems = set(points["system_id"].dropna()) if "system_id" in points else set()
    return content.performance_index_summary(*content.class_performance_index(marts(), workload, systems))


def provenance(workload: str) -> pd.DataFrame:
    """Where a class's intervals came from, one row per system and source (:func:`kneecap.measured_fit.provenance`)."""
    return measured_fit.provenance(measured_points(workload))


def _lpar(n_gcp: int, n_ziip: int, bg_load_factor: float) -> dict[str, float]:
    return {"n_gcp": int(n_gcp), "n_ziip": int(n_ziip), "bg_load_factor": float(bg_load_factor)}


@st.cache_data(max_entries=256)
def class_curve(workload: str, key: str, n_gcp: int, n_ziip: int, bg_load_factor: float,
                max_tps: float, engines: Engines = ()) -> pd.DataFrame:
    """The class's response (with band) and pool busy on an even tps grid up to ``max_tps``."""
    return answering(workload, key, engines).curve(points=80, max_load=float(max_tps),
                                                **_lpar(n_gcp, n_ziip, bg_load_factor))


@st.cache_data(max_entries=256)
def class_knee(workload: str, key: str, n_gcp: int, n_ziip: int, bg_load_factor: float,
               engines: Engines = ()) -> dict[str, Any]:
    """The class's knee in tps with its interval (raises ModelError when the other classes fill a pool)."""
    return answering(workload, key, engines).knee(k=policy().knee_k, **_lpar(n_gcp, n_ziip, bg_load_factor))


@st.cache_data(max_entries=256)
def class_point(workload: str, key: str, tps: float, n_gcp: int, n_ziip: int,
                bg_load_factor: float, engines: Engines = ()) -> dict[str, float]:
    """The class's prediction at one tps and LPAR, as a flat dict."""
    pred = modeling.base.predict_at(answering(workload, key, engines), {"tps": float(tps),
                                                                      **_lpar(n_gcp, n_ziip, bg_load_factor)})
    return {k: float(v) for k, v in pred.items()}


@st.cache_data(max_entries=128)
def class_plan(workload: str, key: str, tps: float, n_gcp: int, slo_resp_ms: float, bg_load_factor: float,
               policy: modeling.PlannerPolicy, engines: Engines = ()) -> dict[str, Any]:
    """The cheapest zIIP / GCP mix that meets the SLO for a WLM class at ``tps``, with the table of candidates."""
    result = modeling.plan_ziip(answering(workload, key, engines), tps=float(tps), n_gcp=int(n_gcp),
                                slo_resp_ms=slo_resp_ms, policy=policy, lpar={"bg_load_factor": float(bg_load_factor)})
    return modeling.ziip.plan_answer(result, slo_resp_ms, policy)


@st.cache_data(max_entries=64)
def class_plan_smt(workload: str, key: str, tps: float, n_gcp: int, slo_resp_ms: float, bg_load_factor: float,
                   policy: modeling.PlannerPolicy, mt_capacity: float, engines: Engines = ()) -> dict[str, Any]:
    """A WLM class's plan with its zIIPs in MT-1 and in SMT-2 at ``tps`` (:func:`kneecap.modeling.ziip.smt_answer`)."""
    return modeling.ziip.smt_answer(answering(workload, key, engines), mt_capacity, tps=float(tps), n_gcp=int(n_gcp),
                                    slo_resp_ms=slo_resp_ms, policy=policy,
                                    lpar={"bg_load_factor": float(bg_load_factor)})


@st.cache_data(max_entries=128)
def class_slo_tps(workload: str, key: str, slo_resp_ms: float, n_gcp: int, n_ziip: int,
                  bg_load_factor: float) -> float:
    """The class tps at which the predicted response reaches the SLO (NaN: unreachable)."""
    return forecasting.slo_tps(models(workload, key).response, slo_resp_ms,
                               lpar=_lpar(n_gcp, n_ziip, bg_load_factor))


@st.cache_data(max_entries=128)
def class_goal(workload: str, key: str, tps: float, n_gcp: int, n_ziip: int, bg_load_factor: float) -> dict[str, Any]:
    """The class's response percentiles and its WLM goal's forecast PI at ``tps``, and the load the PI passes 1.

    :func:`kneecap.goal_answers.goal_columns` without dates; ``{}`` for a class fitted without
    72.3 response time buckets.
    """
    point = class_point(workload, key, tps, n_gcp, n_ziip, bg_load_factor)
    row = {"tps": float(tps), **{c: point[c] for c in ("resp_ms", "resp_ms_lo", "resp_ms_hi")}}
    return goal_answers.goal_columns(models(workload, key).response, _lpar(n_gcp, n_ziip, bg_load_factor), row)


@st.cache_data(max_entries=64)
def class_goal_curve(workload: str, key: str, n_gcp: int, n_ziip: int, bg_load_factor: float) -> pd.DataFrame:
    """The class's response percentiles and its goal's PI against tps, with bands (empty: no distribution).

    :func:`kneecap.goal_curves.goal_curve_on`: on the curve :func:`class_goal` reads the PI's load off.
    """
    return goal_curves.goal_curve_on(models(workload, key).response, _lpar(n_gcp, n_ziip, bg_load_factor))


@st.cache_data(max_entries=16)
def class_goal_points(workload: str, key: str) -> pd.DataFrame:
    """Per RMF interval of the class: tps, measured PI for its goal and bucket percentiles.

    :func:`kneecap.goal_curves.measured_goal_points` on the published ``fct_performance_index``
    and ``fct_rt_buckets`` (empty where they are not published).
    """
    return goal_curves.measured_goal_points(measured_points(workload), table("fct_performance_index"),
                                            table("fct_rt_buckets"),
                                            goal_answers.period_goals(models(workload, key).response))


def class_response_goal(workload: str, key: str) -> tuple[str, float, float] | None:
    """The WLM response time goal a single-period class's distribution was calibrated under (None: none).

    :func:`kneecap.goal_curves.response_goal`.
    """
    return goal_curves.response_goal(models(workload, key).response)


def class_slo_kinds(workload: str, key: str) -> list[str]:
    """What a class's SLO may be said on (``mean``, ``p90``, ``p95``, ``WLM goal``).

    ``mean`` only without a measured response time distribution (percentiles not for a
    multi-period class); ``WLM goal`` only with a response time goal (every period's).
    """
    response = models(workload, key).response
    # a multi-period class has no one distribution for a percentile, but each period's goal
    shape = goal_answers.response_shape(response)
    has_goal = any(g.goal is not None for g in goal_answers.period_goals(response))
    return ["mean", *(["p90", "p95"] if shape is not None else []), *(["WLM goal"] if has_goal else [])]


def class_slo_mean(workload: str, key: str, kind: str, resp_ms: float) -> tuple[float, str]:
    """The mean response an SLO on ``kind`` (:func:`class_slo_kinds`) stands for, and the SLO in words.

    :func:`kneecap.goal_answers.with_slo`; raises ModelError where it cannot be met (below the
    response no transaction goes under).
    """
    slo: Any = float(resp_ms)
    if kind == "WLM goal":
        slo = goal_answers.GOAL_SLO
    elif kind != "mean":
        slo = {"percentile": float(kind.lstrip("p")), "resp_ms": float(resp_ms)}
    _, cols = goal_answers.with_slo(models(workload, key).response, {"slo": slo})
    return float(cols["slo_resp_ms"]), str(cols["slo"])


@st.cache_data(max_entries=32)
def class_planned_peak(workload: str, key: str, by: str, pct: float) -> dict[str, Any]:
    """The class's forecast peak to ``by`` (ISO day) at ``pct`` % of its growth paths (:mod:`kneecap.peak_load`).

    The columns of :meth:`kneecap.peak_load.PlannedPeak.columns`; raises ModelError without a
    growth forecast or with ``by`` outside it.
    """
    response = models(workload, key).response
    _, cols = peak_load.with_planned_peak(response, {"tps": peak_load.PEAK_TPS, "peak_by": by},
                                          functools.partial(forecasting.growth_paths, policy=growth_policy()),
                                          pct=float(pct))
    return cols


def class_history(workload: str, key: str) -> pd.DataFrame:
    """The class's fitted intervals (``interval_start_at``, ``tps``) as the champion carries them."""
    return forecasting.class_history(models(workload, key).response)


def growth_policy() -> forecasting.GrowthPolicy:
    """How a class's growth is read (params.yaml ``growth``: peak per day or week, horizon)."""
    return policies.growth_policy(params())


@st.cache_data(max_entries=64)
def class_growth(workload: str, key: str, knee_tps: float, knee_tps_lo: float, knee_tps_hi: float,
                 knee_tps_draws: tuple[float, ...], slo_tps: float, horizon: int) -> dict[str, Any]:
    """Peak tps per period, the chosen growth forecast with its band and the knee / SLO crossing dates.

    Crossings are looked for within ``horizon`` periods (:func:`kneecap.forecasting.class_growth`
    with params.yaml ``growth``; raises ValueError on too short a history).
    """
    model = models(workload, key).response
    return forecasting.class_growth(model, knee_tps=knee_tps, knee_tps_lo=knee_tps_lo, knee_tps_hi=knee_tps_hi,
                                    knee_tps_draws=knee_tps_draws, slo_tps=slo_tps if slo_tps == slo_tps else None,
                                    policy=replace(growth_policy(), horizon=int(horizon)), alpha=model.alpha)


@st.cache_data(max_entries=32, show_spinner="Pricing the class in MSU")
def class_msu(workload: str, key: str, n_gcp: int, n_ziip: int) -> dict[str, Any]:
    """The class's MSU answers: what ``kneecap forecast``'s ``msu_*`` columns hold for the same engines."""
    return msu_answer.class_msu_answer(workload, table("fct_measurements"), table("fct_msu_intervals"),
                                       models(workload, key).response, {"n_gcp": n_gcp, "n_ziip": n_ziip},
                                       growth_policy=growth_policy())


def lpar_r4ha(system_id: str) -> pd.DataFrame:
    """The LPAR's interval MSU, its rolling four-hour average and SMF70LAC (:func:`kneecap.msu.lpar_r4ha`)."""
    return msu.lpar_r4ha(table("fct_msu_intervals"), system_id)


@st.cache_data(max_entries=16, show_spinner="Writing the capacity report")
def report_html(workload: str, key: str, load: float | None = None,
                configuration: dict[str, float] | None = None) -> str:
    """The workload's capacity report as one HTML file: what ``kneecap report --workload`` writes.

    :func:`kneecap.report.capacity_report` on the champions, the registry and the marts (read
    afresh, so the generation it records is that of the tables it used), asked at ``load`` on
    ``configuration`` (the page's what-if point and sliders; default the largest trained load on the
    model's own machine), without an SLO.
    """
    from kneecap.report import capacity_report  # noqa: PLC0415 - only the Knee page's download needs it

    snapshot = warehouse.read_snapshot(marts_dir())
    lock = ROOT / "dvc.lock"
    return capacity_report(models(workload, key), registry=registered(), marts=snapshot.tables, policy=policy(),
                           growth=growth_policy(), generation=snapshot.generation, load=load,
                           configuration=configuration,
                           lock_text=lock.read_text(encoding="utf-8") if lock.is_file() else None)


def listed_name(name: str) -> str:
    """A registered model's name as ``kneecap models`` lists it (:func:`kneecap.tracking.listed_name`).

    Here because :mod:`kneecap.tracking` is the store's module: a page never imports it.
    """
    return tracking.listed_name(name)


def promote(name: str, version: int) -> str:
    """Make ``version`` of ``name`` the champion and forget the cached registry and models."""
    _tracking()
    done = tracking.promote(name, version)
    registered.clear()
    models.clear()
    return done


@st.cache_data(max_entries=8, show_spinner="Fitting the uploaded points (nothing is published or registered)")
def upload_curves(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """Response curves fitted on an upload's publishable rows alone, as the train stage would fit them."""
    from kneecap import training  # noqa: PLC0415 - only the Data page needs it

    return training.preview_curves(rows, params())


def ingest_upload(filename: str, payload: bytes, progress: Callable[[float, str], None] | None = None,
                  fill: dict[str, float] | None = None) -> dict[str, Any]:
    """An uploaded file read and, for a CSV, validated with the project's reference and SQL.

    :func:`kneecap.upload.read_upload` (raises :class:`kneecap.upload.UploadError`).
    """
    return upload.read_upload(filename, payload, sources_csv=ROOT / "data" / "reference" / "sources.csv",
                              sql_root=ROOT / "pipelines" / "sql", config=params().validate, progress=progress,
                              fill=fill)


# --- What-if factors ---------------------------------------------------------------------------


def processors_path() -> Path:
    """Path of the processor capacity catalogue (``KNEECAP_PROCESSORS``, default the bundled one)."""
    return Path(os.environ.get("KNEECAP_PROCESSORS", ROOT / "data" / "reference" / "processor_capacity.yaml"))


@st.cache_resource
def processor_catalogue() -> processors.Catalogue:
    """The published one-CP capacities of the processor-change what-if (:func:`kneecap.processors.read_catalogue`)."""
    return processors.read_catalogue(processors_path())


def factors_path() -> Path:
    """Path of the factor catalogue (``KNEECAP_FACTORS``, default ``<root>/data/reference/factors.csv``)."""
    return Path(os.environ.get("KNEECAP_FACTORS", ROOT / "data" / "reference" / "factors.csv"))


@st.cache_data(ttl=300)
def factor_catalogue() -> dict[str, factors.Factor]:
    """The factor catalogue (raises :class:`kneecap.factors.FactorError` when it is broken)."""
    return factors.read_catalogue(factors_path())


def catalogue_table() -> pd.DataFrame:
    """The factor catalogue as a table, with whether each factor can be applied and why not."""
    return factors.catalogue_frame(factor_catalogue())


def _selection(factor_id: str, share: float) -> list[dict[str, Any]]:
    return [{"id": factor_id, "share": share}]


@st.cache_data(max_entries=128)
def factor_forecast(workload: str, key: str, clients: float, n_gcp: int, n_ziip: int, think_time_ms: float,
                    slo_resp_ms: float, factor_id: str, share: float) -> dict[str, Any]:
    """One scenario answered with and without the factor (``kneecap forecast``'s row)."""
    scenario = {"workload": workload, "clients": clients, "n_gcp": n_gcp, "n_ziip": n_ziip,
                "think_time_ms": think_time_ms, "slo_resp_ms": slo_resp_ms, "factors": _selection(factor_id, share)}
    return forecasting.forecast_scenario(models(workload, key), scenario, policy(), factor_catalogue())


@st.cache_data(max_entries=64)
def factor_curves(workload: str, key: str, n_gcp: int, n_ziip: int, think_time_ms: float, max_clients: int,
                  factor_id: str, share: float) -> pd.DataFrame:
    """Response curves without and with the factor, stacked, with column ``cost`` naming each."""
    base = models(workload, key)
    adjusted, _ = forecasting.factor_models(base, _selection(factor_id, share), factor_catalogue())
    frames = [forecasting.response_curve(m.response, n_gcp=n_gcp, n_ziip=n_ziip, think_time_ms=think_time_ms,
                                         max_load=max_clients, points=60).assign(cost=label)
              for m, label in ((base, "unadjusted"), (adjusted, f"with {factor_id}"))]
    return pd.concat(frames, ignore_index=True)
