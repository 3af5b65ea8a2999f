"""Framing: RDW, BDW (RECFM=U), VBS spanned segments, gzip, and the plain-binary error."""

import datetime as dt
import io

import numpy as np
import pytest
import synth

from kneecap.smf.framing import RecordStream, SMFDataError, detect_framing, iter_records
from kneecap.smf.reader import decode_file


@pytest.fixture(scope="module")
def records():
    recs, _ = synth.week_of_intervals(days=0.25)
    # add a type without a decoder, with and without subtypes, and a record > 1 block
    big = synth.record_72_3("SYSA", "PLEX1", dt.datetime(2025, 3, 3), 900.0, "BIG", "W",
                            [synth.Period(period=j + 1, ended=j) for j in range(8)])
    return [*recs, synth.record_other(99, 2, "SYSA"), synth.record_other(6, None, "SYSA"), big]


FRAMINGS = {
    "rdw": lambda r: synth.frame_rdw(r),
    "bdw": lambda r: synth.frame_bdw(r),
    "vbs_blocks": lambda r: synth.frame_bdw(r, blksize=4000, spanned=True),
    "rdw_segments": lambda r: synth.frame_rdw_segments(r, max_seg=700),
    "gzip_rdw": lambda r: synth.gz(synth.frame_rdw(r)),
    "gzip_vbs": lambda r: synth.gz(synth.frame_bdw(r, blksize=4000, spanned=True)),
}


@pytest.mark.parametrize("kind", list(FRAMINGS))
def test_every_framing_yields_the_same_logical_records(records, kind, tmp_path):
    path = tmp_path / f"dump.{kind}"
    path.write_bytes(FRAMINGS[kind](records))
    stream = RecordStream(path, batch_bytes=65536)  # small batches: exercise chunk boundaries
    got = list(stream)
    assert [r.error for r in got] == [None] * len(records)
    assert [r.data for r in got] == records
    assert [r.record_no for r in got] == list(range(1, len(records) + 1))
    assert stream.orphan_segments == 0
    assert stream.framing == ("bdw" if "vbs" in kind or kind == "bdw" else "rdw")
    assert stream.compressed == kind.startswith("gzip")


def test_spanned_record_really_spans_blocks(records):
    data = synth.frame_bdw(records, blksize=4000, spanned=True)
    # segment codes present in byte 2 of the SDWs: 01 first, 11 middle, 10 last (IBM DFSMS)
    codes = set()
    p = 0
    while p < len(data):
        blen = int.from_bytes(data[p:p + 2], "big")
        q = p + 4
        while q < p + blen:
            codes.add(data[q + 2])
            q += int.from_bytes(data[q:q + 2], "big")
        p += blen
    assert {0, 1, 2, 3} <= codes


def test_orphan_segments_are_counted(records):
    data = synth.frame_rdw_segments(records[:3], max_seg=700)
    # drop the first segment of record 1: its middle and last segments become orphans
    first_len = int.from_bytes(data[:2], "big")
    assert data[2] == 1
    stream = RecordStream(io.BytesIO(data[first_len:]))
    got = [r.data for r in stream]
    assert got == records[1:3]
    n_segments_rec1 = -(-(len(records[0]) - 4) // 700)
    assert stream.orphan_segments == n_segments_rec1 - 1


def test_plain_binary_transfer_is_refused_with_instructions(records, tmp_path):
    path = tmp_path / "plain.bin"
    path.write_bytes(synth.frame_plain(records))
    with pytest.raises(SMFDataError, match=r"plain\.bin: byte offset 0: .*quote site rdw.*RECFM=U"):
        decode_file(path)


def test_empty_file(tmp_path):
    path = tmp_path / "empty"
    path.write_bytes(b"")
    with pytest.raises(SMFDataError, match="empty input"):
        list(iter_records(path))


def test_detect_framing_on_heads(records):
    assert detect_framing(synth.frame_rdw(records)[:65536]) == "rdw"
    assert detect_framing(synth.frame_bdw(records)[:65536]) == "bdw"


def test_truncated_tail_is_quarantined_not_raised(records, tmp_path):
    data = synth.frame_rdw(records)
    cut = len(data) - len(records[-1]) // 2
    got = list(RecordStream(io.BytesIO(data[:cut])))
    assert [r.data for r in got if r.error is None] == records[:-1]
    bad = [r for r in got if r.error]
    assert len(bad) == 1 and "truncated" in bad[0].error
    assert bad[0].offset == len(data) - len(records[-1])


def test_batches_expose_offsets(records):
    data = synth.frame_rdw(records)
    stream = RecordStream(io.BytesIO(data), batch_bytes=65536)
    offs = np.concatenate([b.file_offsets for b in stream.iter_batches()])
    np.testing.assert_array_equal(offs, np.cumsum([0] + [len(r) for r in records[:-1]]))
