"""Knee & what-if: measured points, the fitted response curve with its band, the knee, sliders."""

import math

import charts
import inputs
import plotly.graph_objects as go
import resources as res
import streamlit as st
import tables
from charts import span, vline

from kneecap import forecasting, measured_fit, modeling


def nice_ceiling(x: float) -> float:
    """The smallest 1, 2, 2.5 or 5 x 10^n at or above ``x`` (a slider's end)."""
    if not x > 0 or not math.isfinite(x):
        return 1.0
    p = 10.0 ** math.floor(math.log10(x))
    return next(m * p for m in (1, 2, 2.5, 5, 10) if m * p >= x * (1 - 1e-12))


def fmt(x: float, unit: str = "", digits: int = 2) -> str:
    """A number with its unit, ``-`` for NaN and ``saturated`` for an infinite response."""
    if x != x:
        return "-"
    if math.isinf(x):
        return "saturated"
    return f"{x:.{digits}f}{unit}"


def what_if_marker(x: float, at: dict, label: str) -> go.Scatter:
    """The what-if point on the response chart with its 95 % band as an error bar (not only in a tooltip)."""
    resp, lo, hi = at["resp_ms"], at["resp_ms_lo"], at["resp_ms_hi"]
    finite = all(math.isfinite(v) for v in (resp, lo, hi))
    return go.Scatter(x=[x], y=[resp if finite else None], mode="markers",
                      marker={"size": 11, "symbol": "diamond", "color": "#2ca02c"},
                      error_y={"type": "data", "symmetric": False, "array": [hi - resp if finite else 0],
                               "arrayminus": [resp - lo if finite else 0], "color": "#2ca02c", "thickness": 2,
                               "width": 8},
                      name=f"what-if {label}: {fmt(resp, ' ms')} (95% band {fmt(lo)}-{fmt(hi)} ms)")


def band_delta(at: dict) -> str | None:
    """The response's 95 % band as a metric's second line (None when there is no response)."""
    if not (math.isfinite(at["resp_ms_lo"]) and math.isfinite(at["resp_ms_hi"])):
        return None
    return f"95% band {at['resp_ms_lo']:.2f}-{at['resp_ms_hi']:.2f} ms"


def report_button(workload: str, key: str, load: float, configuration: dict[str, float]) -> None:
    """The capacity report's download, asked at the what-if point on the sliders' machine.

    The file `kneecap report --workload --load --n-gcp --n-ziip ...` writes, made when pressed.
    """
    st.download_button("Download capacity report (HTML)",
                       lambda: res.report_html(workload, key, load, configuration),
                       file_name=f"{workload}-capacity-report.html", mime="text/html", key="knee_report",
                       on_click="ignore", help="the question, the data, the model and its errors, the knee and "
                       "when it is reached, the PI, the charts, the caveats and the versions, asked at the what-if "
                       "point on the machine the sliders set, in one file that opens without a network "
                       "(`kneecap report`)")


