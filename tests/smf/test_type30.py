"""SMF 30 subtype 2/3 decoder on records built byte by byte from the IBM mapping.

Every expected value is a hand conversion of the bytes written here (units from IBM's
"Processor accounting section": hundredths of a second; TOD clock: bit 51 = 1 µs).
"""

from __future__ import annotations

import datetime as dt
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kneecap.smf.framing import SMFDataError
from kneecap.smf.type30 import COLUMNS, TABLE, Type30Interval, decode_record

CP = "cp037"
# 2025-02-01 12:30:00 UTC as a TOD clock value: microseconds since 1900-01-01 << 12
ISS_US = int((dt.datetime(2025, 2, 1, 12, 30) - dt.datetime(1900, 1, 1)).total_seconds()) * 10**6


def e(text: str, n: int) -> bytes:
    return text.ljust(n).encode(CP)


def build30(
    *,
    subtype: int = 2,
    job: str = "ZCONSRV1",
    cpt: int = 12345,
    cps: int = 678,
    toz: int = 45000,
    zoc: int = 1250,
    snf: int = 512,
    interval_s: int = 900,
    ist_cs: int = 4_500_000,
    idt: bytes = bytes.fromhex("0125032F"),
    perf_len: int = 220,
) -> bytes:
    """One SMF 30 record: header + triplets, subsystem, identification, processor, performance."""
    sub = bytearray(40)
    struct.pack_into(">H", sub, 0, subtype)
    sub[4:6] = e("05", 2)
    sub[6:14] = e("IBM MVS", 8)
    sub[22:30] = e("SYSA", 8)
    sub[30:38] = e("PLEX1", 8)

    ident = bytearray(188)
    ident[0:8] = e(job, 8)
    ident[8:16] = e("BPXBATSL", 8)
    ident[16:24] = e("STEP1", 8)
    ident[32:40] = e("STC01234", 8)
    struct.pack_into(">H", ident, 40, 1)
    struct.pack_into(">QQ", ident, 148, ISS_US << 12, (ISS_US + interval_s * 10**6) << 12)

    cpu = bytearray(188)
    struct.pack_into(">II", cpu, 4, cpt, cps)
    struct.pack_into(">I", cpu, 36, ist_cs)
    cpu[40:44] = idt
    struct.pack_into(">III", cpu, 44, 7, 3, 0)  # IIP, RCT, HPT
    struct.pack_into(">I", cpu, 116, toz)
    struct.pack_into(">I", cpu, 128, zoc)

    perf = bytearray(perf_len)
    struct.pack_into(">III", perf, 0, 98765, 54321, 4321)
    perf[36:44] = e("ONLINE", 8)
    perf[44:52] = e("ZCONHI", 8)
    perf[60:68] = e("RZCON", 8)
    if perf_len >= 138:
        struct.pack_into(">H", perf, 136, snf)

    header_len = 88
    sections = [(24, sub), (32, ident), (56, cpu), (80, perf)]
    body = bytearray(header_len)
    pos = header_len
    for at, sec in sections:
        struct.pack_into(">IHH", body, at, pos, len(sec), 1)
        pos += len(sec)
    rec = body + b"".join(bytes(s) for _, s in sections)
    struct.pack_into(">HHBB", rec, 0, len(rec), 0, 0x5E, 30)
    struct.pack_into(">I", rec, 6, 4_590_000)
    rec[10:14] = bytes.fromhex("0125032F")
    rec[14:18] = e("SYSA", 4)
    rec[18:22] = e("STC", 4)
    struct.pack_into(">H", rec, 22, subtype)
    return bytes(rec)


def batch(*recs: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    buf = b"".join(recs)
    lengths = np.array([len(r) for r in recs], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return np.frombuffer(buf, np.uint8), starts, lengths


def test_golden_interval_record():
    row = decode_record(build30())
    assert row["system_id"] == "SYSA" and row["sysplex"] == "PLEX1"
    assert (row["job_name"], row["program"], row["step_name"], row["job_id"]) == (
        "ZCONSRV1", "BPXBATSL", "STEP1", "STC01234")
    assert (row["work_type"], row["subtype"], row["step_number"]) == ("STC", 2, 1)
    assert (row["workload_name"], row["service_class"], row["report_class"]) == (
        "ONLINE", "ZCONHI", "RZCON")
    # SMF30IST 4,500,000 cs = 45,000 s = 12:30:00; SMF30IDT 0125032F = 2025 day 32 = Feb 1
    assert row["interval_start_at"] == dt.datetime(2025, 2, 1, 12, 30)
    # IET - ISS = 900 s of TOD clock -> end 12:45:00
    assert row["interval_end_at"] == dt.datetime(2025, 2, 1, 12, 45)
    # hundredths: CPT 12345 -> 123.45 s, CPS 678 -> 6.78 s, IIP 7 -> 0.07 s, RCT 3 -> 0.03 s,
    # TIME_ON_ZIIP 45000 -> 450 s, TIME_ZIIP_ON_CP 1250 -> 12.5 s; SNF 512/256 = 2.0
    np.testing.assert_allclose(
        [row[k] for k in ("interval_s", "tcb_s", "srb_s", "iit_s", "rct_s", "hst_s", "ziip_s",
                          "ziip_on_cp_s", "ziip_norm_factor")],
        [900.0, 123.45, 6.78, 0.07, 0.03, 0.0, 450.0, 12.5, 2.0],
        rtol=1e-12,
    )
    assert (row["service_units"], row["cpu_service_units"], row["srb_service_units"]) == (
        98765, 54321, 4321)
    assert tuple(row) == COLUMNS


def test_subtype_3_and_short_performance_section():
    row = decode_record(build30(subtype=3, perf_len=68))
    assert row["subtype"] == 3
    assert np.isnan(row["ziip_norm_factor"])  # SMF30SNF (offset 136) not in a 68-byte section


def test_batch_decoder_keeps_neighbours_of_a_bad_record():
    good1, good2 = build30(job="JOBA"), build30(job="JOBB", subtype=3)
    broken = build30(idt=bytes.fromhex("0125999F"))  # day 999 does not exist
    tables, bad = Type30Interval(2).decode_batch(*batch(good1, broken, good2))
    cols = tables[TABLE]
    assert list(cols["job_name"]) == ["JOBA", "JOBB"]
    assert len(bad) == 1
    # the processor section starts at 88 + 40 + 188 = 316; SMF30IST is at +36
    assert bad[0][0] == 1 and bad[0][1] == 316 + 36
    assert "SMF30IST/SMF30IDT" in bad[0][2]


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda r: r[:60], "shorter than its 88-byte"),
        (lambda r: r[:400], "processor accounting triplet: .* run past the end"),
        (lambda r: r[:22] + struct.pack(">H", 4) + r[24:], "subtype 4 is not an interval"),
        (lambda r: r[:38] + struct.pack(">H", 0) + r[40:], "identification section missing"),
    ],
)
def test_structural_errors_raise_smf_data_error(mutate, match):
    with pytest.raises(SMFDataError, match=match):
        decode_record(mutate(build30()))


