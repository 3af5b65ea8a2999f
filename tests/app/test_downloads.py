"""The desk's CSV downloads neutralise cells a spreadsheet would run as formulas (OWASP CSV injection)."""

from __future__ import annotations

import ast
import io

import pandas as pd

from tests.app.conftest import app_module
from tests.conftest import REPO


def test_a_download_neutralises_formula_cells_and_keeps_numbers():
    frame = pd.DataFrame({"workload": ['=HYPERLINK("http://x","y")', "@SUM(A1)", "CICS-A"],
                          "source": ["+cmd|' /C calc'!A0", "-ish note", "seed 004"],
                          "resp_ms": [-1.5, 2.0, 3.25]})
    text = app_module("tables").csv_text(frame)
    back = pd.read_csv(io.StringIO(text))
    assert back["workload"].tolist() == ['\'=HYPERLINK("http://x","y")', "'@SUM(A1)", "CICS-A"]
    assert back["source"].tolist() == ["'+cmd|' /C calc'!A0", "'-ish note", "seed 004"]
    assert back["resp_ms"].tolist() == [-1.5, 2.0, 3.25]


def test_every_download_on_the_desk_goes_through_it():
    """Every CSV through csv_text; the one other download is the capacity report, HTML its template escapes."""
    pages = sorted((REPO / "app" / "app_pages").glob("*.py"))
    # each call whole (its arguments may run over several lines)
    calls = [ast.get_source_segment(text, node) or "" for text in (page.read_text() for page in pages)
             for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "download_button"]
    assert calls and all("tables.csv_text(" in line or "res.report_html(" in line for line in calls), calls
    assert sum("res.report_html(" in line for line in calls) == 1

