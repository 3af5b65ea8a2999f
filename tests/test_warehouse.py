"""Reading measurement CSVs (typed rows, errors that name file:line: column: problem) and publishing
marts as snapshots readers see whole."""

from __future__ import annotations

import json
import re
import subprocess
import sys
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


def _drop_columns(path: Path, *columns: str) -> None:
    text = path.read_text().splitlines()
    header = text[0].split(",")
    drop = {header.index(c) for c in columns}
    path.write_text("\n".join(",".join(c for i, c in enumerate(line.split(",")) if i not in drop)
                              for line in text) + "\n")


def test_missing_required_column_is_named(tmp_path: Path) -> None:
    path = write_reference_csv(tmp_path / "t.csv", closed_rows("t"))
    _drop_columns(path, "workload")
    with pytest.raises(warehouse.ReferenceDataError, match=re.escape(f"{path}:1: workload: missing column")):
        warehouse.read_measurement_csv(path)


def test_a_table_without_its_load_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("workload,resp_ms\nw,1.0\n")
    with pytest.raises(warehouse.ReferenceDataError,
                       match=re.escape(f"{path}:1: clients/tps: missing column: a table needs the load")):
        warehouse.read_measurement_csv(path)


def test_a_minimal_table_reads_with_the_stated_defaults(tmp_path: Path) -> None:
    path = tmp_path / "my_lpar.csv"
    path.write_text("resp_ms,clients,workload\n1.5,10,w\n\n2.5,20,w\n")  # any order; a blank line
    frame = warehouse.read_measurement_csv(path)
    assert list(frame.columns) == [*schema.REFERENCE_CSV_COLUMNS, "source_line"]
    assert frame["source_id"].tolist() == ["my_lpar", "my_lpar"]
    assert frame["point_id"].tolist() == ["line2", "line4"] and frame["source_line"].tolist() == [2, 4]
    assert frame["clients"].tolist() == [10.0, 20.0] and frame["tps"].isna().all()
    assert frame["transport"].tolist() == [None, None]  # text columns stay text for DuckDB


