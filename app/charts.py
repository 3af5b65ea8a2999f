"""Plotly pieces the desk's charts share, and :func:`show`, which every page draws its charts with.

A curve with its band, shaded spans and vertical lines; the spans and lines have legend entries
(plotly's own vrect and vline have none).
"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

_AXIS = {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "zerolinewidth": 2,
         "automargin": True, "title": {"standoff": 15}}
#: The desk's look, sent with each figure: the layout of plotly's white template in the page's font.
#: Streamlit's own chart theme is applied in the browser on every redraw and cost 45-50 ms of a
#: slider step on the Knee page (p50 228 -> 184 ms, key press to both charts redrawn, chromium).
#: Layout only (plotly_white's per-trace defaults would add 5 ms of copying per figure), and the
#: process's default template: plotly applies a default far faster than a template set on each
#: figure (2.5 against 11.5 ms for an 8-trace figure to JSON).
TEMPLATE = go.layout.Template(layout={
    "font": {"family": '"Source Sans", "Source Sans Pro", sans-serif', "size": 14, "color": "#31333f"},
    "margin": {"t": 40, "r": 20, "b": 50, "l": 60},
    "paper_bgcolor": "white", "plot_bgcolor": "white", "hovermode": "closest",
    "colorway": pio.templates["plotly"].layout.colorway, "xaxis": _AXIS, "yaxis": _AXIS})
pio.templates["kneecap"] = TEMPLATE
pio.templates.default = "kneecap"

BAND_FILL = "rgba(31,119,180,0.2)"
MODEL_COLOUR = "#1f77b4"


def curve_with_band(x, mid, lo, hi, name: str) -> list[go.Scatter]:
    """The model line over its 95 % band (upper edge first, so the lower one fills up to it)."""
    return [go.Scatter(x=x, y=hi, line={"width": 0}, showlegend=False, hoverinfo="skip"),
            go.Scatter(x=x, y=lo, fill="tonexty", line={"width": 0}, fillcolor=BAND_FILL, name="95% band"),
            go.Scatter(x=x, y=mid, name=name, line={"color": MODEL_COLOUR})]


def span(lo: float, hi: float, y_top: float, name: str, color: str, legendrank: int) -> go.Scatter:
    """A shaded band of load as a legend entry."""
    return go.Scatter(x=[lo, lo, hi, hi, lo], y=[0, y_top, y_top, 0, 0], fill="toself", fillcolor=color,
                      line={"width": 0}, mode="lines", name=name, hoverinfo="name", legendrank=legendrank)


def vline(x: float, y_top: float, name: str, dash: str = "dash", color: str = "orange") -> go.Scatter:
    """A vertical line as a legend entry."""
    return go.Scatter(x=[x, x], y=[0, y_top], mode="lines", line={"dash": dash, "color": color}, name=name)


def show(fig: go.Figure, key: str) -> None:
    """Draw ``fig`` in the page in the desk's look, :data:`TEMPLATE` (``key``: the chart's widget key)."""
    st.plotly_chart(fig, key=key, theme=None)
