"""SMF 72.3 golden test: bytes with hand-chosen values -> one row, every value checked by hand."""

import datetime as dt
import io
import struct

import numpy as np
import pandas as pd
import pytest
import synth

from kneecap.smf import type72
from kneecap.smf.reader import decode_file

START = dt.datetime(2025, 3, 3, 14, 15)
SCS = 92 + 104 + 280  # synth layout: triplets end at 92, product 104 bytes, WLM control 280


def golden_record() -> bytes:
    """One service class period with service units chosen to be exact in HFP.

    Coefficients (synth defaults): R723MCPU = R723MSRB = 10000 (1.0), R723MADJ = 2000, so one
    CPU second is 16e6 / 2000 = 8000 service units; R723NFFS = 256; R723MCF = R723MCFS = 1024.
    """
    rec = bytearray(synth.record_72_3("SYSA", "PLEX1", START, 900.0, "ZCONHI", "ONLINE",
                                      [synth.Period(period=1, ended=4500)]))
    hex_fields = {
        32: "4615F90000000000",   # R723CCPU = X'15F900' = 1,440,000 SU -> 180 s TCB
        56: "4513880000000000",   # R723CSRB = X'13880'  =    80,000 SU ->  10 s SRB
        544: "4575300000000000",  # R723CSUP = X'75300'  =   480,000 SU ->  60 s on zIIP
        552: "449C400000000000",  # R723CSUC = X'9C40'   =    40,000 SU ->   5 s zIIP-eligible on CP
        200: "456DDD0000000000",  # R723CTET = X'6DDD0'  = 450,000 x 1024 us = 460.8 s
    }
    for off, h in hex_fields.items():
        rec[SCS + off : SCS + off + 8] = bytes.fromhex(h)
    struct.pack_into(">III", rec, SCS + 224, 120, 900, 30)     # CCUS, CTOT, CCDE
    struct.pack_into(">I", rec, SCS + 344, 400)                # CTOU
    struct.pack_into(">III", rec, SCS + 532, 200, 25, 15)      # SUPU, SUCU, SUPD
    return bytes(rec)


def test_golden_72_3_row():
    res = decode_file(io.BytesIO(golden_record()))
    assert res.quarantine.empty
    df = res.smf72_workload
    assert list(df.columns) == list(type72.COLUMNS)
    assert len(df) == 1
    r = df.iloc[0]
    assert (r.system_id, r.sysplex, r.class_name, r.workload_name) == ("SYSA", "PLEX1",
                                                                       "ZCONHI", "ONLINE")
    assert r.interval_start_at == pd.Timestamp(START)
    assert not r.is_report_class and r.period == 1 and r.ended == 4500
    # Hand computation (IBM TCBSEC = CCPU x MADJ / (1600 x MCPU)):
    #   tcb = 1,440,000 x 2000 / (1600 x 10000) = 180 s; srb = 80,000 x 2000 / 16e6 = 10 s
    #   ziip = 480,000 x 2000 / 16e6 = 60 s; ziip_on_cp = 40,000 x 2000 / 16e6 = 5 s
    np.testing.assert_allclose([r.tcb_s, r.srb_s, r.cpu_s, r.ziip_s, r.ziip_on_cp_s],
                               [180.0, 10.0, 190.0, 60.0, 5.0], rtol=1e-12)
    # APPL% CP = (190 - 60 x 256/256) / 900 x 100 = 14.444...; IIP = 60/900 x 100;
    # IIPCP = 5/900 x 100 (smf-notes §3.4 formulas)
    np.testing.assert_allclose([r.appl_cp_pct, r.appl_iip_pct, r.appl_iipcp_pct],
                               [1300 / 90, 600 / 90, 50 / 90], rtol=1e-12)
    # response: 450,000 x 1.024 ms / 4500 ended = 102.4 ms
    np.testing.assert_allclose(r.resp_ms, 102.4, rtol=1e-12)
    assert (r.cpu_using_samples, r.total_delay_samples, r.cpu_delay_samples,
            r.total_using_samples) == (120, 900, 30, 400)
    assert (r.ziip_using_samples, r.ziip_on_cp_using_samples, r.ziip_delay_samples) == (200, 25, 15)


