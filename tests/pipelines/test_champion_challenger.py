"""Retraining and the champion: an unchanged fit registers nothing, a changed one replaces the
champion only when it is not worse on the current measurements."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from kneecap import tracking, warehouse
from tests.bundled import read_bundled
from tests.stages import load_stage

REPO = Path(__file__).resolve().parents[2]
WORKLOAD = "zosconnect_cics_diag"  # seed 004: closed MVA response + cost model


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    measurements, sources = read_bundled()
    tables = warehouse.build_marts(measurements, sources, sql_root=REPO / "pipelines" / "sql")
    one = {k: v for k, v in tables.items() if k in ("fct_measurements", "dim_workloads")}
    one["fct_measurements"] = one["fct_measurements"][one["fct_measurements"]["workload"] == WORKLOAD]
    one["dim_workloads"] = one["dim_workloads"][one["dim_workloads"]["workload"] == WORKLOAD]
    marts = tmp_path / "marts"
    warehouse.write_tables(one, marts)
    params = tmp_path / "params.yaml"
    params.write_text((REPO / "params.yaml").read_text().replace("n_boot: 200", "n_boot: 8"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.chdir(tmp_path)
    tracking.configure(os.environ["MLFLOW_TRACKING_URI"], project_dir=tmp_path)
    return tmp_path, marts, params


def _train(root: Path, marts: Path, params: Path, capsys) -> str:
    assert load_stage("train").main(["--marts", str(marts), "--models", str(root / "models"),
                                     "--metrics", str(root / "train.json"), "--params", str(params)]) == 0
    return capsys.readouterr().out


def test_unchanged_fit_registers_nothing_and_a_better_one_takes_over(project, capsys):
    root, marts, params = project
    name = tracking.model_name(WORKLOAD, "response")
    shown = tracking.listed_name(name)  # the train log names a model as `kneecap models` lists it
    first = _train(root, marts, params, capsys)
    assert f"{shown} (closed_mva) registered as version 1" in first
    tracking.promote_missing()
    again = _train(root, marts, params, capsys)
    assert f"{shown} (closed_mva) unchanged: version 1 is the same fit" in again
    assert "registered as version" not in again
    # a measurement corrected: the refit is registered and, fitting the data better, takes over
    published = warehouse.read_parquet_dir(marts)
    fct = published["fct_measurements"]
    fct.loc[fct["clients"] == 400, "resp_ms"] *= 1.2
    warehouse.write_tables({**published, "fct_measurements": fct}, marts)  # a publish is a whole snapshot
    third = _train(root, marts, params, capsys)
    assert f"{shown} (closed_mva) registered as version 2" in third
    assert f"{shown} version 2 is now @champion (was 1)" in third
    assert tracking.champion_version(name) == "2"


def test_a_worse_refit_stays_a_challenger_with_its_reason(project, capsys):
    root, marts, params = project
    name = tracking.model_name(WORKLOAD, "response")
    shown = tracking.listed_name(name)  # the train log names a model as `kneecap models` lists it
    _train(root, marts, params, capsys)
    tracking.promote_missing()
    # refit under params that fit seed 004 worse (1 eligible burst instead of 4) with no tolerance
    worse = params.read_text().replace("eligible_bursts: 4", "eligible_bursts: 1").replace(
        "promote_tolerance_pct: 0.5", "promote_tolerance_pct: 0.0")
    params.write_text(worse)
    out = _train(root, marts, params, capsys)
    assert f"{shown} version 2 stays a challenger, @champion is still 1" in out
    assert tracking.champion_version(name) == "1"
    _, tags = tracking.newest_version(name)
    assert "worse than the champion's" in tags[tracking.CHALLENGER_TAG]
    # under `never` even a better refit waits for `kneecap promote`
    params.write_text(worse.replace("eligible_bursts: 1", "eligible_bursts: 6").replace(
        "promote: if_not_worse", "promote: never"))
    out = _train(root, marts, params, capsys)
    assert "train.promote is 'never'" in out and tracking.champion_version(name) == "1"
    versions = pd.DataFrame(tracking.registered_models())
    assert sorted(versions[versions["name"] == name]["version"]) == [1, 2, 3]


def test_a_model_the_marts_no_longer_fit_is_retired_and_comes_back(project, capsys):
    root, marts, params = project
    name = tracking.model_name(WORKLOAD, "response")
    shown = tracking.listed_name(name)  # the train log names a model as `kneecap models` lists it
    _train(root, marts, params, capsys)
    tracking.promote_missing()
    published = warehouse.read_parquet_dir(marts)
    fct = published["fct_measurements"]
    # two points left: under train.min_points, no response model (a publish is a whole snapshot)
    warehouse.write_tables({**published, "fct_measurements": fct[fct["clients"].isin([100, 200])]}, marts)
    out = _train(root, marts, params, capsys)
    assert f"train: {shown} retired" in out and "removed from version 1" in out
    assert tracking.champion_version(name) is None
    assert name not in dict(tracking.promote_missing())  # promote --if-missing leaves it alone
    assert tracking.champion_version(name) is None
    warehouse.write_tables(published, marts)
    back = _train(root, marts, params, capsys)
    assert f"{shown} (closed_mva) unchanged: version 1 is the same fit" in back
    assert tracking.retired_reason(name) is None
    assert dict(tracking.promote_missing()).get(name) == "1"
