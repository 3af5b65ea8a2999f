"""Descriptor and header checks at one position: RDW/SDW, BDW, the SMF record header, an RMF record's sections.

Scalar checks, each on the bytes of one buffer at one offset; :func:`kneecap.smf.framing._anchors.anchor_positions`
is the vectorised twin of :func:`plausible_smf_record` over a whole buffer.
"""

from __future__ import annotations

import numpy as np

from kneecap.smf.framing._records import (
    MAX_BLOCK_LEN,
    MAX_EXT_BLOCK_LEN,
    MAX_RECORD_LEN,
    MAX_RMF_TRIPLETS,
    MAX_SMF_TIME,
    MIN_ANCHOR_LEN,
)


def valid_rdw(b: bytes | memoryview, p: int) -> int:
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


def valid_bdw(b: bytes | memoryview, p: int) -> int:
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


def plausible_smf_record(b: bytes | memoryview, p: int, n: int, *, early: bool = False) -> bool:
    """Whether a complete record or first segment starts at ``b[p]`` (descriptor length ``n``).

    It must be a complete or first segment long enough to hold SMFxDTE, and SMFxDTE (offset 10)
    must be packed ``0cyydddF`` with c = 0 or 1, a sign nibble A-F, ddd = 1..366 and, for c = 0,
    yy >= 70 (an earlier date is trusted only in step, :func:`early_record`), and SMFxTME
    (offset 6) hundredths of a second since midnight, below 8,640,000 (IBM "Standard SMF record
    header"). Zero-heavy
    record data with a segment descriptor in it passes for a 1900 date: ``00 00 00 5A``. The
    scalar twin of :func:`anchor_positions`. ``early``: dated 1900-1969 instead (:func:`early_smf_date`).
    """
    if (b[p + 2] & 0x03) not in (0, 1) or n < MIN_ANCHOR_LEN or p + 14 > len(b):
        return False
    if int.from_bytes(b[p + 6:p + 10], "big") >= MAX_SMF_TIME:
        return False
    return packed_smf_date(b, p + 10, early=early)


def packed_smf_date(b: bytes | memoryview, x: int, *, early: bool = False) -> bool:
    """Whether ``b[x:x+4]`` is a packed SMFxDTE ``0cyydddF``: c 0 or 1, 1970 on, ddd 1..366, sign A-F.

    ``early``: dated 1900-1969 instead (:func:`early_smf_date`).
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


def early_smf_date(b: bytes | memoryview, x: int) -> bool:
    """Whether ``b[x:x+4]`` is a packed SMFxDTE ``0cyydddF`` dated 1900-1969: c = 0, yy < 70.

    IBM's format allows those dates (c = 0 is 19yy, smf-notes section 1.4); anchors do not
    (:func:`packed_smf_date`), because zero-heavy record data passes for them. Only the sign
    nibbles of a positive packed number, C and F, are taken here, which zero-heavy data rarely
    has in the right place, and such a header is trusted only where framing reaches it in step
    (``_resync._early_record_leads_on``).

    Examples
    --------
    >>> early_smf_date(bytes.fromhex("0050001F"), 0), early_smf_date(bytes.fromhex("0070001F"), 0)
    (True, False)
    """
    return packed_smf_date(b, x, early=True)


def early_record(b: bytes | memoryview, p: int, n: int) -> bool:
    """:func:`plausible_smf_record` for a record dated 1900-1969 (:func:`early_smf_date`) whose RDW says ``n``."""
    return plausible_smf_record(b, p, n, early=True) and valid_rdw(b, p) == n


def early_headers(b: bytes | memoryview, p: int, q: int) -> int:
    """How many record headers dated 1900-1969 (:func:`early_record`) start in ``b[p:q]``; for a quarantine reason."""
    u8 = np.frombuffer(b, dtype=np.uint8)[p:q]
    if u8.size < 14:
        return 0
    # the sign nibble C or F at +13 first (a few per cent of positions), then the whole check
    idx = np.flatnonzero(np.isin(u8[13:] & 0x0F, (0x0C, 0x0F)))
    idx = idx[(u8[idx + 10] == 0) & (u8[idx + 11] < 0x70) & (u8[idx + 3] == 0)]
    return sum(early_record(b, p + int(i), (b[p + int(i)] << 8) | b[p + int(i) + 1]) for i in idx)


def rmf_sections_fill(b: bytes | memoryview, a: int) -> bool:
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
