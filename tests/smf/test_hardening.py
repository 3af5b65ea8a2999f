"""Hardening of SMF framing and ingest (issue #14, findings 1-6).

Each test names the finding it covers. Records come from ``synth`` (built byte by byte from IBM's
mappings); damage is applied at known positions so the intact records are known exactly.
"""

import datetime as dt
import gzip
import io
import json
import multiprocessing as mp

import numpy as np
import pandas as pd
import pytest
import synth

from kneecap.ingest.manifest import MANIFEST
from kneecap.ingest.smf import ingest_paths
from kneecap.smf.framing import TRANSFER_HELP, RecordStream, SMFDataError
from kneecap.smf.reader import decode_file

START = dt.datetime(2025, 3, 3)


def _blocks(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every block of a BDW-framed file."""
    out, p = [], 0
    while p < len(data):
        n = int.from_bytes(data[p:p + 2], "big")
        out.append((p, p + n))
        p += n
    return out


def _heads(data: bytes, *, blocked: bool) -> list[int]:
    """Positions of the descriptors of complete records and first segments, in file order."""
    out, p = [], 0
    while p < len(data):
        end = p + int.from_bytes(data[p:p + 2], "big") if blocked else len(data)
        q = p + 4 if blocked else p
        while q < end:
            if data[q + 2] in (0, 1):
                out.append(q)
            q += int.from_bytes(data[q:q + 2], "big")
        p = end
    return out


def _stream(data: bytes, **kw):
    s = RecordStream(io.BytesIO(data), **kw)
    got = list(s)
    return s, [r for r in got if r.error is None], [r for r in got if r.error]


def _bad_bytes(bad) -> int:
    return sum(r.size for r in bad)


# ----------------------------------------------------------------------------------- finding 1

def test_f1_bit_flip_in_one_bdw_of_a_multi_batch_file_keeps_every_record():
    recs = synth.plain_intervals(120)  # ~ 0.5 MB, many 64 KiB batches
    data = bytearray(synth.frame_bdw(recs))
    blocks = _blocks(bytes(data))
    assert len(blocks) > 10 and len(data) > 8 * 65536
    p, _ = blocks[3]
    data[p] ^= 0x80  # extended-BDW bit: the block "claims" ~2 GB
    s, good, bad = _stream(bytes(data), batch_bytes=65536)
    assert [r.data for r in good] == recs  # nothing lost, nothing misframed
    assert len(bad) == 1 and bad[0].offset == p and bad[0].size == 4
    assert "block descriptor" in bad[0].error


def test_f1_length_bits_of_a_bdw_flipped_anywhere_lose_no_record():
    recs = synth.plain_intervals(40)
    clean = synth.frame_bdw(recs, blksize=6000)
    for k, (p, _) in enumerate(_blocks(clean)[:6]):
        for bit in range(16):
            data = bytearray(clean)
            data[p + bit // 8] ^= 0x80 >> (bit % 8)
            _, good, bad = _stream(bytes(data), batch_bytes=65536)
            assert [r.data for r in good] == recs, f"block {k}, bit {bit}"


# ----------------------------------------------------------------------------------- finding 2

def test_f2_rdw_length_covering_the_next_record_does_not_swallow_it():
    recs = synth.plain_intervals(6)
    bounds = np.cumsum([0] + [len(r) for r in recs])
    k = 4
    data = bytearray(synth.frame_rdw(recs))
    data[bounds[k]:bounds[k] + 2] = (len(recs[k]) + len(recs[k + 1])).to_bytes(2, "big")
    _, good, bad = _stream(bytes(data))
    assert [r.data for r in good] == recs[:k] + recs[k + 1:]
    assert len(bad) == 1 and bad[0].offset == bounds[k] and bad[0].size == len(recs[k])
    assert "descriptor" in bad[0].error


FRAMES = {
    "rdw": synth.frame_rdw,
    "bdw": lambda r: synth.frame_bdw(r, blksize=6000),
    "vbs": lambda r: synth.frame_bdw(r, blksize=3000, spanned=True),
}


@pytest.mark.parametrize("frame", list(FRAMES))
def test_f2_every_single_damaged_record_loses_no_neighbour_and_every_byte_is_accounted(frame):
    rng = np.random.default_rng(14)
    recs = synth.plain_intervals(8)
    clean = FRAMES[frame](recs)
    n = len(recs)
    for trial in range(80):
        k = int(rng.integers(1, n - 1))
        at = _heads(clean, blocked=frame != "rdw")[k]
        seg_len = int.from_bytes(clean[at:at + 2], "big")
        kind = ("flip", "cut", "insert", "length")[trial % 4]
        data = bytearray(clean)
        if kind == "flip":  # a bit of the descriptor or the header
            data[at + int(rng.integers(0, 24))] ^= 1 << int(rng.integers(0, 8))
        elif kind == "cut":
            a = at + int(rng.integers(4, seg_len - 8))
            del data[a:a + int(rng.integers(1, 8))]
        elif kind == "insert":
            a = at + int(rng.integers(4, seg_len))
            data[a:a] = rng.integers(0, 256, int(rng.integers(1, 8)), dtype=np.uint8).tobytes()
        else:
            data[at:at + 2] = int(rng.integers(5, 32760)).to_bytes(2, "big")
        s, good, bad = _stream(bytes(data), batch_bytes=65536)
        got = [r.data for r in good]
        for i, r in enumerate(recs):
            if i != k:
                assert r in got, f"{frame} {kind} trial {trial}: intact record {i} lost (damaged {k})"
        # nothing invented: at most the damaged record itself comes out changed
        assert sum(r not in recs for r in got) <= 1, f"{frame} {kind} trial {trial}: misframed"
        if frame == "rdw":
            # every byte is a delivered record or quarantined
            assert sum(len(r) for r in got) + _bad_bytes(bad) == len(data)


def test_f2_bytes_cut_from_a_record_in_a_bdw_file_lose_only_that_record():
    recs = synth.plain_intervals(20)
    clean = synth.frame_bdw(recs, blksize=6000)
    blocks = _blocks(clean)
    p, q = blocks[2]
    cut = p + 4 + 300  # inside the first record of block 2
    data = clean[:cut] + clean[cut + 50:]
    _, good, bad = _stream(data)
    got = [r.data for r in good]
    first_in_block = recs.index(clean[p + 4: p + 4 + int.from_bytes(clean[p + 4:p + 6], "big")])
    assert got == recs[:first_in_block] + recs[first_in_block + 1:]
    assert bad and all(p <= r.offset < q for r in bad)


def test_f2_block_header_is_not_read_as_a_record_header_after_resync():
    recs = synth.plain_intervals(20)
    clean = synth.frame_bdw(recs, blksize=6000)
    blocks = _blocks(clean)
    p, _ = blocks[4]
    # the BDW of block 4 now claims blocks 4 and 5 together
    n = blocks[5][1] - p
    data = clean[:p] + n.to_bytes(2, "big") + clean[p + 2:]
    s, good, bad = _stream(data)
    assert [r.data for r in good] == recs
    res = decode_file(io.BytesIO(data))
    assert res.unknown == {}  # no record came out 4 bytes off as an unknown type


# ----------------------------------------------------------------------------------- finding 3

def test_f3_duplicated_70_1_record_does_not_inflate_engine_counts():
    recs = synth.plain_intervals(2)
    r70 = recs[3]
    assert r70[5] == 70
    res = decode_file(io.BytesIO(synth.frame_rdw([*recs, r70])))
    cpu = res.smf70_cpu.set_index(["interval_start_at", "cpu_type"])
    assert cpu.loc[(pd.Timestamp(START), "CP"), "n_online"] == 2
    assert cpu.loc[(pd.Timestamp(START), "IIP"), "n_online"] == 2
    assert res.duplicates == 1


def test_f3_same_records_gzipped_or_in_overlapping_dumps_are_stored_once(tmp_path):
    recs = synth.plain_intervals(10)
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.smf").write_bytes(synth.frame_rdw(recs))
    (d / "a.smf.gz").write_bytes(synth.gz(synth.frame_rdw(recs)))
    (d / "overlap.smf").write_bytes(synth.frame_bdw(recs[20:] + synth.plain_intervals(12)[40:]))
    out = tmp_path / "out"
    s = ingest_paths(d, out)
    assert [f.status for f in s.files] == ["ingested"] * 3
    w = pd.concat(pd.read_parquet(p) for p in (out / "smf72_workload").rglob("*.parquet"))
    key = ["system_id", "interval_start_at", "class_name", "is_report_class", "period"]
    assert len(w) == len(w.drop_duplicates(key)) == 12 * 3
    c = pd.concat(pd.read_parquet(p) for p in (out / "smf70_cpu").rglob("*.parquet"))
    assert len(c) == len(c.drop_duplicates(["system_id", "interval_start_at", "cpu_type"])) == 24
    assert set(c["n_online"]) == {2}
    assert sum(f.duplicates for f in s.files) == len(recs) + len(recs[20:])


# ----------------------------------------------------------------------------------- finding 4

def test_f4_truncated_gzip_delivers_everything_before_the_cut(tmp_path):
    recs = synth.plain_intervals(200)
    raw = synth.frame_rdw(recs)
    gz = gzip.compress(raw, compresslevel=6)
    cut = gz[: len(gz) * 2 // 3]
    res = decode_file(io.BytesIO(cut))
    n72 = len(res.smf72_workload)
    # what the decompressor could give back before the cut, decoded uncompressed
    d = __import__("zlib").decompressobj(31)
    plain = d.decompress(cut)
    expect = decode_file(io.BytesIO(plain))
    assert n72 == len(expect.smf72_workload) > 300
    assert any("gzip" in r for r in res.quarantine["reason"])


def test_f4_one_prepended_byte_keeps_every_record_without_the_transfer_hint():
    recs = synth.plain_intervals(6)
    for frame in (synth.frame_rdw, synth.frame_bdw):
        data = b"\x07" + frame(recs)
        s, good, bad = _stream(data)
        assert [r.data for r in good] == recs
        assert len(bad) == 1 and bad[0].offset == 0 and bad[0].size == 1
        assert TRANSFER_HELP not in bad[0].error


def test_f4_plain_binary_is_still_refused():
    with pytest.raises(SMFDataError, match="quote site rdw"):
        list(RecordStream(io.BytesIO(synth.frame_plain(synth.plain_intervals(6)))))


# ----------------------------------------------------------------------------------- finding 5

def test_f5_resync_over_16_mib_of_zeros_is_one_quarantine_row():
    # its speed (linear in the zeros, beside sha256) is measured by benchmarks/bench_damage.py
    recs = synth.plain_intervals(4)
    zeros = bytes(16 << 20)
    data = synth.frame_rdw(recs[:8]) + zeros + synth.frame_rdw(recs[8:])
    _, good, bad = _stream(data)
    assert [r.data for r in good] == recs
    assert len(bad) == 1 and bad[0].size == len(zeros)


# ----------------------------------------------------------------------------------- finding 6

def _ingest_worker(args):
    src, out = args
    s = ingest_paths(src, out)
    return [(f.status, f.error) for f in s.files]


def test_f6_concurrent_ingests_into_one_out_are_safe(tmp_path):
    recs = synth.plain_intervals(40)
    d = tmp_path / "in"
    d.mkdir()
    paths = []
    for i in range(4):
        p = d / f"d{i}.smf"
        p.write_bytes(synth.frame_rdw(recs[i * 40:(i + 1) * 40]))
        paths.append(str(p))
    out = str(tmp_path / "out")
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        results = pool.map(_ingest_worker, [(paths, out), (paths[::-1], out)])
    statuses = sorted(st for r in results for st, _ in r)
    assert statuses == ["ingested"] * 4 + ["skipped"] * 4, results
    assert not list((tmp_path / "out").rglob("*.tmp"))
    lines = (tmp_path / "out" / MANIFEST).read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(x) for x in lines)
    w = pd.concat(pd.read_parquet(p) for p in (tmp_path / "out" / "smf72_workload").rglob("*.parquet"))
    assert len(w) == 40 * 3


def test_f6_torn_last_manifest_line_is_tolerated_and_its_file_reingested_once(tmp_path):
    recs = synth.plain_intervals(10)
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.smf").write_bytes(synth.frame_rdw(recs[:20]))
    (d / "b.smf").write_bytes(synth.frame_rdw(recs[20:]))
    out = tmp_path / "out"
    ingest_paths(d, out)
    m = out / MANIFEST
    lines = m.read_text().splitlines()
    m.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])  # crash mid-append
    s = ingest_paths(d, out)
    assert sorted(f.status for f in s.files) == ["ingested", "skipped"]
    entries = [json.loads(x) for x in m.read_text().splitlines() if x.strip().endswith("}")]
    assert len({e["sha256"] for e in entries}) == 2
    w = pd.concat(pd.read_parquet(p) for p in (out / "smf72_workload").rglob("*.parquet"))
    assert len(w) == 10 * 3
    s3 = ingest_paths(d, out)  # and the repaired manifest reads cleanly afterwards
    assert [f.status for f in s3.files] == ["skipped", "skipped"]


# ----------------------------------------------------------------------------------- finding 7

def test_f7_gzip_bomb_stops_with_a_clear_error(tmp_path):
    # how soon it stops is measured by benchmarks/bench_damage.py
    from kneecap.smf import framing

    # a real dump, then 64 concatenated members of 16 MiB of zeros: 1 GiB from about 1 MB
    bomb = gzip.compress(synth.frame_rdw(synth.plain_intervals(2))) + gzip.compress(bytes(16 << 20), 9) * 64
    assert len(bomb) < 1_200_000
    path = tmp_path / "bomb.bin.gz"
    path.write_bytes(bomb)
    with pytest.raises(SMFDataError, match=rf"bomb\.bin\.gz.*expands more than "
                                           rf"{framing.MAX_GUNZIP_RATIO}:1"):
        decode_file(path)
    summary = ingest_paths([path], tmp_path / "out")
    (result,) = summary.files
    assert result.status == "failed" and "decompression bomb" in result.error


def test_f7_ordinary_gzip_dump_is_under_the_ratio_limit():
    raw = synth.frame_rdw(synth.plain_intervals(50))
    res = decode_file(io.BytesIO(gzip.compress(raw, 9)))
    assert len(res.smf72_workload) == len(decode_file(io.BytesIO(raw)).smf72_workload) > 100


# ----------------------------------------------------------------------------------- finding 8

@pytest.mark.parametrize("codepage", ["foo", "utf-8"])
def test_f8_unknown_or_non_ebcdic_codepage_is_refused_without_a_traceback(tmp_path, capsys, codepage):
    from kneecap import cli

    dump = tmp_path / "d.bin"
    dump.write_bytes(synth.frame_rdw(synth.plain_intervals(2)))
    assert cli.main(["ingest", str(dump), "--out", str(tmp_path / "o"), "--codepage", codepage, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"ingest: --codepage {codepage!r} is not an EBCDIC code page" in err
    assert not (tmp_path / "o").exists()
