"""The bundled measurement tables: format, row counts, provenance, and the seeds' own physics."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest

from kneecap import schema, warehouse

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
TABLES = sorted(p for p in REFERENCE.glob("*.csv") if p.name != "sources.csv")

# rows transcribed per table (counted in the seed text, see data/reference/README.md)
ROW_COUNTS = {
    "seed004_table1": 5, "seed004_table2": 2, "seed000_tps": 15, "seed000_rmf_extract": 1,
    "seed000_comm_stub": 6, "seed001_rest_cost": 4, "seed001_roundtrip": 8,
    "seed001_console_vs_rest": 9, "seed003_transports": 12,
}


def _all() -> pd.DataFrame:
    measurements, _ = warehouse.read_reference_dir(REFERENCE)
    return measurements


def test_every_table_has_the_exact_header_and_row_count():
    assert {p.stem for p in TABLES} == set(ROW_COUNTS)
    for path in TABLES:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        assert tuple(rows[0]) == schema.REFERENCE_CSV_COLUMNS, path.name
        assert len(rows) - 1 == ROW_COUNTS[path.stem], path.name


def test_sources_cover_every_table_and_nothing_else():
    sources = warehouse.read_sources_csv(REFERENCE / "sources.csv")
    assert set(sources["source_id"]) == set(ROW_COUNTS)
    assert sources[["source_file", "table_or_figure", "units"]].notna().all().all()


def test_every_row_cites_its_seed():
    frame = _all()
    assert frame["source_file"].str.fullmatch(r"\d{3}_[0-9a-f]{16}\.txt").all()
    assert frame["source_locator"].notna().all() and (frame["source_locator"].str.len() > 5).all()
    assert (frame["source_id"] == frame["source_id"]).all()


@pytest.mark.parametrize("source_id", ["seed004_table1", "seed004_table2", "seed003_transports"])
def test_littles_law_holds_on_closed_tables(source_id):
    # N = X (R + Z): seed 004 100 clients / (0.2 s + 1.06 ms) = 497.4 TPS vs "~500";
    # LegStar 19.5 TPS x 0.101 s = 1.97 of 2 clients
    frame = _all()
    rows = frame[frame["source_id"] == source_id]
    n_from_law = rows["tps"] * (rows["resp_ms"] + rows["think_time_ms"]) / 1000.0
    rel_err = (n_from_law - rows["clients"]).abs() / rows["clients"]
    assert (rel_err < 0.04).all(), rel_err.max()


def test_duplicates_are_marked_once():
    frame = _all()
    dup = frame[frame["duplicate_of"].notna()]
    assert dup["point_id"].tolist() == ["c500_z2"]
    source, point = dup["duplicate_of"].iloc[0].split(":")
    original = frame[(frame["source_id"] == source) & (frame["point_id"] == point)]
    assert original[["clients", "tps", "resp_ms", "n_ziip"]].to_numpy().tolist() == \
        dup[["clients", "tps", "resp_ms", "n_ziip"]].to_numpy().tolist()


def test_no_chart_values_were_invented():
    frame = _all()
    # seed 000 prints response times only in Figure 16 (a chart): they must stay missing
    assert frame.loc[frame["source_id"] == "seed000_tps", "resp_ms"].isna().all()
    # the "<10 queues" column is not a number
    lt10 = frame[frame["point_id"].str.endswith("_qlt10")]
    assert len(lt10) == 2 and lt10["n_queues"].isna().all()


@pytest.mark.skipif(not SEEDS.is_dir(), reason="seed documents not beside this checkout")
def test_spot_values_appear_in_the_seed_text():
    frame = _all()
    checks = {
        "004_30fd347cf9df2afe.txt": [r"400 ~1960 3\.32 ms", r"500 2 GCPs, 3 zIIPs ~2480 1\.63 ms"],
        "000_b05d0436f2156d5f.txt": [r"CPU\s+62\.905", r"0\.197\s+0\.210\s+0\.228", r"TPS:\s+500\s+750\s+1000\s+1250\s+1500"],
        "001_1c09812f39c46e11.txt": [r"Filtered data 33 119 210 309", r"REST API \(full data\) 195 370 561",
                                     r"/qmgr/\{qmgrName\}/queue 126"],
        "003_7ae65eb617d57ff5.txt": [r"Socket\s+\| Yes\s+\|TS 3\.1\s+\| 36\.2\s+\| 54"],
    }
    for name, patterns in checks.items():
        text = (SEEDS / name).read_text(encoding="utf-8")
        for pattern in patterns:
            assert re.search(pattern, text), f"{name}: {pattern}"
    # and the transcribed numbers are those
    row = frame[(frame["source_id"] == "seed004_table1") & (frame["point_id"] == "c400")].iloc[0]
    assert (row["tps"], row["resp_ms"]) == (1960, 3.32)
    rmf = frame[frame["source_id"] == "seed000_rmf_extract"].iloc[0]
    assert (rmf["cpu_s"], rmf["interval_s"], rmf["cpu_gcp_pct"], rmf["ziip_eligible_on_gcp_pct"]) == \
        (62.905, 59.999, 104.86, 104.82)
