"""The stage outputs dvc.lock hashes are the same bytes for the same inputs, on any clone at any time.

A fresh `make run` must leave the committed dvc.lock valid (git status clean): an output holding a
write time, a random id or an absolute path would get a new hash on every run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

from kneecap import tracking
from kneecap.ingest.manifest import MANIFEST
from kneecap.modeling import CostModel
from tests.bundled import bundled_raw
from tests.stages import load_stage

REPO = Path(__file__).resolve().parents[2]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_decode_smf_writes_the_same_bytes_from_another_clone_at_another_time(tmp_path, monkeypatch, capsys):
    outs = []
    for clone in ("a", "b"):
        root = tmp_path / clone
        bundled_raw(root / "data" / "raw")  # as shipped: a user's own dumps are not what this checks
        monkeypatch.chdir(root)  # DVC runs the stage from the project folder, with relative paths
        assert load_stage("decode_smf").main(["--raw", "data/raw", "--out", "data/interim/smf",
                                              "--params", str(REPO / "params.yaml")]) == 0
        outs.append(_files(root / "data" / "interim" / "smf"))
        time.sleep(1.1)  # the manifest's ingest times had a resolution of a second
    assert outs[0] == outs[1]
    entries = [json.loads(line) for line in outs[0][MANIFEST].decode().splitlines()]
    assert len(entries) == 3 and all("ingested_at" not in e for e in entries)
    assert all(not Path(e["path"]).is_absolute() for e in entries)
    out = capsys.readouterr().out
    # the bundled error samples are refused as their list says, not reported as failures
    assert out.splitlines()[-1] == "ingest: 3 ingested, 0 already ingested, 3 bundled samples refused as intended " \
                                   "-> data/interim/smf"


def test_a_saved_model_directory_is_the_same_bytes_for_the_same_fit(tmp_path):
    frame = pd.DataFrame({"n_queues": [1000, 2000, 3000] * 2, "config": ["console"] * 3 + ["rest_all"] * 3,
                          "cpu_ms_per_tran": [99, 169, 243, 195, 370, 561]})
    results = CostModel().fit(frame)
    first = _files(tracking.save_model_dir(results, tmp_path / "a" / "model"))
    second = _files(tracking.save_model_dir(results, tmp_path / "b" / "model"))
    assert first == second
    mlmodel = first["MLmodel"].decode()
    assert "model_uuid" not in mlmodel and "utc_time_created" not in mlmodel
    # still a model both kneecap and MLflow read
    again = tracking.load_results(tmp_path / "a" / "model")
    pd.testing.assert_frame_equal(again.predict(frame), results.predict(frame))
    import mlflow

    assert mlflow.models.Model.load(str(tmp_path / "a" / "model")).flavors["python_function"]["loader_module"] \
        == "kneecap.tracking"


def test_no_stage_output_is_a_report_stamped_with_its_run_time():
    import yaml

    spec = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))
    outs = {next(iter(o)) if isinstance(o, dict) else o
            for stage in spec["stages"].values() for o in stage.get("outs", [])}
    # GX Data Docs carry the run's time in their pages and paths: rebuilt by the stage, not hashed
    assert "reports/validation/data_docs" not in outs
    assert "--docs reports/validation/data_docs" in spec["stages"]["validate"]["cmd"]


def test_the_committed_lock_holds_one_published_generation_as_a_new_clone_makes():
    """data/processed keeps the generation it replaced (readers may be reading it) and DVC hashes it too.

    A working copy whose marts changed holds two generations where a new clone's first run makes one,
    so a dvc.lock committed from it is rewritten by `make run` on every clone. Regenerate the lock
    from a fresh publish (``rm -rf data/processed && make pipeline``) before committing it.
    """
    import subprocess

    import yaml

    from kneecap.validation.suites import SUITES

    # the lock as committed, not as a user's own tables and SMF have since rewritten it
    shown = subprocess.run(["git", "-C", str(REPO), "show", "HEAD:dvc.lock"], capture_output=True, text=True)
    if shown.returncode != 0:
        pytest.skip(f"not a git checkout: {shown.stderr.strip()}")
    lock = yaml.safe_load(shown.stdout)
    out = next(o for o in lock["stages"]["validate"]["outs"] if o["path"] == "data/processed")
    # every suite's table, the quarantine table, and the pointer current.json
    assert out["nfiles"] == len(SUITES) + 2, out
