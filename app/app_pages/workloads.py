"""Workloads: what was measured, the fitted models, their residuals, competitors and backtest error."""

import plotly.graph_objects as go
import streamlit as st

import resources as res

st.title("Workloads")
dims = res.table("dim_workloads")
if dims.empty:
    st.info("No published marts yet: run `make run` (or `dvc repro`).")
    st.stop()
st.dataframe(dims, hide_index=True, key="wl_dims")
st.download_button("Download workloads (CSV)", dims.to_csv(index=False), file_name="dim_workloads.csv",
                   mime="text/csv", key="wl_dims_download")

names = dims["workload"].tolist()
default = names.index("zosconnect_cics_diag") if "zosconnect_cics_diag" in names else 0
workload = st.selectbox("Workload", names, index=default, key="wl_workload")
points = res.measured_points(workload)
st.subheader("Measured points")
st.dataframe(points.dropna(axis=1, how="all"), hide_index=True, key="wl_points")
st.download_button("Download points (CSV)", points.to_csv(index=False), file_name=f"{workload}-points.csv",
                   mime="text/csv", key="wl_points_download")

key = res.champion_key(workload)
models = res.models(workload, key)
registry = res.registered()
for kind, model in (("response", models.response), ("cost", models.cost)):
    if model is None:
        continue
    st.subheader(f"{kind.capitalize()} model: {model.family}")
    st.code(model.summary(), language=None)
    targets = [t for t in ("resp_ms", "tps", "cpu_ms_per_tran") if t in model.targets and t in points]
    rows = points.dropna(subset=targets[:1]) if targets else points.iloc[0:0]
    if targets and not rows.empty:
        pred = model.predict(rows)
        target = targets[0]
        fitted = rows.assign(predicted=pred[target].to_numpy(), lo=pred.get(f"{target}_lo", pred[target]).to_numpy(),
                             hi=pred.get(f"{target}_hi", pred[target]).to_numpy())
        fitted["residual_pct"] = (fitted["predicted"] / fitted[target] - 1) * 100
        fig = go.Figure()
        fig.add_trace(go.Scatter(x=fitted["point_id"], y=fitted[target], mode="markers", name="measured",
                                 marker={"size": 10}))
        fig.add_trace(go.Scatter(x=fitted["point_id"], y=fitted["predicted"], mode="markers", name="fitted",
                                 error_y={"type": "data", "symmetric": False,
                                          "array": (fitted["hi"] - fitted["predicted"]).to_numpy(),
                                          "arrayminus": (fitted["predicted"] - fitted["lo"]).to_numpy()}))
        fig.update_layout(yaxis_title=target, height=320)
        st.plotly_chart(fig, key=f"wl_fit_{kind}")
        st.dataframe(fitted[["point_id", target, "predicted", "lo", "hi", "residual_pct"]].round(3), hide_index=True,
                     key=f"wl_resid_{kind}")
    name = f"kneecap-{workload}-{kind}"
    runs = registry[(registry["name"] == name) & registry["aliases"].str.contains("champion", na=False)]
    if not runs.empty:
        competitors = res.run_competitors(runs["run_id"].iloc[0])
        if not competitors.empty:
            st.markdown("Competing models and their leave-one-out errors (training rows):")
            st.dataframe(competitors, hide_index=True, key=f"wl_comp_{kind}")

bt = res.backtest_metrics()
if bt:
    st.subheader("Backtest of the model families on held-out points (data/backtest)")
    rows = [{"case": name, **{k: v for k, v in entry.items() if not isinstance(v, (dict, list))}}
            for name, entry in bt.get("summary", {}).items()]
    st.dataframe(rows, hide_index=True, key="wl_backtest")
