"""Workloads: what was measured, the fitted model curve with its band, and how well it fits.

Shows residuals, the competing models with their cross-validated errors, and the backtest error on
held-out points.
"""

import charts
import plotly.express as px
import plotly.graph_objects as go
import resources as res
import streamlit as st

COLOURS = px.colors.qualitative.D3


def offer(frame, name: str, key: str) -> None:
    """A table and its CSV download."""
    st.dataframe(frame, hide_index=True, key=key)
    st.download_button(f"Download {name} (CSV)", frame.to_csv(index=False), file_name=f"{name}.csv", mime="text/csv",
                       key=f"{key}_download")


st.title("Workloads")
dims = res.table("dim_workloads")
if dims.empty:
    st.info("No published marts yet: run `make run` (or `dvc repro`).")
    st.stop()
offer(dims, "dim_workloads", "wl_dims")

names = dims["workload"].tolist()
default = names.index("zosconnect_cics_diag") if "zosconnect_cics_diag" in names else 0
workload = st.selectbox("Workload", names, index=default, key="wl_workload")
points = res.measured_points(workload)
origin = res.provenance(workload)
if not origin.empty:
    st.subheader("Where the data came from")
    first, last = origin["first_interval_start"].min(), origin["last_interval_start"].max()
    lengths = ", ".join(sorted(set(", ".join(origin["interval_s"]).split(", "))))
    st.markdown(f"**{workload}**: {int(origin['intervals'].sum())} intervals from system "
                f"{', '.join(map(str, origin['system_id']))} ({', '.join(sorted(set(origin['source_id'])))}), "
                f"{first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} (interval starts), {lengths} s intervals, "
                f"{int(origin['days'].max())} day(s).")
    offer(origin, f"{workload}-provenance", "wl_provenance")
st.subheader("Measured points")
offer(points.dropna(axis=1, how="all"), f"{workload}-points", "wl_points")

key = res.champion_key(workload)
models = res.models(workload, key)
if models.response is None and models.cost is None:
    st.info(f"{workload}: no model has a champion (too few points, or not promoted yet: `kneecap promote`).")

