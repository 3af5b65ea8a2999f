"""Codecs: HFP, packed decimal, SMF dates/times, EBCDIC code pages, STCK."""

import datetime as dt
import doctest
import shutil
import subprocess

import numpy as np
import pytest
import synth
from hypothesis import given, settings
from hypothesis import strategies as st

from kneecap.smf import codecs, framing, header, layout, record_keys
from kneecap.smf.codecs import (
    ebcdic,
    hfp,
    hfp_array,
    packed,
    rmf_interval_s,
    smf_date,
    stck_datetime,
)
from kneecap.smf.framing import SMFDataError, _anchors, _descriptors, _detect, _gunzip, _records


# the framing package's doctests: the public classes' in the package (they carry its name), the
# functions' in the modules that define them
@pytest.mark.parametrize("module", [codecs, framing, _records, _descriptors, _anchors, _detect, _gunzip, layout,
                                    header, record_keys])
def test_doctests(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_hfp_published_example():
    # Wikipedia "IBM hexadecimal floating-point": -118.625 is C2 76 A0 00 (short form)
    assert hfp(bytes.fromhex("C276A000")) == -118.625
    assert hfp(bytes.fromhex("C276A00000000000")) == -118.625
    # 1,440,000 = X'15F900' = 0.15F900 x 16**6 -> exponent 64 + 6 = X'46' (by hand)
    assert hfp(bytes.fromhex("4615F90000000000")) == 1_440_000.0


@settings(max_examples=200, deadline=None)
@given(
    st.floats(min_value=1e-70, max_value=1e70),  # inside HFP's range 16**-65 .. 16**63
    st.booleans(),
)
def test_hfp_round_trip_against_independent_encoder(mag, negative):
    x = -mag if negative else mag
    # synth.hfp_encode is a separate implementation (log16 + rounding), not the decoder inverted
    b = synth.hfp_encode(x)
    np.testing.assert_allclose(hfp(b), x, rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(hfp_array(np.frombuffer(b, ">u8")), [x], rtol=1e-15, atol=1e-300)


def test_hfp_array_matches_scalar():
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 2**63, size=500, dtype=np.uint64) | (
        rng.integers(0, 2, 500, dtype=np.uint64) << np.uint64(63))
    be = raw.astype(">u8")
    buf = be.tobytes()
    scalar = [hfp(buf[8 * i : 8 * i + 8]) for i in range(be.size)]
    np.testing.assert_allclose(hfp_array(be), scalar, rtol=0, atol=0)


def test_packed_and_dates():
    assert packed(bytes.fromhex("00123C")) == 123
    assert packed(bytes.fromhex("00123D")) == -123
    # 0cyydddF: c=1 -> 20xx; day 060 of leap year 2024 is 29 February
    assert smf_date(bytes.fromhex("0124060F")) == dt.date(2024, 2, 29)
    assert smf_date(bytes.fromhex("0099001F")) == dt.date(1999, 1, 1)
    # MMSSTTTF: 14 min 59.999 s (IBM CPU Activity report example "INTERVAL 14.59.999")
    assert rmf_interval_s(bytes.fromhex("1459999F")) == pytest.approx(899.999, abs=1e-9)
    with pytest.raises(SMFDataError, match="invalid SMF date"):
        smf_date(bytes.fromhex("0123366F"))  # 2023 has 365 days
    with pytest.raises(SMFDataError, match="digit nibble"):
        packed(bytes.fromhex("0A12345F"))


def test_stck_unix_epoch():
    # The TOD value of 1970-01-01 00:00 UTC is X'7D91048BCA000000' (widely published constant)
    assert stck_datetime(bytes.fromhex("7D91048BCA000000")) == dt.datetime(1970, 1, 1)
    with pytest.raises(SMFDataError, match="8 \\(STCK\\) or 16"):
        stck_datetime(bytes(5))


@pytest.mark.skipif(shutil.which("iconv") is None, reason="iconv not installed")
@pytest.mark.parametrize("cp,iconv_name", [("cp1047", "IBM1047"), ("cp037", "IBM037"),
                                           ("cp500", "IBM500")])
def test_codepages_match_glibc(cp, iconv_name):
    # independent reference: glibc's charmaps via iconv, for every printable code point
    data = bytes(range(0x40, 0x100))
    out = subprocess.run(["iconv", "-f", iconv_name, "-t", "UTF-32BE"], input=data,
                         capture_output=True, check=True).stdout
    expected = out.decode("utf-32-be")
    got = "".join(codecs._table(cp)[b] for b in data)
    assert got == expected


def test_ebcdic_strips_and_rejects_unknown_codepage():
    assert ebcdic("IIP ".encode("cp037") + b"\x00\x00") == "IIP"
    with pytest.raises(ValueError, match="unsupported code page"):
        ebcdic(b"\xc1", "cp999")
