"""DuckDB warehouse I/O: read the bundled reference CSVs, run SQL files, publish Parquet marts.

This is one of the few kneecap modules allowed to touch files. SQL files never contain paths:
:func:`run_sql_files` binds every input under a logical table name (dbt's ``ref()`` idea), runs
the files in layer order and registers each result under its file stem for the files after it.
Pipeline and app exchange Parquet, never a shared read-write DuckDB file (DuckDB allows one
writer process, and a connection is not thread-safe).
"""

from __future__ import annotations

import re

import csv
import io
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd

from kneecap import schema

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
    """UTF-8 text of a CSV, or :class:`ReferenceDataError` naming the line of the first bad byte.

    Examples
    --------
    >>> _decode_csv_text(Path("t.csv"), b"a,b\\n1,caf\\xe9\\n")
    Traceback (most recent call last):
    ...
    kneecap.warehouse.ReferenceDataError: t.csv:2: (file): not UTF-8 text: byte 0xe9 at byte offset 9; save the file as UTF-8
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        bad = raw[exc.start:exc.start + 1].hex()
        raise ReferenceDataError(f"{path}:{line}: (file): not UTF-8 text: byte 0x{bad} at byte offset "
                                 f"{exc.start}; save the file as UTF-8") from None


def _number_problem(column: str, cell: str, value: float) -> str | None:
    """What is wrong with one parsed numeric cell, or None.

    Examples
    --------
    >>> _number_problem("clients", "1e12", 1e12)
    '1e12 is above the plausible maximum 1e+06 (simulated clients (closed workload population N))'
    >>> _number_problem("tps", "5", 5.0) is None
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


def read_measurement_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read one measurement CSV with the exact reference header, typed and checked cell by cell.

    Empty cells are nulls: the source does not print that value. Every numeric cell must parse
    as a finite, non-negative number no larger than :data:`kneecap.schema.MAX_VALUES`; keys
    must be present and ``point_id`` unique; there must be at least one data row. The file must
    be UTF-8 (a byte-order mark is named in the header error), at most :data:`MAX_CSV_BYTES`
    long, with no cell longer than :data:`MAX_FIELD_CHARS`.

    Raises
    ------
    ReferenceDataError
        Listing the first :data:`MAX_PROBLEMS_SHOWN` problems as ``file:line: column: problem``
        (line 1 is the header) and then the total.
    """
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_CSV_BYTES:
        raise ReferenceDataError(f"{path}: (file): {size:,} bytes is over the {MAX_CSV_BYTES:,}-byte limit "
                                 "for a measurement table")
    text = _decode_csv_text(path, path.read_bytes())
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise ReferenceDataError(f"{path}:1: (header): {exc}") from None
    if header is None:
        raise ReferenceDataError(f"{path}:1: (header): file is empty")
    header = [h.strip() for h in header]
    problems = _check_header(path, header, schema.REFERENCE_CSV_COLUMNS)
    if problems:
        if header and header[0].startswith(_BOM):
            # the BOM sticks to the first column name, so that column looks missing
            problems = [CellProblem(p.path, p.line, p.column, p.problem + " (the file starts with a UTF-8 "
                                    "byte-order mark, read as part of the first column name; save it "
                                    "without the BOM)") for p in problems]
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
        row: dict[str, object] = {}
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
            bad = _number_problem(column, cell, value)
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
        frame[column] = frame[column].astype("object")
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


def read_reference_dir(directory: str | os.PathLike[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read every measurement CSV in ``directory`` plus its ``sources.csv``.

    The files in :data:`REFERENCE_OTHER_FILES` are not measurement tables and are skipped.

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
    frames, problems = [], []
    for csv_path in sorted(directory.glob("*.csv")):
        if csv_path.name in REFERENCE_OTHER_FILES:
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
    """SQL files under ``sql_root`` in run order: layer by layer; within a layer a file runs after
    the files whose tables it reads (e.g. ``dim_sources`` after ``fct_measurements``), else
    alphabetically."""
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


def read_parquet_dir(directory: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Every ``<table>.parquet`` in ``directory`` as table name -> DataFrame."""
    return {p.stem: pd.read_parquet(p) for p in sorted(Path(directory).glob("*.parquet"))}


def read_table(directory: str | os.PathLike[str], name: str) -> pd.DataFrame:
    """One published mart, e.g. ``read_table("data/processed", "fct_measurements")``."""
    path = Path(directory) / f"{name}.parquet"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such mart; run `dvc repro` (or `make run`) first")
    return pd.read_parquet(path)


def write_tables(tables: Mapping[str, pd.DataFrame], directory: str | os.PathLike[str]) -> list[Path]:
    """Write each table to ``directory/<name>.parquet`` atomically, all or nothing.

    Files are first written to a temporary folder beside ``directory`` and only moved into place
    once every table has been written, so a failure leaves the previous tables intact.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".publish-", dir=directory.parent))
    try:
        for name, frame in tables.items():
            frame.to_parquet(staging / f"{name}.parquet", index=False)
        written = []
        for name in tables:
            target = directory / f"{name}.parquet"
            os.replace(staging / f"{name}.parquet", target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def read_decoded_tables(directory: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Decoded SMF/RMF tables under ``directory/<table>/*.parquet``, with empty ones for the rest.

    Every table the SQL expects is returned, empty (with its declared columns) when nothing of
    that record type has been ingested, so the SQL runs the same with or without SMF data.
    """
    from kneecap.smf.tables import DECODED_TABLES

    directory = Path(directory)
    tables: dict[str, pd.DataFrame] = {}
    for name, empty in DECODED_TABLES.items():
        files = sorted((directory / name).glob("*.parquet")) if directory.exists() else []
        tables[name] = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True) if files else empty()
    return tables
