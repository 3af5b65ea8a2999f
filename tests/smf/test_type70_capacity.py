"""SMF 70.1 CPU control section: the capacity fields written by the test writer read back exactly."""

from __future__ import annotations

import datetime as dt
import struct
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap import warehouse
from kneecap.ingest.catalogue import DECODED_TABLES
from kneecap.smf import type70, type70_capacity
from kneecap.smf.reader import decode_file
from kneecap.validation.suites import FCT_MSU_INTERVALS_COLUMNS
from tests.bundled import read_bundled
from tests.smf import simdays, synth

REPO = Path(__file__).resolve().parents[2]
T0 = dt.datetime(2026, 3, 2, 10, 0)
CAP = synth.Capacity(cpa=601, cpa_actual=5_763_210, cpa_scaling_factor=10_000, wla=187, lac=143, mcr=1234)


def _record(capacity: synth.Capacity | None = CAP, start: dt.datetime = T0) -> bytes:
    own = synth.Partition("LPAR1", 1, [synth.LogicalCPU("CP", 900.0, 450.0, 450.0),
                                       synth.LogicalCPU("IIP", 900.0, 90.0, 810.0)])
    return synth.record_70_1("SYSA", "PLEX1", start, 900.0, [own], own_number=1, capacity=capacity)


def _decode(records: list[bytes], tmp_path: Path):
    path = tmp_path / "capacity.smf"
    path.write_bytes(synth.frame_rdw(records))
    return decode_file(path)


def test_capacity_fields_read_back_exactly():
    (row,) = type70.decode_record(_record())[type70_capacity.TABLE]
    assert (row["cpu_adjustment_factor"], row["cpa_actual"], row["cpa_scaling_factor"]) == (601, 5_763_210, 10_000)
    assert (row["wla_msu_per_h"], row["lac_msu_per_h"], row["model_capacity_msu_per_h"]) == (187, 143, 1234)
    assert row["is_lac_without_wait"] is True and row["cpu_family"] == 8562
    # SMF70CPA_actual / SMF70CPA_scaling_factor replaces SMF70CPA: 16 / 576.321 MSU per CPU second
    assert row["msu_per_cpu_s"] == 16.0 / (5_763_210 / 10_000)
    assert (row["system_id"], row["interval_start_at"], row["interval_s"]) == ("SYSA", T0, 900.0)


def test_without_the_actual_factor_smf70cpa_is_used_and_without_any_nothing_is_reckoned():
    (old,) = type70.decode_record(_record(synth.Capacity(cpa=576, lac=12)))[type70_capacity.TABLE]
    assert old["msu_per_cpu_s"] == 16.0 / 576
    (none,) = type70.decode_record(_record(synth.Capacity()))[type70_capacity.TABLE]
    assert np.isnan(none["msu_per_cpu_s"])


def test_an_older_short_section_gives_its_first_fields_and_the_batch_decoder_agrees(tmp_path):
    rec = bytearray(_record())
    struct.pack_into(">H", rec, 40, 40)  # SMF70CCL: a 40-byte CPU control section (before SMF70MCR)
    short = bytes(rec)
    (row,) = type70.decode_record(short)[type70_capacity.TABLE]
    assert (row["cpa_actual"], row["model_capacity_msu_per_h"], row["lac_msu_per_h"]) == (0, 0, 143)
    assert row["msu_per_cpu_s"] == 16.0 / 601
    # the batch decoder hands the short one to decode_record and keeps record order
    late = bytearray(_record(start=T0 + dt.timedelta(minutes=30)))
    struct.pack_into(">H", late, 40, 40)
    res = _decode([_record(), _record(start=T0 + dt.timedelta(minutes=15)), bytes(late)], tmp_path)
    cap = res.tables[type70_capacity.TABLE]
    assert cap["interval_start_at"].tolist() == [pd.Timestamp(T0 + dt.timedelta(minutes=m)) for m in (0, 15, 30)]
    assert cap["cpa_actual"].tolist() == [5_763_210, 5_763_210, 0]
    assert list(cap.columns) == list(type70_capacity.COLUMNS)


def test_a_control_section_past_the_record_is_quarantined_and_the_others_kept(tmp_path):
    bad = bytearray(_record(start=T0 + dt.timedelta(minutes=15)))
    struct.pack_into(">H", bad, 40, 60_000)  # SMF70CCL far past the record's end
    res = _decode([_record(), bytes(bad), _record(start=T0 + dt.timedelta(minutes=30))], tmp_path)
    assert len(res.quarantine) == 1
    assert "CPU control" in res.quarantine["reason"].iloc[0]
    assert len(res.tables[type70_capacity.TABLE]) == 2 and len(res.smf70_cpu) == 4


@pytest.fixture(scope="module")
def simulated():
    records, truth = simdays.simulated_days(days=2)
    with tempfile.TemporaryDirectory() as tmp:
        res = _decode(records, Path(tmp))
    assert res.quarantine.empty
    measurements, sources = read_bundled()
    inputs = {name: empty() for name, empty in DECODED_TABLES.items()}
    inputs.update(res.tables, reference_measurements=measurements, reference_sources=sources)
    marts = warehouse.run_sql_files(warehouse.sql_files(REPO / "pipelines" / "sql"), inputs)
    return marts, truth


def test_the_mart_carries_the_written_lac_and_the_lpar_msu(simulated):
    marts, truth = simulated
    fct = marts["fct_msu_intervals"]
    per = truth.per_interval
    assert list(fct.columns) == list(FCT_MSU_INTERVALS_COLUMNS)
    assert fct["interval_start_at"].tolist() == per["interval_start_at"].tolist()
    assert (fct["lac_msu_per_h"].to_numpy() == np.asarray(per["lac_msu_per_h"], float)).all()
    assert (fct["msu_per_cpu_s"] == simdays.CAPACITY.msu_per_cpu_s).all()
    # dispatch times are written in whole microseconds on each logical CP: 1e-9 relative
    np.testing.assert_allclose(fct["lpar_msu_per_h"], per["lpar_msu_per_h"], rtol=1e-9)


def test_the_msu_suite_passes_the_mart_and_refuses_a_negative_figure(simulated):
    from kneecap.validation import validate_tables

    marts, _ = simulated
    fct = marts["fct_msu_intervals"]
    assert validate_tables({"fct_msu_intervals": fct}).success
    broken = fct.copy()
    broken.loc[3, "lpar_msu_per_h"] = -1.0
    report = validate_tables({"fct_msu_intervals": broken})
    assert not report.success
    assert any("lpar_msu_per_h" in str(f) for f in report.failures)
