"""Framing of SMF dumps as they arrive on Linux: RDW, BDW (RECFM=U copy), VBS spanning, gzip.

An IFASMFDP/IFASMFDL dump is a RECFM=VBS data set. Once it is on a Linux disk it is in one of
these forms, all auto-detected here:

* **RDW** - every (segment of a) record is prefixed by its 4-byte record descriptor word, as
  delivered by an FTP ``quote site rdw`` + ``binary`` transfer.
* **BDW** - blocks, each starting with a 4-byte block descriptor word followed by RDW/SDW
  prefixed segments, as delivered by a ``binary`` transfer of a RECFM=U copy of the dump.
* either of the above **gzip**-compressed (detected by the ``1f 8b`` magic, not the name).

A *plain* binary transfer (no ``site rdw``, not RECFM=U) strips every length prefix; such a
file cannot be split into records and :class:`RecordStream` raises :class:`SMFDataError` with
instructions for re-transferring it.

Descriptor words
----------------
RDW/SDW: bytes 0-1 = length **including** the 4-byte descriptor (4..32760), byte 2 = segment
control code (only the low two bits count), byte 3 = 0 (IBM DFSMS *Using Data Sets*, "Record
Descriptor Word (RDW)" and "Segment Descriptor Word", Figure "Segment control codes")::

    00  complete record        01  first segment
    10  last segment           11  middle segment

BDW: bytes 0-1 = block length including the BDW, bytes 2-3 = 0; with bit 0 of byte 0 set it is
an *extended* BDW whose 31-bit length fills bytes 0-3 (IBM DFSMS *Using Data Sets*, "Block
Descriptor Word (BDW)").

Spanned segments are reassembled into one logical record that gets a fresh RDW with segment
code 00, so IBM's mapping offsets - which count the RDW as offset 0 - stay valid for every
record a consumer sees. Middle/last segments without a first one are counted in
:attr:`RecordStream.orphan_segments` and dropped (they are not a record). A record is joined from
its segments only up to :data:`MAX_SPANNED_LEN` bytes, the longest logical record of an SMF dump:
a chain that grows past it, and one never completed (another record, damage or the end of the
input comes before its last segment), is set aside as one damaged stretch (a :class:`RawRecord`
with its ``error``, covering all of its segments) and its segments are counted as orphans too. So
memory for a chain under way is bounded by that length, however long the chain in the file.

Damaged framing
---------------
A descriptor is trusted only when the bytes around it agree with it. Every complete record and
first segment must start with a plausible SMF header (SMFxDTE at offset 10 a packed ``0cyydddF``
date from 1970 on, SMFxTME at offset 6 a time of day) - an *anchor* - and its descriptor must
lead to the next anchor, continuation segment, block descriptor or the end of the input. A
block is trusted only when its segments fill it exactly and a block descriptor (or the end of
input) follows it. Anchors are found for a whole buffer at once with numpy, so finding where
framing resumes after damage costs the same per byte whatever the length of the damage
(re-synchronisation is linear).

Dates before 1970. IBM's ``0cyydddF`` allows 1900-1999 with c = 0, and a record dated 1950 is
read as 1950. An anchor's date must be from 1970 on all the same: zero-heavy record data passes for
a 1900 date (``00 00 00 5A``), and an anchor is where framing may resume after damage. A record
dated 1900-1969 (sign nibble C or F) is therefore trusted by the company it keeps: where framing
reaches it in step (the record before it ended where it starts), its descriptor leads to another
record header (of any date) or a continuation or the end of the input, or inside a block that
checks out; and framing starts at three such records that chain, as at three anchors, when junk
comes before them (:func:`find_framing`). So intact records of any date are read; one such
record beside damage is quarantined with the damage, the reason saying that its date is before
1970 and how many headers dated so the bytes set aside hold (before, 7,305 intact records dated
1950-1969 at the start of a dump were one quarantined stretch, "no SMF record header here").

When something does not agree:

* a record whose length would swallow a later record that chains correctly is cut at that
  record: the bytes up to it are quarantined, the later record is delivered; so is one whose
  length ends in no descriptor while a record header starts inside it, whether that record
  ends before or after it and whatever follows that record (its length is damaged, and the
  record it ran into is not trusted yet). A record ends in a descriptor when a record header,
  a continuation, a block descriptor or a descriptor leading to one of those follows: a bare
  descriptor is no evidence, as SMF data is mostly zero bytes;
* a block descriptor that does not match its segments (a flipped length bit, an extended-BDW
  bit, bytes cut from a record) is not trusted: the records inside are framed one by one by
  their own descriptors, and block framing resumes at the next block that checks out. Only an
  *invalid* block descriptor is quarantined (its 4 bytes); the records are kept;
* bytes that belong to no trusted record or block (damaged descriptors or headers, junk before
  the first record, a truncated tail) are yielded as one :class:`RawRecord` per contiguous
  stretch whose ``error`` says why and whose ``size`` says how many bytes were set aside. The
  complete records inside such a stretch whose descriptor and header check out, and spanned
  records whose segments chain from a first to a last one, are delivered all the same, unless
  a trusted record starts inside one of them (its length is damaged);
* a spanned record running across a block descriptor (a first or middle segment, four bytes
  that pass for a block descriptor, a continuation; after a first segment, any four bytes
  before a continuation that leads on) makes a file blocked even when none of its blocks
  checks out. A continuation descriptor whose segment leads on is not taken for a damaged
  block descriptor because its data starts with bytes that pass for another continuation.

So every byte of an RDW file ends up either in a delivered record or in a quarantined stretch.
A gzip stream that ends early (or is damaged) delivers every record decompressed before the
damage, followed by a zero-length :class:`RawRecord` naming the gzip problem.

Public API (stable; other record-type modules build on it)
-------------------------------------------------------
``SMFDataError(message, *, file=None, record_no=None, offset=None)``
    The one exception for bad SMF data; ``str()`` carries file, record number and byte offset.
``RawRecord(record_no, offset, data, error=None, nbytes=None)``
    One logical record (``size``: its length; for a quarantined stretch, the bytes set aside,
    of which ``data`` holds at most the first 64 KiB). ``data`` is ``bytes`` starting with a 4-byte RDW (SEG = 0), so
    ``data[5]`` is the record type and IBM offsets index ``data`` directly; ``offset`` is the
    byte position of the record's first descriptor in the (decompressed) input.
``RecordBatch``
    Many records sharing one buffer: ``buf`` (bytes), numpy ``starts``/``lengths``/``record_no``
    /``file_offsets`` and ``bad`` (list of damaged :class:`RawRecord`). Used by the vectorised
    decoders.
``RecordStream(source, *, name=None, framing="auto", batch_bytes=8 MiB)``
    ``iter_batches()`` -> ``RecordBatch``; iterating the stream itself yields ``RawRecord``.
    After (or during) iteration: ``framing`` ("rdw" | "bdw"), ``compressed``, ``bytes_read``,
    ``orphan_segments``, ``records``.
``iter_records(source, **kw)``
    Shorthand for ``iter(RecordStream(source, **kw))``.
``detect_framing(head: bytes) -> str``
    "rdw" or "bdw" for the first bytes of an (uncompressed) dump; raises :class:`SMFDataError`.
``find_framing(head: bytes, *, eof: bool) -> (str, int)``
    The framing and the offset of the first trusted record or block (junk before it is
    tolerated and quarantined by the stream).

References
----------
IBM, *z/OS DFSMS Using Data Sets*, "Record Descriptor Word (RDW)", "Segment Descriptor Word",
"Block Descriptor Word (BDW)", "Spanned variable-length records".
IBM, *z/OS Communications Server IP Configuration Reference*, "RDW (FTP client and server)
statement".
IBM, *z/OS MVS System Management Facilities (SMF)*, "Standard and extended SMF record headers".
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple

import numpy as np

__all__ = [
    "DECODER_FAILURES",
    "SMFDataError",
    "RawRecord",
    "RecordBatch",
    "RecordStream",
    "iter_records",
    "detect_framing",
    "find_framing",
    "frame_buffer",
    "TRANSFER_HELP",
    "MAX_RECORD_LEN",
    "MAX_SPANNED_LEN",
    "distinct_ints",
]

#: Longest logical record / segment SMF writes (IBM: LRECL 32760; SMF records <= 32756 + RDW).
MAX_RECORD_LEN = 32760
#: Longest logical record joined from VBS segments, RDW included: an SMF record is at most 32,756 bytes
#: (IBM SMF manual, e.g. SMF123_LEN "Maximum size is 32,756") and IFASMFDP/IFASMFDL write their dump
#: with LRECL 32760, which bounds every logical record of the data set (shared/reference/smf-notes.md
#: §1.1, §1.3). RMF splits longer data into several self-contained records (§1.7), never one longer.
#: It bounds the segments held for one record too: each carries at least one byte, so at most 32,756.
MAX_SPANNED_LEN = MAX_RECORD_LEN
#: Largest (non-extended) block of a RECFM=VBS or RECFM=U data set.
MAX_BLOCK_LEN = 32760
#: Shortest record that still holds the 18-byte header without subtypes plus the 4-byte RDW ...
#: IBM's offsets include the RDW, so a header-only record is 18 bytes long in total.
MIN_RECORD_LEN = 18
#: Shortest complete record or first segment trusted as a record start: RDW + SMFxDTE (offset
#: 10-13) must be there to check.
MIN_ANCHOR_LEN = 14
#: SMFxTME is hundredths of a second since midnight: always below this.
MAX_SMF_TIME = 8_640_000
#: Largest extended-BDW block accepted (large block interface blocks are at most 256 KiB).
MAX_EXT_BLOCK_LEN = 262144
#: Most ``SMFxTRN`` triplets an RMF record is taken to have: the RMF records kneecap reads carry
#: 7-8 (70.1, 72.3), and the others of types 70-79 a few more, far below this.
MAX_RMF_TRIPLETS = 64
#: Bytes kept after the last position a framing decision starts from, so that every decision
#: (a whole block plus the descriptor after it) sees all the bytes it needs.
_LOOKAHEAD = MAX_EXT_BLOCK_LEN + 64
#: Bytes framing detection looks at: up to 64 KiB of junk before the first record, plus room
#: to check the block or records after it.
_HEAD_BYTES = 65536 + _LOOKAHEAD
#: Bytes of a damaged stretch kept in its :class:`RawRecord` (the size is always exact).
KEEP_BAD_BYTES = 65536

TRANSFER_HELP = (
    "This does not look like an SMF dump with record or block descriptor words. A plain "
    "binary FTP of a variable-length data set strips the length prefixes, which makes the "
    "records impossible to separate. Transfer the dump again either with RDWs "
    "(ftp> quote site rdw, then binary, then get) or as a RECFM=U copy in binary "
    "(IEBGENER/DFSORT copy to a RECFM=U data set, then binary + get); gzip of either is "
    "accepted."
)


class SMFDataError(ValueError):
    """Bad SMF data: the one exception every decoder raises for malformed input.

    Parameters
    ----------
    message : str
        What is wrong, in terms of the IBM field or descriptor concerned.
    file : str, optional
        Input file name.
    record_no : int, optional
        1-based logical record number in the file.
    offset : int, optional
        Byte offset of the problem: within the file for framing errors, within the record
        (IBM mapping offset, RDW = 0) for decoder errors; the message says which.

    Examples
    --------
    >>> str(SMFDataError("bad triplet", file="d.smf", record_no=7, offset=60))
    'd.smf: record 7: byte offset 60: bad triplet'
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        record_no: int | None = None,
        offset: int | None = None,
    ) -> None:
        self.reason = message
        self.file = file
        self.record_no = record_no
        self.offset = offset
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        if self.file is not None:
            parts.append(str(self.file))
        if self.record_no is not None:
            parts.append(f"record {self.record_no}")
        if self.offset is not None:
            parts.append(f"byte offset {self.offset}")
        parts.append(self.reason)
        return ": ".join(parts)

    def with_context(
        self, *, file: str | None = None, record_no: int | None = None, offset: int | None = None
    ) -> SMFDataError:
        """Return a copy with missing context filled in (existing context wins)."""
        return SMFDataError(
            self.reason,
            file=self.file if self.file is not None else file,
            record_no=self.record_no if self.record_no is not None else record_no,
            offset=self.offset if self.offset is not None else offset,
        )