def test_an_unknown_column_gets_the_nearest_known_name(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("workload,clients,resp_time_ms,resp_ms,resp_ms\nw,1,2,3,4\n")
    with pytest.raises(warehouse.ReferenceDataError) as err:
        warehouse.read_measurement_csv(path)
    assert f"{path}:1: resp_time_ms: unknown column; did you mean 'resp_ms'?" in str(err.value)
    assert f"{path}:1: resp_ms: column appears more than once" in str(err.value)


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


# --- Publication ---------------------------------------------------------------------------------

#: Run in a separate process by the concurrency test: publish generations 1..n of four tables, each
#: row carrying its generation number, as fast as it can (argv: folder, n).
PUBLISHER = """
import sys
import pandas as pd
from kneecap import warehouse
out, n = sys.argv[1], int(sys.argv[2])
for g in range(1, n + 1):
    # sizes vary with g so that the files, and their write times, differ from one generation to the next
    warehouse.write_tables({t: pd.DataFrame({"generation": [g] * (200 + 37 * (g % 7) + 11 * i),
                                             "x": range(200 + 37 * (g % 7) + 11 * i)})
                            for i, t in enumerate(("fct_a", "fct_b", "dim_c", "dim_d"))}, out)
"""


def _tables(g: int) -> dict[str, pd.DataFrame]:
    return {"fct_a": pd.DataFrame({"generation": [g, g]}), "dim_b": pd.DataFrame({"generation": [g]})}


def _files(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (relative path -> bytes): what DVC hashes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_a_reader_never_sees_two_generations_while_a_publisher_runs(tmp_path: Path) -> None:
    # Fails on the old write_tables (it os.replace'd the files one by one): within a few dozen
    # publishes the reader got fct_a of one generation beside dim_c of the one before.
    out = tmp_path / "processed"
    publisher = subprocess.Popen([sys.executable, "-c", PUBLISHER, str(out), "150"], stderr=subprocess.PIPE,
                                 text=True)
    seen, mixed, failures = [], [], []
    try:
        while publisher.poll() is None:
            try:
                tables = warehouse.read_parquet_dir(out)
            except Exception as exc:  # noqa: BLE001 - any failure of a read is what the test counts
                failures.append(repr(exc))
                continue
            if not tables:  # before the first publish
                continue
            generations = {t: set(f["generation"]) for t, f in tables.items()}
            if set(tables) != {"fct_a", "fct_b", "dim_c", "dim_d"} or len(set().union(*generations.values())) != 1:
                mixed.append(generations)
            else:
                seen.append(next(iter(generations["fct_a"])))
    finally:
        _, err = publisher.communicate(timeout=300)
    assert publisher.returncode == 0, err
    assert not failures, failures[:3]
    assert not mixed, f"{len(mixed)} reads mixed generations, e.g. {mixed[:3]}"
    # the reads overlapped many publishes (else the test proved nothing), and never went back in time
    assert len(set(seen)) >= 10, sorted(set(seen))
    assert seen == sorted(seen)
    assert warehouse.read_snapshot(out).tables["fct_a"]["generation"].iloc[0] == 150


def test_a_failed_publish_leaves_the_previous_snapshot_readable(tmp_path: Path) -> None:
    out = tmp_path / "processed"
    warehouse.write_tables(_tables(1), out)
    before = _files(out)

    class Unwritable(pd.DataFrame):
        def to_parquet(self, *args: object, **kwargs: object) -> None:
            raise OSError("disk full")

    # the first table is written, the second cannot be
    with pytest.raises(OSError, match="disk full"):
        warehouse.write_tables({"fct_a": pd.DataFrame({"generation": [2]}), "dim_b": Unwritable({"x": [1]})}, out)
    snapshot = warehouse.read_snapshot(out)
    assert {t: f["generation"].tolist() for t, f in snapshot.tables.items()} == {"fct_a": [1, 1], "dim_b": [1]}
    assert _files(out) == before  # no staging folder or half generation left in the DVC output


def test_a_failed_pointer_swap_leaves_no_orphan_generation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "processed"
    warehouse.write_tables(_tables(1), out)
    before = _files(out)

    def refuse(*args: object) -> None:
        raise OSError("read-only file system")

    monkeypatch.setattr(warehouse.os, "replace", refuse)
    with pytest.raises(OSError, match="read-only file system"):
        warehouse.write_tables(_tables(2), out)
    monkeypatch.undo()
    assert warehouse.read_table(out, "fct_a")["generation"].tolist() == [1, 1]
    assert _files(out) == before


def test_republishing_the_same_content_changes_nothing_on_disk(tmp_path: Path) -> None:
    out = tmp_path / "processed"
    warehouse.write_tables(_tables(1), out)
    first = warehouse.write_tables(_tables(2), out)
    before = _files(out)
    # same tables in another order: same generation, byte for byte the same folder (DVC sees no change)
    again = warehouse.write_tables(dict(reversed(_tables(2).items())), out)
    assert _files(out) == before
    assert sorted(again) == sorted(first)
    # content seen before (1, 2, then 1 again) comes back under its old name, reusing the kept folder
    gen1 = json.loads(before["current.json"])["previous"]
    warehouse.write_tables(_tables(1), out)
    assert warehouse.current_generation(out) == gen1
    assert warehouse.read_table(out, "dim_b")["generation"].tolist() == [1]


def test_only_the_current_and_previous_generations_stay(tmp_path: Path) -> None:
    out = tmp_path / "processed"
    names = []
    for g in range(1, 5):
        warehouse.write_tables(_tables(g), out)
        names.append(warehouse.current_generation(out))
    assert len(set(names)) == 4
    assert sorted(p.name for p in out.iterdir()) == sorted([names[2], names[3], warehouse.MANIFEST])
    manifest = json.loads((out / warehouse.MANIFEST).read_text())
    assert manifest == {"format": 1, "generation": names[3], "previous": names[2], "tables": ["dim_b", "fct_a"]}
    # leftovers of a publish killed half way are swept by the next one
    (out / ".staging-dead").mkdir()
    (out / ".staging-dead" / "fct_a.parquet").write_bytes(b"half")
    (out / f".{warehouse.MANIFEST}.dead.tmp").write_text("{")
    warehouse.write_tables(_tables(5), out)
    assert sorted(p.name for p in out.iterdir()) == sorted([names[3], warehouse.current_generation(out),
                                                            warehouse.MANIFEST])


def test_a_plain_folder_from_an_older_kneecap_still_reads(tmp_path: Path) -> None:
    out = tmp_path / "processed"
    out.mkdir()
    for name, frame in _tables(0).items():
        frame.to_parquet(out / f"{name}.parquet", index=False)
    snapshot = warehouse.read_snapshot(out)
    assert snapshot.generation is None and snapshot.tables["fct_a"]["generation"].tolist() == [0, 0]
    assert warehouse.read_table(out, "dim_b")["generation"].tolist() == [0]
    # the first snapshot keeps the plain files as the previous one; the second removes them
    warehouse.write_tables(_tables(1), out)
    assert (out / "fct_a.parquet").exists() and warehouse.read_table(out, "fct_a")["generation"].iloc[0] == 1
    warehouse.write_tables(_tables(2), out)
    assert not list(out.glob("*.parquet"))
    assert warehouse.read_parquet_dir(out)["fct_a"]["generation"].iloc[0] == 2


def test_a_reader_whose_generation_was_removed_reads_the_current_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "processed"
    warehouse.write_tables(_tables(1), out)
    stale = warehouse._resolve(out)
    for g in (2, 3):  # two publishes: generation 1 is gone
        warehouse.write_tables(_tables(g), out)
    resolve, calls = warehouse._resolve, []

    def slow_reader(directory: Path) -> tuple[str | None, dict[str, Path]]:
        # the first resolution is the one a reader made before those two publishes
        calls.append(directory)
        return stale if len(calls) == 1 else resolve(directory)

    monkeypatch.setattr(warehouse, "_resolve", slow_reader)
    snapshot = warehouse.read_snapshot(out)
    assert len(calls) == 2
    assert snapshot.generation == warehouse.current_generation(out)
    assert {t: f["generation"].iloc[0] for t, f in snapshot.tables.items()} == {"fct_a": 3, "dim_b": 3}


def test_a_missing_mart_or_a_bad_name_or_manifest_is_named(tmp_path: Path) -> None:
    out = tmp_path / "processed"
    with pytest.raises(FileNotFoundError, match=r"fct_a\.parquet: no such mart; run `dvc repro`"):
        warehouse.read_table(out, "fct_a")
    assert warehouse.read_snapshot(out) == warehouse.Snapshot(None, {})
    with pytest.raises(ValueError, match=r"table names must be identifiers .*'\.\./evil'"):
        warehouse.write_tables({"../evil": pd.DataFrame({"x": [1]})}, out)
    warehouse.write_tables(_tables(1), out)
    with pytest.raises(FileNotFoundError, match=r"dim_z\.parquet: no such mart"):
        warehouse.read_snapshot(out, ["fct_a", "dim_z"])
    (out / warehouse.MANIFEST).write_text(json.dumps({"generation": "../../etc", "tables": ["passwd"]}))
    with pytest.raises(ValueError, match=r"current\.json: not a kneecap snapshot manifest \(bad generation"):
        warehouse.read_snapshot(out)
    (out / warehouse.MANIFEST).write_text("{")
    with pytest.raises(ValueError, match=r"current\.json: not a kneecap snapshot manifest"):
        warehouse.read_table(out, "fct_a")


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
        "interval_start_at", "lpar_gcp_busy_pct", "lpar_ziip_busy_pct", *schema.SAMPLE_COLUMNS, *schema.ENGINE_COLUMNS
    }
