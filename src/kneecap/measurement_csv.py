"""Measurement tables and their citations as CSV: read, typed and checked cell by cell.

A table that cannot be loaded raises :class:`ReferenceDataError` naming ``file:line: column`` of
every problem (the first :data:`MAX_PROBLEMS_SHOWN`, then a count). :mod:`kneecap.warehouse`
reads ``data/reference`` through these functions and re-exports them under its own name.
"""

from __future__ import annotations

import csv
import difflib
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kneecap import schema
from kneecap.limits import InputError, regular_file

#: Columns of ``data/reference/sources.csv``.
SOURCES_COLUMNS: tuple[str, ...] = (
    "source_id", "source_file", "title", "section", "table_or_figure", "units", "cpc",
    "n_gcp", "n_ziip", "think_time_ms", "req_bytes", "resp_bytes", "workload_kind", "notes",
)
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
    kneecap.measurement_csv.ReferenceDataError: t.csv:2: (file): not UTF-8 text: byte 0xe9 at byte offset 9;
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