def test_report_class_flag_and_periods():
    periods = [synth.Period(period=j + 1, ended=10 * (j + 1), tcb_s=1.0 + j) for j in range(3)]
    rec = synth.record_72_3("SYSB", "PLEX1", START, 600.0, "RPTCL", "W", periods,
                            report_class=True)
    df = decode_file(io.BytesIO(rec)).smf72_workload
    assert df["is_report_class"].tolist() == [True] * 3
    assert df["period"].tolist() == [1, 2, 3]
    assert df["ended"].tolist() == [10, 20, 30]
    np.testing.assert_allclose(df["cpu_s"], [1.0, 2.0, 3.0], rtol=1e-12)
    np.testing.assert_allclose(df["interval_s"], 600.0)


def test_nffs_normalisation_and_mt_factor():
    # zIIP 1.5x as fast as a CP: NFFS = 384. CCPU holds normalised zIIP SUs (IBM R723CCPU text).
    k = synth.Coefficients(nffs=384, mcfs=2048)  # MT-2 zIIP capacity factor 2.0
    p = synth.Period(ended=1, tcb_s=100.0, ziip_s=40.0)
    rec = synth.record_72_3("SYSA", "P", START, 1000.0, "C", "W", [p], k)
    r = decode_file(io.BytesIO(rec)).smf72_workload.iloc[0]
    # CP = 100 - 40 x 384/256 = 40 s -> 4 %; IIP = 40 / (1000 x 2048/1024) = 2 %
    np.testing.assert_allclose([r.appl_cp_pct, r.appl_iip_pct, r.ziip_cp_equiv_s],
                               [4.0, 2.0, 60.0], rtol=1e-12)
    assert r.ziip_mt_capacity == 2.0


@pytest.mark.parametrize("mcfs,mflg,expected", [
    (1331, 0x00, 1331 / 1024),  # SMT-2 at 1.2998: R723MCFS / 1024, read back exactly
    (1024, 0x00, None),         # MT-1: a core does its MT-1 work, factor 1
    (0, 0x00, None),            # no zIIP installed (IBM: "a zero value is reported")
    (1331, 0x10, None),         # R723MFLG bit 3, HISMT failure: the MT numerators are invalid
])
def test_ziip_mt_capacity_is_r723mcfs_over_1024_where_smt2(mcfs, mflg, expected):
    k = synth.Coefficients(mcfs=mcfs)
    rec = bytearray(synth.record_72_3("SYSA", "P", START, 900.0, "C", "W",
                                      [synth.Period(ended=9000, tcb_s=90.0, ziip_s=36.0)], k))
    rec[92 + 104 + 1] = mflg  # R723MFLG, WLM control section offset 1
    r = decode_file(io.BytesIO(bytes(rec))).smf72_workload.iloc[0]
    if expected is None:
        assert np.isnan(r.ziip_mt_capacity)
        np.testing.assert_allclose(r.appl_iip_pct, 4.0, rtol=1e-12)  # 36 s / 900 s
    else:
        assert r.ziip_mt_capacity == expected  # exact: a binary fraction over 1024
        # APPL% IIP = zIIP time (MT-1 equivalent) / (interval x MCFS / 1024)
        np.testing.assert_allclose(r.appl_iip_pct, 100 * 36.0 / (900.0 * expected), rtol=1e-12)


@pytest.mark.parametrize("patch,reason", [
    ((60, struct.pack(">IHH", 476, 752, 9)), "period data triplet: sections run past"),
    ((36, struct.pack(">IHH", 196, 100, 1)), "WLM control triplet: section shorter"),
    ((92 + 10, bytes.fromhex("0125FFFF")), "malformed packed"),
    ((92 + 104 + 52, bytes(4)), "R723MCPU"),
])
def test_damaged_72_3_is_quarantined_with_reason(patch, reason):
    good = golden_record()
    off, b = patch
    bad = bytearray(good)
    bad[off : off + len(b)] = b
    # the neighbours are two different records (a byte-identical copy would be a duplicate)
    other = bytearray(good)
    other[92 + 104 + 120] = ord("Y".encode("cp037"))  # R723MCNM: another class name
    res = decode_file(io.BytesIO(good + bytes(bad) + bytes(other)))
    assert len(res.smf72_workload) == 2  # both intact neighbours decoded
    q = res.quarantine
    assert len(q) == 1 and q.record_no.iloc[0] == 2
    assert reason in q.reason.iloc[0]
    assert q.offset.iloc[0] >= len(good)  # absolute offset lies inside record 2


