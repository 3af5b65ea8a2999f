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
import re
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


def curve_with_band(x, mid, lo, hi, name: str, *, color: str = MODEL_COLOUR, fill: str = BAND_FILL,
                    band_name: str = "95% band", group: str | None = None) -> list[go.Scatter]:
    """The model line over its 95 % band (upper edge first, so the lower one fills up to it).

    ``group``: a legend group the three share; the band then has no legend entry of its own (the
    line's entry shows and hides both), so that several curves keep a short legend.
    """
    return [go.Scatter(x=x, y=hi, line={"width": 0}, showlegend=False, hoverinfo="skip", legendgroup=group),
            go.Scatter(x=x, y=lo, fill="tonexty", line={"width": 0}, fillcolor=fill, name=band_name,
                       legendgroup=group, showlegend=group is None),
            go.Scatter(x=x, y=mid, name=name, line={"color": color}, legendgroup=group)]


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


#: Line colour and band fill of each forecast percentile.
PERCENTILE_COLOURS = {50.0: ("#2ca02c", "rgba(44,160,44,0.15)"), 90.0: ("#1f77b4", "rgba(31,119,180,0.15)"),
                      95.0: ("#9467bd", "rgba(148,103,189,0.15)")}
#: Line colour and band fill of each period's PI in a multi-period class (periods past the fourth are not drawn).
PERIOD_COLOURS = (("#1f77b4", "rgba(31,119,180,0.15)"), ("#9467bd", "rgba(148,103,189,0.15)"),
                  ("#2ca02c", "rgba(44,160,44,0.15)"), ("#8c564b", "rgba(140,86,75,0.15)"))
_PERIOD_PI = re.compile(r"^pi_p(\d+)$")
#: The PI axis's top: PI 2.5 (the goal missed by 150 %), or the measured PIs' largest when higher.
PI_AXIS_TOP = 2.5
MEASURED_COLOUR = "#d62728"

#: Both goal charts' height: beside each other on the desk, their plots line up (legends of three rows).
GOAL_CHART_HEIGHT = 480


def _goal_title(text: str, *more: str) -> dict[str, Any]:
    """A goal chart's title, what it is for (engines, what the shading is) in a smaller second line.

    Two lines, not one: on a half-width desk column a one-line title runs past the chart's edge.
    """
    said = "; ".join(m for m in more if m)
    return {"text": text + (f"<br><sup>{said}</sup>" if said else ""), "font": {"size": 15}}


def _legend_below(columns: int) -> dict[str, Any]:
    """A goal chart's legend under the plot, in ``columns`` columns, in the order drawn.

    Under it, both plots are as wide as the page and their load axes line up one above the other;
    in columns, a legend stays a few rows high on a half-page desk column or a printed page (one
    entry per row would leave the plot a strip).
    """
    return {"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0, "traceorder": "normal",
            "entrywidth": 1.0 / columns, "entrywidthmode": "fraction", "font": {"size": 12}}


def _goal_load_top(curve: pd.DataFrame, measured: pd.DataFrame, crossing: Mapping[str, float]) -> float:
    """How far a goal chart's load axis goes: past the PI 1 crossing's band and the measured loads.

    Past the crossing the PI climbs to saturation within a few per cent of load; the curve's own
    end (95 % of saturation) would squeeze the loads measured and the crossing into the chart's left.
    """
    reach = [float(measured["tps"].max())] if not measured.empty else []
    reach += [v for v in (crossing.get("pi_tps", math.nan), crossing.get("pi_tps_hi", math.nan)) if math.isfinite(v)]
    end = float(curve["tps"].max())
    return min(end, max(reach) * 1.15) if reach else end


def _shown(curve: pd.DataFrame, mid: str, lo: str, hi: str, x_top: float, y_top: float) -> pd.DataFrame:
    """``curve``'s rows up to ``x_top`` as drawn: ``tps``, and the three columns as ``mid``, ``lo``, ``hi``.

    A value past saturation (inf) is not drawn; as :func:`response_figure` draws the response's
    band, where some bootstrap draws no longer answer the band's upper edge goes past the chart's
    top.
    """
    rows = curve[curve["tps"] <= x_top * 1.0001]
    shown = pd.DataFrame({"tps": rows["tps"]})
    for name, col in (("mid", mid), ("lo", lo), ("hi", hi)):
        shown[name] = rows[col].replace([math.inf, -math.inf], math.nan)
    shown["hi"] = shown["hi"].where(shown["hi"].notna() | shown["lo"].isna(), 2 * y_top)
    return shown


