"""SMF 70.1 golden test: LPAR busy / MVS busy per processor type, by hand."""

import datetime as dt
import io

import numpy as np
import pandas as pd
import synth

from kneecap.smf import type70
from kneecap.smf.reader import decode_file

START = dt.datetime(2025, 3, 3, 9, 0)


def golden_partitions():
    own = synth.Partition("PROD1", 3, [
        synth.LogicalCPU("CP", 900, dispatch_s=450, wait_s=500),
        synth.LogicalCPU("CP", 900, dispatch_s=270, wait_s=640),
        synth.LogicalCPU("IIP", 900, dispatch_s=90, wait_s=810),
        synth.LogicalCPU("IIP", 900, dispatch_s=0, wait_s=300, parked_s=600),
    ])
    other = synth.Partition("TEST1", 4, [synth.LogicalCPU("CP", 900, dispatch_s=800)])
    return [other, own]


def test_golden_70_1():
    rec = synth.record_70_1("SYSP", "PLEX9", START, 900.0, golden_partitions(), own_number=3)
    res = decode_file(io.BytesIO(rec))
    assert res.quarantine.empty
    df = res.smf70_cpu.set_index("cpu_type")
    assert list(res.smf70_cpu.columns) == list(type70.COLUMNS)
    assert sorted(df.index) == ["CP", "IIP"]  # TEST1's CP and PHYSICAL are not this LPAR
    assert df.loc["CP", "n_online"] == 2 and df.loc["IIP", "n_online"] == 2
    assert (df["interval_start_at"] == pd.Timestamp(START)).all()
    # LPAR BUSY = sum(dispatch) / sum(online): CP (450 + 270) / 1800 = 40 %; IIP 90/1800 = 5 %
    np.testing.assert_allclose(df.loc[["CP", "IIP"], "lpar_busy_pct"], [40.0, 5.0], rtol=1e-9)
    # MVS BUSY = sum(T - parked - wait) / sum(T - parked):
    #   CP  (400 + 260) / 1800 = 36.67 %;  IIP (90 + 0) / (900 + 300) = 7.5 %
    np.testing.assert_allclose(df.loc[["CP", "IIP"], "mvs_busy_pct"], [1100 / 30, 7.5],
                               rtol=1e-9)
    np.testing.assert_allclose(df.loc["CP", "online_s"], 1800.0)


def test_broken_records_are_combined():
    # RMF splits a big 70.1 into self-contained records of the same interval (smf-notes §1.7):
    # here each record carries one CP and one zIIP of the partition.
    own = golden_partitions()[1]
    half1 = synth.Partition("PROD1", 3, [own.cpus[0], own.cpus[2]])
    half2 = synth.Partition("PROD1", 3, [own.cpus[1], own.cpus[3]])
    recs = [synth.record_70_1("SYSP", "PLEX9", START, 900.0, [p], own_number=3)
            for p in (half1, half2)]
    whole = decode_file(io.BytesIO(synth.record_70_1("SYSP", "PLEX9", START, 900.0,
                                                     [own], own_number=3))).smf70_cpu
    split = decode_file(io.BytesIO(b"".join(recs))).smf70_cpu
    assert split["n_records"].tolist() == [2, 2]
    cols = ["cpu_type", "n_online", "online_s", "lpar_busy_pct", "mvs_busy_pct"]
    pd.testing.assert_frame_equal(split[cols], whole[cols])


def test_bad_cix_is_quarantined():
    rec = bytearray(synth.record_70_1("SYSP", "PLEX9", START, 900.0, golden_partitions(), 3))
    bvs = int.from_bytes(rec[68:72], "big")
    # first logical processor of PROD1 is section index 1 (TEST1 owns index 0)
    rec[bvs + 88 + 14 : bvs + 88 + 16] = (77).to_bytes(2, "big")
    res = decode_file(io.BytesIO(bytes(rec)))
    assert res.smf70_cpu.empty
    assert "SMF70CIX 77 outside 1..4" in res.quarantine.reason.iloc[0]
    assert res.quarantine.offset.iloc[0] == bvs + 88 + 14


def _partition_at(rec: bytes, k: int) -> int:
    """Offset of the ``k``-th PR/SM partition data section (SMF70BCS + k * SMF70BCL)."""
    return int.from_bytes(rec[60:64], "big") + k * int.from_bytes(rec[64:66], "big")


def test_overlapping_logical_processor_ranges_are_quarantined():
    # issue 35 item 6: five partitions of 8 CPs, this one's SMF70BDS/SMF70BDN widened to all 40
    # sections: it was decoded as n_online CP = 40 and LPAR busy of every partition's CPs
    parts = [synth.Partition(f"LP{i}", i + 1, [synth.LogicalCPU("CP", 900, dispatch_s=100 + 100 * (i == 2))] * 8)
             for i in range(5)]
    rec = bytearray(synth.record_70_1("SYSP", "PLEX9", START, 900.0, parts, own_number=3))
    good = decode_file(io.BytesIO(bytes(rec))).smf70_cpu
    assert good["n_online"].tolist() == [8]
    np.testing.assert_allclose(good["lpar_busy_pct"], [200 / 9])
    own = _partition_at(rec, 2)
    rec[own + 10 : own + 16] = (40).to_bytes(2, "big") + (0).to_bytes(4, "big")
    res = decode_file(io.BytesIO(bytes(rec)))
    assert res.smf70_cpu.empty
    (reason,) = res.quarantine.reason
    assert reason == ("type 70.1: partition LP2 (SMF70LPN 3): logical processor sections 0..39 overlap those of "
                      "partition LP0 (SMF70LPN 1): 0..7")
    assert res.quarantine.offset.iloc[0] == own + 10


def test_logical_processor_range_past_the_sections_is_quarantined_for_any_partition():
    # another partition's SMF70BDN past the logical processor sections: the record is not consistent
    rec = bytearray(synth.record_70_1("SYSP", "PLEX9", START, 900.0, golden_partitions(), 3))
    other = _partition_at(rec, 0)  # TEST1
    rec[other + 10 : other + 12] = (99).to_bytes(2, "big")
    res = decode_file(io.BytesIO(bytes(rec)))
    assert res.smf70_cpu.empty
    assert "partition TEST1 (SMF70LPN 4): logical processor sections 0..98 but only 5" in res.quarantine.reason.iloc[0]


def test_overlapping_sections_are_quarantined():
    # the CPU control section's triplet pointing into the RMF product section: two sections share bytes
    rec = bytearray(synth.record_70_1("SYSP", "PLEX9", START, 900.0, golden_partitions(), 3))
    rec[36:40] = rec[28:32]
    res = decode_file(io.BytesIO(bytes(rec)))
    assert res.smf70_cpu.empty
    (reason,) = res.quarantine.reason
    assert reason.startswith("type 70.1: sections overlap: RMF product (bytes 100..203) and CPU control "
                             "(bytes 100..443)")
    assert res.quarantine.offset.iloc[0] == 36


def test_section_inside_the_triplets_is_quarantined():
    rec = bytearray(synth.record_70_1("SYSP", "PLEX9", START, 900.0, golden_partitions(), 3))
    rec[36:40] = (40).to_bytes(4, "big")  # the CPU control section over the triplets themselves
    res = decode_file(io.BytesIO(bytes(rec)))
    assert res.smf70_cpu.empty
    assert "sections overlap: header and triplets (bytes 0..83) and CPU control" in res.quarantine.reason.iloc[0]
