"""A file uploaded to the desk, read with the pipeline's readers and shown, never published.

The desk's Data page takes a measurement CSV, an SMF dump or an RMF Postprocessor XML report as
bytes (:func:`read_upload`). Which it is comes from the name and the first bytes
(:func:`upload_kind`, by :func:`kneecap.ingest.sniff.is_xml` as ``kneecap ingest`` tells XML from
SMF); nothing is unpickled or executed. A CSV is checked cell by cell and then by the gate's
``fct_measurements`` suite (:func:`check_measurements`, as ``kneecap check`` does); SMF and XML are
decoded in a locked scratch folder (:func:`kneecap.ingest.cli.scratch_folder`) by the readers the
``decode_smf`` stage uses, so an upload is refused or quarantined as an ingest of the same file is.

A module of its own beside :mod:`kneecap.ingest` rather than in it: it reads CSVs with
:mod:`kneecap.warehouse` and :mod:`kneecap.tables`, and :mod:`kneecap.warehouse` reads the
ingest's decoded tables, so inside ``ingest`` it would close an import circle; and no pipeline
stage imports it, so a change to it reruns none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from kneecap import tables, warehouse
from kneecap.config import ValidationConfig
from kneecap.ingest.cli import scratch_folder
from kneecap.ingest.sniff import is_xml

__all__ = ["MAX_UPLOAD_MB", "UploadError", "cell_problems", "check_measurements", "read_upload", "upload_kind",
           "upload_name"]

#: The largest upload read, MB (``kneecap ingest`` takes larger dumps).
MAX_UPLOAD_MB = 200

#: ``(fraction done, what is being done)``, called as an upload is read.
Progress = Callable[[float, str], None]


class UploadError(ValueError):
    """An upload that could not be read; ``problems`` lists one row per bad cell, line or record."""

    def __init__(self, message: str, problems: pd.DataFrame | None = None) -> None:
        super().__init__(message)
        self.problems = problems if problems is not None else pd.DataFrame()


_CELL_PROBLEM = re.compile(r"^(?P<file>.*?):(?P<line>\d+): (?P<column>[^:]+): (?P<problem>.*)$")


def cell_problems(message: str, filename: str) -> pd.DataFrame:
    """``file:line: column: problem`` lines (kneecap's reference-data errors) as a table.

    Columns ``file`` (``filename``), ``line``, ``column``, ``problem``; a line of another form is a
    problem of the whole file (no line or column).

    Examples
    --------
    >>> cell_problems("t.csv:3: resp_ms: not a number ('abc')", "t.csv").iloc[0].tolist()
    ['t.csv', 3, 'resp_ms', "not a number ('abc')"]
    """
    rows = []
    for line in message.splitlines():
        m = _CELL_PROBLEM.match(line)
        if m:
            rows.append({"file": filename, "line": int(m["line"]), "column": m["column"], "problem": m["problem"]})
        elif line.strip():
            rows.append({"file": filename, "line": None, "column": None, "problem": line.strip()})
    return pd.DataFrame(rows, columns=["file", "line", "column", "problem"])


def upload_name(filename: str) -> str:
    """The browser's file name as a plain file name: ``..``, ``.`` or a path would name a folder.

    Examples
    --------
    >>> upload_name("../../etc/passwd"), upload_name(".."), upload_name("week.xml")
    ('passwd', 'upload', 'week.xml')
    """
    name = Path(filename).name
    return "upload" if name in ("", ".", "..") else name


def upload_kind(path: Path) -> str:
    """``csv``, ``xml`` or ``smf``: a CSV by its name, XML as ``kneecap ingest`` tells it, else SMF.

    ``path`` is the uploaded file under its uploaded name; only its first bytes are read.
    """
    if path.suffix.lower() == ".csv":
        return "csv"
    return "xml" if is_xml(path) else "smf"


def check_measurements(frame: pd.DataFrame, *, sources: pd.DataFrame | None, sql_root: str | os.PathLike[str],
                       config: ValidationConfig) -> dict[str, Any]:
    """The gate's verdict on uploaded rows, by :func:`kneecap.tables.validate_measurements`.

    Those are the rules ``kneecap check`` and the validate stage apply. Returns the validation
    summary (``success``, ``n_rows``, ``n_expectations``), one row per broken rule and column with
    the count of rows (``failures``), the rows the gate would set aside with the file line and the
    problem in words (``quarantine``) and the rows it would publish (``publishable``).
    """
    check = tables.validate_measurements(frame, sources=sources, sql_root=sql_root, config=config)
    problems = check.problems
    failures = (problems.groupby(["rule", "column"], sort=True).size().rename("rows").reset_index()
                if not problems.empty else pd.DataFrame(columns=["rule", "column", "rows"]))
    quarantine = problems[["line", "point_id", "column", "value", "problem"]].reset_index(drop=True)
    return {"success": check.ok, "n_rows": check.n_rows, "n_expectations": check.n_expectations,
            "failures": failures, "quarantine": quarantine, "publishable": check.publishable()}


def read_upload(filename: str, payload: bytes, *, sources_csv: str | os.PathLike[str],
                sql_root: str | os.PathLike[str], config: ValidationConfig, max_mb: float = MAX_UPLOAD_MB,
                progress: Progress | None = None, fill: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Parse an uploaded file (never unpickled or executed) and say what it held.

    Parameters
    ----------
    filename, payload
        The upload's name (made a plain file name, :func:`upload_name`) and bytes.
    sources_csv, sql_root, config
        What a CSV's rows are validated with (:func:`check_measurements`): the project's
        ``sources.csv``, the pipeline's SQL and ``params.yaml`` ``validate``.
    max_mb
        The largest upload read.
    progress
        Called as the file is read (:data:`Progress`).
    fill
        Values for the cells a CSV's rows leave empty (``n_gcp``, ``n_ziip``, ``think_time_ms``:
        what ``kneecap check`` and ``add-table`` take as options, :func:`kneecap.tables.fill_setup`).

    Returns
    -------
    dict
        ``kind`` (in words), ``rows``, ``tables`` (name -> frame), ``quarantine`` (rows or records set
        aside, with the reason, under the upload's name); for a CSV ``validation``
        (:func:`check_measurements`), for SMF ``records`` and ``records_by_type``.

    Raises
    ------
    UploadError
        Too large, empty, or not readable as the format it looks like; ``problems`` lists the
        bad cells of a CSV.
    """
    filename = upload_name(filename)
    size = len(payload)
    if size > max_mb * 1024 * 1024:
        raise UploadError(f"{filename}: {size / 1e6:.0f} MB is over the {max_mb:g} MB upload limit; "
                          "use `kneecap ingest` for large dumps")
    if size == 0:
        raise UploadError(f"{filename}: the file is empty")
    report = progress or (lambda fraction, text: None)
    # a scratch folder a killed desk leaves is removed by the next upload or ingest (locked while in use)
    with scratch_folder() as tmp:
        path = tmp / filename
        path.write_bytes(payload)
        kind = upload_kind(path)
        if kind == "csv":
            return _read_csv(path, filename, report, fill, sources_csv=sources_csv, sql_root=sql_root, config=config)
        if kind == "xml":
            return _read_xml(path, filename, report)
        return _read_smf(path, filename, report, size)


def _read_csv(path: Path, filename: str, report: Progress, fill: Mapping[str, float] | None, *,
              sources_csv: str | os.PathLike[str], sql_root: str | os.PathLike[str],
              config: ValidationConfig) -> dict[str, Any]:
    report(0.1, "reading the CSV")
    try:
        frame = warehouse.read_measurement_csv(path)
    except UnicodeDecodeError as exc:
        raise UploadError(f"{filename}: not a UTF-8 text CSV ({exc.reason} at byte {exc.start})") from exc
    except warehouse.ReferenceDataError as exc:
        message = str(exc).replace(str(path), filename)
        raise UploadError(message, cell_problems(message, filename)) from exc
    if fill:
        try:
            frame = tables.fill_setup(frame, fill, filename)
        except tables.TableError as exc:
            raise UploadError(str(exc)) from exc
    report(0.4, f"{len(frame)} rows read; validating")
    validation = check_measurements(frame, sources=warehouse.read_sources_csv(sources_csv), sql_root=sql_root,
                                    config=config)
    report(1.0, "validated")
    return {"kind": "measurement CSV", "rows": len(frame), "tables": {"measurements": frame},
            "quarantine": validation["quarantine"], "validation": validation}


def _read_xml(path: Path, filename: str, report: Progress) -> dict[str, Any]:
    from kneecap.rmf.postprocessor import RMFReportError, read_postprocessor  # noqa: PLC0415 - only XML needs it

    report(0.1, "reading the RMF Postprocessor XML")
    try:
        decoded = read_postprocessor(path)
    except (RMFReportError, ValueError) as exc:
        raise UploadError(str(exc).replace(str(path), filename)) from exc
    report(1.0, "read")
    found = {f"rmf_{name}": frame for name, frame in decoded._asdict().items()
             if name != "quarantine" and not frame.empty}
    return {"kind": "RMF Postprocessor XML", "rows": sum(len(f) for f in found.values()), "tables": found,
            "quarantine": decoded.quarantine.assign(reason=decoded.quarantine["reason"].str.replace(
                str(path), filename, regex=False))}


def _read_smf(path: Path, filename: str, report: Progress, size: int) -> dict[str, Any]:
    from kneecap.ingest.smf import ingest_paths  # noqa: PLC0415 - the SMF decoders, only SMF needs them
    from kneecap.ingest.store import table_files  # noqa: PLC0415

    done = {"bytes": 0, "records": 0}

    def advance(records: int, nbytes: int) -> None:
        done["records"] += records
        done["bytes"] += nbytes
        report(min(done["bytes"] / size, 1.0), f"{done['records']:,} records, {done['bytes'] / 1e6:,.1f} MB")

    out = path.parent / "decoded"
    # one process: the desk's server runs threads, and a fork of a threaded process can inherit
    # a lock another thread holds; an upload is small enough not to need the framing child
    summary = ingest_paths([path], out, progress=advance, workers=1)
    result = summary.files[0]
    if result.status == "failed":
        raise UploadError(str(result.error).replace(str(path), filename))
    report(1.0, f"{result.records:,} records decoded")
    decoded = {p.name: pd.concat([pd.read_parquet(f) for f in table_files(p)], ignore_index=True)
               for p in sorted(out.iterdir()) if p.is_dir() and table_files(p)
               and p.name not in ("smf_record_counts", "smf_quarantine")}
    quarantine = summary.quarantine.copy()
    if "file" in quarantine:
        quarantine["file"] = filename
    return {"kind": f"SMF dump ({result.framing})", "rows": sum(result.rows.values()), "records": result.records,
            "records_by_type": summary.records_by_type, "tables": decoded, "quarantine": quarantine}
