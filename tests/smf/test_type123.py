"""SMF 123 subtype 1 version 2 (z/OS Connect API provider) decoder on hand-built records.

Records are assembled byte by byte from the IBM layout (header extension, server section,
20-request-capable request data sections); expected values are hand conversions of the
bytes written here (STCKE: TOD clock bits 0-63 in bytes 1-8, bit 51 = 1 µs).
"""

from __future__ import annotations

import datetime as dt
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kneecap.smf.framing import SMFDataError
from kneecap.smf.type123 import COLUMNS, TABLE, Type123Provider, decode_record, stcke_us

CP = "cp037"
T0 = dt.datetime(2025, 3, 4, 10, 0, 0)
T0_US = int((T0 - dt.datetime(1900, 1, 1)).total_seconds()) * 10**6
REQ_LEN = 1560  # size of one request data section in the IBM table (sum of its fields)
SERVER_LEN = 180


def e(text: str, n: int) -> bytes:
    return text.ljust(n).encode(CP)


def stcke(us: int | None) -> bytes:
    if us is None:
        return bytes(16)
    return b"\x00" + (us << 12).to_bytes(8, "big") + bytes(7)


def request(*, api="accounts", method="GET", status=200, req_bytes=0, resp_bytes=1234,
            entry_us=T0_US, elapsed_us=12_500, sor=(1_000, 10_750), req_id=1) -> bytes:
    r = bytearray(REQ_LEN)
    r[0] = 2  # data section version
    r[1] = 1  # request type
    struct.pack_into(">H", r, 2, status)
    r[128:192] = e(api, 64)
    r[192:200] = e("1.0.0", 8)
    r[200:264] = e("getAccount", 64)
    r[264:272] = e("2.0", 8)
    r[272:280] = e(method, 8)
    struct.pack_into(">II", r, 664, req_bytes, resp_bytes)
    r[672:688] = stcke(entry_us)
    r[688:704] = stcke(entry_us + elapsed_us)
    r[704:720] = stcke(None if sor is None else entry_us + sor[0])
    r[720:736] = stcke(None if sor is None else entry_us + sor[1])
    r[736:752] = e("CICS", 16)
    r[784:848] = e("CICSAOR1", 64)
    r[976:984] = req_id.to_bytes(8, "big")
    return bytes(r)


def build123(requests: list[bytes], *, subtype: int = 1, version: int = 2) -> bytes:
    server = bytearray(SERVER_LEN)
    server[0] = 2
    server[4:12] = e("SYSA", 8)
    server[12:20] = e("PLEX1", 8)
    server[20:28] = e("STC04711", 8)
    server[28:36] = e("ZCONSRV", 8)
    server[172:180] = e("V3R0", 8)
    head = bytearray(48)
    struct.pack_into(">HHBB", head, 0, 0, 0, 0x5E, 123)
    struct.pack_into(">I", head, 6, 3_600_000)
    head[10:14] = bytes.fromhex("0125063F")
    head[14:18] = e("SYSA", 4)
    head[18:22] = e("ZCON", 4)
    struct.pack_into(">H", head, 22, subtype)
    struct.pack_into(">I", head, 24, version)
    head[28], head[29] = 2, 32  # two triplets, first at record offset 32
    struct.pack_into(">IHH", head, 32, 48, SERVER_LEN, 1)
    struct.pack_into(">IHH", head, 40, 48 + SERVER_LEN, REQ_LEN, len(requests))
    rec = head + server + b"".join(requests)
    struct.pack_into(">H", rec, 0, len(rec))
    return bytes(rec)


