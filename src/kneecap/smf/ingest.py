"""Ingest SMF dumps into Parquet, one file per input and table (the SMF I/O module).

Layout written under ``out_dir`` (the contract between decode and the marts, read by DuckDB
through pandas and by Spark as a Hive-partitioned Parquet dataset)::

    <table>/system=<SID>/date=<YYYY-MM-DD>/<content_sha256>.parquet
                                          rows of one system and day from one input (smf70_cpu,
                                          smf72_workload, smf30_interval, smf123_request, the
                                          RMF tables): every table with a ``system_id`` and a
                                          timestamp column (:func:`partition_columns`)
    <table>/<content_sha256>.parquet      one per input for the tables that have neither
                                          (smf_record_counts, smf_quarantine)
    _keys/<content_sha256>.npy            content keys of the records that input stored
    _manifest.jsonl                       one JSON line per ingested input
    .ingest.lock                          held while an input is being ingested

Idempotence: an input whose content SHA-256 is already in the manifest is skipped (it adds no
rows); the same dump under another name is recognised too. Inside a dump, and across dumps
ingested into the same folder, each *record* is stored once: records whose content key
(:func:`kneecap.smf.reader.record_key`) an earlier input already stored are skipped and counted
as ``duplicates`` - the same dump gzipped, or overlapping dumps, add only their new records.

Tables are written with a chunked ``pyarrow.parquet.ParquetWriter`` per partition as batches
are decoded, so memory stays flat whatever the input size (only tables with a finaliser, i.e. the
small 70.1 table, are held per file); at most :data:`MAX_OPEN_PARTITIONS` partition files of one
table are open at a time, a partition met again after its file was closed gets a further file
(``<sha256>-<n>.parquet``). Temporary files start with a dot, which Spark and the readers here
skip. Output files are written under a temporary name unique to the
process and renamed when complete, and the manifest line is appended last, so an interrupted
run leaves nothing that looks ingested: its outputs are removed when the input is ingested
again, and a manifest whose last line was torn by a crash is read without it (and cut back to
its last complete line before the next append).

Speed (#14): with two CPUs, each input is framed and checked for duplicates in a forked process
while this one decodes and writes (:func:`kneecap.smf.reader.iter_decode`, ``workers=2``), and an
input whose size no committed input has - so whose SHA-256 cannot be in the manifest - is hashed
in a thread meanwhile; its tables get their final names once the hash is known.

Concurrency: every input is ingested while holding an exclusive ``flock`` on
``.ingest.lock``, so two processes ingesting into one folder take turns per input; the second
one to reach an input sees it in the manifest and skips it.

Public API
----------
``ingest_paths(paths, out_dir, *, codepage="cp037", progress=None, workers=None) -> IngestSummary``
``IngestSummary`` / ``FileResult``
``expand_paths(paths) -> list[Path]``
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import glob
import hashlib
import json
import os
import threading
import time
import urllib.parse
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kneecap.smf import reader
from kneecap.smf.framing import RecordStream, SMFDataError

__all__ = ["ingest_paths", "IngestSummary", "FileResult", "expand_paths", "MANIFEST", "LOCK",
           "append_manifest", "locked", "parse_manifest", "read_manifest", "sha256_file",
           "partition_columns", "partition_path", "split_partitions", "table_files", "write_table",
           "scan_input", "decode_input", "InputScan", "overlaps", "manifest_entry", "summarise",
           "stored_keys"]

MANIFEST = "_manifest.jsonl"
KEYS_DIR = "_keys"
LOCK = ".ingest.lock"
COUNTS_TABLE = "smf_record_counts"
#: Hive's name for a partition whose value is null (Spark reads it back as null).
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: Partition files of one table and input open at once; a dump spanning more system-days closes
#: the least recently written one (file descriptors and writer buffers stay bounded).
MAX_OPEN_PARTITIONS = 64
QUARANTINE_TABLE = "smf_quarantine"

ProgressFn = Callable[[int, int], None]


@dataclass
class FileResult:
    """Outcome for one input file."""

    path: str
    sha256: str
    status: str  # "ingested" | "skipped" (already ingested) | "failed"
    bytes: int = 0
    records: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    quarantined: int = 0
    orphan_segments: int = 0
    duplicates: int = 0
    framing: str | None = None
    error: str | None = None
    #: What was quarantined and why, where the input's reader gives reasons per item (RMF intervals)
    quarantine_reasons: list[str] = field(default_factory=list)


@dataclass
class IngestSummary:
    """What :func:`ingest_paths` did.

    ``records_by_type`` sums record counts over the ingested files (record_type, subtype,
    records, decoded); ``quarantine`` lists every quarantined record with its reason;
    ``unknown`` counts records of types without a decoder.
    """

    files: list[FileResult]
    records_by_type: pd.DataFrame
    quarantine: pd.DataFrame
    seconds: float

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
        c = self.records_by_type
        c = c[~c["decoded"]] if len(c) else c
        return {
            (int(t), None if pd.isna(s) else int(s)): int(n)
            for t, s, n in zip(c["record_type"], c["subtype"], c["records"], strict=True)
        }

    @property
    def rows(self) -> dict[str, int]:
        """Rows written per table, over the ingested files."""
        out: dict[str, int] = {}
        for f in self.ingested:
            for k, v in f.rows.items():
                out[k] = out.get(k, 0) + v
        return out


def expand_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files named by ``paths``: files, directories (recursively, hidden files skipped), globs.

    Raises FileNotFoundError for a name that matches nothing.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[Path] = []
    for p in paths:
        s = os.fspath(p)
        path = Path(s)
        if path.is_dir():
            out.extend(sorted(
                f for f in path.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(path).parts)
            ))
        elif path.is_file():
            out.append(path)
        elif glob.has_magic(s):
            hits = sorted(Path(h) for h in glob.glob(s, recursive=True) if Path(h).is_file())
            if not hits:
                raise FileNotFoundError(f"no files match {s!r}")
            out.extend(hits)
        else:
            raise FileNotFoundError(f"no such file or directory: {s!r}")
    seen: set[Path] = set()
    unique = []
    for f in out:
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(f)
    return unique


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read 1 MiB at a time (the manifest's identity of an input)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def parse_manifest(text: str, *, path: str = MANIFEST) -> dict[str, dict[str, Any]]:
    r"""Manifest entries by SHA-256 from the text of ``_manifest.jsonl``.

    A last line that is not complete JSON is an append a crash interrupted: it is ignored (that
    input was not committed). A damaged line before the last is an error naming the line.

    Examples
    --------
    >>> sorted(parse_manifest('{"sha256": "a"}\n{"sha256": "b"}\n{"sha2'))
    ['a', 'b']
    """
    done: dict[str, dict[str, Any]] = {}
    lines = text.split("\n")
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            done[entry["sha256"]] = entry
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            if i == len(lines):  # torn last line: no newline was written after it
                break
            raise ValueError(f"{path}: line {i}: damaged manifest entry ({exc}); remove the "
                             "line and ingest its file again") from None
    return done


def read_manifest(out_dir: Path) -> dict[str, dict[str, Any]]:
    """Committed inputs of an ingest folder by SHA-256 (see :func:`parse_manifest`).

    Read it under :func:`locked` when the answer decides whether to ingest.
    """
    m = out_dir / MANIFEST
    if not m.exists():
        return {}
    return parse_manifest(m.read_text(encoding="utf-8", errors="replace"), path=str(m))


def append_manifest(out_dir: Path, entry: dict[str, Any]) -> None:
    """Append one line, first cutting a torn last line (caller holds :func:`locked`).

    Shared by SMF and RMF ingest: one manifest per folder, one writer at a time.
    """
    m = out_dir / MANIFEST
    with m.open("a+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size:
            fh.seek(max(0, size - 65536))
            tail = fh.read()
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                keep = size - len(tail) + cut + 1 if cut >= 0 else (0 if size <= 65536 else size)
                fh.truncate(keep)
        fh.seek(0, os.SEEK_END)
        fh.write((json.dumps(entry) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


@contextlib.contextmanager
def locked(out_dir: Path) -> Iterator[None]:
    """Hold the folder's exclusive ingest lock (released by the OS if the process dies).

    Every writer of an ingest folder (SMF and RMF alike) takes it around read-manifest, write
    outputs, append-manifest, so concurrent ingests take turns per input.
    """
    with (out_dir / LOCK).open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def stored_keys(out_dir: Path, done: dict[str, dict[str, Any]]) -> list[np.ndarray]:
    """Record keys of the committed inputs ``done`` names, one array per input (empty when missing)."""
    out = []
    for sha in done:
        f = out_dir / KEYS_DIR / f"{sha}.npy"
        out.append(np.load(f) if f.exists() else np.zeros(0, np.int64))
    return out


def _write_keys(out_dir: Path, sha: str, keys: list[int]) -> None:
    d = out_dir / KEYS_DIR
    d.mkdir(exist_ok=True)
    tmp = d / f"{sha}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    with tmp.open("wb") as fh:
        np.save(fh, np.asarray(keys, dtype=np.int64))
    os.replace(tmp, d / f"{sha}.npy")


def _remove_uncommitted(out_dir: Path, sha: str) -> None:
    """Outputs of an earlier, interrupted ingest of ``sha`` (no manifest line): not evidence."""
    for table_dir in out_dir.iterdir():
        if not table_dir.is_dir() or table_dir.name.startswith(("_", ".")):
            continue
        for f in table_dir.rglob(f"{sha}*.parquet"):
            if f.name == f"{sha}.parquet" or f.name.startswith(f"{sha}-"):
                f.unlink(missing_ok=True)


def partition_columns(columns: Iterable[str], dtypes: Iterable[Any] = ()) -> tuple[str, str] | None:
    """The (system, time) columns a table is partitioned by, or None for a table written whole.

    A table is partitioned when it has ``system_id`` and a timestamp: ``interval_start_at`` if
    present, else the first ``*_at`` column (SMF 123's ``zc_entry_at``). ``dtypes`` is unused
    by the rule and accepted so a caller can pass a frame's ``dtypes`` beside its columns.

    Examples
    --------
    >>> partition_columns(["system_id", "zc_exit_at", "zc_entry_at"])
    ('system_id', 'zc_exit_at')
    >>> partition_columns(["record_type", "records"]) is None
    True
    """
    columns = list(columns)
    if "system_id" not in columns:
        return None
    stamps = [c for c in columns if c.endswith("_at")]
    if not stamps:
        return None
    return "system_id", "interval_start_at" if "interval_start_at" in stamps else stamps[0]


def partition_path(system: str | None, day: str | None) -> str:
    """The Hive-style folder of one system and day, ``system=<SID>/date=<YYYY-MM-DD>``.

    The value is percent-encoded as Hive and Spark encode partition values (a system id is four
    EBCDIC characters and may hold a blank or a slash); a missing one is Hive's default partition,
    which Spark reads as null.

    Examples
    --------
    >>> partition_path("SYS A", "2026-03-01")
    'system=SYS%20A/date=2026-03-01'
    >>> partition_path(None, None)
    'system=__HIVE_DEFAULT_PARTITION__/date=__HIVE_DEFAULT_PARTITION__'
    """
    def value(v: str | None) -> str:
        return NULL_PARTITION if v is None or v == "" else urllib.parse.quote(v, safe="")

    return f"system={value(system)}/date={value(day)}"


def split_partitions(frame: pd.DataFrame, columns: tuple[str, str] | None) -> list[tuple[str, pd.DataFrame]]:
    """``frame`` cut into its system-day partitions: (relative folder, rows in their order), sorted by folder.

    ``columns`` is :func:`partition_columns`' answer; None gives the whole frame under ``""``.

    Examples
    --------
    >>> f = pd.DataFrame({"system_id": ["B", "A", "B"],
    ...                   "interval_start_at": pd.to_datetime(["2026-01-02 23:45", "2026-01-02 00:00",
    ...                                                      "2026-01-03 00:15"])})
    >>> [(path, len(rows)) for path, rows in split_partitions(f, ("system_id", "interval_start_at"))]
    [('system=A/date=2026-01-02', 1), ('system=B/date=2026-01-02', 1), ('system=B/date=2026-01-03', 1)]
    """
    if columns is None or frame.empty:
        return [("", frame)]
    system_col, time_col = columns
    # group on the raw values (vectorised), then name each group's folder once
    system = frame[system_col].astype(object).where(frame[system_col].notna(), "")
    days = pd.to_datetime(frame[time_col]).to_numpy().astype("datetime64[D]").astype(str)
    groups = frame.groupby([system.to_numpy(), days], sort=False)
    parts = [(partition_path(str(s), None if d == "NaT" else str(d)), rows) for (s, d), rows in groups]
    return sorted(parts, key=lambda part: part[0])


def table_files(table_dir: str | os.PathLike[str]) -> list[Path]:
    """Committed Parquet files of one decoded table, partitioned or not, sorted by path.

    Files and folders whose name starts with ``.`` or ``_`` (temporary files, Spark's markers)
    are not part of the table, as Spark also reads it.
    """
    root = Path(table_dir)
    if not root.is_dir():
        return []
    return sorted(f for f in root.rglob("*.parquet")
                  if not any(part.startswith((".", "_")) for part in f.relative_to(root).parts))


def _arrow(frame: pd.DataFrame, schema: pa.Schema | None = None) -> pa.Table:
    """A decoded frame as Arrow; a text column that is all None in it is typed as text, not null.

    Every input's files of a table then have one schema, which Spark needs to read the dataset
    (it takes the schema from one file), whatever columns happened to be empty in the first chunk.
    """
    table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    if schema is None:
        for i, f in enumerate(table.schema):
            if pa.types.is_null(f.type):
                table = table.set_column(i, pa.field(f.name, pa.string()), table.column(i).cast(pa.string()))
    return table


class _TableWriter:
    """Chunked Parquet writer for one table of one input, a file per system-day partition.

    It writes under temporary names until closed; the final names, ``<table>/<partition>/<sha>.parquet``, are given
    by :meth:`close` because the input's SHA-256 may still be being computed while its tables are written.
    """

    def __init__(self, out_dir: Path, table: str) -> None:
        self.dir = out_dir / table
        self.table = table
        self.schema: pa.Schema | None = None
        self.columns: tuple[str, str] | None = None
        self.open: OrderedDict[str, tuple[pq.ParquetWriter, Path]] = OrderedDict()
        self.closed: list[tuple[Path, str, int]] = []  # (temporary file, partition, its n-th file)
        self.files: dict[str, int] = {}
        self.rows = 0

    def write(self, df: pd.DataFrame) -> None:
        if df is None or len(df) == 0:
            return
        if self.schema is None:
            self.schema = _arrow(df).schema
            self.columns = partition_columns(df.columns)
        for part, rows in split_partitions(df, self.columns):
            self._writer(part).write_table(_arrow(rows, self.schema))
        self.rows += len(df)

    def _writer(self, part: str) -> pq.ParquetWriter:
        if part in self.open:
            self.open.move_to_end(part)
            return self.open[part][0]
        if len(self.open) >= MAX_OPEN_PARTITIONS:
            old, (writer, tmp) = self.open.popitem(last=False)
            writer.close()
            self.closed.append((tmp, old, self.files[old] - 1))
        folder = self.dir / part
        folder.mkdir(parents=True, exist_ok=True)
        # hidden (Spark skips it) and unique per process and writer: two ingests cannot share it
        tmp = folder / f".{self.table}.{os.getpid()}.{uuid.uuid4().hex[:8]}.parquet.tmp"
        # microseconds: Spark reads no nanosecond Parquet timestamps, and SMF's STCK times are us
        writer = pq.ParquetWriter(tmp, self.schema, coerce_timestamps="us")
        self.open[part] = (writer, tmp)
        self.files[part] = self.files.get(part, 0) + 1
        return writer

    def _close_open(self) -> None:
        for part, (writer, tmp) in self.open.items():
            writer.close()
            self.closed.append((tmp, part, self.files[part] - 1))
        self.open.clear()

    def close(self, sha: str) -> None:
        self._close_open()
        for tmp, part, n in self.closed:
            os.replace(tmp, self.dir / part / (f"{sha}.parquet" if n == 0 else f"{sha}-{n}.parquet"))

    def abort(self) -> None:
        self._close_open()
        for tmp, _, _ in self.closed:
            tmp.unlink(missing_ok=True)


def write_table(frame: pd.DataFrame, out_dir: str | os.PathLike[str], table: str, sha: str) -> int:
    """Write one input's whole table in the ingest layout (partitioned as :func:`partition_columns` says).

    What the RMF reader uses, so its tables lie as the SMF ones do. Returns the rows written.
    """
    writer = _TableWriter(Path(out_dir), table)
    try:
        writer.write(frame)
    except BaseException:
        writer.abort()
        raise
    writer.close(sha)
    return writer.rows


def _ingest_one(path: Path, sha: str | Callable[[], str], out_dir: Path, codepage: str,
                progress: ProgressFn | None, keys: reader.RecordKeys, workers: int
                ) -> tuple[FileResult, pd.DataFrame, pd.DataFrame]:
    """Decode ``path`` into its tables (caller holds the lock).

    ``sha`` is the input's SHA-256, or a function that returns it once the tables are written (computed meanwhile);
    outputs of an interrupted earlier ingest of it are removed before the new ones take their names.
    """
    writers: dict[str, _TableWriter] = {}
    held: dict[str, list[pd.DataFrame]] = {}
    finalised_inputs = {src: (out, fn) for out, (src, fn) in reader.FINALIZERS.items()}
    quarantine: list[dict[str, Any]] = []
    side: dict[str, Any] = {}

    def w(table: str) -> _TableWriter:
        if table not in writers:
            writers[table] = _TableWriter(out_dir, table)
        return writers[table]

    try:
        for chunk in reader.iter_decode(path, codepage=codepage, stream_out=side, keys=keys,
                                        workers=workers):
            quarantine.extend(chunk.quarantine)
            for table, df in chunk.tables.items():
                if table in finalised_inputs:
                    held.setdefault(table, []).append(df)
                else:
                    w(table).write(df)
            if progress is not None:
                progress(chunk.records, chunk.nbytes)
        for src, dfs in held.items():
            out, fn = finalised_inputs[src]
            w(out).write(fn(pd.concat(dfs, ignore_index=True)))
        counts = side["counts"].frame()
        q = pd.DataFrame(quarantine, columns=list(reader.QUARANTINE_COLUMNS))
        q["record_type"] = q["record_type"].astype("Int64")
        q["bytes"] = q["bytes"].astype("int64")
        w(COUNTS_TABLE).write(counts)
        w(QUARANTINE_TABLE).write(q)
        if callable(sha):
            sha = sha()
        _remove_uncommitted(out_dir, sha)
    except BaseException:
        for tw in writers.values():
            tw.abort()
        raise
    for tw in writers.values():
        tw.close(sha)
    stream = side["stream"]
    res = FileResult(
        path=str(path), sha256=str(sha), status="ingested", bytes=path.stat().st_size,
        records=stream.records,
        rows={t: tw.rows for t, tw in writers.items() if t not in (COUNTS_TABLE, QUARANTINE_TABLE)},
        quarantined=len(q), orphan_segments=stream.orphan_segments,
        duplicates=keys.duplicates, framing=stream.framing,
    )
    return res, counts, q


def _sizes(done: dict[str, dict[str, Any]]) -> set[int] | None:
    """Byte sizes of the committed inputs, or None when an entry does not say."""
    sizes = set()
    for entry in done.values():
        if not isinstance(entry.get("bytes"), int):
            return None
        sizes.add(entry["bytes"])
    return sizes


def _hash_meanwhile(path: Path) -> Callable[[], str]:
    """Start hashing ``path`` in a thread; the returned function waits for the hex digest.

    hashlib releases the GIL on large updates, so the hash runs on another CPU while the file
    is decoded; its errors are raised by the returned function.
    """
    got: dict[str, Any] = {}

    def run() -> None:
        try:
            got["sha"] = sha256_file(path)
        except BaseException as exc:  # handed to the caller by result()
            got["error"] = exc

    t = threading.Thread(target=run, name="kneecap-sha256", daemon=True)
    t.start()

    def result() -> str:
        t.join()
        if "error" in got:
            raise got["error"]
        return got["sha"]

    return result


def ingest_paths(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    codepage: str = "cp037",
    progress: ProgressFn | None = None,
    workers: int | None = None,
) -> IngestSummary:
    """Decode SMF dumps and write Parquet per table under ``out_dir`` (see module docstring).

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
    counts: list[pd.DataFrame] = []
    quarantines: list[pd.DataFrame] = []
    # the keys of every committed input, read once and then grown by each input this call
    # commits; ``absorbed`` names the inputs whose keys are in it (another process may commit
    # inputs between two of ours)
    seen: set[int] = set()
    absorbed: set[str] = set()
    workers = reader.default_workers() if workers is None else workers
    for path in expand_paths(paths):
        size = path.stat().st_size
        with locked(out):
            # read under the lock: another process may have ingested this input meanwhile
            done = read_manifest(out)
            sizes = _sizes(done)
            sha: str | Callable[[], str]
            if sizes is None or size in sizes:
                sha = sha256_file(path)  # it may be committed: know before decoding
                if sha in done:
                    files.append(FileResult(str(path), sha, "skipped", bytes=size))
                    continue
            else:
                # no committed input has its size, so none has its SHA-256 either: decode while
                # the hash is computed (the manifest cannot change, the lock is held)
                sha = _hash_meanwhile(path)
            fresh = {k: e for k, e in done.items() if k not in absorbed}
            for stored in stored_keys(out, fresh):
                seen.update(stored.tolist())
            absorbed.update(fresh)
            keys = reader.RecordKeys.sharing(seen)
            try:
                res, c, q = _ingest_one(path, sha, out, codepage, progress, keys, workers)
            except SMFDataError as exc:
                keys.forget()
                sha = sha() if callable(sha) else sha
                files.append(FileResult(str(path), sha, "failed", bytes=size, error=str(exc)))
                continue
            except BaseException:
                keys.forget()
                raise
            _write_keys(out, res.sha256, keys.added)
            append_manifest(out, manifest_entry(res, codepage))
            absorbed.add(res.sha256)  # its keys are in ``seen`` already
        files.append(res)
        counts.append(c)
        quarantines.append(q)
    return summarise(files, counts, quarantines, time.perf_counter() - t0)


def manifest_entry(res: FileResult, codepage: str) -> dict[str, Any]:
    """The manifest line of an ingested input (the same whichever engine decoded it)."""
    return {
        "sha256": res.sha256, "path": res.path, "bytes": res.bytes, "records": res.records,
        "rows": res.rows, "quarantined": res.quarantined,
        "orphan_segments": res.orphan_segments, "duplicates": res.duplicates,
        "framing": res.framing, "codepage": codepage,
        "ingested_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def summarise(files: list[FileResult], counts: list[pd.DataFrame], quarantines: list[pd.DataFrame],
              seconds: float) -> IngestSummary:
    """An :class:`IngestSummary` from the per-input results, record counts and quarantines."""
    if counts:
        allc = pd.concat(counts, ignore_index=True)
        by = (allc.groupby(["record_type", "subtype", "decoded"], dropna=False, as_index=False)
              ["records"].sum())
        by = by[list(reader.COUNT_COLUMNS)]
    else:
        by = pd.DataFrame(columns=list(reader.COUNT_COLUMNS))
    q = (pd.concat(quarantines, ignore_index=True) if quarantines
         else pd.DataFrame(columns=list(reader.QUARANTINE_COLUMNS)))
    return IngestSummary(files, by, q, seconds)


# ---- decoding one input where it is stored (Spark executors, kneecap.spark_jobs) ----------------
#
# An ingest on many machines keeps the local ingest's semantics in two passes. The first,
# :func:`scan_input` per input, hashes it and lists the content keys of its records; the driver
# then finds, in input order, which of an input's keys an earlier input or a committed one already
# holds (:func:`overlaps`); the second, :func:`decode_input` per input, decodes with exactly those
# keys dropped. Each record is therefore stored by the first input that has it, as one process
# reading the inputs in order stores it.


@dataclass(frozen=True)
class InputScan:
    """What the first pass learned of one input.

    ``keys`` holds the content keys of its records in file order, each once (None when the input
    is already committed, or failed: ``error`` says why).
    """

    path: str
    sha256: str
    bytes: int
    keys: np.ndarray | None = None
    error: str | None = None


def scan_input(path: str | os.PathLike[str], committed: frozenset[str] = frozenset()) -> InputScan:
    """Hash one input and list its records' content keys (no decoding, nothing written).

    An input whose SHA-256 is in ``committed`` is not read further; one that is not an SMF dump
    comes back with the :class:`SMFDataError` message in ``error``.
    """
    path = Path(path)
    sha, size = sha256_file(path), path.stat().st_size
    if sha in committed:
        return InputScan(str(path), sha, size)
    keys = reader.RecordKeys()
    try:
        for batch in RecordStream(path).iter_batches():
            reader.keep_mask(batch, keys)  # the check decoding makes: keys of whole-header records
    except SMFDataError as exc:
        return InputScan(str(path), sha, size, error=str(exc))
    return InputScan(str(path), sha, size, np.asarray(keys.added, dtype=np.int64))


def overlaps(stored: list[np.ndarray], scanned: list[np.ndarray]) -> list[np.ndarray]:
    """Per scanned input, in order, its keys that a stored input or an earlier scanned one holds.

    Those are the records its decode must skip for the folder to hold each record once, as the
    local ingest leaves it. Vectorised: one stable sort of every key, so memory is about 24 bytes
    per key.

    Examples
    --------
    >>> a = np.array([1, 2, 3]); b = np.array([3, 4]); c = np.array([4, 5, 1])
    >>> [o.tolist() for o in overlaps([np.array([2])], [a, b, c])]
    [[2], [3], [1, 4]]
    """
    lengths = [len(k) for k in stored] + [len(k) for k in scanned]
    owner = np.repeat(np.r_[np.full(len(stored), -1), np.arange(len(scanned))], lengths)
    keys = np.concatenate([*stored, *scanned]) if sum(lengths) else np.zeros(0, np.int64)
    order = np.argsort(keys, kind="stable")  # stable: among equal keys, the earlier input first
    sorted_keys, sorted_owner = keys[order], owner[order]
    first = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]] if len(keys) else np.zeros(0, bool)
    first_owner = sorted_owner[np.flatnonzero(first)][np.cumsum(first) - 1]
    later = sorted_owner > first_owner
    return [np.sort(sorted_keys[later & (sorted_owner == i)]) for i in range(len(scanned))]


def decode_input(path: str | os.PathLike[str], sha: str, out_dir: str | os.PathLike[str],
                 skip_keys: np.ndarray, codepage: str = "cp037"
                 ) -> tuple[FileResult, pd.DataFrame, pd.DataFrame]:
    """Decode one input into the folder's layout, skipping the records ``skip_keys`` names.

    Writes its tables and ``_keys/<sha>.npy`` but no manifest line: the caller commits it (holding
    the folder's lock). On one process, the second framing process is not started: an executor
    runs one input per core.

    Returns
    -------
    tuple
        The :class:`FileResult` (``failed`` with the message for an input that is not an SMF
        dump), its record counts and its quarantine.
    """
    path, out = Path(path), Path(out_dir)
    keys = reader.RecordKeys(skip_keys.tolist())
    try:
        res, counts, q = _ingest_one(path, sha, out, codepage, None, keys, workers=1)
    except SMFDataError as exc:
        failed = FileResult(str(path), sha, "failed", bytes=path.stat().st_size, error=str(exc))
        return failed, pd.DataFrame(columns=list(reader.COUNT_COLUMNS)), \
            pd.DataFrame(columns=list(reader.QUARANTINE_COLUMNS))
    _write_keys(out, sha, keys.added)
    return res, counts, q
