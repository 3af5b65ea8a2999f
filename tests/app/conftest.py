"""A small published project in a temp dir: marts from the bundled tables, a SQLite MLflow registry
with champions fitted on seed 004, and the env vars that point the app at them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kneecap import tracking, warehouse
from kneecap.modeling import ClosedMVAModel, CostModel
from kneecap.smf.tables import DECODED_TABLES

REPO = Path(__file__).resolve().parents[2]


def build_project(root: Path) -> dict[str, str]:
    measurements, sources = warehouse.read_reference_dir(REPO / "data" / "reference")
    inputs = {"reference_measurements": measurements, "reference_sources": sources,
              **{name: empty() for name, empty in DECODED_TABLES.items()}}
    tables = warehouse.run_sql_files(warehouse.sql_files(REPO / "pipelines" / "sql"), inputs)
    marts = root / "processed"
    warehouse.write_tables({k: tables[k] for k in ("fct_measurements", "dim_workloads", "dim_sources")}, marts)
    env = {"KNEECAP_MARTS": str(marts), "MLFLOW_TRACKING_URI": f"sqlite:///{root / 'mlflow.db'}",
           "KNEECAP_PARAMS": str(REPO / "params.yaml")}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        tracking.configure(env["MLFLOW_TRACKING_URI"], project_dir=root)
        fct = tables["fct_measurements"]
        diag = fct[fct["workload"] == "zosconnect_cics_diag"]
        response = ClosedMVAModel(n_boot=20, seed=1).fit(diag)
        name = tracking.model_name("zosconnect_cics_diag", "response")
        tracking.log_model(response, name=name, params={"n_boot": 20}, metrics={"train_mape_resp_ms": 1.0})
        tracking.promote(name)
        stub = fct[fct["workload"] == "zosconnect_apireq_v3_baqr"]
        cost = CostModel().fit(stub)
        cname = tracking.model_name("zosconnect_apireq_v3_baqr", "cost")
        tracking.log_model(cost, name=cname, params={}, metrics={}, tables={"competitors": cost.competitors})
        tracking.promote(cname)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return env


@pytest.fixture(scope="session")
def app_project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return build_project(tmp_path_factory.mktemp("app_project"))


@pytest.fixture
def app_env(app_project: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    import streamlit as st

    for k, v in app_project.items():
        monkeypatch.setenv(k, v)
    st.cache_data.clear()
    st.cache_resource.clear()
    return app_project
