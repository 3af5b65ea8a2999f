"""A user's own measurement table: checked by the gate's rules, then put in the project with its citation.

One table contract and one rule set serve ``kneecap check``, ``kneecap add-table``, the desk's
upload and the pipeline:

- the contract (which columns, which cells) is :func:`kneecap.warehouse.read_measurement_csv`;
- the rules a row must meet to be published (keys, non-negative measures, APPL% within the
  engines, Little's law within ``validate.littles_law_rel_tol``) are the gate's own expectation
  suite, run here through the same SQL the pipeline runs, so what :func:`validate_measurements`
  reports is exactly what the validate stage will quarantine.

This module reads and writes files (the table, ``sources.csv``); the rules themselves live in
:mod:`kneecap.validation`.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pandas as pd

from kneecap import schema, warehouse
from kneecap.config import ValidationConfig
from kneecap.csvsafe import neutralise_cell

#: What each column of a table added by :func:`add_table` is measured in, for its ``sources.csv``
#: row when the user states no units: the units kneecap's column names carry.
DEFAULT_UNITS = ("clients: simulated clients; think_time_ms: ms; tps: transactions/s; resp_ms: ms (average "
                 "response); cpu_*_pct: RMF APPL% (100 = one engine); cpu_ms_per_tran: CPU ms per "
                 "transaction; req_bytes/resp_bytes: bytes")
_SOURCE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")


class TableError(ValueError):
    """A table that cannot be added (the message says which file and why); nothing was written."""


@dataclass(frozen=True)
class MeasurementCheck:
    """The gate's verdict on a table's rows.

    Attributes
    ----------
    n_rows, n_expectations
        Rows of ``fct_measurements`` the table became and rules they were held to.
    problems
        One line per rule a row broke: ``source_id``, ``point_id``, ``line`` (in the file, or
        None), ``column``, ``rule`` (the GX expectation), ``value`` and ``problem`` (in words).
        These are the rows the validate stage sets aside; the others are published.
    """

    n_rows: int
    n_expectations: int
    problems: pd.DataFrame
    fct: pd.DataFrame | None = None

    @property
    def ok(self) -> bool:
        """True when no row broke a rule."""
        return self.problems.empty

    def publishable(self) -> pd.DataFrame:
        """The rows as ``fct_measurements`` without those the gate would set aside.

        What the pipeline would publish and train on.
        """
        if self.fct is None:
            raise ValueError("this check kept no rows")
        bad = set(zip(self.problems["source_id"].dropna(), self.problems["point_id"].dropna()))
        keys = list(zip(self.fct["source_id"], self.fct["point_id"]))
        return self.fct[[k not in bad for k in keys]].reset_index(drop=True)

    def lines(self, path: str | os.PathLike[str]) -> list[str]:
        """``file:line: column: problem`` per broken rule, as ``kneecap check`` prints them."""
        out = []
        for row in self.problems.itertuples(index=False):
            where = f"{path}:{int(row.line)}" if row.line is not None and not pd.isna(row.line) else f"{path}"
            out.append(f"{where}: {row.column}: {row.problem} (point {row.point_id!r})")
        return out


PROBLEM_COLUMNS = ("source_id", "point_id", "line", "column", "rule", "value", "problem")


def _describe(check_column: str, value: object, config: ValidationConfig) -> tuple[str, str]:
    """The table column a broken rule is about and the problem in a planner's words."""
    # GX returns failing values untyped; those of the two check columns read here are the numbers the SQL computed
    number = cast(float, value)
    if check_column == "check_littles_law_rel_err":
        return ("clients", f"Little's law: clients != tps x (resp_ms + think_time_ms) / 1000, off by "
                f"{float(number):.1%} (the gate allows {config.littles_law_rel_tol:.0%}, "
                "params.yaml validate.littles_law_rel_tol); a unit slip (s for ms) or a wrong think time?")
    match = re.fullmatch(r"check_(.+)_headroom", check_column)
    if match:
        column = match[1]
        engines = " + ".join(schema.PCT_BOUNDS[column])
        return (column, f"APPL% over what the engines can deliver (100 x ({engines})): "
                f"{-float(number):g} points too high")
    return check_column, ""