#: What a decoder may raise on odd data besides :class:`SMFDataError` (a bug it did not foresee):
#: the reader quarantines the record as "decoder failed" rather than lose the rest of the file.
DECODER_FAILURES: tuple[type[Exception], ...] = (struct.error, IndexError, ValueError, KeyError, UnicodeDecodeError,
                                                 OverflowError, ZeroDivisionError)


class RawRecord(NamedTuple):
    """One logical SMF record, RDW included (``data[0:4]``), or a damaged stretch of input.

    For a damaged stretch ``nbytes`` is its full length; ``data`` keeps at most its first
    :data:`KEEP_BAD_BYTES` bytes so that a gigabyte of damage does not sit in memory.
    """

    record_no: int
    offset: int
    data: bytes
    error: str | None = None
    nbytes: int | None = None

    @property
    def size(self) -> int:
        """Bytes of input this record (or damaged stretch) covers."""
        return len(self.data) if self.nbytes is None else self.nbytes

    @property
    def record_type(self) -> int | None:
        """SMFxRTY (offset 5), or None for a record too short to have one."""
        return self.data[5] if len(self.data) > 5 else None


@dataclass
class RecordBatch:
    """Logical records that share one buffer (what the vectorised decoders consume).

    ``buf[starts[i] : starts[i] + lengths[i]]`` is record ``record_no[i]`` including its RDW.
    ``file_span`` is ``(offset, n)`` when ``buf[:n]`` are the input file's bytes from ``offset``
    (an uncompressed file; spanned records reassembled after them), else None: another process
    can then read the batch from the file instead of having it sent.
    """

    buf: bytes
    starts: np.ndarray
    lengths: np.ndarray
    record_no: np.ndarray
    file_offsets: np.ndarray
    bad: list[RawRecord] = field(default_factory=list)
    nbytes: int = 0
    file_span: tuple[int, int] | None = None

    def __len__(self) -> int:
        return int(self.starts.size)

    def record(self, i: int) -> RawRecord:
        """Record ``i`` of the batch as a :class:`RawRecord` (copies its bytes)."""
        s = int(self.starts[i])
        return RawRecord(
            int(self.record_no[i]), int(self.file_offsets[i]), self.buf[s : s + int(self.lengths[i])]
        )


def distinct_ints(values: np.ndarray) -> np.ndarray:
    """The distinct values of an integer array, sorted: ``np.unique(values)`` without its import of numpy.ma.

    ``np.unique`` asked for the values alone checks whether its input is a masked array, which
    imports ``numpy.ma`` (about 40 ms, in the framing process and again in the decoding one of
    ``kneecap ingest``); a sort and a comparison of neighbours give the same array.

    Examples
    --------
    >>> distinct_ints(np.array([3, 1, 3, 2, 1])).tolist()
    [1, 2, 3]
    """
    values = np.sort(np.asarray(values).ravel())
    if values.size > 1:
        values = values[np.concatenate(([True], values[1:] != values[:-1]))]
    return values


# ----------------------------------------------------------------------------- descriptors

def _valid_rdw(b: bytes | memoryview, p: int) -> int:
    """Length of a plausible RDW/SDW at ``b[p]``, or 0 if there is none.

    A descriptor is plausible when its length is 5..32760 and byte 3 is zero and byte 2 has
    only the two segment-code bits (IBM DFSMS: the rest are reserved, zero).
    """
    if p < 0 or p + 4 > len(b):
        return 0
    n = (b[p] << 8) | b[p + 1]
    if n < 5 or n > MAX_RECORD_LEN or b[p + 3] != 0 or b[p + 2] & 0xFC:
        return 0
    return n


def _valid_bdw(b: bytes | memoryview, p: int) -> int:
    """Block length of a plausible BDW at ``b[p]`` (extended BDWs too), or 0.

    An extended BDW (bit 0 of byte 0 set) is accepted up to :data:`MAX_EXT_BLOCK_LEN`: larger
    blocks do not occur in SMF dumps, and trusting a 2 GB length would make one flipped bit
    hide the rest of the file.
    """
    if p < 0 or p + 4 > len(b):
        return 0
    if b[p] & 0x80:
        n = int.from_bytes(b[p : p + 4], "big") & 0x7FFFFFFF
        return n if 9 <= n <= MAX_EXT_BLOCK_LEN else 0
    n = (b[p] << 8) | b[p + 1]
    if n < 9 or n > MAX_BLOCK_LEN or b[p + 2] != 0 or b[p + 3] != 0:
        return 0
    return n


def _plausible_smf_record(b: bytes | memoryview, p: int, n: int, *, early: bool = False) -> bool:
    """Whether a complete record or first segment starts at ``b[p]`` (descriptor length ``n``).

    It must be a complete or first segment long enough to hold SMFxDTE, and SMFxDTE (offset 10)
    must be packed ``0cyydddF`` with c = 0 or 1, a sign nibble A-F, ddd = 1..366 and, for c = 0,
    yy >= 70 (an earlier date is trusted only in step, :func:`_early_record`), and SMFxTME
    (offset 6) hundredths of a second since midnight, below 8,640,000 (IBM "Standard SMF record
    header"). Zero-heavy
    record data with a segment descriptor in it passes for a 1900 date: ``00 00 00 5A``. The
    scalar twin of :func:`_anchor_positions`. ``early``: dated 1900-1969 instead (:func:`_early_smf_date`).
    """
    if (b[p + 2] & 0x03) not in (0, 1) or n < MIN_ANCHOR_LEN or p + 14 > len(b):
        return False
    if int.from_bytes(b[p + 6:p + 10], "big") >= MAX_SMF_TIME:
        return False
    return _packed_smf_date(b, p + 10, early=early)


def _packed_smf_date(b: bytes | memoryview, x: int, *, early: bool = False) -> bool:
    """Whether ``b[x:x+4]`` is a packed SMFxDTE ``0cyydddF``: c 0 or 1, 1970 on, ddd 1..366, sign A-F.

    ``early``: dated 1900-1969 instead (:func:`_early_smf_date`).
    """
    d0, d1, d2, d3 = b[x], b[x + 1], b[x + 2], b[x + 3]
    if early:
        if d0 != 0 or d1 >= 0x70 or d3 & 0x0F not in (0x0C, 0x0F):
            return False
    elif d0 > 0x01 or d3 & 0x0F < 0x0A or (d0 == 0 and d1 < 0x70):
        return False
    for v in (d1, d2):
        if v >> 4 > 9 or v & 0x0F > 9:
            return False
    if d3 >> 4 > 9:
        return False
    return 1 <= (d2 >> 4) * 100 + (d2 & 0x0F) * 10 + (d3 >> 4) <= 366


def _early_smf_date(b: bytes | memoryview, x: int) -> bool:
    """Whether ``b[x:x+4]`` is a packed SMFxDTE ``0cyydddF`` dated 1900-1969: c = 0, yy < 70.

    IBM's format allows those dates (c = 0 is 19yy, smf-notes section 1.4); anchors do not
    (:func:`_packed_smf_date`), because zero-heavy record data passes for them. Only the sign
    nibbles of a positive packed number, C and F, are taken here, which zero-heavy data rarely
    has in the right place, and such a header is trusted only where framing reaches it in step
    (:func:`_early_record_leads_on`).

    Examples
    --------
    >>> _early_smf_date(bytes.fromhex("0050001F"), 0), _early_smf_date(bytes.fromhex("0070001F"), 0)
    (True, False)
    """
    return _packed_smf_date(b, x, early=True)


