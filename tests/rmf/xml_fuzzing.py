"""Mutated RMF Postprocessor XML reports, with the ground truth of which intervals each mutation left intact.

Shared by the bounded campaign in ``test_xml_fuzz.py`` and the long one in ``make fuzz``
(``benchmarks/fuzz_rmf_xml.py``). A base report is a real one of the bundled samples: 34 half-hour
CPU Activity intervals, each a ``<postprocessor>`` element. A mutation damages the bytes of at most
one place; every interval wholly before or after it must come out of
:func:`kneecap.rmf.read_postprocessor` (after a break in the XML the reader reads on from the next
interval's start tag). The damaged interval itself may be read (with its new value) or
quarantined, never crash the reader. :func:`well_formed` (expat, independently of the reader)
tells the cases whose XML the damage broke.
"""

from __future__ import annotations

import io
import traceback
import xml.parsers.expat
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kneecap.rmf import RMFReportError, read_postprocessor

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "raw" / "rmf-samples"
BASE = SAMPLES / "rmfpp-cpu-RPRT-20200910.xml"
KINDS = ("flip", "delete", "insert", "truncate", "value", "garbage", "dup_interval", "entity", "nest",
         "bad_utf8", "start_tag")
#: What a ``start_tag`` mutation makes of an interval's ``<postprocessor>``: the reader reads on
#: from interval start tags after a break, so one broken there must not stop it.
BROKEN_TAGS = (b"<postprocessor =>", b"<postprocessorX>", b"<postprocessor a='1>", b"<postprocesso>",
               b"<postprocessor\x00>", b"<postprocessor")
#: What a ``value`` mutation writes into a cell: blanks, fillers, Python-only spellings, junk.
VALUES = ("", "x", "1e400", "-1", "NaN", "inf", "1_000", "1,5", "99999999999999999999999", "\u00e9",
          "&amp;", "0x1F", " 5 ", "--", "N/A", "12.5ms", "00.00.01", "1.2.3.4")
_OPEN = b"<postprocessor>"


@dataclass(frozen=True)
class Base:
    """A clean report: its bytes, each interval's byte span and start time (in document order)."""

    data: bytes
    spans: tuple[tuple[int, int], ...]
    starts: tuple

    @classmethod
    def load(cls, path: Path = BASE) -> Base:
        data = path.read_bytes()
        opens = list(_find_all(data, _OPEN))
        ends = [data.index(b"</postprocessor>", i) + len(b"</postprocessor>") for i in opens]
        cpu = read_postprocessor(io.BytesIO(data)).cpu
        starts = tuple(cpu["interval_start_at"].drop_duplicates())
        if len(starts) != len(opens):
            raise ValueError(f"{path}: every interval of a fuzz base needs CPU rows")
        return cls(data, tuple(zip(opens, ends, strict=True)), starts)


def _find_all(data: bytes, needle: bytes):
    i = data.find(needle)
    while i >= 0:
        yield i
        i = data.find(needle, i + 1)


@dataclass
class Case:
    """A mutated report: its bytes, the kind of damage, and where in the base it lies ``[lo, hi)``."""

    kind: str
    data: bytes
    lo: int
    hi: int
    log: str