def goal_record() -> bytes:
    """Three periods: a percentile goal in seconds with a distribution, a velocity goal with one,
    a discretionary goal without (R723CRTX 0)."""
    periods = [
        synth.Period(period=1, ended=55, goal="percentile", goal_value=2, goal_unit="s", goal_percentile=90,
                     rt_midpoint_ms=2000, rt_buckets=tuple(range(1, 15)), importance=1),
        synth.Period(period=2, ended=7, goal="velocity", goal_value=40, rt_midpoint_ms=350,
                     rt_buckets=(7,) + (0,) * 13, total_using=30, total_delay=70, importance=3),
        synth.Period(period=3, ended=1, goal="discretionary"),
    ]
    return synth.record_72_3("SYSA", "PLEX1", START, 900.0, "ZCONHI", "ONLINE", periods)


def test_goal_and_distribution_bytes_where_ibm_puts_them():
    rec = goal_record()
    # header triplet SMF72RTS/RTL/RTN at 68/72/74: the map and two periods' arrays of 14 x 4 bytes
    rts, rtl, rtn = struct.unpack_from(">IHH", rec, 68)
    assert (rtl, rtn) == (56, 3) and rts == SCS + 3 * 752
    # period 1: R723CRTX 1 (0), R723CRTF x'40' seconds (9), R723CRGF x'80' percentile (10),
    # R723CVAL 2 (12), R723CPCT 90 (16), R723CIMP 1 (18)
    assert struct.unpack_from(">H", rec, SCS)[0] == 1
    assert (rec[SCS + 9], rec[SCS + 10]) == (0x40, 0x80)
    assert struct.unpack_from(">IHH", rec, SCS + 12) == (2, 90, 1)
    # map entries 1-6 as IBM's table lists them: 50 ... 100 (% of the goal)
    assert struct.unpack_from(">6I", rec, rts) == (50, 60, 70, 80, 90, 100)


def test_goals_and_buckets_decode():
    res = decode_file(io.BytesIO(goal_record()))
    assert res.quarantine.empty
    df = res.smf72_workload
    assert list(df.columns) == list(type72.COLUMNS)
    p1, p2, p3 = (df.iloc[i] for i in range(3))
    assert (p1.goal_type, p1.goal_resp_ms, p1.goal_percentile, p1.importance) == ("percentile", 2000.0, 90, 1)
    assert np.isnan(p1.goal_velocity_pct) and p1.rt_midpoint_ms == 2000.0
    np.testing.assert_array_equal(p1[list(type72.RT_BOUND_COLUMNS)].astype(float),
                                  [50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 200, 400])
    assert p1[list(type72.RT_COUNT_COLUMNS)].tolist() == list(range(1, 15))
    assert (p2.goal_type, p2.goal_velocity_pct, p2.goal_percentile, p2.rt_midpoint_ms) == ("velocity", 40.0, 0, 350.0)
    assert np.isnan(p2.goal_resp_ms)
    assert p2[list(type72.RT_COUNT_COLUMNS)].tolist() == [7] + [0] * 13
    # R723CRTX 0: no distribution (IBM: the buckets exist only for response time and velocity goals)
    assert p3.goal_type == "discretionary"
    assert p3[list(type72.RT_BOUND_COLUMNS)].isna().all() and (p3[list(type72.RT_COUNT_COLUMNS)] == 0).all()


def test_goal_units_and_no_goal():
    minutes = synth.Period(goal="average", goal_value=3, goal_unit="min")
    report = synth.Period(period=2)  # a report class period: no R723CRGF bit
    df = decode_file(io.BytesIO(synth.record_72_3("SYSA", "P", START, 900.0, "C", "W",
                                                  [minutes, report]))).smf72_workload
    assert (df.goal_type.tolist(), df.goal_resp_ms.iloc[0]) == (["average", "none"], 180_000.0)


@pytest.mark.parametrize("patch,reason", [
    ((SCS, struct.pack(">H", 3)), "R723CRTX points past"),                     # 3 sections only
    ((72, struct.pack(">H", 40)), "sections shorter than 56"),                 # SMF72RTL
    ((68, struct.pack(">I", 10)), "response time distribution triplet: offset into header"),
    ((SCS + 3 * 752 + 4, struct.pack(">I", 45)), "map (entry 0) is not a rising"),
])
def test_damaged_distribution_is_quarantined_with_reason(patch, reason):
    bad = bytearray(goal_record())
    off, b = patch
    bad[off : off + len(b)] = b
    res = decode_file(io.BytesIO(bytes(bad)))
    assert res.smf72_workload.empty
    assert len(res.quarantine) == 1 and reason in res.quarantine.reason.iloc[0]
