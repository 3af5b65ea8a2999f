"""The standard SMF record header, self-defining triplets and the RMF product section.

Offsets include the 4-byte RDW (IBM counts it as offset 0), so every layout here indexes a
:class:`~kneecap.smf.framing.RawRecord` ``data`` directly.

Public API (stable)
-------------------
``STANDARD_HEADER`` : Layout            SMFxLEN .. SMFxSTY (24 bytes with subtypes)
``RMF_PRODUCT`` : Layout                SMF7xMFV .. SMF7xSNM (RMF product section, 70-79)
``SMFHeader``                           dataclass: length, seg, flag, record_type, time_cs,
                                        date, system_id, subsystem_id, subtype, written_at
``parse_header(rec, *, codepage="cp037") -> SMFHeader``
``record_type_subtype(rec) -> (type, subtype or None)``      cheap, no decoding of text
``Triplet(offset, length, number)``     with ``positions()`` -> section offsets
``read_triplet(rec, at, *, name, min_length=0) -> Triplet``  validated against the record
``read_triplets(rec, at, count, *, names=None) -> list[Triplet]``
``RMFProduct``                          dataclass: interval_start_at, interval_s, sysplex,
                                        system_name, partition_no, zIIP flag, reassembly info
``parse_rmf_product(rec, triplet, *, codepage="cp037") -> RMFProduct``
``rmf_product_columns(u8, positions, *, codepage) -> dict[str, ndarray]`` vectorised twin

References
----------
IBM, *z/OS MVS System Management Facilities (SMF)* (SA38-0667), "Standard and extended SMF
record headers"; record type 70 "Header/self-defining section" and "RMF product section";
record type 72 "Header/self-defining section" (the product section layout is shared by the
RMF records 70-79).
"""

from __future__ import annotations

import datetime as _dt
import struct
from dataclasses import dataclass

import numpy as np

from kneecap.smf.codecs import ebcdic, rmf_interval_s, rmf_time, smf_date, smf_datetime
from kneecap.smf.framing import SMFDataError
from kneecap.smf.layout import Field, Layout

__all__ = [
    "STANDARD_HEADER",
    "RMF_PRODUCT",
    "SMFHeader",
    "parse_header",
    "record_type_subtype",
    "Triplet",
    "TRIPLET",
    "read_triplet",
    "read_triplets",
    "RMFProduct",
    "parse_rmf_product",
    "rmf_product_columns",
    "FLAG_SUBTYPES",
    "HEADER_LEN",
    "HEADER_LEN_SUBTYPES",
]

#: SMFxFLG bit 1 (x'40'): subtypes are used, so SMFxSSI and SMFxSTY are present.
FLAG_SUBTYPES = 0x40
#: Header length without / with subtypes, RDW included (IBM "Standard SMF record header").
HEADER_LEN = 18
HEADER_LEN_SUBTYPES = 24

STANDARD_HEADER = Layout(
    "standard SMF record header",
    [
        Field("length", 0, 2, "u", "SMFxLEN", "record length incl. RDW"),
        Field("seg", 2, 2, "u", "SMFxSEG", "segment descriptor (0 unless spanned)"),
        Field("flag", 4, 1, "u", "SMFxFLG", "system indicator; x'40' subtypes used"),
        Field("record_type", 5, 1, "u", "SMFxRTY", "record type"),
        Field("time_cs", 6, 4, "u", "SMFxTME", "time moved to SMF buffer, 1/100 s since midnight"),
        Field("date", 10, 4, "raw", "SMFxDTE", "date, packed 0cyydddF"),
        Field("system_id", 14, 4, "ebcdic", "SMFxSID", "system identification (SMFPRMxx SID)"),
        Field("subsystem_id", 18, 4, "ebcdic", "SMFxSSI", "subsystem id ('RMF' for 70-79)"),
        Field("subtype", 22, 2, "u", "SMFxSTY", "record subtype"),
    ],
    source="IBM SMF manual, 'Standard and extended SMF record headers' (offsets incl. RDW)",
)

