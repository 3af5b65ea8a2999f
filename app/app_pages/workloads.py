"""Workloads: what was measured, the fitted model curve with its band, and how well it fits.

Shows residuals, the competing models with their cross-validated errors, and the backtest error on
held-out points.
"""

import charts
import inputs
import plotly.express as px
import plotly.graph_objects as go
import resources as res
import streamlit as st
import tables
from plotly.colors import hex_to_rgb

from kneecap import measured_fit

COLOURS = px.colors.qualitative.D3


def offer(frame, name: str, key: str, columns: list[str] | None = None) -> None:
    """A table with labelled columns and rounded numbers, and its CSV download (the columns as named)."""
    tables.show_table(frame, key, columns)
    st.download_button(f"Download {name} (CSV)", tables.csv_text(frame), file_name=f"{name}.csv", mime="text/csv",
                       key=f"{key}_download")


def measured_summary(points, dims_row) -> str:
    """'5 points, 50-250 clients, 3 GCPs + 1 zIIP, think time 100 ms' for a table of runs, or the counts."""
    words = [f"{len(points)} measured point(s)"]
    if "clients" in points and points["clients"].notna().any():
        low, high = points["clients"].min(), points["clients"].max()
        words.append(f"{low:g} clients" if low == high else f"{low:g}-{high:g} clients")
    configs = points[[c for c in ("n_gcp", "n_ziip", "think_time_ms") if c in points]].dropna(how="all")
    configs = configs.drop_duplicates()
    engines_known = {"n_gcp", "n_ziip"} <= set(configs) and configs[["n_gcp", "n_ziip"]].notna().all(axis=None)
    if len(configs) == 1 and engines_known:
        row = configs.iloc[0]
        think = row.get("think_time_ms")
        words.append(inputs.configuration_words(row["n_gcp"], row["n_ziip"], think if think == think else None))
    elif len(configs) > 1:
        words.append(f"{len(configs)} configurations")
    sources = str(dims_row["source_ids"]).replace(",", ", ")
    return ", ".join(words) + f"; kind: {dims_row['workload_kind']}, sources: {sources}"


st.title("Workloads")
dims = res.table("dim_workloads")
if dims.empty:
    st.info("No published marts yet: run `make run` (or `dvc repro`).")
    st.stop()

names = dims["workload"].tolist()
default = inputs.opening_workload(names, "wl_workload")
workload = st.selectbox("Workload", names, index=default, key="wl_workload")
points = res.measured_points(workload)
st.markdown(f"**{workload}:** {measured_summary(points, dims.set_index('workload').loc[workload])}.")
with st.expander(f"All {len(dims)} workloads", expanded=False):
    offer(dims, "dim_workloads", "wl_dims", tables.planner_columns(dims, tables.WORKLOAD_COLUMNS))
    st.caption("The sources, the think time, the point counts per measure and whether a response curve or a cost "
               "model can be fitted are in the CSV.")
origin = res.provenance(workload)
with st.expander(f"Measured points ({len(points)})", expanded=False):
    if not origin.empty:
        first, last = origin["first_interval_start"].min(), origin["last_interval_start"].max()
        lengths = ", ".join(sorted(set(", ".join(origin["interval_s"]).split(", "))))
        st.markdown(f"**Where the data came from:** {int(origin['intervals'].sum())} intervals from system "
                    f"{', '.join(map(str, origin['system_id']))} ({', '.join(sorted(set(origin['source_id'])))}), "
                    f"{first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} (interval starts), {lengths} s intervals, "
                    f"{int(origin['days'].max())} day(s).")
        offer(origin, f"{workload}-provenance", "wl_provenance")
    measured = points.dropna(axis=1, how="all")
    offer(measured, f"{workload}-points", "wl_points", tables.point_columns(measured))
    st.caption("Every column the warehouse holds for these points (CPU split, WLM samples, sizes) is in the CSV.")

