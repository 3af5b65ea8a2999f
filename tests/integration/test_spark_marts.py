"""The marts' SQL runs unchanged on DuckDB and on Spark SQL, and both engines build the same tables.

The SQL files under pipelines/sql run once in DuckDB (kneecap.warehouse) and once on Spark,
transpiled by sqlglot as they run (kneecap.spark_engine), on the bundled data: the reference
tables and the RMF Postprocessor reports under data/raw, decoded as the decode_smf stage decodes
them. Nothing bundled is binary SMF or a Workload Activity report, so two synthetic inputs the
other tests use join them (two days of SMF 70.1/72.3 of two systems of one sysplex from
tests/smf/synth.py, the WLMGL report of tests/rmf/test_postprocessor_wlmgl.py), ingested into the
same folder: every SQL file then has rows to compute. DuckDB gets the decoded tables as frames the
driver reads; Spark reads the partitioned Parquet folder itself. One local[2] Spark session serves
the module.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kneecap import spark_engine, warehouse
from kneecap.ingest.cli import run_ingest
from kneecap.ingest.store import table_files
from kneecap.validation.suites import SUITES
from tests.integration.spark_marks import SPARK_TESTS
from tests.rmf.stored_before import store_report_unchecked
from tests.rmf.test_postprocessor_wlmgl import SYNTHETIC_WLMGL
from tests.smf import synth
from tests.stages import load_stage

REPO = Path(__file__).resolve().parents[2]
SQL = REPO / "pipelines" / "sql"
TABLES = [p.stem for p in warehouse.sql_files(SQL)]
pytestmark = SPARK_TESTS


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """(measurements, sources, decoded folder): the bundled data plus the two synthetic inputs, ingested."""
    measurements, sources = warehouse.read_reference_dir(REPO / "data" / "reference")
    smf_dir = tmp_path_factory.mktemp("smf")
    assert run_ingest([str(REPO / "data" / "raw")], out_dir=str(smf_dir), quiet=True, allow_failed=True) == 0
    raw = tmp_path_factory.mktemp("synthetic")
    records, _ = synth.week_of_intervals(days=2)
    # and the same class on a second system of the sysplex: fct_sysplex_performance_index sums the two
    records += synth.week_of_intervals(days=2, sid="SYSB", seed=8)[0]
    (raw / "week.smf").write_bytes(synth.frame_rdw(records))
    (raw / "synthetic-wlmgl.xml").write_text(SYNTHETIC_WLMGL, encoding="utf-8")
    assert run_ingest([str(raw)], out_dir=str(smf_dir), quiet=True) == 0
    # and one report stored a second time, saved with CRLF line ends, as a kneecap that compared only
    # bytes and partitioned by day stored it: both engines read day and month folders side by side,
    # keep one row per key and count the rest (fct_rmf_duplicates)
    again = raw / "saved-again.xml"
    again.write_bytes((REPO / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-small-RPRT-20220412.xml").read_bytes()
                      .replace(b"\n", b"\r\n"))
    old = store_report_unchecked(smf_dir, again)
    decoded = warehouse.read_decoded_tables(smf_dir)
    assert all(len(decoded[name]) for name in ("rmf_cpu", "rmf_partition", "rmf_workload",
                                                "smf70_cpu", "smf72_workload"))
    # the contract: every decoded table lies in system and month partitions (but the old copy's, by day)
    for name in decoded:
        assert all(f.parent.parent.name.startswith("system=")
                   and f.parent.name.startswith("date=" if f.name.startswith(old) else "month=")
                   for f in table_files(smf_dir / name))
    return measurements, sources, smf_dir


@pytest.fixture(scope="module")
def built(inputs, spark):
    """Every table of the SQL, built by each engine: (duckdb, spark)."""
    measurements, sources, smf_dir = inputs
    # DuckDB from the frames the driver reads, Spark from the partitioned dataset it reads itself
    return (warehouse.build_marts(measurements, sources, warehouse.read_decoded_tables(smf_dir), sql_root=SQL),
            spark_engine.build_marts(measurements, sources, sql_root=SQL, decoded_dir=smf_dir, spark=spark))


def test_both_engines_build_every_table_with_rows(built):
    duck, spark = built
    assert list(duck) == list(spark) == TABLES
    assert all(len(duck[name]) for name in TABLES)
    assert (duck["fct_sysplex_performance_index"]["n_systems"] == 2).any()  # the sums have two systems to add


#: Marts that sum doubles over rows (fct_sysplex_performance_index: the systems' response time):
#: Spark may add three or more in another order than DuckDB, which moves the last bits only.
SUMS_OF_DOUBLES = {"fct_sysplex_performance_index"}


@pytest.mark.parametrize("table", sorted(SUITES))
def test_a_published_mart_is_identical(built, table):
    # exact: same columns, dtypes, row order (each mart ends in an order by) and bits. No float
    # tolerance is needed: per row both engines evaluate the same IEEE double operations in the
    # same order, and the other marts aggregate only with count/min/max. (A sum or avg of doubles
    # over Spark's partitions could differ in the last bits: those marts are compared with rtol=1e-9.)
    duck, spark = built
    if table in SUMS_OF_DOUBLES:
        pd.testing.assert_frame_equal(spark[table], duck[table], check_exact=False, rtol=1e-9)
    else:
        pd.testing.assert_frame_equal(spark[table], duck[table], check_exact=True)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns), na_position="last", kind="stable").reset_index(drop=True)


@pytest.mark.parametrize("table", [t for t in TABLES if t not in SUITES])
def test_a_staging_or_intermediate_table_is_identical_but_for_row_order(built, table):
    # these end in no order by, so each engine returns its rows in its own order
    duck, spark = built
    pd.testing.assert_frame_equal(_sorted(spark[table]), _sorted(duck[table]), check_exact=True)


def test_the_stage_runs_on_the_engine_the_environment_names(spark, tmp_path, monkeypatch, capsys):
    # the DVC stage as `dvc repro` runs it, with params.yaml saying duckdb: KNEECAP_ENGINE=spark
    # switches it (reusing the module's session), and both runs publish byte-identical Parquet
    stage = load_stage("build_marts")
    args = ["--reference", str(REPO / "data" / "reference"), "--sql", str(SQL),
            "--smf", str(tmp_path / "no-smf"), "--params", str(REPO / "params.yaml")]
    monkeypatch.delenv("KNEECAP_ENGINE", raising=False)
    assert stage.main([*args, "--out", str(tmp_path / "duckdb")]) == 0
    assert "on duckdb" in capsys.readouterr().out
    monkeypatch.setenv("KNEECAP_ENGINE", "spark")
    monkeypatch.setenv("KNEECAP_SPARK_MASTER", "local[2]")
    assert stage.main([*args, "--out", str(tmp_path / "spark")]) == 0
    assert "on spark (local[2])" in capsys.readouterr().out
    # a generation is named by the SHA-256 of its tables' bytes
    assert warehouse.current_generation(tmp_path / "spark") == warehouse.current_generation(tmp_path / "duckdb")
