"""Everything the pages need from kneecap, cached. The only module with st.cache_* in the app.

Where things are: the project root is the folder above ``app/``; ``KNEECAP_MARTS`` overrides the
published marts folder (default ``<root>/data/processed``), ``KNEECAP_PARAMS`` the params file,
``MLFLOW_TRACKING_URI`` the tracking store (default ``sqlite:///<root>/mlflow.db``).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from kneecap import config, forecasting, modeling, tracking, warehouse

ROOT = Path(__file__).resolve().parents[1]
MAX_UPLOAD_MB = 200


def marts_dir() -> Path:
    return Path(os.environ.get("KNEECAP_MARTS", ROOT / "data" / "processed"))


@st.cache_resource
def _tracking() -> str:
    return tracking.configure(project_dir=ROOT)


@st.cache_data(ttl=60)
def params() -> config.Params:
    return config.load_params(os.environ.get("KNEECAP_PARAMS", ROOT / "params.yaml"))


def policy() -> forecasting.Policy:
    p = params()
    return forecasting.Policy(p.planner.max_ziip_busy_pct, p.planner.max_spill_pct, p.planner.max_n_ziip,
                              p.train.knee_k)


@st.cache_data(ttl=60)
def table(name: str) -> pd.DataFrame:
    """A published mart, or an empty frame when the pipeline has not published it yet."""
    try:
        return warehouse.read_table(marts_dir(), name)
    except (FileNotFoundError, OSError, KeyError):
        return pd.DataFrame()


def measured_points(workload: str) -> pd.DataFrame:
    fct = table("fct_measurements")
    return fct[fct["workload"] == workload].reset_index(drop=True) if not fct.empty else fct


@st.cache_data(ttl=30)
def registered() -> pd.DataFrame:
    _tracking()
    return tracking.registered_models()


def workloads_with(kind: str) -> list[str]:
    frame = registered()
    if frame.empty:
        return []
    champions = frame[frame["aliases"].str.contains(tracking.CHAMPION, na=False)]
    suffix = f"-{kind}"
    return sorted(n[len(tracking.MODEL_PREFIX):-len(suffix)] for n in champions["name"] if n.endswith(suffix))


@st.cache_resource(ttl=300)
def models(workload: str, version_key: str = "") -> forecasting.WorkloadModels:
    """The workload's champions (``version_key`` changes when a new champion is promoted)."""
    _tracking()
    found: dict[str, Any] = {}
    names = tracking.registered_names()
    for kind in ("response", "cost"):
        name = tracking.model_name(workload, kind)
        if name in names and tracking.champion_version(name) is not None:
            found[kind] = tracking.load_champion(name)
    return forecasting.WorkloadModels(workload, found.get("response"), found.get("cost"))


def champion_key(workload: str) -> str:
    frame = registered()
    rows = frame[frame["name"].str.startswith(f"{tracking.MODEL_PREFIX}{workload}-")
                 & frame["aliases"].str.contains(tracking.CHAMPION, na=False)]
    return ",".join(f"{n}:{v}" for n, v in zip(rows["name"], rows["version"]))


def response_model(workload: str) -> Any:
    return models(workload, champion_key(workload)).response


@st.cache_data(max_entries=256)
def curve(workload: str, key: str, n_gcp: int, n_ziip: int, think_time_ms: float, max_clients: int) -> pd.DataFrame:
    return forecasting.response_curve(models(workload, key).response, n_gcp=n_gcp, n_ziip=n_ziip,
                                      think_time_ms=think_time_ms, max_load=max_clients, points=80, max_draws=50)


@st.cache_data(max_entries=256)
def knee(workload: str, key: str, n_gcp: int, n_ziip: int, think_time_ms: float) -> dict[str, Any]:
    return forecasting.knee(models(workload, key).response, n_gcp=n_gcp, n_ziip=n_ziip,
                            think_time_ms=think_time_ms, k=policy().knee_k)


@st.cache_data(max_entries=256)
def point(workload: str, key: str, clients: float, n_gcp: int, n_ziip: int, think_time_ms: float) -> dict[str, float]:
    pred = models(workload, key).response.predict(pd.DataFrame([{
        "clients": clients, "n_gcp": n_gcp, "n_ziip": n_ziip, "think_time_ms": think_time_ms}]))
    return {k: float(v) for k, v in pred.iloc[0].items()}


@st.cache_data(max_entries=128)
def plan(workload: str, key: str, clients: float, think_time_ms: float, n_gcp: int, slo_resp_ms: float,
         max_ziip_busy_pct: float | None, max_spill_pct: float | None, max_n_ziip: int) -> dict[str, Any]:
    result = modeling.plan_ziip(models(workload, key).response, clients=clients, think_time_ms=think_time_ms,
                                n_gcp=n_gcp, slo_resp_ms=slo_resp_ms, max_ziip_busy_pct=max_ziip_busy_pct,
                                max_spill_pct=max_spill_pct, max_n_ziip=max_n_ziip)
    return {"n_ziip": result.n_ziip, "reason": result.reason, "margin_ms": result.margin_ms, "table": result.table}


def run_competitors(run_id: str) -> pd.DataFrame:
    """The competitors table logged with a training run (empty if none)."""
    return _run_table(run_id, "competitors.json")


@st.cache_data(ttl=300)
def _run_table(run_id: str, name: str) -> pd.DataFrame:
    _tracking()
    return tracking.load_run_table(run_id, name)


@st.cache_data(ttl=60)
def backtest_metrics() -> dict[str, Any] | None:
    path = ROOT / "reports" / "metrics" / "backtest.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def promote(name: str, version: int) -> str:
    _tracking()
    done = tracking.promote(name, version)
    registered.clear()
    models.clear()
    return done


def ingest_upload(filename: str, payload: bytes) -> dict[str, Any]:
    """Parse an uploaded file (never unpickled or executed) and say what it held.

    Measurement CSVs are checked against the reference format and the validation suite; SMF dumps
    and RMF XML are decoded into a scratch folder with the same readers the pipeline uses.
    """
    if len(payload) > MAX_UPLOAD_MB * 1024 * 1024:
        raise ValueError(f"{filename}: {len(payload) / 1e6:.0f} MB is over the {MAX_UPLOAD_MB} MB upload limit; "
                         "use `kneecap ingest` for large dumps")
    from kneecap.ingest_cli import _is_xml  # noqa: PLC0415 - small helper shared with the CLI
    from kneecap.rmf.ingest import ingest_xml
    from kneecap.smf.ingest import ingest_paths

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(filename).name
        path.write_bytes(payload)
        if path.suffix.lower() == ".csv":
            frame = warehouse.read_measurement_csv(path)
            return {"kind": "measurement CSV", "rows": len(frame), "table": frame}
        out = Path(tmp) / "decoded"
        if _is_xml(path):
            results, _ = ingest_xml([path], out)
            r = results[0]
            if r.status == "failed":
                raise ValueError(r.error)
            return {"kind": "RMF Postprocessor XML", "rows": r.rows,
                    "table": pd.concat([pd.read_parquet(p) for p in out.glob("rmf_cpu/*.parquet")] or [pd.DataFrame()])}
        summary = ingest_paths([path], out)
        f = summary.files[0]
        if f.status == "failed":
            raise ValueError(f.error)
        return {"kind": f"SMF dump ({f.framing})", "rows": f.rows, "records_by_type": summary.records_by_type,
                "quarantine": summary.quarantine}