def batch(*recs: bytes):
    buf = b"".join(recs)
    lengths = np.array([len(r) for r in recs], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return np.frombuffer(buf, np.uint8), starts, lengths


def test_stcke_unix_epoch():
    # TOD X'7D91048BCA000000' is 1970-01-01 00:00 UTC (Principles of Operation example value):
    # 2,208,988,800 s after 1900-01-01.
    assert stcke_us(bytes.fromhex("00" "7D91048BCA000000") + bytes(7)) == 2_208_988_800 * 10**6


def test_golden_record_with_two_requests():
    rows = decode_record(build123([
        request(),
        request(api="payments", method="POST", status=201, req_bytes=512, resp_bytes=64,
                entry_us=T0_US + 2_000_000, elapsed_us=3_250, sor=None, req_id=2),
    ]))
    assert len(rows) == 2
    a, b = rows
    assert tuple(a) == COLUMNS
    assert (a["system_id"], a["system_name"], a["sysplex"]) == ("SYSA", "SYSA", "PLEX1")
    assert (a["server_job_name"], a["server_job_id"]) == ("ZCONSRV", "STC04711")
    assert (a["api"], a["api_version"], a["service"], a["method"]) == (
        "accounts", "1.0.0", "getAccount", "GET")
    assert (a["http_status"], a["req_bytes"], a["resp_bytes"]) == (200, 0, 1234)
    assert a["zc_entry_at"] == T0
    assert a["zc_exit_at"] == T0 + dt.timedelta(microseconds=12_500)
    # exit - entry = 12,500 us = 12.5 ms; SOR recv - sent = 10,750 - 1,000 us = 9.75 ms
    np.testing.assert_allclose([a["elapsed_ms"], a["sor_ms"]], [12.5, 9.75], rtol=1e-12)
    assert a["sor_identifier"] == "CICSAOR1" and a["request_id"] == "0000000000000001"
    assert (b["api"], b["method"], b["http_status"], b["req_bytes"]) == (
        "payments", "POST", 201, 512)
    np.testing.assert_allclose(b["elapsed_ms"], 3.25, rtol=1e-12)
    assert np.isnan(b["sor_ms"]) and b["sor_sent_at"] is None  # never reached a SOR


def test_twenty_requests_in_one_record():
    recs = [request(req_id=i, entry_us=T0_US + i * 1000, elapsed_us=1000 * (i + 1))
            for i in range(20)]
    raw = build123(recs)
    assert len(raw) <= 32756  # IBM: SMF123_LEN maximum
    tables, bad = Type123Provider().decode_batch(*batch(raw))
    cols = tables[TABLE]
    assert bad == []
    # elapsed of request i is (i + 1) ms by construction
    np.testing.assert_allclose(cols["elapsed_ms"], np.arange(1, 21, dtype=float), rtol=1e-12)
    assert cols["zc_entry_at"].dtype == np.dtype("datetime64[us]")


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (build123([request()], version=1), "version 1 is not decoded"),
        (build123([request()], subtype=2), "subtype 2 is not decoded"),
        (build123([request()])[:1000], "request data triplet: .* run past the end"),
        (build123([request(elapsed_us=-5)]), "EXIT is before SMF123S1_TIME_ZC_ENTRY"),
        (build123([request()])[:20], "shorter than its 30-byte"),
    ],
)
def test_errors(raw, match):
    with pytest.raises(SMFDataError, match=match):
        decode_record(raw)


def test_bad_record_quarantined_whole_neighbours_kept():
    good = build123([request(api="one"), request(api="two")])
    broken = bytearray(build123([request(api="bad")]))
    broken[48 + SERVER_LEN + 672:48 + SERVER_LEN + 688] = bytes(16)  # zero ZC entry time
    tables, bad = Type123Provider().decode_batch(*batch(good, bytes(broken), good))
    assert list(tables[TABLE]["api"]) == ["one", "two", "one", "two"]
    assert len(bad) == 1 and bad[0][0] == 1 and bad[0][1] == 48 + SERVER_LEN + 672


def test_registered_and_end_to_end_with_reader(tmp_path):
    reader = pytest.importorskip("kneecap.smf.reader")
    reader._load_plugins()
    assert isinstance(reader.DECODERS[(123, 1)], Type123Provider)
    assert (123, 2) not in reader.DECODERS  # requester layout unknown: counted, not decoded
    path = tmp_path / "zcon.rdw"
    path.write_bytes(build123([request(), request(api="x")])
                     + build123([request()], subtype=2))
    res = reader.decode_file(path)
    assert list(res[TABLE]["api"]) == ["accounts", "x"]
    assert res.unknown.get((123, 2)) == 1
    assert res.quarantine.empty


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cut=st.integers(min_value=0, max_value=48 + SERVER_LEN + 2 * REQ_LEN - 1),
    flips=st.lists(st.tuples(st.integers(0, 48 + SERVER_LEN + 2 * REQ_LEN - 1),
                             st.integers(0, 7)), max_size=6),
    truncate=st.booleans(),
)
def test_damaged_record_decoded_or_quarantined_never_crashes(cut, flips, truncate):
    rec = bytearray(build123([request(api="mid1"), request(api="mid2")]))
    for pos, bit in flips:
        rec[pos] ^= 1 << bit
    damaged = bytes(rec[:cut]) if truncate else bytes(rec)
    first, last = build123([request(api="first")]), build123([request(api="last")])
    tables, bad = Type123Provider().decode_batch(*batch(first, damaged, last))
    apis = list(tables[TABLE]["api"])
    assert apis[0] == "first" and apis[-1] == "last"
    assert all(i == 1 for i, _, _ in bad)
    if bad:  # quarantined whole: none of its requests leak out
        assert apis == ["first", "last"]
    else:
        assert len(apis) in (2, 3, 4)  # the damaged record had 0-2 request sections left
