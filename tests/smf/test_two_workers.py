"""Two processes per input (framing and duplicate check forked off, decoding here) give exactly
what one gives: rows, quarantine, counts, duplicates and the Parquet files (#14 ingest speed)."""

from __future__ import annotations

import datetime as dt
import json
import random

import numpy as np
import pandas as pd
import pytest
import synth

from kneecap.ingest.manifest import MANIFEST, sha256_file
from kneecap.ingest.smf import ingest_paths
from kneecap.smf.reader import RecordKeys, decode_file, record_key, record_keys


def _mix(n_intervals: int) -> list[bytes]:
    """70.1, 72.3 and 30 records of ``n_intervals`` intervals, every 70.1 twice (a duplicate)."""
    part = synth.Partition("LPAR1", 1, [synth.LogicalCPU("CP", 900, 300),
                                        synth.LogicalCPU("IIP", 900, 200)])
    recs = []
    for i in range(n_intervals):
        t0 = dt.datetime(2025, 3, 3) + dt.timedelta(minutes=15 * i)
        r70 = synth.record_70_1("SYSA", "PLEX1", t0, 900.0, [part], 1)
        recs += [r70, r70]
        for c in range(4):
            p = [synth.Period(period=1, ended=100 + c, resp_ms=5.0, tcb_s=10.0 + c, srb_s=0.5,
                              ziip_s=4.0)]
            recs.append(synth.record_72_3("SYSA", "PLEX1", t0, 900.0, f"SC{c}", "WKL1", p))
            recs.append(synth.record_30("SYSA", "PLEX1", t0, 900.0,
                                        synth.AddressSpace(f"JOB{c}", 1.0 + c + i)))
    return recs


def _same(a, b) -> None:
    for attr in ("records", "duplicates", "framing", "orphan_segments", "bytes_read", "compressed"):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert sorted(a.tables) == sorted(b.tables)
    for t in a.tables:
        pd.testing.assert_frame_equal(a.tables[t], b.tables[t])
    pd.testing.assert_frame_equal(a.counts, b.counts)
    pd.testing.assert_frame_equal(a.quarantine, b.quarantine)


@pytest.mark.parametrize("frame", ["rdw", "vbs", "gzip"])
@pytest.mark.parametrize("seed", [None, 1, 2])
def test_two_workers_decode_exactly_what_one_does(tmp_path, frame, seed):
    recs = _mix(60)
    data = synth.frame_bdw(recs, spanned=True) if frame == "vbs" else synth.frame_rdw(recs)
    if seed is not None:
        data = synth.damaged(data, seed)
    if frame == "gzip":
        data = synth.gz(data)  # sent through the pipe, not read back from the file
    path = tmp_path / "d.smf"
    path.write_bytes(data)
    one = decode_file(path, batch_bytes=65536)
    two = decode_file(path, batch_bytes=65536, workers=2)
    _same(one, two)
    assert one.duplicates >= (60 if seed is None else 1)
    assert len(one.tables["smf30_interval"]) > 0


def test_two_workers_report_an_unreadable_file_like_one(tmp_path):
    path = tmp_path / "plain.bin"
    path.write_bytes(bytes(range(256)) * 400)
    with pytest.raises(Exception) as one:
        decode_file(path)
    with pytest.raises(Exception) as two:
        decode_file(path, workers=2)
    assert type(one.value) is type(two.value) and str(one.value) == str(two.value)


def test_ingest_with_two_workers_writes_the_same_files_and_manifest(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    recs = _mix(40)
    (d / "a.smf").write_bytes(synth.frame_rdw(recs))
    (d / "b.smf").write_bytes(synth.damaged(synth.frame_rdw(recs[100:]), 3))
    outs = {}
    for w in (1, 2):
        out = tmp_path / f"out{w}"
        s = ingest_paths(d, out, workers=w)
        assert [f.status for f in s.files] == ["ingested", "ingested"]
        outs[w] = out
        # the SHA-256 computed while decoding is the file's
        assert [f.sha256 for f in s.files] == [sha256_file(d / "a.smf"), sha256_file(d / "b.smf")]
    files = sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(outs[2]) for p in outs[2].rglob("*") if p.is_file())
    for f in files:
        if f.name != MANIFEST:
            assert (outs[1] / f).read_bytes() == (outs[2] / f).read_bytes(), f
    strip = [{k: v for k, v in json.loads(x).items() if k != "ingested_at"}
             for x in (outs[1] / MANIFEST).read_text().splitlines()]
    assert strip == [{k: v for k, v in json.loads(x).items() if k != "ingested_at"}
                     for x in (outs[2] / MANIFEST).read_text().splitlines()]
    assert not list(outs[2].rglob("*.tmp"))


def test_a_file_of_a_committed_size_is_hashed_first_and_still_skipped_or_ingested(tmp_path):
    recs = _mix(10)
    a, b = synth.frame_rdw(recs), synth.frame_rdw(recs[::-1])  # same size, other bytes
    (tmp_path / "a.smf").write_bytes(a)
    (tmp_path / "b.smf").write_bytes(b)
    (tmp_path / "a2.smf").write_bytes(a)
    out = tmp_path / "out"
    assert [f.status for f in ingest_paths(tmp_path / "a.smf", out).files] == ["ingested"]
    s = ingest_paths([tmp_path / "a2.smf", tmp_path / "b.smf"], out)
    assert [f.status for f in s.files] == ["skipped", "ingested"]
    assert s.files[1].duplicates == len(recs)  # every record of b is one of a


def test_record_keys_in_bulk_are_record_key_one_by_one():
    rng = random.Random(5)
    buf = bytes(rng.randrange(256) for _ in range(5000))
    starts, lengths = np.arange(0, 4000, 250), np.full(16, 250)
    assert record_keys(buf, starts, lengths).tolist() == [record_key(buf, s, 250) for s in starts]
    keys = RecordKeys()
    kept = keys.keep(buf + buf[:250], np.append(starts, 5000), np.append(lengths, 250))
    assert kept.tolist() == [True] * 16 + [False]
    assert keys.duplicates == 1 and len(keys.added) == 16


def test_record_keys_keep_the_first_copy_in_file_order_whichever_way_a_batch_is_checked():
    # batches with copies within them, of records stored before, or neither (the three paths of
    # RecordKeys.keep) against a step per record: the same mask, keys added and duplicate count
    rng = np.random.default_rng(35)
    paths = set()
    for trial in range(300):
        pool = [bytes([0, 24, 0, 0]) + rng.integers(0, 256, 20, dtype=np.uint8).tobytes()
                for _ in range(rng.integers(1, 60))]
        recs = [pool[i] for i in rng.integers(0, len(pool), rng.integers(1, 40))]
        buf, starts, lengths = b"".join(recs), np.arange(len(recs)) * 24, np.full(len(recs), 24)
        stored = {record_key(pool[0], 0, 24)} if trial % 3 == 0 else set()
        keys = RecordKeys(stored)
        kept = keys.keep(buf, starts, lengths).tolist()
        seen, want, added = set(stored), [], []
        batch_keys = record_keys(buf, starts, lengths).tolist()
        paths.add((stored.isdisjoint(batch_keys), len(set(batch_keys)) == len(batch_keys)))
        for k in batch_keys:
            want.append(k not in seen)
            if k not in seen:
                seen.add(k)
                added.append(k)
        assert (kept, keys.added, keys.duplicates) == (want, added, want.count(False)), trial
    # every path was taken: no copies, copies within the batch only, records stored before
    assert {(True, True), (True, False)} <= paths and any(not disjoint for disjoint, _ in paths)
