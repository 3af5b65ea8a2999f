"""Resynchronisation after damage: one unit's verdict, and the records kept inside a damaged stretch."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

from kneecap.smf.framing._anchors import Frame, ends_plausibly, trusted_inside
from kneecap.smf.framing._descriptors import early_headers, early_record, packed_smf_date, valid_bdw, valid_rdw


def record_step(fr: Frame, q: int) -> tuple[int | None, str | None]:
    """Decide about the segment at ``q`` (RDW framing, or a block's inside that did not check out).

    Returns ``(end, None)`` when the segment ``buf[q:end]`` is trusted, else
    ``(resume, reason)``: the bytes ``buf[q:resume]`` are damaged (``resume`` is None when the
    damage runs past what is known of the buffer).
    """
    buf = fr.buf
    n = valid_rdw(buf, q)
    code = buf[q + 2] & 0x03 if n else -1
    head = code in (0, 1)
    nxt = fr.next_good(q)
    early = bool(head and n and q + n <= fr.n and q not in fr.anchors and early_record(buf, q, n))
    if n and q + n <= fr.n and (not head or q in fr.anchors or (early and _early_record_leads_on(fr, q + n, code))):
        f = q + n
        if nxt is None or nxt >= f:
            # reached through trusted framing and nothing trusted starts inside it: kept even
            # if what follows is damaged (that damage is the next step's business) ...
            a = header_inside(fr, q, f) if not ends_plausibly(fr, f) else None
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
               f"in the bytes set aside: {early_headers(buf, q, stop):,}")
    elif head and q not in fr.anchors:
        why = ("no SMF record header here (SMFxDTE at +10 is not a packed 0cyydddF date): "
               f"damaged header or descriptor {bytes(buf[q:q + 4]).hex(' ')}")
    elif nxt is not None and nxt < q + n:
        why = (f"record descriptor says {n} bytes but another record starts {nxt - q} bytes "
               "in (damaged length)")
    else:  # pragma: no cover - every other case returned above
        why = "damaged descriptor"
    return (nxt if nxt is not None else (fr.n if fr.eof else None)), why


def _early_record_leads_on(fr: Frame, f: int, code: int) -> bool:
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
    m = valid_rdw(fr.buf, f)
    return (f in fr.anchors or (bool(m) and early_record(fr.buf, f, m))
            or (fr.blocked and fr.is_bdw_here(f)))


def header_inside(fr: Frame, q: int, f: int) -> int | None:
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
        if ends_plausibly(fr, e):
            return a
        if first is None and (a + 4 <= f or valid_rdw(fr.buf, e) or header_near(fr, e)):
            first = a
    return first


def damage_events(fr: Frame, p: int, q: int, why: str | None) -> list[tuple[Any, ...]]:
    """Events for the damaged stretch ``buf[p:q]``, delivering the complete records inside it.

    Framing resumes after damage only at a trusted record start, one whose descriptor leads to
    another record; a record with damage on both sides is not one. Its descriptor and header
    still check out, though, and when its length ends inside the stretch, taking it cuts no
    trusted record: it is delivered like a record reached through trusted framing whose
    successor is damaged (:func:`record_step`), and only the bytes around it are damaged;
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
            segs = spanned_segments(fr, a, q, walked)
            if segs is None:
                continue
        elif trusted_inside(fr, a, a + n) or (
                not ends_plausibly(fr, a + n) and header_inside(fr, a, a + n) is not None):
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


def header_near(fr: Frame, e: int) -> bool:
    """Whether a record header is near ``e``, its descriptor damaged or not.

    That is a packed SMFxDTE (``0cyydddF`` as in an anchor) within 8 bytes before or 16 after
    offset 10 from ``e``: a few bytes may have been cut from the header or inserted before it.
    """
    return any(packed_smf_date(fr.buf, x) for x in range(max(e + 2, 0), min(e + 27, fr.n - 3)))


def spanned_segments(fr: Frame, a: int, q: int, walked: set[int]) -> list[tuple[int, int]] | None:
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
    # as in record_step: that record is the next one, not a part of this one
    if trusted_inside(fr, a, r):
        return None
    while r + 4 <= q:
        if fr.blocked and r not in fr.anchors and valid_bdw(buf, r) and fr.is_cont(r + 4):
            r += 4
        m = valid_rdw(buf, r)
        code = buf[r + 2] & 0x03 if m and r + 4 <= q else 0
        if code < 2 or r + m > q or r in walked:
            return None
        walked.add(r)
        segs.append((r, m))
        r += m
        if trusted_inside(fr, segs[-1][0], r):
            return None
        if code == 2:
            return segs
    return None


def prefix_events(buf: bytes, start: int, *, blocked: bool, reason: str) -> list[tuple[Any, ...]]:
    """Events for ``buf[:start]``, the bytes before the first trusted record or block.

    :func:`find_framing` starts framing only where records chain, so a record with damage on both
    sides before that point is not trusted; like one met after damage later in the file
    (:func:`damage_events`), it is delivered when its descriptor and header check out and its length
    ends before ``start``, and only the bytes around it are quarantined (``reason`` on the first).
    """
    return damage_events(Frame(buf[:start], eof=False, blocked=blocked), 0, start, reason)


def resync_block(fr: Frame, g: int, lo: int) -> tuple[int, bool]:
    """Where to resume before trusted anchor ``g`` in a blocked file: (position, blocked)."""
    if g - 4 >= lo and fr.block(g - 4) is not None:
        return g - 4, True
    return g, False
