"""SMF classes: one WLM class's interval history, its daily peaks and its growth forecast.

The forecast is drawn with its band and the dates it reaches the class's knee and the load its SLO
allows.
"""

import math

import charts
import inputs
import pandas as pd
import plotly.graph_objects as go
import resources as res
import streamlit as st
import tables

from kneecap import forecasting, modeling


def day(value) -> str:
    """The calendar date of a timestamp, ``YYYY-MM-DD``."""
    return pd.Timestamp(value).date().isoformat()


def when(growth: dict, name: str, label: str) -> str:
    """'<label> reached by P90 with 90 % probability, earliest E, most likely M' (kneecap's one wording)."""
    return forecasting.reach_sentence(growth, name, label, horizon_end=growth["forecast"].index[-1])


st.title("SMF classes")
classes = res.class_workloads()
if not classes:
    st.info("No WLM class from SMF has a champion yet: put SMF 70.1 / 72.3 dumps under `data/raw/` and run "
            "`make run` (the open dispatch model is fitted per service and report class).")
    st.stop()
workload = st.selectbox("Class", classes, key="cls_workload")
inputs.follow_workload("cls", workload)
key = res.champion_key(workload)
model = res.response_model(workload)
base = model.base

origin = res.provenance(workload)
if not origin.empty:
    st.caption(f"{int(origin['intervals'].sum())} RMF intervals from {', '.join(map(str, origin['system_id']))}, "
               f"{origin['first_interval_start'].min():%Y-%m-%d %H:%M} to "
               f"{origin['last_interval_start'].max():%Y-%m-%d %H:%M}; the model was fitted on {model.n_train} of "
               f"them ({model.train_ranges['tps_min']:.4g}-{model.train_ranges['tps_max']:.4g} tps).")

base_knee = res.class_knee(workload, key, int(base["n_gcp"]), int(base["n_ziip"]), 1.0)
c1, c2 = st.columns(2)
slo = c1.number_input("Response-time SLO (ms)", 0.01, 100_000.0,
                      value=float(math.ceil(2 * base_knee.unloaded_resp_ms * 10) / 10),
                      key=inputs.widget_key("cls_slo", workload),
                      help=f"default twice the unloaded response ({base_knee.unloaded_resp_ms:.3g} ms)")
growth_rule = res.growth_policy()
period = "day" if growth_rule.freq == "D" else "week"
peak_word = "daily" if period == "day" else "weekly"
horizon = c2.number_input(f"Forecast horizon ({period}s)", 1, 3650, value=int(growth_rule.horizon), step=1,
                          key=inputs.widget_key("cls_horizon", workload),
                          help="params.yaml `growth.horizon`: no crossing is looked for beyond it")
with st.expander("LPAR the knee and the SLO load are computed for", expanded=False):
    l1, l2, l3 = st.columns(3)
    n_gcp = l1.number_input("GCPs", 1, 64, value=int(base["n_gcp"]), key=inputs.widget_key("cls_n_gcp", workload))
    n_ziip = l2.number_input("zIIPs", 0, 64, value=int(base["n_ziip"]), key=inputs.widget_key("cls_n_ziip", workload))
    bg = l3.number_input("Other classes' load x", 0.0, 3.0, value=1.0, step=0.05,
                         key=inputs.widget_key("cls_bg_load", workload),
                         help=f"their busy at the class's peak ({base['bg_gcp_busy_pct']:.1f} % per GCP, "
                              f"{base['bg_ziip_busy_pct']:.1f} % per zIIP) times this factor")

try:
    knee = res.class_knee(workload, key, int(n_gcp), int(n_ziip), float(bg))
except modeling.ModelError as exc:
    st.error(f"{workload}: {exc}")
    st.stop()
slo_tps = res.class_slo_tps(workload, key, float(slo), int(n_gcp), int(n_ziip), float(bg))
try:
    growth = res.class_growth(workload, key, knee.load, knee.load_lo, knee.load_hi,
                              knee.draws, slo_tps, int(horizon))
except ValueError as exc:  # too short or too ragged a history for a trend: said, not guessed
    growth = None
    st.warning(f"No growth forecast for {workload}: {exc}")

