"""A small published project in a temp dir, built with the pipeline's own code: marts from the
bundled reference tables plus a synthetic SMF week (72.3 for service class ZCONHI, with its
measured Performance Index, and report class RZCON, 70.1 for the LPAR; tests/smf/synth.py), their
validation report, a backtest report from two
bundled cases, a SQLite MLflow registry with champions fitted on seed 004 (and a second, unpromoted
version), an own table added as a user adds one (``kneecap add-table``: 3 GCPs + 1 zIIP, think time
100 ms, so the desk has two closed workloads measured on different machines) with its champion,
open dispatch champions for ZCONHI and for a second class on another LPAR (ZCONSIM on SYSC, 4 GCPs +
3 zIIPs, from the dispatcher simulation's days of tests/smf/simdays.py), and the env vars that point
the app at all of it."""

from __future__ import annotations

import base64
import importlib
import io
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap import config, tracking, training, warehouse
from kneecap.modeling import ClosedMVAModel, ClosedMVAResults, CostModel
from kneecap.modeling.open_dispatch import OpenDispatchModel
from kneecap.modeling.select import extrapolation_spread
from kneecap.smf.reader import decode_file
from kneecap.tables import add_table
from tests.bundled import bundled_reference
from tests.stages import load_stage

REPO = Path(__file__).resolve().parents[2]
DIAG = "zosconnect_cics_diag"
SEED004_TABLE1 = "seed004_table1"  # 100-500 clients, 2 GCP, 2 zIIP, Z = 200 ms
COST_WORKLOAD = "zosconnect_apireq_v3_baqr"
BACKTEST_CASES = ("comm_stub_payload", "mq_console_vs_rest")  # the two that run in well under a second
COMBINED_WORKLOAD = "specsdm91_loadtest"  # a registered combination of model families (no champion)
SMF_CLASS = "ZCONHI"  # service class of the synthetic SMF week (2 GCP + 2 zIIP, system SYSA)
SMF_DAYS = 7  # 672 fifteen-minute intervals: enough daily peaks for a growth forecast
#: a second WLM class on another LPAR (tests/smf/simdays.py's variant pool_4g3z: 4 GCPs + 3 zIIPs,
#: heavier background), so that switching classes changes every input the desk starts from
SMF_CLASS_2 = "ZCONSIM"
SMF_CLASS_2_SYSTEM = "SYSC"
SMF_CLASS_2_VARIANT = "pool_4g3z"
SMF_CLASS_2_LPAR = {"n_gcp": 4, "n_ziip": 3}
OWN_WORKLOAD = "mylpar_api"  # an own load test on another LPAR than seed 004's
OWN_CONFIG = {"n_gcp": 3, "n_ziip": 1, "think_time_ms": 100.0}
OWN_RESP_MS = {50: 1.1, 100: 1.25, 150: 1.6, 200: 2.6, 250: 5.2}  # bends near 200 clients


def own_table() -> str:
    """The own load test as a planner types it: workload, clients, tps, resp_ms (tps by Little's law)."""
    z = OWN_CONFIG["think_time_ms"]
    rows = [f"{OWN_WORKLOAD},{n},{n / ((r + z) / 1000.0):.1f},{r}" for n, r in OWN_RESP_MS.items()]
    return "workload,clients,tps,resp_ms\n" + "\n".join(rows) + "\n"


def smf_week() -> dict[str, object]:
    """The synthetic week's SMF 70.1 / 72.3 records decoded by kneecap's reader."""
    sys.path.insert(0, str(REPO / "tests" / "smf"))
    try:
        import synth
    finally:
        sys.path.remove(str(REPO / "tests" / "smf"))
    records, _ = synth.week_of_intervals(days=SMF_DAYS)
    decoded = decode_file(io.BytesIO(synth.frame_rdw(records)))
    return {"smf70_cpu": decoded.smf70_cpu, "smf72_workload": decoded.smf72_workload,
            "smf70_capacity": decoded.tables["smf70_capacity"]}


