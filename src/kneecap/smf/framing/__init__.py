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

The package
-----------
``_records`` what framing delivers (the records, batches and the data error) and the limits;
``_descriptors`` the checks at one position (RDW, BDW, SMF header, RMF sections); ``_anchors`` the
anchors of a buffer and which of them are trusted; ``_resync`` one unit's verdict and the records
kept inside damage; ``_buffer`` the framing of one buffer; ``_detect`` the framing of a dump and
where it starts; ``_gunzip`` gzip input; ``_stream`` :class:`RecordStream`, which reads a dump in
batches and joins spanned records.
"""

from kneecap.smf.framing._buffer import frame_buffer
from kneecap.smf.framing._detect import detect_framing, find_framing
from kneecap.smf.framing._gunzip import MAX_GUNZIP_RATIO
from kneecap.smf.framing._records import (
    DECODER_FAILURES,
    MAX_RECORD_LEN,
    MAX_SPANNED_LEN,
    TRANSFER_HELP,
    RawRecord,
    RecordBatch,
    SMFDataError,
    distinct_ints,
)
from kneecap.smf.framing._stream import RecordStream, iter_records

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
    "MAX_GUNZIP_RATIO",
    "distinct_ints",
]

# the public classes under the name they are imported by, as when this package was one module: a
# traceback reads kneecap.smf.framing.SMFDataError (the doctests of the decoders print it), and a
# pickled batch or record names the public path, whatever module of the package defines it
for _public in (SMFDataError, RawRecord, RecordBatch, RecordStream):
    _public.__module__ = __name__
del _public