#: Offset/length/number triplet of the RMF records: 4-byte offset (from the RDW), 2-byte length,
#: 2-byte number (IBM SMF manual, record type 70/72 "Header/self-defining section").
TRIPLET = struct.Struct(">IHH")

RMF_PRODUCT = Layout(
    "RMF product section",
    [
        Field("rmf_version", 0, 2, "raw", "SMF7xMFV", "RMF version, packed"),
        Field("product", 2, 8, "ebcdic", "SMF7xPRD", "product name"),
        Field("ist", 10, 4, "raw", "SMF7xIST", "interval start time 0HHMMSSF (local)"),
        Field("dat", 14, 4, "raw", "SMF7xDAT", "interval start date 0cyydddF"),
        Field("int", 18, 4, "raw", "SMF7xINT", "interval length MMSSTTTF"),
        Field("samples", 24, 4, "u", "SMF7xSAM", "number of samples"),
        Field("rmf_flags", 30, 2, "u", "SMF7xFLA", "RMF flags"),
        Field("cycle", 36, 4, "raw", "SMF7xCYC", "sampling cycle 000TTTTF"),
        Field("mvs_level", 40, 8, "ebcdic", "SMF7xMVS", "MVS software level"),
        Field("processor_flags", 49, 1, "u", "SMF7xPRF", "x'04' at least one zIIP installed"),
        Field("partition_no", 50, 1, "u", "SMF7xPTN", "PR/SM partition number of this system"),
        Field("reassembly_offset", 68, 4, "u", "SMF7xRAO", "offset to reassembly area"),
        Field("reassembly_length", 72, 2, "u", "SMF7xRAL", "length of reassembly area"),
        Field("reassembly_number", 74, 2, "u", "SMF7xRAN", "number of reassembly areas"),
        Field("sysplex", 88, 8, "ebcdic", "SMF7xXNM", "sysplex name"),
        Field("system_name", 96, 8, "ebcdic", "SMF7xSNM", "system name"),
    ],
    source="IBM SMF manual, record types 70-79 'RMF product section' (SMF70PRO mapping)",
)


@dataclass(frozen=True)
class SMFHeader:
    """Decoded standard header of one record."""

    length: int
    seg: int
    flag: int
    record_type: int
    time_cs: int
    date: bytes
    system_id: str
    subsystem_id: str | None
    subtype: int | None

    @property
    def written_at(self) -> _dt.datetime:
        """SMFxTME + SMFxDTE as a naive local datetime (time the record was written)."""
        return smf_datetime(self.time_cs, self.date)


def record_type_subtype(rec: bytes | memoryview) -> tuple[int, int | None]:
    """Record type and (when SMFxFLG x'40' is on) subtype, without decoding text.

    Examples
    --------
    >>> rec = bytes([0, 28, 0, 0, 0x5E, 72]) + bytes(16) + bytes([0, 3]) + bytes(4)
    >>> record_type_subtype(rec)
    (72, 3)
    """
    if len(rec) < HEADER_LEN:
        raise SMFDataError(f"record of {len(rec)} bytes is shorter than the 18-byte SMF header",
                           offset=0)
    rty = rec[5]
    if rec[4] & FLAG_SUBTYPES:
        if len(rec) < HEADER_LEN_SUBTYPES:
            raise SMFDataError("subtypes flag set but the record ends before SMFxSTY", offset=22)
        return rty, (rec[22] << 8) | rec[23]
    return rty, None


def parse_header(rec: bytes | memoryview, *, codepage: str = "cp037") -> SMFHeader:
    """Decode the standard header (18 or 24 bytes, RDW included)."""
    rty, sty = record_type_subtype(rec)
    length, seg, flag, _, tme, dte, sid = struct.unpack_from(">HHBBI4s4s", rec, 0)
    ssi = ebcdic(rec[18:22], codepage) if sty is not None else None
    smf_date(dte)  # validate: raises SMFDataError for a malformed date
    return SMFHeader(length, seg, flag, rty, tme, dte, ebcdic(sid, codepage), ssi, sty)