def validate_measurements(
    frame: pd.DataFrame, *, sources: pd.DataFrame | None, sql_root: str | os.PathLike[str],
    config: ValidationConfig = ValidationConfig(),
) -> MeasurementCheck:
    """Run a table's rows through the pipeline's SQL and the gate's ``fct_measurements`` suite.

    Parameters
    ----------
    frame
        Rows as :func:`kneecap.warehouse.read_measurement_csv` returns them (with ``source_line``).
    sources
        The project's ``sources.csv`` (None: an empty one; only ``dim_sources`` reads it).
    sql_root
        The pipeline's SQL (``pipelines/sql``).
    config
        The gate's tunables (``params.yaml`` ``validate``).
    """
    from kneecap.validation import validate_tables  # noqa: PLC0415 - great_expectations is slow to import

    if sources is None:
        sources = pd.DataFrame(columns=list(warehouse.SOURCES_COLUMNS))
    tables = warehouse.build_marts(frame, sources, sql_root=sql_root)
    fct = tables["fct_measurements"].reset_index(drop=True)
    report = validate_tables({"fct_measurements": fct}, config)
    line_of = {(str(s), str(p)): int(n) for s, p, n in
               zip(frame["source_id"], frame["point_id"], frame["source_line"])}
    rows = []
    for failure in report.failures:
        if not failure.positions:  # about the whole table
            rows.append({"source_id": None, "point_id": None, "line": None, "column": failure.column,
                         "rule": failure.rule, "value": ", ".join(map(str, failure.values[:5])),
                         "problem": f"{failure.rule} failed for the table"})
            continue
        for pos, value in zip(failure.positions, (*failure.values, *[None] * len(failure.positions))):
            key = (str(fct.at[pos, "source_id"]), str(fct.at[pos, "point_id"]))
            column, problem = _describe(failure.column, value, config)
            if not problem:
                problem = f"{value} breaks {failure.rule}"
            rows.append({"source_id": key[0], "point_id": key[1], "line": line_of.get(key), "column": column,
                         "rule": failure.rule, "value": str(value), "problem": problem})
    problems = pd.DataFrame(rows, columns=list(PROBLEM_COLUMNS))
    problems = problems.sort_values(["line", "column"], na_position="first", kind="stable").reset_index(drop=True)
    table_report = report.tables[0]
    return MeasurementCheck(table_report.n_rows, table_report.n_expectations, problems, fct)


#: The setup values a whole table shares and ``kneecap check`` / ``add-table`` take as options
#: (``--n-gcp`` ...), each with the gate's rules that need it.
SETUP_OPTIONS: dict[str, str] = {
    "n_gcp": "--n-gcp", "n_ziip": "--n-ziip", "think_time_ms": "--think-time-ms",
    "req_bytes": "--req-bytes", "resp_bytes": "--resp-bytes",
}


def fill_setup(frame: pd.DataFrame, fill: Mapping[str, float], path: str | os.PathLike[str]) -> pd.DataFrame:
    """A copy of ``frame`` with the empty cells of each ``fill`` column set to its value.

    A row that gives its own value keeps it: ``fill`` states what the whole table shares but does
    not carry (the LPAR's engines, the test's think time).

    Raises
    ------
    TableError
        A column that is not numeric, or a value the table contract refuses (the message names
        ``path`` and the column).
    """
    out = frame.copy()
    for column, value in fill.items():
        if column not in schema.NUMERIC_COLUMNS:
            raise TableError(f"{path}: {column}: not a numeric column of kneecap.schema")
        bad = warehouse.number_problem(column, f"{value:g}", float(value))
        if bad is not None:
            raise TableError(f"{path}: {column} for rows that do not say: {bad}")
        out[column] = out[column].fillna(float(value))
    return out


def duplicate_rows(frame: pd.DataFrame) -> list[tuple[int, int]]:
    """``(line, first line)`` of each row of a measurement table that repeats an earlier row's cells exactly.

    ``frame`` is as :func:`kneecap.warehouse.read_measurement_csv` reads a table. Its own ``point_id``
    (``line<N>`` unless the table gives one) and line do not count: the same measurement given twice
    weighs twice in every fit, whatever it is called.

    Examples
    --------
    >>> rows = pd.DataFrame({"workload": ["w", "w", "w"], "clients": [10.0, 20.0, 10.0],
    ...                      "point_id": ["line2", "line3", "line4"], "source_line": [2, 3, 4]})
    >>> duplicate_rows(rows)
    [(4, 2)]
    """
    cells = [c for c in frame.columns if c not in ("point_id", "source_line")]
    if frame.empty or not cells:
        return []
    # NaN cells (not measured) compare equal here, as two empty cells of a CSV are the same
    key = frame[cells].astype(object).where(frame[cells].notna(), None).apply(tuple, axis=1)
    first_line: dict[tuple, int] = {}
    out = []
    for k, line in zip(key, frame["source_line"], strict=True):
        if k in first_line:
            out.append((int(line), first_line[k]))
        else:
            first_line[k] = int(line)
    return out


