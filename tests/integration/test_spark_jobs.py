"""SMF decode and per-workload fits on Spark give what the local paths give.

Decode: the same inputs ingested by kneecap.ingest.smf (one process) and by kneecap.spark_jobs
(local[2], one task per input) leave byte-identical folders: every partition file, quarantine,
record counts, ``_keys`` and the manifest but for its timestamps. The inputs hold what the
semantics turn on: two systems over several days, a record repeated in a later gzip input (stored
once, by the first), the same dump under another name (skipped), a damaged dump (quarantine) and a
file that is not an SMF dump (failed). Re-running adds nothing, and a folder the local ingest began
is finished by Spark as the local ingest would have finished it.

Fits: kneecap.spark_fits.train_workloads fits every bundled workload in a Spark task and must
return the local path's models, parameter for parameter (the fitted JSON document's SHA-256, the
metrics and the logged params). One local[2] session serves the module.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

from kneecap import config, spark_engine, spark_fits, spark_jobs, tracking, training, warehouse
from kneecap.ingest.manifest import MANIFEST
from kneecap.ingest.smf import ingest_paths
from kneecap.ingest.store import KEYS_DIR
from tests.bundled import read_bundled
from tests.integration.spark_marks import SPARK_TESTS
from tests.smf import synth

REPO = Path(__file__).resolve().parents[2]
pytestmark = SPARK_TESTS


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("in")
    sysa, _ = synth.week_of_intervals(days=2)
    sysb, _ = synth.week_of_intervals(days=2, sid="SYSB", seed=8)
    sysa.append(synth.record_other(99, 1, "SYSA"))
    (d / "a.smf").write_bytes(synth.frame_rdw(sysa))
    (d / "b.smf.gz").write_bytes(synth.gz(synth.frame_bdw(sysa[:10] + sysb, spanned=True)))
    (d / "c_copy_of_a.smf").write_bytes((d / "a.smf").read_bytes())
    later, _ = synth.week_of_intervals(days=1, start=synth.dt.datetime(2025, 3, 5))
    (d / "d_damaged.smf").write_bytes(synth.damaged(synth.frame_rdw(later), 3))
    (d / "e_plain.bin").write_bytes(synth.frame_plain(sysa[:5]))
    return d


def _tree(out: Path) -> dict[str, bytes]:
    """Every file of an ingest folder by relative path; the manifest without its timestamps."""
    files = {}
    for f in sorted(out.rglob("*")):
        if f.is_file() and f.name != ".ingest.lock":
            files[f.relative_to(out).as_posix()] = f.read_bytes()
    lines = [json.loads(x) for x in files.pop(MANIFEST).decode().splitlines()]
    files[MANIFEST] = json.dumps([{k: v for k, v in x.items() if k != "ingested_at"} for x in lines]).encode()
    return files


def _outcome(summary):
    return [(Path(f.path).name, f.status, f.sha256, f.records, f.rows, f.duplicates, f.quarantined)
            for f in summary.files]


@pytest.fixture(scope="module")
def ingested(inputs, spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    local = ingest_paths(inputs, out / "local")
    on_spark = spark_jobs.ingest_paths(inputs, out / "spark", spark=spark)
    return out, local, on_spark


def test_spark_decode_writes_what_the_local_ingest_writes(ingested):
    out, local, on_spark = ingested
    assert [s for _, s, *_ in _outcome(local)] == ["ingested", "ingested", "skipped", "ingested", "failed"]
    assert _outcome(on_spark) == _outcome(local)
    assert local.files[1].duplicates == 10  # a.smf's first ten records, again in b.smf.gz
    assert local.files[3].quarantined > 0
    pd.testing.assert_frame_equal(on_spark.records_by_type, local.records_by_type)
    pd.testing.assert_frame_equal(on_spark.quarantine, local.quarantine)
    tree = _tree(out / "local")
    assert any(k.startswith("smf72_workload/system=SYSB/month=2025-03/") for k in tree)
    assert any(k.startswith(f"{KEYS_DIR}/") for k in tree)
    spark_tree = _tree(out / "spark")
    assert sorted(spark_tree) == sorted(tree)
    for name, data in tree.items():
        assert spark_tree[name] == data, name


def test_spark_decode_again_adds_nothing(ingested, inputs, spark):
    out, local, _ = ingested
    before = _tree(out / "spark")
    again = spark_jobs.ingest_paths(inputs, out / "spark", spark=spark)
    assert [f.status for f in again.files] == ["skipped", "skipped", "skipped", "skipped", "failed"]
    assert again.rows == {}
    assert _tree(out / "spark") == before


def test_spark_decode_finishes_a_folder_the_local_ingest_began(ingested, inputs, spark, tmp_path):
    # a.smf ingested locally first: Spark must skip it and dedup b.smf.gz against its stored keys
    out, _, _ = ingested
    ingest_paths(inputs / "a.smf", tmp_path / "mixed")
    spark_jobs.ingest_paths(inputs, tmp_path / "mixed", spark=spark)
    assert _tree(tmp_path / "mixed") == _tree(out / "local")


def test_spark_fits_the_local_models_on_the_bundled_data(spark):
    measurements, sources = read_bundled()
    marts = warehouse.build_marts(measurements, sources, sql_root=REPO / "pipelines" / "sql")
    fct, workloads = marts["fct_measurements"], marts["dim_workloads"]
    # 20 bootstrap refits, not 200: both paths draw the same refits, so they agree or differ at any count
    shipped = config.load_params(REPO / "params.yaml")
    params = dataclasses.replace(shipped, train=dataclasses.replace(shipped.train, n_boot=20))
    local = training.train_workloads(fct, workloads, params)
    on_spark = spark_fits.train_workloads(fct, workloads, params, spark=spark)
    assert len(local) >= 5
    assert [(m.workload, m.kind, m.family) for m in on_spark] == [(m.workload, m.kind, m.family) for m in local]
    for a, b in zip(on_spark, local, strict=True):
        assert tracking.fingerprint(a.results) == tracking.fingerprint(b.results), (a.workload, a.kind)
        assert a.metrics == b.metrics and a.params == b.params and a.notes == b.notes
        pd.testing.assert_frame_equal(a.competitors, b.competitors)


def test_rows_reach_a_spark_fit_as_the_local_fit_gets_them(spark):
    # the frame a task rebuilds from Arrow is the local path's, value for value and dtype for dtype
    measurements, sources = read_bundled()
    fct = warehouse.build_marts(measurements, sources, sql_root=REPO / "pipelines" / "sql")["fct_measurements"]
    rows = fct.assign(**{spark_fits.ROW: range(len(fct))})
    back = spark.createDataFrame(spark_fits._text_for_null(spark_engine.arrow_input(rows))).toPandas()
    for workload, group in back.groupby("workload"):
        got = training.workload_rows(group.sample(frac=1, random_state=1), list(fct.columns),
                                     {c: fct[c].dtype for c in fct.columns}, order=spark_fits.ROW)
        pd.testing.assert_frame_equal(got, fct[fct["workload"] == workload].reset_index(drop=True))


def test_kneecap_ingest_engine_spark(ingested, inputs, spark, tmp_path):
    from kneecap.cli import main

    out, _, _ = ingested
    # exit 1: e_plain.bin is not an SMF dump (named on stderr); the rest is ingested
    assert main(["-q", "ingest", str(inputs), "--out", str(tmp_path / "cli"), "--engine", "spark",
                 "--spark-master", "local[2]"]) == 1
    assert _tree(tmp_path / "cli") == _tree(out / "local")