key = res.champion_key(workload)
models = res.models(workload, key)
if models.response is None and models.cost is None:
    st.info(f"{workload}: no model has a champion (too few points, or not promoted yet: `kneecap promote`).")

for kind, model in (("response", models.response), ("cost", models.cost)):
    if model is None:
        continue
    st.subheader(f"{kind.capitalize()} model: {res.model_source(workload, kind)}")
    fit_tab, resid_tab, metrics_tab, competitors_tab, summary_tab = st.tabs(
        ["Fit", "Residuals", "Run metrics", "Competing models", "Model summary"])
    with summary_tab:
        st.code(model.summary(), language=None)

    curves = res.fit_curves(workload, key) if kind == "response" else None
    fitted = res.residuals(workload, key, kind)
    over_time = not fitted.empty and "interval_start_at" in fitted and fitted["interval_start_at"].notna().all()
    if over_time:  # RMF intervals: x is the interval's start, sorted, so the fit reads as a history
        fitted = fitted.sort_values("interval_start_at").reset_index(drop=True)
    x = fitted["interval_start_at"] if over_time else fitted.get("point_id")
    target = fitted["target"].iloc[0] if not fitted.empty else None
    target_label = tables.column_label(target) if target else ""

    with fit_tab:
        if curves is not None and not curves.empty:
            fig = go.Figure()
            for i, (config, c) in enumerate(curves.groupby("config", sort=False)):
                colour = COLOURS[i % len(COLOURS)]
                # the band in the curve's colour, see-through (a fill's own opacity would be ignored)
                fill = "rgba({}, {}, {}, 0.2)".format(*hex_to_rgb(colour))
                fig.add_trace(go.Scatter(x=c["clients"], y=c["resp_ms_hi"], line={"width": 0}, showlegend=False,
                                         hoverinfo="skip", legendgroup=config))
                fig.add_trace(go.Scatter(x=c["clients"], y=c["resp_ms_lo"], fill="tonexty", line={"width": 0},
                                         fillcolor=fill, name=f"95% band, {config}", legendgroup=config,
                                         hoverinfo="skip"))
                fig.add_trace(go.Scatter(x=c["clients"], y=c["resp_ms"], name=f"model, {config}", legendgroup=config,
                                         line={"color": colour}))
                first = c.iloc[0]
                seen = points[(points["n_gcp"].fillna(first["n_gcp"]) == first["n_gcp"])
                              & (points["n_ziip"].fillna(first["n_ziip"]) == first["n_ziip"])
                              & (points["think_time_ms"].fillna(first["think_time_ms"]) == first["think_time_ms"])]
                fig.add_trace(go.Scatter(x=seen["clients"], y=seen["resp_ms"], mode="markers",
                                         name=f"measured, {config}", legendgroup=config,
                                         marker={"size": 10, "color": colour, "line": {"width": 1}}))
            trained = getattr(model, "train_ranges", {}).get("clients")
            if trained is not None:
                top = float(max(curves["resp_ms_hi"].max(), points["resp_ms"].max() if not points.empty else 0))
                fig.add_trace(charts.span(trained[0], trained[1], top,
                                          f"fitted on {trained[0]:.0f}-{trained[1]:.0f} clients",
                                          "rgba(128,128,128,0.08)", 900))
            fig.update_layout(xaxis_title="clients", yaxis_title="response time (ms)", height=420,
                              title="Measured points and the fitted curve (95% band)")
            charts.show(fig, key=f"wl_curve_{kind}")
        elif over_time and measured_fit.is_class_model(model):
            fig = go.Figure()
            fig.add_trace(go.Scatter(x=x, y=fitted["hi"], line={"width": 0}, showlegend=False, hoverinfo="skip"))
            fig.add_trace(go.Scatter(x=x, y=fitted["lo"], fill="tonexty", line={"width": 0},
                                     fillcolor="rgba(31,119,180,0.2)", name="95% band"))
            fig.add_trace(go.Scatter(x=x, y=fitted["fitted"], name="fitted (each interval's LPAR)",
                                     line={"color": "#1f77b4"}))
            fig.add_trace(go.Scatter(x=x, y=fitted["measured"], mode="markers", name="measured",
                                     marker={"size": 4, "color": "#d62728"}))
            fig.update_layout(xaxis_title="interval start", yaxis_title=target_label, height=360,
                              title="Measured and fitted per RMF interval (95% band)")
            charts.show(fig, key=f"wl_fit_{kind}")
            scatter = go.Figure()
            scatter.add_trace(go.Scatter(x=fitted["tps"], y=fitted["measured"], mode="markers", name="measured",
                                         marker={"size": 5, "color": "#d62728", "opacity": 0.6}))
            scatter.add_trace(go.Scatter(x=fitted["tps"], y=fitted["fitted"], mode="markers", name="fitted",
                                         marker={"size": 5, "color": "#1f77b4", "opacity": 0.6}))
            scatter.update_layout(xaxis_title="class tps", yaxis_title=target_label, height=320,
                                  title="Response against the class's load")
            charts.show(scatter, key=f"wl_fit_tps_{kind}")
        elif not fitted.empty:
            fig = go.Figure()
            fig.add_trace(go.Scatter(x=x, y=fitted["measured"], mode="markers", name="measured",
                                     marker={"size": 10}))
            fig.add_trace(go.Scatter(x=x, y=fitted["fitted"], mode="markers", name="fitted (95% band)",
                                     error_y={"type": "data", "symmetric": False,
                                              "array": (fitted["hi"] - fitted["fitted"]).to_numpy(),
                                              "arrayminus": (fitted["fitted"] - fitted["lo"]).to_numpy()}))
            fig.update_layout(yaxis_title=target_label, height=320, title="Measured and fitted (95% band)")
            charts.show(fig, key=f"wl_fit_{kind}")
        else:
            st.markdown("No measured value of the model's targets to compare the fit with.")

    with resid_tab:
        if fitted.empty:
            st.markdown("No residuals: no measured value of the model's targets.")
        else:
            bars = go.Figure(go.Bar(x=x, y=fitted["residual_pct"]))
            bars.update_layout(yaxis_title="fitted / measured - 1 (%)", height=260,
                               xaxis_title="interval start" if over_time else "point",
                               title=f"Residuals, {target_label}")
            charts.show(bars, key=f"wl_resid_chart_{kind}")
            offer(fitted, f"{workload}-{kind}-residuals", f"wl_resid_{kind}",
                  tables.planner_columns(fitted, tables.RESIDUAL_COLUMNS))

    with competitors_tab:
        run_id = res.champion_run(workload, kind)
        competitors = res.run_competitors(run_id) if run_id else None
        if competitors is not None and not competitors.empty:
            st.markdown("The model families fitted to these points and their leave-one-out (cross-validated) errors:")
            offer(competitors, f"{workload}-{kind}-competitors", f"wl_comp_{kind}")
        else:
            st.markdown("The champion's run logged no competing models.")
    with metrics_tab:
        metrics = res.run_metrics(workload, kind)
        if not metrics.empty:
            st.markdown("Training fit, knee and cross-validation figures logged with the registered version:")
            tables.show_table(tables.metrics_table(metrics), f"wl_metrics_{kind}", ["measure", "value"], rounded=False)
            st.download_button(f"Download {workload}-{kind}-metrics (CSV)", tables.csv_text(metrics),
                               file_name=f"{workload}-{kind}-metrics.csv", mime="text/csv",
                               key=f"wl_metrics_{kind}_download")
        else:
            st.markdown("No metrics logged with the champion's run.")

backtest = res.backtest_table()
if not backtest.empty:
    with st.expander("Backtest on held-out points", expanded=False):
        st.markdown("Each model family refitted without the held-out points of a case (`data/backtest`) and "
                    "scored on them (`reports/metrics/backtest.json`).")
        offer(backtest, "backtest", "wl_backtest", tables.planner_columns(backtest, tables.BACKTEST_COLUMNS))
