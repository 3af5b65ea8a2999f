"""Plotly pieces the desk's charts share, and :func:`show`, which every page draws its charts with.

A curve with its band, shaded spans and vertical lines; the spans and lines have legend entries
(plotly's own vrect and vline have none).
"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

#: The desk's look, sent with each figure: plotly's white template in the page's font. Streamlit's
#: own chart theme is applied in the browser on every redraw and cost 45-50 ms of a slider step
#: on the Knee page (p50 228 -> 184 ms, key press to both charts redrawn, chromium).
TEMPLATE = go.layout.Template(pio.templates["plotly_white"])
TEMPLATE.layout.font = {"family": '"Source Sans", "Source Sans Pro", sans-serif', "size": 14, "color": "#31333f"}
TEMPLATE.layout.margin = {"t": 40, "r": 20, "b": 50, "l": 60}

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
    """Draw ``fig`` in the page with the desk's template (``key``: the chart's widget key)."""
    fig.update_layout(template=TEMPLATE)
    st.plotly_chart(fig, key=key, theme=None)
