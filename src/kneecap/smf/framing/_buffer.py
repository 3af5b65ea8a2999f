"""The framing of one buffer: trusted blocks, runs of records and single segments, and damage between them."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import numpy as np

from kneecap.smf.framing._anchors import Frame
from kneecap.smf.framing._descriptors import valid_bdw
from kneecap.smf.framing._resync import damage_events, record_step, resync_block


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
    fr = Frame(buf, eof=eof, blocked=blocked)
    events: list[tuple[Any, ...]] = []
    end = len(buf) if eof else limit
    while p < end:
        if damaged:
            g, in_block = _resume_at(fr, p, end, in_block=in_block)
            if g is None:
                stop = len(buf) if eof else limit
                events.extend(damage_events(fr, p, stop, None))
                return events, stop, in_block, not eof
            if g > p:
                events.extend(damage_events(fr, p, g, None))
            p, damaged = g, False
            continue
        step = _block_step(fr, p, in_block, events) if blocked else None
        if step is not None:
            p, in_block = step
            continue
        run = _chained_run(fr, p, end)
        if run is not None:
            pos, lengths = run
            events.append(("S", pos, lengths))
            p = int(pos[-1] + lengths[-1])
            continue
        q, why = record_step(fr, p)
        if why is None:
            assert q is not None  # a trusted segment always has its end
            events.append(("s", p, q - p))
            p = q
            continue
        if q is None or q > end:
            stop = len(buf) if eof else limit
            events.extend(damage_events(fr, p, stop, why))
            return events, stop, in_block, not eof
        if blocked:
            if q == p + 4 and not valid_bdw(buf, p):
                # four bad bytes right before a trusted record: a damaged block descriptor
                why = f"invalid block descriptor word {bytes(buf[p:p + 4]).hex(' ')}"
            q, in_block = resync_block(fr, q, p + 1)
        events.extend(damage_events(fr, p, q, why))
        p = q
    return events, p, in_block, False


def _resume_at(fr: Frame, p: int, end: int, *, in_block: bool) -> tuple[int | None, bool]:
    """Where trusted framing resumes inside damage that starts at ``p``, and whether a block starts there.

    A block that checks out at ``p`` itself, else the first trusted record start (in a blocked
    file, the block before it when that checks out); None when that is not before ``end``, with
    ``in_block`` as it was.
    """
    g = fr.next_good(p, inclusive=True)
    if fr.blocked and fr.block(p) is not None:
        return p, True
    if g is not None and g < end:
        return resync_block(fr, g, p) if fr.blocked else (g, False)
    return None, in_block


def _block_step(fr: Frame, p: int, in_block: bool, events: list[tuple[Any, ...]]) -> tuple[int, bool] | None:
    """In a blocked file, a block at ``p`` or four bytes where one sits: where framing goes on and ``in_block``.

    A block that checks out adds its segments to ``events``. Four bytes where a block
    descriptor sits that do not start such a block are kept out of the data (an invalid
    descriptor among them is added as damage that does not interrupt a spanned record), and the
    records after them are framed by their own descriptors. None when ``p`` is neither: a
    record is framed there.
    """
    buf = fr.buf
    # where a block descriptor sits, met while framing records one by one (the block
    # before did not check out): four bytes that are no record start, before a record
    # start or continuation segment. Treated as one, valid or not, like a block descriptor
    # at a block boundary, so that a spanned record across it is not lost.
    slot = not in_block and fr.is_bdw_slot(p)
    if not (in_block or slot or valid_bdw(buf, p)):
        return None
    blk = fr.block(p)
    if blk is not None:
        bl, segs = blk
        for r in segs:
            events.append(("s", r, (buf[r] << 8) | buf[r + 1]))
        return p + bl, True
    if not (in_block or slot):
        return None
    if not valid_bdw(buf, p):
        events.append(("b", p, min(p + 4, len(buf)),
                       f"invalid block descriptor word {bytes(buf[p:p + 4]).hex(' ')}", False))
    # a plausible descriptor whose block does not check out (wrong length, damage
    # inside): keep it out of the data and frame the records by their own RDWs
    return min(p + 4, len(buf)), False


def _chained_run(fr: Frame, p: int, end: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The run of complete records from ``p`` that chain exactly, starting before ``end``: (positions, lengths).

    Each ends where the next trusted one starts, so nothing can hide inside them and they are
    taken all at once. None when no such run starts at ``p``.
    """
    i = bisect_left(fr.good, p)
    if not (i < len(fr.good) and fr.good[i] == p and i < fr.chains.size and fr.chains[i]):
        return None
    j = i + int(np.argmin(fr.chains[i:])) if not fr.chains[i:].all() else fr.chains.size
    pos = fr.good_arr[i:j]
    if pos.size and pos[-1] >= end:
        pos = pos[pos < end]
    if not pos.size:
        return None
    return pos, fr.good_len[i:i + pos.size]
