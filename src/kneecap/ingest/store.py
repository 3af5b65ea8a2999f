"""The ingest folder's store: content-addressed, partitioned Parquet and the keys for dedup.

Layout written under an ingest folder (the contract between decode and the marts, read by DuckDB
through pandas and by Spark as a Hive-partitioned Parquet dataset)::

    <table>/system=<SID>/month=<YYYY-MM>/<content_sha256>.parquet
                                          rows of one system and month from one input (smf70_cpu,
                                          smf72_workload, smf30_interval, smf123_request, the
                                          RMF tables): every table with a ``system_id`` and a
                                          timestamp column (:func:`partition_columns`)
    <table>/<content_sha256>.parquet      one per input for the tables that have neither
                                          (smf_record_counts, smf_quarantine, rmf_quarantine)
    _keys/<content_sha256>.npy            content keys of the records that input stored

(the manifest and the lock beside them are :mod:`kneecap.ingest.manifest`'s).

Partitions are months, not days: the number of files grows with the months a dump spans, not its
days, so sparse data cannot explode it (one record a day over 35 years made 12,697 files, one a
day; by month that is 420 per table and system), and a month of 15-minute intervals is still a
few MB. Folders an older kneecap wrote by day (``date=<YYYY-MM-DD>``) are read as they are: every
reader lists a table's files recursively (:func:`table_files`), and neither DuckDB's path nor
Spark's (:func:`kneecap.spark_engine.read_decoded`) takes a value from the folder names, so a
folder holding both layouts (an old store ingested into again) reads whole. Nothing is migrated.

Tables are written with a chunked ``pyarrow.parquet.ParquetWriter`` per partition as batches
are decoded (:class:`TableWriter`), so memory stays flat whatever the input size; at most
:data:`MAX_OPEN_PARTITIONS` partition files of one table are open at a time, a partition met again
after its file was closed gets a further file (``<sha256>-<n>.parquet``). Temporary files start
with a dot, which Spark and :func:`table_files` skip.

Commit: an input is stored when its manifest line is written (:mod:`kneecap.ingest.manifest`), and
not before. Its files are written under a temporary name unique to the process and writer,
flushed to disk (``fsync``) and renamed to their final names (an atomic ``rename`` each, the
folders then flushed too), its keys likewise, and only then is its manifest line appended, so the
line never names a file that could be missing after a crash. A kill between the first rename and
the manifest line leaves final-named files of an input the manifest does not name: readers do not
see them (:func:`table_files` lists only the files of committed inputs), and the next ingest into
the folder removes them and every temporary file of a dead run (:func:`remove_leftovers`, under
the folder's lock: a live ingest writes only while it holds the lock, so what is uncommitted when
the lock is taken was left by one that died) and ingests the input again.

This is the only kneecap module that writes Parquet from decoded tables: the decoders
(:mod:`kneecap.smf`, :mod:`kneecap.rmf`) return frames or plain columns and write nothing.
A table comes as a DataFrame or as plain columns (:data:`Columns`, what the SMF ingest hands
over so that ``kneecap ingest`` need not import pandas, 0.35 s of its start-up); both give the
same Arrow schema, pandas metadata included (:func:`arrow_table`), so the files are byte for
byte the same.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import urllib.parse
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from kneecap.ingest.manifest import LOCK, MANIFEST, read_manifest
from kneecap.smf.framing import distinct_ints

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
else:
    class _OnFirstUse:
        """A module imported when one of its names is first read.

        ``kneecap ingest`` forks its framing process once the input is open; pyarrow costs
        about 50 ms of imports that the framing process does not need,
        so they load in the parent after the fork, beside the framing, not before it.
        """

        def __init__(self, name: str) -> None:
            self._name = name
            self._module: ModuleType | None = None

        def __getattr__(self, attr: str) -> Any:
            if self._module is None:
                self._module = importlib.import_module(self._name)
            return getattr(self._module, attr)

    pa = _OnFirstUse("pyarrow")
    pq = _OnFirstUse("pyarrow.parquet")

__all__ = ["KEYS_DIR", "MAX_OPEN_PARTITIONS", "NULL_PARTITION", "PARTITION_KEY", "PARTITION_UNIT", "Columns",
           "TableWriter", "arrow_table", "close_writers", "committed_inputs", "fsync_dir", "fsync_file", "fsync_many",
           "is_leftover", "partition_columns", "partition_path", "remove_leftovers", "remove_uncommitted",
           "split_partitions", "stored_keys", "stored_sha", "table_files", "write_keys", "write_table"]

#: A decoded table as plain columns: name -> equal-length numpy arrays, text as object arrays of
#: str or None (what :func:`kneecap.smf.reader.iter_decode` gives with ``frames=False``).
Columns = Mapping[str, np.ndarray]

KEYS_DIR = "_keys"
#: Hive's name for a partition whose value is null (Spark reads it back as null).
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
#: Partition files of one table and input open at once; a dump spanning more system-months closes
#: the least recently written one (file descriptors and writer buffers stay bounded).
MAX_OPEN_PARTITIONS = 64
#: The partition folders' key and the numpy unit of its value: a month, ``month=<YYYY-MM>``. An
#: older kneecap wrote days (``date``, ``D``); ``benchmarks/bench_partitions.py`` sets that back to
#: compare the two layouts in one run.
PARTITION_KEY, PARTITION_UNIT = "month", "M"
#: None as a numpy scalar, to find the None values of an object array in one vectorised comparison.
_NONE = np.asarray(None, dtype=object)


def stored_keys(out_dir: Path, done: dict[str, dict[str, Any]]) -> list[np.ndarray]:
    """Record keys of the committed inputs ``done`` names, one array per input (empty when missing)."""
    out = []
    for sha in done:
        f = out_dir / KEYS_DIR / f"{sha}.npy"
        out.append(np.load(f) if f.exists() else np.zeros(0, np.int64))
    return out


def fsync_file(path: str | os.PathLike[str]) -> None:
    """Flush a written file's bytes to disk (before it is renamed into place)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush a folder's entries to disk (after files were renamed into it), where the OS allows it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:  # a platform or file system without directory descriptors: nothing to flush
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a folder; the renames are still atomic
    finally:
        os.close(fd)


