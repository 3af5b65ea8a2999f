"""The capacity report: one self-contained HTML file for people who will not open the desk.

:func:`capacity_report` is what ``kneecap report`` and the desk's download button call. It gathers
the answer (:mod:`kneecap.report.content`, pure: the forecast, the marts, the registry), draws the
charts (:mod:`kneecap.report.figures`, the only kneecap module that imports plotly) and renders
the template (:mod:`kneecap.report.render`, Jinja2 with autoescaping).
"""

from __future__ import annotations

from typing import Any

from kneecap.report.content import ReportContent, report_content
from kneecap.report.render import render_html

__all__ = ["ReportContent", "capacity_report", "render_html", "report_content"]


def capacity_report(models: Any, **options: Any) -> str:
    """The capacity report of ``models``' workload as one HTML document.

    ``options`` are :func:`kneecap.report.content.report_content`'s keyword arguments (registry,
    marts, policy, growth, load, SLO, versions).
    """
    return render_html(report_content(models, **options))