def _early_record(b: bytes | memoryview, p: int, n: int) -> bool:
    """:func:`_plausible_smf_record` for a record dated 1900-1969 (:func:`_early_smf_date`) whose RDW says ``n``."""
    return _plausible_smf_record(b, p, n, early=True) and _valid_rdw(b, p) == n


def _early_headers(b: bytes | memoryview, p: int, q: int) -> int:
    """How many record headers dated 1900-1969 (:func:`_early_record`) start in ``b[p:q]``; for a quarantine reason."""
    u8 = np.frombuffer(b, dtype=np.uint8)[p:q]
    if u8.size < 14:
        return 0
    # the sign nibble C or F at +13 first (a few per cent of positions), then the whole check
    idx = np.flatnonzero(np.isin(u8[13:] & 0x0F, (0x0C, 0x0F)))
    idx = idx[(u8[idx + 10] == 0) & (u8[idx + 11] < 0x70) & (u8[idx + 3] == 0)]
    return sum(_early_record(b, p + int(i), (b[p + int(i)] << 8) | b[p + int(i) + 1]) for i in idx)


def _anchor_positions(u8: np.ndarray) -> np.ndarray:
    """Every position of ``u8`` where a plausible complete record or first segment starts.

    Vectorised :func:`_plausible_smf_record` plus :func:`_valid_rdw` over a whole buffer: the
    sign-nibble test (A-F) runs over every byte and leaves a few per cent of positions, on
    which the rest (byte 3 zero, SMFxDTE century byte <= 1, ...) is checked.

    Examples
    --------
    >>> rec = bytes([0, 24, 0, 0, 0x5E, 70, 0, 0, 0, 0]) + bytes.fromhex("0125062F") + bytes(10)
    >>> _anchor_positions(np.frombuffer(bytes(3) + rec * 2, np.uint8)).tolist()
    [3, 27]
    """
    n = u8.size - 13
    if n <= 0:
        return np.zeros(0, np.int64)
    # one pass over every byte for the most selective test (a sign nibble A-F at +13 leaves
    # about 2 % of positions; SMF data is mostly zero bytes, which pass the other two), then
    # the rest on the candidates only: half the time of three full-size passes
    # the comparison written over the masked bytes themselves: one 8 MiB array fewer to allocate
    # and fault in per batch (5.0 -> 2.7 ms per 8 MiB)
    nibble = np.bitwise_and(u8[13 : 13 + n], 0x0F)
    sign = nibble.view(np.bool_)
    np.greater_equal(nibble, 0x0A, out=sign)
    idx = np.flatnonzero(sign)
    idx = idx[(u8[idx + 3] == 0) & (u8[idx + 10] <= 1)]
    # then the tests that leave fewest first, each on what the last left: the century (a 1 or
    # a year from 70) and the length keep about one candidate in six each, and the remaining
    # dozen tests run on a few per cent of them (9.4 -> 6.1 ms per 8 MiB batch of 70.1/72.3/30)
    idx = idx[(u8[idx + 10] == 1) | (u8[idx + 11] >= 0x70)]
    ln = (u8[idx].astype(np.int32) << 8) | u8[idx + 1]
    idx = idx[(ln >= MIN_ANCHOR_LEN) & (ln <= MAX_RECORD_LEN)]
    if idx.size == 0:
        return idx.astype(np.int64)
    d1, d2, d3 = u8[idx + 11], u8[idx + 12], u8[idx + 13]
    ddd = (d2 >> 4).astype(np.int32) * 100 + (d2 & 0x0F) * 10 + (d3 >> 4)
    tme = ((u8[idx + 7].astype(np.int32) << 16) | (u8[idx + 8].astype(np.int32) << 8)
           | u8[idx + 9])
    keep = (
        (u8[idx + 2] <= 1)
        & (u8[idx + 6] == 0) & (tme < MAX_SMF_TIME)
        & ((d1 >> 4) <= 9) & ((d1 & 0x0F) <= 9) & ((d2 >> 4) <= 9) & ((d2 & 0x0F) <= 9)
        & ((d3 >> 4) <= 9) & (ddd >= 1) & (ddd <= 366)
    )
    return idx[keep].astype(np.int64)


class _Frame:
    """Framing facts about one buffer: anchors, trusted anchors, blocks (pure, no I/O).

    ``anchors`` holds every plausible record start; ``good`` (sorted) those whose descriptor
    leads to another anchor, a continuation segment, a block descriptor (blocked files) or the
    end of the input. Trusted anchors are where framing resumes after damage: a random byte
    pattern inside a record has to look like two consecutive SMF headers to be one.
    """

    def __init__(self, buf: bytes, *, eof: bool, blocked: bool) -> None:
        self.buf = buf
        self.n = len(buf)
        self.eof = eof
        self.blocked = blocked
        u8 = np.frombuffer(buf, dtype=np.uint8)
        a = _anchor_positions(u8)
        self.anchor_list = a.tolist()
        self.anchors = set(self.anchor_list)
        ln = (u8[a].astype(np.int64) << 8) | u8[a + 1]
        f = a + ln
        code0 = u8[a + 2] == 0
        # the common case in bulk: a complete record followed by another record header
        quick = code0 & np.isin(f, a, assume_unique=True)
        rest = [int(c) for c in a[~quick]
                if self._follows(int(c) + ((buf[c] << 8) | buf[c + 1]), buf[c + 2] & 0x03)]
        g = a[quick]
        if rest:
            g = distinct_ints(np.concatenate((g, np.asarray(rest, dtype=np.int64))))
        self.good_arr = g
        self.good = g.tolist()
        # runs of complete records that chain exactly: good[i + 1] == good[i] + length[i]
        gl = (u8[g].astype(np.int64) << 8) | u8[g + 1] if g.size else g
        self.good_len = gl
        self.chains = (g[1:] == g[:-1] + gl[:-1]) & (u8[g[:-1] + 2] == 0) if g.size else g

    def is_cont(self, f: int) -> bool:
        """A middle or last segment descriptor at ``f``."""
        return bool(_valid_rdw(self.buf, f)) and self.buf[f + 2] & 0x03 >= 2

    def is_bdw_here(self, f: int) -> bool:
        """A block descriptor at ``f`` followed by a record start or continuation.

        The record start may be dated 1900-1969 (:func:`_early_record`): a valid block descriptor
        before it is the evidence its date does not give.
        """
        if not _valid_bdw(self.buf, f):
            return False
        r = f + 4
        return (r in self.anchors or self.is_cont(r)
                or (r + 14 <= self.n and _early_record(self.buf, r, _valid_rdw(self.buf, r))))

    def is_bdw_slot(self, f: int) -> bool:
        """Whether four bytes at ``f`` sit where a (possibly damaged) block descriptor does.

        They are no record start and are followed by a record start or a continuation segment.
        Four bytes that are themselves a continuation whose segment leads on (to a record
        header, a continuation, a block descriptor or the end of input) are that continuation
        when the one after them does not lead on: SMF data (a 72.3 or 123 section) often starts
        with bytes such as ``40 00 03 00`` that pass for a middle segment's descriptor, and
        taking the real descriptor for a damaged block descriptor lost its record. A block
        descriptor with a flipped bit in byte 2 passes for a continuation leading to the next
        block, but the real continuation after it leads on too, so that stays a slot.
        """
        if f in self.anchors or f + 4 >= self.n:
            return False
        if f + 4 in self.anchors:
            return True
        if not self.is_cont(f + 4):
            return False
        return not (self.is_cont(f) and _leads_on(self, f)) or _leads_on(self, f + 4)

    def _follows(self, f: int, code: int) -> bool:
        """Whether a segment with segment code ``code`` may be followed by what is at ``f``."""
        if f == self.n:
            return self.eof
        if f > self.n:
            return False
        if code in (1, 3):  # first or middle segment: the record continues
            if self.is_cont(f):
                return True
        elif f in self.anchors:
            return True
        # in a blocked file, a block descriptor (valid or damaged) may come between a segment
        # and its continuation: a record is kept across a damaged one
        return self.blocked and (self.is_bdw_here(f) or (code in (1, 3) and self.is_bdw_slot(f)))

    def next_good(self, p: int, *, inclusive: bool = False) -> int | None:
        """The first trusted anchor after ``p`` (at or after, with ``inclusive``)."""
        i = (bisect_left if inclusive else bisect_right)(self.good, p)
        return self.good[i] if i < len(self.good) else None

    def block(self, q: int) -> tuple[int, list[int]] | None:
        """(length, segment positions) of a block at ``q`` that checks out, else None.

        It checks out when its segments fill it exactly (complete records and first segments
        being anchors) and it is followed by another block descriptor or the end of input.
        """
        buf = self.buf
        bl = _valid_bdw(buf, q)
        end = q + bl
        if not bl or end > self.n:
            return None
        segs = []
        r = q + 4
        while r < end:
            m = _valid_rdw(buf, r)
            # a record dated before 1970 inside a block that checks out is one (its segments fill
            # the block exactly, and a block descriptor follows): IBM's date format allows it
            if not m or r + m > end or (buf[r + 2] & 0x03 < 2 and r not in self.anchors
                                        and not _early_record(buf, r, m)):
                return None
            segs.append(r)
            r += m
        if r != end or not ((end == self.n and self.eof) or self.is_bdw_here(end)):
            return None
        return bl, segs


