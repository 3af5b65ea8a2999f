"""Streaming reader for RMF Postprocessor XML ("ddsml") reports: CPU and Workload Activity.

The RMF Distributed Data Server (GPMSERVE, ``/gpm/rmfpp.xml?reports=CPU``) and the batch
Postprocessor (ddnames ``XPRPTS`` / ``XPXSRPTS``) write every report as one ``<ddsml>``
document holding one ``<postprocessor>`` element per interval::

    <ddsml>
      <server>...</server>
      <postprocessor>                       one per report interval
        <metric id="CPU" | id="WLMGL" option="...">...</metric>
        <resource><resname>RPRT</resname><restype>SYSTEM|SYSPLEX</restype></resource>
        <time-data><display-start>MM/DD/YYYY-HH.MM.SS</display-start>
                   <report-interval unit="minutes">MM:SS:TTT</report-interval></time-data>
        <segment><name>CPU Activity</name>
          <part><name>...</name><var-list><var><name/><value/></var></var-list>
                <table><column-headers><col/>...</column-headers><row><col/>...</row></table>
          </part>
          <message><description>All data zero</description><severity>1</severity></message>
        </segment>
      </postprocessor>
    </ddsml>

Monitor III replies use ``<report>`` in place of ``<postprocessor>``; a DDS error reply is a
``<postprocessor>``/``<report>`` whose only content is a ``<message id="GPM....">``.

The file is read with defusedxml's :func:`~defusedxml.ElementTree.iterparse` (the standard
library's, with a document type declaration, an entity declaration or an external reference refused
by the parser itself once expat has decoded the bytes, so in UTF-16 as in UTF-8); every interval
element is converted to a small immutable :class:`DdsReport` and then removed from the tree, so
memory stays flat however many intervals a file holds.

Two tables come out of a CPU report and one out of a Workload Activity (WLMGL) report. Their
columns are those of the binary SMF tables built by :mod:`kneecap.smf` (``smf70_cpu`` from
SMF 70.1, ``smf72_workload`` from SMF 72.3) so one SQL model serves both sources.

Timestamps are the report's own *local* display times (``display-start``), as naive
:class:`pandas.Timestamp` values; SMF header times are local too.

References
----------
IBM, *z/OS RMF Report Analysis*, "CPU Activity report" and "Partition Data report" (field
meanings: TIME % ONLINE / LPAR BUSY / MVS BUSY) and "Workload Activity report" (SERVICE TIME,
APPL %, TRANSACTIONS, TRANS-TIME).
IBM, *z/OS RMF Programmer's Guide*, "Accessing performance data using the RMF Distributed
Data Server" (ddsml document returned by ``/gpm/rmfpp.xml``).
IBM, *z/OS RMF User's Guide*, "How to work with Postprocessor XML reports" (XPRPTS, XPXSRPTS).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, NamedTuple

import numpy as np
import pandas as pd
from defusedxml import DefusedXmlException, DTDForbidden, EntitiesForbidden
from defusedxml import ElementTree as DefusedET

from kneecap.smf import type70, type72

__all__ = [
    "CPU_COLUMNS",
    "PARTITION_COLUMNS",
    "WORKLOAD_COLUMNS",
    "SMF72_WORKLOAD_COLUMNS",
    "DdsMessage",
    "DdsPart",
    "DdsReport",
    "DdsSegment",
    "DdsTable",
    "PostprocessorTables",
    "RMFReportError",
    "empty_table",
    "iter_reports",
    "read_cpu_report",
    "read_postprocessor",
    "read_workload_report",
]

Source = str | os.PathLike[str] | IO[bytes]

#: ``smf70_cpu`` grain: one row per system x interval x processor type. Same columns, in the
#: same order, as the binary SMF 70.1 table (:data:`kneecap.smf.type70.COLUMNS`) without its
#: ``n_records`` bookkeeping column; ``sysplex`` is null (the CPU report does not print it).
CPU_COLUMNS: tuple[str, ...] = tuple(c for c in type70.COLUMNS if c != "n_records")

#: ``rmf_partition`` grain: one row per system x interval x partition x processor type
#: (the Partition Data Report; SUM rows are dropped, ``*PHYSICAL*`` is kept and flagged).
PARTITION_COLUMNS: tuple[str, ...] = (
    "system_id",
    "interval_start_at",
    "interval_s",
    "partition_name",
    "is_own_partition",
    "is_physical",
    "partition_status",
    "cpu_type",
    "weight",
    "msu_defined",
    "msu_actual",
    "n_logical",
    "effective_dispatch_s",
    "total_dispatch_s",
    "log_proc_effective_pct",
    "log_proc_total_pct",
    "phys_lpar_mgmt_pct",
    "phys_effective_pct",
    "phys_total_pct",
)

#: ``smf72_workload`` grain: one row per (system or sysplex) x interval x class x period.
#: The first 28 columns are exactly those of the binary SMF 72.3 table
#: (:data:`kneecap.smf.type72.COLUMNS`, checked by a test); the XML-only fields follow.
SMF72_WORKLOAD_COLUMNS: tuple[str, ...] = type72.COLUMNS

WORKLOAD_COLUMNS: tuple[str, ...] = SMF72_WORKLOAD_COLUMNS + (
    "ended_per_s",
    "avg_trans",
    "mpl",
    "exec_ms",
    "queued_ms",
    "resp_std_ms",
    "rct_s",
    "iit_s",
    "hst_s",
    "zaap_s",
    "appl_aapcp_pct",
    "appl_aap_pct",
    "exec_velocity_pct",
    "perf_index",
)


class RMFReportError(ValueError):
    """An RMF XML file is not a usable report (DDS error reply, malformed XML, bad value)."""


# --------------------------------------------------------------------------------------
# Generic ddsml document model
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DdsMessage:
    """A ``<message>``: DDS message id (e.g. ``GPM0739E``), text and severity."""

    id: str | None
    description: str
    severity: int | None


@dataclass(frozen=True)
class DdsTable:
    """A ``<table>``: column headers and rows.

    ``row_types`` holds each row's ``type`` attribute (``"SUM"`` for RMF's TOTAL/AVERAGE lines, else ``None``).
    """

    columns: tuple[str, ...]
    rows: tuple[tuple[str | None, ...], ...]
    row_types: tuple[str | None, ...]

    def records(self, *, include_sum: bool = True) -> list[dict[str, str | None]]:
        """Rows as ``{column header: text}`` dicts (missing cells are ``None``)."""
        out = []
        for values, kind in zip(self.rows, self.row_types, strict=True):
            if kind == "SUM" and not include_sum:
                continue
            padded = tuple(values) + (None,) * (len(self.columns) - len(values))
            rec: dict[str, str | None] = dict(zip(self.columns, padded, strict=False))
            rec["__type__"] = kind
            out.append(rec)
        return out


@dataclass(frozen=True)
class DdsPart:
    """A ``<part>``: optional name, ``<var-list>`` as a dict, and its tables."""

    name: str | None
    variables: dict[str, str | None]
    tables: tuple[DdsTable, ...]


@dataclass(frozen=True)
class DdsSegment:
    """A ``<segment>``: name, parts and segment-level messages (e.g. "All data zero")."""

    name: str
    parts: tuple[DdsPart, ...]
    messages: tuple[DdsMessage, ...]

    def part(self, name: str | None) -> DdsPart | None:
        """First part with this name (``None`` = the unnamed header part)."""
        for p in self.parts:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True)
class DdsReport:
    """One interval report (``<postprocessor>``) or Monitor III reply (``<report>``)."""

    kind: str
    metric_id: str | None
    metric_option: str | None
    resname: str | None
    restype: str | None
    start_at: pd.Timestamp | None
    end_at: pd.Timestamp | None
    interval_s: float
    segments: tuple[DdsSegment, ...]
    messages: tuple[DdsMessage, ...] = field(default=())
    #: Its place among the document's interval reports, from 1 (how errors and the quarantine name it).
    ordinal: int = 0

    def segment(self, name: str) -> DdsSegment | None:
        """First segment with this name."""
        for s in self.segments:
            if s.name == name:
                return s
        return None


def _text(elem: ET.Element | None) -> str | None:
    """Stripped element text; ``None`` for a missing or empty element.

    Real DDS output is compact, but pretty-printed copies wrap every value in whitespace.
    """
    if elem is None or elem.text is None:
        return None
    txt = elem.text.strip()
    return txt or None


def _message(elem: ET.Element) -> DdsMessage:
    sev = _text(elem.find("severity"))
    return DdsMessage(
        id=elem.get("id"),
        description=_text(elem.find("description")) or "",
        severity=int(sev) if sev is not None and sev.lstrip("-").isdigit() else None,
    )


def _table(elem: ET.Element) -> DdsTable:
    headers = elem.find("column-headers")
    columns = tuple(_text(c) or "" for c in (headers if headers is not None else ()))
    rows = []
    kinds = []
    for row in elem.iterfind("row"):
        rows.append(tuple(_text(c) for c in row.iterfind("col")))
        kinds.append(row.get("type"))
    return DdsTable(columns=columns, rows=tuple(rows), row_types=tuple(kinds))


def _part(elem: ET.Element) -> DdsPart:
    variables: dict[str, str | None] = {}
    for vlist in elem.iterfind("var-list"):
        for var in vlist.iterfind("var"):
            name = _text(var.find("name"))
            # First occurrence wins: a repeated name would silently overwrite a real value.
            if name is not None and name not in variables:
                variables[name] = _text(var.find("value"))
    return DdsPart(
        name=_text(elem.find("name")),
        variables=variables,
        tables=tuple(_table(t) for t in elem.iterfind("table")),
    )


def _segment(elem: ET.Element) -> DdsSegment:
    return DdsSegment(
        name=_text(elem.find("name")) or "",
        parts=tuple(_part(p) for p in elem.iterfind("part")),
        messages=tuple(_message(m) for m in elem.iterfind("message")),
    )


_DISPLAY_FORMATS = ("%m/%d/%Y-%H.%M.%S", "%m/%d/%Y %H:%M:%S")


def _display_time(text: str | None, where: str) -> pd.Timestamp | None:
    """Parse ``display-start``.

    It is ``04/12/2022-00.00.00`` (Postprocessor, locale en-us) or ``04/12/2022 00:23:20`` (Monitor III).
    """
    if text is None:
        return None
    for fmt in _DISPLAY_FORMATS:
        try:
            return pd.Timestamp(datetime.strptime(text, fmt))
        except ValueError:
            continue
    raise RMFReportError(f"{where}: unrecognised display time {text!r}")


_INTERVAL_RE = re.compile(r"^(\d+):(\d{1,2}):(\d{1,3})$")


def _report_interval_s(elem: ET.Element | None, where: str) -> float:
    r"""Interval length in seconds from ``<report-interval unit="minutes">MM:SS:TTT``.

    .. math:: t = 60\,MM + SS + TTT / 1000

    (RMF prints the interval as minutes, seconds and thousandths, e.g. ``29:59:997``
    = 1799.997 s; the text report shows the same value as ``29.59.997``.)
    """
    if elem is None:
        return math.nan
    text = _text(elem)
    unit = elem.get("unit", "minutes")
    if text is None:
        return math.nan
    m = _INTERVAL_RE.match(text)
    if unit == "minutes" and m:
        return int(m.group(1)) * 60 + int(m.group(2)) + int(m.group(3).ljust(3, "0")) / 1000
    if unit == "seconds":
        return _number(text, where)
    raise RMFReportError(f"{where}: unrecognised report-interval {text!r} (unit={unit!r})")


def _report(elem: ET.Element, where: str, ordinal: int = 0) -> DdsReport:
    metric = elem.find("metric")
    resource = elem.find("resource")
    tdata = elem.find("time-data")
    start = end = None
    interval_s = math.nan
    if tdata is not None:
        start = _display_time(_text(tdata.find("display-start")), where)
        end = _display_time(_text(tdata.find("display-end")), where)
        interval_s = _report_interval_s(tdata.find("report-interval"), where)
        if math.isnan(interval_s) and tdata.find("data-range") is not None:
            interval_s = _number(_text(tdata.find("data-range")), where)
    return DdsReport(
        kind=elem.tag,
        metric_id=metric.get("id") if metric is not None else None,
        metric_option=metric.get("option") if metric is not None else None,
        resname=_text(resource.find("resname")) if resource is not None else None,
        restype=_text(resource.find("restype")) if resource is not None else None,
        start_at=start,
        end_at=end,
        interval_s=interval_s,
        segments=tuple(_segment(s) for s in elem.iterfind("segment")),
        messages=tuple(_message(m) for m in elem.iterfind("message")),
        ordinal=ordinal,
    )


def _source_name(source: Source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


#: Message severities at or above this make a report an error reply. The DDS error replies
#: in the zowe/zebra samples (GPM0739E, GPM0731I) carry severity 3; "All data zero" is 1.
ERROR_SEVERITY = 3


#: Longest run of bytes between two ``<``: a text node, or a tag with its attributes. RMF writes
#: values of a few dozen bytes; 1 MiB is far past any report, and bounds what one node costs
#: (ElementTree keeps a node's whole text in memory: a 50 MB text node took 1.33 GB).
MAX_TEXT_BYTES = 1 << 20


#: Markup RMF never writes and a parser must not act on: a document type declaration can declare
#: entities that expand a few hundred bytes into gigabytes ("billion laughs") past any text limit.
#: This byte check finds them early, with their offset, in ASCII-compatible encodings only; the parser
#: (:func:`_refused_markup`) refuses them in every encoding expat reads (UTF-16: issue 35).
_REFUSED_MARKUP = (b"<!DOCTYPE", b"<!ENTITY")

#: Why a document type or entity declaration is refused (the byte check and the parser say the same).
_REFUSED_WHY = ("RMF reports have no document type or entity declarations, and a parser that expanded them "
                "could be made to use any amount of memory: refused")


def _refused_markup(where: str, exc: DefusedXmlException) -> RMFReportError:
    """The error for markup defusedxml's parser refused (a DTD, an entity declaration, an external reference)."""
    name = str(getattr(exc, "name", "") or "")[:80]  # a name is bounded by the text limit only: cut it
    if isinstance(exc, DTDForbidden):
        what = f"a document type declaration <!DOCTYPE {name}>"
    elif isinstance(exc, EntitiesForbidden):
        what = f"an entity declaration <!ENTITY {name}>"
    else:
        what = f"an external reference ({type(exc).__name__})"
    return RMFReportError(f"{where}: {what}: {_REFUSED_WHY}")


