"""A file arriving while the pipeline runs is decoded or leaves the decode stage stale, never missed and "up to date".

DVC hashes a stage's dependencies after its command exits; without the input areas' lock
(kneecap.ingest.inputlock) a file ingested into data/raw during ``dvc repro`` was in the hash
``dvc.lock`` recorded but not in the decode, and ``dvc status`` said all was up to date.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kneecap.ingest import inputlock
from kneecap.ingest.manifest import MANIFEST
from tests.bundled import bundled_raw, bundled_reference
from tests.stages import load_stage

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _smf_days(first: int, days: int) -> bytes:
    """``days`` simulated days of one class from day ``first`` (1-based), RDW-framed."""
    from tests.smf import simdays, synth

    records, _ = simdays.simulated_days(days=first + days - 1)
    per_day = len(records) // (first + days - 1)
    return synth.frame_rdw(records[per_day * (first - 1):])


def test_the_input_areas_are_the_dependencies_no_stage_writes() -> None:
    spec = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))
    areas = inputlock.input_areas_of_spec(spec)
    assert {"data/raw", "data/reference", "data/backtest"} <= set(areas)
    # a stage's output (decode's, the published marts) is never an area a run locks: the
    # validate stage locks data/processed itself while publishing, and would wait for ever
    assert not {"data/interim/smf", "data/interim/marts", "data/processed", "models"} & set(areas)
    assert areas == sorted(areas)


def test_an_ingest_into_data_raw_locks_data_raw_and_elsewhere_its_own_folder(tmp_path: Path) -> None:
    (tmp_path / "data" / "raw").mkdir(parents=True)
    shutil.copy(REPO / "dvc.yaml", tmp_path / "dvc.yaml")
    raw = (tmp_path / "data" / "raw").resolve()
    assert inputlock.areas_of(raw / "ingested", tmp_path / "dvc.yaml") == [raw]
    other = tmp_path / "inbox"
    assert inputlock.areas_of(other, tmp_path / "dvc.yaml") == [other.resolve()]
    # the project is found from the target, wherever the ingest runs
    assert inputlock.areas_of(raw / "ingested" / "today") == [raw]
    assert inputlock.areas_of(other) == [other.resolve()]


def test_kneecap_repro_outside_a_project_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([str(BIN / "kneecap"), "repro"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr == "repro: no dvc.yaml here (run it in the project)\n"


def test_the_decode_stage_fails_when_a_file_arrives_while_it_decodes(tmp_path, monkeypatch, capsys) -> None:
    bundled_raw(tmp_path / "data" / "raw")
    monkeypatch.chdir(tmp_path)
    stage = load_stage("decode_smf")
    real = stage.run_ingest
    late = tmp_path / "data" / "raw" / "ingested" / "late.smf"

    def decode_then_a_file_lands(paths, **kw):
        status = real(paths, **kw)
        late.parent.mkdir()
        late.write_bytes(_smf_days(1, 1))
        return status

    monkeypatch.setattr(stage, "run_ingest", decode_then_a_file_lands)
    status = stage.main(["--raw", "data/raw", "--out", "data/interim/smf", "--params", str(REPO / "params.yaml")])
    err = capsys.readouterr().err
    assert status == 3, err
    assert "decode_smf: data/raw changed while it was decoded (added ingested/late.smf)" in err
    # what it did decode is the snapshot it started from: the late file is in no manifest line
    decoded = (tmp_path / "data" / "interim" / "smf" / MANIFEST).read_text(encoding="utf-8")
    assert "late.smf" not in decoded and decoded.count("\n") == 3


def test_an_ingest_waits_for_the_run_holding_the_input_area_and_says_who(tmp_path: Path) -> None:
    raw = tmp_path / "data" / "raw"
    raw.mkdir(parents=True)
    shutil.copy(REPO / "dvc.yaml", tmp_path / "dvc.yaml")
    dump = tmp_path / "late.smf"
    dump.write_bytes(_smf_days(1, 1))
    # a stand-in for `kneecap repro`: another process holding data/raw's flock until told
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()", str(raw)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    said = tmp_path / "ingest.err"
    try:
        with said.open("w") as err_file:
            ingest = subprocess.Popen([str(BIN / "kneecap"), "ingest", str(dump)], cwd=tmp_path,
                                      stdout=subprocess.PIPE, stderr=err_file, text=True)
        deadline = time.monotonic() + 60
        while ingest.poll() is None and time.monotonic() < deadline and "waiting for" not in said.read_text():
            time.sleep(0.1)
        time.sleep(0.5)  # were it not waiting, the copy would be done by now
        assert ingest.poll() is None, (ingest.communicate(), said.read_text())
        assert not (raw / "ingested" / "late.smf").exists()  # not while the run reads data/raw
    finally:
        holder.communicate("")  # the run ends
    out, _ = ingest.communicate(timeout=60)
    err = said.read_text()
    assert ingest.returncode == 0, out + err
    assert f"ingest: waiting for {raw.resolve()}: pid {holder.pid} " in err, err
    assert (raw / "ingested" / "late.smf").read_bytes() == dump.read_bytes()


def _held(folder: Path) -> bool:
    """Whether another process holds ``folder``'s flock now."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