def _record_step(fr: _Frame, q: int) -> tuple[int | None, str | None]:
    """Decide about the segment at ``q`` (RDW framing, or a block's inside that did not check out).

    Returns ``(end, None)`` when the segment ``buf[q:end]`` is trusted, else
    ``(resume, reason)``: the bytes ``buf[q:resume]`` are damaged (``resume`` is None when the
    damage runs past what is known of the buffer).
    """
    buf = fr.buf
    n = _valid_rdw(buf, q)
    code = buf[q + 2] & 0x03 if n else -1
    head = code in (0, 1)
    nxt = fr.next_good(q)
    early = bool(head and n and q + n <= fr.n and q not in fr.anchors and _early_record(buf, q, n))
    if n and q + n <= fr.n and (not head or q in fr.anchors or (early and _early_record_leads_on(fr, q + n, code))):
        f = q + n
        if nxt is None or nxt >= f:
            # reached through trusted framing and nothing trusted starts inside it: kept even
            # if what follows is damaged (that damage is the next step's business) ...
            a = _header_inside(fr, q, f) if not _ends_plausibly(fr, f) else None
            if a is None:
                return f, None
            # ... unless it ends in no descriptor while a record header starts inside it: its
            # length is damaged and that record (not trusted yet: what follows it may be
            # damaged too) is the next one
            return a, (f"record descriptor says {n} bytes, which ends in no descriptor, but "
                       f"a record header starts {a - q} bytes in (damaged length)")
    if not n:
        why = f"invalid record descriptor word {bytes(buf[q:q + 4]).hex(' ')}"
    elif q + n > fr.n:
        why = (f"record descriptor says {n} bytes but only {fr.n - q} remain "
               "(truncated record)")
    elif early:
        stop = nxt if nxt is not None else fr.n
        why = (f"a record header dated before 1970 (SMFxDTE {bytes(buf[q + 10:q + 14]).hex().upper()}, "
               "0cyydddF with c = 0) whose descriptor leads to no record: a header dated 1900-1969 is "
               "trusted only where the records before and after it chain to it; headers dated 1900-1969 "
               f"in the bytes set aside: {_early_headers(buf, q, stop):,}")
    elif head and q not in fr.anchors:
        why = ("no SMF record header here (SMFxDTE at +10 is not a packed 0cyydddF date): "
               f"damaged header or descriptor {bytes(buf[q:q + 4]).hex(' ')}")
    elif nxt is not None and nxt < q + n:
        why = (f"record descriptor says {n} bytes but another record starts {nxt - q} bytes "
               "in (damaged length)")
    else:  # pragma: no cover - every other case returned above
        why = "damaged descriptor"
    return (nxt if nxt is not None else (fr.n if fr.eof else None)), why


def _ends_plausibly(fr: _Frame, f: int) -> bool:
    """Whether a segment ending at ``f`` may end there.

    It may when a record header follows (in a blocked file also a block descriptor with a
    record start or continuation segment after it), or a descriptor (of a record whose header
    is damaged, or of a continuation segment) whose own segment ends at one of those, at a
    continuation or at the end of the input; and where fewer than four bytes are left to tell
    (the end of the input, or of what is known of it). A bare descriptor is not enough: SMF
    data is mostly zero bytes, and any two bytes before ``00 00`` pass for one.
    """
    if f + 4 > fr.n:
        return True
    return f in fr.anchors or (fr.blocked and fr.is_bdw_here(f)) or _leads_on(fr, f)


def _leads_on(fr: _Frame, f: int) -> bool:
    """Whether a descriptor at ``f`` leads on.

    Its segment must end at a record header, a continuation segment, a block descriptor or the
    end of the input.
    """
    m = _valid_rdw(fr.buf, f)
    if not m:
        return False
    e = f + m
    if e + 4 > fr.n:
        return e == fr.n
    return e in fr.anchors or fr.is_cont(e) or (fr.blocked and fr.is_bdw_here(e))


def _early_record_leads_on(fr: _Frame, f: int, code: int) -> bool:
    """Whether a record dated 1900-1969, reached in step and ending at ``f``, leads on.

    It does when the input ends there, or (segment code ``code`` 0) a record header follows, of
    any date IBM's format allows, or (code 1, a first segment) a continuation; in a blocked file a
    block descriptor may come between. A header in step with the record before it and with the
    one after it is a record: that is the evidence an anchor's date stands in for.
    """
    if f == fr.n:
        return fr.eof
    if f + 4 > fr.n:
        return False
    if code == 1:
        return fr.is_cont(f) or (fr.blocked and fr.is_bdw_slot(f))
    m = _valid_rdw(fr.buf, f)
    return (f in fr.anchors or (bool(m) and _early_record(fr.buf, f, m))
            or (fr.blocked and fr.is_bdw_here(f)))


def _header_inside(fr: _Frame, q: int, f: int) -> int | None:
    """The record header strictly inside ``buf[q:f]`` where the next record starts, or None.

    Called when the segment ``buf[q:f]`` ends in no descriptor: its length is damaged, or the
    bytes after it are. A record header inside it is the sign of the former (SMF data does not
    hold a descriptor followed by a packed SMFxDTE 10 bytes on by chance), whether that record
    ends inside the segment (a length grown by a flipped bit) or past its end (bytes cut from
    the segment), and whether or not its own end is followed by a descriptor (the damage may
    go on after it): the first one whose descriptor ends plausibly, else the first one whose
    descriptor lies inside the segment. A header whose descriptor starts in the last three
    bytes of the segment and ends nowhere may be the next record's, the front of its descriptor
    cut: the segment's last bytes and what is left of that descriptor pass for one, and its
    length is garbage. It is taken only when its length ends at a descriptor (of a record whose
    header is damaged) or at damage with a record header next to it (SMFxDTE within a few bytes
    of where it would be), as the end of a real record does.
    """
    al = fr.anchor_list
    first = None
    for a in al[bisect_right(al, q):bisect_left(al, f)]:
        e = a + ((fr.buf[a] << 8) | fr.buf[a + 1])
        if e > fr.n:
            continue
        if _ends_plausibly(fr, e):
            return a
        if first is None and (a + 4 <= f or _valid_rdw(fr.buf, e) or _header_near(fr, e)):
            first = a
    return first


def _damage(fr: _Frame, p: int, q: int, why: str | None) -> list[tuple[Any, ...]]:
    """Events for the damaged stretch ``buf[p:q]``, delivering the complete records inside it.

    Framing resumes after damage only at a trusted record start, one whose descriptor leads to
    another record; a record with damage on both sides is not one. Its descriptor and header
    still check out, though, and when its length ends inside the stretch, taking it cuts no
    trusted record: it is delivered like a record reached through trusted framing whose
    successor is damaged (:func:`_record_step`), and only the bytes around it are damaged;
    and, as there, not when a trusted record starts inside it (before the first trusted chain,
    :func:`prefix_events`, there are such), nor when it ends in no descriptor while a record
    header starts inside it. So is a spanned record whose segments, from a first one, follow
    one another to a last one inside the stretch (a block descriptor between two of them in a
    blocked file), none of them swallowing a trusted record start.
    """
    out: list[tuple[Any, ...]] = []
    buf, r = fr.buf, p
    walked: set[int] = set()
    for a in fr.anchor_list[bisect_left(fr.anchor_list, p):bisect_left(fr.anchor_list, q)]:
        n = (buf[a] << 8) | buf[a + 1]
        if a < r or a + n > q:
            continue  # inside the last record taken, or running past the damage
        if buf[a + 2] & 0x03:
            segs = _spanned_segments(fr, a, q, walked)
            if segs is None:
                continue
        elif _trusted_inside(fr, a, a + n) or (
                not _ends_plausibly(fr, a + n) and _header_inside(fr, a, a + n) is not None):
            continue  # its length is damaged: the record header inside it is the next one
        else:
            segs = [(a, n)]
        if a > r:
            out.append(("b", r, a, why if r == p else None, True))
        out.extend(("s", g, m) for g, m in segs)
        r = segs[-1][0] + segs[-1][1]
    if r < q:
        out.append(("b", r, q, why if r == p else None, True))
    return out


def _header_near(fr: _Frame, e: int) -> bool:
    """Whether a record header is near ``e``, its descriptor damaged or not.

    That is a packed SMFxDTE (``0cyydddF`` as in an anchor) within 8 bytes before or 16 after
    offset 10 from ``e``: a few bytes may have been cut from the header or inserted before it.
    """
    return any(_packed_smf_date(fr.buf, x) for x in range(max(e + 2, 0), min(e + 27, fr.n - 3)))


def _spanned_segments(fr: _Frame, a: int, q: int, walked: set[int]) -> list[tuple[int, int]] | None:
    """The segments (position, length) of the spanned record whose first segment is at ``a``.

    They must follow one another to a last segment that ends by ``q``, and no trusted record
    may start inside one of them; else None. In a blocked file a valid block descriptor may sit
    between two segments. ``walked`` holds the continuations already walked from an earlier
    first segment (which either took them or failed): walking them again would fail again, so
    every byte is walked at most once.
    """
    buf = fr.buf
    segs = [(a, (buf[a] << 8) | buf[a + 1])]
    r = a + segs[0][1]
    # a segment that swallows a trusted record start has a damaged length (bytes cut from it),
    # as in _record_step: that record is the next one, not a part of this one
    if _trusted_inside(fr, a, r):
        return None
    while r + 4 <= q:
        if fr.blocked and r not in fr.anchors and _valid_bdw(buf, r) and fr.is_cont(r + 4):
            r += 4
        m = _valid_rdw(buf, r)
        code = buf[r + 2] & 0x03 if m and r + 4 <= q else 0
        if code < 2 or r + m > q or r in walked:
            return None
        walked.add(r)
        segs.append((r, m))
        r += m
        if _trusted_inside(fr, segs[-1][0], r):
            return None
        if code == 2:
            return segs
    return None