def pi_curve_figure(curve: pd.DataFrame, measured: pd.DataFrame, *, goal_words: str,
                    crossing: Mapping[str, float], configuration: str = "") -> go.Figure:
    """The forecast Performance Index against load with its band, PI 1, the measured PIs and the crossing.

    Parameters
    ----------
    curve : DataFrame
        :func:`kneecap.goal_curves.goal_curve`: ``tps``, ``pi``, ``pi_lo``, ``pi_hi``; for a
        multi-period class each period's ``pi_p<N>``, ``pi_lo_p<N>``, ``pi_hi_p<N>``, drawn
        instead (a line each).
    measured : DataFrame
        :func:`kneecap.goal_curves.measured_goal_points`: ``tps``, ``period``,
        ``performance_index`` per RMF interval and period (may be empty).
    goal_words : str
        The goal as WLM states it, each period's for a multi-period class (in the title).
    crossing : mapping
        ``pi_tps``, ``pi_tps_lo``, ``pi_tps_hi``: where the PI passes 1 and its band, and
        ``pi_period`` the period that passes first in a multi-period class
        (:func:`kneecap.goal_answers.goal_columns`; NaN: not within 95 % of saturation).
    configuration : str
        The engines the forecast is for, in words (in the title).
    """
    pis = measured["performance_index"].dropna() if not measured.empty else pd.Series(dtype=float)
    y_top = max(PI_AXIS_TOP, float(pis.max()) * 1.15 if len(pis) else 0.0)
    x_top = _goal_load_top(curve, measured, crossing)
    periods = sorted(int(m.group(1)) for m in map(_PERIOD_PI.match, curve.columns) if m)
    fig = go.Figure()
    if not periods:
        shown = _shown(curve, "pi", "pi_lo", "pi_hi", x_top, y_top)
        fig.add_traces(curve_with_band(shown["tps"], shown["mid"], shown["lo"], shown["hi"], "PI forecast"))
    for period, (colour, fill) in zip(periods, PERIOD_COLOURS, strict=False):
        # each period's columns named as goal_columns names them (pi_p<N>, pi_lo_p<N>, pi_hi_p<N>)
        shown = _shown(curve, f"pi_p{period}", f"pi_lo_p{period}", f"pi_hi_p{period}", x_top, y_top)
        fig.add_traces(curve_with_band(shown["tps"], shown["mid"], shown["lo"], shown["hi"],
                                       f"period {period} PI forecast", color=colour,
                                       fill=fill, band_name=f"period {period} 95% band", group=f"p{period}"))
    fig.add_trace(go.Scatter(x=[0.0, x_top], y=[1.0, 1.0], mode="lines", name="PI = 1 (goal met exactly)",
                             line={"dash": "dash", "color": MEASURED_COLOUR, "width": 1}))
    with_pi = measured.loc[pis.index]
    if len(pis) and not periods:
        fig.add_trace(go.Scatter(x=with_pi["tps"], y=pis, mode="markers", name="measured PI (RMF intervals)",
                                 marker={"size": 5, "color": MEASURED_COLOUR, "opacity": 0.5}))
    for period, (colour, _) in zip(periods, PERIOD_COLOURS, strict=False):
        at = with_pi[with_pi["period"] == period] if len(pis) else with_pi
        if len(at):
            fig.add_trace(go.Scatter(x=at["tps"], y=at["performance_index"], mode="markers", legendgroup=f"p{period}",
                                     name=f"period {period} measured PI",
                                     marker={"size": 5, "color": colour, "symbol": "circle-open", "opacity": 0.6}))
    mid, lo, hi = (crossing.get(f"pi_tps{end}", math.nan) for end in ("", "_lo", "_hi"))
    if math.isfinite(mid):
        first = crossing.get("pi_period")
        if math.isfinite(lo) and math.isfinite(hi):
            fig.add_trace(span(lo, hi, y_top, f"PI 1 95% band {lo:.4g}-{hi:.4g} tps", KNEE_FILL, 1100))
        fig.add_trace(vline(mid, y_top, f"PI passes 1 at {mid:.4g} tps"
                            + (f" (period {first})" if periods and first is not None else "")))
    fig.update_layout(template=TEMPLATE, xaxis_title="class load (tps)", yaxis_title="PI (actual / goal)",
                      height=GOAL_CHART_HEIGHT, legend=_legend_below(2), xaxis_range=[0, x_top], yaxis_range=[0, y_top],
                      title=_goal_title("Performance Index against load", f"WLM goal {goal_words}", configuration))
    return fig