def smf_second_lpar() -> dict[str, object]:
    """A week of the simulated class ZCONSIM on system SYSC (4 GCPs + 3 zIIPs), decoded by kneecap's reader.

    The dispatcher simulation's days (tests/smf/simdays.py, grid committed), with the background
    class BATCHBG beside it as RMF reports it.
    """
    from tests.smf import simdays, synth

    records, _ = simdays.variant_days(SMF_CLASS_2_VARIANT, seed=5, days=SMF_DAYS, system_id=SMF_CLASS_2_SYSTEM)
    decoded = decode_file(io.BytesIO(synth.frame_rdw(records)))
    return {"smf70_cpu": decoded.smf70_cpu, "smf72_workload": decoded.smf72_workload,
            "smf70_capacity": decoded.tables["smf70_capacity"]}


def smf_dumps() -> dict[str, object]:
    """Both LPARs' SMF tables, as one ingest of both dumps would hold them."""
    week, second = smf_week(), smf_second_lpar()
    return {name: pd.concat([week[name], second[name]], ignore_index=True) for name in week}


def _closed_champion(rows: pd.DataFrame, knee_k: float) -> tuple[ClosedMVAResults, dict[str, float]]:
    """A closed MVA fit of ``rows`` (20 bootstrap draws) and the metrics the train stage logs with it."""
    model = ClosedMVAModel(n_boot=20, seed=1).fit(rows)
    # as the train stage's model choice does: the band widens past the data by the error the
    # model's own rolling-origin refits made
    model.extrapolation_spread = extrapolation_spread(rows, lambda: ClosedMVAModel(n_boot=0), "clients",
                                                      ("resp_ms", "tps"))
    metrics = {f"train_mape_{k}": v for k, v in model.train_mape.items()}
    metrics.update(model.fit_report(rows, knee_k=knee_k).metrics)
    return model, metrics


def _register_class(intervals: pd.DataFrame, smf_class: str, knee_k: float) -> None:
    """The open dispatch model of one class's intervals (20 bootstrap draws), registered and promoted."""
    opened = OpenDispatchModel(n_boot=20, seed=1).fit(intervals)
    metrics = {f"train_mape_{k}": v for k, v in opened.train_mape.items()}
    metrics.update(opened.fit_report(intervals, knee_k=knee_k).metrics)
    name = tracking.model_name(smf_class, "response")
    tracking.log_model(opened, name=name, params={"n_boot": 20, "seed": 1, "family": opened.family}, metrics=metrics)
    tracking.promote(name)


