"""The entry points: a document's CPU and WLMGL intervals read into tables, bad intervals quarantined."""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

import pandas as pd

from kneecap.rmf.postprocessor._columns import (
    CPU_COLUMNS,
    PARTITION_COLUMNS,
    QUARANTINE_COLUMNS,
    WORKLOAD_COLUMNS,
    frame,
)
from kneecap.rmf.postprocessor._cpu import cpu_rows, partition_rows
from kneecap.rmf.postprocessor._document import Source, source_name
from kneecap.rmf.postprocessor._errors import RMFReportError
from kneecap.rmf.postprocessor._parse import iter_reports
from kneecap.rmf.postprocessor._workload import workload_rows


class PostprocessorTables(NamedTuple):
    """The tables read from one Postprocessor XML document (empty frames when absent).

    ``quarantine`` (:data:`QUARANTINE_COLUMNS`) lists the intervals left out and why; the other
    intervals' rows are in the tables.
    """

    cpu: pd.DataFrame
    partition: pd.DataFrame
    workload: pd.DataFrame
    quarantine: pd.DataFrame


def read_postprocessor(source: Source) -> PostprocessorTables:
    """Read every CPU and WLMGL interval of a Postprocessor XML document.

    An interval that cannot be read (an unparseable value or time, an interval element the XML
    breaks off in) is quarantined with the reason, naming the interval and the field, and the
    other intervals are read: one bad interval in a week of reports costs that interval only.

    Parameters
    ----------
    source : path or binary file object
        ddsml document as written by the RMF DDS (``rmfpp.xml``) or the Postprocessor
        (``XPRPTS`` / ``XPXSRPTS``). Reports of other types are skipped.

    Returns
    -------
    PostprocessorTables
        ``cpu`` (:data:`CPU_COLUMNS`), ``partition`` (:data:`PARTITION_COLUMNS`),
        ``workload`` (:data:`WORKLOAD_COLUMNS`), ``quarantine`` (:data:`QUARANTINE_COLUMNS`).

    Raises
    ------
    RMFReportError
        DDS error reply, XML malformed before the first interval, an over-long text node, a
        document with no CPU or WLMGL interval (it would add nothing), or one whose every CPU and
        WLMGL interval was quarantined (the first reason is given); names the file.
    """
    where = source_name(source)
    cpu: list[dict[str, object]] = []
    part: list[dict[str, object]] = []
    wl: list[dict[str, object]] = []
    kinds: Counter[str] = Counter()
    quarantine: list[tuple[int, str]] = []
    read = 0

    def bad(ordinal: int, reason: str) -> None:
        quarantine.append((ordinal, reason))

    for report in iter_reports(source, on_bad=bad):
        kinds[report.metric_id or report.kind] += 1
        if report.metric_id not in ("CPU", "WLMGL"):
            continue
        start = f" {report.start_at:%Y-%m-%d %H:%M:%S}" if report.start_at is not None else ""
        at = f"{where}: interval {report.ordinal} ({report.metric_id}{start})"
        try:
            if report.metric_id == "CPU":
                rows = cpu_rows(report, at), partition_rows(report, at)
                cpu.extend(rows[0])
                part.extend(rows[1])
            else:
                wl.extend(workload_rows(report, at))
        except RMFReportError as exc:
            bad(report.ordinal, str(exc))
            continue
        read += 1
    if not read:
        if quarantine:
            more = f" (and {len(quarantine) - 1} more interval(s))" if len(quarantine) > 1 else ""
            raise RMFReportError(f"{quarantine[0][1]}{more}: no interval of the file could be read")
        if not (kinds["CPU"] or kinds["WLMGL"]):
            raise RMFReportError(f"{where}: no CPU Activity or Workload Activity (WLMGL) report in this "
                                 f"document ({_holds(kinds)}): nothing to ingest")
    return PostprocessorTables(
        cpu=frame(cpu, CPU_COLUMNS),
        partition=frame(part, PARTITION_COLUMNS),
        workload=frame(wl, WORKLOAD_COLUMNS),
        quarantine=pd.DataFrame(quarantine, columns=list(QUARANTINE_COLUMNS)).astype({"interval": "int64"}),
    )


def _holds(kinds: Counter[str]) -> str:
    """What a document holds instead of the reports kneecap reads.

    Examples
    --------
    >>> _holds(Counter())
    'it holds no interval reports at all'
    >>> _holds(Counter({"PAGING": 2, "CPC": 1}))
    'it holds 1 CPC, 2 PAGING interval report(s)'
    """
    if not kinds:
        return "it holds no interval reports at all"
    return "it holds " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) + " interval report(s)"


def read_cpu_report(source: Source) -> PostprocessorTables:
    """Read a Postprocessor CPU report; see :func:`read_postprocessor`.

    Raises :class:`RMFReportError` when the document holds no CPU interval at all.
    """
    tables = read_postprocessor(source)
    if tables.cpu.empty:
        raise RMFReportError(f"{source_name(source)}: no CPU Activity report intervals found")
    return tables


def read_workload_report(source: Source) -> pd.DataFrame:
    """Read a Postprocessor Workload Activity (WLMGL) report into ``smf72_workload`` columns.

    Intervals :func:`read_postprocessor` quarantines are left out (it lists them). Raises
    :class:`RMFReportError` when the document holds no readable WLMGL interval.
    """
    tables = read_postprocessor(source)
    if tables.workload.empty:
        raise RMFReportError(f"{source_name(source)}: no Workload Activity (WLMGL) report intervals found")
    return tables.workload