def class_knee_page(workload: str, key: str, model) -> None:
    """The knee of a WLM class from its RMF intervals: load in tps, the LPAR's other classes around it."""
    base = model.base
    measured_max = float(model.train_ranges["tps_max"])
    base_knee = res.class_knee(workload, key, int(base["n_gcp"]), int(base["n_ziip"]), 1.0)
    st.caption(f"{workload} is a WLM class modelled from its RMF intervals (SMF 72.3 + 70.1): open arrivals "
               f"in tps on {int(base['n_gcp'])} GCP + {int(base['n_ziip'])} zIIP, the other classes "
               f"{base['bg_gcp_busy_pct']:.1f} % busy per GCP and {base['bg_ziip_busy_pct']:.1f} % per zIIP at "
               "the class's peak. 'Other classes' load x' grows or shrinks their load.")
    top = nice_ceiling(3 * max(base_knee.max_tps, measured_max))
    step = nice_ceiling(top / 500)
    left, right = st.columns(2)
    with left:
        # default: the curve up to saturation on the base LPAR (beyond it no response is drawn)
        max_tps = st.slider("Class tps (curve up to)", step, top,
                            value=min(top, math.ceil(base_knee.max_tps / step) * step), step=step,
                            key=inputs.widget_key("knee_max_tps", workload))
        fine = step / 10
        tps = st.slider("Class tps (what-if point)", 0.0, float(max_tps),
                        value=min(float(max_tps), round(measured_max / fine) * fine), step=fine,
                        key=inputs.widget_key("knee_tps", workload),
                        help=f"the class's busiest measured interval ran {measured_max:.4g} tps")
        bg = st.slider("Other classes' load x", 0.0, 3.0, value=1.0, step=0.05,
                       key=inputs.widget_key("knee_bg_load", workload),
                       help="Their measured busy at the class's peak times this factor (1: as measured).")
    with right:
        n_gcp = st.slider("GCPs", 1, 16, value=int(base["n_gcp"]), key=inputs.widget_key("knee_n_gcp", workload))
        n_ziip = st.slider("zIIPs", 0, 16, value=int(base["n_ziip"]), key=inputs.widget_key("knee_n_ziip", workload))
    choice = inputs.engine_inputs("knee", workload, model.measured_engines, smt=True)

    try:
        knee = res.class_knee(workload, key, n_gcp, n_ziip, float(bg), choice.engines)
    except modeling.ModelError as exc:
        st.error(f"{workload}: {exc}")
        st.stop()
    curve = res.class_curve(workload, key, n_gcp, n_ziip, float(bg), float(max_tps), choice.engines)
    at = res.class_point(workload, key, max(float(tps), 1e-9 * float(max_tps)), n_gcp, n_ziip, float(bg),
                         choice.engines)
    points = res.class_points(workload)

    configuration = ", ".join(filter(None, [inputs.configuration_words(n_gcp, n_ziip, other_load=float(bg)),
                                            choice.words]))
    st.markdown(f"**{configuration}:** {modeling.knee_sentence(knee, measured_max)}")
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric(f"Response at {tps:.4g} tps", fmt(at["resp_ms"], " ms"), delta=band_delta(at), delta_color="off",
              delta_arrow="off", help="the model's response at the what-if point, with its 95 % band")
    m2.metric("Knee (tps)", f"{knee.load:.4g}",
              help=f"95% band {knee.load_lo:.4g}-{knee.load_hi:.4g}")
    m3.metric("zIIP busy (per engine)", fmt(at["ziip_busy_pct"], " %", 0),
              help="all classes' work on the zIIPs, GCP help included")
    m4.metric("GCP busy (per engine)", fmt(at["gcp_busy_pct"], " %", 0), help="all classes' work on the GCPs")
    m5.metric("Eligible work on GCPs", fmt(at["ziip_eligible_on_gcp_share_pct"], " %", 1),
              help="share of the class's zIIP-eligible CPU that ran on GCPs (IIPCP / (IIP + IIPCP))")
    beyond = forecasting.extrapolation((model.train_ranges["tps_min"], measured_max), float(tps), "tps")
    for warning in res.answer_warnings(workload, key, beyond):
        st.warning(f"Response at {tps:.4g} tps: {warning}.")

    shown = curve.replace([float("inf"), float("-inf")], float("nan"))
    y_top = max(2 * knee.k * knee.unloaded_resp_ms,
                float(points["resp_ms"].max()) * 1.3 if not points.empty else 0.0)
    # just past saturation some bootstrap draws still answer and some do not: the band runs from the
    # lowest response up without bound, so its upper edge is drawn past the chart's top (a gap in it
    # would leave the fill to join the last finite edge point)
    upper = shown["resp_ms_hi"].where(shown["resp_ms_hi"].notna() | shown["resp_ms_lo"].isna(), 2 * y_top)
    lo_tps, hi_tps = model.train_ranges["tps_min"], model.train_ranges["tps_max"]
    fig = go.Figure()
    fig.add_trace(span(lo_tps, hi_tps, y_top, f"fitted on {lo_tps:.4g}-{hi_tps:.4g} tps", "rgba(128,128,128,0.08)",
                       900))
    fig.add_traces(charts.curve_with_band(shown["tps"], shown["resp_ms"], shown["resp_ms_lo"], upper,
                                          f"model ({res.model_source(workload)})"))
    if not points.empty and "tps" in points:
        same = points[(points["n_ziip"].fillna(-1) == n_ziip) & (points["n_gcp"].fillna(-1) == n_gcp)]
        other = points.drop(same.index)
        fig.add_trace(go.Scatter(x=same["tps"], y=same["resp_ms"], mode="markers", name="RMF intervals (this config)",
                                 marker={"size": 5, "color": "#d62728", "opacity": 0.6}))
        if not other.empty:
            fig.add_trace(go.Scatter(x=other["tps"], y=other["resp_ms"], mode="markers",
                                     name="RMF intervals (other configs)",
                                     marker={"size": 5, "symbol": "x", "color": "#7f7f7f", "opacity": 0.6}))
    fig.add_trace(span(knee.load_lo, knee.load_hi, y_top,
                       f"knee 95% band {knee.load_lo:.4g}-{knee.load_hi:.4g}", "rgba(255,165,0,0.15)",
                       950))
    fig.add_trace(vline(knee.load, y_top,
                        f"model knee ~{knee.load:.4g} tps (R > {knee.k:g}x unloaded)"))
    fig.add_trace(vline(float(tps), y_top, f"what-if {float(tps):.4g} tps", dash="dot", color="#2ca02c"))
    fig.add_trace(what_if_marker(float(tps), at, f"{float(tps):.4g} tps"))
    fig.update_layout(xaxis_title="class tps", yaxis_title="response time (ms)", height=420,
                      xaxis_range=[0, float(max_tps) * 1.02], yaxis_range=[0, y_top])
    charts.show(fig, key="knee_chart")
    band = forecasting.band_sentence(curve, "tps", "tps", knee.load)
    if band:
        # a band of a few % is about as thin as the line on an axis scaled to the knee's response:
        # its width said in words, not drawn wider than the model has it
        st.caption(f"**Response band (95 %):** {band}. It runs along the whole curve; at low load it is about as "
                   "thin as the line because the model is well determined there: the intervals pin the unloaded "
                   "response down.")
    if knee.load > max_tps:
        st.caption(f"The knee (~{knee.load:.4g} tps) lies beyond the curve drawn: raise "
                   "'Class tps (curve up to)' to see the curve bend.")
    if max_tps > knee.max_tps:
        st.caption(f"Beyond {knee.max_tps:.4g} tps a pool the class needs is full: no response is drawn there.")

    util = go.Figure()
    util.add_trace(go.Scatter(x=shown["tps"], y=shown["ziip_busy_pct"], name="zIIP busy % (per engine, all classes)"))
    util.add_trace(go.Scatter(x=shown["tps"], y=shown["gcp_busy_pct"], name="GCP busy % (per engine, all classes)"))
    util.add_trace(go.Scatter(x=shown["tps"], y=shown["ziip_eligible_on_gcp_share_pct"],
                              name="eligible work on GCPs, % of eligible"))
    util.add_vline(x=knee.load, line_dash="dash", line_color="orange")
    util.update_layout(xaxis_title="class tps", yaxis_title="%", height=300)
    charts.show(util, key="util_chart")
    st.download_button("Download curve (CSV)", lambda: tables.csv_text(curve), file_name=f"{workload}-curve.csv",
                       mime="text/csv", key="knee_download", on_click="ignore")
    report_button(workload, key, max(float(tps), 1e-9 * float(max_tps)),
                  {"n_gcp": n_gcp, "n_ziip": n_ziip, "bg_load_factor": float(bg), **dict(choice.engines)})


