"""Bounded fuzz campaign of the SMF ingest path (issue #14); ``make fuzz`` runs the long one.

Hypothesis draws dumps of known records and mutations of them (``fuzzing.py`` keeps the ground
truth of which records a mutation left intact); every input must come through kneecap's framing
and decoders without an exception other than ``SMFDataError``, with every intact record delivered
and decoded and every byte of an RDW file accounted for. Time per input is the campaign's to hold
(``make fuzz``: 0.25 s + 2 ms per KiB, measured twice), not a unit test's. The number of examples
follows the hypothesis profile (``tests/conftest.py``: fixed examples for ``make test``, more and
fresh ones under ``KNEECAP_HYPOTHESIS=explore``).
"""

from __future__ import annotations

import fuzzing
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

POOL = fuzzing.record_pool(120)
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.data_too_large])


@st.composite
def dumps(draw) -> fuzzing.Dump:
    """A clean dump: 3-12 distinct records of the pool in one framing."""
    framing = draw(st.sampled_from(fuzzing.FRAMINGS))
    idx = draw(st.lists(st.integers(0, len(POOL) - 1), min_size=3, max_size=12, unique=True))
    recs = [POOL[i] for i in idx]
    longest = max(len(r.data) for r in recs)
    lo = longest + 4 if framing == "bdw" else 200
    return fuzzing.Dump.build(recs, framing, draw(st.integers(lo, 32760)))


# a mutation: (name, arguments), applied by _apply; positions are taken modulo the input length
_positions = st.integers(0, 1 << 20)
_mutations = st.one_of(
    st.tuples(st.just("flip"), _positions, st.integers(0, 7)),
    st.tuples(st.just("descriptor_flip"), _positions, st.integers(0, 7)),
    st.tuples(st.just("overwrite"), _positions, st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("insert"), _positions, st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("zeros"), _positions, st.integers(1, 20000), st.booleans()),
    st.tuples(st.just("delete"), _positions, st.integers(1, 200)),
    st.tuples(st.just("truncate"), _positions),
    st.tuples(st.just("dup_record"), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("dup_block"), st.integers(0, 99)),
    st.tuples(st.just("splice"), _positions, _positions, st.integers(1, 3000)),
)


def _apply(d: fuzzing.Dump, m: tuple) -> None:
    name, *a = m
    if name == "flip":
        d.flip(a[0], a[1])
    elif name == "descriptor_flip":
        pos = d.descriptor_positions()
        if pos:
            d.flip(pos[a[0] % len(pos)], a[1])
    elif name == "overwrite":
        d.overwrite(a[0], a[1])
    elif name == "insert":
        d.insert(a[0], a[1])
    elif name == "zeros":
        (d.insert if a[2] else d.overwrite)(a[0], bytes(a[1]))
    elif name == "delete":
        d.delete(a[0], a[1])
    elif name == "truncate":
        d.truncate(a[0])
    elif name == "dup_record":
        d.duplicate_record(a[0], a[1])
    elif name == "dup_block":
        d.duplicate_block(a[0])
    else:  # splice: bytes of the dump itself, with real SMF headers in them
        start = a[1] % len(d.data)
        d.insert(a[0], bytes(d.data[start:start + a[2]]))


def _judge(d: fuzzing.Dump) -> None:
    v = fuzzing.verdict(d)
    what = "; ".join(d.log)
    assert v.crash is None, f"{what}\n{v.crash}"
    assert v.lost_framing == 0, f"{what}: {v.lost_framing} of {v.intact} intact records not delivered ({v.file_error})"
    assert v.lost_decode == 0, f"{what}: {v.lost_decode} intact records delivered but not decoded"
    assert not v.unaccounted, f"{what}: {v.unaccounted} bytes neither delivered nor quarantined"


@FUZZ
@given(dumps(), st.lists(_mutations, min_size=1, max_size=4))
def test_mutated_dump_loses_no_intact_record(d, mutations):
    for m in mutations:
        if len(d.data) > 1:
            _apply(d, m)
    _judge(d)


@FUZZ
@given(dumps(), st.lists(_mutations, max_size=2), st.integers(1, 3), st.integers(0, 1 << 20),
       st.lists(st.tuples(_positions, st.integers(0, 7)), max_size=3), st.booleans())
