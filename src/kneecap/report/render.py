"""The capacity report as one self-contained HTML file: Jinja2 template, Plotly figures, plotly.js inlined once.

The template is ``templates/report.html.j2`` (package data), rendered with autoescaping on: every
name and sentence in a report (a workload, a source's title, a warning) is text, never markup.
The figures' ``<div>`` and scripts are the only markup passed through unescaped
(:class:`markupsafe.Markup`), and plotly.js is written into the page once, so it opens with no
network.
"""

from __future__ import annotations

import math
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup

from kneecap import forecasting
from kneecap.report import figures
from kneecap.report.content import ReportContent

#: The template's name in the package's ``templates`` folder.
TEMPLATE_NAME = "report.html.j2"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("kneecap.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["sig3"] = forecasting.sig3
    env.filters["when"] = _when
    return env


def _when(value: Any) -> str:
    """A timestamp to the minute ('-' for none)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return "-"
    return pd.Timestamp(value).strftime("%Y-%m-%d %H:%M")


def report_figures(content: ReportContent) -> dict[str, Any]:
    """The report's Plotly figures: ``response`` (always), ``pi`` (where the marts have a PI) and more for a class.

    A WLM class with a response time distribution: ``percentiles`` against load (a single-period
    class) and, with a response time goal, ``pi_curve`` (the forecast PI against load, each
    period's in a multi-period class).
    """
    unit = content.load
    found = {"response": figures.response_figure(
        content.curve, content.points, load=unit, unit=unit, knee=content.knee,
        trained=content.question["trained"], model_label=f"model ({content.model['family']})",
        k=content.knee["k"], same_config=content.same_config)}
    if not content.pi.empty:
        found["pi"] = figures.pi_figure(content.pi)
    if not content.goal_curve.empty:
        configuration = content.knee["configuration"]
        if "pi" in content.goal_curve:
            found["pi_curve"] = figures.pi_curve_figure(
                content.goal_curve, content.goal_points, goal_words=str(content.row.get("goal", "")),
                crossing=content.row, configuration=configuration)
        if "resp_p90_ms" in content.goal_curve:  # one distribution: a multi-period class has a PI per period only
            found["percentiles"] = figures.percentile_curve_figure(
                content.goal_curve, content.goal_points, goal=content.goal, crossing=content.row,
                configuration=configuration)
    return found


def render_html(content: ReportContent) -> str:
    """The report as one HTML document (plotly.js inlined once, no external script or style)."""
    charts = {name: Markup(figures.figure_div(fig, f"chart-{name}"))  # noqa: S704 - plotly's own div and script
              for name, fig in report_figures(content).items()}
    return _environment().get_template(TEMPLATE_NAME).render(
        c=content, charts=charts, plotly_js=Markup(figures.plotly_js()))  # noqa: S704 - plotly.js itself