def setup_hints(frame: pd.DataFrame, problems: pd.DataFrame) -> list[str]:
    """What setup a table leaves out that the gate's rules need, as the options that give it.

    Two cases, each said once per table rather than once per row:

    - Little's law broken on rows that give no ``think_time_ms``: the law read the think time as 0,
      which for a closed test with think time puts every row off by about Z / (R + Z);
    - APPL% columns on rows without the engine counts they are held to: those rows were not
      checked against the engines at all.

    Parameters
    ----------
    frame
        The table's rows, after any ``fill`` (:func:`fill_setup`).
    problems
        Its rows of :attr:`MeasurementCheck.problems`.

    Returns
    -------
    list of str
        Sentences naming the option to pass (``--think-time-ms MS`` ...); empty when nothing is missing.

    Examples
    --------
    >>> rows = pd.DataFrame({"point_id": ["a", "b"], "clients": [100.0, 200.0], "think_time_ms": [None, None],
    ...                      "cpu_gcp_pct": [50.0, 90.0], "n_gcp": [None, None]})
    >>> broken = pd.DataFrame({"point_id": ["a", "b"], "column": ["clients", "clients"]})
    >>> for hint in setup_hints(rows, broken):
    ...     print(hint)
    2 of 2 rows break Little's law and give no think time (read as 0): pass the test's --think-time-ms MS
    2 of 2 rows give APPL% (cpu_gcp_pct) without n_gcp, so it was not held to the engines: pass --n-gcp N
    """
    def absent(column: str) -> pd.Series:
        return frame[column].isna() if column in frame else pd.Series(True, index=frame.index)

    hints = []
    littles = set(problems.loc[problems["column"] == "clients", "point_id"])
    unthought = frame["point_id"].isin(littles) & absent("think_time_ms")
    if unthought.any():
        hints.append(f"{int(unthought.sum())} of {len(frame)} rows break Little's law and give no think time "
                     f"(read as 0): pass the test's {SETUP_OPTIONS['think_time_ms']} MS")
    # an APPL% without its engine counts is skipped by the gate (NaN headroom), not passed
    unheld = pd.Series(False, index=frame.index)
    missing: set[str] = set()
    columns: list[str] = []
    for column, engines in schema.PCT_BOUNDS.items():
        given = ~absent(column)
        lacking = [e for e in engines if (given & absent(e)).any()]
        if lacking:
            columns.append(column)
            missing.update(lacking)
            unheld |= given & pd.concat([absent(e) for e in lacking], axis=1).any(axis=1)
    if missing:
        counts = [e for e in SETUP_OPTIONS if e in missing]
        hints.append(f"{int(unheld.sum())} of {len(frame)} rows give APPL% ({', '.join(columns)}) without "
                     f"{' and '.join(counts)}, so it was not held to the engines: pass "
                     + " and ".join(f"{SETUP_OPTIONS[e]} N" for e in counts))
    return hints


# --- putting a table in the project -------------------------------------------------------------


@dataclass(frozen=True)
class AddedTable:
    """What :func:`add_table` wrote: the table, its ``sources.csv`` row, and the gate's verdict."""

    path: Path
    source_id: str
    frame: pd.DataFrame
    source_row: dict[str, object]
    check: MeasurementCheck
    replaced: bool


