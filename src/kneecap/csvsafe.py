"""Text cells made safe to open in a spreadsheet (CSV injection, OWASP).

A spreadsheet reads a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula, and a tab or
carriage return before one hides it: ``=HYPERLINK("http://...")`` or ``=cmd|' /C calc'!A0`` in a
source's title or a workload name would run where a planner opens the CSV kneecap wrote. OWASP's
rule ("CSV Injection") is to prefix such a cell with a single quote, which the spreadsheet shows
and does not evaluate. Only text cells are changed: a number, negative ones included, is written as
a number, and a text cell that reads whole as a number (``-1.5``) is no formula either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FORMULA_STARTS", "neutralise_cell", "neutralise_frame"]

#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def neutralise_cell(value: object) -> object:
    """``value`` with a ``'`` before it when it is text a spreadsheet would read as a formula; else unchanged.

    Examples
    --------
    >>> print(neutralise_cell('=HYPERLINK("http://x", "click")'))
    '=HYPERLINK("http://x", "click")
    >>> neutralise_cell("-2.5"), neutralise_cell(-2.5), neutralise_cell("CICS-A"), neutralise_cell("@SUM(A1)")
    ('-2.5', -2.5, 'CICS-A', "'@SUM(A1)")
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _is_number(value):
        return "'" + value
    return value


def neutralise_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells are :func:`neutralise_cell`'d (numeric columns are left as they are)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or str(out[column].dtype) in ("string", "str"):
            out[column] = out[column].map(neutralise_cell)
    return out