class _BoundedNodes:
    """A binary reader that raises :class:`RMFReportError` once a text or tag outgrows :data:`MAX_TEXT_BYTES`.

    It raises before the parser has buffered more than that of it, and at a document type or
    entity declaration (:data:`_REFUSED_MARKUP`) before the parser sees it.

    Reads are capped at :data:`MAX_TEXT_BYTES`, so a run inside one read is shorter than the
    limit; only the runs that cross reads need counting.
    """

    def __init__(self, raw: IO[bytes], where: str, prefix: bytes = b"", start: int = 0) -> None:
        self._raw, self._where = raw, where
        self._prefix = prefix  # handed out first: a root element for a parse that starts mid-file
        self._run = 0  # bytes since the last "<"
        self._pos = start - len(prefix)  # the file's offset of the next byte handed out
        self._tail = b""  # the end of the last read, for markup split across reads

    def read(self, n: int = -1) -> bytes:
        n = MAX_TEXT_BYTES if n is None or n < 0 else min(n, MAX_TEXT_BYTES)
        if self._prefix:
            chunk, self._prefix = self._prefix, b""
        else:
            chunk = self._raw.read(n)
        seen = self._tail + chunk
        for markup in _REFUSED_MARKUP:
            at = seen.find(markup)
            if at >= 0:
                raise RMFReportError(f"{self._where}: byte {self._pos - len(self._tail) + at:,}: "
                                     f"{markup.decode()}: {_REFUSED_WHY}")
        self._tail = seen[-(max(map(len, _REFUSED_MARKUP)) - 1):]
        first = chunk.find(b"<")
        run = self._run + (len(chunk) if first < 0 else first)
        if run > MAX_TEXT_BYTES:
            raise RMFReportError(f"{self._where}: byte {self._pos - self._run:,}: a text or tag of more than "
                                 f"{MAX_TEXT_BYTES:,} bytes (RMF report values are a few dozen bytes): "
                                 "not an RMF report")
        self._run = run if first < 0 else len(chunk) - chunk.rfind(b"<") - 1
        self._pos += len(chunk)
        return chunk


