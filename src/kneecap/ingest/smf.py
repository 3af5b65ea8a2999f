"""Ingest SMF dumps into an ingest folder: decode with :mod:`kneecap.smf.reader`, store, commit.

Each dump is decoded by :func:`kneecap.smf.reader.iter_decode` and its tables are written one file
per input, table and system-month (:mod:`kneecap.ingest.store`), under the folder's lock, and then
committed by a manifest line (:mod:`kneecap.ingest.manifest`).

Dedup: inside a dump, and across dumps ingested into the same folder, each *record* is stored
once: records whose content key (:func:`kneecap.smf.reader.record_key`) an earlier input already
stored are skipped and counted as ``duplicates`` - the same dump gzipped, or overlapping dumps, add
only their new records. The keys each input stored are kept in ``_keys/<sha256>.npy``.

Memory stays flat whatever the input size: tables are written as batches are decoded, and only
tables with a finaliser (the small 70.1 table) are held per file.

Speed (#14): with two CPUs, each input is framed and checked for duplicates in a forked process
while this one decodes and writes (:func:`kneecap.smf.reader.iter_decode`, ``workers=2``), and an
input whose size no committed input has - so whose SHA-256 cannot be in the manifest - is hashed
in a thread meanwhile; its tables get their final names once the hash is known. Nothing here
imports pandas (0.35 s of start-up): the decoders' plain columns go to Arrow directly
(:func:`kneecap.ingest.store.arrow_table`, the same bytes as from a frame), and the summary is
kept as plain counts and rows, made DataFrames only when asked for.

Public API
----------
``ingest_paths(paths, out_dir, *, codepage="cp037", progress=None, workers=None) -> IngestSummary``
``IngestSummary`` / ``summarise`` / ``format_counts``
``ingest_one`` (one input, the caller holding the lock; :mod:`kneecap.ingest.spark` too)
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kneecap.ingest.manifest import (
    FileResult,
    HashAhead,
    append_manifest,
    committed_sizes,
    locked,
    manifest_entry,
    read_manifest,
)
from kneecap.ingest.sniff import expand_paths
from kneecap.ingest.store import (
    TableWriter,
    close_writers,
    remove_leftovers,
    remove_uncommitted,
    stored_keys,
    write_keys,
)
from kneecap.smf import reader
from kneecap.smf.framing import SMFDataError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COUNTS_TABLE", "QUARANTINE_TABLE", "CountRow", "IngestSummary", "ProgressFn", "format_counts",
           "ingest_one", "ingest_paths", "summarise"]

COUNTS_TABLE = "smf_record_counts"
QUARANTINE_TABLE = "smf_quarantine"

ProgressFn = Callable[[int, int], None]
#: One input's records of one type and subtype: (record_type, subtype or None, records, decoded).
CountRow = tuple[int, "int | None", int, bool]


def format_counts(rows: list[CountRow]) -> str:
    """``rows`` as a table, as ``DataFrame.to_string(index=False)`` prints the ``records_by_type`` frame.

    Printed without pandas (the ingest does not import it). Every column is right-aligned to its
    widest cell, a header being its name after one space; a missing subtype is ``<NA>``.

    Examples
    --------
    >>> print(format_counts([(30, 2, 69120, True), (6, None, 3, False)]))
     record_type  subtype  records  decoded
              30        2    69120     True
               6     <NA>        3    False
    """
    cells = [[f" {c}" for c in reader.COUNT_COLUMNS]]
    cells += [[str(t), "<NA>" if s is None else str(s), str(n), str(bool(d))] for t, s, n, d in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(reader.COUNT_COLUMNS))]
    return "\n".join(" ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in cells)


@dataclass
class IngestSummary:
    """What :func:`ingest_paths` did.

    ``record_counts`` sums record counts over the ingested files, as (record_type, subtype,
    records, decoded) sorted by type and subtype, and ``records_by_type`` is the same as a frame;
    ``quarantine`` lists every quarantined record with its reason (``quarantine_rows`` holds each
    input's rows); ``unknown`` counts records of types without a decoder. The frames are built on
    first use, so that an ingest that does not ask for them does not import pandas.
    """

    files: list[FileResult]
    count_rows: list[list[CountRow]]
    quarantine_rows: list[list[dict[str, Any]]]
    seconds: float

    @property
    def record_counts(self) -> list[CountRow]:
        """Records by (type, subtype, decoded), summed over the ingested files, in that order (None subtype last)."""
        total: Counter[tuple[int, int | None, bool]] = Counter()
        for rows in self.count_rows:
            for t, s, n, d in rows:
                total[(t, s, d)] += n
        order = sorted(total, key=lambda k: (k[0], k[1] is None, k[1] or 0, k[2]))
        return [(t, s, total[(t, s, d)], d) for t, s, d in order]

    @property
    def records_by_type(self) -> pd.DataFrame:
        """:attr:`record_counts` as a frame (record_type, subtype, records, decoded)."""
        return reader.counts_frame(self.record_counts)

    @property
    def quarantine(self) -> pd.DataFrame:
        """Every quarantined record with its reason (file, record_no, offset, bytes, record_type, reason)."""
        import pandas as pd

        if not self.quarantine_rows:
            return pd.DataFrame(columns=list(reader.QUARANTINE_COLUMNS))
        return pd.concat([reader.quarantine_frame(rows) for rows in self.quarantine_rows], ignore_index=True)

    @property
    def quarantined(self) -> int:
        """Records quarantined, over the ingested files."""
        return sum(len(rows) for rows in self.quarantine_rows)

    @property
    def ingested(self) -> list[FileResult]:
        """Files ingested in this run."""
        return [f for f in self.files if f.status == "ingested"]

    @property
    def skipped(self) -> list[FileResult]:
        """Files skipped because they were already ingested."""
        return [f for f in self.files if f.status == "skipped"]

    @property
    def failed(self) -> list[FileResult]:
        """Files that could not be ingested."""
        return [f for f in self.files if f.status == "failed"]

    @property
    def mb(self) -> float:
        """Megabytes (10^6 bytes) of the ingested files."""
        return sum(f.bytes for f in self.ingested) / 1e6

    @property
    def mb_per_s(self) -> float:
        """Ingest throughput, MB per second (NaN when no time was measured)."""
        return self.mb / self.seconds if self.seconds > 0 else float("nan")

    @property
    def unknown(self) -> dict[tuple[int, int | None], int]:
        """Record counts of (type, subtype) without a decoder, over the ingested files."""
        return {(t, s): n for t, s, n, decoded in self.record_counts if not decoded}

    @property
    def rows(self) -> dict[str, int]:
        """Rows written per table, over the ingested files."""
        out: dict[str, int] = {}
        for f in self.ingested:
            for k, v in f.rows.items():
                out[k] = out.get(k, 0) + v
        return out


def ingest_one(path: Path, sha: str | Callable[[], str], out_dir: Path, codepage: str,
               progress: ProgressFn | None, keys: reader.RecordKeys, workers: int
               ) -> tuple[FileResult, list[CountRow], list[dict[str, Any]]]:
    """Decode ``path`` into its tables in ``out_dir`` (the caller holds the lock and commits it).

    ``sha`` is the input's SHA-256, or a function that returns it once the tables are written (computed meanwhile);
    outputs of an interrupted earlier ingest of it are removed before the new ones take their names. Records
    whose key is in ``keys`` are skipped; the keys this input stored are added to it (``keys.added``), for
    the caller to write with :func:`kneecap.ingest.store.write_keys`. An input that is not an SMF dump
    raises :class:`kneecap.smf.framing.SMFDataError` and leaves no table file.

    Returns
    -------
    tuple
        The :class:`kneecap.ingest.manifest.FileResult`, the input's record counts (:data:`CountRow`) and its
        quarantine rows (:data:`kneecap.smf.reader.QUARANTINE_COLUMNS`).
    """
    writers: dict[str, TableWriter] = {}
    held: dict[str, list[Any]] = {}
    finalised_inputs = {src: out for out, (src, _) in reader.FINALIZERS.items()}
    quarantine: list[dict[str, Any]] = []
    side: dict[str, Any] = {}

    def w(table: str) -> TableWriter:
        if table not in writers:
            writers[table] = TableWriter(out_dir, table)
        return writers[table]

    try:
        for chunk in reader.iter_decode(path, codepage=codepage, stream_out=side, keys=keys,
                                        workers=workers, frames=False):
            quarantine.extend(chunk.quarantine)
            for table, df in chunk.tables.items():
                if table in finalised_inputs:
                    held.setdefault(table, []).append(df)
                else:
                    w(table).write(df)
            if progress is not None:
                progress(chunk.records, chunk.nbytes)
        for src, parts in held.items():
            w(finalised_inputs[src]).write(_finalise(finalised_inputs[src], reader.concat_tables(parts)))
        counts: list[CountRow] = side["counts"].rows()
        w(COUNTS_TABLE).write({
            "record_type": np.array([r[0] for r in counts], dtype=np.int64),
            "subtype": [r[1] for r in counts],  # a list of int or None: pandas' Int64, as the frame had it
            "records": np.array([r[2] for r in counts], dtype=np.int64),
            "decoded": np.array([r[3] for r in counts], dtype=bool),
        })
        if quarantine:  # rare (damaged input): the frame's own conversion, as before
            w(QUARANTINE_TABLE).write(reader.quarantine_frame(quarantine))
        if callable(sha):
            sha = sha()
        remove_uncommitted(out_dir, sha)
    except BaseException:
        for tw in writers.values():
            tw.abort()
        raise
    close_writers(writers.values(), sha)
    stream = side["stream"]
    res = FileResult(
        path=str(path), sha256=str(sha), status="ingested", bytes=path.stat().st_size,
        records=stream.records,
        rows={t: tw.rows for t, tw in writers.items() if t not in (COUNTS_TABLE, QUARANTINE_TABLE)},
        quarantined=len(quarantine), orphan_segments=stream.orphan_segments,
        duplicates=keys.duplicates, framing=stream.framing,
    )
    return res, counts, quarantine


def _finalise(table: str, parts: Any) -> Any:
    """The finaliser of ``table`` applied to its whole input table.

    On plain columns where one is registered for them (:data:`kneecap.smf.reader.COLUMN_FINALIZERS`), else on a
    frame.
    """
    if isinstance(parts, dict) and table in reader.COLUMN_FINALIZERS:
        return reader.COLUMN_FINALIZERS[table][1](parts)
    import pandas as pd

    frame = parts if isinstance(parts, pd.DataFrame) else pd.DataFrame(parts)
    return reader.FINALIZERS[table][1](frame)


def ingest_paths(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    codepage: str = "cp037",
    progress: ProgressFn | None = None,
    workers: int | None = None,
    hashes: HashAhead | None = None,
) -> IngestSummary:
    """Decode SMF dumps and write Parquet per table under ``out_dir`` (see the module docstring).

    Parameters
    ----------
    paths : path, glob or iterable of them
        Files, directories (searched recursively) or glob patterns.
    out_dir : path
        Output root; created if missing.
    codepage : str
        EBCDIC code page of the text fields.
    progress : callable, optional
        ``progress(records, bytes)`` called after every decoded batch with the records and input
        bytes of that batch (increments, not totals) - e.g. to advance a progress bar.
    workers : int, optional
        Processes per input: 2 frames in a forked process while this one decodes, 1 does all
        here; default :func:`kneecap.smf.reader.default_workers` (2 on a machine with two CPUs).
    hashes : HashAhead, optional
        The inputs' SHA-256 already under way (``kneecap ingest`` starts it before importing the
        decoders); by default it is started here for the files ``paths`` names.

    Returns
    -------
    IngestSummary
        Records already stored in ``out_dir`` (by this or an earlier ingest) are not stored
        again; ``FileResult.duplicates`` counts them. A file that is not an SMF dump (e.g. a plain
        binary FTP without RDWs) is reported as ``failed`` with the :class:`SMFDataError` message;
        the other files are still ingested.
    """
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: list[FileResult] = []
    counts: list[list[CountRow]] = []
    quarantines: list[list[dict[str, Any]]] = []
    # the keys of every committed input, read once and then grown by each input this call
    # commits; ``absorbed`` names the inputs whose keys are in it (another process may commit
    # inputs between two of ours)
    seen: set[int] = set()
    absorbed: set[str] = set()
    workers = reader.default_workers() if workers is None else workers
    inputs = expand_paths(paths)
    ahead = HashAhead(inputs) if hashes is None else hashes
    swept = False
    for path in inputs:
        size = path.stat().st_size
        with locked(out):
            # read under the lock: another process may have ingested this input meanwhile
            done = read_manifest(out)
            if not swept:  # once a run: what an ingest killed before its commit left is not evidence
                remove_leftovers(out, done)
                swept = True
            sizes = committed_sizes(done)
            # no committed input of another size can have its SHA-256: then decode while the hash
            # is computed (the manifest cannot change, the lock is held)
            sha: str | Callable[[], str] = ahead.result(path)
            if sizes is None or size in sizes:
                sha = ahead.result(path)()  # it may be committed: know before decoding
                if sha in done:
                    files.append(FileResult(str(path), sha, "skipped", bytes=size))
                    continue
            fresh = {k: e for k, e in done.items() if k not in absorbed}
            for stored in stored_keys(out, fresh):
                seen.update(stored.tolist())
            absorbed.update(fresh)
            keys = reader.RecordKeys.sharing(seen)
            try:
                res, c, q = ingest_one(path, sha, out, codepage, progress, keys, workers)
            except SMFDataError as exc:
                keys.forget()
                sha = sha() if callable(sha) else sha
                files.append(FileResult(str(path), sha, "failed", bytes=size, error=str(exc)))
                continue
            except BaseException:
                keys.forget()
                ahead.close()
                raise
            write_keys(out, res.sha256, keys.added)
            append_manifest(out, manifest_entry(res, codepage))
            absorbed.add(res.sha256)  # its keys are in ``seen`` already
        files.append(res)
        counts.append(c)
        quarantines.append(q)
    return summarise(files, counts, quarantines, time.perf_counter() - t0)


def summarise(files: list[FileResult], counts: list[list[CountRow]], quarantines: list[list[dict[str, Any]]],
              seconds: float) -> IngestSummary:
    """An :class:`IngestSummary` from the per-input results, record counts and quarantine rows (``ingest_one``'s)."""
    return IngestSummary(files, counts, quarantines, seconds)
