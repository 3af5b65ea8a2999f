"""DuckDB warehouse I/O: read the bundled reference CSVs, run SQL files, publish Parquet marts.

This is one of the few kneecap modules allowed to touch files. SQL files never contain paths:
:func:`run_sql_files` binds every input under a logical table name (dbt's ``ref()`` idea), runs
the files in layer order and registers each result under its file stem for the files after it.
Pipeline and app exchange Parquet, never a shared read-write DuckDB file (DuckDB allows one
writer process, and a connection is not thread-safe).
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import hashlib
import io
import json
import math
import os
import re
import shutil
import uuid
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from kneecap import schema
from kneecap.limits import InputError, regular_file

#: Layer folders under ``pipelines/sql`` in the order they run.
SQL_LAYERS: tuple[str, ...] = ("staging", "intermediate", "marts")

#: Columns of ``data/reference/sources.csv``.
SOURCES_COLUMNS: tuple[str, ...] = (
    "source_id", "source_file", "title", "section", "table_or_figure", "units", "cpc",
    "n_gcp", "n_ziip", "think_time_ms", "req_bytes", "resp_bytes", "workload_kind", "notes",
)
#: Files in ``data/reference`` that are not measurement tables: the citations of the tables, the
#: factor catalogue (:mod:`kneecap.factors`) and seed 002's workload names and printed numbers
#: (:mod:`kneecap.workloads`). Every other CSV there must be a measurement table.
REFERENCE_OTHER_FILES: frozenset[str] = frozenset(
    {"sources.csv", "factors.csv", "seed002_workloads.csv", "seed002_numbers.csv"})
_TEXT_COLUMNS = set(schema.KEY_COLUMNS) | set(schema.FACTOR_COLUMNS) | set(schema.PROVENANCE_COLUMNS)


class ReferenceDataError(ValueError):
    """A bundled or user measurement CSV that cannot be loaded; the message names file:line: column."""


@dataclass(frozen=True)
class CellProblem:
    """One bad cell: where it is and what is wrong with it."""

    path: str
    line: int
    column: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.column}: {self.problem}"


def _check_header(path: Path, header: list[str], expected: tuple[str, ...]) -> list[CellProblem]:
    problems = [CellProblem(str(path), 1, c, "missing column") for c in expected if c not in header]
    problems += [
        CellProblem(str(path), 1, c, "unknown column (not in kneecap.schema)")
        for c in header
        if c not in expected
    ]
    return problems


#: Largest measurement CSV read (a published or in-house table is kilobytes; 64 MiB is about
#: 300,000 rows, far past any measurement series, and bounds the time and memory of one check).
MAX_CSV_BYTES = 64 * 1024 * 1024
#: Problems listed in one error; the rest are counted (a file of bad rows gives a readable error).
MAX_PROBLEMS_SHOWN = 20
#: Longest cell: the :mod:`csv` module's own default ``field_size_limit``.
MAX_FIELD_CHARS = 131_072
_BOM = "\ufeff"


def _decode_csv_text(path: Path, raw: bytes) -> str:
    r"""UTF-8 text of a CSV, or :class:`ReferenceDataError` naming the line of the first bad byte.

    Examples
    --------
    >>> _decode_csv_text(Path("t.csv"), b"a,b\n1,caf\xe9\n")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    kneecap.warehouse.ReferenceDataError: t.csv:2: (file): not UTF-8 text: byte 0xe9 at byte offset 9;
        save the file as UTF-8
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        bad = raw[exc.start:exc.start + 1].hex()
        raise ReferenceDataError(f"{path}:{line}: (file): not UTF-8 text: byte 0x{bad} at byte offset "
                                 f"{exc.start}; save the file as UTF-8") from None


