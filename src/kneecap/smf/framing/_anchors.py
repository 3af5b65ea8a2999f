"""Anchors: where records start in one buffer, which of them are trusted, and which blocks check out."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from kneecap.smf.framing._descriptors import early_record, valid_bdw, valid_rdw
from kneecap.smf.framing._records import MAX_RECORD_LEN, MAX_SMF_TIME, MIN_ANCHOR_LEN, distinct_ints


def anchor_positions(u8: np.ndarray) -> np.ndarray:
    """Every position of ``u8`` where a plausible complete record or first segment starts.

    Vectorised :func:`plausible_smf_record` plus :func:`valid_rdw` over a whole buffer: the
    sign-nibble test (A-F) runs over every byte and leaves a few per cent of positions, on
    which the rest (byte 3 zero, SMFxDTE century byte <= 1, ...) is checked.

    Examples
    --------
    >>> rec = bytes([0, 24, 0, 0, 0x5E, 70, 0, 0, 0, 0]) + bytes.fromhex("0125062F") + bytes(10)
    >>> anchor_positions(np.frombuffer(bytes(3) + rec * 2, np.uint8)).tolist()
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


class Frame:
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
        a = anchor_positions(u8)
        self.anchor_list = a.tolist()
        self.anchors = set(self.anchor_list)
        ln = (u8[a].astype(np.int64) << 8) | u8[a + 1]
        f = a + ln
        code0 = u8[a + 2] == 0
        # the common case in bulk: a complete record followed by another record header
        quick = code0 & np.isin(f, a, assume_unique=True)
        rest = [int(c) for c in a[~quick]
                if self.follows(int(c) + ((buf[c] << 8) | buf[c + 1]), buf[c + 2] & 0x03)]
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
        return bool(valid_rdw(self.buf, f)) and self.buf[f + 2] & 0x03 >= 2

    def is_bdw_here(self, f: int) -> bool:
        """A block descriptor at ``f`` followed by a record start or continuation.

        The record start may be dated 1900-1969 (:func:`early_record`): a valid block descriptor
        before it is the evidence its date does not give.
        """
        if not valid_bdw(self.buf, f):
            return False
        r = f + 4
        return (r in self.anchors or self.is_cont(r)
                or (r + 14 <= self.n and early_record(self.buf, r, valid_rdw(self.buf, r))))

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
        return not (self.is_cont(f) and leads_on(self, f)) or leads_on(self, f + 4)

    def follows(self, f: int, code: int) -> bool:
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
        bl = valid_bdw(buf, q)
        end = q + bl
        if not bl or end > self.n:
            return None
        segs = []
        r = q + 4
        while r < end:
            m = valid_rdw(buf, r)
            # a record dated before 1970 inside a block that checks out is one (its segments fill
            # the block exactly, and a block descriptor follows): IBM's date format allows it
            if not m or r + m > end or (buf[r + 2] & 0x03 < 2 and r not in self.anchors
                                        and not early_record(buf, r, m)):
                return None
            segs.append(r)
            r += m
        if r != end or not ((end == self.n and self.eof) or self.is_bdw_here(end)):
            return None
        return bl, segs


def ends_plausibly(fr: Frame, f: int) -> bool:
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
    return f in fr.anchors or (fr.blocked and fr.is_bdw_here(f)) or leads_on(fr, f)


def leads_on(fr: Frame, f: int) -> bool:
    """Whether a descriptor at ``f`` leads on.

    Its segment must end at a record header, a continuation segment, a block descriptor or the
    end of the input.
    """
    m = valid_rdw(fr.buf, f)
    if not m:
        return False
    e = f + m
    if e + 4 > fr.n:
        return e == fr.n
    return e in fr.anchors or fr.is_cont(e) or (fr.blocked and fr.is_bdw_here(e))


def trusted_inside(fr: Frame, a: int, e: int) -> bool:
    """Whether a trusted record start lies strictly inside ``buf[a:e]``."""
    nxt = fr.next_good(a)
    return nxt is not None and nxt < e