def _trusted_inside(fr: _Frame, a: int, e: int) -> bool:
    """Whether a trusted record start lies strictly inside ``buf[a:e]``."""
    nxt = fr.next_good(a)
    return nxt is not None and nxt < e


def prefix_events(buf: bytes, start: int, *, blocked: bool, reason: str) -> list[tuple[Any, ...]]:
    """Events for ``buf[:start]``, the bytes before the first trusted record or block.

    :func:`find_framing` starts framing only where records chain, so a record with damage on both
    sides before that point is not trusted; like one met after damage later in the file
    (:func:`_damage`), it is delivered when its descriptor and header check out and its length
    ends before ``start``, and only the bytes around it are quarantined (``reason`` on the first).
    """
    return _damage(_Frame(buf[:start], eof=False, blocked=blocked), 0, start, reason)


def _resync_block(fr: _Frame, g: int, lo: int) -> tuple[int, bool]:
    """Where to resume before trusted anchor ``g`` in a blocked file: (position, blocked)."""
    if g - 4 >= lo and fr.block(g - 4) is not None:
        return g - 4, True
    return g, False


def frame_buffer(
    buf: bytes,
    p: int,
    *,
    eof: bool,
    limit: int,
    blocked: bool,
    in_block: bool,
    damaged: bool,
) -> tuple[list[tuple[Any, ...]], int, bool, bool]:
    """Split ``buf[p:]`` into segments and damaged stretches (the pure core of the framing).

    Parameters
    ----------
    buf : bytes
        Decompressed input; ``buf[0]`` need not be a descriptor.
    p : int
        Where to start.
    eof : bool
        ``buf`` ends where the input ends.
    limit : int
        Start no unit at or after ``limit`` (the caller keeps enough bytes after it for every
        decision); damage still open at ``limit`` is reported up to ``limit``.
    blocked : bool
        The file is BDW-framed.
    in_block : bool
        ``p`` is where a block descriptor is expected (blocked files).
    damaged : bool
        ``p`` is inside damage reported by the previous call: resume at the next trusted unit.

    Returns
    -------
    events : list of tuple
        ``("s", pos, length)`` for a trusted segment, ``("S", positions, lengths)`` (arrays)
        for a run of complete records, ``("b", start, end, reason, breaks)`` for
        damaged bytes (``breaks``: False for a bad block descriptor between segments of one
        record, which does not interrupt a spanned record).
    stop : int
        Where the next call continues.
    in_block, damaged : bool
        State for the next call.
    """
    fr = _Frame(buf, eof=eof, blocked=blocked)
    events: list[tuple[Any, ...]] = []
    end = len(buf) if eof else limit
    while p < end:
        if damaged:
            g = fr.next_good(p, inclusive=True)
            if blocked and fr.block(p) is not None:
                g, in_block = p, True
            elif g is not None and g < end:
                g, in_block = _resync_block(fr, g, p) if blocked else (g, False)
            if g is None or g >= end:
                stop = len(buf) if eof else limit
                events.extend(_damage(fr, p, stop, None))
                return events, stop, in_block, not eof
            if g > p:
                events.extend(_damage(fr, p, g, None))
            p, damaged = g, False
            continue
        # where a block descriptor sits, met while framing records one by one (the block
        # before did not check out): four bytes that are no record start, before a record
        # start or continuation segment. Treated as one, valid or not, like a block descriptor
        # at a block boundary, so that a spanned record across it is not lost.
        slot = blocked and not in_block and fr.is_bdw_slot(p)
        if blocked and (in_block or slot or _valid_bdw(buf, p)):
            blk = fr.block(p)
            if blk is not None:
                bl, segs = blk
                for r in segs:
                    events.append(("s", r, (buf[r] << 8) | buf[r + 1]))
                p += bl
                in_block = True
                continue
            if in_block or slot:
                in_block = False
                if not _valid_bdw(buf, p):
                    events.append(("b", p, min(p + 4, len(buf)),
                                   f"invalid block descriptor word {bytes(buf[p:p + 4]).hex(' ')}",
                                   False))
                # a plausible descriptor whose block does not check out (wrong length, damage
                # inside): keep it out of the data and frame the records by their own RDWs
                p = min(p + 4, len(buf))
                continue
        i = bisect_left(fr.good, p)
        if i < len(fr.good) and fr.good[i] == p and i < fr.chains.size and fr.chains[i]:
            # a run of complete records, each ending where the next trusted one starts:
            # nothing can hide inside them, take them all at once
            j = i + int(np.argmin(fr.chains[i:])) if not fr.chains[i:].all() else fr.chains.size
            pos = fr.good_arr[i:j]
            if pos.size and pos[-1] >= end:
                pos = pos[pos < end]
            if pos.size:
                events.append(("S", pos, fr.good_len[i:i + pos.size]))
                p = int(pos[-1] + fr.good_len[i + pos.size - 1])
                continue
        q, why = _record_step(fr, p)
        if why is None:
            assert q is not None  # a trusted segment always has its end
            events.append(("s", p, q - p))
            p = q
            continue
        if q is None or q > end:
            stop = len(buf) if eof else limit
            events.extend(_damage(fr, p, stop, why))
            return events, stop, in_block, not eof
        if blocked:
            if q == p + 4 and not _valid_bdw(buf, p):
                # four bad bytes right before a trusted record: a damaged block descriptor
                why = f"invalid block descriptor word {bytes(buf[p:p + 4]).hex(' ')}"
            q, in_block = _resync_block(fr, q, p + 1)
        events.extend(_damage(fr, p, q, why))
        p = q
    return events, p, in_block, False


def find_framing(head: bytes, *, eof: bool = False) -> tuple[str, int]:
    """The framing of a dump and where its first trusted record or block starts.

    Parameters
    ----------
    head : bytes
        The first bytes of the uncompressed file (at least 64 KiB unless the file is shorter).
    eof : bool
        ``head`` is the whole file.

    Returns
    -------
    (str, int)
        ``"bdw"`` or ``"rdw"`` and the offset of the first block or record. An offset above 0
        means bytes before it are not SMF framing (e.g. one stray byte prepended); the stream
        quarantines them. Off offset 0, a record start is preferably one where three trusted
        records follow one another (or the file ends after fewer); in a file too short or too
        damaged for that anywhere in ``head``, the first trusted record start (a descriptor
        leading from one SMF header to another, which a plain binary transfer does not have).
        A file with a block that checks out anywhere in ``head`` (one starting with a record or
        with the continuation of a spanned one) is ``"bdw"``, and its offset may then be that
        of a record inside a damaged first block. A spanned record whose trusted first segment
        comes before that point, its descriptors leading there, is not cut off: framing starts
        at it.

    Raises
    ------
    SMFDataError
        When neither framing fits (typically a plain binary FTP without ``site rdw``).
    """
    if not head:
        raise SMFDataError("empty input: no SMF records", offset=0)
    fb = _Frame(head, eof=eof, blocked=True)
    if fb.block(0) is not None:
        return "bdw", 0
    fr = _Frame(head, eof=eof, blocked=False)
    if 0 in fr.anchors and fr.next_good(0, inclusive=True) == 0:
        return "rdw", 0
    if 4 in fb.anchors and (_valid_bdw(head, 0) or _reaches_block(fb, 4)):
        # a block descriptor and a record header: damage inside the first block; or a damaged
        # first block descriptor, the first block's segments leading to a block that checks out
        return "bdw", 0
    if 0 in fr.anchors:
        return "rdw", 0  # a record header whose successor is damaged or cut off
    # a file may start with the middle of a spanned record: accept a clean descriptor chain
    p, k, seen = 0, 0, []
    while p < len(head) and k < 3:
        m = _valid_rdw(head, p)
        if not m:
            break
        seen.append(p)
        p += m
        k += 1
    if k >= 3 or (k >= 1 and p == len(head)):
        # block descriptors chain like record descriptors (bytes 2-3 zero, the length leading to
        # the next one): a BDW file whose first block is damaged starts the same way
        if any(fb.block(q) is not None for q in seen) or _spans_a_block(fb):
            return "bdw", 0
        return "rdw", 0
    # The first place framing can start: a block that checks out, or three records that chain.
    # The latter also occurs inside the blocks of a BDW file whose first block is damaged, so a
    # block anywhere in ``head`` decides the framing: read as RDW, every block descriptor would be
    # damage, and a record between two of them would be lost. A block may start with a record
    # or with the continuation of a spanned one (in a VBS dump of small blocks, most do).
    blk = next((q for q in _block_candidates(fb) if fb.block(q) is not None), None)
    chain_at = None
    g = fb.next_good(0)
    while g is not None and (blk is None or g < blk):
        if _chain(fr, g) >= 3:
            chain_at = g
            break
        g = fb.next_good(g)
    if blk is not None:
        return "bdw", _reached_from(fb, blk if chain_at is None else chain_at)
    # records dated 1900-1969 are no anchors (:func:`_early_smf_date`): three of them chaining
    # (or with records from 1970 on) before the first chain of anchors are where records start
    early_at = _early_chain(fr, 0, len(head) if chain_at is None else chain_at)
    if early_at is not None and not _spans_a_block(fb):
        return "rdw", early_at
    if chain_at is not None:
        if _spans_a_block(fb):
            # no block checks out, but a spanned record runs across a block descriptor: read as
            # RDW, it would be cut there, and every block descriptor would be damage
            return "bdw", _reached_from(fb, chain_at)
        return "rdw", _reached_from(fr, chain_at)
    # Too short or too damaged for three records to chain anywhere. A trusted record start (its
    # descriptor and SMF header check out and lead to another record header, a block descriptor
    # or the end of the input) takes two headers where a plain binary transfer has none: framing
    # starts there, and the records around the damage are delivered.
    if fb.good:
        blocked = (not fr.good or any(g >= 4 and _valid_bdw(head, g - 4) for g in fb.good)
                   or _spans_a_block(fb))
        f = fb if blocked else fr
        return ("bdw" if blocked else "rdw"), _reached_from(f, f.good[0])
    # No record start leads to another one anywhere: every record has damage on both sides.
    # Two record headers whose lengths each end a few bytes before another record header are
    # still framing a plain binary transfer does not have (it has no descriptors, and where
    # four bytes before a header pass for one, their length ends anywhere).
    near = [a for a in fb.anchor_list
            if (e := a + ((head[a] << 8) | head[a + 1])) <= len(head) and _header_near(fb, e)]
    blocked = (_valid_bdw(head, 0) and bool(_valid_rdw(head, 4))) or _spans_a_block(fb)
    if len(near) >= 2:
        return ("bdw" if blocked else "rdw"), near[0]
    # A file with one record left whole has one header to show. An RMF record filled exactly by
    # the sections its triplets locate is still evidence a plain binary transfer does not give: a
    # stray header there needs the four bytes before the record to equal its real length. So is a
    # header whose length ends at such a record (within the few bytes :func:`_header_near`
    # allows), even when the end of the input cuts that record short.
    confirmed = [a for a in fb.anchor_list if _rmf_sections_fill(head, a)]
    for a in fb.anchor_list:
        e = a + ((head[a] << 8) | head[a + 1])
        i, j = bisect_left(confirmed, a), bisect_left(confirmed, e - 8)
        if (i < len(confirmed) and confirmed[i] == a) or (
                j < len(confirmed) and confirmed[j] <= e + 16):
            return ("bdw" if blocked else "rdw"), a
    raise SMFDataError(TRANSFER_HELP, offset=0)


