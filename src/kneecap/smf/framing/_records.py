"""What framing delivers: records, batches of records, the one data error, and the limits of SMF framing."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

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
LOOKAHEAD = MAX_EXT_BLOCK_LEN + 64

#: Bytes framing detection looks at: up to 64 KiB of junk before the first record, plus room
#: to check the block or records after it.
HEAD_BYTES = 65536 + LOOKAHEAD

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
