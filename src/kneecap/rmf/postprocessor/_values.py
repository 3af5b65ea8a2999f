"""Cell values: RMF numbers and clock times, and the cells of a table row."""

from __future__ import annotations

import math
from collections.abc import Callable

from kneecap.rmf.postprocessor._errors import RMFReportError

_MISSING = {"", "N/A", "NA", "----", "-----", "------", "*", "n/a"}


def number(text: str | None, where: str = "") -> float:
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


def clock_s(text: str | None, where: str = "") -> float:
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




def col(rec: dict[str, str | None], name: str, where: str,
         convert: Callable[[str | None, str], float] = number) -> float:
    """Column ``name`` of a table row, converted; an error names the column (NaN when missing)."""
    return convert(rec.get(name), f"{where}, {name!r}")