peaks = growth["peaks"].dropna() if growth else pd.Series(dtype=float)
m1, m2, m3, m4 = st.columns(4)
m1.metric("Knee (tps)", f"{knee.load:.4g}",
          help=f"95% band {knee.load_lo:.4g}-{knee.load_hi:.4g}; response > {knee.k:g}x unloaded "
               f"({knee.unloaded_resp_ms:.3g} ms) on {int(n_gcp)} GCP + {int(n_ziip)} zIIP")
m2.metric(f"Load at the {slo:g} ms SLO (tps)", "unreachable" if slo_tps != slo_tps else f"{slo_tps:.4g}",
          help="class tps at which the predicted response reaches the SLO")
m3.metric(f"Last {peak_word} peak (tps)", f"{peaks.iloc[-1]:.4g}" if len(peaks) else "-",
          help=f"peak of the {period} starting {day(peaks.index[-1])}" if len(peaks) else None)
m4.metric("Saturation (tps)", f"{knee.max_tps:.4g}")
for warning in res.answer_warnings(workload, key, {f"knee_tps_{rule}_help": value
                                                  for rule, value in knee.by_help_rule.items()}):
    st.warning(f"The knee and the SLO load: {warning}.")

configuration = inputs.configuration_words(int(n_gcp), int(n_ziip), other_load=float(bg))
st.markdown(f"**{configuration}:** knee at {knee.load:.4g} tps "
            f"(95% band {knee.load_lo:.4g}-{knee.load_hi:.4g}): "
            + (when(growth, "knee", "knee") if growth else "no forecast") + ".")
st.caption(f"**Dispatcher structures:** {model.structure_sentence()}. **Band:** {model.calibration_sentence()}.")
if slo_tps != slo_tps:
    st.markdown(f"**SLO:** {slo:g} ms is below the unloaded response ({knee.unloaded_resp_ms:.3g} ms): no load "
                "meets it.")
else:
    st.markdown(f"**SLO:** {slo:g} ms holds up to {slo_tps:.4g} tps: "
                + (when(growth, "slo", "SLO load") if growth and "date_slo" in growth else "no forecast") + ".")

at_peak = float(peaks.iloc[-1]) if len(peaks) else float(model.train_ranges["tps_max"])
goal = res.class_goal(workload, key, at_peak, int(n_gcp), int(n_ziip), float(bg))
if goal.get("goal"):
    pi_at = goal.get("pi_tps", math.nan)
    pi_dates = None
    if growth and pi_at == pi_at:  # the knee's growth paths, with the PI's load as the threshold
        lo, hi = goal["pi_tps_lo"], goal["pi_tps_hi"]
        banded = lo == lo and hi == hi
        pi_dates = res.class_growth(workload, key, pi_at, lo if banded else pi_at, hi if banded else pi_at, (),
                                    math.nan, int(horizon))
    st.markdown(f"**WLM goal {goal['goal']}:** "
                + (f"PI passes 1 at {pi_at:.4g} tps (95% band {goal['pi_tps_lo']:.4g}-{goal['pi_tps_hi']:.4g}): "
                   + (when(pi_dates, "knee", "PI 1") if pi_dates else "no forecast") if pi_at == pi_at
                   else "PI stays under 1 up to 95 % of saturation") + ".")
if "resp_p90_ms" in goal:
    st.caption(f"At {at_peak:.4g} tps (the last {peak_word} peak): "
               + ", ".join(f"p{p} {goal[f'resp_p{p}_ms']:.3g} ms ({goal[f'resp_p{p}_ms_lo']:.3g}-"
                           f"{goal[f'resp_p{p}_ms_hi']:.3g})" for p in (50, 90, 95))
               + (f"; PI {goal['pi']:.2f} ({goal['pi_lo']:.2f}-{goal['pi_hi']:.2f})" if "pi" in goal else "")
               + ". The distribution around the mean is fitted to the intervals' response time buckets.")