def test_gzip_cut_or_damaged_delivers_what_zlib_can(d, mutations, members, cut, flips, do_cut):
    for m in mutations:
        if len(d.data) > 1:
            _apply(d, m)
    d.compress(members=members)
    if do_cut:
        d.gz_cut(cut)
    for pos, bit in flips:
        d.gz_flip(pos, bit)
    _judge(d)


@FUZZ
@given(st.integers(0, 2**32 - 1), st.sampled_from(fuzzing.KINDS))
def test_campaign_inputs_of_every_kind(seed, kind):
    # the inputs of `make fuzz` (benchmarks/fuzz_smf_ingest.py), drawn from other seeds
    _judge(fuzzing.random_input(np.random.default_rng(seed), POOL, kind))


# ------------------------------------------------------------- what the campaign found (fixed)

def _records(n: int) -> list[bytes]:
    return [r.data for r in POOL[:n]]


def _delivered(data: bytes):
    import io

    from kneecap.smf.framing import RecordStream

    s = RecordStream(io.BytesIO(data))
    got = list(s)
    return s, [r.data for r in got if r.error is None], [r for r in got if r.error]


def _blocks(data: bytes) -> list[int]:
    out, p = [], 0
    while p < len(data):
        out.append(p)
        p += int.from_bytes(data[p:p + 2], "big")
    return out


def test_gzip_member_with_a_bad_check_word_delivers_its_records():
    recs = _records(12)
    gz = bytearray(fuzzing.gzip.compress(fuzzing.synth.frame_rdw(recs)))
    gz[-6] ^= 0x01  # the CRC-32 in the trailer: zlib raises after decompressing everything
    _s, got, bad = _delivered(bytes(gz))
    assert got == recs
    assert "gzip" in bad[-1].error


