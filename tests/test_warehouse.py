"""Reading measurement CSVs: typed rows, and errors that name file:line: column: problem."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap import schema, warehouse
from tests.conftest import closed_rows, write_reference_csv


def test_reads_typed_rows(reference_dir: Path) -> None:
    measurements, sources = warehouse.read_reference_dir(reference_dir)
    assert len(measurements) == 5
    assert list(sources["source_id"]) == ["demo_closed"]
    assert measurements["clients"].dtype == np.float64
    assert np.isnan(measurements.loc[0, "cpu_total_pct"])  # empty cell = not printed
    assert measurements["source_line"].tolist() == [2, 3, 4, 5, 6]


def test_missing_column_is_named(tmp_path: Path) -> None:
    path = write_reference_csv(tmp_path / "t.csv", closed_rows("t"))
    text = path.read_text().splitlines()
    header = text[0].split(",")
    drop = header.index("tps")
    lines = [",".join(c for i, c in enumerate(line.split(",")) if i != drop) for line in text]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(warehouse.ReferenceDataError, match=re.escape(f"{path}:1: tps: missing column")):
        warehouse.read_measurement_csv(path)


@pytest.mark.parametrize(
    ("value", "problem"),
    [("abc", "'abc' is not a number"), ("-5", "-5 is negative"), ("inf", "'inf' is not finite")],
)
def test_bad_cell_is_named_by_line_and_column(tmp_path: Path, value: str, problem: str) -> None:
    rows = closed_rows("t")
    rows[2]["tps"] = value
    path = write_reference_csv(tmp_path / "t.csv", rows)
    with pytest.raises(warehouse.ReferenceDataError, match=re.escape(f"{path}:4: tps: {problem}")):
        warehouse.read_measurement_csv(path)


def test_duplicate_point_id_is_reported(tmp_path: Path) -> None:
    rows = closed_rows("t")
    rows[1]["point_id"] = rows[0]["point_id"]
    path = write_reference_csv(tmp_path / "t.csv", rows)
    with pytest.raises(warehouse.ReferenceDataError, match=r":3: point_id: 'c10' repeats line 2"):
        warehouse.read_measurement_csv(path)


def test_table_missing_from_sources_is_reported(reference_dir: Path) -> None:
    write_reference_csv(reference_dir / "orphan.csv", closed_rows("orphan"))
    with pytest.raises(warehouse.ReferenceDataError, match="orphan.*has no row in sources.csv"):
        warehouse.read_reference_dir(reference_dir)


def test_write_tables_is_all_or_nothing(tmp_path: Path) -> None:
    out = tmp_path / "processed"
    warehouse.write_tables({"a": pd.DataFrame({"x": [1]})}, out)

    class Unwritable(pd.DataFrame):
        def to_parquet(self, *args: object, **kwargs: object) -> None:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        warehouse.write_tables({"a": pd.DataFrame({"x": [2]}), "b": Unwritable({"y": [1]})}, out)
    assert pd.read_parquet(out / "a.parquet")["x"].tolist() == [1]
    assert not (out / "b.parquet").exists()


def test_run_sql_files_binds_inputs_and_chains_results(tmp_path: Path) -> None:
    (tmp_path / "first.sql").write_text("select x * 2 as y from src where x > $min_x")
    (tmp_path / "second.sql").write_text("select sum(y) as total from first")
    out = warehouse.run_sql_files(
        [tmp_path / "first.sql", tmp_path / "second.sql"],
        {"src": pd.DataFrame({"x": [1, 2, 3]})},
        params={"min_x": 1, "unused": 0},
    )
    assert out["first"]["y"].tolist() == [4, 6]
    assert out["second"]["total"].tolist() == [10]


def test_reference_header_is_the_schema() -> None:
    assert schema.REFERENCE_CSV_COLUMNS[:3] == schema.KEY_COLUMNS
    assert set(schema.FCT_MEASUREMENTS_COLUMNS) - set(schema.REFERENCE_CSV_COLUMNS) == {
        "interval_start_at", "lpar_gcp_busy_pct", "lpar_ziip_busy_pct", *schema.SAMPLE_COLUMNS
    }