goal_curve = res.class_goal_curve(workload, key, int(n_gcp), int(n_ziip), float(bg))
if not goal_curve.empty:
    measured_goal = res.class_goal_points(workload, key)
    side_by_side = iter(st.columns(2))
    if "pi" in goal_curve:  # a class with a response time goal: its PI (each period's) beside the percentiles
        with next(side_by_side):
            charts.show(charts.pi_curve_figure(goal_curve, measured_goal, goal_words=goal["goal"], crossing=goal,
                                               configuration=configuration), key="cls_pi_curve")
    if "resp_p90_ms" in goal_curve:  # one distribution for the class: a multi-period class has one per period
        with next(side_by_side):
            charts.show(charts.percentile_curve_figure(goal_curve, measured_goal,
                                                       goal=res.class_response_goal(workload, key), crossing=goal,
                                                       configuration=configuration), key="cls_percentile_curve")
    st.caption("Measured points: each RMF interval of the class on the LPAR it ran on (its engines and other "
               "classes as measured); a measured percentile, and a percentile goal's measured PI, is the upper "
               "bound of the 72.3 bucket it fell in: at or above the continuous value the forecast gives.")

measured_pi = res.class_measured_pi(workload)
if not measured_pi.empty:
    on_sysplex = (measured_pi["scope"] == "sysplex").any()
    st.markdown("**Measured Performance Index** (SMF 72.3): each system's own, its local PI"
                + ("; and the sysplex PI, from the systems' response time buckets, response times and samples "
                   "summed, as WLM and RMF's sysplex reports see the period" if on_sysplex else "") + ".")
    tables.show_text_table(measured_pi, ["system_id", "scope", "period", "goal", "importance", "intervals",
                                         "pi_median", "pi_max", "missed", "missed_pct"])

history = res.class_history(workload, key)
fig = go.Figure()
fig.add_trace(go.Scatter(x=history["interval_start_at"], y=history["tps"], name="interval tps",
                         line={"color": "#9e9e9e", "width": 1}))
if growth:
    forecast = growth["forecast"]
    dates = [growth.get(f"date_{n}{s}") for n in ("knee", "slo") for s in forecasting.DATE_SUFFIXES]
    reached = [pd.Timestamp(d) for d in dates if d is not None]
    last = peaks.index[-1]
    shown_to = forecast.index[-1]
    if reached:  # draw a little past the latest crossing rather than the whole horizon
        shown_to = min(shown_to, max(reached) + max((max(reached) - last) * 0.25, pd.Timedelta(days=7)))
    fan = forecast[forecast.index <= shown_to]
    # the band's edges drawn as lines too: a band a few tps wide on an axis of hundreds is thinner
    # than a pixel as a fill alone; its width at the end is in the legend
    edge = {"width": 1, "color": "rgba(31,119,180,0.7)"}
    half = float(fan["tps_hi"].iloc[-1] - fan["tps_lo"].iloc[-1]) / 2
    fig.add_trace(go.Scatter(x=fan.index, y=fan["tps_hi"], line=edge, showlegend=False, legendgroup="band",
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=fan.index, y=fan["tps_lo"], fill="tonexty", line=edge, legendgroup="band",
                             fillcolor="rgba(31,119,180,0.35)",
                             name=f"forecast {100 * (1 - model.alpha):g}% band (+/-{half:.3g} tps on "
                                  f"{day(fan.index[-1])})"))
    fig.add_trace(go.Scatter(x=fan.index, y=fan["tps"], name=f"forecast ({growth['method']})",
                             line={"color": "#1f77b4", "dash": "dash"}))
    fig.add_trace(go.Scatter(x=peaks.index, y=peaks.to_numpy(), mode="markers+lines", name=f"{peak_word} peak",
                             line={"color": "#1f77b4"}, marker={"size": 7}))
fig.add_hrect(y0=knee.load_lo, y1=knee.load_hi, fillcolor="orange", opacity=0.15, line_width=0)
fig.add_hline(y=knee.load, line_dash="dash", line_color="orange",
              annotation_text=f"knee {knee.load:.4g} tps (95% band {knee.load_lo:.4g}-"
                              f"{knee.load_hi:.4g})")
if slo_tps == slo_tps:
    fig.add_hline(y=slo_tps, line_dash="dot", line_color="#d62728",
                  annotation_text=f"SLO {slo:g} ms: {slo_tps:.4g} tps", annotation_position="bottom right")
if growth and growth.get("date_knee") is not None and not growth.get("knee_already"):
    fig.add_vline(x=pd.Timestamp(growth["date_knee"]), line_dash="dash", line_color="orange")
