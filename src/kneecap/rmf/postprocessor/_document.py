"""The ddsml document model: one interval report and its segments, parts, tables and messages."""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO

import pandas as pd

from kneecap.rmf.postprocessor._errors import RMFReportError
from kneecap.rmf.postprocessor._values import number

Source = str | os.PathLike[str] | IO[bytes]


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


def var(part: DdsPart | None, name: str) -> str | None:
    """Variable ``name`` of a part as RMF wrote it (None when the part or variable is missing)."""
    return None if part is None else part.variables.get(name)


def varnum(part: DdsPart | None, name: str, where: str,
            convert: Callable[[str | None, str], float] = number) -> float:
    """Variable ``name`` of a part, converted; an error names it (NaN when the part or variable is missing)."""
    return convert(var(part, name), f"{where}, {name!r}")


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
        return number(text, where)
    raise RMFReportError(f"{where}: unrecognised report-interval {text!r} (unit={unit!r})")


def report_of(elem: ET.Element, where: str, ordinal: int = 0) -> DdsReport:
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
            interval_s = number(_text(tdata.find("data-range")), where)
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


def source_name(source: Source) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))
