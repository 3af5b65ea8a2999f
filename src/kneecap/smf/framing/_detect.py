"""Detection: the framing of a dump (RDW or BDW) and where its first trusted record or block starts."""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from kneecap.smf.framing._anchors import Frame, leads_on
from kneecap.smf.framing._descriptors import early_record, rmf_sections_fill, valid_bdw, valid_rdw
from kneecap.smf.framing._records import MAX_EXT_BLOCK_LEN, TRANSFER_HELP, SMFDataError, distinct_ints
from kneecap.smf.framing._resync import header_near


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
    fb = Frame(head, eof=eof, blocked=True)
    if fb.block(0) is not None:
        return "bdw", 0
    fr = Frame(head, eof=eof, blocked=False)
    framing = _at_the_start(head, fb, fr)
    if framing is not None:
        return framing, 0
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
    # records dated 1900-1969 are no anchors (:func:`early_smf_date`): three of them chaining
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
    return _start_inside_damage(head, fb, fr)


def _at_the_start(head: bytes, fb: Frame, fr: Frame) -> str | None:
    """The framing when it starts at byte 0 of ``head`` (read blocked as ``fb``, unblocked as ``fr``), else None.

    It does at a trusted record start, at a record header after a block descriptor (damage inside
    the first block, or a damaged first block descriptor whose segments lead to a block that
    checks out), at a record header whose successor is damaged, and at three descriptors that
    chain (a file may start with the middle of a spanned record).
    """
    if 0 in fr.anchors and fr.next_good(0, inclusive=True) == 0:
        return "rdw"
    if 4 in fb.anchors and (valid_bdw(head, 0) or _reaches_block(fb, 4)):
        # a block descriptor and a record header: damage inside the first block; or a damaged
        # first block descriptor, the first block's segments leading to a block that checks out
        return "bdw"
    if 0 in fr.anchors:
        return "rdw"  # a record header whose successor is damaged or cut off
    # a file may start with the middle of a spanned record: accept a clean descriptor chain
    p, k, seen = 0, 0, []
    while p < len(head) and k < 3:
        m = valid_rdw(head, p)
        if not m:
            break
        seen.append(p)
        p += m
        k += 1
    if k >= 3 or (k >= 1 and p == len(head)):
        # block descriptors chain like record descriptors (bytes 2-3 zero, the length leading to
        # the next one): a BDW file whose first block is damaged starts the same way
        if any(fb.block(q) is not None for q in seen) or _spans_a_block(fb):
            return "bdw"
        return "rdw"
    return None


def _start_inside_damage(head: bytes, fb: Frame, fr: Frame) -> tuple[str, int]:
    """The framing and first record of ``head`` when no three records chain in it (read as in :func:`_at_the_start`).

    Raises :class:`SMFDataError` when no record start is evidence of framing.
    """
    # Too short or too damaged for three records to chain anywhere. A trusted record start (its
    # descriptor and SMF header check out and lead to another record header, a block descriptor
    # or the end of the input) takes two headers where a plain binary transfer has none: framing
    # starts there, and the records around the damage are delivered.
    if fb.good:
        blocked = (not fr.good or any(g >= 4 and valid_bdw(head, g - 4) for g in fb.good)
                   or _spans_a_block(fb))
        f = fb if blocked else fr
        return ("bdw" if blocked else "rdw"), _reached_from(f, f.good[0])
    # No record start leads to another one anywhere: every record has damage on both sides.
    # Two record headers whose lengths each end a few bytes before another record header are
    # still framing a plain binary transfer does not have (it has no descriptors, and where
    # four bytes before a header pass for one, their length ends anywhere).
    near = [a for a in fb.anchor_list
            if (e := a + ((head[a] << 8) | head[a + 1])) <= len(head) and header_near(fb, e)]
    blocked = (valid_bdw(head, 0) and bool(valid_rdw(head, 4))) or _spans_a_block(fb)
    if len(near) >= 2:
        return ("bdw" if blocked else "rdw"), near[0]
    # A file with one record left whole has one header to show. An RMF record filled exactly by
    # the sections its triplets locate is still evidence a plain binary transfer does not give: a
    # stray header there needs the four bytes before the record to equal its real length. So is a
    # header whose length ends at such a record (within the few bytes :func:`header_near`
    # allows), even when the end of the input cuts that record short.
    confirmed = [a for a in fb.anchor_list if rmf_sections_fill(head, a)]
    for a in fb.anchor_list:
        e = a + ((head[a] << 8) | head[a + 1])
        i, j = bisect_left(confirmed, a), bisect_left(confirmed, e - 8)
        if (i < len(confirmed) and confirmed[i] == a) or (
                j < len(confirmed) and confirmed[j] <= e + 16):
            return ("bdw" if blocked else "rdw"), a
    raise SMFDataError(TRANSFER_HELP, offset=0)


def _early_chain(fr: Frame, p: int, q: int) -> int | None:
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
            m = valid_rdw(buf, x)
            if not m or buf[x + 2] & 0x03 or not (x in fr.anchors or early_record(buf, x, m)):
                break
            x, k = x + m, k + 1
        if k >= 1 and early_record(buf, p + i, valid_rdw(buf, p + i)) and (
                k >= 3 or (x == fr.n and fr.eof)):
            return p + i
    return None


def _spans_a_block(fr: Frame) -> bool:
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
        valid_bdw(fr.buf, x) or (x in firsts and not fr.is_cont(x) and leads_on(fr, x + 4)))
        for x in distinct_ints(ends).tolist())


def _reached_from(fr: Frame, start: int) -> int:
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
            n = valid_rdw(buf, r)
            if not n or (buf[r + 2] & 0x03 < 2 and r not in fr.anchors):
                break
            r += n
        if r == start:
            return g
    return start


def _block_candidates(fr: Frame) -> list[int]:
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
                   if valid_bdw(fr.buf, int(x) - 4) and fr.is_cont(int(x)))
    return sorted(set(out))


def _reaches_block(fr: Frame, q: int) -> bool:
    """Whether the segment descriptors from ``q`` lead to a block that checks out.

    They must get there within one block's length; the segments of a first block whose
    descriptor is damaged do.
    """
    r = q
    while r - q <= MAX_EXT_BLOCK_LEN:
        m = valid_rdw(fr.buf, r)
        if not m:
            return False
        r += m
        if fr.block(r) is not None:
            return True
    return False


def _chain(fr: Frame, g: int) -> int:
    """How many trusted segments follow one another from ``g`` (4 counts the end of input too).

    A record start counts when it is a trusted anchor, a middle or last segment of a spanned
    record when what follows it may follow it: a dump whose records arrive as VBS segments
    chains as well as one of complete records.
    """
    k = 0
    while k < 3:
        n = valid_rdw(fr.buf, g)
        code = fr.buf[g + 2] & 0x03 if n else -1
        if code in (0, 1):
            trusted = g in fr.anchors and fr.next_good(g, inclusive=True) == g
        else:
            trusted = code in (2, 3) and fr.follows(g + n, code)
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
