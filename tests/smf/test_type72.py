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
