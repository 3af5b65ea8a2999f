"""Streaming parse of a ddsml document: bounded reads, refused markup, and reading on after broken XML."""

from __future__ import annotations

import contextlib
import itertools
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from typing import IO

from defusedxml import DefusedXmlException, DTDForbidden, EntitiesForbidden
from defusedxml import ElementTree as DefusedET

from kneecap.rmf.postprocessor._document import DdsReport, Source, report_of, source_name
from kneecap.rmf.postprocessor._errors import RMFReportError

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
    where = source_name(source)
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
                report = report_of(elem, f"{where}: interval {ordinal}", ordinal)
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