def number_problem(column: str, cell: str, value: float) -> str | None:
    """What is wrong with one parsed numeric cell, or None.

    Examples
    --------
    >>> number_problem("clients", "1e12", 1e12)
    '1e12 is above the plausible maximum 1e+06 (simulated clients (closed workload population N))'
    >>> number_problem("tps", "5", 5.0) is None
    True
    """
    if not math.isfinite(value):
        return f"{cell!r} is not finite"
    if value < 0:
        return f"{cell} is negative"
    ceiling = schema.MAX_VALUES.get(column)
    if ceiling is not None and value > ceiling:
        return f"{cell} is above the plausible maximum {ceiling:g} ({schema.NUMERIC_COLUMNS[column]})"
    return None


def _problems_error(path: Path, problems: list[CellProblem], total: int) -> ReferenceDataError:
    """One error listing the first problems and, when there were more, the total."""
    lines = [str(p) for p in problems[:MAX_PROBLEMS_SHOWN]]
    if total > len(lines):
        lines.append(f"{path}: {total:,} problems in all; the first {len(lines)} are shown")
    return ReferenceDataError("\n".join(lines))


def _check_table_header(path: Path, header: list[str]) -> list[CellProblem]:
    """What is wrong with a measurement table's header under the one table contract.

    The contract is :data:`kneecap.schema.REQUIRED_TABLE_COLUMNS`; the problems are unknown or repeated columns, a
    required column missing, no load column.
    """
    known = schema.REFERENCE_CSV_COLUMNS
    problems = []
    for column in sorted({c for c in header if header.count(c) > 1}):
        problems.append(CellProblem(str(path), 1, column, "column appears more than once"))
    for column in header:
        if column not in known:
            near = difflib.get_close_matches(column, known, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else "; the columns are listed in kneecap.schema"
            problems.append(CellProblem(str(path), 1, column or "(empty)", "unknown column" + hint))
    problems += [CellProblem(str(path), 1, c, "missing column (every table needs it)")
                 for c in schema.REQUIRED_TABLE_COLUMNS if c not in header]
    if not any(c in header for c in schema.LOAD_COLUMNS):
        problems.append(CellProblem(str(path), 1, "/".join(schema.LOAD_COLUMNS),
                                    "missing column: a table needs the load of each point, clients or tps"))
    return problems


def read_measurement_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read one measurement table, typed and checked cell by cell.

    The header is the one table contract (:data:`kneecap.schema.REQUIRED_TABLE_COLUMNS`):
    ``workload`` and ``clients`` or ``tps``, then any other column of
    :data:`kneecap.schema.REFERENCE_CSV_COLUMNS` in any order. An absent column is empty
    (not measured), except ``source_id``, which defaults to the file's stem, and ``point_id``,
    which defaults to ``line<N>`` (the row's line in the file). Empty cells are nulls: the source
    does not print that value. Every numeric cell must parse as a finite, non-negative number no
    larger than :data:`kneecap.schema.MAX_VALUES`; keys must be present and ``point_id`` unique;
    there must be at least one data row. The file must be UTF-8 (a leading byte-order mark, as
    spreadsheets write, is dropped), at most :data:`MAX_CSV_BYTES` long, with no cell longer than
    :data:`MAX_FIELD_CHARS`. The rules a row must also meet to be published (Little's law, APPL%
    within the engines) are the gate's; :func:`kneecap.tables.validate_measurements` applies them.

    Raises
    ------
    ReferenceDataError
        Listing the first :data:`MAX_PROBLEMS_SHOWN` problems as ``file:line: column: problem``
        (line 1 is the header) and then the total.
    """
    path = Path(path)
    try:
        # a FIFO or a device (/dev/zero) has no size to check and would be read without end
        regular_file(path)
    except InputError as exc:
        raise ReferenceDataError(f"{path}: (file): {str(exc).removeprefix(f'{path}: ')}") from None
    size = path.stat().st_size
    if size > MAX_CSV_BYTES:
        raise ReferenceDataError(f"{path}: (file): {size:,} bytes is over the {MAX_CSV_BYTES:,}-byte limit "
                                 "for a measurement table")
    with path.open("rb") as fh:
        data = fh.read(MAX_CSV_BYTES + 1)  # never more, should the file grow after the check
    if len(data) > MAX_CSV_BYTES:
        raise ReferenceDataError(f"{path}: (file): over the {MAX_CSV_BYTES:,}-byte limit for a measurement table")
    text = _decode_csv_text(path, data).removeprefix(_BOM)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise ReferenceDataError(f"{path}:1: (header): {exc}") from None
    if header is None:
        raise ReferenceDataError(f"{path}:1: (header): file is empty")
    header = [h.strip() for h in header]
    problems = _check_table_header(path, header)
    if problems:
        raise _problems_error(path, problems, len(problems))
    rows: list[dict[str, object]] = []
    seen: dict[str, int] = {}
    total = 0

    def problem(line_no: int, column: str, what: str) -> None:
        nonlocal total
        total += 1
        if len(problems) < MAX_PROBLEMS_SHOWN:
            problems.append(CellProblem(str(path), line_no, column, what))

    line_no = 1
    while True:
        try:
            raw = next(reader, None)
        except csv.Error as exc:
            # the reader cannot resynchronise after an over-long or malformed field: stop here
            problem(reader.line_num, "(row)", f"a field longer than {MAX_FIELD_CHARS:,} characters or "
                    f"malformed quoting ({exc})")
            break
        if raw is None:
            break
        line_no = reader.line_num
        if not any(cell.strip() for cell in raw):
            continue
        if len(raw) != len(header):
            problem(line_no, "(row)", f"{len(raw)} cells, header has {len(header)}")
            continue
        row: dict[str, object] = {"source_id": path.stem, "point_id": f"line{line_no}"}
        for column, cell in zip(header, raw):
            cell = cell.strip()
            if column in _TEXT_COLUMNS:
                row[column] = cell or None
                continue
            if not cell:
                row[column] = math.nan
                continue
            try:
                value = float(cell)
            except ValueError:
                problem(line_no, column, f"{cell!r} is not a number")
                continue
            bad = number_problem(column, cell, value)
            if bad is not None:
                problem(line_no, column, bad)
            row[column] = value
        for key in schema.KEY_COLUMNS:
            if not row.get(key):
                problem(line_no, key, "empty key")
        point = str(row.get("point_id"))
        if point in seen:
            problem(line_no, "point_id", f"{point!r} repeats line {seen[point]}")
        seen[point] = line_no
        row["source_line"] = line_no
        rows.append(row)
    if not rows and not total:
        problem(line_no + 1, "(file)", "no data rows: the file holds a header only")
    if total:
        raise _problems_error(path, problems, total)
    frame = pd.DataFrame(rows, columns=[*schema.REFERENCE_CSV_COLUMNS, "source_line"])
    for column in schema.NUMERIC_COLUMNS:
        frame[column] = frame[column].astype("float64")
    for column in _TEXT_COLUMNS:
        # None, not NaN, in an absent column: DuckDB types an all-NaN object column as DOUBLE
        frame[column] = frame[column].astype("object").where(frame[column].notna(), None)
    frame["source_line"] = frame["source_line"].astype("int64")
    return frame


def read_sources_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read ``sources.csv`` (one row per bundled table: citation, units, hardware, notes)."""
    path = Path(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    problems = _check_header(path, list(frame.columns), SOURCES_COLUMNS)
    if problems:
        raise ReferenceDataError("\n".join(map(str, problems)))
    for column in ("n_gcp", "n_ziip", "think_time_ms", "req_bytes", "resp_bytes"):
        frame[column] = pd.to_numeric(frame[column].replace("", None), errors="raise")
    return frame.replace({"": None})


#: The file of the bundled ``data/reference`` that lists what kneecap ships there: a user's own
#: tables (``kneecap add-table``) sit beside the bundled ones and are not in it.
MANIFEST_NAME = "MANIFEST"


def read_manifest(directory: str | os.PathLike[str]) -> tuple[str, ...]:
    """The file names ``directory``'s :data:`MANIFEST_NAME` lists, in its order.

    One name a line; blank lines and ``#`` comments are skipped.

    Raises
    ------
    ReferenceDataError
        No manifest, a name listed twice, or a name that is not a plain file name in ``directory``.
    """
    path = Path(directory) / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ReferenceDataError(f"{path}: no manifest of the bundled files") from exc
    names, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if name in names:
            problems.append(f"{path}:{number}: {name} is listed twice")
        elif Path(name).name != name or not (Path(directory) / name).is_file():
            problems.append(f"{path}:{number}: {name} is not a file of {directory}")
        names.append(name)
    if problems:
        raise ReferenceDataError("\n".join(problems))
    return tuple(names)


def bundled_tables(directory: str | os.PathLike[str]) -> tuple[str, ...]:
    """The ``source_id`` of each measurement table the manifest lists (not the user's own)."""
    return tuple(Path(name).stem for name in read_manifest(directory)
                 if name.endswith(".csv") and name not in REFERENCE_OTHER_FILES)


def read_reference_dir(directory: str | os.PathLike[str], *,
                       only: Collection[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read every measurement CSV in ``directory`` plus its ``sources.csv``.

    The files in :data:`REFERENCE_OTHER_FILES` are not measurement tables and are skipped.

    Parameters
    ----------
    only
        Read just these tables (``source_id``, the file stem) and their ``sources.csv`` rows, e.g.
        :func:`bundled_tables` for the tables kneecap ships; None reads every table in the folder.

    Returns
    -------
    measurements, sources : DataFrame
        ``measurements`` concatenates all tables; ``sources`` has one row per table.

    Raises
    ------
    ReferenceDataError
        Problems of all files at once, and tables missing from ``sources.csv``.
    """
    directory = Path(directory)
    sources = read_sources_csv(directory / "sources.csv")
    if only is not None:
        missing = sorted(set(only) - {p.stem for p in directory.glob("*.csv")})
        if missing:
            raise ReferenceDataError(f"{directory}: no table {', '.join(missing)}")
        sources = sources[sources["source_id"].isin(set(only))].reset_index(drop=True)
    frames, problems = [], []
    for csv_path in sorted(directory.glob("*.csv")):
        if csv_path.name in REFERENCE_OTHER_FILES or (only is not None and csv_path.stem not in only):
            continue
        try:
            frame = read_measurement_csv(csv_path)
        except ReferenceDataError as exc:
            problems.append(str(exc))
            continue
        if csv_path.stem not in set(sources["source_id"]):
            problems.append(f"{csv_path}:1: source_id: table {csv_path.stem!r} has no row in sources.csv")
        bad = frame.loc[frame["source_id"] != csv_path.stem, "source_line"]
        problems += [f"{csv_path}:{line}: source_id: must equal the file stem {csv_path.stem!r}" for line in bad]
        frames.append(frame)
    if problems:
        raise ReferenceDataError("\n".join(problems))
    if not frames:
        raise ReferenceDataError(f"{directory}: no measurement CSVs found")
    return pd.concat(frames, ignore_index=True), sources


def sql_files(sql_root: str | os.PathLike[str]) -> list[Path]:
    """SQL files under ``sql_root`` in run order.

    The order is layer by layer; within a layer a file runs after the files whose tables it reads (e.g.
    ``dim_sources`` after ``fct_measurements``), else alphabetically.
    """
    root = Path(sql_root)
    ordered: list[Path] = []
    for layer in SQL_LAYERS:
        pending = sorted((root / layer).glob("*.sql"))
        reads = {p: {q.stem for q in pending if q != p and re.search(rf"\b{q.stem}\b", _sql_body(p))}
                 for p in pending}
        while pending:
            ready = [p for p in pending if not (reads[p] & {q.stem for q in pending})]
            if not ready:
                raise ValueError(f"{root / layer}: SQL files read each other in a cycle: "
                                 f"{', '.join(p.name for p in pending)}")
            ordered.extend(ready)
            pending = [p for p in pending if p not in ready]
    return ordered


def _sql_body(path: Path) -> str:
    """SQL text without ``--`` comments (header comments name inputs but must not order files)."""
    return "\n".join(line.split("--", 1)[0] for line in path.read_text(encoding="utf-8").splitlines())


def run_sql_files(
    files: Iterable[str | os.PathLike[str]],
    inputs: Mapping[str, pd.DataFrame],
    *,
    params: Mapping[str, object] | None = None,
) -> dict[str, pd.DataFrame]:
    """Run SQL files against named inputs; each file's result becomes the table named by its stem.

    Parameters
    ----------
    files
        SQL files, each a single ``select`` (``$name`` placeholders allowed).
    inputs
        Logical table name -> DataFrame, registered as views before the first file runs.
    params
        Values for the ``$name`` placeholders a file uses (only those it names are passed).

    Returns
    -------
    dict
        Table name -> result, for every file, in run order.
    """
    params = dict(params or {})
    results: dict[str, pd.DataFrame] = {}
    con = duckdb.connect(":memory:")
    try:
        for name, frame in inputs.items():
            con.register(name, frame)
        for file in files:
            file = Path(file)
            sql = file.read_text(encoding="utf-8")
            used = {k: v for k, v in params.items() if f"${k}" in sql}
            try:
                result = con.execute(sql, used).df() if used else con.execute(sql).df()
            except duckdb.Error as exc:
                raise RuntimeError(f"{file}: {exc}") from exc
            results[file.stem] = result
            con.register(file.stem, result)
    finally:
        con.close()
    return results


# --- Publication: snapshots swapped in one step ---------------------------------------------
#
# A published folder (``data/processed``, or the candidate marts in ``data/interim/marts``) holds
#
#     current.json          the pointer: which generation is current, which was before, its tables
#     gen-<16 hex>/         one generation: every table of one publish as <table>.parquet
#     gen-<16 hex>/         the previous generation, kept for readers still reading it
#
# A generation is named by the SHA-256 of its tables' bytes, so publishing the same content again
# lands on the same name and leaves the folder byte for byte as it was: DVC sees no change and does
# not rerun the stages downstream (a counter would change the folder on every run).

#: The pointer file of a published folder; replaced in one ``os.replace``, never edited in place.
MANIFEST = "current.json"
#: Version of the manifest's layout, written into it so a later layout can tell old folders apart.
MANIFEST_FORMAT = 1
#: How often a reader resolves the pointer again when the generation it resolved was removed before
#: it could open the files (it would take two publishes inside that window of microseconds).
READ_ATTEMPTS = 5
_GENERATION = re.compile(r"gen-[0-9a-f]{16}\Z")
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_STAGING_PREFIX = ".staging-"
_MANIFEST_TMP_PREFIX = f".{MANIFEST}."


@dataclass(frozen=True)
class Snapshot:
    """Every table of one published generation.

    Attributes
    ----------
    generation
        The generation's name (``gen-`` and 16 hex digits of the SHA-256 of its tables), or None
        for a folder of plain ``<table>.parquet`` files written before snapshots existed, or for a
        folder nothing has been published to.
    tables
        Table name -> DataFrame, in name order.
    """

    generation: str | None
    tables: dict[str, pd.DataFrame]


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    """The folder's manifest, or None when there is none (an older plain folder, or an empty one)."""
    path = directory / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        manifest = json.loads(text)
        generation, tables = manifest["generation"], manifest["tables"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a kneecap snapshot manifest ({exc})") from None
    # the names become paths: a manifest must not point outside its folder
    if not (isinstance(generation, str) and _GENERATION.match(generation)) or not all(
            isinstance(t, str) and _TABLE_NAME.match(t) for t in tables):
        raise ValueError(f"{path}: not a kneecap snapshot manifest (bad generation or table name)")
    return manifest


def _resolve(directory: Path) -> tuple[str | None, dict[str, Path]]:
    """The current generation of ``directory`` and the file of each of its tables."""
    manifest = _read_manifest(directory)
    if manifest is None:
        # an older kneecap wrote plain <table>.parquet files; read them as they are
        return None, {p.stem: p for p in sorted(directory.glob("*.parquet"))}
    generation = str(manifest["generation"])
    return generation, {t: directory / generation / f"{t}.parquet" for t in sorted(manifest["tables"])}


def current_generation(directory: str | os.PathLike[str]) -> str | None:
    """The generation ``directory`` currently publishes (None: no snapshot published there yet).

    Cheap (reads one small file): a cache of the marts can be keyed by it.
    """
    manifest = _read_manifest(Path(directory))
    return None if manifest is None else str(manifest["generation"])


def read_snapshot(directory: str | os.PathLike[str], names: Iterable[str] | None = None) -> Snapshot:
    """Every published table of one generation, e.g. ``read_snapshot("data/processed")``.

    Parameters
    ----------
    directory
        A folder written by :func:`write_tables` (or a plain folder of ``<table>.parquet`` files
        written by an older kneecap).
    names
        The tables wanted; all of the generation's tables when None.

    Returns
    -------
    Snapshot
        The tables and the generation they come from. A folder that does not exist or holds nothing
        gives an empty snapshot when ``names`` is None.

    Raises
    ------
    FileNotFoundError
        A table in ``names`` that the current generation does not have.

    Notes
    -----
    The guarantee a reader gets: all tables returned come from one generation, never some from
    one publish and some from another, and a publish running at the same time never makes a read
    fail. The reader resolves the pointer (:data:`MANIFEST`) once and opens every file of that
    generation before reading any; an open file stays readable even if it is removed afterwards
    (POSIX). A generation stays on disk while it is current and through the next publish, so for
    its files to disappear between resolving the pointer and opening them, two publishes would have
    to finish inside that window; should it happen, the reader resolves the pointer again (at most
    :data:`READ_ATTEMPTS` times) and reads the newer generation whole.
    """
    directory = Path(directory)
    wanted = None if names is None else list(names)
    for attempt in range(READ_ATTEMPTS):
        generation, files = _resolve(directory)
        chosen = files if wanted is None else {}
        for name in wanted or ():
            if name not in files:
                raise FileNotFoundError(f"{directory / name}.parquet: no such mart; run `dvc repro` "
                                        "(or `make run`) first")
            chosen[name] = files[name]
        with contextlib.ExitStack() as stack:
            try:
                handles = {name: stack.enter_context(open(path, "rb")) for name, path in chosen.items()}
            except FileNotFoundError:
                # the generation was cleaned up under us: only a newer pointer explains that
                if attempt + 1 == READ_ATTEMPTS or current_generation(directory) == generation:
                    raise
                continue
            return Snapshot(generation, {name: pd.read_parquet(fh) for name, fh in handles.items()})
    raise AssertionError("unreachable: the last attempt returns or raises")


def read_parquet_dir(directory: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Every table of the current generation in ``directory`` as table name -> DataFrame.

    The same as ``read_snapshot(directory).tables``: all tables come from one publish.
    """
    return read_snapshot(directory).tables


def read_table(directory: str | os.PathLike[str], name: str) -> pd.DataFrame:
    """One published mart, e.g. ``read_table("data/processed", "fct_measurements")``.

    Two calls may straddle a publish and return tables of two generations; a reader that needs
    several marts together calls :func:`read_snapshot` once.
    """
    return read_snapshot(directory, [name]).tables[name]


@contextlib.contextmanager
def _publish_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` while publishing into it.

    Publishers take turns (DVC already runs one stage at a time; this covers a test or a second
    checkout writing the same folder), which makes it safe to sweep leftovers of a crashed
    publish. The lock is an ``flock`` on the folder itself, so it adds no file to a DVC output;
    where ``fcntl`` does not exist (Windows) publishers must not overlap.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _fsync(path: Path) -> None:
    """Flush a file or folder to disk, so that a rename naming it survives a power cut."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _generation_name(staging: Path, names: Iterable[str]) -> str:
    """``gen-`` and 16 hex digits of the SHA-256 over every table's name and bytes."""
    digest = hashlib.sha256()
    for name in sorted(names):
        table_digest = hashlib.sha256((staging / f"{name}.parquet").read_bytes()).digest()
        digest.update(name.encode() + b"\0" + table_digest)
    return f"gen-{digest.hexdigest()[:16]}"


def _write_manifest(directory: Path, generation: str, previous: str | None, names: Iterable[str]) -> None:
    """Swap the pointer: write the new manifest beside the old one and ``os.replace`` it in."""
    body = {"format": MANIFEST_FORMAT, "generation": generation, "previous": previous,
            "tables": sorted(names)}
    # not tempfile.mkstemp: its 0600 mode would hide the pointer from a desk run by another user
    tmp = directory / f"{_MANIFEST_TMP_PREFIX}{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(body, indent=2) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, directory / MANIFEST)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync(directory)


def _sweep(directory: Path, keep: set[str], *, legacy: bool) -> None:
    """Remove what no reader can reach.

    That is generations other than ``keep``, leftovers of crashed publishes and, once a snapshot has replaced them
    (``legacy``), an older kneecap's plain files.

    Only names this module writes are touched; anything else in the folder is left alone.
    """
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink() and (
                (_GENERATION.match(entry.name) and entry.name not in keep)
                or entry.name.startswith(_STAGING_PREFIX)):
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.is_file() and (entry.name.startswith(_MANIFEST_TMP_PREFIX)
                                  or (legacy and entry.suffix == ".parquet")):
            entry.unlink(missing_ok=True)


def write_tables(tables: Mapping[str, pd.DataFrame], directory: str | os.PathLike[str]) -> list[Path]:
    """Publish ``tables`` as the new snapshot of ``directory``, all or nothing, in one step.

    Every table is written to a staging folder inside ``directory``; the staging folder becomes
    the generation ``gen-<sha256>`` (named by the tables' bytes), and then the pointer
    :data:`MANIFEST` is replaced in one ``os.replace``. Readers (:func:`read_snapshot`,
    :func:`read_table`, :func:`read_parquet_dir`) see either the old snapshot or the new one, whole.

    Parameters
    ----------
    tables
        Table name -> DataFrame: the whole snapshot. A table of the previous snapshot that is not
        here is not in the new one.
    directory
        The published folder; created if missing.

    Returns
    -------
    list of Path
        The file of each table in the new generation, in the order of ``tables``.

    Raises
    ------
    ValueError
        A table name that is not an identifier (names become file names).

    Notes
    -----
    A failure before the pointer is swapped (a frame that cannot be written, a full disk) leaves
    the previous snapshot current and untouched. Publishing the same content again changes nothing
    on disk. After the swap the folder keeps the new generation and the one it replaced (a reader
    may still be reading it) and removes older ones, so the folder holds at most two generations
    and is stable between publishes (DVC hashes it once the stage has finished). A folder of plain
    ``<table>.parquet`` files from an older kneecap keeps them as the previous snapshot until the
    next publish.
    """
    bad = [name for name in tables if not _TABLE_NAME.match(name)]
    if bad:
        raise ValueError(f"table names must be identifiers (they name files): {', '.join(map(repr, bad))}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with _publish_lock(directory):
        # staging inside the folder, so the rename into place stays on one file system; not
        # tempfile.mkdtemp, whose 0700 mode the generation would keep (the umask applies here)
        staging = directory / f"{_STAGING_PREFIX}{uuid.uuid4().hex}"
        staging.mkdir()
        orphan: Path | None = None  # a generation renamed into place that no pointer names yet
        try:
            for name, frame in tables.items():
                frame.to_parquet(staging / f"{name}.parquet", index=False)
                _fsync(staging / f"{name}.parquet")
            generation = _generation_name(staging, tables)
            before = _read_manifest(directory) or {}
            current = before.get("generation")
            was = before.get("previous")
            previous = was if isinstance(was, str) else None
            if generation != current:
                target = directory / generation
                # a folder of this name is either the previous generation (content A, then B, then A
                # again: complete and maybe being read, so reuse it) or a leftover of an interrupted
                # sweep (maybe partial, so replace it)
                if target.exists() and generation != previous:
                    shutil.rmtree(target)
                if not target.exists():
                    os.rename(staging, target)
                    _fsync(directory)
                    orphan = target
                previous = None if current is None else str(current)
                _write_manifest(directory, generation, previous, tables)
                orphan = None
            # previous None: the snapshot before was an older kneecap's plain files (or nothing),
            # which stay until a generation of ours is the one replaced
            _sweep(directory, {generation} if previous is None else {generation, previous},
                   legacy=previous is not None)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            if orphan is not None:  # the swap failed: leave the folder as it was
                shutil.rmtree(orphan, ignore_errors=True)
    return [directory / generation / f"{name}.parquet" for name in tables]


def read_decoded_tables(directory: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Decoded SMF/RMF tables under ``directory/<table>/`` (system and month partitions), empty ones for the rest.

    Every table the SQL expects is returned, empty (with its declared columns) when nothing of
    that record type has been ingested, so the SQL runs the same with or without SMF data. The
    rows are read in the files' path order (:func:`kneecap.ingest.store.table_files`); the Spark
    engine reads the same folders as a dataset instead (:func:`kneecap.spark_engine.build_marts`).
    """
    from kneecap.ingest.catalogue import DECODED_TABLES
    from kneecap.ingest.store import table_files

    directory = Path(directory)
    tables: dict[str, pd.DataFrame] = {}
    for name, empty in DECODED_TABLES.items():
        files = table_files(directory / name)
        tables[name] = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True) if files else empty()
    return tables


def marts_inputs(measurements: pd.DataFrame, sources: pd.DataFrame,
                 decoded: Mapping[str, pd.DataFrame] | None = None) -> dict[str, pd.DataFrame]:
    """The SQL's inputs by logical table name: the one place that binds them, for either engine.

    The engines are :func:`build_marts` here and :func:`kneecap.spark_engine.build_marts` on Spark.

    Parameters
    ----------
    measurements, sources
        As :func:`read_reference_dir` returns them (a user's table alone will do).
    decoded
        Decoded tables by name (:func:`read_decoded_tables`); any the SQL reads and this leaves
        out are bound empty, with their declared columns.
    """
    from kneecap.ingest.catalogue import DECODED_TABLES

    given = dict(decoded or {})
    return {"reference_measurements": measurements, "reference_sources": sources,
            **{name: given[name] if name in given else empty() for name, empty in DECODED_TABLES.items()},
            **{name: frame for name, frame in given.items() if name not in DECODED_TABLES}}


def build_marts(measurements: pd.DataFrame, sources: pd.DataFrame,
                decoded: Mapping[str, pd.DataFrame] | None = None, *,
                sql_root: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Every table of the pipeline's SQL from the reference tables and decoded SMF/RMF tables, run in DuckDB.

    Used by the ``build_marts`` stage (unless params.yaml chooses Spark), the desk's and
    ``kneecap check``'s validation of a table, and the tests alike.

    Parameters
    ----------
    measurements, sources, decoded
        As for :func:`marts_inputs`.
    sql_root
        The pipeline's SQL folder (``pipelines/sql``).
    """
    return run_sql_files(sql_files(sql_root), marts_inputs(measurements, sources, decoded))