st.title("Knee & what-if")
workloads = res.workloads_with("response")
if not workloads:
    st.info("No response-time model has a champion yet. Run `make run` (or `dvc repro` then "
            "`kneecap promote --if-missing`).")
    st.stop()
default = inputs.opening_workload(workloads, "knee_workload")
workload = st.selectbox("Workload", workloads, index=default, key="knee_workload")
inputs.follow_workload("knee", workload)
key = res.champion_key(workload)
model = res.response_model(workload)
if measured_fit.is_class_model(model):
    class_knee_page(workload, key, model)
    st.stop()
if not (model.pools and model.load_unit == "clients"):
    st.warning(f"{workload}: the champion is a {model.family} model; the knee needs a closed-workload model.")
    st.text(model.summary())
    st.stop()

base = forecasting.default_configuration(model)
left, right = st.columns(2)
with left:
    max_clients = st.slider("Clients (curve up to)", 50, 5000,
                            value=max(600, int(model.train_ranges["clients"][1] * 1.3)),
                            step=50, key=inputs.widget_key("knee_max_clients", workload))
    clients = st.slider("Clients (what-if point)", 1, max_clients,
                        value=min(max_clients, int(model.train_ranges["clients"][1])),
                        key=inputs.widget_key("knee_clients", workload))
    think = st.slider("Think time (ms)", 0, 2000, value=int(base["think_time_ms"]), step=10,
                      key=inputs.widget_key("knee_think", workload))