def _early_chain(fr: _Frame, p: int, q: int) -> int | None:
    """The first record header dated 1900-1969 in ``buf[p:q]`` from which three records chain, or None.

    The records may be dated so or be anchors; fewer than three do when the input ends after
    them. Three descriptors each leading exactly to the next SMF header is the evidence
    :func:`find_framing` takes from three anchors that chain.
    """
    buf = fr.buf
    u8 = np.frombuffer(buf, dtype=np.uint8)[p:q]
    if u8.size < 14:
        return None
    idx = np.flatnonzero(np.isin(u8[13:] & 0x0F, (0x0C, 0x0F)))
    idx = idx[(u8[idx + 10] == 0) & (u8[idx + 11] < 0x70) & (u8[idx + 3] == 0)]
    for i in idx.tolist():
        x, k = p + i, 0
        while k < 3 and x + 14 <= fr.n:
            m = _valid_rdw(buf, x)
            if not m or buf[x + 2] & 0x03 or not (x in fr.anchors or _early_record(buf, x, m)):
                break
            x, k = x + m, k + 1
        if k >= 1 and _early_record(buf, p + i, _valid_rdw(buf, p + i)) and (
                k >= 3 or (x == fr.n and fr.eof)):
            return p + i
    return None


def _rmf_sections_fill(b: bytes | memoryview, a: int) -> bool:
    """Whether the RMF record at ``b[a]`` is filled exactly by the sections it locates.

    RMF records (types 70-79, subtype flag ``x'40'`` set) carry ``SMFxTRN`` (offset 24) triplets
    from offset 28, offset (4 bytes, from the RDW) / length (2) / number (2) of each section
    (IBM, *MVS System Management Facilities*, SMF70TRN). Here every section lies after the
    triplets and inside the record's descriptor length, no two overlap, and the last ends at
    that length: the record's own bytes confirm its descriptor. Only the header and the
    triplets need to be in ``b`` (the end of the input may cut the sections short). More than
    :data:`MAX_RMF_TRIPLETS` triplets is no RMF record (and would make damage expensive to scan).
    """
    if a + 28 > len(b) or not b[a + 4] & 0x40 or not 70 <= b[a + 5] <= 79:
        return False
    n = (b[a] << 8) | b[a + 1]
    trn = (b[a + 24] << 8) | b[a + 25]
    lo = 28 + 8 * trn
    if not 1 <= trn <= MAX_RMF_TRIPLETS or lo > n or a + lo > len(b):
        return False
    spans = []
    for t in range(a + 28, a + lo, 8):
        off = int.from_bytes(b[t:t + 4], "big")
        length, number = (b[t + 4] << 8) | b[t + 5], (b[t + 6] << 8) | b[t + 7]
        if number == 0:
            continue
        if length == 0 or off < lo or off + length * number > n:
            return False
        spans.append((off, off + length * number))
    spans.sort()
    return bool(spans) and spans[-1][1] == n and all(
        x[1] <= y[0] for x, y in zip(spans, spans[1:]))


def _spans_a_block(fr: _Frame) -> bool:
    """Whether a spanned record runs across a block descriptor somewhere in ``fr.buf``.

    That is a first or middle segment, then four bytes that pass for a block descriptor, then a
    middle or last segment: in a file of records one after the other (RDW) a segment that
    continues is followed by its continuation straight away. Its blocks may all be damaged
    (none checks out), yet this shows the file is blocked. The four bytes may be an invalid
    block descriptor when the segment before them is a first segment (an SMF record header)
    and the continuation after them leads on (to a record header, a continuation, a block
    descriptor or the end of input): a dump of two blocks, the first one's first record and
    the second one's descriptor damaged, has nothing else to show it is blocked.
    """
    u8 = np.frombuffer(fr.buf, dtype=np.uint8)
    n = u8.size - 8
    if n <= 0:
        return False
    # segments that continue: code 1 (a first segment, which is a record start) or 3
    s = np.flatnonzero((u8[2 : 2 + n] & 0xFD) == 1)
    s = s[u8[s + 3] == 0]
    ln = (u8[s].astype(np.int64) << 8) | u8[s + 1]
    first = np.isin(s, np.asarray(fr.anchor_list, dtype=np.int64))
    keep = (ln >= 5) & ((u8[s + 2] == 3) | first)
    ends, first = (s + ln)[keep], first[keep]
    inside = ends + 8 <= u8.size
    ends, first = ends[inside], first[inside]
    firsts = set(ends[first].tolist())
    return any(x not in fr.anchors and fr.is_cont(x + 4) and (
        _valid_bdw(fr.buf, x) or (x in firsts and not fr.is_cont(x) and _leads_on(fr, x + 4)))
        for x in distinct_ints(ends).tolist())


def _reached_from(fr: _Frame, start: int) -> int:
    """The first trusted record start before ``start`` whose descriptors lead exactly to it.

    Framing starts where blocks or records first chain; a spanned record whose first segment
    comes before that point (its continuation in the first block that checks out, say) is
    whole, and the segments from its trusted first segment on lead there one descriptor after
    the other (block descriptors in between, in a blocked file). ``start`` itself when no
    trusted record start before it does. Each position is walked from at most once.
    """
    buf, seen = fr.buf, set()
    for g in fr.good:
        if g >= start:
            break
        r = g
        while r < start and r not in seen:
            seen.add(r)
            if fr.blocked and r not in fr.anchors and fr.is_bdw_here(r):
                r += 4
                continue
            n = _valid_rdw(buf, r)
            if not n or (buf[r + 2] & 0x03 < 2 and r not in fr.anchors):
                break
            r += n
        if r == start:
            return g
    return start


def _block_candidates(fr: _Frame) -> list[int]:
    """Positions of ``fr.buf`` (ascending) where a block may start.

    That is a plausible block descriptor followed by a trusted record start or by a middle or
    last segment descriptor.
    """
    u8 = np.frombuffer(fr.buf, dtype=np.uint8)
    n = u8.size - 8
    out = [g - 4 for g in fr.good if g >= 4]
    if n > 0:
        # a continuation segment descriptor at c = q + 4: code 2 or 3, byte 3 zero, length >= 5;
        # a (non-extended or extended) block descriptor before it
        c = np.flatnonzero((u8[6 : 6 + n] & 0xFE) == 2) + 4
        c = c[(u8[c + 3] == 0) & (((u8[c].astype(np.int32) << 8) | u8[c + 1]) >= 5)]
        out.extend(int(x) - 4 for x in c.tolist()
                   if _valid_bdw(fr.buf, int(x) - 4) and fr.is_cont(int(x)))
    return sorted(set(out))


def _reaches_block(fr: _Frame, q: int) -> bool:
    """Whether the segment descriptors from ``q`` lead to a block that checks out.

    They must get there within one block's length; the segments of a first block whose
    descriptor is damaged do.
    """
    r = q
    while r - q <= MAX_EXT_BLOCK_LEN:
        m = _valid_rdw(fr.buf, r)
        if not m:
            return False
        r += m
        if fr.block(r) is not None:
            return True
    return False


def _chain(fr: _Frame, g: int) -> int:
    """How many trusted segments follow one another from ``g`` (4 counts the end of input too).

    A record start counts when it is a trusted anchor, a middle or last segment of a spanned
    record when what follows it may follow it: a dump whose records arrive as VBS segments
    chains as well as one of complete records.
    """
    k = 0
    while k < 3:
        n = _valid_rdw(fr.buf, g)
        code = fr.buf[g + 2] & 0x03 if n else -1
        if code in (0, 1):
            trusted = g in fr.anchors and fr.next_good(g, inclusive=True) == g
        else:
            trusted = code in (2, 3) and fr._follows(g + n, code)
        if not trusted:
            return k
        k += 1
        g += n
        if g == fr.n and fr.eof:
            return 4
    return k