def test_interval_end_before_start_is_an_error():
    rec = bytearray(build30())
    io = 88 + 40
    struct.pack_into(">Q", rec, io + 156, 0)  # SMF30IET = 0 < SMF30ISS
    with pytest.raises(SMFDataError, match="SMF30IET .* before SMF30ISS"):
        decode_record(bytes(rec))


def test_registered_with_reader():
    reader = pytest.importorskip("kneecap.smf.reader")
    reader._load_plugins()
    assert isinstance(reader.DECODERS[(30, 2)], Type30Interval)
    assert reader.DECODERS[(30, 3)].subtype == 3


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cut=st.integers(min_value=0, max_value=len(build30()) - 1),
    flips=st.lists(st.tuples(st.integers(0, len(build30()) - 1), st.integers(0, 7)), max_size=6),
    truncate=st.booleans(),
)
def test_damaged_record_is_decoded_or_quarantined_never_crashes(cut, flips, truncate):
    rec = bytearray(build30(job="MIDDLE"))
    for pos, bit in flips:
        rec[pos] ^= 1 << bit
    damaged = bytes(rec[:cut]) if truncate else bytes(rec)
    tables, bad = Type30Interval(2).decode_batch(
        *batch(build30(job="FIRST"), damaged, build30(job="LAST"))
    )
    names = list(tables[TABLE]["job_name"])
    assert names[0] == "FIRST" and names[-1] == "LAST"
    assert len(names) + len(bad) == 3
    assert all(i == 1 for i, _, _ in bad)
    assert set(tables[TABLE]) == set(COLUMNS)


def test_reader_end_to_end_quarantines_only_the_damaged_record(tmp_path):
    reader = pytest.importorskip("kneecap.smf.reader")
    broken = build30(job="BROKEN", idt=bytes.fromhex("0125999F"))
    path = tmp_path / "dump.rdw"  # RDW-framed, as from FTP 'quote site rdw'
    path.write_bytes(build30(job="FIRST") + broken + build30(job="LAST", subtype=3))
    res = reader.decode_file(path)
    df = res[TABLE]
    assert list(df["job_name"]) == ["FIRST", "LAST"]
    assert list(df.columns) == list(COLUMNS)
    assert len(res.quarantine) == 1
    q = res.quarantine.iloc[0]
    assert q["record_no"] == 2 and q["record_type"] == 30
    assert "SMF30IST/SMF30IDT" in q["reason"]
    np.testing.assert_allclose(df["tcb_s"], [123.45, 123.45], rtol=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(
    # cut >= 24 keeps a whole SMF header: shorter records are the framing layer's business
    # (kneecap.smf.framing rejects a file whose second record is 4-17 bytes long)
    cut=st.integers(min_value=24, max_value=len(build30()) - 1),
    flips=st.lists(st.tuples(st.integers(6, len(build30()) - 1), st.integers(0, 7)), max_size=4),
    truncate=st.booleans(),
)
def test_reader_never_loses_intact_neighbours(tmp_path, cut, flips, truncate):
    reader = pytest.importorskip("kneecap.smf.reader")
    rec = bytearray(build30(job="MIDDLE"))
    for pos, bit in flips:
        rec[pos] ^= 1 << bit
    if truncate:
        rec = rec[:cut]
        struct.pack_into(">H", rec, 0, len(rec))  # an RDW that matches the shortened record
    path = tmp_path / "fuzz.rdw"
    path.write_bytes(build30(job="FIRST") + bytes(rec) + build30(job="LAST"))
    res = reader.decode_file(path)  # may quarantine, must not raise
    names = list(res[TABLE]["job_name"])
    assert names[0] == "FIRST" and names[-1] == "LAST"
    assert len(names) + len(res.quarantine) >= 3 or res.unknown
