"""The record stream: a dump read in bounded batches, spanned records joined, damage set aside."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from kneecap.smf.framing._buffer import frame_buffer
from kneecap.smf.framing._descriptors import early_headers, early_record, valid_rdw
from kneecap.smf.framing._detect import find_framing
from kneecap.smf.framing._gunzip import Gunzip, open_binary
from kneecap.smf.framing._records import (
    HEAD_BYTES,
    KEEP_BAD_BYTES,
    LOOKAHEAD,
    MAX_SPANNED_LEN,
    RawRecord,
    RecordBatch,
    SMFDataError,
)
from kneecap.smf.framing._resync import prefix_events


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
        stream, gz, owned = open_binary(self.source)
        self.compressed = gz is not None
        try:
            yield from self._batches(stream, gz)
        finally:
            if gz is not None:
                stream.close()
            if owned is not None:
                owned.close()

    # -- internals --------------------------------------------------------------------------
    def _batches(self, stream: IO[bytes], gz: Gunzip | None) -> Iterator[RecordBatch]:
        """The batches of ``stream``: read ``batch_bytes`` at a time, framed, their events applied."""
        base = 0  # file offset of buf[0]
        buf, eof = self._read(stream, b"", False, base)
        if not buf:
            if gz is not None and gz.error:
                raise SMFDataError(gz.error, file=self.name, offset=0)
            raise SMFDataError("empty input: no SMF records", file=self.name, offset=0)
        blocked, p, damaged, head_events = self._start(buf, eof)
        in_block = blocked
        while True:
            limit = len(buf) if eof else max(len(buf) - LOOKAHEAD, p)
            events, stop, in_block, damaged = frame_buffer(
                buf, p, eof=eof, limit=limit, blocked=blocked, in_block=in_block, damaged=damaged)
            acc = _Acc()
            if head_events:
                events, head_events = head_events + events, []
                p = 0  # the batch covers the bytes before the first trusted unit too
            self._apply(acc, base, buf, events)
            if eof:
                self._end_of_input(acc, base + len(buf), gz)
            if acc.starts or acc.bad:
                yield acc.batch(buf, stop - p, None if gz is not None else (base, len(buf)))
            self.bytes_read = base + stop
            if eof:
                break
            buf = buf[stop:]
            base += stop
            p = 0
            buf, eof = self._read(stream, buf, eof, base)

    def _read(self, stream: IO[bytes], buf: bytes, eof: bool, base: int) -> tuple[bytes, bool]:
        """``buf`` (input from file offset ``base``) topped up to a batch and its lookahead; whether the input ended."""
        need = self.batch_bytes + LOOKAHEAD
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
        return (parts[0] if len(parts) == 1 else b"".join(parts)), eof

    def _start(self, buf: bytes, eof: bool) -> tuple[bool, int, bool, list[tuple[Any, ...]]]:
        """The framing of the input whose first bytes are ``buf``, and where framing starts.

        Sets :attr:`framing` and the state of spanned records under way. Returns whether the
        file is blocked, the position framing starts at, whether it resumes there as after
        damage, and the events for the bytes before it.
        """
        if self.requested_framing == "auto":
            try:
                head = buf[:HEAD_BYTES]
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
        if not start:
            return blocked, 0, False, []
        # records dated before 1970 there are not anchors, so not delivered: say how many
        early = early_headers(buf, 0, start)
        head_events = prefix_events(buf, start, blocked=blocked,
                                    reason=f"not SMF framing: before byte {start}, where "
                                           f"{'blocks' if blocked else 'records'} first chain"
                                           + (f"; record headers dated 1900-1969 in it: {early:,}" if early
                                              else ""))
        # resume at ``start`` as after damage: that tells a block (whose descriptor comes
        # first) from a record inside a damaged first block; but in step at a record dated
        # 1900-1969 (find_framing found it chaining), which resuming would pass over
        return blocked, start, blocked or not early_record(buf, start, valid_rdw(buf, start)), head_events

    def _apply(self, acc: _Acc, base: int, buf: bytes, events: list[tuple[Any, ...]]) -> None:
        """Add the records and damage ``events`` of :func:`frame_buffer` describe to ``acc``."""
        for ev in events:
            if ev[0] == "S":
                self._flush_bad(acc)
                self._complete_records(acc, base, ev[1], ev[2])
            elif ev[0] == "s":
                self._flush_bad(acc)
                self._segment(acc, base, buf, ev[1], ev[2])
            else:
                self._add_bad(acc, base, buf, ev[1], ev[2], ev[3], ev[4])

    def _end_of_input(self, acc: _Acc, end: int, gz: Gunzip | None) -> None:
        """At the end of the input (file offset ``end``): damage and a spanned record still open, a gzip problem."""
        self._flush_bad(acc)
        self._drop_chain(acc, "the end of the input")
        if gz is not None and gz.error:
            self.records += 1
            acc.bad.append(RawRecord(self.records, end, b"", gz.error, 0))

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

    def batch(self, buf: bytes, nbytes: int, file_span: tuple[int, int] | None) -> RecordBatch:
        """The records gathered, in ``buf`` and the spanned records joined after it."""
        return RecordBatch(
            buf=buf + b"".join(self.extra) if self.extra else buf,
            starts=np.asarray(self.starts, dtype=np.int64),
            lengths=np.asarray(self.lengths, dtype=np.int64),
            record_no=np.asarray(self.recnos, dtype=np.int64),
            file_offsets=np.asarray(self.offs, dtype=np.int64),
            bad=self.bad,
            nbytes=nbytes,
            file_span=file_span,
        )


def iter_records(source: str | os.PathLike[str] | IO[bytes], **kw: object) -> Iterator[RawRecord]:
    """Iterate the logical records of ``source`` (see :class:`RecordStream` for keywords)."""
    return iter(RecordStream(source, **kw))  # type: ignore[arg-type]
