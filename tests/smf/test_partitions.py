"""Partitions by month: sparse data cannot explode the file count, and day-partitioned folders still read (#35 item 7).

One record a day over 35 years made 12,697 Parquet files (one per table, system and day); by month a
decade is at most 120 folders per table and system. Folders an older kneecap wrote by day are read as
they are, alone or with month folders beside them (an old store ingested into again).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from kneecap import warehouse
from kneecap.ingest.smf import ingest_paths
from kneecap.ingest.store import table_files
from tests.rmf.stored_before import day_partitions
from tests.smf import synth

REPO = Path(__file__).resolve().parents[2]
OWN = synth.Partition("LPAR1", 1, [synth.LogicalCPU("CP", 900, 300, 590), synth.LogicalCPU("IIP", 900, 200, 700)])


def one_a_day(start: dt.date, days: int) -> bytes:
    """An RDW dump of one 70.1 record a day (at noon) for ``days`` days from ``start``."""
    noon = dt.datetime.combine(start, dt.time(12))
    return synth.frame_rdw(synth.record_70_1("SYSA", "PLEX1", noon + dt.timedelta(days=i), 900.0, [OWN], 1,
                                             ("CP", "IIP")) for i in range(days))


def _folders(table_dir: Path) -> set[Path]:
    return {f.parent for f in table_files(table_dir)}


def test_one_record_a_day_for_ten_years_is_one_folder_a_month(tmp_path):
    days = (dt.date(2020, 1, 1) - dt.date(2010, 1, 1)).days  # 3,652
    (tmp_path / "sparse.smf").write_bytes(one_a_day(dt.date(2010, 1, 1), days))
    summary = ingest_paths([tmp_path / "sparse.smf"], tmp_path / "out")
    assert summary.files[0].status == "ingested" and summary.files[0].quarantined == 0
    files = table_files(tmp_path / "out" / "smf70_cpu")
    assert len(_folders(tmp_path / "out" / "smf70_cpu")) == len(files) == 120  # was 3,652 (one a day)
    assert sorted({f.parent.name for f in files})[:2] == ["month=2010-01", "month=2010-02"]
    cpu = warehouse.read_decoded_tables(tmp_path / "out")["smf70_cpu"]
    assert len(cpu) == 2 * days  # a CP and an IIP row a day, none lost
    for f in files:  # each file holds its month only
        months = pd.read_parquet(f)["interval_start_at"].dt.strftime("%Y-%m").unique().tolist()
        assert [f"month={m}" for m in months] == [f.parent.name]


def test_a_day_partitioned_store_reads_whole_and_takes_month_partitions_beside(tmp_path):
    out = tmp_path / "out"
    (tmp_path / "old.smf").write_bytes(one_a_day(dt.date(2025, 3, 1), 10))
    (tmp_path / "new.smf").write_bytes(one_a_day(dt.date(2025, 3, 11), 25))
    with day_partitions():  # written as kneecap did before month partitions
        ingest_paths([tmp_path / "old.smf"], out)
    old = {f.parent.name for f in table_files(out / "smf70_cpu")}
    assert len(old) == 10 and all(name.startswith("date=2025-03-") for name in old)
    ingest_paths([tmp_path / "new.smf"], out)
    names = {f.parent.name for f in table_files(out / "smf70_cpu")}
    assert names == old | {"month=2025-03", "month=2025-04"}
    decoded = warehouse.read_decoded_tables(out)
    cpu = decoded["smf70_cpu"]
    assert len(cpu) == 2 * 35 and not cpu.duplicated(["system_id", "interval_start_at", "cpu_type"]).any()
    # and the marts build from it as from a month-partitioned folder
    from tests.bundled import read_bundled

    measurements, sources = read_bundled()
    marts = warehouse.build_marts(measurements, sources, decoded, sql_root=REPO / "pipelines" / "sql")
    assert (marts["fct_cpu_intervals"]["source_id"] == "smf").sum() == 2 * 35
