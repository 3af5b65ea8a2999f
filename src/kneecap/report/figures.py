"""The charts kneecap draws with Plotly: the desk's shared pieces and the capacity report's figures.

The only kneecap module that imports plotly (``.importlinter``, contract "The library never
imports the desk's frameworks"): the capacity report (:mod:`kneecap.report`) is a file for people
who will not open the desk, and its charts are the desk's, so both draw them from here.
``app/charts.py`` re-exports the shared pieces and adds Streamlit's ``show``.

A curve with its band, shaded spans and vertical lines; the spans and lines have legend entries
(plotly's own vrect and vline have none).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import plotly.offline

_AXIS = {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "zerolinewidth": 2,
         "automargin": True, "title": {"standoff": 15}}
#: The desk's look: the layout of plotly's white template in the desk's font. Layout only
#: (plotly_white's per-trace defaults would add 5 ms of copying per figure on every slider step);
#: the desk makes it the process's default template (``app/charts.py``), the report sets it on its
#: figures.
TEMPLATE = go.layout.Template(layout={
    "font": {"family": '"Source Sans", "Source Sans Pro", sans-serif', "size": 14, "color": "#31333f"},
    "margin": {"t": 40, "r": 20, "b": 50, "l": 60},
    "paper_bgcolor": "white", "plot_bgcolor": "white", "hovermode": "closest",
    "colorway": pio.templates["plotly"].layout.colorway, "xaxis": _AXIS, "yaxis": _AXIS})

BAND_FILL = "rgba(31,119,180,0.2)"
MODEL_COLOUR = "#1f77b4"
#: Fills of the trained load range and of the knee's 95 % band.
TRAINED_FILL, KNEE_FILL = "rgba(128,128,128,0.08)", "rgba(255,165,0,0.15)"


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


def response_figure(curve: pd.DataFrame, points: pd.DataFrame, *, load: str, unit: str, knee: Mapping[str, float],
                    trained: tuple[float, float], model_label: str, k: float,
                    same_config: pd.Series | None = None) -> go.Figure:
    """Response against load: the model with its 95 % band, the measured points, the knee and its band.

    Parameters
    ----------
    curve : DataFrame
        ``load``, ``resp_ms``, ``resp_ms_lo``, ``resp_ms_hi`` (:func:`kneecap.forecasting.response_curve`).
    points : DataFrame
        The measured points (``load``, ``resp_ms``); may be empty.
    load, unit : str
        The load column (``clients`` or ``tps``) and its unit in words.
    knee : mapping
        ``mid``, ``lo``, ``hi``: the knee and its 95 % band in ``load`` units (NaN or inf: not drawn).
    trained : (float, float)
        The load range the model was fitted on, shaded.
    model_label : str
        The model line's legend entry.
    k : float
        The knee rule (response over ``k`` times the unloaded one), named in the knee's legend entry.
    same_config : Series of bool, optional
        Which ``points`` were measured on the configuration drawn; the others are drawn apart.
    """
    shown = curve.replace([math.inf, -math.inf], math.nan)
    finite = [v for v in (knee["mid"], knee["lo"], knee["hi"]) if math.isfinite(v)]
    measured_top = float(points["resp_ms"].max()) * 1.3 if not points.empty else 0.0
    y_top = max(float(shown["resp_ms"].quantile(0.9)) * 1.5, measured_top, 1e-9)
    # past saturation some bootstrap draws still answer and some do not: the band runs from the
    # lowest response up without bound, so its upper edge is drawn past the chart's top
    upper = shown["resp_ms_hi"].where(shown["resp_ms_hi"].notna() | shown["resp_ms_lo"].isna(), 2 * y_top)
    fig = go.Figure()
    fig.add_trace(span(trained[0], trained[1], y_top, f"fitted on {trained[0]:.4g}-{trained[1]:.4g} {unit}",
                       TRAINED_FILL, 900))
    fig.add_traces(curve_with_band(shown[load], shown["resp_ms"], shown["resp_ms_lo"], upper, model_label))
    if not points.empty:
        same = same_config if same_config is not None else pd.Series(True, index=points.index)
        fig.add_trace(go.Scatter(x=points.loc[same, load], y=points.loc[same, "resp_ms"], mode="markers",
                                 name="measured (this configuration)", marker={"size": 7, "color": "#d62728"}))
        if (~same).any():
            fig.add_trace(go.Scatter(x=points.loc[~same, load], y=points.loc[~same, "resp_ms"], mode="markers",
                                     name="measured (other configurations)",
                                     marker={"size": 7, "symbol": "x", "color": "#7f7f7f"}))
    if len(finite) == 3:
        # whole clients, as the desk labels them; a rate to 4 significant digits
        fmt = ",.0f" if load == "clients" else ".4g"
        fig.add_trace(span(knee["lo"], knee["hi"], y_top, f"knee 95% band {knee['lo']:{fmt}}-{knee['hi']:{fmt}}",
                           KNEE_FILL, 950))
        fig.add_trace(vline(knee["mid"], y_top, f"model knee ~{knee['mid']:{fmt}} {unit} (R > {k:g}x unloaded)"))
    x_top = max([float(shown[load].max()), *finite]) * 1.02
    fig.update_layout(template=TEMPLATE, xaxis_title=unit, yaxis_title="response time (ms)", height=440,
                      xaxis_range=[0, x_top], yaxis_range=[0, y_top])
    return fig


def pi_figure(pi: pd.DataFrame) -> go.Figure:
    """The measured Performance Index over time, one line per system and service class period.

    ``pi``: rows of ``fct_performance_index`` (``interval_start_at``, ``system_id``, ``period``,
    ``performance_index``). A dashed line at 1: above it the goal was missed.
    """
    fig = go.Figure()
    for (system, period), rows in pi.sort_values("interval_start_at").groupby(["system_id", "period"], sort=True):
        fig.add_trace(go.Scatter(x=rows["interval_start_at"], y=rows["performance_index"], mode="lines+markers",
                                 marker={"size": 3}, line={"width": 1}, name=f"{system} period {period}"))
    fig.add_hline(y=1.0, line_dash="dash", line_color="#d62728",
                  annotation_text="PI 1: goal met exactly", annotation_position="top left")
    # the legend names the system and period even when there is one line (plotly hides a lone trace's)
    fig.update_layout(template=TEMPLATE, xaxis_title="interval start", yaxis_title="Performance Index", height=360,
                      yaxis_rangemode="tozero", showlegend=True)
    return fig


def plotly_js() -> str:
    """plotly.js itself, to inline once in a page so that it opens without a network."""
    return plotly.offline.get_plotlyjs()


def figure_div(fig: go.Figure, div_id: str) -> str:
    """``fig`` as an HTML ``<div>`` and the script that draws it, without plotly.js (:func:`plotly_js`)."""
    config: dict[str, Any] = {"displaylogo": False, "responsive": True}
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id, config=config)