def fsync_many(files: Iterable[str | os.PathLike[str]], folders: Iterable[str | os.PathLike[str]] = ()) -> None:
    """:func:`fsync_file` each of ``files``, then :func:`fsync_dir` each of ``folders``, several at once.

    One ``fsync`` after another waits for one journal commit each (ext4: 77-98 ms for 24 files of
    400 KB on the 2-core test machine); issued together from threads (``os.fsync`` releases the
    GIL) the file system commits them in one go (6-20 ms). Files before folders: a folder's entry
    must not reach the disk before the bytes it names.
    """
    for flush, items in ((fsync_file, list(files)), (fsync_dir, list(folders))):
        if len(items) <= 1:
            for item in items:
                flush(item)
            continue
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(16, len(items)), thread_name_prefix="kneecap-fsync") as pool:
            list(pool.map(flush, items))  # list(): an error of any of them is raised here


def write_keys(out_dir: Path, sha: str, keys: list[int]) -> None:
    """Store the content keys of the records input ``sha`` stored, as ``_keys/<sha>.npy`` (renamed when complete)."""
    d = out_dir / KEYS_DIR
    d.mkdir(exist_ok=True)
    tmp = d / f"{sha}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    with tmp.open("wb") as fh:
        np.save(fh, np.asarray(keys, dtype=np.int64))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, d / f"{sha}.npy")
    fsync_dir(d)