@dataclass(frozen=True)
class Triplet:
    """A self-defining section locator: offset from the RDW, section length, section count."""

    offset: int
    length: int
    number: int

    def positions(self) -> list[int]:
        """Record offsets of each of the ``number`` sections."""
        return [self.offset + i * self.length for i in range(self.number)]

    @property
    def end(self) -> int:
        """Record offset just past the last section."""
        return self.offset + self.length * self.number


def read_triplet(
    rec: bytes | memoryview, at: int, *, name: str, min_length: int = 0
) -> Triplet:
    """Read and validate the triplet at record offset ``at``.

    Raises :class:`SMFDataError` (offset = ``at``) when the triplet lies outside the record, points
    into the header, runs past the end of the record, or (with sections present) declares a
    section shorter than ``min_length``.

    Examples
    --------
    >>> rec = bytearray(64); rec[0:2] = (64).to_bytes(2, "big")
    >>> rec[28:36] = TRIPLET.pack(36, 8, 3)
    >>> read_triplet(bytes(rec), 28, name="demo")
    Triplet(offset=36, length=8, number=3)
    >>> read_triplet(bytes(rec), 28, name="demo", min_length=16)
    Traceback (most recent call last):
    ...
    kneecap.smf.framing.SMFDataError: byte offset 28: demo triplet: sections are 8 bytes, need at least 16
    """
    n_rec = len(rec)
    if at + 8 > n_rec:
        raise SMFDataError(f"{name} triplet at {at} lies beyond the {n_rec}-byte record",
                           offset=at)
    off, length, number = TRIPLET.unpack_from(rec, at)
    t = Triplet(off, length, number)
    if number:
        if off < HEADER_LEN_SUBTYPES:
            raise SMFDataError(f"{name} triplet: offset {off} points into the header", offset=at)
        if length < min_length:
            raise SMFDataError(
                f"{name} triplet: sections are {length} bytes, need at least {min_length}",
                offset=at,
            )
        if t.end > n_rec:
            raise SMFDataError(
                f"{name} triplet: {number} sections of {length} bytes at {off} run past the end "
                f"of the {n_rec}-byte record",
                offset=at,
            )
    return t


def read_triplets(
    rec: bytes | memoryview, at: int, count: int, *, names: list[str] | None = None
) -> list[Triplet]:
    """Read ``count`` consecutive triplets starting at record offset ``at``."""
    return [
        read_triplet(rec, at + 8 * i, name=names[i] if names else f"triplet {i + 1}")
        for i in range(count)
    ]


@dataclass(frozen=True)
class RMFProduct:
    """The fields of the RMF product section kneecap uses."""

    interval_start_at: _dt.datetime
    interval_s: float
    sysplex: str
    system_name: str
    partition_no: int
    ziip_installed: bool
    samples: int


def parse_rmf_product(
    rec: bytes | memoryview, triplet: Triplet, *, codepage: str = "cp037"
) -> RMFProduct:
    """Decode the RMF product section located by ``triplet`` (SMF7xPRS/PRL/PRN).

    The interval start (SMF7xIST + SMF7xDAT) is local time, like the header time.
    """
    if triplet.number < 1:
        raise SMFDataError("RMF product section missing (SMF7xPRN = 0)", offset=28)
    if triplet.length < RMF_PRODUCT.size:
        raise SMFDataError(
            f"RMF product section is {triplet.length} bytes, need {RMF_PRODUCT.size}", offset=32
        )
    p = RMF_PRODUCT.unpack(rec, triplet.offset, codepage=codepage)
    try:
        d = smf_date(p["dat"])
        start = _dt.datetime(d.year, d.month, d.day) + rmf_time(p["ist"])
        interval_s = rmf_interval_s(p["int"])
    except SMFDataError as exc:
        raise SMFDataError(f"RMF product section: {exc.reason}", offset=triplet.offset + 10) \
            from None
    return RMFProduct(
        interval_start_at=start,
        interval_s=interval_s,
        sysplex=p["sysplex"],
        system_name=p["system_name"],
        partition_no=p["partition_no"],
        ziip_installed=bool(p["processor_flags"] & 0x04),
        samples=p["samples"],
    )


