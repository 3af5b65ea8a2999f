"""The ingest folder's store: content-addressed, partitioned Parquet and the keys for dedup.

Layout written under an ingest folder (the contract between decode and the marts, read by DuckDB
through pandas and by Spark as a Hive-partitioned Parquet dataset)::

    <table>/system=<SID>/date=<YYYY-MM-DD>/<content_sha256>.parquet
                                          rows of one system and day from one input (smf70_cpu,
                                          smf72_workload, smf30_interval, smf123_request, the
                                          RMF tables): every table with a ``system_id`` and a
                                          timestamp column (:func:`partition_columns`)
    <table>/<content_sha256>.parquet      one per input for the tables that have neither
                                          (smf_record_counts, smf_quarantine, rmf_quarantine)
    _keys/<content_sha256>.npy            content keys of the records that input stored

(the manifest and the lock beside them are :mod:`kneecap.ingest.manifest`'s).

Tables are written with a chunked ``pyarrow.parquet.ParquetWriter`` per partition as batches
are decoded (:class:`TableWriter`), so memory stays flat whatever the input size; at most
:data:`MAX_OPEN_PARTITIONS` partition files of one table are open at a time, a partition met again
after its file was closed gets a further file (``<sha256>-<n>.parquet``). Temporary files start
with a dot, which Spark and :func:`table_files` skip. Output files are written under a temporary
name unique to the process and writer and renamed when complete, so an interrupted ingest leaves
nothing that looks stored; what it did rename before its manifest line was written is removed by
:func:`remove_uncommitted` when the input is ingested again.

This is the only kneecap module that writes Parquet from decoded frames: the decoders
(:mod:`kneecap.smf`, :mod:`kneecap.rmf`) return frames and write nothing.
"""

from __future__ import annotations

import os
import urllib.parse
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["KEYS_DIR", "MAX_OPEN_PARTITIONS", "NULL_PARTITION", "TableWriter", "partition_columns",
           "partition_path", "remove_uncommitted", "split_partitions", "stored_keys", "table_files",
           "write_keys", "write_table"]

KEYS_DIR = "_keys"
#: Hive's name for a partition whose value is null (Spark reads it back as null).
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: Partition files of one table and input open at once; a dump spanning more system-days closes
#: the least recently written one (file descriptors and writer buffers stay bounded).
MAX_OPEN_PARTITIONS = 64


def stored_keys(out_dir: Path, done: dict[str, dict[str, Any]]) -> list[np.ndarray]:
    """Record keys of the committed inputs ``done`` names, one array per input (empty when missing)."""
    out = []
    for sha in done:
        f = out_dir / KEYS_DIR / f"{sha}.npy"
        out.append(np.load(f) if f.exists() else np.zeros(0, np.int64))
    return out


def write_keys(out_dir: Path, sha: str, keys: list[int]) -> None:
    """Store the content keys of the records input ``sha`` stored, as ``_keys/<sha>.npy`` (renamed when complete)."""
    d = out_dir / KEYS_DIR
    d.mkdir(exist_ok=True)
    tmp = d / f"{sha}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    with tmp.open("wb") as fh:
        np.save(fh, np.asarray(keys, dtype=np.int64))
    os.replace(tmp, d / f"{sha}.npy")


def remove_uncommitted(out_dir: Path, sha: str) -> None:
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


class TableWriter:
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
        """Append ``df``'s rows to their partitions' files (the first frame fixes the schema)."""
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
        """Close every file and give it its final name, ``<partition>/<sha>[-<n>].parquet``."""
        self._close_open()
        for tmp, part, n in self.closed:
            os.replace(tmp, self.dir / part / (f"{sha}.parquet" if n == 0 else f"{sha}-{n}.parquet"))

    def abort(self) -> None:
        """Close every file and remove it: nothing of this table and input is stored."""
        self._close_open()
        for tmp, _, _ in self.closed:
            tmp.unlink(missing_ok=True)


def write_table(frame: pd.DataFrame, out_dir: str | os.PathLike[str], table: str, sha: str) -> int:
    """Write one input's whole table in the ingest layout (partitioned as :func:`partition_columns` says).

    What the RMF ingest (:mod:`kneecap.ingest.rmf`) uses, so its tables lie as the SMF ones do. Returns the
    rows written.
    """
    writer = TableWriter(Path(out_dir), table)
    try:
        writer.write(frame)
    except BaseException:
        writer.abort()
        raise
    writer.close(sha)
    return writer.rows