def _cell(value: object) -> str:
    """A cell as the bundled tables write it.

    Empty for missing, integers without ``.0``, other numbers in the shortest form that reads back
    to the same float; text that a spreadsheet would run as a formula (``=HYPERLINK(...)`` as a
    source's title) behind a ``'`` (:func:`kneecap.csvsafe.neutralise_cell`).
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(neutralise_cell(str(value)))


def _csv_text(columns: tuple[str, ...] | list[str], rows: list[Mapping[str, object]]) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buffer.getvalue()


def _sources_text(text: str, source_id: str, row: Mapping[str, object]) -> str:
    """``sources.csv`` with ``row`` as the row of ``source_id`` (replacing one already there).

    The other rows are written back cell for cell as they were read, with the file's own line
    ending, so a bundled ``sources.csv`` changes only by the added row (``git diff`` shows one line).
    """
    terminator = "\r\n" if "\r\n" in text else "\n"
    records = list(csv.reader(io.StringIO(text, newline="")))
    header, body = records[0], [r for r in records[1:] if r and r[0] != source_id]
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator=terminator)
    writer.writerows([header, *body, [_cell(row.get(c)) for c in header]])
    return buffer.getvalue()


def _replace_text(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file beside it, then one ``os.replace``)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8", newline="")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _single(frame: pd.DataFrame, column: str) -> float | None:
    """The value every row shares, for the ``sources.csv`` row (None when rows differ or say nothing)."""
    values = frame[column].dropna().unique()
    return float(values[0]) if len(values) == 1 and frame[column].notna().all() else None


def _workload_kind(frame: pd.DataFrame) -> str:
    """As ``dim_workloads`` classifies a workload (pipelines/sql/marts/dim_workloads.sql)."""
    if frame["clients"].notna().any():
        return "closed" if frame["think_time_ms"].fillna(0).max() > 0 else "closed_zero_think"
    return "open" if frame["resp_ms"].notna().any() else "cost"


def add_table(
    path: str | os.PathLike[str], reference_dir: str | os.PathLike[str], *, title: str,
    sql_root: str | os.PathLike[str], config: ValidationConfig = ValidationConfig(),
    source_id: str | None = None, section: str = "", locator: str = "", units: str = "",
    fill: Mapping[str, float] | None = None, notes: str = "", replace: bool = False,
) -> AddedTable:
    """Put a measurement table in ``reference_dir`` with its citation, ready for the pipeline.

    Writes ``<reference_dir>/<source_id>.csv`` with the full reference header (the columns the
    file lacked are empty, ``source_file`` and ``source_locator`` filled from the citation) and
    the table's row in ``<reference_dir>/sources.csv``; each file is replaced in one step.

    Parameters
    ----------
    path
        The table: at least ``workload`` and ``clients`` or ``tps`` (see
        :func:`kneecap.warehouse.read_measurement_csv`).
    title
        Where the numbers come from (a report's title, "in-house load test 2026-11, LPAR SYSA").
    source_id
        The table's name in the project (default: the file's stem); letters, digits, ``_``, ``-``.
    section, locator, units, notes
        The rest of the citation: section, table or figure (default "whole file"), the units
        (default :data:`DEFAULT_UNITS`), free notes.
    fill
        Values for columns the whole table shares but does not carry (``n_gcp``, ``n_ziip``,
        ``think_time_ms`` ...): they fill empty cells only; a row that says otherwise keeps its own.
    replace
        Replace a table of the same ``source_id`` already in the project (else refused).

    Returns
    -------
    AddedTable
        With the gate's verdict: rows that break a rule are written as measured (nothing is lost)
        and the validate stage will set them aside and publish the others.

    Raises
    ------
    kneecap.warehouse.ReferenceDataError
        A cell or header the contract refuses (nothing written).
    TableError
        A bad ``source_id``, a name already taken, a ``fill`` column kneecap does not know.
    """
    path, reference_dir = Path(path), Path(reference_dir)
    source_id = source_id or path.stem
    if not _SOURCE_ID.match(source_id):
        raise TableError(f"{path}: source id {source_id!r}: use letters, digits, '_' and '-' (it names the file); "
                         "choose one with --id")
    if not title.strip():
        raise TableError(f"{path}: a table needs its source: say where the numbers come from (--source)")
    target = reference_dir / f"{source_id}.csv"
    if target.name in warehouse.REFERENCE_OTHER_FILES:
        raise TableError(f"{path}: {target.name} is not a measurement table's name; choose another with --id")
    frame = warehouse.read_measurement_csv(path)
    stated = set(frame["source_id"].dropna()) - {path.stem}
    if stated and stated != {source_id}:
        raise TableError(f"{path}: its source_id column says {sorted(stated)}, the table is added as "
                         f"{source_id!r}; make them agree (--id, or drop the column)")
    frame["source_id"] = source_id
    frame = fill_setup(frame, fill or {}, path)
    frame["source_file"] = frame["source_file"].fillna(path.name)
    frame["source_locator"] = frame["source_locator"].fillna(locator or "whole file")
    sources_path = reference_dir / "sources.csv"
    sources = warehouse.read_sources_csv(sources_path)
    taken = target.exists() or source_id in set(sources["source_id"])
    if taken and not replace:
        raise TableError(f"{target}: a table named {source_id!r} is already in the project; --replace to "
                         "replace it, or --id for another name")
    check = validate_measurements(frame, sources=sources, sql_root=sql_root, config=config)
    source_row: dict[str, object] = {
        "source_id": source_id, "source_file": path.name, "title": title.strip(), "section": section,
        "table_or_figure": locator or "whole file", "units": units or DEFAULT_UNITS, "cpc": "",
        **{c: _single(frame, c) for c in ("n_gcp", "n_ziip", "think_time_ms", "req_bytes", "resp_bytes")},
        "workload_kind": _workload_kind(frame), "notes": notes or f"added with `kneecap add-table {path.name}`",
    }
    rows = frame.drop(columns="source_line").to_dict("records")
    with open(sources_path, encoding="utf-8", newline="") as fh:  # keep its line endings as they are
        sources_text = _sources_text(fh.read(), source_id, source_row)
    _replace_text(target, _csv_text(schema.REFERENCE_CSV_COLUMNS, rows))
    _replace_text(sources_path, sources_text)
    return AddedTable(target, source_id, frame, source_row, check, replaced=taken)