for kind, model in (("response", models.response), ("cost", models.cost)):
    if model is None:
        continue
    st.header(f"{kind.capitalize()} model: {res.model_source(workload, kind)}")
    with st.expander("Model summary", expanded=True):
        st.code(model.summary(), language=None)

    curves = res.fit_curves(workload, key) if kind == "response" else None
    if curves is not None and not curves.empty:
        fig = go.Figure()
        for i, (config, c) in enumerate(curves.groupby("config", sort=False)):
            colour = COLOURS[i % len(COLOURS)]
            fig.add_trace(go.Scatter(x=c["clients"], y=c["resp_ms_hi"], line={"width": 0}, showlegend=False,
                                     hoverinfo="skip", legendgroup=config))
            fig.add_trace(go.Scatter(x=c["clients"], y=c["resp_ms_lo"], fill="tonexty", line={"width": 0},
                                     opacity=0.2, fillcolor=colour, showlegend=False, legendgroup=config,
                                     hoverinfo="skip"))
            fig.add_trace(go.Scatter(x=c["clients"], y=c["resp_ms"], name=f"model, {config}", legendgroup=config,
                                     line={"color": colour}))
            first = c.iloc[0]
            seen = points[(points["n_gcp"].fillna(first["n_gcp"]) == first["n_gcp"])
                          & (points["n_ziip"].fillna(first["n_ziip"]) == first["n_ziip"])
                          & (points["think_time_ms"].fillna(first["think_time_ms"]) == first["think_time_ms"])]
            fig.add_trace(go.Scatter(x=seen["clients"], y=seen["resp_ms"], mode="markers", name=f"measured, {config}",
                                     legendgroup=config, marker={"size": 10, "color": colour, "line": {"width": 1}}))
        trained = getattr(model, "train_ranges", {}).get("clients")
        if trained is not None:
            top = float(max(curves["resp_ms_hi"].max(), points["resp_ms"].max() if not points.empty else 0))
            fig.add_trace(charts.span(trained[0], trained[1], top,
                                      f"fitted on {trained[0]:.0f}-{trained[1]:.0f} clients",
                                      "rgba(128,128,128,0.08)", 900))
        fig.update_layout(xaxis_title="clients", yaxis_title="response time (ms)", height=420,
                          title="Measured points and the fitted curve (95% band)")
        charts.show(fig, key=f"wl_curve_{kind}")

    fitted = res.residuals(workload, key, kind)
    over_time = not fitted.empty and "interval_start_at" in fitted and fitted["interval_start_at"].notna().all()
    if over_time:  # RMF intervals: x is the interval's start, sorted, so the fit reads as a history
        fitted = fitted.sort_values("interval_start_at").reset_index(drop=True)
    x = fitted["interval_start_at"] if over_time else fitted.get("point_id")
    if over_time and res.is_class_model(model):
        target = fitted["target"].iloc[0]
        fig = go.Figure()
        fig.add_trace(go.Scatter(x=x, y=fitted["hi"], line={"width": 0}, showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=x, y=fitted["lo"], fill="tonexty", line={"width": 0},
                                 fillcolor="rgba(31,119,180,0.2)", name="95% band"))
        fig.add_trace(go.Scatter(x=x, y=fitted["fitted"], name="fitted (each interval's LPAR)",
                                 line={"color": "#1f77b4"}))
        fig.add_trace(go.Scatter(x=x, y=fitted["measured"], mode="markers", name="measured",
                                 marker={"size": 4, "color": "#d62728"}))
        fig.update_layout(xaxis_title="interval start", yaxis_title=target, height=360,
                          title="Measured and fitted per RMF interval (95% band)")
        charts.show(fig, key=f"wl_fit_{kind}")
        scatter = go.Figure()
        scatter.add_trace(go.Scatter(x=fitted["tps"], y=fitted["measured"], mode="markers", name="measured",
                                     marker={"size": 5, "color": "#d62728", "opacity": 0.6}))
        scatter.add_trace(go.Scatter(x=fitted["tps"], y=fitted["fitted"], mode="markers", name="fitted",
                                     marker={"size": 5, "color": "#1f77b4", "opacity": 0.6}))
        scatter.update_layout(xaxis_title="class tps", yaxis_title=target, height=320,
                              title="Response against the class's load")
        charts.show(scatter, key=f"wl_fit_tps_{kind}")
    if not fitted.empty:
        target = fitted["target"].iloc[0]
        if (curves is None or curves.empty) and not (over_time and res.is_class_model(model)):
            fig = go.Figure()
            fig.add_trace(go.Scatter(x=x, y=fitted["measured"], mode="markers", name="measured",
                                     marker={"size": 10}))
            fig.add_trace(go.Scatter(x=x, y=fitted["fitted"], mode="markers", name="fitted",
                                     error_y={"type": "data", "symmetric": False,
                                              "array": (fitted["hi"] - fitted["fitted"]).to_numpy(),
                                              "arrayminus": (fitted["fitted"] - fitted["lo"]).to_numpy()}))
            fig.update_layout(yaxis_title=target, height=320, title="Measured and fitted (95% band)")
            charts.show(fig, key=f"wl_fit_{kind}")
        st.subheader(f"Residuals ({target})")
        bars = go.Figure(go.Bar(x=x, y=fitted["residual_pct"]))
        bars.update_layout(yaxis_title="fitted / measured - 1 (%)", height=260,
                           xaxis_title="interval start" if over_time else "point")
        charts.show(bars, key=f"wl_resid_chart_{kind}")
        offer(fitted.round({c: 4 for c in fitted.select_dtypes("number").columns}), f"{workload}-{kind}-residuals",
              f"wl_resid_{kind}")

    run_id = res.champion_run(workload, kind)
    competitors = res.run_competitors(run_id) if run_id else None
    if competitors is not None and not competitors.empty:
        st.subheader("Competing models")
        st.markdown("The model families fitted to these points and their leave-one-out (cross-validated) errors:")
        offer(competitors, f"{workload}-{kind}-competitors", f"wl_comp_{kind}")
    metrics = res.run_metrics(workload, kind)
    if not metrics.empty:
        st.subheader("Champion run metrics")
        st.markdown("Training fit and cross-validation errors logged with the registered version:")
        offer(metrics, f"{workload}-{kind}-metrics", f"wl_metrics_{kind}")

backtest = res.backtest_table()
if not backtest.empty:
    st.header("Backtest on held-out points")
    st.markdown("Each model family refitted without the held-out points of a case (`data/backtest`) and "
                "scored on them (`reports/metrics/backtest.json`).")
    offer(backtest, "backtest", "wl_backtest")