with right:
    n_gcp = st.slider("GCPs", 1, 16, value=int(base["n_gcp"]), key=inputs.widget_key("knee_n_gcp", workload))
    n_ziip = st.slider("zIIPs", 0, 16, value=int(base["n_ziip"]), key=inputs.widget_key("knee_n_ziip", workload))
choice = inputs.engine_inputs("knee", workload, getattr(model, "measured_engines", {}), smt=True)

# the knee first, told how far the curve goes: one solve per think time serves the knee (each
# draw until it has crossed), the curve and the what-if point
knee = res.knee(workload, key, n_gcp, n_ziip, float(think), max_clients, choice.engines)
curve = res.curve(workload, key, n_gcp, n_ziip, float(think), max_clients, choice.engines)
at = res.point(workload, key, float(clients), n_gcp, n_ziip, float(think), choice.engines)
points = res.measured_points(workload)

configuration = ", ".join(filter(None, [inputs.configuration_words(n_gcp, n_ziip, float(think)), choice.words]))
st.markdown(f"**{configuration}:** {modeling.knee_sentence(knee)}")
if hasattr(model, "calibration_sentence"):
    st.caption(f"**Dispatcher structures:** {model.structure_sentence()}. "
               f"**Band held out:** {model.calibration_sentence()}.")
m1, m2, m3, m4 = st.columns(4)
m1.metric(f"Response at {clients} clients", fmt(at["resp_ms"], " ms"), delta=band_delta(at), delta_color="off",
          delta_arrow="off", help="the model's response at the what-if point, with its 95 % band")
m2.metric("Throughput", f"{at['tps']:.0f} tps")
m3.metric("zIIP busy (offered)", "-" if at["ziip_busy_pct"] != at["ziip_busy_pct"] else f"{at['ziip_busy_pct']:.0f} %")
m4.metric("Eligible work on GCPs", f"{at['ziip_eligible_on_gcp_share_pct']:.1f} %",
          help="share of the workload's zIIP-eligible CPU that runs on GCPs (IIPCP / (IIP + IIPCP))")
trained = model.train_ranges["clients"]
beyond = forecasting.extrapolation(trained, clients, "clients",
                                       configuration=(n_gcp, n_ziip, float(think)),
                                       measured=model.train_ranges.get("configs"))
structures = res.structure_knees(workload, key, n_gcp, n_ziip, float(think), choice.engines)
for warning in res.answer_warnings(workload, key, {**beyond, **structures}):
    st.warning(f"Response at {clients} clients: {warning}.")
if beyond["extrapolation_x"] > 1 or "never measured" in beyond["extrapolation"]:
    widened = "widened by the error the model's own rolling-origin refits made past their data" \
        if getattr(model, "extrapolation_spread", None) \
        else "the fit's uncertainty only (too few loads to measure more)"
    st.caption(f"The what-if point is {beyond['extrapolation']}: its band is {widened}.")
if hasattr(model, "dispatch"):
    caveat = forecasting.latched_help_caveat(res.answering(workload, key, choice.engines).dispatch(n_gcp, n_ziip),
                                             model.cpu_ms_per_tran, model.ziip_eligible_fraction, at["tps"],
                                             float(think), at["resp_ms"])
    if caveat is not None:
        st.warning(f"The what-if point: {caveat}.")

