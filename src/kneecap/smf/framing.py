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
record a consumer sees. Middle/last segments without a first one, and first segments never
completed, are counted in :attr:`RecordStream.orphan_segments` and dropped (they are not a
record).

Damaged framing (a descriptor whose length is impossible, a block whose segments do not add up,
a truncated tail) does not stop the stream: the damaged bytes are yielded as one
:class:`RawRecord` whose ``error`` says why, and the stream re-synchronises on the next position
where a run of valid descriptors starts. Every intact record before and after the damage is
still delivered.

Public API (stable; other record-type modules build on it)
-------------------------------------------------------
``SMFDataError(message, *, file=None, record_no=None, offset=None)``
    The one exception for bad SMF data; ``str()`` carries file, record number and byte offset.
``RawRecord(record_no, offset, data, error=None)``
    One logical record. ``data`` is ``bytes`` starting with a 4-byte RDW (SEG = 0), so
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

References
----------
IBM, *z/OS DFSMS Using Data Sets*, "Record Descriptor Word (RDW)", "Segment Descriptor Word",
"Block Descriptor Word (BDW)", "Spanned variable-length records".
IBM, *z/OS Communications Server IP Configuration Reference*, "RDW (FTP client and server)
statement".
IBM, *z/OS MVS System Management Facilities (SMF)*, "Standard and extended SMF record headers".
"""

from __future__ import annotations

import gzip
import io
import zlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, NamedTuple

import numpy as np

__all__ = [
    "SMFDataError",
    "RawRecord",
    "RecordBatch",
    "RecordStream",
    "iter_records",
    "detect_framing",
    "TRANSFER_HELP",
    "MAX_RECORD_LEN",
]

#: Longest logical record / segment SMF writes (IBM: LRECL 32760; SMF records <= 32756 + RDW).
MAX_RECORD_LEN = 32760
#: Largest (non-extended) block of a RECFM=VBS or RECFM=U data set.
MAX_BLOCK_LEN = 32760
#: Shortest record that still holds the 18-byte header without subtypes plus the 4-byte RDW ...
#: IBM's offsets include the RDW, so a header-only record is 18 bytes long in total.
MIN_RECORD_LEN = 18

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


class RawRecord(NamedTuple):
    """One logical SMF record, RDW included (``data[0:4]``), or a damaged stretch of input."""

    record_no: int
    offset: int
    data: bytes
    error: str | None = None

    @property
    def record_type(self) -> int | None:
        """SMFxRTY (offset 5), or None for a record too short to have one."""
        return self.data[5] if len(self.data) > 5 else None


@dataclass
class RecordBatch:
    """Logical records that share one buffer (what the vectorised decoders consume).

    ``buf[starts[i] : starts[i] + lengths[i]]`` is record ``record_no[i]`` including its RDW.
    """

    buf: bytes
    starts: np.ndarray
    lengths: np.ndarray
    record_no: np.ndarray
    file_offsets: np.ndarray
    bad: list[RawRecord] = field(default_factory=list)
    nbytes: int = 0

    def __len__(self) -> int:
        return int(self.starts.size)

    def record(self, i: int) -> RawRecord:
        """Record ``i`` of the batch as a :class:`RawRecord` (copies its bytes)."""
        s = int(self.starts[i])
        return RawRecord(
            int(self.record_no[i]), int(self.file_offsets[i]), self.buf[s : s + int(self.lengths[i])]
        )


def _valid_rdw(b: bytes | memoryview, p: int) -> int:
    """Length of a plausible RDW/SDW at ``b[p]``, or 0 if there is none.

    A descriptor is plausible when its length is 5..32760 and byte 3 is zero and byte 2 has
    only the two segment-code bits (IBM DFSMS: the rest are reserved, zero).
    """
    if p + 4 > len(b):
        return 0
    n = (b[p] << 8) | b[p + 1]
    if n < 5 or n > MAX_RECORD_LEN or b[p + 3] != 0 or b[p + 2] & 0xFC:
        return 0
    return n


def _valid_bdw(b: bytes | memoryview, p: int) -> int:
    """Block length of a plausible BDW at ``b[p]`` (extended BDWs too), or 0."""
    if p + 4 > len(b):
        return 0
    if b[p] & 0x80:
        n = int.from_bytes(b[p : p + 4], "big") & 0x7FFFFFFF
        if n < 9 or n > 0x7FFFFFFF:
            return 0
        return n
    n = (b[p] << 8) | b[p + 1]
    if n < 9 or n > MAX_BLOCK_LEN or b[p + 2] != 0 or b[p + 3] != 0:
        return 0
    return n


def _block_ok(b: bytes | memoryview, p: int, n: int) -> bool:
    """True if the block at ``p`` of length ``n`` is filled exactly by valid segments."""
    end = p + n
    q = p + 4
    while q < end:
        m = _valid_rdw(b, q)
        if not m:
            return False
        q += m
    return q == end


def _plausible_smf_record(b: bytes | memoryview, p: int, n: int) -> bool:
    """Does a complete record or first segment start at ``b[p]`` (descriptor length ``n``)?

    Used wherever a descriptor cannot be confirmed by the one after it (re-synchronising after
    damage, guessing the framing): it must be a complete or first segment long enough for the
    18-byte header, and the header date SMFxDTE (offset 10) must be packed ``0cyydddF`` with
    c = 0 or 1 and ddd = 1..366 (IBM "Standard SMF record header").
    """
    if (b[p + 2] & 0x03) not in (0, 1) or n < MIN_RECORD_LEN or p + 14 > len(b):
        return False
    d0, d1, d2, d3 = b[p + 10], b[p + 11], b[p + 12], b[p + 13]
    if d0 > 0x01 or d3 & 0x0F < 0x0A:
        return False
    for x in (d1, d2):
        if x >> 4 > 9 or x & 0x0F > 9:
            return False
    if d3 >> 4 > 9:
        return False
    ddd = (d2 >> 4) * 100 + (d2 & 0x0F) * 10 + (d3 >> 4)
    return 1 <= ddd <= 366


def detect_framing(head: bytes) -> str:
    """Tell RDW-prefixed records from BDW-blocked ones by the descriptors at the start.

    A file is taken to be blocked when its first 4 bytes are a BDW whose block is filled
    exactly by valid RDW/SDWs; it is RDW-framed when its first descriptors chain validly
    (three records, or to the end of ``head``). Anything else is a plain binary transfer.

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
    >>> detect_framing(bytes(range(64)))
    Traceback (most recent call last):
    ...
    kneecap.smf.framing.SMFDataError: byte offset 0: This does not look like an SMF dump ...
    """
    if not head:
        raise SMFDataError("empty input: no SMF records", offset=0)
    # A BDW is followed by an RDW whose record has a plausible header (date at +10).
    n = _valid_bdw(head, 0)
    m = _valid_rdw(head, 4)
    if n and m and n >= 4 + m and _plausible_smf_record(head, 4, m):
        return "bdw"
    m = _valid_rdw(head, 0)
    if m and _plausible_smf_record(head, 0, m):
        return "rdw"
    # a file may start with the middle of a spanned record: accept a clean descriptor chain
    p, k = 0, 0
    while p < len(head) and k < 3:
        m = _valid_rdw(head, p)
        if not m:
            break
        p += m
        k += 1
    if k >= 3 or (k >= 1 and p == len(head)):
        return "rdw"
    raise SMFDataError(TRANSFER_HELP, offset=0)


def _open_binary(source: str | os.PathLike[str] | IO[bytes]) -> tuple[IO[bytes], bool, bool]:
    """Open ``source`` for reading, decompressing gzip. Returns (stream, compressed, owned)."""
    if isinstance(source, (str, os.PathLike)):
        raw: IO[bytes] = open(source, "rb")  # noqa: SIM115 - closed by RecordStream
        owned = True
    else:
        raw = source
        owned = False
    peek = raw.read(2)
    if not isinstance(peek, bytes):
        raise TypeError("source must be a path or a binary file object")
    if hasattr(raw, "seek") and raw.seekable():
        raw.seek(-len(peek), io.SEEK_CUR)
        stream = raw
    else:
        stream = io.BufferedReader(_Prepend(peek, raw))  # type: ignore[arg-type]
    if peek == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=stream, mode="rb"), True, owned
    return stream, False, owned


class _Prepend(io.RawIOBase):
    """A raw stream that first returns ``head`` then the rest of ``tail`` (for pipes)."""

    def __init__(self, head: bytes, tail: IO[bytes]) -> None:
        self._head = head
        self._tail = tail

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
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
        stream, self.compressed, owned = _open_binary(self.source)
        try:
            yield from self._batches(stream)
        finally:
            if owned or self.compressed:
                stream.close()

    # -- internals --------------------------------------------------------------------------
    def _err(self, msg: str, offset: int) -> SMFDataError:
        return SMFDataError(msg, file=self.name, record_no=self.records + 1, offset=offset)

    def _batches(self, stream: IO[bytes]) -> Iterator[RecordBatch]:
        buf = b""
        base = 0  # file offset of buf[0]
        eof = False

        def fill(need: int) -> None:
            nonlocal buf, eof
            while not eof and len(buf) < need:
                try:
                    chunk = stream.read(max(self.batch_bytes, need - len(buf)))
                except (OSError, EOFError, zlib.error) as exc:
                    # a damaged gzip member cannot be read past; what came before is delivered
                    raise SMFDataError(f"damaged gzip stream: {exc}", file=self.name,
                                       offset=base + len(buf)) from None
                if not chunk:
                    eof = True
                    break
                buf = buf + chunk if buf else chunk

        fill(self.batch_bytes)
        if not buf:
            raise SMFDataError("empty input: no SMF records", file=self.name, offset=0)
        if self.requested_framing == "auto":
            try:
                self.framing = detect_framing(buf[:65536])
            except SMFDataError as exc:
                raise exc.with_context(file=self.name) from None
        else:
            self.framing = self.requested_framing
        blocked = self.framing == "bdw"
        self._pending: list[tuple[int, bytes]] = []  # VBS segments awaiting their last one

        while True:
            acc = _Acc()
            n_buf = len(buf)
            limit = min(n_buf, self.batch_bytes)
            p = 0
            while p < limit or (eof and p < n_buf):
                if blocked:
                    blen = _valid_bdw(buf, p)
                    if blen and p + blen > n_buf and not eof:
                        break  # the block continues past the chunk: read more first
                    if not blen or p + blen > n_buf:
                        q = self._resync(buf, p, n_buf, blocked=True, eof=eof)
                        if q is None:
                            break
                        self._bad(acc, base, buf, p, q, self._why_bad_block(buf, p, n_buf, blen))
                        p = q
                        continue
                    self._scan(acc, base, buf, p + 4, p + blen, hard_end=True)
                    p += blen
                else:
                    q = self._scan(acc, base, buf, p, n_buf, hard_end=eof, limit=limit)
                    if q == p:
                        break  # need more input to decide
                    p = q
            if acc.starts or acc.bad:
                data = buf + b"".join(acc.extra) if acc.extra else buf
                yield RecordBatch(
                    buf=data,
                    starts=np.asarray(acc.starts, dtype=np.int64),
                    lengths=np.asarray(acc.lengths, dtype=np.int64),
                    record_no=np.asarray(acc.recnos, dtype=np.int64),
                    file_offsets=np.asarray(acc.offs, dtype=np.int64),
                    bad=acc.bad,
                    nbytes=p,
                )
            self.bytes_read = base + p
            buf = buf[p:]
            base += p
            if eof and not buf:
                break
            before = len(buf)
            fill(max(self.batch_bytes, before + MAX_BLOCK_LEN + 8))
            if eof and p == 0 and len(buf) == before:
                acc = _Acc()
                self._bad(acc, base, buf, 0, len(buf),
                          "truncated file: incomplete record or block at end of input")
                yield RecordBatch(b"", np.zeros(0, np.int64), np.zeros(0, np.int64),
                                  np.zeros(0, np.int64), np.zeros(0, np.int64), acc.bad, len(buf))
                self.bytes_read = base + len(buf)
                break
        if self._pending:
            self.orphan_segments += len(self._pending)
            self._pending = []

    def _bad(self, acc: _Acc, base: int, buf: bytes, p: int, q: int, why: str) -> None:
        self.records += 1
        acc.bad.append(RawRecord(self.records, base + p, bytes(buf[p:q]), why))

    def _scan(
        self,
        acc: _Acc,
        base: int,
        buf: bytes,
        p: int,
        end: int,
        *,
        hard_end: bool,
        limit: int | None = None,
    ) -> int:
        """Split ``buf[p:end]`` into RDW/SDW-prefixed segments; return where it stopped.

        ``hard_end`` says that ``end`` is a true boundary (end of block or of input); otherwise
        scanning stops before a segment that needs bytes beyond ``end``. A descriptor is trusted
        when the next one is valid too; when it is not, the scanner re-synchronises and decides
        which side of the damage the bad bytes belong to (see the module docstring).
        """
        stop = end if limit is None else limit
        q = p
        while q < stop or (hard_end and q < end):
            n = _valid_rdw(buf, q)
            if n and q + n > end and not hard_end:
                return q
            nxt = q + n
            chained = n and nxt <= end and (nxt == end and hard_end or _valid_rdw(buf, nxt))
            if not chained and n and nxt <= end and nxt + 4 > end and not hard_end:
                return q  # cannot see the next descriptor yet
            if not chained:
                r = self._resync(buf, q, end, blocked=False, eof=hard_end)
                if r is None:
                    return q
                if n and nxt <= end and r >= nxt:
                    # this record is framed consistently; the damage starts after it
                    self._segment(acc, base, buf, q, n)
                    if r > nxt:
                        self._bad(acc, base, buf, nxt, r, "invalid record descriptor word "
                                  f"{bytes(buf[nxt:nxt + 4]).hex(' ')}")
                else:
                    if n and nxt > end:
                        why = (f"record descriptor says {n} bytes but only {end - q} remain "
                               "(truncated record or block)")
                    elif n:
                        why = (f"record descriptor says {n} bytes but no valid descriptor "
                               "follows (damaged length)")
                    else:
                        why = f"invalid record descriptor word {bytes(buf[q:q + 4]).hex(' ')}"
                    self._bad(acc, base, buf, q, r, why)
                q = r
                continue
            self._segment(acc, base, buf, q, n)
            q = nxt
        return q

    def _segment(self, acc: _Acc, base: int, buf: bytes, q: int, n: int) -> None:
        seg = buf[q + 2] & 0x03
        pending = self._pending
        if seg == 0:
            if pending:
                self.orphan_segments += len(pending)
                self._pending = []
            self.records += 1
            acc.starts.append(q)
            acc.lengths.append(n)
            acc.recnos.append(self.records)
            acc.offs.append(base + q)
        elif seg == 1:
            if pending:
                self.orphan_segments += len(pending)
            self._pending = [(base + q, bytes(buf[q + 4 : q + n]))]
        elif not pending:
            self.orphan_segments += 1
        else:
            pending.append((base + q, bytes(buf[q + 4 : q + n])))
            if seg == 2:
                body = b"".join(d for _, d in pending)
                total = len(body) + 4
                self.records += 1
                acc.starts.append(len(buf) + acc.extra_len)
                acc.lengths.append(total)
                acc.recnos.append(self.records)
                acc.offs.append(pending[0][0])
                acc.extra.append(min(total, 0xFFFF).to_bytes(2, "big") + b"\0\0" + body)
                acc.extra_len += total
                self._pending = []

    @staticmethod
    def _why_bad_block(buf: bytes, p: int, n_buf: int, blen: int) -> str:
        if not blen:
            return f"invalid block descriptor word {bytes(buf[p:p + 4]).hex(' ')}"
        return f"block descriptor says {blen} bytes but only {n_buf - p} remain (truncated)"

    @staticmethod
    def _resync(buf: bytes, p: int, n_buf: int, *, blocked: bool, eof: bool) -> int | None:
        """Next position after ``p`` where valid framing resumes (``n_buf`` if none).

        A candidate descriptor must be followed by a second valid one (or end the data exactly),
        so a stray byte pattern inside record data rarely fools it. Returns None when more input
        is needed to decide.
        """
        q = p + 1
        while q + 4 <= n_buf:
            if blocked:
                n = _valid_bdw(buf, q)
                if n and q + n <= n_buf and _valid_rdw(buf, q + 4) and (
                    q + n == n_buf or _valid_bdw(buf, q + n) or q + n + 4 > n_buf
                ):
                    return q
            else:
                n = _valid_rdw(buf, q)
                if n and not _plausible_smf_record(buf, q, n):
                    n = 0
                if n:
                    nxt = q + n
                    if nxt == n_buf and eof:
                        return q
                    if nxt + 4 <= n_buf and _valid_rdw(buf, nxt):
                        return q
                    if nxt + 4 > n_buf and not eof:
                        return None
            q += 1
        if not eof:
            return None
        return n_buf


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
