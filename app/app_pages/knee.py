"""Knee & what-if: measured points, the fitted response curve with its band, the knee, sliders."""

import plotly.graph_objects as go
import streamlit as st

import resources as res

st.title("Knee & what-if")
workloads = res.workloads_with("response")
if not workloads:
    st.info("No response-time model has a champion yet. Run `make run` (or `dvc repro` then "
            "`kneecap promote --if-missing`).")
    st.stop()
default = workloads.index("zosconnect_cics_diag") if "zosconnect_cics_diag" in workloads else 0
workload = st.selectbox("Workload", workloads, index=default, key="knee_workload")
key = res.champion_key(workload)
model = res.response_model(workload)
if model.family != "closed_mva":
    st.warning(f"{workload}: the champion is a {model.family} model; the knee needs a closed-workload model.")
    st.text(model.summary())
    st.stop()

base = res.forecasting.default_configuration(model)
left, right = st.columns(2)
with left:
    max_clients = st.slider("Clients (curve up to)", 50, 5000, value=max(600, int(model.train_ranges["clients"][1] * 1.3)),
                            step=50, key="knee_max_clients")
    clients = st.slider("Clients (what-if point)", 1, max_clients, value=min(max_clients, int(model.train_ranges["clients"][1])),
                        key="knee_clients")
    think = st.slider("Think time (ms)", 0, 2000, value=int(base["think_time_ms"]), step=10, key="knee_think")
with right:
    n_gcp = st.slider("GCPs (n_gcp)", 1, 16, value=int(base["n_gcp"]), key="knee_n_gcp")
    n_ziip = st.slider("zIIPs (n_ziip)", 0, 16, value=int(base["n_ziip"]), key="knee_n_ziip")

curve = res.curve(workload, key, n_gcp, n_ziip, float(think), max_clients)
knee = res.knee(workload, key, n_gcp, n_ziip, float(think))
at = res.point(workload, key, float(clients), n_gcp, n_ziip, float(think))
points = res.measured_points(workload)

st.markdown(f"**Knee:** {res.forecasting.knee_sentence(knee)}")
m1, m2, m3, m4 = st.columns(4)
m1.metric(f"Response at {clients} clients", f"{at['resp_ms']:.2f} ms", help=f"band {at['resp_ms_lo']:.2f}-{at['resp_ms_hi']:.2f} ms")
m2.metric("Throughput", f"{at['tps']:.0f} tps")
m3.metric("zIIP busy (offered)", "-" if at["ziip_busy_pct"] != at["ziip_busy_pct"] else f"{at['ziip_busy_pct']:.0f} %")
m4.metric("Eligible work on GCPs", f"{at['spill_pct']:.1f} %")

fig = go.Figure()
fig.add_trace(go.Scatter(x=curve["clients"], y=curve["resp_ms_hi"], line={"width": 0}, showlegend=False, hoverinfo="skip"))
fig.add_trace(go.Scatter(x=curve["clients"], y=curve["resp_ms_lo"], fill="tonexty", line={"width": 0},
                         fillcolor="rgba(31,119,180,0.2)", name="95% band"))
fig.add_trace(go.Scatter(x=curve["clients"], y=curve["resp_ms"], name="model", line={"color": "#1f77b4"}))
if not points.empty and "clients" in points:
    same = points[(points["n_ziip"].fillna(0) == n_ziip) & (points["n_gcp"].fillna(0) == n_gcp)]
    other = points.drop(same.index)
    fig.add_trace(go.Scatter(x=same["clients"], y=same["resp_ms"], mode="markers", name="measured (this config)",
                             marker={"size": 10, "color": "#d62728"}))
    if not other.empty:
        fig.add_trace(go.Scatter(x=other["clients"], y=other["resp_ms"], mode="markers", name="measured (other configs)",
                                 marker={"size": 9, "symbol": "x", "color": "#7f7f7f"}))
has_knee = knee["k_clients"] == knee["k_clients"] and knee["k_clients"] < float("inf")
if has_knee:
    fig.add_vrect(x0=knee["k_clients_lo"], x1=knee["k_clients_hi"], fillcolor="orange", opacity=0.15, line_width=0)
    fig.add_vline(x=knee["k_clients"], line_dash="dash", line_color="orange",
                  annotation_text=f"knee ~{knee['k_clients']:.0f}")
x_max = max(max_clients, knee["k_clients_hi"] if has_knee and knee["k_clients_hi"] < float("inf") else 0) * 1.02
fig.update_layout(xaxis_title="clients", yaxis_title="response time (ms)", height=420, xaxis_range=[0, x_max],
                  yaxis_range=[0, float(max(curve["resp_ms"].quantile(0.9) * 1.5, points["resp_ms"].max() * 1.3
                                            if not points.empty else 1))])
st.plotly_chart(fig, key="knee_chart")
if has_knee and knee["k_clients"] > max_clients:
    st.caption(f"The knee (~{knee['k_clients']:.0f} clients) lies beyond the curve drawn: raise "
               "'Clients (curve up to)' to see the curve bend.")

util = go.Figure()
util.add_trace(go.Scatter(x=curve["clients"], y=curve["ziip_busy_pct"], name="zIIP busy % (offered, per engine)"))
util.add_trace(go.Scatter(x=curve["clients"], y=curve["gcp_busy_pct"], name="GCP busy % (per engine)"))
util.add_trace(go.Scatter(x=curve["clients"], y=curve["spill_pct"], name="eligible work on GCPs %"))
util.update_layout(xaxis_title="clients", yaxis_title="%", height=300)
st.plotly_chart(util, key="util_chart")
st.download_button("Download curve (CSV)", curve.to_csv(index=False), file_name=f"{workload}-curve.csv",
                   mime="text/csv", key="knee_download")