has_knee = knee.load == knee.load and knee.load < float("inf")
x_max = max(max_clients, knee.load_hi if has_knee and knee.load_hi < float("inf") else 0) * 1.02
y_top = float(max(curve["resp_ms"].quantile(0.9) * 1.5, points["resp_ms"].max() * 1.3 if not points.empty else 1))


fig = go.Figure()
fig.add_trace(span(trained[0], trained[1], y_top, f"fitted on {trained[0]:.0f}-{trained[1]:.0f} clients",
                   "rgba(128,128,128,0.08)", 900))
fig.add_traces(charts.curve_with_band(curve["clients"], curve["resp_ms"], curve["resp_ms_lo"], curve["resp_ms_hi"],
                                      f"model ({res.model_source(workload)})"))
observed = None
if not points.empty and "clients" in points:
    same = points[(points["n_ziip"].fillna(0) == n_ziip) & (points["n_gcp"].fillna(0) == n_gcp)]
    other = points.drop(same.index)
    fig.add_trace(go.Scatter(x=same["clients"], y=same["resp_ms"], mode="markers", name="measured (this config)",
                             marker={"size": 10, "color": "#d62728"}))
    if not other.empty:
        fig.add_trace(go.Scatter(x=other["clients"], y=other["resp_ms"], mode="markers",
                                 name="measured (other configs)",
                                 marker={"size": 9, "symbol": "x", "color": "#7f7f7f"}))
    observed = measured_fit.observed_knee_point(same)
if has_knee:
    fig.add_trace(span(knee.load_lo, min(knee.load_hi, x_max), y_top,
                       f"knee 95% band {knee.load_lo:.0f}-{knee.load_hi:.0f}",
                       "rgba(255,165,0,0.15)", 950))
    fig.add_trace(vline(knee.load, y_top, f"model knee ~{knee.load:.0f} (R > {knee.k:g}x unloaded)"))
fig.add_trace(what_if_marker(float(clients), at, f"{clients} clients"))
if observed is not None:
    # Kneedle on the measured points: where they bend, a check on the model's knee, never a forecast
    fig.add_trace(go.Scatter(x=[observed["clients"]], y=[observed["resp_ms"]], mode="markers",
                             marker={"size": 16, "symbol": "star", "color": "#2ca02c"},
                             name=f"observed knee (Kneedle) {observed['clients']:.0f} clients"))
fig.update_layout(xaxis_title="clients", yaxis_title="response time (ms)", height=420, xaxis_range=[0, x_max],
                  yaxis_range=[0, y_top])
charts.show(fig, key="knee_chart")
band = forecasting.band_sentence(curve, "clients", "clients", knee.load if has_knee else float("nan"))
if band:
    # a band of a few % is as thin as the line on an axis scaled to the knee: its width said in words
    st.caption(f"**Response band (95 %):** {band}. It runs along the whole curve; where it looks as thin as the "
               "line the measured points pin the response down.")
if has_knee and knee.load > max_clients:
    st.caption(f"The knee (~{knee.load:.0f} clients) lies beyond the curve drawn: raise "
               "'Clients (curve up to)' to see the curve bend.")

util = go.Figure()
util.add_trace(go.Scatter(x=curve["clients"], y=curve["ziip_busy_pct"], name="zIIP busy % (offered, per engine)"))
util.add_trace(go.Scatter(x=curve["clients"], y=curve["gcp_busy_pct"], name="GCP busy % (per engine)"))
util.add_trace(go.Scatter(x=curve["clients"], y=curve["ziip_eligible_on_gcp_share_pct"],
                          name="eligible work on GCPs, % of eligible"))
util.update_layout(xaxis_title="clients", yaxis_title="%", height=300)
charts.show(util, key="util_chart")
# the CSV is written when the button is pressed, not on every slider step
st.download_button("Download curve (CSV)", lambda: tables.csv_text(curve), file_name=f"{workload}-curve.csv",
                   mime="text/csv", key="knee_download", on_click="ignore")
report_button(workload, key, float(clients), {"n_gcp": n_gcp, "n_ziip": n_ziip, "think_time_ms": float(think),
                                              **dict(choice.engines)})
