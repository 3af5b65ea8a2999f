"""SMF 70.1 batch decoder: the same parts as decode_record, record by record, bit for bit."""

import datetime as dt
import random

import numpy as np
import pandas as pd
import pytest
import synth

from kneecap.smf import type70
from kneecap.smf.codecs import ebcdic_array
from kneecap.smf.framing import SMFDataError

START = dt.datetime(2025, 3, 3, 9, 0)


def _records(seed: int, n: int = 40) -> list[bytes]:
    rng = random.Random(seed)
    recs = []
    for i in range(n):
        parts = []
        interval = rng.choice([900.0, 899.999, 600.0])
        for no in range(1, 2 + rng.randrange(4)):
            cpus = [synth.LogicalCPU(rng.choice(["CP", "IIP", "ICF", "IFL"]), rng.uniform(0, interval),
                                     dispatch_s=rng.uniform(0, interval), wait_s=rng.uniform(0, 200),
                                     parked_s=rng.choice([0.0, 0.0, interval, rng.uniform(0, 400)]))
                    for _ in range(rng.randrange(6))]  # some partitions have no logical processors
            parts.append(synth.Partition(f"LP{no}", no, cpus))
        own = rng.choice(parts).number
        # CPU data sections carry only CP/AAP/IIP: give the own image's ICF/IFL engines a CP code there
        for p in parts:
            if p.number == own:
                for c in p.cpus:
                    if c.cpu_type not in ("CP", "IIP"):
                        c.cpu_type = "CP"
        start = START + dt.timedelta(minutes=15 * (i // 3))
        recs.append(synth.record_70_1(f"SY{i % 3}", "PLEX1", start, interval,
                                      parts, own_number=own))
    return recs


def _batch(recs: list[bytes]):
    buf = b"".join(recs)
    lengths = np.array([len(r) for r in recs], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    u8 = np.frombuffer(buf, np.uint8)
    sids = ebcdic_array(np.take(u8, (starts + 14)[:, None] + np.arange(4)).view("S4").reshape(-1))
    return u8, starts, lengths, sids


def _expected(recs: list[bytes]):
    rows, bad = [], []
    for j, rec in enumerate(recs):
        try:
            rows.extend(type70.decode_record(rec)[type70.PARTS_TABLE])
        except SMFDataError as exc:
            bad.append((j, exc.offset or 0, exc.reason))
    return rows, bad


def _check(recs: list[bytes]) -> None:
    rows, bad = _expected(recs)
    u8, starts, lengths, sids = _batch(recs)
    out, got_bad = type70.Type70Subtype1().decode_batch(u8, starts, lengths, system_ids=sids)
    cols = out[type70.PARTS_TABLE]
    assert got_bad == bad
    assert list(cols) == (list(rows[0]) if rows else list(cols))
    assert len(next(iter(cols.values()))) == len(rows)
    for c in cols:
        want = [r[c] for r in rows]
        if c == "interval_start_at":
            want = np.array(want, dtype="datetime64[us]")
        # bit for bit: the sums are added in decode_record's order
        assert np.asarray(cols[c]).tolist() == np.asarray(want).tolist(), c
    if rows:
        pd.testing.assert_frame_equal(type70.finalize(pd.DataFrame(cols)), type70.finalize(pd.DataFrame(rows)))
        fa, fb = type70.finalize_columns(cols), type70.finalize_columns(
            {c: [r[c] for r in rows] for c in rows[0]})
        for c in type70.COLUMNS:
            assert fa[c].dtype == fb[c].dtype, c
            np.testing.assert_array_equal(fa[c], fb[c], err_msg=c, strict=True)


@pytest.mark.parametrize("seed", range(5))
def test_batch_equals_decode_record(seed):
    _check(_records(seed))


def test_partition_without_logical_processors():
    own = synth.Partition("PROD1", 3, [])
    other = synth.Partition("TEST1", 4, [synth.LogicalCPU("CP", 900, dispatch_s=800)])
    _check([synth.record_70_1("SYSP", "PLEX9", START, 900.0, [other, own], own_number=3)])


@pytest.mark.parametrize("seed", range(3))
def test_damaged_records_quarantined_like_decode_record(seed):
    rng = random.Random(100 + seed)
    recs = _records(seed, 30)
    for j in range(0, len(recs), 3):
        r = bytearray(recs[j])
        for _ in range(1 + rng.randrange(4)):
            at = rng.randrange(24, len(r))
            r[at] = rng.randrange(256)
        if rng.random() < 0.2:
            r = r[: rng.randrange(20, len(r))]
        recs[j] = bytes(r)
    _check(recs)


def test_type_codes_and_short_records():
    rec = bytearray(_records(7, 1)[0])
    bad_typ = bytearray(rec)
    bad_typ[100 + 104 + 344 + 15] = 5  # SMF70TYP of the first CPU data section
    _check([bytes(rec), bytes(bad_typ), bytes(rec[:82]), bytes(rec)])
