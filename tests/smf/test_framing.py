"""Framing: RDW, BDW (RECFM=U), VBS spanned segments, gzip, and the plain-binary error."""

import datetime as dt
import io
import struct

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
    # 3000-byte blocks hold 2992 bytes of segment data: the 6492-byte record needs a middle segment
    # wherever in a block it starts (with 4000 it depended on the lengths of the records before it)
    assert len(records[-1]) - 4 > 2 * (3000 - 8)
    data = synth.frame_bdw(records, blksize=3000, spanned=True)
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


def _chain(first_record: bytes, n_middle: int, seg_data: int = 8000, last: bool = True) -> bytes:
    """SDW-prefixed segments of one spanned record: a first segment (``first_record``'s header and data), then
    ``n_middle`` middle segments of ``seg_data`` zero bytes, then (with ``last``) a last one."""
    out = bytearray(struct.pack(">HBB", len(first_record), 1, 0) + first_record[4:])
    middle = struct.pack(">HBB", seg_data + 4, 3, 0) + bytes(seg_data)
    out += middle * n_middle
    if last:
        out += struct.pack(">HBB", seg_data + 4, 2, 0) + bytes(seg_data)
    return bytes(out)


@pytest.mark.parametrize("compress", [False, True])
def test_spanned_record_longer_than_an_smf_record_is_quarantined_not_assembled(records, compress, tmp_path):
    # issue 35 item 4: a 98 MB chain of middle segments was held whole (535 MB of memory), a 25.6 MB
    # gzip of one took 2.95 GB. An SMF record is at most 32,756 bytes + its RDW (LRECL 32760):
    # the chain is set aside as soon as it outgrows that, and the records after it are read
    head = records[0]
    chain = _chain(head, n_middle=500)  # 4 MB of segments for one "record"
    data = synth.frame_rdw(records[:2]) + chain + synth.frame_rdw(records[2:4])
    path = tmp_path / "chain.smf"
    path.write_bytes(synth.gz(data) if compress else data)
    stream = RecordStream(path, batch_bytes=65536)
    got = list(stream)
    good = [r.data for r in got if r.error is None]
    assert good == records[:4]
    (bad,) = [r for r in got if r.error is not None]
    assert bad.offset == len(synth.frame_rdw(records[:2]))  # where its first segment starts
    assert bad.size == len(chain)  # every byte of the chain is accounted for, in one row
    assert "spanned record longer than 32,760 bytes" in bad.error
    assert len(bad.data) <= 65536  # what the row keeps of it is bounded
    # the reader's quarantine names the file, the offset and the reason
    res = decode_file(path)
    q = res.quarantine
    assert len(q) == 1 and q.file.iloc[0] == str(path) and q.offset.iloc[0] == bad.offset
    assert "longer than 32,760 bytes" in q.reason.iloc[0] and q.bytes.iloc[0] == len(chain)


def test_spanned_record_never_closed_at_end_of_input_is_quarantined(records):
    # issue 35 item 4: a chain with no last segment (12,001 segments in the probe) was dropped without a row
    chain = _chain(records[0], n_middle=3, seg_data=100, last=False)
    data = synth.frame_rdw(records[1:3]) + chain
    stream = RecordStream(io.BytesIO(data))
    got = list(stream)
    assert [r.data for r in got if r.error is None] == records[1:3]
    (bad,) = [r for r in got if r.error is not None]
    assert bad.offset == len(synth.frame_rdw(records[1:3])) and bad.size == len(chain)
    assert "never completed" in bad.error and "the end of the input came before its last segment" in bad.error


def test_spanned_record_cut_short_by_another_record_is_quarantined(records):
    # a first segment followed by a complete record, not by its own continuation: dropped with a row
    chain = _chain(records[0], n_middle=0, seg_data=100, last=False)
    data = chain + synth.frame_rdw(records[1:3])
    got = list(RecordStream(io.BytesIO(data)))
    assert [r.data for r in got if r.error is None] == records[1:3]
    (bad,) = [r for r in got if r.error is not None]
    assert bad.offset == 0 and bad.size == len(chain) and "never completed" in bad.error
