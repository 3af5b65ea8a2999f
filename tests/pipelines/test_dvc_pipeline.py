"""The DVC pipeline end to end in a scratch copy of the project (slow: runs `dvc repro`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap import schema, warehouse
from tests.bundled import bundled_raw, bundled_reference

REPO = Path(__file__).resolve().parents[2]
COPY = ["dvc.yaml", "params.yaml", "pipelines", "data/reference", "data/raw", "data/backtest", "src"]

pytestmark = [pytest.mark.slow]

# the README's example table: seed 004 Table 1 (004_30fd347cf9df2afe.txt, "Recorded average response
# times"; clients, transactions/s, ms) typed with only the columns the table prints
MY_TABLE = ("workload,clients,tps,resp_ms\n"
            "mylpar_api,100,500,1.06\nmylpar_api,200,1000,1.13\nmylpar_api,300,1500,1.38\n"
            "mylpar_api,400,1960,3.32\nmylpar_api,500,2420,5.03\n")


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("project")
    for item in COPY:
        src = REPO / item
        dst = root / item
        dst.parent.mkdir(parents=True, exist_ok=True)
        if item == "data/reference":  # as kneecap ships it, without a table the user added
            bundled_reference(dst)
        elif item == "data/raw":  # the bundled RMF samples, without SMF the user ingested
            bundled_raw(dst)
        elif src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst)
    # params.yaml as shipped with 20 bootstrap refits instead of 200, as the desk's test project has
    # (tests/app/conftest.py): what is checked here is the pipeline and the answers' presence, not band
    # widths; train, evaluate and the forced train take 31.8 / 32.2 / 24.8 s with 200, 23.6 / 25.8 / 15.5 s
    params = root / "params.yaml"
    params.write_text(params.read_text(encoding="utf-8").replace("n_boot: 200", "n_boot: 20"), encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "MLFLOW_TRACKING_URI": f"sqlite:///{root / 'mlflow.db'}",
        "DVC_NO_ANALYTICS": "1",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    # the README's "Your own data", word for word: a load-test table and an SMF dump brought in
    # with kneecap's commands; the dump is ten simulated days of one class (tests/smf/simdays.py)
    from tests.smf import simdays, synth

    records, _ = simdays.simulated_days()
    inbox = tmp_path_factory.mktemp("inbox")
    (inbox / "SYSA.ZCONSIM.D260302.smf").write_bytes(synth.frame_rdw(records))
    (inbox / "mylpar.csv").write_text(MY_TABLE, encoding="utf-8")
    kneecap = str(Path(sys.executable).parent / "kneecap")
    added = _run([kneecap, "add-table", str(inbox / "mylpar.csv"), "--source", "in-house load test, LPAR SYSA",
                  "--n-gcp", "2", "--n-ziip", "2", "--think-time-ms", "200"], root, env)
    assert added.returncode == 0 and "wrote data/reference/mylpar.csv (5 rows)" in added.stdout, added.stderr
    ingested = _run([kneecap, "ingest", str(inbox / "SYSA.ZCONSIM.D260302.smf")], root, env)
    assert ingested.returncode == 0 and "1 file(s) copied into data/raw/ingested" in ingested.stdout, \
        ingested.stdout + ingested.stderr
    for cmd in (["git", "init", "-q"], ["dvc", "init", "-q"], ["dvc", "config", "core.analytics", "false"]):
        assert _run(cmd, root, env).returncode == 0
    first = _run(["dvc", "repro"], root, env)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    return root, env


def test_repro_publishes_validated_marts(project: tuple[Path, dict[str, str]]) -> None:
    root, _ = project
    fct = warehouse.read_table(root / "data/processed", "fct_measurements")
    assert list(fct.columns) == list(schema.FCT_MEASUREMENTS_COLUMNS)
    assert not fct.duplicated(list(schema.KEY_COLUMNS)).any()
    report = json.loads((root / "reports/validation/marts.json").read_text())
    assert report["success"] is True
    # seed 004 Table 2 repeats Table 1's 500-client run: counted once
    diag = fct[fct["workload"] == "zosconnect_cics_diag"]
    assert len(diag) == 6
    assert sorted(diag["n_ziip"].unique().tolist()) == [2.0, 3.0]


def test_repro_writes_the_docs_and_plots_users_open(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    # GX Data Docs of the gate
    assert "fct_measurements" in (root / "reports/validation/data_docs/index.html").read_text(encoding="utf-8")
    # dvc plots: seed 004's curve beside its five 2-zIIP points, the SMF class's beside its intervals
    fit = pd.read_csv(root / "reports/plots/fit/zosconnect_cics_diag__2gcp_2ziip_z200.csv")
    measured = fit[fit["measured_resp_ms"].notna()]
    assert measured["load"].tolist() == [100.0, 200.0, 300.0, 400.0, 500.0]
    assert (fit["model_resp_ms_lo"].dropna() <= fit.loc[fit["model_resp_ms_lo"].notna(), "model_resp_ms"]).all()
    assert (root / "reports/plots/fit/ZCONSIM__lpar.csv").exists()
    residuals = pd.read_csv(root / "reports/plots/residuals/zosconnect_cics_diag__2gcp_2ziip_z200.csv")
    np.testing.assert_allclose(residuals["residual_pct"],
                               100 * (measured["measured_resp_ms"] / measured["model_resp_ms"] - 1).to_numpy())
    shown = _run(["dvc", "plots", "show", "-o", "plots_html"], root, env)
    assert shown.returncode == 0, shown.stdout[-2000:] + shown.stderr[-2000:]
    html = (root / "plots_html/index.html").read_text(encoding="utf-8")
    assert "zosconnect_cics_diag__2gcp_2ziip_z200.csv" in html and "residual_pct" in html


def test_second_repro_does_nothing(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    again = _run(["dvc", "repro"], root, env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Running stage" not in again.stdout, again.stdout


def test_rerunning_the_stages_reproduces_the_lock_file(project: tuple[Path, dict[str, str]]) -> None:
    # what a fresh clone's `make run` does to the committed dvc.lock: the stages whose outputs carried
    # run stamps (ingest times, MLmodel ids and times) rerun and must record the same hashes
    root, env = project
    before = (root / "dvc.lock").read_text(encoding="utf-8")
    for stage in ("decode_smf", "validate", "train"):
        forced = _run(["dvc", "repro", "--force", "--single-item", stage], root, env)
        assert forced.returncode == 0, forced.stdout[-2000:] + forced.stderr[-2000:]
        assert f"Running stage '{stage}'" in forced.stdout
    assert (root / "dvc.lock").read_text(encoding="utf-8") == before
    assert "fct_measurements" in (root / "reports/validation/data_docs/index.html").read_text(encoding="utf-8")


def test_the_published_snapshot_is_all_dvc_sees(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    # one pointer and one generation (the first publish into a fresh folder has no previous one)
    processed = root / "data/processed"
    generation = warehouse.current_generation(processed)
    assert sorted(p.name for p in processed.iterdir()) == sorted([warehouse.MANIFEST, generation])
    assert sorted(warehouse.read_snapshot(processed).tables) == [
        "dim_sources", "dim_workloads", "fct_cpu_intervals", "fct_measurements", "fct_msu_intervals",
        "fct_performance_index",
        "fct_rmf_duplicates", "fct_rt_buckets", "fct_sysplex_performance_index", "quarantine_measurements"]
    # nothing changes after the stages finish: DVC finds every output as it recorded it
    status = _run(["dvc", "status"], root, env)
    assert status.returncode == 0, status.stderr[-2000:]
    assert "up to date" in status.stdout, status.stdout


def test_bad_reference_csv_stops_and_keeps_previous_marts(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    processed = root / "data/processed"
    generation = warehouse.current_generation(processed)
    before = warehouse.read_table(processed, "fct_measurements")
    target = root / "data/reference/seed004_table1.csv"
    original = target.read_text()
    lines = original.splitlines()
    header = lines[0].split(",")
    cells = lines[3].split(",")
    cells[header.index("tps")] = "-1960"
    target.write_text("\n".join([*lines[:3], ",".join(cells), *lines[4:]]) + "\n")
    try:
        result = _run(["dvc", "repro"], root, env)
        assert result.returncode != 0
        assert f"{target.relative_to(root)}:4: tps: -1960 is negative" in result.stdout + result.stderr
        assert warehouse.current_generation(processed) == generation
        pd.testing.assert_frame_equal(warehouse.read_table(processed, "fct_measurements"), before)
    finally:
        target.write_text(original)


def test_a_users_smf_class_gets_a_knee_a_plan_and_a_date(project: tuple[Path, dict[str, str]]) -> None:
    """SMF dropped into data/raw -> dvc repro -> promote -> kneecap forecast: the class's answers."""
    root, env = project
    from tests.smf import simdays

    kneecap = str(Path(sys.executable).parent / "kneecap")
    promoted = _run([kneecap, "promote", "--if-missing"], root, env)
    assert promoted.returncode == 0, promoted.stderr[-2000:]
    (root / "fs.yaml").write_text("scenarios:\n"
                                  "  - {workload: ZCONSIM, name: peak, tps: 2200, slo_resp_ms: 4}\n"
                                  "  - {workload: ZCONSIM, name: busier, tps: 2200, bg_load_factor: 1.5, "
                                  "slo_resp_ms: 4}\n",
                                  encoding="utf-8")
    out = _run([kneecap, "forecast", "--scenarios", "fs.yaml", "--out", "fs.csv"], root, env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "ZCONSIM / peak: knee" in out.stdout and "knee reached" in out.stdout, out.stdout
    rows = pd.read_csv(root / "fs.csv").set_index("scenario")
    peak = rows.loc["peak"]
    # the band's calibration on the class's own later days and the structures it carries, printed
    assert f"ZCONSIM / peak: response {peak['resp_ms']:.3g} ms (95 % band" in out.stdout, out.stdout
    assert "ZCONSIM / peak: band: " in out.stdout and "rolling origin" in out.stdout, out.stdout
    assert "ZCONSIM / peak: structures: the intervals weigh" in out.stdout, out.stdout
    assert 0 <= peak["band_coverage_raw_pct"] <= peak["band_coverage_pct"] <= 100
    assert peak["model"] == "open_dispatch" and pd.isna(peak["error"])
    grid = simdays.load_grid()
    simulated = float(np.exp(np.interp(2200, grid["tps_offered"], np.log(grid["resp_ms"]))))
    assert abs(peak["resp_ms"] / simulated - 1) < 0.2
    assert peak["knee_tps_lo"] <= peak["knee_tps"] <= peak["knee_tps_hi"]
    assert peak["recommended_n_ziip"] >= 2 and isinstance(peak["recommendation"], str)
    assert peak["date_knee_lo"] <= peak["date_knee"] <= peak["date_knee_hi"]
    # the other classes growing 50 % bring the knee in and the response up
    busier = rows.loc["busier"]
    assert busier["knee_tps"] < peak["knee_tps"] and busier["resp_ms"] > peak["resp_ms"]


def test_a_users_table_gets_a_knee_and_a_zIIP_plan(project: tuple[Path, dict[str, str]]) -> None:
    """A table added with `kneecap add-table` -> dvc repro -> promote -> forecast: its knee and plan."""
    root, env = project
    kneecap = str(Path(sys.executable).parent / "kneecap")
    assert _run([kneecap, "promote", "--if-missing"], root, env).returncode == 0
    (root / "mine.yaml").write_text("scenarios:\n  - {workload: mylpar_api, name: peak, clients: 450, "
                                    "think_time_ms: 200, n_gcp: 2, n_ziip: 2, slo_resp_ms: 4}\n", encoding="utf-8")
    out = _run([kneecap, "forecast", "--scenarios", "mine.yaml", "--out", "mine.csv"], root, env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    row = pd.read_csv(root / "mine.csv").iloc[0]
    assert row["model"] == "closed_mva" and pd.isna(row["error"])
    # how often the band held the table's own higher client counts, printed beside the answer
    assert "mylpar_api / peak: band: " in out.stdout, out.stdout
    assert "held-out point(s) inside the bootstrap 95 % band" in out.stdout, out.stdout
    assert 0 <= row["band_coverage_raw_pct"] <= 100
    # the same numbers as the bundled seed 004 table, so the same answers as its workload's model
    (root / "seed.yaml").write_text((root / "mine.yaml").read_text().replace("mylpar_api", "zosconnect_cics_diag"))
    seed = _run([kneecap, "forecast", "--scenarios", "seed.yaml", "--out", "seed.csv"], root, env)
    assert seed.returncode == 0, seed.stderr[-2000:]
    twin = pd.read_csv(root / "seed.csv").iloc[0]
    assert 300 <= row["knee_clients"] <= 500
    assert row["resp_ms"] == pytest.approx(twin["resp_ms"], rel=0.05)
    assert row["knee_clients"] == pytest.approx(twin["knee_clients"], rel=0.05)
    assert row["recommended_n_ziip"] >= 2