#: The name of a stored file of one input: its SHA-256, a further file's number, the suffix.
_STORED = re.compile(r"(?P<sha>[0-9a-f]{64})(?:-\d+)?\.(?:parquet|npy)")
#: A temporary file of a writer: :class:`TableWriter`'s (hidden, ``.tmp``) or :func:`write_keys`'.
_TEMPORARY = re.compile(r"\..*\.tmp|[0-9a-f]{64}\.\d+\.[0-9a-f]{8}\.tmp")


def stored_sha(name: str) -> str | None:
    """The input SHA-256 a stored file's name carries, or None for a name the store does not give.

    Examples
    --------
    >>> stored_sha("0" * 64 + "-2.parquet") == "0" * 64
    True
    >>> stored_sha("notes.parquet") is None
    True
    """
    m = _STORED.fullmatch(name)
    return m.group("sha") if m else None


def is_leftover(name: str, committed: set[str] | dict[str, Any]) -> bool:
    """Whether a file named ``name`` in a table folder or ``_keys`` is what a dead ingest left.

    That is a writer's temporary file, or a stored file of an input ``committed`` does not name (its
    files were renamed, its manifest line not written). Files of other names are not the ingest's
    and are left alone.

    Examples
    --------
    >>> sha = "a" * 64
    >>> [is_leftover(n, {sha}) for n in (f"{sha}.parquet", "b" * 64 + ".parquet", ".t.1.ab.parquet.tmp", "x.csv")]
    [False, True, True, False]
    """
    if _TEMPORARY.fullmatch(name):
        return True
    sha = stored_sha(name)
    return sha is not None and sha not in committed