@pytest.fixture()
def small_project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The project's pipeline in a scratch folder: the bundled raw and reference data and one SMF dump."""
    root = tmp_path / "project"
    for item in ("dvc.yaml", "params.yaml", "pipelines", "src"):
        src = REPO / item
        if src.is_dir():
            shutil.copytree(src, root / item, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            root.mkdir(exist_ok=True)
            shutil.copy2(src, root / item)
    bundled_raw(root / "data" / "raw")
    bundled_reference(root / "data" / "reference")
    (root / "data" / "raw" / "ingested").mkdir()
    (root / "data" / "raw" / "ingested" / "SYSA.first.smf").write_bytes(_smf_days(1, 10))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1",
           "PYTHONPATH": str(root / "src")}
    for cmd in (["git", "init", "-q"], ["dvc", "init", "-q"], ["dvc", "config", "core.analytics", "false"]):
        assert subprocess.run(cmd, cwd=root, env=env, capture_output=True).returncode == 0
    return root, env


def _race(root: Path, env: dict[str, str], cmd: list[str]) -> tuple[subprocess.Popen[str], str,
                                                                  subprocess.CompletedProcess[str]]:
    """Start ``cmd`` (a pipeline run) and ingest a late dump once its decode stage has begun."""
    raw = root / "data" / "raw"
    late = root.parent / "SYSA.late.smf"
    late.write_bytes(_smf_days(11, 2))
    run = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    # the late file comes once the decode stage has started (DVC creates its output folder then)
    while run.poll() is None and not (root / "data" / "interim" / "smf").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert run.poll() is None, "the run ended before the late file could race it"
    ingest = subprocess.run([str(BIN / "kneecap"), "ingest", str(late)], cwd=root, env=env,
                            capture_output=True, text=True, timeout=300)
    ran, _ = run.communicate(timeout=300)
    assert ingest.returncode == 0, ingest.stdout + ingest.stderr
    assert (raw / "ingested" / late.name).exists()
    return run, ran, ingest


def _decoded_and_status(root: Path, env: dict[str, str]) -> tuple[bool, list[Any]]:
    """Whether the late dump was decoded, and what ``dvc status`` says of the decode stage."""
    manifest = root / "data" / "interim" / "smf" / MANIFEST
    decoded = manifest.exists() and "SYSA.late.smf" in manifest.read_text(encoding="utf-8")
    status = subprocess.run(["dvc", "status", "--json", "decode_smf"], cwd=root, env=env, capture_output=True,
                            text=True, timeout=300)
    assert status.returncode == 0, status.stderr
    return decoded, json.loads(status.stdout or "{}").get("decode_smf") or []


def _raw_changed(stale: list[Any]) -> bool:
    """Whether a ``dvc status`` entry of a stage says its data/raw changed."""
    return any(isinstance(e, dict) and (e.get("changed deps") or {}).get("data/raw") == "modified" for e in stale)


@pytest.mark.slow
def test_a_file_ingested_during_kneecap_repro_waits_for_it_and_leaves_the_decode_stale(small_project) -> None:
    root, env = small_project
    run, ran, ingest = _race(root, env, [str(BIN / "kneecap"), "repro", "build_marts"])
    assert run.returncode == 0, ran[-3000:]
    # the ingest waited for the run, named it, and landed after it
    raw = (root / "data" / "raw").resolve()
    assert f"ingest: waiting for {raw}: pid {run.pid} (kneecap repro" in ingest.stderr, ingest.stderr
    decoded, stale = _decoded_and_status(root, env)
    # the run decoded the snapshot it started from, and says so: its data/raw changed since
    assert not decoded and stale == [{"changed deps": {"data/raw": "modified"}}], (decoded, stale)


@pytest.mark.slow
def test_a_file_ingested_during_a_plain_dvc_repro_is_never_left_out_as_up_to_date(small_project) -> None:
    root, env = small_project
    run, ran, _ = _race(root, env, ["dvc", "repro", "build_marts"])
    # no lock held by the run: the file lands while decode_smf works, which then fails (exit 3)
    # rather than let DVC record a data/raw it did not decode; or it lands after, leaving it stale
    assert run.returncode == 0 or "decode_smf: data/raw changed while it was decoded" in ran, ran[-3000:]
    decoded, stale = _decoded_and_status(root, env)
    assert decoded or _raw_changed(stale), (decoded, stale)  # never left out and "up to date"