def test_gzip_damaged_late_in_a_chunk_delivers_the_records_before_the_damage():
    recs = _records(30)
    raw = fuzzing.synth.frame_rdw(recs)
    gz = bytearray(fuzzing.gzip.compress(raw, compresslevel=1))
    gz[len(gz) * 3 // 4] ^= 0x10
    _s, got, _bad = _delivered(bytes(gz))
    good = fuzzing._common_prefix(fuzzing.gunzip_prefix(bytes(gz)), raw)
    ends = np.cumsum([len(r) for r in recs])
    before = [r for r, e in zip(recs, ends, strict=True) if e <= good]
    assert len(before) > 10 and got[:len(before)] == before


def test_invalid_bdw_between_the_segments_of_a_spanned_record_keeps_it():
    recs = _records(12)
    clean = fuzzing.synth.frame_bdw(recs, blksize=700, spanned=True)
    for p in _blocks(clean)[1:12]:
        data = bytearray(clean)
        data[p + 3] = 0x10  # invalid: the block before it no longer checks out either
        assert _delivered(bytes(data))[1] == recs, p


def test_damaged_first_bdw_of_a_spanned_dump_is_still_read():
    recs = _records(12)
    data = bytearray(fuzzing.synth.frame_bdw(recs, blksize=700, spanned=True))
    data[3] = 0x20  # every block starts with a continuation: no block start at a record
    s, got, _ = _delivered(bytes(data))
    assert s.framing == "bdw" and got == recs


def test_junk_inside_the_first_block_does_not_make_a_bdw_file_rdw():
    recs = _records(18)
    clean = fuzzing.synth.frame_bdw(recs, blksize=6000)
    data = clean[:4] + b"\x07" * 5 + clean[4:]  # three records chain right after the junk
    s, got, _ = _delivered(data)
    assert s.framing == "bdw" and got == recs


def test_record_with_damage_on_both_sides_is_delivered():
    recs = _records(8)
    ends = np.cumsum([len(r) for r in recs]).tolist()
    data = bytearray(fuzzing.synth.frame_rdw(recs))
    data[ends[4]:ends[4]] = b"\x01\x02"  # after record 4 ...
    data[ends[3] - 8:ends[3] - 8] = b"\x03" * 7  # ... and inside record 3, before it
    _s, got, _bad = _delivered(bytes(data))
    assert recs[4] in got  # before the fix: quarantined with the damage around it
    assert all(r in got for i, r in enumerate(recs) if i != 3)


def test_dump_of_vbs_segments_with_a_stray_first_byte_is_read_as_rdw():
    recs = _records(12)
    data = b"\x07" + fuzzing.synth.frame_rdw_segments(recs, max_seg=300)
    s, got, bad = _delivered(data)
    assert s.framing == "rdw" and got == recs and bad[0].size == 1


def test_record_before_the_first_chain_of_records_is_delivered():
    # framing starts where three records chain; an intact record with damage on both sides
    # before that point was quarantined with the junk around it (campaign seed 14, input 1328)
    recs = _records(8)
    ends = np.cumsum([len(r) for r in recs]).tolist()
    data = bytearray(fuzzing.synth.frame_rdw(recs))
    data[ends[1] + 40:ends[1] + 40] = b"\x05" * 9  # inside record 2: records 0-1 chain no further
    data[ends[0] - 30:ends[0] - 30] = b"\x06" * 3  # inside record 0
    data[0:0] = b"\x07\x07"  # and junk before record 0
    _s, got, bad = _delivered(bytes(data))
    assert recs[1] in got  # before the fix: inside the quarantined bytes before the first chain
    assert all(r in got for r in recs[3:])
    assert bad[0].offset == 0 and "not SMF framing" in bad[0].error


def test_spanned_dump_whose_blocks_all_start_with_a_continuation_is_read_after_damage():
    # junk right after the first block descriptor of a VBS dump of small blocks, where no
    # later block starts with a record: no block start at a record checked out, so the file was
    # refused as not an SMF dump (campaign seed 14, input 25768)
    recs = _records(8)
    clean = fuzzing.synth.frame_bdw(recs, blksize=800, spanned=True)
    starts = _blocks(clean)
    assert all(clean[p + 6] & 0x03 >= 2 for p in starts[1:])  # the premise
    data = clean[:4] + b"\x07" * 11 + clean[4:]
    s, got, bad = _delivered(data)
    assert s.framing == "bdw" and got == recs  # record 0 too: its segments lead to block 1
    assert bad[0].offset == 0 and bad[0].size == 15


def test_block_descriptors_chaining_like_records_do_not_make_a_bdw_file_rdw():
    # the first record's header damaged: the block descriptors, bytes 2-3 zero and each length
    # leading to the next, passed as a chain of record descriptors and the file was read as RDW,
    # every spanned record across a block descriptor lost (campaign seed 14, input 5214)
    recs = _records(12)
    data = bytearray(fuzzing.synth.frame_bdw(recs, blksize=2000, spanned=True))
    data[4 + 13] &= 0xF0  # no sign nibble in SMFxDTE of record 0
    s, got, bad = _delivered(bytes(data))
    assert s.framing == "bdw" and got == recs[1:]
    assert "no SMF record header" in bad[0].error


def test_record_cut_short_does_not_swallow_an_untrusted_neighbour():
    # record 3 two bytes short, record 5's header damaged so that record 4 is not trusted:
    # record 3's descriptor, reached through trusted framing, took the first two bytes of record 4
    # (delivered as record 3, and record 4 lost) (campaign seed 14, input 28577)
    recs = _records(8)
    ends = np.cumsum([len(r) for r in recs]).tolist()
    data = bytearray(fuzzing.synth.frame_rdw(recs))
    data[ends[4] + 13] &= 0xF0  # SMFxDTE of record 5: no sign nibble
    del data[ends[3] - 6:ends[3] - 4]  # inside record 3, near its end
    _s, got, bad = _delivered(bytes(data))
    assert recs[4] in got  # before the fix: swallowed by record 3
    assert all(r in got for i, r in enumerate(recs) if i not in (3, 5))
    assert len(got) == 6 and "damaged length" in bad[0].error and bad[0].size == len(recs[3]) - 2


def test_short_dump_where_three_records_never_chain_is_read():
    # junk before record 0, after it and inside record 2: no three records chain anywhere, and
    # the file was refused as not an SMF dump, records 0 and 1 with it (campaign seed 14, 4708)
    r0, r1, r2 = _records(3)
    data = b"\x07" * 5 + r0 + b"\x01" + r1 + r2[:600] + b"\x02" * 6 + r2[600:]
    s, got, bad = _delivered(data)
    assert s.framing == "rdw" and got[:2] == [r0, r1]
    assert bad[0].offset == 0 and bad[0].size == 5 and "not SMF framing" in bad[0].error


def test_short_blocked_dump_with_a_damaged_first_block_is_read():
    # four bytes after the block descriptor and the last record cut: records 0-1 chain, no
    # further, and no block checks out (campaign seed 14, input 3512)
    recs = _records(3)
    clean = fuzzing.synth.frame_bdw(recs, blksize=32000)
    data = clean[:4] + b"\x00\x07\x00\x00" + clean[4:-1]
    s, got, _bad = _delivered(data)
    assert got == recs[:2]


def test_record_cut_short_before_bytes_that_pass_for_an_extended_bdw_yields_its_neighbour():
    # as above in a blocked file, where record 3 now ends at bytes 9-12 of record 4 (80 01 25 06,
    # SMFxTME's last byte and SMFxDTE), which pass for an extended block descriptor of 75014
    # bytes: no block descriptor of a block that starts there (campaign seed 14, input 23013)
    recs = _records(8)
    assert recs[4][9] & 0x80  # the premise
    data = bytearray(fuzzing.synth.frame_bdw(recs, blksize=32000))
    ends = (4 + np.cumsum([len(r) for r in recs])).tolist()
    data[ends[4] + 13] &= 0xF0  # SMFxDTE of record 5: no sign nibble
    del data[ends[3] - 20:ends[3] - 11]  # nine bytes inside record 3, near its end
    _s, got, bad = _delivered(bytes(data))
    assert recs[4] in got  # before the fix: swallowed by record 3
    assert all(r in got for i, r in enumerate(recs) if i not in (3, 5))


def _record_3_four_bytes_short(cut_before_end: int) -> tuple[list[bytes], list[int], bytearray]:
    """Eight RDW records with three junk bytes after record 4 and four bytes cut from record 3.

    The cut starts ``cut_before_end`` bytes before record 3's end; ``ends`` are the records' ends
    in the undamaged dump.
    """
    recs = _records(8)
    ends = np.cumsum([len(r) for r in recs]).tolist()
    data = bytearray(fuzzing.synth.frame_rdw(recs))
    data[ends[4]:ends[4]] = b"\x07" * 3
    del data[ends[3] - cut_before_end:ends[3] - cut_before_end + 4]
    return recs, ends, data


def test_record_cut_short_yields_to_a_neighbour_whose_end_is_damaged_too():
    # record 3 four bytes short, three junk bytes after record 4: record 3's length ends inside
    # record 4 at no descriptor, and record 4's at none either; record 4 was swallowed by
    # record 3 (campaign seed 14, input 33643)
    recs, ends, data = _record_3_four_bytes_short(cut_before_end=20)
    assert data[ends[3] + 3] != 0  # the premise: no descriptor where record 3's length ends
    _s, got, bad = _delivered(bytes(data))
    assert recs[4] in got  # before the fix: swallowed by record 3
    assert all(r in got for i, r in enumerate(recs) if i != 3)
    assert "damaged length" in bad[0].error and bad[0].size == len(recs[3]) - 4


def test_record_grown_by_a_flipped_length_bit_yields_to_the_record_inside_it():
    # record 2's length 2048 bytes longer, record 4's SMFxDTE damaged so that record 3 is not
    # trusted: record 2 swallowed record 3, whose end is a descriptor but well before record 2's
    # (campaign seed 14, inputs 6566 and 9244)
    recs = _records(8)
    ends = np.cumsum([len(r) for r in recs]).tolist()
    assert ends[3] < ends[1] + len(recs[2]) + 2048 - 4  # the premise: record 3 inside record 2
    data = bytearray(fuzzing.synth.frame_rdw(recs))
    data[ends[1]] ^= 0x08
    data[ends[3] + 13] &= 0xF0
    _s, got, bad = _delivered(bytes(data))
    assert recs[3] in got  # before the fix: swallowed by record 2
    assert all(r in got for i, r in enumerate(recs) if i not in (2, 4))
    assert "damaged length" in bad[0].error and bad[0].size == len(recs[2])


def test_record_cut_short_at_bytes_that_pass_for_a_bare_descriptor_yields_its_neighbour():
    # as above, but record 3's length now ends at "01 00 00 00" in record 4: any two bytes before
    # two zero bytes pass for a record descriptor, and record 3 was taken to end there, with
    # record 4 swallowed (campaign seed 14, input 3587, where it was "40 00 03 00")
    from kneecap.smf.framing._descriptors import valid_rdw

    recs = _records(8)
    ends = np.cumsum([len(r) for r in recs]).tolist()
    k = 23
    assert valid_rdw(recs[4], k)  # the premise
    data = bytearray(fuzzing.synth.frame_rdw(recs))
    data[ends[4]:ends[4]] = b"\x07" * 3
    del data[ends[3] - 60:ends[3] - 60 + k]
    _s, got, bad = _delivered(bytes(data))
    assert recs[4] in got  # before the fix: swallowed by record 3
    assert all(r in got for i, r in enumerate(recs) if i != 3)
    assert "damaged length" in bad[0].error and bad[0].size == len(recs[3]) - k


def test_segment_descriptor_inside_zero_bytes_is_no_record_header():
    # a 72.3 record in 86-byte VBS segments: "27 10 00 00", eight zero bytes and the next
    # segment's descriptor "00 5a 03 00" pass for a record header dated 1900, day 5, whose length
    # (10000) ends where the input does. It was trusted, the segment around it cut as damaged
    # and the record lost (campaign seed 14, input 13052)
    recs = [r.data for r in POOL[6:30]]
    data = fuzzing.synth.frame_rdw_segments(recs, max_seg=86)
    assert data[258:272].hex() == "27100000138800000001000000" "5a"  # the premise
    s, got, bad = _delivered(data[:258 + 10000])
    assert s.framing == "rdw" and recs[0] in got
    # the last record, cut: its whole segments set aside as a spanned record never completed (issue 35),
    # then the 12 bytes of the segment the cut went through
    assert [r.size for r in bad] == [810, 12]
    assert "never completed: damaged bytes at byte 10,246 came before its last segment" in bad[0].error


def test_descriptor_cut_at_its_front_does_not_make_its_predecessor_damaged():
    # the first byte of record 4's descriptor deleted: record 3's last byte and what is left of
    # it ("00 14 00 00") pass for a record header one byte before record 3's end whose length
    # ends nowhere. Record 3, intact and ending right, was quarantined as if its length were
    # damaged (campaign seed 14, input 16496)
    recs = _records(8)
    ends = np.cumsum([len(r) for r in recs]).tolist()
    data = bytearray(fuzzing.synth.frame_rdw(recs))
    del data[ends[3]]
    _s, got, bad = _delivered(bytes(data))
    assert recs[3] in got  # before the fix: quarantined as a record of damaged length
    assert all(r in got for i, r in enumerate(recs) if i != 4)
    assert bad[0].offset == ends[3]


def test_record_cut_short_inside_damage_yields_its_neighbour():
    # as above, but inside a damaged stretch: record 2's header damaged, record 3 four bytes
    # short, junk after record 4. Of the records inside the damage, record 3 was delivered and
    # record 4, which it ran into, lost (campaign seed 14, inputs 9450 and 10984)
    recs, ends, data = _record_3_four_bytes_short(cut_before_end=60)
    data[ends[1] + 13] &= 0xF0  # SMFxDTE of record 2: no sign nibble
    _s, got, bad = _delivered(bytes(data))
    assert recs[4] in got  # before the fix: swallowed by record 3
    assert all(r in got for i, r in enumerate(recs) if i not in (2, 3))
    assert bad[0].offset == ends[1] and bad[0].size == len(recs[2]) + len(recs[3]) - 4


def test_spanned_dump_where_no_block_checks_out_is_read_as_blocked():
    # the first record header damaged in every block that has one: the first three blocks do not
    # check out, their descriptors chain like record descriptors, and the file was read as RDW;
    # every spanned record was cut at the block descriptor in it and lost (campaign seed 14,
    # inputs 6733, 2339, 18241 and 18669, where no block checked out at all)
    recs = _records(12)
    clean = fuzzing.synth.frame_bdw(recs, blksize=6000, spanned=True)
    data = bytearray(clean)
    damaged = []
    for p in _blocks(clean):
        q, end = p + 4, p + int.from_bytes(clean[p:p + 2], "big")
        while q < end and clean[q + 2] & 0x03:
            q += int.from_bytes(clean[q:q + 2], "big")
        if q < end:
            data[q + 13] &= 0xF0  # SMFxDTE of the block's first complete record
            damaged.append(clean[q:q + int.from_bytes(clean[q:q + 2], "big")])
    s, got, _bad = _delivered(bytes(data))
    assert s.framing == "bdw"  # before the fix: "rdw", and records 4, 7 and 11 lost
    assert got == [r for r in recs if r not in damaged]
    # and the last block's descriptor invalid, junk after the first one: no block checks out
    # anywhere, no descriptor chain from byte 0, records chain after the junk
    data[_blocks(clean)[-1] + 3] = 0x10
    data[4:4] = b"\x07" * 3
    s, got, bad = _delivered(bytes(data))
    assert s.framing == "bdw" and got == [r for r in recs if r not in damaged]


def test_spanned_record_before_the_first_trusted_block_is_delivered():
    # junk after the first block descriptor and after the last segment of record 0, which spans
    # blocks 0 and 1: framing starts after it, and record 0, its segments chaining across the
    # block descriptor, was quarantined with the junk around it (campaign seed 14, inputs 14146
    # and 10672)
    recs = _records(8)
    clean = fuzzing.synth.frame_bdw(recs, blksize=700, spanned=True)
    b1 = _blocks(clean)[1]
    q = b1 + 4 + int.from_bytes(clean[b1 + 4:b1 + 6], "big")  # the end of record 0
    assert clean[b1 + 6] == 2 and clean[6] == 1  # the premise: first and last segment
    data = bytearray(clean)
    data[q:q] = b"\x07" * 3
    data[4:4] = b"\x07" * 6
    s, got, bad = _delivered(bytes(data))
    assert s.framing == "bdw" and got == recs  # before the fix: record 0 lost
    assert "not SMF framing" in bad[0].error and bad[0].size == 10  # block descriptor + junk


def test_record_two_bytes_too_long_yields_a_neighbour_whose_descriptor_is_damaged_after_it():
    # record 2's length two bytes longer, byte 3 of record 4's descriptor not zero: record 3's
    # descriptor starts two bytes before record 2's end, and its own end is no descriptor (but
    # record 4's header is there). Record 3 was swallowed by record 2 (campaign seed 14, inputs
    # 6878 and 5619, where record 2 was two bytes short)
    recs = _records(8)
    ends = np.cumsum([len(r) for r in recs]).tolist()
    data = bytearray(fuzzing.synth.frame_rdw(recs))
    assert not data[ends[1] + 1] & 0x02  # the premise: the flip adds 2
    data[ends[1] + 1] ^= 0x02
    data[ends[3] + 3] = 0x04
    _s, got, bad = _delivered(bytes(data))
    assert recs[3] in got  # before the fix: swallowed by record 2
    assert all(r in got for i, r in enumerate(recs) if i not in (2, 4))
    assert "damaged length" in bad[0].error and bad[0].size == len(recs[2])


def test_short_dump_where_no_record_leads_to_another_is_read():
    # junk inside record 0 and record 3 and after records 1 and 2: no record's descriptor leads
    # to another record header, and the file was refused as a plain binary transfer, records 1
    # and 2 with it (campaign seed 14, input 14562)
    r0, r1, r2, r3 = _records(4)
    data = r0[:11] + b"\x07" * 3 + r0[11:] + r1 + b"\x07" * 4 + r2 + b"\x07" * 2 + r3[:60] + b"\x05" + r3[60:]
    s, got, bad = _delivered(data)
    assert s.framing == "rdw" and got[:2] == [r1, r2]  # before the fix: SMFDataError
    assert bad[0].offset == 0 and bad[0].size == len(r0) + 3


def test_record_two_bytes_short_yields_a_neighbour_followed_by_a_record_cut_at_the_end():
    # record 3 two bytes short, byte 13 of the last record (record 5) deleted: record 4's
    # descriptor starts two bytes before record 3's end, and ends at record 5's descriptor, whose
    # header is damaged and whose length runs past the end of the input. Record 4 was swallowed
    # by record 3 (campaign seed 14, input 28577 again, after a descriptor that leads nowhere no
    # longer counted as an end)
    recs = _records(6)
    ends = np.cumsum([len(r) for r in recs]).tolist()
    data = bytearray(fuzzing.synth.frame_rdw(recs))
    del data[ends[4] + 13]
    del data[ends[3] - 60:ends[3] - 58]
    _s, got, bad = _delivered(bytes(data))
    assert recs[4] in got  # before the fix: swallowed by record 3
    assert got == recs[:3] + [recs[4]]
    assert "damaged length" in bad[0].error and bad[0].size == len(recs[3]) - 2


def test_spanned_record_after_damage_is_kept_across_a_damaged_block_descriptor():
    # record 1's descriptor invalid, and the block descriptor between the two segments of
    # record 2 too: framing resumes after the damage at record 2's first segment only if what
    # follows it may follow it, and a damaged block descriptor before a continuation did not
    # count, so record 2 was quarantined with record 1 (campaign seed 14, inputs 38806, 74231,
    # 85060, 88349)
    recs = _records(12)
    clean = fuzzing.synth.frame_bdw(recs, blksize=4096, spanned=True)
    end = int.from_bytes(clean[0:2], "big")  # block 1
    c = 4 + len(recs[0])  # record 1, the last complete record of block 0; record 2 spans
    assert clean[c + 2] == 0 and clean[c + len(recs[1]) + 2] == 1 and clean[end + 6] == 2
    data = bytearray(clean)
    data[c + 3] = 0x20
    data[end + 2] = 0x01
    _s, got, _bad = _delivered(bytes(data))
    assert got == [r for i, r in enumerate(recs) if i != 1]  # before the fix: record 2 lost


def test_continuation_whose_data_passes_for_a_continuation_is_not_taken_for_a_block_descriptor():
    # a block descriptor invalid, and the continuation segment after it starting with data bytes
    # "54 00 03 00" that pass for a middle segment's descriptor: the real continuation descriptor,
    # four bytes before a "continuation", was taken for a second, damaged, block descriptor and
    # its record lost (campaign seed 14, inputs 51105, 26330, 33519 and 79435, the last three in
    # duplicated spanned records, where it happened without a block descriptor)
    from kneecap.smf.framing._descriptors import valid_rdw

    recs = _records(12)
    clean = fuzzing.synth.frame_bdw(recs, blksize=475, spanned=True)
    p = _blocks(clean)[7]
    assert clean[p + 4:p + 12].hex(" ") == "01 d7 03 00 54 00 03 00"  # the premise
    assert valid_rdw(clean, p + 8)
    data = bytearray(clean)
    data[p + 3] = 0x10
    _s, got, bad = _delivered(bytes(data))
    assert got == recs  # before the fix: the record whose middle segment is at p + 4 lost
    assert [(r.offset, r.size) for r in bad] == [(p, 4)]


def test_duplicating_a_block_after_a_cut_places_its_records_where_they_are():
    # the campaign's ground truth: a block that ran past a cut was duplicated all the same, the
    # copy (the rest of the file) inserted at its old end modulo the length and its records placed
    # at that old end; a record duplicated from one of those copied other bytes. Records counted
    # intact that were not in the input made the campaign report losses (seed 14, inputs 26376,
    # 37244, 70927 and 98253)
    d = fuzzing.Dump.build([POOL[i] for i in range(12)], "bdw", blksize=4000)
    d.truncate(d.blocks[0][1] - 100)  # the last record of block 0 cut, the others intact
    n = len(d.placed)
    d.duplicate_block(0)
    d.duplicate_record(n, 0)  # the first record of the copy, if any, copied again
    data = bytes(d.data)
    assert len(d.intact()) >= 2
    for pl in d.intact():
        assert b"".join(data[s:e] for s, e in pl.pieces) == pl.rec.data


def test_spanned_record_cut_short_before_the_first_trusted_block_does_not_swallow_its_neighbour():
    # junk after the first block descriptor, three bytes cut from the last segment of record 1
    # and junk after record 3: blocks first chain after record 3, and before that point record
    # 1's segments, chaining from first to last, were delivered with the first three bytes of
    # record 2, a trusted record start, which was lost (campaign seed 14, input 89946)
    d = fuzzing.Dump.build(POOL[:12], "vbs", blksize=2430)
    _first, (s, e) = d.placed[1].pieces
    assert d.placed[2].pieces == [[e, e + len(POOL[2].data)]]  # the premise: 2 right after 1
    d.insert(d.placed[3].pieces[0][1], b"\x05" * 5)
    d.delete((s + e) // 2, 3)
    d.insert(4, b"\x07" * 3)
    recs = [r.data for r in POOL[:12]]
    _s, got, bad = _delivered(bytes(d.data))
    assert recs[2] in got  # before the fix: swallowed by record 1's last segment
    assert got == [r for i, r in enumerate(recs) if i != 1]
    assert "not SMF framing" in bad[0].error


def test_two_block_spanned_dump_with_both_descriptors_at_its_start_damaged_is_read_as_blocked():
    # record 0's descriptor and the second block descriptor invalid: no block checks out, no
    # valid block descriptor sits between two segments, and the file was read as RDW, cutting
    # record 2 (first segment in block 0, last in block 1) at the damaged block descriptor
    # (campaign seed 14, input 32332)
    recs = [r.data for r in (POOL[5], POOL[3], POOL[9])]
    data = bytearray(fuzzing.synth.frame_bdw(recs, blksize=1254, spanned=True))
    b1 = _blocks(bytes(data))[1]
    f = 4 + len(recs[0]) + len(recs[1])
    assert len(_blocks(bytes(data))) == 2 and data[f + 2] == 1 and data[b1 + 6] == 2  # premise
    data[4 + 2] ^= 0x08
    data[b1] ^= 0x80  # an extended block descriptor, far too long
    s, got, bad = _delivered(bytes(data))
    assert s.framing == "bdw" and got == recs[1:]  # before the fix: "rdw", record 2 lost
    assert bad[0].offset == 0 and bad[-1].offset == b1 and bad[-1].size == 4


def test_lone_rmf_record_whose_sections_fill_its_length_is_read():
    # junk before a 72.3 record, two bytes after it, and the next record cut by the end of the
    # input: one header whose length ends near another, the other one's length past the end, and
    # the file was refused as a plain binary transfer (campaign seed 14, inputs 54389, 60891 and
    # 70228). The record's triplets locate sections that end exactly at its length.
    r72, nxt = POOL[0].data, POOL[1].data
    assert r72[5] == nxt[5] == 72  # the premise: two 72.3 records
    data = b"\x07" * 6 + r72 + b"\x07" * 2 + nxt[:150]
    s, got, bad = _delivered(data)
    assert got == [r72]  # before the fix: SMFDataError
    assert bad[0].offset == 0 and bad[0].size == 6
    assert sum(r.size for r in bad) == len(data) - len(r72)


def test_record_leading_to_an_rmf_record_cut_by_the_end_of_input_is_read():
    # a record of a type kneecap only counts, two bytes, then a 72.3 record that the end of the
    # input cuts: the 72.3 record's triplets confirm its length, and the record before it leads
    # there (campaign seed 14, input 24686)
    other, r72 = POOL[5].data, POOL[0].data
    assert other[5] == 99 and r72[5] == 72  # the premise
    data = b"\x07" * 6 + other + b"\x07" * 2 + r72[:400]
    s, got, bad = _delivered(data)
    assert got == [other]  # before the fix: SMFDataError
    assert [(r.offset, r.size) for r in bad] == [(0, 6), (6 + len(other), 2 + 400)]


def test_plain_binary_whose_record_tails_pass_for_descriptors_is_still_refused():
    # each record's last four bytes pass for a descriptor of the next record, but of a length
    # its sections do not fill: a plain binary transfer still has no record that confirms itself
    import io

    import pytest

    from kneecap.smf.framing import RecordStream, SMFDataError

    recs = [POOL[i].data for i in (0, 1, 6, 7, 12)]
    assert all(r[5] == 72 for r in recs)  # the premise: RMF records, the rule's own ground
    tails = [r[:-4] + (20).to_bytes(2, "big") + bytes(2) for r in recs]
    data = fuzzing.synth.frame_plain(tails)
    with pytest.raises(SMFDataError, match="quote site rdw"):
        list(RecordStream(io.BytesIO(data)))