def iter_reports(source: Source, *, raise_on_error: bool = True,
                 on_bad: Callable[[int, str], None] | None = None) -> Iterator[DdsReport]:
    """Yield each interval report of a ddsml document, streaming.

    Parameters
    ----------
    source : path or binary file object
        An RMF DDS / Postprocessor XML document.
    raise_on_error : bool, default True
        Raise :class:`RMFReportError` when an interval is a DDS error reply: a
        ``<message>`` directly under ``<postprocessor>``/``<report>`` with severity
        >= 3, or a message and no segments. With ``False`` such reports are yielded
        with their ``messages`` for the caller to inspect.
    on_bad : callable ``(ordinal, reason)``, optional
        Where an interval that cannot be read goes instead of an exception: one whose time data
        is unreadable, or one the XML breaks in. After a break the file is read again from the
        next interval's start tag (a path or seekable file; a pipe's rest is named in the reason
        and not read), so a break costs the interval it is in. Without ``on_bad`` both raise.

    Raises
    ------
    RMFReportError
        Malformed XML (with no interval start tag after it, or anywhere without ``on_bad``), not a ddsml
        document, a DDS error reply, a document type or entity declaration, or a text or tag
        longer than :data:`MAX_TEXT_BYTES`; the message names the file and the DDS message id and
        text (or the byte offset).
    """
    where = _source_name(source)
    with contextlib.ExitStack() as stack:
        if isinstance(source, (str, os.PathLike)):
            raw: IO[bytes] = stack.enter_context(open(source, "rb"))  # noqa: SIM115
        else:
            raw = source
        start, first, prefix = 0, 0, b""
        while True:
            seen = _Seen()
            try:
                yield from _iter_bounded(_BoundedNodes(raw, where, prefix, start), where, raise_on_error, on_bad,
                                         first, seen)
                return
            except _XmlBreak as brk:
                seekable = _seekable(raw)
                if not seekable:
                    resume = None
                else:
                    # read on from the first intact start tag the parse did not open; a parse that
                    # was itself read on from a start tag and broke in that very tag skips it
                    stuck = bool(prefix) and not seen.started and seen.top is None
                    resume = _interval_start(raw, start, seen.started + stuck, seen.tag)
                    if resume is not None and resume <= start:  # never read the same bytes twice
                        resume = None
                if brk.before_root and resume is None:
                    raise RMFReportError(f"{where}: malformed XML: {brk.error}") from brk.error
                # lost: the interval the break is in, and any whose start tag the damage broke or
                # renamed (counted by a looser scan up to where reading goes on)
                broken = (_tag_count(raw, start, resume, seen.tag[:-1]) - seen.started) if seekable else 0
                lost = max(broken, int(seen.started > seen.completed or seen.top not in (None, *_HEADER_TAGS)))
                then = "read again from the next interval" if resume is not None else "no interval follows it"
                assert on_bad is not None  # _iter_bounded raises otherwise
                for ordinal in range(first + seen.completed + 1, first + seen.completed + 1 + lost):
                    on_bad(ordinal, f"{where}: interval {ordinal}: malformed XML: {brk.error}; {then}")
                if resume is None:
                    return
                # a fresh parse from that start tag, under a root of its own; the file's own
                # closing </ddsml> closes it
                start, first, prefix = resume, first + seen.completed + lost, b"<ddsml>"
                raw.seek(start)


