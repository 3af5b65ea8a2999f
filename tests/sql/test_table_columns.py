"""Every SQL table has exactly the columns its consumers rely on (docs drift otherwise)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kneecap import schema, warehouse
from kneecap.ingest.catalogue import DECODED_TABLES
from kneecap.validation.suites import (
    FCT_CPU_INTERVALS_COLUMNS,
    FCT_MSU_INTERVALS_COLUMNS,
    FCT_PERFORMANCE_INDEX_COLUMNS,
    FCT_RMF_DUPLICATES_COLUMNS,
    FCT_RT_BUCKETS_COLUMNS,
    FCT_SYSPLEX_PERFORMANCE_INDEX_COLUMNS,
)
from tests.bundled import read_bundled

REPO = Path(__file__).resolve().parents[2]

EXPECTED = {
    "fct_measurements": list(schema.FCT_MEASUREMENTS_COLUMNS),
    "int_smf_measurements": list(schema.FCT_MEASUREMENTS_COLUMNS),
    "fct_cpu_intervals": list(FCT_CPU_INTERVALS_COLUMNS),
    "fct_msu_intervals": list(FCT_MSU_INTERVALS_COLUMNS),
    "fct_rmf_duplicates": list(FCT_RMF_DUPLICATES_COLUMNS),
    "fct_rt_buckets": list(FCT_RT_BUCKETS_COLUMNS),
    "fct_performance_index": list(FCT_PERFORMANCE_INDEX_COLUMNS),
    "fct_sysplex_performance_index": list(FCT_SYSPLEX_PERFORMANCE_INDEX_COLUMNS),
    "dim_sources": ["source_id", "source_file", "title", "section", "table_or_figure", "units", "cpc",
                    "n_gcp", "n_ziip", "think_time_ms", "req_bytes", "resp_bytes", "workload_kind", "notes",
                    "n_points"],
    "dim_workloads": ["workload", "source_ids", "n_points", "n_with_clients", "n_with_resp", "n_with_cost",
                      "min_clients", "max_clients", "think_time_ms", "n_gcp", "min_n_ziip", "max_n_ziip",
                      "has_response_curve", "has_cost", "workload_kind"],
}


@pytest.fixture(scope="module")
def tables():
    measurements, sources = read_bundled()
    inputs = {"reference_measurements": measurements, "reference_sources": sources,
              **{name: empty() for name, empty in DECODED_TABLES.items()}}
    return warehouse.run_sql_files(warehouse.sql_files(REPO / "pipelines" / "sql"), inputs)


def test_every_sql_file_is_covered(tables):
    files = {p.stem for p in warehouse.sql_files(REPO / "pipelines" / "sql")}
    staging = {name for name in files if name.startswith("stg_")}
    assert files - staging == set(EXPECTED)


@pytest.mark.parametrize("table", sorted(EXPECTED))
def test_exact_columns(tables, table):
    assert list(tables[table].columns) == EXPECTED[table]


def test_staging_tables_keep_their_inputs_columns(tables):
    # RMF XML staging mirrors the binary SMF staging so the two union by name
    assert list(tables["stg_rmf_cpu"].columns) == list(tables["stg_smf70_cpu"].columns)
    assert list(tables["stg_rmf_workload"].columns) == list(tables["stg_smf72_workload"].columns)
    assert list(tables["stg_reference_measurements"].columns)[:3] == list(schema.KEY_COLUMNS)


def test_ibm_cost_formula_on_the_rmf_extract(tables):
    # seed 000 §3.7: 62.905 CPU s in a 59.999 s interval is 104.84% of one engine (RMF prints CP 104.86
    # from unrounded times); the extract's report class ended no transactions, so no cost per tran
    fct = tables["fct_measurements"]
    row = fct[fct["source_id"] == "seed000_rmf_extract"].iloc[0]
    assert abs(62.905 / 59.999 * 100 - row["cpu_total_pct"]) < 0.05
    assert row["ziip_eligible_pct"] == pytest.approx(104.82)
    assert row["cpu_ms_per_tran"] != row["cpu_ms_per_tran"]  # NaN: tps is 0


def test_cost_derivation_from_cpu_pct():
    # IBM: cpu_ms_per_tran = CPU% x 10 / TPS; a synthetic row with 150% at 1500 TPS costs 1 ms
    import pandas as pd

    base = {c: None for c in schema.REFERENCE_CSV_COLUMNS}
    row = {**base, "source_id": "t", "workload": "w", "point_id": "p", "tps": 1500.0, "cpu_gcp_pct": 100.0,
           "cpu_ziip_pct": 50.0, "n_gcp": 2.0, "n_ziip": 2.0, "source_file": "000_b05d0436f2156d5f.txt",
           "source_locator": "test"}
    measurements = pd.DataFrame([row])
    for c in schema.NUMERIC_COLUMNS:
        measurements[c] = pd.to_numeric(measurements[c])
    sources = pd.DataFrame([{c: None for c in warehouse.SOURCES_COLUMNS} | {"source_id": "t"}])
    out = warehouse.run_sql_files(
        warehouse.sql_files(REPO / "pipelines" / "sql"),
        {"reference_measurements": measurements, "reference_sources": sources,
         **{name: empty() for name, empty in DECODED_TABLES.items()}})
    fct = out["fct_measurements"].iloc[0]
    assert fct["cpu_total_pct"] == pytest.approx(150.0)
    assert fct["cpu_ms_per_tran"] == pytest.approx(1.0)
