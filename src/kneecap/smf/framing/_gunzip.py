"""Input: gzip decompression that keeps what came before damage, bounded against decompression bombs."""

from __future__ import annotations

import io
import os
import zlib
from typing import IO, Any

from kneecap.smf.framing._records import SMFDataError

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


class Gunzip(io.RawIOBase):
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


def open_binary(
    source: str | os.PathLike[str] | IO[bytes],
) -> tuple[IO[bytes], Gunzip | None, IO[bytes] | None]:
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
        gz = Gunzip(stream)
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
