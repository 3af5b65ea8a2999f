"""The desk's charts: the Plotly pieces every page shares, and :func:`show`, which draws them.

The pieces (a curve with its band, shaded spans and vertical lines, the desk's template) live in
:mod:`kneecap.report.figures`, where the capacity report draws the same charts; this module makes
the template the process's default and adds Streamlit.
"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from kneecap.report import figures

BAND_FILL, MODEL_COLOUR, TEMPLATE = figures.BAND_FILL, figures.MODEL_COLOUR, figures.TEMPLATE
curve_with_band, span, vline = figures.curve_with_band, figures.span, figures.vline
pi_curve_figure, percentile_curve_figure = figures.pi_curve_figure, figures.percentile_curve_figure

__all__ = ["BAND_FILL", "MODEL_COLOUR", "TEMPLATE", "curve_with_band", "percentile_curve_figure", "pi_curve_figure",
           "show", "span", "vline"]

# Sent with each figure: Streamlit's own chart theme is applied in the browser on every redraw and
# cost 45-50 ms of a slider step on the Knee page (p50 228 -> 184 ms, key press to both charts
# redrawn, chromium). The process's default template: plotly applies a default far faster than a
# template set on each figure (2.5 against 11.5 ms for an 8-trace figure to JSON).
pio.templates["kneecap"] = TEMPLATE
pio.templates.default = "kneecap"


def show(fig: go.Figure, key: str) -> None:
    """Draw ``fig`` in the page in the desk's look, :data:`TEMPLATE` (``key``: the chart's widget key)."""
    st.plotly_chart(fig, key=key, theme=None)