def detect_framing(head: bytes) -> str:
    r"""Tell RDW-prefixed records from BDW-blocked ones by the descriptors at the start.

    A file is taken to be blocked when a BDW starts a block filled exactly by valid RDW/SDWs
    whose records have plausible SMF headers; it is RDW-framed when its descriptors chain from
    record header to record header. Junk before the first record is tolerated (see
    :func:`find_framing`). Anything else is a plain binary transfer.

    Parameters
    ----------
    head : bytes
        The first bytes of the uncompressed file (64 KiB is plenty).

    Returns
    -------
    str
        ``"bdw"`` or ``"rdw"``.

    Raises
    ------
    SMFDataError
        When neither framing fits (typically a plain binary FTP without ``site rdw``).

    Examples
    --------
    >>> rec = bytes([0, 24, 0, 0, 0x5E, 70, 0, 0, 0, 0]) + bytes.fromhex("0125062F") + bytes(10)
    >>> detect_framing(rec * 3)
    'rdw'
    >>> detect_framing(bytes([0, 52, 0, 0]) + rec * 2)
    'bdw'
    >>> detect_framing(b"\x07" + rec * 3)
    'rdw'
    >>> detect_framing(bytes(range(64)))
    Traceback (most recent call last):
    ...
    kneecap.smf.framing.SMFDataError: byte offset 0: This does not look like an SMF dump ...
    """
    return find_framing(head, eof=len(head) < 65536)[0]


# ----------------------------------------------------------------------------- input streams

#: Most decompressed bytes per compressed byte a gzip SMF input may expand by. SMF dumps compress
#: about 5-15:1, and kneecap's synthetic 72.3 dumps about 90:1; deflate's own maximum is about
#: 1032:1, reached only by long runs of one byte (a decompression bomb, or a dump padded with
#: zeros): decoding such a run finds nothing and costs time linear in its length.
MAX_GUNZIP_RATIO = 400
#: The ratio is judged only past this much output, so small, very regular inputs are not refused.
GUNZIP_RATIO_AFTER_BYTES = 64 * 1024 * 1024


def gunzip_ratio_error(compressed: int, decompressed: int) -> str | None:
    """Why a gzip stream must stop after ``compressed`` bytes gave ``decompressed``, or None.

    Examples
    --------
    >>> gunzip_ratio_error(1_000_000, 1 << 30)[:50]
    'gzip input expands more than 400:1 (1,073,741,824 '
    >>> gunzip_ratio_error(1_000_000, 50_000_000) is None
    True
    """
    if decompressed <= GUNZIP_RATIO_AFTER_BYTES or decompressed <= MAX_GUNZIP_RATIO * compressed:
        return None
    return (f"gzip input expands more than {MAX_GUNZIP_RATIO}:1 ({decompressed:,} bytes from the first "
            f"{compressed:,} compressed bytes): a decompression bomb or a dump padded with zeros, not "
            "SMF records; decompress it yourself if it is genuine")


class _Gunzip(io.RawIOBase):
    """gzip decompression that hands out everything before damage or a cut.

    :class:`gzip.GzipFile` raises on a truncated stream and loses what it had decompressed in
    that read; here each read returns what ``zlib`` produced so far, and a truncated or damaged
    stream just ends, with :attr:`error` saying why. Concatenated gzip members are read in turn
    (as ``gunzip`` does). Output per read is bounded, so a decompression bomb cannot fill memory,
    and a stream that expands past :data:`MAX_GUNZIP_RATIO` raises :class:`SMFDataError`, so it
    cannot take unbounded time either.
    """

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._d: Any = zlib.decompressobj(31)
        self._in = b""
        self._started = False
        self.members = 0
        self.error: str | None = None
        self.compressed = 0
        self.decompressed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while self._d is not None:
            if not self._in:
                chunk = self._raw.read(1 << 16)
                if not chunk:
                    if self._started:
                        self.error = ("gzip stream ends before its end-of-stream marker "
                                      "(truncated file): records after this point are missing")
                    self._d = None
                    return 0
                self._in = chunk
                self.compressed += len(chunk)
            self._started = True
            before = self._d.copy()
            try:
                out = self._d.decompress(self._in, len(b))
            except zlib.error as exc:
                self.error = (f"damaged gzip stream ({exc}) after gzip member {self.members}: "
                              "records after this point are missing")
                self._d = None
                # zlib drops everything the failing call produced: a member whose check word
                # is wrong, or whose damage sits late in this input chunk, would lose every
                # record before the damage
                out = _decompress_until_damage(before, self._in, len(b))
                return self._hand_out(out, b)
            if self._d.eof:
                self.members += 1
                self._in = self._d.unused_data
                self._d = zlib.decompressobj(31)
                self._started = False
            else:
                self._in = self._d.unconsumed_tail
            if out:
                return self._hand_out(out, b)
        return 0

    def _hand_out(self, out: bytes, b) -> int:
        """Copy ``out`` into ``b`` after the decompression-ratio check; its length."""
        self.decompressed += len(out)
        bomb = gunzip_ratio_error(self.compressed, self.decompressed)
        if bomb is not None:
            raise SMFDataError(f"{bomb}; stopped", offset=self.decompressed)
        b[: len(out)] = out
        return len(out)


def _decompress_until_damage(d: Any, data: bytes, most: int) -> bytes:
    """What decompressor ``d`` produces from ``data`` before the byte where zlib finds damage.

    Called once, after a ``decompress`` call raised: fed one byte at a time, zlib hands out
    everything up to the damaged byte (for a wrong CRC-32 or length in the trailer: the whole
    member). That is less than ``most`` (the call that raised stopped short of ``most`` bytes of
    output), so the cap only guards memory.

    Examples
    --------
    >>> import gzip
    >>> z = bytearray(gzip.compress(b"SMF" * 1000))
    >>> z[-5] ^= 1  # the CRC-32 in the trailer
    >>> d = zlib.decompressobj(31)
    >>> len(_decompress_until_damage(d, bytes(z), 1 << 20))
    3000
    """
    out: list[bytes] = []
    have = 0
    for i in range(len(data)):
        try:
            piece = d.decompress(data[i:i + 1])
        except zlib.error:
            break
        out.append(piece)
        have += len(piece)
        if have >= most or d.eof:
            break
    return b"".join(out)[:most]


def _open_binary(
    source: str | os.PathLike[str] | IO[bytes],
) -> tuple[IO[bytes], _Gunzip | None, IO[bytes] | None]:
    """Open ``source`` for reading, decompressing gzip.

    Returns (stream, gunzip or None, handle to close or None).
    """
    if isinstance(source, (str, os.PathLike)):
        raw: IO[bytes] = open(source, "rb")  # noqa: SIM115 - closed by RecordStream
        owned: IO[bytes] | None = raw
    else:
        raw = source
        owned = None
    peek = raw.read(2)
    if not isinstance(peek, bytes):
        raise TypeError("source must be a path or a binary file object")
    if hasattr(raw, "seek") and raw.seekable():
        raw.seek(-len(peek), io.SEEK_CUR)
        stream = raw
    else:
        stream = io.BufferedReader(_Prepend(peek, raw))
    if peek == b"\x1f\x8b":
        gz = _Gunzip(stream)
        return io.BufferedReader(gz, buffer_size=1 << 20), gz, owned
    return stream, None, owned


class _Prepend(io.RawIOBase):
    """A raw stream that first returns ``head`` then the rest of ``tail`` (for pipes)."""

    def __init__(self, head: bytes, tail: IO[bytes]) -> None:
        self._head = head
        self._tail = tail

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._tail.read(len(b))
        b[: len(data)] = data
        return len(data)