def remove_leftovers(out_dir: Path, done: dict[str, dict[str, Any]]) -> list[Path]:
    """Remove what dead ingests left in ``out_dir`` (:func:`is_leftover`); the caller holds the lock.

    ``done`` is the manifest as read under that lock. Folders emptied by the removal are removed too
    (an ingest makes a partition's folder only to write into it). Returns the files removed.
    """
    removed: list[Path] = []
    for top in sorted(out_dir.iterdir()):
        if not top.is_dir() or top.name.startswith("."):
            continue
        if top.name.startswith("_") and top.name != KEYS_DIR:
            continue
        for f in sorted(top.rglob("*")):
            if f.is_file() and is_leftover(f.name, done):
                f.unlink(missing_ok=True)
                removed.append(f)
        for folder in sorted((d for d in top.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
            if not any(folder.iterdir()):
                folder.rmdir()
    return removed


def committed_inputs(out_dir: str | os.PathLike[str]) -> set[str] | None:
    """SHA-256 of the inputs ``out_dir``'s manifest commits; None for a folder no ingest writes to.

    A folder an ingest writes to has its lock file or its manifest (a first ingest killed before
    its first commit leaves the lock and no manifest: nothing in it is committed). Parquet folders
    written otherwise (e.g. by :class:`TableWriter` alone) have neither and are read whole.
    """
    out = Path(out_dir)
    if not (out / MANIFEST).exists() and not (out / LOCK).exists():
        return None
    return set(read_manifest(out))


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


def partition_path(system: str | None, month: str | None) -> str:
    """The Hive-style folder of one system and month, ``system=<SID>/month=<YYYY-MM>``.

    The value is percent-encoded as Hive and Spark encode partition values (a system id is four
    EBCDIC characters and may hold a blank or a slash); a missing one is Hive's default partition,
    which Spark reads as null.

    Examples
    --------
    >>> partition_path("SYS A", "2026-03")
    'system=SYS%20A/month=2026-03'
    >>> partition_path(None, None)
    'system=__HIVE_DEFAULT_PARTITION__/month=__HIVE_DEFAULT_PARTITION__'
    """
    def value(v: str | None) -> str:
        return NULL_PARTITION if v is None or v == "" else urllib.parse.quote(v, safe="")

    return f"system={value(system)}/{PARTITION_KEY}={value(month)}"


def split_partitions(frame: pd.DataFrame, columns: tuple[str, str] | None) -> list[tuple[str, pd.DataFrame]]:
    """``frame`` cut into its system-month partitions: (relative folder, rows in their order), sorted by folder.

    ``columns`` is :func:`partition_columns`' answer; None gives the whole frame under ``""``.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"system_id": ["B", "A", "B"],
    ...                   "interval_start_at": pd.to_datetime(["2026-01-31 23:45", "2026-01-02 00:00",
    ...                                                      "2026-02-01 00:15"])})
    >>> [(path, len(rows)) for path, rows in split_partitions(f, ("system_id", "interval_start_at"))]
    [('system=A/month=2026-01', 1), ('system=B/month=2026-01', 1), ('system=B/month=2026-02', 1)]
    """
    if columns is None or frame.empty:
        return [("", frame)]
    import pandas as pd  # only for frames: the SMF ingest hands over plain columns
    system_col, time_col = columns
    # group on the raw values (vectorised), then name each group's folder once
    system = frame[system_col].astype(object).where(frame[system_col].notna(), "")
    months = pd.to_datetime(frame[time_col]).to_numpy().astype(f"datetime64[{PARTITION_UNIT}]").astype(str)
    groups = frame.groupby([system.to_numpy(), months], sort=False)
    parts = [(partition_path(str(s), None if d == "NaT" else str(d)), rows) for (s, d), rows in groups]
    return sorted(parts, key=lambda part: part[0])


def column_partitions(table: Columns, columns: tuple[str, str] | None) -> list[tuple[str, np.ndarray | None]]:
    """:func:`split_partitions` for plain columns: (relative folder, row numbers in order), sorted by folder.

    The row numbers are None when every row lies in one partition (no copy needed); a missing system id is
    Hive's default partition, as in :func:`split_partitions`.

    Examples
    --------
    >>> t = {"system_id": np.array(["B", "A", "B"], dtype=object),
    ...      "interval_start_at": np.array(["2026-01-31T23:45", "2026-01-02", "2026-02-01T00:15"], "datetime64[us]")}
    >>> [(path, rows.tolist()) for path, rows in column_partitions(t, ("system_id", "interval_start_at"))]
    [('system=A/month=2026-01', [1]), ('system=B/month=2026-01', [0]), ('system=B/month=2026-02', [2])]
    """
    if columns is None:
        return [("", None)]
    system_col, time_col = columns
    system = np.asarray(table[system_col], dtype=object)
    missing = np.equal(system, _NONE) | (system != system)  # None, or NaN as pandas reads it: no system
    if missing.any():
        system = np.where(missing, "", system)
    days = np.asarray(table[time_col]).astype("datetime64[us]").astype("datetime64[D]")
    if system.size and (system == system[0]).all():  # one system, as in nearly every dump: no sort of text
        systems, system_no = system[:1], np.zeros(system.size, dtype=np.int64)
    else:
        systems, system_no = np.unique(system, return_inverse=True)
    # the month of each distinct day, not of each row: a conversion to months costs 4x one to days
    day_values, day_no = np.unique(days, return_inverse=True)
    month_values, month_of_day = np.unique(day_values.astype(f"datetime64[{PARTITION_UNIT}]"), return_inverse=True)
    month_no = month_of_day[day_no]
    group = system_no.astype(np.int64) * month_values.size + month_no
    found = distinct_ints(group)
    parts = []
    for g in found.tolist():
        sys_value, month = systems[g // month_values.size], month_values[g % month_values.size]
        path = partition_path(str(sys_value), None if np.isnat(month) else str(month))
        parts.append((path, None if found.size == 1 else np.flatnonzero(group == g)))
    return sorted(parts, key=lambda part: part[0])


def table_files(table_dir: str | os.PathLike[str]) -> list[Path]:
    """Committed Parquet files of one decoded table, partitioned or not, sorted by path.

    Files and folders whose name starts with ``.`` or ``_`` (temporary files, Spark's markers)
    are not part of the table, as Spark also reads it. In an ingest folder (the table folder's
    parent, :func:`committed_inputs`) only the files of inputs its manifest commits are: a file a
    killed ingest renamed before writing its manifest line is not evidence.
    """
    root = Path(table_dir)
    if not root.is_dir():
        return []
    committed = committed_inputs(root.parent)
    return sorted(f for f in root.rglob("*.parquet")
                  if not any(part.startswith((".", "_")) for part in f.relative_to(root).parts)
                  and (committed is None or stored_sha(f.name) in committed))


def _arrow(frame: pd.DataFrame, schema: pa.Schema | None = None) -> pa.Table:
    """A decoded frame as Arrow; a text column that is all None in it is typed as text, not null.

    Every input's files of a table then have one schema, which Spark needs to read the dataset
    (it takes the schema from one file), whatever columns happened to be empty in the first chunk.
    """
    import pandas as pd  # noqa: F401 - pyarrow's pandas conversion needs it; only frames come here

    table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    if schema is None:
        for i, f in enumerate(table.schema):
            if pa.types.is_null(f.type):
                table = table.set_column(i, pa.field(f.name, pa.string()), table.column(i).cast(pa.string()))
    return table


#: The name pandas' Arrow conversion gives a column's Arrow type in its metadata (pyarrow's
#: ``get_logical_type``) for the types plain columns are converted to.
_LOGICAL_TYPES = {"null": "empty", "bool": "bool", "double": "float64", "float": "float32",
                  "large_string": "object", "string": "unicode"}


def _logical_type(arrow_type: pa.DataType) -> str | None:
    # keyed by the type's name, not the type: building pyarrow types at import would import it
    name = str(arrow_type)
    if name in _LOGICAL_TYPES:
        return _LOGICAL_TYPES[name]
    if pa.types.is_integer(arrow_type):
        return str(arrow_type)  # int64, uint8, ...: pandas names them as Arrow does
    if pa.types.is_timestamp(arrow_type) and arrow_type.tz is None:
        return "datetime"
    return None


def _pandas_version() -> str:
    """The installed pandas' version, read from its distribution (importing pandas costs 0.35 s).

    The ``Version`` field of the one ``pandas-*.dist-info/METADATA`` beside the pandas package, as
    ``importlib.metadata.version`` reads it; importing ``importlib.metadata`` (email parsing and
    more) costs about 30 ms of CPU in ``kneecap ingest``. Where that is not one file, it answers.
    """
    import importlib.util

    spec = importlib.util.find_spec("pandas")
    if spec is not None and spec.origin:
        found = list(Path(spec.origin).parent.parent.glob("pandas-*.dist-info/METADATA"))
        if len(found) == 1:
            with found[0].open(encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if not line.strip():
                        break  # the header ends at the first blank line
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
    import importlib.metadata

    return importlib.metadata.version("pandas")


def _validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    """Arrow's validity bitmap of ``valid`` (None when every value is there) and the null count."""
    nulls = int(valid.size - np.count_nonzero(valid))
    return (pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None), nulls


def _text_array(values: np.ndarray, arrow_type: pa.DataType) -> pa.Array | None:
    """An object array of str or None as an Arrow text array; None if it holds anything else.

    Built from buffers: ``pa.array`` asks pandas whether a numpy array is a Series, which imports it (0.35 s).
    """
    items = values.tolist()
    try:
        joined = "".join(items)
        valid = None
    except TypeError:  # None (or not text) among them
        valid = ~np.equal(values, _NONE)
        if not all(isinstance(v, str) for v, ok in zip(items, valid.tolist(), strict=True) if ok):
            return None
        items = [v if ok else "" for v, ok in zip(items, valid.tolist(), strict=True)]
        joined = "".join(items)
    data = joined.encode("utf-8")
    # byte lengths: the characters' count when all are ASCII (the usual case), else each one encoded
    sizes = (np.fromiter(map(len, items), dtype=np.int64, count=len(items)) if len(data) == len(joined)
             else np.fromiter((len(v.encode("utf-8")) for v in items), dtype=np.int64, count=len(items)))
    offset_type = np.int64 if arrow_type == pa.large_string() else np.int32
    offsets = np.zeros(len(items) + 1, dtype=offset_type)
    np.cumsum(sizes, out=offsets[1:])
    bitmap, nulls = _validity(valid) if valid is not None else (None, 0)
    return pa.Array.from_buffers(arrow_type, len(items), [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)],
                                 null_count=nulls)


def _numeric_array(values: np.ndarray, arrow_type: pa.DataType | None) -> pa.Array | None:
    """A numeric, bool or datetime64 array as Arrow, NaN and NaT as nulls (as pandas' conversion makes them).

    From buffers, for the reason :func:`_text_array` gives; None for a dtype that is not the target type's.
    """
    kind = values.dtype.kind
    own = pa.timestamp(np.datetime_data(values.dtype)[0]) if kind == "M" else pa.from_numpy_dtype(values.dtype)
    if arrow_type is not None and arrow_type != own:
        return None  # a conversion: pandas' rules decide
    values = np.ascontiguousarray(values)
    if kind == "f":
        bitmap, nulls = _validity(~np.isnan(values))
    elif kind == "M":
        bitmap, nulls = _validity(~np.isnat(values))
    else:
        bitmap, nulls = None, 0
    data = np.packbits(values, bitorder="little") if kind == "b" else values
    return pa.Array.from_buffers(own, values.size, [bitmap, pa.py_buffer(data)], null_count=nulls)


def _plain_array(values: Any, arrow_type: pa.DataType | None) -> tuple[pa.Array, str] | None:
    """One plain column as Arrow, with the dtype name pandas would give it; None for a kind not handled here."""
    if isinstance(values, list):  # ints or None: pandas' nullable Int64, as the record counts' subtype
        if not all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
            return None
        if arrow_type not in (None, pa.int64()):
            return None
        present = np.array([v is not None for v in values], dtype=bool)
        ints = np.array([0 if v is None else v for v in values], dtype=np.int64)
        bitmap, nulls = _validity(present)
        return pa.Array.from_buffers(pa.int64(), ints.size, [bitmap, pa.py_buffer(ints)], null_count=nulls), "Int64"
    values = np.asarray(values)
    kind = values.dtype.kind
    if kind == "U":
        values = values.astype(object)
        kind = "O"
    if kind == "O":
        if arrow_type is not None and arrow_type not in (pa.large_string(), pa.string()):
            return None
        arr = _text_array(values, arrow_type or pa.large_string())
        if arr is None:
            return None  # not text: pandas decides
        if arrow_type is None and arr.null_count == len(arr):
            return pa.nulls(len(arr)), "object"  # pandas keeps an all-None column as object, Arrow's null type
        return arr, "str"  # pandas 3's text dtype
    if kind in "biufM" and values.ndim == 1:
        arr = _numeric_array(values, arrow_type)
        return None if arr is None else (arr, str(values.dtype))
    return None


def arrow_table(columns: Columns, schema: pa.Schema | None = None) -> pa.Table:
    """Plain columns as the Arrow table ``pa.Table.from_pandas(pd.DataFrame(columns), preserve_index=False)`` is.

    The same types and the same ``pandas`` schema metadata, built without importing pandas, so a file written from
    either is the same byte for byte (``tests/smf/test_ingest_columns.py`` compares them). Text columns are object
    arrays of str or None (pandas 3's text dtype, Arrow ``large_string``); a text column that is all None is typed
    as text, as :func:`_arrow` types a frame's; a list of int or None is pandas' nullable ``Int64``. With ``schema``
    (a table's first chunk's) the columns are converted to its types, as ``from_pandas(schema=...)`` does. A column
    of any other kind goes through pandas itself.
    """
    arrays, fields, described = [], [], []
    for i, (name, values) in enumerate(columns.items()):
        got = _plain_array(values, None if schema is None else schema.field(i).type)
        logical = None if got is None else _logical_type(got[0].type)
        if got is None or logical is None:  # a kind handled here only by pandas itself
            import pandas as pd

            return _arrow(pd.DataFrame(dict(columns)), schema)
        arr, numpy_type = got
        described.append({"name": name, "field_name": name, "pandas_type": logical, "numpy_type": numpy_type,
                          "metadata": None})
        if arr.type == pa.null():
            arr = arr.cast(pa.string())
        arrays.append(arr)
        fields.append(pa.field(name, arr.type))
    if schema is not None:
        return pa.Table.from_arrays(arrays, schema=schema)
    # what pyarrow's pandas_compat.construct_metadata writes for a frame without its index
    meta = json.dumps({"index_columns": [], "column_indexes": [], "columns": described, "attributes": {},
                       "creator": {"library": "pyarrow", "version": pa.__version__},
                       "pandas_version": _pandas_version()})
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata={b"pandas": meta.encode("utf8")}))


class TableWriter:
    """Chunked Parquet writer for one table of one input, a file per system-month partition.

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

    def write(self, df: pd.DataFrame | Columns) -> None:
        """Append ``df``'s rows to their partitions' files (the first frame or columns fix the schema)."""
        if df is None:
            return
        if isinstance(df, Mapping):
            self._write_columns(df)
            return
        if len(df) == 0:
            return
        if self.schema is None:
            self.schema = _arrow(df).schema
            self.columns = partition_columns(df.columns)
        for part, rows in split_partitions(df, self.columns):
            self._writer(part).write_table(_arrow(rows, self.schema))
        self.rows += len(df)

    def _write_columns(self, table: Columns) -> None:
        n = len(next(iter(table.values()))) if table else 0
        if n == 0:
            return
        first = None
        if self.schema is None:
            first = arrow_table(table)
            self.schema = first.schema
            self.columns = partition_columns(table)
        for part, rows in column_partitions(table, self.columns):
            if rows is None and first is not None:
                # the first chunk of one partition, converted once: its schema is the one just taken
                self._writer(part).write_table(first)
                continue
            chunk = table if rows is None else {k: np.asarray(v)[rows] if not isinstance(v, list)
                                                else [v[i] for i in rows.tolist()] for k, v in table.items()}
            self._writer(part).write_table(arrow_table(chunk, self.schema))
        self.rows += n

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
        """Close every file and give it its final name, ``<partition>/<sha>[-<n>].parquet``.

        Each file is flushed to disk before its rename, and the folders after them, so that the
        manifest line written next never names a file a crash could still lose
        (:func:`close_writers`, which closes several tables' writers together).
        """
        close_writers([self], sha)

    def _renames(self, sha: str) -> list[tuple[Path, Path]]:
        """(temporary file, final name) of every closed file."""
        return [(tmp, self.dir / part / (f"{sha}.parquet" if n == 0 else f"{sha}-{n}.parquet"))
                for tmp, part, n in self.closed]

    def abort(self) -> None:
        """Close every file and remove it: nothing of this table and input is stored."""
        self._close_open()
        for tmp, _, _ in self.closed:
            tmp.unlink(missing_ok=True)


def close_writers(writers: Iterable[TableWriter], sha: str) -> None:
    """:meth:`TableWriter.close` of several tables at once: every file flushed, then renamed, then every folder flushed.

    The order a commit needs (a file's bytes on disk before its name, every name before the
    manifest line) holds across the tables as it does within one; flushing all of an input's files
    in one round, and all their folders in another, waits for two journal commits instead of two
    per table (:func:`fsync_many`).
    """
    writers = list(writers)
    for tw in writers:
        tw._close_open()
    renames = [pair for tw in writers for pair in tw._renames(sha)]
    fsync_many(tmp for tmp, _ in renames)
    for tmp, final in renames:
        os.replace(tmp, final)
    fsync_many((), sorted({final.parent for _, final in renames}))


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
