"""Property tests: damaged input never raises anything but SMFDataError, and every intact record
around the damage is still delivered (framing) and decoded (reader)."""

import datetime as dt
import io

import pytest
import synth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kneecap.smf.framing import RecordStream, SMFDataError
from kneecap.smf.reader import decode_file

START = dt.datetime(2025, 3, 3)


def _records():
    out = []
    for i in range(4):
        t0 = START + dt.timedelta(minutes=15 * i)
        out.append(synth.record_72_3("SYSA", "PLEX1", t0, 900.0, f"C{i}", "W",
                                     [synth.Period(period=1, ended=100 + i, tcb_s=1.0 + i)]))
        own = synth.Partition("LPAR1", 1, [synth.LogicalCPU("CP", 900, 100, 700),
                                           synth.LogicalCPU("IIP", 900, 50, 800)])
        out.append(synth.record_70_1("SYSA", "PLEX1", t0, 900.0, [own], 1))
        out.append(synth.record_other(99, 1, "SYSA", n=60 + i))
    return out


RECORDS = _records()
RDW = synth.frame_rdw(RECORDS)
BDW = synth.frame_bdw(RECORDS, blksize=3000, spanned=True)
BOUNDS = []
_p = 0
for _r in RECORDS:
    BOUNDS.append((_p, _p + len(_r)))
    _p += len(_r)

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _delivered(data: bytes):
    try:
        return [r.data for r in RecordStream(io.BytesIO(data)) if r.error is None]
    except SMFDataError:
        return None


def _decode(data: bytes):
    try:
        return decode_file(io.BytesIO(data))
    except SMFDataError:
        return None


@SETTINGS
@given(st.integers(min_value=1, max_value=len(RDW) - 1))
def test_truncation(cut):
    got = _delivered(RDW[:cut])
    intact = [r for r, (a, b) in zip(RECORDS, BOUNDS, strict=True) if b <= cut]
    if got is None:  # only acceptable when not even the first descriptor survives
        assert cut < BOUNDS[0][1]
        return
    assert got == intact
    res = _decode(RDW[:cut])
    n72 = sum(1 for r in intact if r[5] == 72)
    assert len(res.smf72_workload) == n72


@SETTINGS
@given(st.integers(min_value=0, max_value=8 * len(RDW) - 1))
def test_single_bit_flip_rdw(bit):
    pos = bit // 8
    data = bytearray(RDW)
    data[pos] ^= 1 << (bit % 8)
    got = _delivered(bytes(data))
    hit = next(i for i, (a, b) in enumerate(BOUNDS) if a <= pos < b)
    if got is None:  # the flip made the first descriptor unreadable: file-level error
        assert hit == 0
        return
    for i, r in enumerate(RECORDS):
        if i != hit:
            assert r in got, f"intact record {i} lost after flipping byte {pos} (record {hit})"
    res = _decode(bytes(data))
    assert res is not None
    # every intact 72.3 class still decoded
    names = set(res.smf72_workload["class_name"])
    for i, r in enumerate(RECORDS):
        if i != hit and r[5] == 72:
            assert f"C{i // 3}" in names


@SETTINGS
@given(st.integers(min_value=0, max_value=8 * len(BDW) - 1))
def test_single_bit_flip_vbs_blocks_never_raises_data_errors_only(bit):
    data = bytearray(BDW)
    data[bit // 8] ^= 1 << (bit % 8)
    res = _decode(bytes(data))  # may be None only via SMFDataError
    if res is not None:
        # a flip damages at most the records in one block and its neighbours' spanned parts
        assert res.records >= 1


@SETTINGS
@given(st.integers(min_value=1, max_value=len(RECORDS)), st.binary(min_size=1, max_size=300))
def test_splice_garbage_between_records(k, junk):
    # Junk *before the first record* is left out: four junk bytes can form a perfect BDW for
    # the record behind them, which no reader can tell from a real RECFM=U block.
    cut = BOUNDS[k][0] if k < len(RECORDS) else len(RDW)
    data = RDW[:cut] + junk + RDW[cut:]
    got = _delivered(data)
    assert got is not None
    for r in RECORDS:
        assert r in got


@SETTINGS
@given(st.binary(min_size=1, max_size=300))
def test_junk_before_first_record_raises_only_data_errors(junk):
    res = _decode(junk + RDW)
    assert res is None or res.records >= 1


@SETTINGS
@given(st.integers(min_value=0, max_value=len(RDW) - 1), st.binary(min_size=1, max_size=64))
def test_overwrite_inside_records_is_quarantined_or_decoded(pos, junk):
    data = bytearray(RDW)
    data[pos : pos + len(junk)] = junk[: len(RDW) - pos]
    res = _decode(bytes(data))
    if res is None:
        assert pos < 4
        return
    end = pos + len(junk)
    untouched_72 = [i for i, (a, b) in enumerate(BOUNDS)
                    if (b <= pos or a >= end) and RECORDS[i][5] == 72]
    names = set(res.smf72_workload["class_name"])
    for i in untouched_72:
        assert f"C{i // 3}" in names


def test_quarantine_row_has_file_record_offset_reason(tmp_path):
    data = bytearray(RDW)
    a, _ = BOUNDS[3]  # the second 72.3 record
    data[a + 60 : a + 64] = (60000).to_bytes(4, "big")  # SMF72SCS beyond the record
    path = tmp_path / "bad.smf"
    path.write_bytes(bytes(data))
    q = decode_file(path).quarantine
    assert len(q) == 1
    row = q.iloc[0]
    assert row.file == str(path) and row.record_no == 4 and row.record_type == 72
    assert row.offset == a + 60
    assert "period data triplet" in row.reason
    with pytest.raises(SMFDataError, match=r"bad\.smf: record 4: byte offset 60: x"):
        raise SMFDataError("x", file=str(path), record_no=4, offset=60)