class RecordStream:
    """Stream the logical records of an SMF dump, reading it in bounded chunks.

    Parameters
    ----------
    source : path or binary file object
        The dump (RDW- or BDW-framed, optionally gzip-compressed).
    name : str, optional
        File name used in error messages (defaults to the path).
    framing : {"auto", "rdw", "bdw"}
        Force a framing instead of detecting it.
    batch_bytes : int
        Approximate bytes of input per :class:`RecordBatch`; memory use is a small multiple of
        this, independent of the file size.

    Notes
    -----
    Attributes filled in while iterating: ``framing``, ``compressed``, ``bytes_read``
    (uncompressed input bytes consumed), ``orphan_segments`` and ``records`` (logical records
    delivered, damaged stretches included).
    """

    def __init__(
        self,
        source: str | os.PathLike[str] | IO[bytes],
        *,
        name: str | None = None,
        framing: str = "auto",
        batch_bytes: int = 8 << 20,
    ) -> None:
        if framing not in ("auto", "rdw", "bdw"):
            raise ValueError(f"framing must be 'auto', 'rdw' or 'bdw', not {framing!r}")
        if batch_bytes < 65536:
            raise ValueError("batch_bytes must be at least 65536")
        self.source = source
        self.name = name if name is not None else (
            os.fspath(source) if isinstance(source, (str, os.PathLike)) else "<stream>"
        )
        self.requested_framing = framing
        self.batch_bytes = int(batch_bytes)
        self.framing: str | None = None
        self.compressed = False
        self.bytes_read = 0
        self.orphan_segments = 0
        self.records = 0

    # -- public iteration -------------------------------------------------------------------
    def __iter__(self) -> Iterator[RawRecord]:
        for batch in self.iter_batches():
            items: list[RawRecord] = [batch.record(i) for i in range(len(batch))]
            items.extend(batch.bad)
            items.sort(key=lambda r: r.record_no)
            yield from items

    def iter_batches(self) -> Iterator[RecordBatch]:
        """Yield :class:`RecordBatch` objects covering the whole input in file order."""
        stream, gz, owned = _open_binary(self.source)
        self.compressed = gz is not None
        try:
            yield from self._batches(stream, gz)
        finally:
            if gz is not None:
                stream.close()
            if owned is not None:
                owned.close()

    # -- internals --------------------------------------------------------------------------
    def _batches(self, stream: IO[bytes], gz: _Gunzip | None) -> Iterator[RecordBatch]:
        buf = b""
        base = 0  # file offset of buf[0]
        eof = False

        def fill(need: int) -> None:
            nonlocal buf, eof
            parts = [buf] if buf else []
            have = len(buf)
            while not eof and have < need:
                try:
                    chunk = stream.read(max(self.batch_bytes, need - have))
                except OSError as exc:
                    raise SMFDataError(f"cannot read input: {exc}", file=self.name,
                                       offset=base + have) from None
                except SMFDataError as exc:  # the gzip ratio limit
                    raise exc.with_context(file=self.name) from None
                if not chunk:
                    eof = True
                    break
                parts.append(chunk)
                have += len(chunk)
            buf = parts[0] if len(parts) == 1 else b"".join(parts)

        fill(self.batch_bytes + _LOOKAHEAD)
        if not buf:
            if gz is not None and gz.error:
                raise SMFDataError(gz.error, file=self.name, offset=0)
            raise SMFDataError("empty input: no SMF records", file=self.name, offset=0)
        if self.requested_framing == "auto":
            try:
                head = buf[:_HEAD_BYTES]
                self.framing, start = find_framing(head, eof=eof and len(head) == len(buf))
            except SMFDataError as exc:
                raise exc.with_context(file=self.name) from None
        else:
            self.framing, start = self.requested_framing, 0
        blocked = self.framing == "bdw"
        self._pending: list[tuple[int, bytes]] = []  # VBS segments awaiting their last one
        self._pending_len = 4  # the length of the record they make so far, its RDW included
        self._overlong: list[Any] | None = None  # a chain past MAX_SPANNED_LEN: [offset, bytes, head, segments]
        self._open_bad: list[Any] | None = None  # [offset, size, head bytes, reason, breaks]
        in_block, damaged, p = blocked, False, 0
        head_events: list[tuple[Any, ...]] = []
        if start:
            # records dated before 1970 there are not anchors, so not delivered: say how many
            early = _early_headers(buf, 0, start)
            head_events = prefix_events(buf, start, blocked=blocked,
                                        reason=f"not SMF framing: before byte {start}, where "
                                               f"{'blocks' if blocked else 'records'} first chain"
                                               + (f"; record headers dated 1900-1969 in it: {early:,}" if early
                                                  else ""))
            # resume at ``start`` as after damage: that tells a block (whose descriptor comes
            # first) from a record inside a damaged first block; but in step at a record dated
            # 1900-1969 (find_framing found it chaining), which resuming would pass over
            p, damaged = start, blocked or not _early_record(buf, start, _valid_rdw(buf, start))

        while True:
            limit = len(buf) if eof else max(len(buf) - _LOOKAHEAD, p)
            events, stop, in_block, damaged = frame_buffer(
                buf, p, eof=eof, limit=limit, blocked=blocked, in_block=in_block, damaged=damaged)
            acc = _Acc()
            if head_events:
                events, head_events = head_events + events, []
                p = 0  # the batch covers the bytes before the first trusted unit too
            for ev in events:
                if ev[0] == "S":
                    self._flush_bad(acc)
                    self._complete_records(acc, base, ev[1], ev[2])
                elif ev[0] == "s":
                    self._flush_bad(acc)
                    self._segment(acc, base, buf, ev[1], ev[2])
                else:
                    self._add_bad(acc, base, buf, ev[1], ev[2], ev[3], ev[4])
            if eof:
                self._flush_bad(acc)
                self._drop_chain(acc, "the end of the input")
                if gz is not None and gz.error:
                    self.records += 1
                    acc.bad.append(RawRecord(self.records, base + len(buf), b"", gz.error, 0))
            if acc.starts or acc.bad:
                data = buf + b"".join(acc.extra) if acc.extra else buf
                yield RecordBatch(
                    buf=data,
                    starts=np.asarray(acc.starts, dtype=np.int64),
                    lengths=np.asarray(acc.lengths, dtype=np.int64),
                    record_no=np.asarray(acc.recnos, dtype=np.int64),
                    file_offsets=np.asarray(acc.offs, dtype=np.int64),
                    bad=acc.bad,
                    nbytes=stop - p,
                    file_span=None if gz is not None else (base, len(buf)),
                )
            self.bytes_read = base + stop
            if eof:
                break
            buf = buf[stop:]
            base += stop
            p = 0
            fill(self.batch_bytes + _LOOKAHEAD)

    def _add_bad(self, acc: _Acc, base: int, buf: bytes, p: int, q: int, why: str | None,
                 breaks: bool) -> None:
        """Add damaged bytes ``buf[p:q]``, merging them with damage just before them."""
        ob = self._open_bad
        if ob is not None and ob[0] + ob[1] == base + p:
            room = KEEP_BAD_BYTES - len(ob[2])
            if room > 0:
                ob[2] += bytes(buf[p:min(q, p + room)])
            ob[1] += q - p
            ob[4] = ob[4] or breaks
            return
        self._flush_bad(acc)
        reason = why or "damaged bytes: no valid record or block descriptor"
        self._open_bad = [base + p, q - p, bytes(buf[p:min(q, p + KEEP_BAD_BYTES)]), reason, breaks]

    def _flush_bad(self, acc: _Acc) -> None:
        ob = self._open_bad
        if ob is None:
            return
        self._open_bad = None
        if ob[4]:
            # damage between the segments of a spanned record: its parts cannot be joined
            self._drop_chain(acc, f"damaged bytes at byte {ob[0]:,}")
        self.records += 1
        acc.bad.append(RawRecord(self.records, ob[0], ob[2], ob[3], ob[1]))

    def _complete_records(self, acc: _Acc, base: int, pos: np.ndarray, lens: np.ndarray) -> None:
        """Many complete (segment code 00) records at once."""
        k = int(pos.size)
        if k:
            self._drop_chain(acc, f"a complete record at byte {base + int(pos[0]):,}")
        acc.starts.extend(pos.tolist())
        acc.lengths.extend(lens.tolist())
        acc.recnos.extend(range(self.records + 1, self.records + k + 1))
        acc.offs.extend((pos + base).tolist())
        self.records += k

    def _segment(self, acc: _Acc, base: int, buf: bytes, q: int, n: int) -> None:
        seg = buf[q + 2] & 0x03
        if seg in (2, 3) and self._overlong is not None:
            # the rest of a chain already too long: counted into its row, never held
            ol = self._overlong
            ol[1] += n
            ol[3] += 1
            if seg == 2:
                self._drop_chain(acc, "")
            return
        pending = self._pending
        if seg == 0:
            self._drop_chain(acc, f"a complete record at byte {base + q:,}")
            self.records += 1
            acc.starts.append(q)
            acc.lengths.append(n)
            acc.recnos.append(self.records)
            acc.offs.append(base + q)
        elif seg == 1:
            self._drop_chain(acc, f"another first segment at byte {base + q:,}")
            self._pending = [(base + q, bytes(buf[q + 4 : q + n]))]
            self._pending_len = n
        elif not pending:
            self.orphan_segments += 1
        elif self._pending_len + n - 4 > MAX_SPANNED_LEN:
            # no SMF record is this long: stop holding its bytes, and account for the rest of the chain
            # (however long) in one row when it ends
            head = b"".join(d for _, d in pending)[:KEEP_BAD_BYTES]
            self._overlong = [pending[0][0], self._pending_len + 4 * (len(pending) - 1) + n, head, len(pending) + 1]
            self._pending, self._pending_len = [], 4
            if seg == 2:
                self._drop_chain(acc, "")
        else:
            pending.append((base + q, bytes(buf[q + 4 : q + n])))
            self._pending_len += n - 4
            if seg == 2:
                body = b"".join(d for _, d in pending)
                total = len(body) + 4
                self.records += 1
                acc.starts.append(len(buf) + acc.extra_len)
                acc.lengths.append(total)
                acc.recnos.append(self.records)
                acc.offs.append(pending[0][0])
                acc.extra.append(total.to_bytes(2, "big") + b"\0\0" + body)
                acc.extra_len += total
                self._pending, self._pending_len = [], 4

    def _drop_chain(self, acc: _Acc, before: str) -> None:
        """Set aside the spanned record under way, if any, as one damaged stretch.

        ``before`` says what came before its last segment (empty for a chain that did end, but too long).
        """
        if self._overlong is not None:
            offset, nbytes, head, segments = self._overlong
            self._overlong = None
            self.orphan_segments += segments
            why = (f"spanned record longer than {MAX_SPANNED_LEN:,} bytes (an SMF record is at most 32,756 bytes "
                   f"plus its RDW): {segments:,} segments, {nbytes:,} bytes")
            if before:
                why += f", never completed: {before} came before its last segment"
            self.records += 1
            acc.bad.append(RawRecord(self.records, offset, head, why, nbytes))
            return
        pending = self._pending
        if not pending:
            return
        self.orphan_segments += len(pending)
        self._pending, self._pending_len = [], 4
        head = b"".join(d for _, d in pending)[:KEEP_BAD_BYTES]
        # every segment's bytes, its descriptor included
        nbytes = sum(len(d) + 4 for _, d in pending)
        self.records += 1
        acc.bad.append(RawRecord(
            self.records, pending[0][0], head,
            f"spanned record never completed: {before} came before its last segment "
            f"({len(pending):,} segments, {nbytes:,} bytes, set aside)", nbytes))


class _Acc:
    """Per-batch accumulator of record positions."""

    __slots__ = ("starts", "lengths", "recnos", "offs", "bad", "extra", "extra_len")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.lengths: list[int] = []
        self.recnos: list[int] = []
        self.offs: list[int] = []
        self.bad: list[RawRecord] = []
        self.extra: list[bytes] = []
        self.extra_len = 0


def iter_records(source: str | os.PathLike[str] | IO[bytes], **kw: object) -> Iterator[RawRecord]:
    """Iterate the logical records of ``source`` (see :class:`RecordStream` for keywords)."""
    return iter(RecordStream(source, **kw))  # type: ignore[arg-type]
