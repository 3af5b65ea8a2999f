"""Everything the pages need from kneecap, cached. The only module with st.cache_* in the app.

Where things are: the project root is the folder above ``app/``; ``KNEECAP_MARTS`` overrides the
published marts folder (default ``<root>/data/processed``), ``KNEECAP_PARAMS`` the params file,
``MLFLOW_TRACKING_URI`` the tracking store (default ``sqlite:///<root>/mlflow.db``) and
``KNEECAP_REPORTS`` the DVC reports folder (default ``<root>/reports``) and ``KNEECAP_FACTORS`` the
factor catalogue (default ``<root>/data/reference/factors.csv``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from kneecap import (
    backtest,
    config,
    csvsafe,
    factors,
    forecasting,
    measured_fit,
    modeling,
    msu,
    msu_answer,
    policies,
    schema,
    tracking,
    upload,
    warehouse,
    workloads,
)
from kneecap.report import figures  # noqa: F401 - the desk's charts' shared pieces (app/charts.py)
from kneecap.report.words import metric_label

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


def opening_workload(workloads: list[str], key: str) -> int:
    """The index of the workload the page's choice ``key`` opens on (params.yaml ``desk.default_workload``).

    Where the page does not list it, the first; while the choice is at that opening value (the
    page has just opened) a caption says why.
    """
    index, note = params().desk.opening_choice(workloads)
    if note and key not in st.session_state:
        st.caption(note)
    return index


@st.cache_resource(ttl=300)
def models(workload: str, version_key: str = "") -> forecasting.WorkloadModels:
    """The workload's champions (``version_key`` changes when a new champion is promoted).

    A model registered without a champion (not promoted yet, or retired) is left out.
    """
    _tracking()
    found = tracking.load_champions(workload, skip_unpromoted=True)
    return forecasting.WorkloadModels(workload, found.get("response"), found.get("cost"))


def widget_key(name: str, workload: str) -> str:
    """The key of a page's input for one workload: ``<name>@<workload>``.

    Every input that shapes an answer is keyed by its workload. Forgetting a shared key's value in
    the session is not enough when the workload changes: the browser keeps showing (and sends back
    on the next step of any other input) the value it last had, so the page would show one
    configuration and answer for another. A new key is a new widget, started from the new
    workload's measured configuration; a workload left and chosen again starts afresh, as Streamlit
    forgets the widgets a run did not draw.
    """
    return f"{name}@{workload}"


def follow_workload(page: str, workload: str) -> None:
    """When the page's workload changes, forget the inputs the page had for the previous one.

    Coming back to a workload then starts again from its measured configuration (keys by
    :func:`widget_key`, each starting with ``<page>_``), as a switch to it the first time does.
    """
    marker = f"{page}__workload"
    previous = st.session_state.get(marker)
    if previous not in (None, workload):
        stale = [k for k in st.session_state
                 if isinstance(k, str) and k.startswith(f"{page}_") and k.endswith(f"@{previous}")]
        for k in stale:
            del st.session_state[k]
    st.session_state[marker] = workload


def _plural(n: float, word: str) -> str:
    return f"{n:g} {word}{'' if n == 1 else 's'}"


def configuration_words(n_gcp: float, n_ziip: float | None = None, think_time_ms: float | None = None,
                        other_load: float | None = None) -> str:
    """The machine an answer is for, as its first words: ``'3 GCPs + 1 zIIP, think time 100 ms'``.

    ``n_ziip`` None leaves the zIIPs out (the planner's answer chooses them); ``other_load``: a WLM
    class's other classes' load factor (``"other classes' load x1"``, 1: as measured).
    """
    words = _plural(n_gcp, "GCP") + ("" if n_ziip is None else f" + {_plural(n_ziip, 'zIIP')}")
    if think_time_ms is not None:
        words += f", think time {think_time_ms:g} ms"
    if other_load is not None:
        words += f", other classes' load x{other_load:g}"
    return words


def champion_key(workload: str) -> str:
    """The workload's champion names and versions as one string; it changes when a champion does."""
    return tracking.champion_key(registered(), workload)


def response_model(workload: str) -> Any:
    """The workload's champion response model."""
    return models(workload, champion_key(workload)).response


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


def observed_knee(points: pd.DataFrame) -> dict[str, float] | None:
    """The Kneedle knee of one configuration's measured points (:func:`kneecap.measured_fit.observed_knee_point`)."""
    return measured_fit.observed_knee_point(points)


# Bands and knee intervals from every bootstrap draw (the library's default), so the desk shows the
# intervals the registered metrics and `kneecap forecast` print.
@st.cache_data(max_entries=256)
def curve(workload: str, key: str, n_gcp: int, n_ziip: int, think_time_ms: float, max_clients: int) -> pd.DataFrame:
    """The response curve (with band) of a closed workload up to ``max_clients``, in one configuration."""
    return forecasting.response_curve(models(workload, key).response, n_gcp=n_gcp, n_ziip=n_ziip,
                                      think_time_ms=think_time_ms, max_load=max_clients, points=80)


@st.cache_data(max_entries=256)
def knee(workload: str, key: str, n_gcp: int, n_ziip: int, think_time_ms: float, solve_to: int = 0) -> dict[str, Any]:
    """The knee in clients with its interval, in one configuration (:func:`kneecap.forecasting.knee`).

    ``solve_to``: the clients the page's curve goes up to, so that the curve reuses the knee's solve.
    """
    return forecasting.knee(models(workload, key).response, n_gcp=n_gcp, n_ziip=n_ziip,
                            think_time_ms=think_time_ms, k=policy().knee_k, solve_to=solve_to)


@st.cache_data(max_entries=256)
def structure_knees(workload: str, key: str, n_gcp: int, n_ziip: int, think_time_ms: float) -> dict[str, Any]:
    """The knees of the dispatcher structures the champion draws (:func:`kneecap.forecasting.structure_knees`)."""
    return forecasting.structure_knees(models(workload, key).response, n_gcp=n_gcp, n_ziip=n_ziip,
                                       think_time_ms=think_time_ms, k=policy().knee_k)


@st.cache_data(max_entries=256)
def point(workload: str, key: str, clients: float, n_gcp: int, n_ziip: int, think_time_ms: float) -> dict[str, float]:
    """The prediction at one number of clients and configuration, as a flat dict."""
    pred = models(workload, key).response.predict(pd.DataFrame([{
        "clients": clients, "n_gcp": n_gcp, "n_ziip": n_ziip, "think_time_ms": think_time_ms}]))
    return {k: float(v) for k, v in pred.iloc[0].items()}


def _plan_answer(result: modeling.ZiipPlan, slo_resp_ms: float, policy: modeling.PlannerPolicy) -> dict[str, Any]:
    # each row's verdict in words beside the rule names, so a rejected mix says why
    table = result.table.assign(verdict=modeling.ziip.mix_verdicts(result.table, slo_resp_ms, policy))
    return {"n_ziip": result.n_ziip, "n_gcp": result.n_gcp_recommended, "reason": result.reason,
            "binding_rule": result.binding_rule, "binding_sentence": result.binding_sentence,
            "margin_ms": result.margin_ms, "table": table}


@st.cache_data(max_entries=128)
def plan(workload: str, key: str, clients: float, think_time_ms: float, n_gcp: int, slo_resp_ms: float,
         policy: modeling.PlannerPolicy) -> dict[str, Any]:
    """The cheapest zIIP / GCP mix that meets the SLO for a closed workload, with the table of candidates."""
    result = modeling.plan_ziip(models(workload, key).response, clients=clients, think_time_ms=think_time_ms,
                                n_gcp=n_gcp, slo_resp_ms=slo_resp_ms, policy=policy)
    return _plan_answer(result, slo_resp_ms, policy)


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

def is_class_model(model: Any) -> bool:
    """True for a WLM class's response model (:func:`kneecap.measured_fit.is_class_model`)."""
    return measured_fit.is_class_model(model)


def class_workloads() -> list[str]:
    """Workloads whose response champion is an open dispatch model (SMF / RMF classes)."""
    return [w for w in workloads_with("response") if is_class_model(response_model(w))]


def provenance(workload: str) -> pd.DataFrame:
    """Where a class's intervals came from, one row per system and source (:func:`kneecap.measured_fit.provenance`)."""
    return measured_fit.provenance(measured_points(workload))


def _lpar(n_gcp: int, n_ziip: int, bg_load_factor: float) -> dict[str, float]:
    return {"n_gcp": int(n_gcp), "n_ziip": int(n_ziip), "bg_load_factor": float(bg_load_factor)}


@st.cache_data(max_entries=256)
def class_curve(workload: str, key: str, n_gcp: int, n_ziip: int, bg_load_factor: float,
                max_tps: float) -> pd.DataFrame:
    """The class's response (with band) and pool busy on an even tps grid up to ``max_tps``."""
    return models(workload, key).response.curve(points=80, max_load=float(max_tps),
                                                **_lpar(n_gcp, n_ziip, bg_load_factor))


@st.cache_data(max_entries=256)
def class_knee(workload: str, key: str, n_gcp: int, n_ziip: int, bg_load_factor: float) -> dict[str, Any]:
    """The class's knee in tps with its interval (raises ModelError when the other classes fill a pool)."""
    return models(workload, key).response.knee(k=policy().knee_k, **_lpar(n_gcp, n_ziip, bg_load_factor))


@st.cache_data(max_entries=256)
def class_point(workload: str, key: str, tps: float, n_gcp: int, n_ziip: int,
                bg_load_factor: float) -> dict[str, float]:
    """The class's prediction at one tps and LPAR, as a flat dict."""
    pred = models(workload, key).response.predict(pd.DataFrame([{"tps": float(tps),
                                                                  **_lpar(n_gcp, n_ziip, bg_load_factor)}]))
    return {k: float(v) for k, v in pred.iloc[0].items()}


@st.cache_data(max_entries=128)
def class_plan(workload: str, key: str, tps: float, n_gcp: int, slo_resp_ms: float, bg_load_factor: float,
               policy: modeling.PlannerPolicy) -> dict[str, Any]:
    """The cheapest zIIP / GCP mix that meets the SLO for a WLM class at ``tps``, with the table of candidates."""
    result = modeling.plan_ziip(models(workload, key).response, tps=float(tps), n_gcp=int(n_gcp),
                                slo_resp_ms=slo_resp_ms, policy=policy, lpar={"bg_load_factor": float(bg_load_factor)})
    return _plan_answer(result, slo_resp_ms, policy)


@st.cache_data(max_entries=128)
def class_slo_tps(workload: str, key: str, slo_resp_ms: float, n_gcp: int, n_ziip: int,
                  bg_load_factor: float) -> float:
    """The class tps at which the predicted response reaches the SLO (NaN: unreachable)."""
    return forecasting.slo_tps(models(workload, key).response, slo_resp_ms,
                               lpar=_lpar(n_gcp, n_ziip, bg_load_factor))


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
    """A registered model's name as ``kneecap models`` lists it (:func:`kneecap.tracking.listed_name`)."""
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


def parse_workload_name(text: str) -> workloads.WorkloadName:
    """A Communications Server workload name parsed (:func:`kneecap.workloads.parse_workload_name`)."""
    return workloads.parse_workload_name(text)


def lpar_cost_ms(lpar_util_pct: float, n_cp: int, interval_s: float, transactions: float) -> float:
    """CPU ms per transaction from LPAR busy, engines, interval and transactions, as the report computes it."""
    return workloads.cpu_ms_per_tran_from_lpar(lpar_util_pct, n_cp, interval_s, transactions)


# --- Labels and rounding: what a person reads instead of column names --------------------------

#: A column's label with its unit, for every column the desk's tables show. The CSV downloads keep
#: the column names (they are the project's contract); the tables on the page show these.
COLUMN_LABELS: dict[str, str] = {
    # dim_workloads
    "workload": "workload", "source_ids": "sources", "n_points": "points", "n_with_clients": "with clients",
    "n_with_resp": "with response", "n_with_cost": "with CPU cost", "min_clients": "min clients",
    "max_clients": "max clients", "min_n_ziip": "min zIIPs", "max_n_ziip": "max zIIPs",
    "has_response_curve": "response curve", "has_cost": "cost model", "workload_kind": "kind",
    # fct_measurements
    "source_id": "source", "point_id": "point", "clients": "clients", "think_time_ms": "think time (ms)",
    "tps": "throughput (tps)", "resp_ms": "response (ms)", "n_gcp": "GCPs", "n_ziip": "zIIPs",
    "cpu_total_pct": "CPU, all engines (APPL %)", "cpu_gcp_pct": "CPU on GCPs (APPL %)",
    "cpu_ziip_pct": "CPU on zIIPs (APPL %)", "ziip_eligible_pct": "zIIP-eligible CPU (APPL %)",
    "ziip_eligible_on_gcp_pct": "eligible CPU on GCPs (IIPCP, APPL %)", "cpu_s": "CPU (s)",
    "cpu_ms_per_tran": "CPU per transaction (ms)", "req_bytes": "request (bytes)", "resp_bytes": "response (bytes)",
    "interval_s": "interval (s)", "n_queues": "queues", "system_id": "system", "service_class": "WLM class",
    "source_file": "source file", "source_locator": "where in the source", "duplicate_of": "duplicate of",
    "source_line": "line", "interval_start_at": "interval start", "lpar_gcp_busy_pct": "LPAR busy per GCP (%)",
    "lpar_ziip_busy_pct": "LPAR busy per zIIP (%)", "cpu_using_samples": "GCP using samples",
    "cpu_delay_samples": "GCP delay samples", "ziip_using_samples": "zIIP using samples",
    "ziip_on_cp_using_samples": "eligible on GCP using samples", "ziip_delay_samples": "zIIP delay samples",
    # residuals and provenance
    "target": "measure", "measured": "measured", "fitted": "fitted", "lo": "95% band low", "hi": "95% band high",
    "residual_pct": "residual (%)", "bg_gcp_busy_pct": "other classes per GCP (%)",
    "bg_ziip_busy_pct": "other classes per zIIP (%)", "intervals": "intervals",
    "first_interval_start": "first interval", "last_interval_start": "last interval", "days": "days",
    # backtest, competitors, forecaster candidates
    "case": "case", "model": "model", "mape_pct": "held-out error (MAPE %)", "goal_pct": "goal (MAPE %)",
    "meets_goal": "meets goal", "questions_ok": "questions answered", "family": "family",
    "loo_mape_pct": "leave-one-out error (MAPE %)", "method": "method",
    "rolling_origin_mape_pct": "rolling-origin error (MAPE %)", "chosen": "chosen",
    # the zIIP plan
    "resp_ms_lo": "95% band low (ms)", "resp_ms_hi": "95% band high (ms)", "ziip_busy_pct": "zIIP busy (%)",
    "gcp_busy_pct": "GCP busy (%)", "ziip_eligible_on_gcp_share_pct": "eligible work on GCPs (%)",
    "meets_slo": "meets SLO", "meets_policy": "meets policy", "failed_rules": "fails", "verdict": "why",
    "band": "95% band (ms)",
    # the registry and the Data page
    "name": "registered model", "version": "version", "aliases": "aliases", "run_id": "run",
    "created_at": "registered at", "note": "note", "weight": "weight", "table": "table", "rows": "rows",
    "line": "line", "column": "column", "value": "value", "problem": "problem", "rule": "rule",
    "reason": "reason", "file": "file", "measure": "measure",
    # the factor catalogue and the workload-name parser
    "factor_id": "id", "factor": "factor", "effect": "effect", "qualifier": "qualifier", "base_value": "compared with",
    "unit": "unit", "apply_as": "applied as", "cpu_on": "CPU on", "status": "status", "applicable": "applicable",
    "why_not": "why not", "section": "section", "table_or_figure": "table or figure", "pattern": "pattern",
    "meaning": "meaning", "connect_per_tran": "connects per transaction",
}

def column_label(name: str) -> str:
    """A table column's label with its unit (:data:`COLUMN_LABELS`, else the metric rule).

    The registry's ``metric.<name>`` columns read as their metric.
    """
    if name.startswith("metric."):
        return metric_label(name[len("metric."):])
    return COLUMN_LABELS.get(name) or metric_label(name)


def significant(value: float, digits: int = 4) -> float:
    """``value`` rounded to ``digits`` significant digits (869.5603 -> 869.6; 0.000123456 -> 0.0001235)."""
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value == 0:
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def decimals(frame: pd.DataFrame, digits: int = 3, most: int = 4) -> dict[str, int]:
    """Per float column, the decimals that give its smallest non-zero value ``digits`` significant digits.

    At most ``most``: a residual of 0.00003 % needs no more than 0.0000. None for whole numbers
    (clients, engines): 50, not 50.00.
    """
    out = {}
    for column in frame.select_dtypes("float").columns:
        sizes = frame[column].abs().replace(float("inf"), float("nan"))
        low = sizes[sizes > 0].min()
        whole = bool((sizes.dropna() % 1 == 0).all())
        out[column] = 0 if whole or low != low else min(most, max(0, digits - 1 - math.floor(math.log10(low))))
    return out


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each float column rounded to :func:`decimals`.

    One number of decimals per column, so a column's values line up and compare.
    """
    return frame.round(decimals(frame))


def text_widths(frame: pd.DataFrame, columns: list[str], most: int = 20) -> dict[str, int]:
    """Pixels for each column of short words in ``columns`` (at most ``most`` characters): its longest.

    The grid sizes such a column by its label and cut ``open_dispatch`` to ``open_dispa``; longer
    text (names, timestamps) it sizes well itself.
    """
    out = {}
    for c in columns:
        if c in frame and (frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])):
            longest = max([len(column_label(str(c))), *(len(str(v)) for v in frame[c].dropna())])
            if longest <= most:
                out[c] = 18 + 7 * longest
    return out


def column_config(columns, places: dict[str, int] | None = None, times: Iterable[str] = (),
                  widths: dict[str, int] | None = None) -> dict[str, Any]:
    """Labels (and the schema's meaning as help) for the columns of a table on the page.

    ``places``: decimals to print per numeric column (:func:`decimals`), so that 1 prints as 1.000
    beside 0.994; ``times``: timestamp columns, printed to the minute (RMF intervals start on one);
    ``widths``: pixels of text columns (:func:`text_widths`).
    """
    widths = widths or {}
    meanings = {**schema.NUMERIC_COLUMNS, **schema.FACTOR_COLUMNS, **schema.LPAR_COLUMNS, **schema.SAMPLE_COLUMNS}
    places = places or {}
    config = {}
    for c in columns:
        label, meaning = column_label(str(c)), meanings.get(str(c))
        if c in times:
            config[c] = st.column_config.DatetimeColumn(label, help=meaning, format="YYYY-MM-DD HH:mm")
        elif c in places:
            config[c] = st.column_config.NumberColumn(label, help=meaning, format=f"%.{places[c]}f")
        else:  # the sentences get the room; the rest keep their natural width
            config[c] = st.column_config.Column(label, help=meaning, width="large" if c in (
                "verdict", "note", "problem", "reason") else widths.get(c))
    return config


def metrics_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Registered metrics (``metric``, ``value``) as ``measure`` (words and unit) and ``value`` (4 digits)."""
    return pd.DataFrame({"metric": metrics["metric"], "measure": [metric_label(m) for m in metrics["metric"]],
                         "value": [significant(float(v)) for v in metrics["value"]]})


#: The columns a planner reads in the desk's wide tables, in this order; the rest stay in the CSV
#: download. A laptop's browser (1280-1440 px) leaves a table 780-1000 px beside the sidebar.
WORKLOAD_COLUMNS = ["workload", "workload_kind", "n_points", "min_clients", "max_clients", "n_gcp", "min_n_ziip",
                    "max_n_ziip"]
#: a table of runs names its points; RMF intervals are known by their start, and the LPAR's busy
#: says how much room the other classes left
RUN_COLUMNS = ["point_id", "source_id", "clients", "think_time_ms", "tps", "resp_ms", "cpu_ms_per_tran", "n_gcp",
               "n_ziip"]
INTERVAL_COLUMNS = ["interval_start_at", "system_id", "source_id", "tps", "resp_ms", "n_gcp", "n_ziip",
                    "lpar_gcp_busy_pct", "lpar_ziip_busy_pct"]
RESIDUAL_COLUMNS = ["point_id", "interval_start_at", "clients", "tps", "think_time_ms", "n_gcp", "n_ziip",
                    "measured", "fitted", "lo", "hi", "residual_pct"]
BACKTEST_COLUMNS = ["case", "model", "target", "mape_pct", "goal_pct", "meets_goal"]
MODEL_COLUMNS = ["name", "version", "aliases", "metric.train_mape_resp_ms", "metric.knee_k_clients", "metric.knee_tps"]
#: columns the page says above the table when they hold one value (the summary line names the
#: sources, the provenance line the system)
SAID_ABOVE = ("system_id", "source_id")


def planner_columns(frame: pd.DataFrame, wanted: list[str]) -> list[str]:
    """The columns of ``wanted`` that hold a value in ``frame``, in ``wanted``'s order.

    Leaves out a :data:`SAID_ABOVE` column with one value throughout, and a point's id where its
    interval start names it.
    """
    shown = [c for c in wanted if c in frame and frame[c].notna().any()]
    if "interval_start_at" in shown and "point_id" in shown:
        shown.remove("point_id")
    return [c for c in shown if c not in SAID_ABOVE or frame[c].nunique(dropna=False) > 1]


def point_columns(points: pd.DataFrame) -> list[str]:
    """:func:`planner_columns` of a workload's measured points: RMF intervals' or a table of runs'."""
    intervals = "interval_start_at" in points and points["interval_start_at"].notna().any()
    return planner_columns(points, INTERVAL_COLUMNS if intervals else RUN_COLUMNS)


def show_table(frame: pd.DataFrame, key: str, columns: list[str] | None = None, rounded: bool = True) -> None:
    """A table on the page: labelled columns with units, numbers rounded (:func:`readable`).

    ``columns``: those shown (default all); ``rounded`` False shows the numbers as they were read
    (an upload's cells).
    """
    shown = list(frame.columns) if columns is None else [c for c in columns if c in frame]
    places = decimals(frame) if rounded else {}
    st.dataframe(frame.round(places) if rounded else frame, hide_index=True, key=key, column_order=shown,
                 column_config=column_config(shown, places, frame.select_dtypes("datetime").columns,
                                             text_widths(frame, shown)),
                 placeholder="-")


def show_text_table(frame: pd.DataFrame, columns: list[str] | None = None) -> None:
    """A short table whose sentences wrap (st.table), labelled and rounded as :func:`show_table`'s."""
    shown = readable(frame[columns] if columns else frame)
    for column in shown.select_dtypes("bool").columns:
        shown[column] = shown[column].map({True: "yes", False: ""})
    # text throughout: a number column with a dash for a missing value is not a number column to
    # Arrow; an en dash, as st.table reads a cell's '-' as a Markdown list item
    shown = shown.astype(str).where(shown.notna(), "\u2013").rename(columns=lambda c: column_label(str(c)))
    st.table(shown, hide_index=True)


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV for a download, formula-like text cells neutralised (:mod:`kneecap.csvsafe`)."""
    return csvsafe.neutralise_frame(frame).to_csv(index=False)