def mutate(rng: np.random.Generator, base: Base, kind: str) -> Case:
    """One mutation of ``kind`` at a place drawn from ``rng`` (the same draws give the same case)."""
    d = base.data
    n = len(d)
    pos = int(rng.integers(0, n))
    if kind == "flip":
        out = bytearray(d)
        out[pos] ^= 1 << int(rng.integers(0, 8))
        return Case(kind, bytes(out), pos, pos + 1, f"bit flip at byte {pos}")
    if kind == "delete":
        k = int(rng.integers(1, 200))
        return Case(kind, d[:pos] + d[pos + k:], pos, min(pos + k, n), f"{k} bytes deleted at {pos}")
    if kind == "insert":
        junk = bytes(rng.choice(list(b"<>&;\"'/=x0 \n"), size=int(rng.integers(1, 40))).tolist())
        return Case(kind, d[:pos] + junk + d[pos:], pos, pos, f"{junk!r} inserted at {pos}")
    if kind == "truncate":
        return Case(kind, d[:pos], pos, n, f"cut at byte {pos}")
    if kind == "garbage":
        k = int(rng.integers(1, 400))
        junk = rng.integers(0, 256, size=k, dtype=np.uint8).tobytes()
        return Case(kind, d[:pos] + junk + d[pos + k:], pos, min(pos + k, n), f"{k} random bytes at {pos}")
    if kind == "bad_utf8":
        return Case(kind, d[:pos] + b"\xc3\x28\xff" + d[pos:], pos, pos, f"invalid UTF-8 inserted at {pos}")
    if kind == "value":
        cells = [*_find_all(d, b"<col>"), *_find_all(d, b"<value>")]
        at = cells[int(rng.integers(0, len(cells)))]
        start = d.index(b">", at) + 1
        end = d.index(b"<", start)
        text = VALUES[int(rng.integers(0, len(VALUES)))]
        return Case(kind, d[:start] + text.encode() + d[end:], start, end,
                    f"cell at {start} {d[start:end]!r} -> {text!r}")
    k = int(rng.integers(0, len(base.spans)))
    lo, hi = base.spans[k]
    if kind == "dup_interval":
        # the same interval twice: well-formed, both copies read (duplicates are the warehouse's to drop)
        return Case(kind, d[:hi] + d[lo:hi] + d[hi:], hi, hi, f"interval {k + 1} repeated")
    if kind == "entity":
        # an internal DTD whose entities expand a billion-fold if referenced ("billion laughs"), used
        # in one cell: expat's amplification limit must stop it without the memory it asks for
        decl = (b'<!DOCTYPE ddsml [<!ENTITY a "aaaaaaaaaa">' + b"".join(
            b'<!ENTITY %c "%s">' % (98 + i, (b"&%c;" % (97 + i)) * 10) for i in range(8)) + b"]>")
        body_at = d.index(b"<ddsml")
        cell = d.index(b"<col>", lo) + len(b"<col>")
        out = d[:body_at] + decl + d[body_at:cell] + b"&i;" + d[cell:]
        return Case(kind, out, 0, n, f"billion-laughs DTD, referenced in interval {k + 1}")
    if kind == "start_tag":
        tag = BROKEN_TAGS[int(rng.integers(0, len(BROKEN_TAGS)))]
        return Case(kind, d[:lo] + tag + d[lo + len(_OPEN):], lo, lo + len(_OPEN),
                    f"interval {k + 1}'s start tag -> {tag!r}")
    if kind == "nest":
        depth = int(rng.integers(1_000, 50_000))
        inner = d.index(b"<segment", lo)
        return Case(kind, d[:inner] + b"<a>" * depth + b"</a>" * depth + d[inner:], inner, inner,
                    f"{depth} nested elements in interval {k + 1}")
    raise ValueError(f"unknown mutation kind {kind!r}")


def well_formed(data: bytes) -> bool:
    """Whether expat parses ``data`` to the end (independently of kneecap's reader)."""
    parser = xml.parsers.expat.ParserCreate()
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError:
        return False
    return True


@dataclass
class Verdict:
    """What the reader made of a case: a crash (any exception but ``RMFReportError``), the file-level
    error, and the intact intervals before and (in well-formed documents) after the damage that did
    not come out."""

    crash: str | None = None
    file_error: str | None = None
    intact: int = 0
    lost: int = 0
    quarantined: int = 0


def verdict(case: Case, base: Base) -> Verdict:
    """Run ``case`` through :func:`kneecap.rmf.read_postprocessor` and check it against the ground truth."""
    must = [start for (lo, hi), start in zip(base.spans, base.starts, strict=True)
            if hi <= case.lo or lo >= case.hi]
    v = Verdict(intact=len(must))
    try:
        tables = read_postprocessor(io.BytesIO(case.data))
    except RMFReportError as exc:
        v.file_error = str(exc)
        v.lost = len(must)
        return v
    except Exception:  # noqa: BLE001 - what the campaign counts as a crash
        v.crash = traceback.format_exc(limit=6)
        v.lost = len(must)
        return v
    got = set(tables.cpu["interval_start_at"])
    v.lost = sum(start not in got for start in must)
    v.quarantined = len(tables.quarantine)
    return v