def _packed_digits_matrix(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nibbles of 4-byte packed fields as an (n, 8) int array and a validity mask."""
    b = raw.view(np.uint8).reshape(-1, 4) if raw.dtype.kind == "S" else raw
    hi = b >> 4
    lo = b & 0x0F
    nib = np.empty((b.shape[0], 8), dtype=np.int64)
    nib[:, 0::2] = hi
    nib[:, 1::2] = lo
    ok = (nib[:, :7] <= 9).all(axis=1) & (nib[:, 7] >= 0xA)
    return nib, ok


def _num(nib: np.ndarray, a: int, b: int) -> np.ndarray:
    v = np.zeros(nib.shape[0], dtype=np.int64)
    for k in range(a, b):
        v = v * 10 + nib[:, k]
    return v


def rmf_product_columns(
    u8: np.ndarray, positions: np.ndarray, *, codepage: str = "cp037"
) -> dict[str, np.ndarray]:
    """Vectorised :func:`parse_rmf_product` for product sections at ``positions`` of ``u8``.

    Returns columns ``interval_start_at`` (datetime64[us]), ``interval_s``, ``sysplex``,
    ``system_name``, ``partition_no`` and ``ok`` (False where a packed field is malformed - the
    caller quarantines those records through the scalar path, which says why).
    """
    raw = RMF_PRODUCT.gather(u8, positions)
    ist = np.ascontiguousarray(raw["ist"]).view(np.uint8).reshape(-1, 4)
    dat = np.ascontiguousarray(raw["dat"]).view(np.uint8).reshape(-1, 4)
    itv = np.ascontiguousarray(raw["int"]).view(np.uint8).reshape(-1, 4)
    ni, oi = _packed_digits_matrix(ist)
    nd, od = _packed_digits_matrix(dat)
    nt, ot = _packed_digits_matrix(itv)
    hh, mm, ss = _num(ni, 1, 3), _num(ni, 3, 5), _num(ni, 5, 7)
    c, yy, ddd = _num(nd, 0, 2), _num(nd, 2, 4), _num(nd, 4, 7)
    year = 1900 + 100 * c + yy
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    ok = oi & od & ot & (hh <= 23) & (mm <= 59) & (ss <= 60) & (c <= 1) & (ddd >= 1)
    ok &= ddd <= np.where(leap, 366, 365)
    imm, iss, ittt = _num(nt, 0, 2), _num(nt, 2, 4), _num(nt, 4, 7)
    ok &= iss <= 59
    year_start = (np.where(ok, year, 1970) - 1970).astype("datetime64[Y]")
    days = year_start.astype("datetime64[D]") + np.where(ok, ddd - 1, 0).astype("timedelta64[D]")
    secs = np.where(ok, hh * 3600 + mm * 60 + ss, 0)
    start = days.astype("datetime64[us]") + (secs * 1_000_000).astype("timedelta64[us]")
    cols = RMF_PRODUCT.columns(
        raw, codepage=codepage, names=("sysplex", "system_name", "partition_no")
    )
    return {
        "interval_start_at": start,
        "interval_s": np.round(imm * 60 + iss + ittt / 1000.0, 3),
        "sysplex": cols["sysplex"],
        "system_name": cols["system_name"],
        "partition_no": cols["partition_no"],
        "ok": ok,
    }