if growth and growth.get("date_knee_earliest") is not None and not growth.get("knee_already"):
    # from the earliest plausible day to the day it is reached with 90 % probability (or the horizon)
    reached_by = growth.get("date_knee_p90")
    fig.add_vrect(x0=pd.Timestamp(growth["date_knee_earliest"]),
                  x1=pd.Timestamp(reached_by if reached_by is not None else growth["forecast"].index[-1]),
                  fillcolor="orange", opacity=0.1, line_width=0)
fig.update_layout(xaxis_title="time", yaxis_title="class tps", height=460,
                  title=f"{workload}: interval load, daily peaks and the growth forecast")
charts.show(fig, key="cls_chart")
if growth and growth.get("date_knee_earliest") is not None and not growth.get("knee_already"):
    # the same forecast close up where it meets the knee: a band a few tps wide is invisible on the
    # whole history's axis, and the dates come from where it crosses the knee's band
    start = pd.Timestamp(growth["date_knee_earliest"])
    end = pd.Timestamp(growth.get("date_knee_p90") or growth["forecast"].index[-1])
    pad = max((end - start) * 0.75, pd.Timedelta(days=2))
    near = growth["forecast"][(growth["forecast"].index >= start - pad) & (growth["forecast"].index <= end + pad)]
    if len(near) >= 2:
        zoom = go.Figure()
        zoom.add_trace(go.Scatter(x=near.index, y=near["tps_hi"], line=edge, mode="lines", showlegend=False,
                                  hoverinfo="skip"))
        zoom.add_trace(go.Scatter(x=near.index, y=near["tps_lo"], fill="tonexty", line=edge, mode="lines",
                                  fillcolor="rgba(31,119,180,0.35)",
                                  name=f"forecast {100 * (1 - model.alpha):g}% band"))
        zoom.add_trace(go.Scatter(x=near.index, y=near["tps"], name=f"forecast ({growth['method']})", mode="lines",
                                  line={"color": "#1f77b4", "dash": "dash"}))
        zoom.add_trace(go.Scatter(
            x=[near.index[0], near.index[-1], near.index[-1], near.index[0], near.index[0]],
            y=[knee.load_lo, knee.load_lo, knee.load_hi, knee.load_hi, knee.load_lo],
            fill="toself", fillcolor="rgba(255,165,0,0.25)", line={"width": 0}, mode="lines", hoverinfo="name",
            name=f"knee 95% band {knee.load_lo:.4g}-{knee.load_hi:.4g} tps"))
        zoom.add_vrect(x0=start, x1=end, fillcolor="orange", opacity=0.1, line_width=0)
        low = min(float(near["tps_lo"].min()), knee.load_lo)
        high = max(float(near["tps_hi"].max()), knee.load_hi)
        zoom.update_layout(xaxis_title="time", yaxis_title="class tps", height=320,
                           yaxis_range=[low - 0.05 * (high - low), high + 0.05 * (high - low)],
                           title=f"Close up: the forecast band meets the knee ({day(start)} to {day(end)})")
        charts.show(zoom, key="cls_zoom_chart")

if growth:
    st.subheader("Forecaster")
    st.markdown(f"**{growth['method']}** chosen: {growth['summary']}.")
    hours = f", hours {growth_rule.hours[0]}-{growth_rule.hours[1]}" if growth_rule.hours else ""
    st.markdown(f"Candidates scored by rolling-origin error on the {peak_word} peaks (the smallest wins); a "
                f"{period}'s peak is the {growth_rule.stat} of its intervals' tps{hours} (params.yaml `growth`):")
    tables.show_text_table(growth["competitors"])
    out = pd.concat([peaks.rename("peak_tps"), growth["forecast"]], axis=1)
    out.index.name = "period_start"
    out = out.assign(knee_tps=knee.load, knee_tps_lo=knee.load_lo, knee_tps_hi=knee.load_hi,
                     slo_resp_ms=float(slo), slo_tps=slo_tps).reset_index()
    st.download_button("Download peaks and forecast (CSV)", tables.csv_text(out),
                       file_name=f"{workload}-growth.csv", mime="text/csv", key="cls_download")