def percentile_curve_figure(curve: pd.DataFrame, measured: pd.DataFrame, *, goal: tuple[str, float, float] | None,
                            crossing: Mapping[str, float], configuration: str = "") -> go.Figure:
    """The forecast response percentiles against load with their bands, the goal and the measured percentiles.

    Parameters
    ----------
    curve : DataFrame
        :func:`kneecap.goal_curves.goal_curve`: ``tps`` and ``resp_pNN_ms`` with ``_lo`` / ``_hi``
        for NN in 50, 90, 95.
    measured : DataFrame
        :func:`kneecap.goal_curves.measured_goal_points`: ``tps`` and the bucket bounds
        ``resp_pNN_ms`` per RMF interval (may be empty).
    goal : (goal_type, goal_resp_ms, goal_percentile) or None
        The class's response time goal (:func:`kneecap.goal_curves.response_goal`): a line at
        its response (a percentile goal's is on the percentile, an average goal's on the mean).
    crossing : mapping
        ``pi_tps`` and its band: where the PI passes 1, so that both charts cover the same loads.
    configuration : str
        The engines the forecast is for, in words (in the title).
    """
    x_top = _goal_load_top(curve, measured, crossing)
    bounds = [measured[f"resp_p{p:g}_ms"].dropna() for p in PERCENTILE_COLOURS] if not measured.empty else []
    measured_top = max((float(b.max()) for b in bounds if len(b)), default=0.0)
    drawn = curve[curve["tps"] <= x_top]["resp_p95_ms"].replace([math.inf, -math.inf], math.nan).dropna()
    if goal is not None:
        y_top = goal[1] * PI_AXIS_TOP
    else:
        y_top = float(drawn.quantile(0.9)) * 1.5 if len(drawn) else 1.0
    y_top = max(y_top, measured_top * 1.15)
    fig = go.Figure()
    for pct, (colour, fill) in PERCENTILE_COLOURS.items():
        col = f"resp_p{pct:g}_ms"
        shown = _shown(curve, col, f"{col}_lo", f"{col}_hi", x_top, y_top)
        fig.add_traces(curve_with_band(shown["tps"], shown["mid"], shown["lo"], shown["hi"],
                                       f"p{pct:g} forecast", color=colour, fill=fill,
                                       band_name=f"p{pct:g} 95% band", group=f"p{pct:g}"))
    for pct, (colour, _) in PERCENTILE_COLOURS.items():
        col = f"resp_p{pct:g}_ms"
        if measured.empty or not measured[col].notna().any():
            continue
        at = measured[measured[col].notna()]
        fig.add_trace(go.Scatter(x=at["tps"], y=at[col], mode="markers", legendgroup=f"p{pct:g}",
                                 name=f"p{pct:g} measured",
                                 marker={"size": 6, "color": colour, "symbol": "triangle-down", "opacity": 0.5}))
    mid = crossing.get("pi_tps", math.nan)
    if math.isfinite(mid):
        # named on the line, not in the legend: the PI chart's legend names it, and a fourth short row
        # here would take the plot's height on a half-width column
        fig.add_trace(vline(mid, y_top, f"PI passes 1 at {mid:.4g} tps"))
        fig.data[-1].showlegend = False
        fig.add_annotation(x=mid, y=y_top, text=f"PI 1 at {mid:.4g} tps", showarrow=False, xanchor="right",
                           yanchor="top", font={"size": 11, "color": "orange"})
    # the goal last: its legend entry, the longest, ends the legend and runs into no other
    if goal is not None:
        kind, resp, pct = goal
        # an average goal is on the mean: its line is where the mean (not a percentile drawn) meets it
        name = (f"goal: {pct:g} % within {resp:g} ms" if kind == "percentile"
                else f"goal: average {resp:g} ms (on the mean)")
        fig.add_trace(go.Scatter(x=[0.0, x_top], y=[resp, resp], mode="lines", name=name,
                                 line={"dash": "dash", "color": MEASURED_COLOUR, "width": 1}))
    fig.update_layout(template=TEMPLATE, xaxis_title="class load (tps)", yaxis_title="response time (ms)",
                      height=GOAL_CHART_HEIGHT, legend=_legend_below(3), xaxis_range=[0, x_top],
                      yaxis_range=[0, y_top],
                      title=_goal_title("Response time percentiles against load", configuration,
                                        "shaded: 95% bands"))
    return fig


def plotly_js() -> str:
    """plotly.js itself, to inline once in a page so that it opens without a network."""
    return plotly.offline.get_plotlyjs()


def figure_div(fig: go.Figure, div_id: str) -> str:
    """``fig`` as an HTML ``<div>`` and the script that draws it, without plotly.js (:func:`plotly_js`)."""
    config: dict[str, Any] = {"displaylogo": False, "responsive": True}
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id, config=config)