#: Children of ``<ddsml>`` that are not interval reports.
_HEADER_TAGS = ("server",)


class _Seen:
    """What one parse of a document got through.

    Interval start tags and ends at the top level, and the tag of the top-level element open when
    it stopped (``top``).
    """

    def __init__(self) -> None:
        self.started = 0
        self.completed = 0
        self.tag = "postprocessor"
        self.top: str | None = None


class _XmlBreak(Exception):
    """A parse stopped by malformed XML (the caller may read on from the next interval)."""

    def __init__(self, error: ET.ParseError, before_root: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.before_root = before_root


def _seekable(raw: IO[bytes]) -> bool:
    try:
        return bool(raw.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _tag_offsets(raw: IO[bytes], start: int, needle: bytes) -> Iterator[tuple[int, bytes]]:
    """Each offset of ``needle`` from byte ``start`` on, with the byte after it (``b""`` at the end of the input).

    A scan of the bytes, not a parse: it finds tags however broken the XML around them is.
    """
    raw.seek(start)
    pos, buf, at, eof = start, b"", 0, False  # pos: the offset of buf[0]
    while not eof:
        chunk = raw.read(1 << 20)
        eof = not chunk
        buf += chunk
        while (at := buf.find(needle, at)) >= 0:
            end = at + len(needle)
            if end == len(buf) and not eof:  # the byte after it comes with the next read
                break
            yield pos + at, buf[end:end + 1]
            at += 1
        # keep what a needle across reads may start in
        keep = at if at >= 0 else max(len(buf) - len(needle) + 1, 0)
        pos, buf, at = pos + keep, buf[keep:], 0


def _interval_start(raw: IO[bytes], start: int, skip: int, tag: str) -> int | None:
    """Offset of the interval start tag ``<tag>`` after the first ``skip`` from byte ``start`` on, or None."""
    intact = (at for at, after in _tag_offsets(raw, start, b"<" + tag.encode())
              if after in (b">", b" ", b"\t", b"\r", b"\n", b"/"))
    return next(itertools.islice(intact, skip, None), None)


def _tag_count(raw: IO[bytes], start: int, end: int | None, prefix: str) -> int:
    """How many ``<`` + ``prefix`` occur in bytes ``[start, end)`` (to the end of the input when ``end`` is None)."""
    needle = b"<" + prefix.encode()
    return sum(1 for at, _ in itertools.takewhile(lambda hit: end is None or hit[0] + len(needle) <= end,
                                                   _tag_offsets(raw, start, needle)))


def _iter_bounded(source: _BoundedNodes, where: str, raise_on_error: bool,
                  on_bad: Callable[[int, str], None] | None, first: int, seen: _Seen) -> Iterator[DdsReport]:
    """The body of :func:`iter_reports` over an open, bounded reader; intervals are numbered from ``first + 1``."""
    root: ET.Element | None = None
    depth = 0
    try:
        # forbid_dtd: the parser stops at a <!DOCTYPE> (so at any entity declaration, which only a DTD
        # holds) in whatever encoding the document is, before anything it declares is expanded
        for event, elem in DefusedET.iterparse(source, events=("start", "end"), forbid_dtd=True,
                                               forbid_entities=True, forbid_external=True):
            if event == "start":
                depth += 1
                if root is None:
                    root = elem
                    if elem.tag != "ddsml":
                        raise RMFReportError(
                            f"{where}: root element is <{elem.tag}>, expected <ddsml>"
                        )
                elif depth == 2:
                    seen.top = elem.tag
                    if elem.tag in ("postprocessor", "report"):
                        seen.started += 1
                        seen.tag = elem.tag
                continue
            depth -= 1
            if depth == 1:
                seen.top = None
            # only direct children of <ddsml> are interval reports (not a nested element that
            # happens to share the name)
            if depth != 1 or elem.tag not in ("postprocessor", "report") or root is None:
                continue
            seen.completed += 1
            ordinal = first + seen.started
            try:
                report = _report(elem, f"{where}: interval {ordinal}", ordinal)
            except RMFReportError as exc:
                if on_bad is None:
                    raise
                on_bad(ordinal, str(exc))
                continue
            finally:
                # Drop the interval from the tree, converted or not: this keeps memory flat.
                root.remove(elem)
            bad = [m for m in report.messages if (m.severity or 0) >= ERROR_SEVERITY]
            if not bad and report.messages and not report.segments:
                bad = list(report.messages)
            if bad and raise_on_error:
                text = "; ".join(f"{m.id or 'message'}: {m.description}" for m in bad)
                raise RMFReportError(f"{where}: RMF DDS returned an error reply: {text}")
            yield report
    except DefusedXmlException as exc:
        # the whole document is refused, not an interval: the declaration is before the root element
        raise _refused_markup(where, exc) from None
    except ET.ParseError as exc:
        if on_bad is None:
            raise RMFReportError(f"{where}: malformed XML: {exc}") from exc
        raise _XmlBreak(exc, before_root=root is None) from exc


# --------------------------------------------------------------------------------------
# Value converters
# --------------------------------------------------------------------------------------

_MISSING = {"", "N/A", "NA", "----", "-----", "------", "*", "n/a"}


def _number(text: str | None, where: str = "") -> float:
    """Float from an RMF cell; blank, ``N/A`` and dash fillers are NaN."""
    if text is None:
        return math.nan
    t = text.strip().replace(",", "")
    if t in _MISSING or set(t) <= {"-"}:
        return math.nan
    try:
        # RMF prints plain decimals: Python's extras (1_000, inf, nan) are not RMF values
        if "_" in t:
            raise ValueError(t)
        value = float(t)
    except ValueError:
        raise RMFReportError(f"{where}: not a number: {text!r}") from None
    if not math.isfinite(value):
        raise RMFReportError(f"{where}: not a finite number: {text!r}")
    return value


def _clock_s(text: str | None, where: str = "") -> float:
    r"""Seconds from an RMF clock value ``[HHH.]HH.MM.SS.fff``.

    RMF prints dispatch times as ``HH.MM.SS.TTT`` (Partition Data Report) and
    transaction times as ``HHH.MM.SS.FFFFFF`` (Workload Activity). The last field is the
    fraction of a second, so ``00.00.30.899`` = 30.899 s and ``000.00.01.250000``
    = 1.25 s:

    .. math:: t = 3600\,H + 60\,M + S + 0.F
    """
    if text is None:
        return math.nan
    t = text.strip()
    if t in _MISSING:
        return math.nan
    parts = t.split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        raise RMFReportError(f"{where}: not an RMF clock value HH.MM.SS.fff: {text!r}")
    h, m, s, frac = parts
    return int(h) * 3600 + int(m) * 60 + int(s) + int(frac) / 10 ** len(frac)


# --------------------------------------------------------------------------------------
# CPU report -> smf70_cpu + rmf_partition
# --------------------------------------------------------------------------------------


def _cpu_rows(report: DdsReport, where: str) -> list[dict[str, object]]:
    r"""One row per processor type of the CPU Activity table.

    ``lpar_busy_pct`` / ``mvs_busy_pct`` are RMF's own TOTAL/AVERAGE line of each type
    (the ``<row type="SUM">``); when a type has no SUM row the unweighted mean of its
    logical processors is used, which is how RMF forms that line for fully online CPUs.
    ``n_online`` counts the type's logical processors with TIME % ONLINE > 0, and

    .. math:: \text{online\_s} = t_{int} \sum_{cpu} \text{ONLINE\%}_{cpu} / 100

    (the SMF 70.1 ``online_s`` is the sum of SMF70ONT over the same processors).
    """
    seg = report.segment("CPU Activity")
    if seg is None:
        return []
    table = None
    for part in seg.parts:
        for t in part.tables:
            if "CPU Type" in t.columns and "Time% LPAR Busy" in t.columns:
                table = t
                break
        if table is not None:
            break
    if table is None:
        return []
    per_type: dict[str, dict[str, list[float]]] = {}
    sums: dict[str, dict[str, float]] = {}
    for rec in table.records():
        cpu_type = rec.get("CPU Type")
        if cpu_type is None:
            continue
        lpar = _col(rec, "Time% LPAR Busy", where)
        mvs = _col(rec, "Time% MVS Busy", where)
        if rec["__type__"] == "SUM":
            sums[cpu_type] = {"lpar": lpar, "mvs": mvs}
            continue
        acc = per_type.setdefault(cpu_type, {"online": [], "lpar": [], "mvs": []})
        acc["online"].append(_col(rec, "Time% Online", where))
        acc["lpar"].append(lpar)
        acc["mvs"].append(mvs)
    rows: list[dict[str, object]] = []
    for cpu_type, acc in per_type.items():
        online = np.asarray(acc["online"], dtype=float)
        if cpu_type in sums:
            lpar_pct, mvs_pct = sums[cpu_type]["lpar"], sums[cpu_type]["mvs"]
        else:
            lpar_arr = np.asarray(acc["lpar"], dtype=float)
            mvs_arr = np.asarray(acc["mvs"], dtype=float)
            lpar_pct = float(np.nanmean(lpar_arr)) if np.isfinite(lpar_arr).any() else math.nan
            mvs_pct = float(np.nanmean(mvs_arr)) if np.isfinite(mvs_arr).any() else math.nan
        rows.append(
            {
                "system_id": report.resname,
                "sysplex": None,
                "interval_start_at": report.start_at,
                "interval_s": report.interval_s,
                "cpu_type": cpu_type,
                "n_online": int(np.sum(np.nan_to_num(online) > 0)),
                "online_s": float(np.nansum(online)) / 100.0 * report.interval_s,
                "lpar_busy_pct": lpar_pct,
                "mvs_busy_pct": mvs_pct,
            }
        )
    return rows


def _partition_rows(report: DdsReport, where: str) -> list[dict[str, object]]:
    seg = report.segment("Partition Data Report")
    if seg is None:
        return []
    own = None
    header = seg.part(None)
    if header is not None:
        own = header.variables.get("MVS Partition Name")
    part = seg.part("Partition Data")
    if part is None or not part.tables:
        return []
    rows: list[dict[str, object]] = []
    for rec in part.tables[0].records(include_sum=False):
        name = rec.get("Partition Name")
        if name is None:
            continue
        rows.append(
            {
                "system_id": report.resname,
                "interval_start_at": report.start_at,
                "interval_s": report.interval_s,
                "partition_name": name,
                "is_own_partition": own is not None and name == own,
                "is_physical": name == "*PHYSICAL*",
                "partition_status": rec.get("Partition Status"),
                "cpu_type": rec.get("PROC Type"),
                "weight": _col(rec, "Partition Weight", where),
                "msu_defined": _col(rec, "MSU Defined", where),
                "msu_actual": _col(rec, "MSU Actual", where),
                "n_logical": _col(rec, "Num of LOG PROCs", where),
                "effective_dispatch_s": _col(rec, "Effective Dispatch Time", where, _clock_s),
                "total_dispatch_s": _col(rec, "Total Dispatch Time", where, _clock_s),
                "log_proc_effective_pct": _col(rec, "Avg Util%: LOG PROC Effective", where),
                "log_proc_total_pct": _col(rec, "Avg Util%: LOG PROC Total", where),
                "phys_lpar_mgmt_pct": _col(rec, "Avg Util%: PHYS PROC LPAR MGMT", where),
                "phys_effective_pct": _col(rec, "Avg Util%: PHYS PROC Effective", where),
                "phys_total_pct": _col(rec, "Avg Util%: PHYS PROC Total", where),
            }
        )
    return rows


# --------------------------------------------------------------------------------------
# Workload Activity (WLMGL) -> smf72_workload
# --------------------------------------------------------------------------------------

_CLASS_SEGMENT_RE = re.compile(
    r"^(?P<kind>Service|Report) Class(?: Period)?\s+(?P<name>\S+)"
    r"(?:\s+(?:Period\s+)?(?P<period>\d+))?\s*$"
)


def _var(part: DdsPart | None, name: str) -> str | None:
    return None if part is None else part.variables.get(name)


def _col(rec: dict[str, str | None], name: str, where: str,
         convert: Callable[[str | None, str], float] = _number) -> float:
    """Column ``name`` of a table row, converted; an error names the column (NaN when missing)."""
    return convert(rec.get(name), f"{where}, {name!r}")


def _varnum(part: DdsPart | None, name: str, where: str,
            convert: Callable[[str | None, str], float] = _number) -> float:
    """Variable ``name`` of a part, converted; an error names it (NaN when the part or variable is missing)."""
    return convert(_var(part, name), f"{where}, {name!r}")


def _workload_rows(report: DdsReport, where: str) -> list[dict[str, object]]:
    r"""One row per service/report class (period) segment of a WLMGL report.

    Mapping from the ddsml parts (names as RMF writes them) to columns:

    * ``Transactions``: Ended -> ``ended``, Ended/sec -> ``ended_per_s``,
      Average -> ``avg_trans``, MPL -> ``mpl``;
    * ``Transaction Time (HHH.MM.SS.FFFFFF)``: Actual / Execution / Queued / Standard
      Deviation -> ``resp_ms`` / ``exec_ms`` / ``queued_ms`` / ``resp_std_ms``
      (``resp_ms`` is NaN when nothing ended, as RMF's 0 is "no data", not 0 ms);
    * ``Service``: Total -> ``service_units``;
    * ``Service Time`` (seconds): CPU, SRB, RCT, I/O Interrupt, Hiperspace, zIIP, zAAP
      -> ``tcb_s, srb_s, rct_s, iit_s, hst_s, ziip_s, zaap_s``, and
      ``cpu_s`` = CPU + SRB + RCT + I/O Interrupt + Hiperspace (the SMF 72.3 definition);
    * ``Application Time %``: CP, zIIP on CP, zIIP, zAAP on CP, zAAP
      -> ``appl_cp_pct, appl_iipcp_pct, appl_iip_pct, appl_aapcp_pct, appl_aap_pct``;
    * ``Goals/Actuals Summary`` row of the period: Importance, Performance Index,
      Execution Velocity % Actual.

    Columns of the SMF table the report cannot fill (``ziip_cp_equiv_s``, which needs the
    zIIP normalisation factor, and the WLM state sample counts) are NaN.

    The report carries no zIIP-eligible-on-CP *seconds*; APPL% is engine time over
    interval time (100 = one engine), so

    .. math:: \text{ziip\_on\_cp\_s} = \text{APPL\% IIPCP} \times t_{int} / 100

    which equals SMF 72.3's ``R723CSUC``-derived time when the CP multithreading
    capacity factor is 1 (``R723MCF`` = 1024, i.e. no SMT on general CPs).
    """
    rows: list[dict[str, object]] = []
    is_sysplex = (report.restype or "").upper() == "SYSPLEX"
    for seg in report.segments:
        m = _CLASS_SEGMENT_RE.match(seg.name)
        if m is None:
            continue
        head = seg.part(None)
        tx = seg.part("Transactions")
        tt = seg.part("Transaction Time (HHH.MM.SS.FFFFFF)")
        svc = seg.part("Service")
        st = seg.part("Service Time")
        appl = seg.part("Application Time %")
        goals = seg.part("Goals/Actuals Summary")
        class_name = _var(head, "Service Class") or _var(head, "Report Class") or m["name"]
        period_text = m["period"] or _var(head, "Period")
        goal_recs = goals.tables[0].records(include_sum=False) if goals and goals.tables else []
        if period_text is None and len(goal_recs) == 1:
            period_text = goal_recs[0].get("Period")
        # 0 = the class as a whole (a multi-period class reported without a period split).
        period_no = _number(period_text, f"{where}, 'Period'")
        period = int(period_no) if math.isfinite(period_no) else 0
        goal = next(
            (g for g in goal_recs if _col(g, "Period", where) == period), None
        )
        if tx is None and st is None and appl is None:
            # "All data zero": RMF writes only the header part; there is nothing to measure.
            continue
        ended = _varnum(tx, "Ended", where)
        interval_s = report.interval_s
        appl_iipcp = _varnum(appl, "zIIP on CP", where)

        def ms(name: str) -> float:
            # RMF prints 0 when nothing ended: that is "no data", not a 0-ms response.
            return _varnum(tt, name, where, _clock_s) * 1000.0 if ended > 0 else math.nan

        tcb_s = _varnum(st, "CPU", where)
        srb_s = _varnum(st, "SRB", where)
        rct_s = _varnum(st, "RCT", where)
        iit_s = _varnum(st, "I/O Interrupt", where)
        hst_s = _varnum(st, "Hiperspace", where)
        # Same definition as SMF 72.3's cpu_s: TCB + SRB + RCT + IIT + HST seconds. RCT/IIT/HST
        # missing from a report count as 0; a missing TCB or SRB time leaves the sum unknown.
        cpu_s = tcb_s + srb_s + sum(0.0 if math.isnan(x) else x for x in (rct_s, iit_s, hst_s))
        rows.append(
            {
                "system_id": None if is_sysplex else report.resname,
                "sysplex": report.resname if is_sysplex else None,
                "interval_start_at": report.start_at,
                "interval_s": interval_s,
                "class_name": class_name,
                "is_report_class": m["kind"] == "Report",
                "period": period,
                "workload_name": _var(head, "Workload"),
                "importance": _col(goal, "Importance", where) if goal else math.nan,
                "ended": ended,
                "resp_ms": ms("Actual"),
                "service_units": _varnum(svc, "Total", where),
                "tcb_s": tcb_s,
                "srb_s": srb_s,
                "cpu_s": cpu_s,
                "ziip_s": _varnum(st, "zIIP", where),
                # needs R723NFFS, which the report does not print
                "ziip_cp_equiv_s": math.nan,
                "ziip_on_cp_s": appl_iipcp * interval_s / 100.0,
                "appl_cp_pct": _varnum(appl, "CP", where),
                "appl_iip_pct": _varnum(appl, "zIIP", where),
                "appl_iipcp_pct": appl_iipcp,
                # raw WLM state samples are not in the report (only velocity and PI)
                "cpu_using_samples": math.nan,
                "cpu_delay_samples": math.nan,
                "ziip_using_samples": math.nan,
                "ziip_on_cp_using_samples": math.nan,
                "ziip_delay_samples": math.nan,
                "total_using_samples": math.nan,
                "total_delay_samples": math.nan,
                "ended_per_s": _varnum(tx, "Ended/sec", where),
                "avg_trans": _varnum(tx, "Average", where),
                "mpl": _varnum(tx, "MPL", where),
                "exec_ms": ms("Execution"),
                "queued_ms": ms("Queued"),
                "resp_std_ms": ms("Standard Deviation"),
                "rct_s": rct_s,
                "iit_s": iit_s,
                "hst_s": hst_s,
                "zaap_s": _varnum(st, "zAAP", where),
                "appl_aapcp_pct": _varnum(appl, "zAAP on CP", where),
                "appl_aap_pct": _varnum(appl, "zAAP", where),
                "exec_velocity_pct": (
                    _col(goal, "Execution Velocity % Actual", where) if goal else math.nan
                ),
                "perf_index": (
                    _col(goal, "Performance Index", where) if goal else math.nan
                ),
            }
        )
    return rows


# --------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------


#: One row per interval report that could not be read: its place in the document (from 1) and why.
QUARANTINE_COLUMNS = ("interval", "reason")


class PostprocessorTables(NamedTuple):
    """The tables read from one Postprocessor XML document (empty frames when absent).

    ``quarantine`` (:data:`QUARANTINE_COLUMNS`) lists the intervals left out and why; the other
    intervals' rows are in the tables.
    """

    cpu: pd.DataFrame
    partition: pd.DataFrame
    workload: pd.DataFrame
    quarantine: pd.DataFrame


_STRING_COLUMNS = {
    "system_id", "sysplex", "cpu_type", "partition_name", "partition_status",
    "class_name", "workload_name",
}
_BOOL_COLUMNS = {"is_own_partition", "is_physical", "is_report_class"}
_INT_COLUMNS = {"n_online", "period"}


def empty_table(columns: tuple[str, ...]) -> pd.DataFrame:
    """A table of these columns (``CPU_COLUMNS``, ``PARTITION_COLUMNS``, ``WORKLOAD_COLUMNS``) with no rows.

    Its columns have the types the reader gives them: it is what the SQL binds when no report was ingested.
    """
    return _frame([], columns)


def _frame(rows: Iterable[dict[str, object]], columns: tuple[str, ...]) -> pd.DataFrame:
    df = pd.DataFrame(list(rows), columns=list(columns))
    for col in columns:
        if col == "interval_start_at":
            df[col] = pd.to_datetime(df[col])
        elif col in _STRING_COLUMNS:
            df[col] = df[col].astype("string")
        elif col in _BOOL_COLUMNS:
            df[col] = df[col].astype(bool)
        elif col in _INT_COLUMNS:
            df[col] = df[col].astype("int64")
        else:
            df[col] = df[col].astype("float64")
    return df


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
    where = _source_name(source)
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
                rows = _cpu_rows(report, at), _partition_rows(report, at)
                cpu.extend(rows[0])
                part.extend(rows[1])
            else:
                wl.extend(_workload_rows(report, at))
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
        cpu=_frame(cpu, CPU_COLUMNS),
        partition=_frame(part, PARTITION_COLUMNS),
        workload=_frame(wl, WORKLOAD_COLUMNS),
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
        raise RMFReportError(f"{_source_name(source)}: no CPU Activity report intervals found")
    return tables


def read_workload_report(source: Source) -> pd.DataFrame:
    """Read a Postprocessor Workload Activity (WLMGL) report into ``smf72_workload`` columns.

    Intervals :func:`read_postprocessor` quarantines are left out (it lists them). Raises
    :class:`RMFReportError` when the document holds no readable WLMGL interval.
    """
    tables = read_postprocessor(source)
    if tables.workload.empty:
        raise RMFReportError(f"{_source_name(source)}: no Workload Activity (WLMGL) report intervals found")
    return tables.workload