def build_project(root: Path) -> dict[str, str]:
    """Build the project under ``root``; returns the env vars that point the app at it."""
    # params.yaml as shipped, with fewer bootstrap refits so the fixture stays quick
    params_path = root / "params.yaml"
    params_path.write_text((REPO / "params.yaml").read_text(encoding="utf-8").replace("n_boot: 200", "n_boot: 20"),
                           encoding="utf-8")
    params = config.load_params(params_path)

    # the bundled reference tables plus an own one, added as `kneecap add-table` adds it
    reference = bundled_reference(root / "reference")
    own_csv = root / f"{OWN_WORKLOAD}.csv"
    own_csv.write_text(own_table(), encoding="utf-8")
    added = add_table(own_csv, reference, title="in-house load test, LPAR SYSB", fill=OWN_CONFIG,
                             sql_root=REPO / "pipelines" / "sql")
    assert added.check.ok, added.check.problems
    measurements, sources = warehouse.read_reference_dir(reference)
    tables = warehouse.build_marts(measurements, sources, smf_dumps(), sql_root=REPO / "pipelines" / "sql")
    marts = root / "processed"
    # fct_performance_index: the measured PI of the SMF week's class periods (the capacity report shows it),
    # fct_sysplex_performance_index its sysplex PI (each class runs on one system here: the same PI)
    # fct_msu_intervals: the LPARs' MSU and SMF70LAC (the MSU cost page prices the classes with it)
    # fct_rt_buckets: the 72.3 response time buckets (the goal chart's measured percentiles)
    published = {k: tables[k] for k in ("fct_measurements", "dim_workloads", "dim_sources", "fct_performance_index",
                                         "fct_sysplex_performance_index", "fct_msu_intervals",
                                         "fct_rt_buckets")}
    warehouse.write_tables(published, marts)

    reports = root / "reports"
    from kneecap.validation import validate_tables

    (reports / "validation").mkdir(parents=True)
    (reports / "validation" / "marts.json").write_text(
        json.dumps(validate_tables(published, params.validate).to_dict()), encoding="utf-8")
    cases = root / "backtest"
    for case in BACKTEST_CASES:
        shutil.copytree(REPO / "data" / "backtest" / case, cases / case)
    assert load_stage("evaluate").main(["--cases", str(cases), "--out", str(reports / "metrics" / "backtest.json"),
                                        "--params", str(params_path)]) == 0

    env = {"KNEECAP_MARTS": str(marts), "MLFLOW_TRACKING_URI": f"sqlite:///{root / 'mlflow.db'}",
           "KNEECAP_PARAMS": str(params_path), "KNEECAP_REPORTS": str(reports),
           "MLFLOW_DISABLE_TELEMETRY": "true"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        tracking.configure(env["MLFLOW_TRACKING_URI"], project_dir=root)
        fct = tables["fct_measurements"]
        table1 = fct[fct["source_id"] == SEED004_TABLE1]
        response, metrics = _closed_champion(table1, params.train.knee_k)
        name = tracking.model_name(DIAG, "response")
        # version 1 becomes champion; version 2 (same fit, another run) is there to be promoted in the UI
        for version in (1, 2):
            tracking.log_model(response, name=name, params={"n_boot": 20, "seed": 1}, metrics=metrics,
                               tags={"kneecap.test_version": str(version)})
            if version == 1:
                tracking.promote(name)
        own = fct[fct["workload"] == OWN_WORKLOAD].reset_index(drop=True)
        own_model, own_metrics = _closed_champion(own, params.train.knee_k)
        own_name = tracking.model_name(OWN_WORKLOAD, "response")
        tracking.log_model(own_model, name=own_name, params={"n_boot": 20, "seed": 1}, metrics=own_metrics)
        tracking.promote(own_name)
        stub = fct[fct["workload"] == COST_WORKLOAD]
        cost = CostModel().fit(stub)
        cname = tracking.model_name(COST_WORKLOAD, "cost")
        tracking.log_model(cost, name=cname, params={}, metrics={"loo_mape_pct": cost.loo_mape_pct},
                           tables={"competitors": cost.competitors})
        tracking.promote(cname)
        # the SMF classes: the open dispatch model on each one's RMF intervals, registered as the train stage does
        # with their 72.3 response time buckets beside the intervals, as the train stage joins them
        buckets = training.with_rt_buckets(fct, tables["fct_rt_buckets"], tables["fct_performance_index"])
        for smf_class in (SMF_CLASS, SMF_CLASS_2):
            _register_class(buckets[buckets["workload"] == smf_class].reset_index(drop=True), smf_class,
                            params.train.knee_k)
        # a zero-think load test (SPEC SDM91, R usl's data set) fitted as the train stage fits it: a
        # combination of the USL and closed MVA with c servers; registered, not promoted
        sdm91 = pd.read_csv(REPO / "data" / "backtest" / "usl_specsdm91" / "measurements.csv")
        sdm91 = sdm91.assign(resp_ms=sdm91["clients"] / sdm91["tps"] * 1000.0)
        (combined,) = [m for m in training.train_workload(COMBINED_WORKLOAD, sdm91, params)
                       if m.kind == training.RESPONSE]
        tracking.log_model(combined.results, name=tracking.model_name(COMBINED_WORKLOAD, "response"),
                           params=combined.params, metrics=combined.metrics,
                           tables={"competitors": combined.competitors}, tags={"family": combined.family})
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return env


@pytest.fixture
def app_env(app_project: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    import streamlit as st

    for k, v in app_project.items():
        monkeypatch.setenv(k, v)
    st.cache_data.clear()
    st.cache_resource.clear()
    return app_project


def plotly_values(data) -> list:
    """A plotly trace's x or y: a list, or numpy's typed-array encoding (``{"dtype", "bdata"}``)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).tolist()
    return list(data)


def app_module(name: str):
    """One of the desk's ``app/`` modules (``resources``, ``tables``, ``inputs``), imported as the pages import it."""
    sys.path.insert(0, str(REPO / "app"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(REPO / "app"))


def app_resources():
    """The desk's ``app/resources.py`` module, imported as the pages import it."""
    return app_module("resources")


def widget_key(name: str, workload: str) -> str:
    """A desk input's key for one workload, as the pages key them (app/inputs.widget_key)."""
    return app_module("inputs").widget_key(name, workload)
