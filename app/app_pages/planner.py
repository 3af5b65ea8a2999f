"""zIIP planner: target load and SLO in, zIIP count with utilisation and spill out."""

import streamlit as st

import resources as res

st.title("zIIP planner")
workloads = [w for w in res.workloads_with("response") if res.response_model(w).family == "closed_mva"]
if not workloads:
    st.info("No closed-workload model has a champion yet (run `make run`).")
    st.stop()
default = workloads.index("zosconnect_cics_diag") if "zosconnect_cics_diag" in workloads else 0
workload = st.selectbox("Workload", workloads, index=default, key="plan_workload")
key = res.champion_key(workload)
model = res.response_model(workload)
base = res.forecasting.default_configuration(model)
policy = res.policy()

c1, c2, c3, c4 = st.columns(4)
clients = c1.number_input("Target clients", 1, 100_000, value=int(model.train_ranges["clients"][1]), key="plan_clients")
think = c2.number_input("Think time (ms)", 0.0, 10_000.0, value=float(base["think_time_ms"]), key="plan_think")
n_gcp = c3.number_input("GCPs", 1, 64, value=int(base["n_gcp"]), key="plan_n_gcp")
slo = c4.number_input("Response-time SLO (ms)", 0.01, 100_000.0, value=2.0, key="plan_slo")
p1, p2 = st.columns(2)
max_busy = p1.number_input("Policy: max zIIP busy % per engine", 1.0, 100.0,
                           value=float(policy.max_ziip_busy_pct or 100.0), key="plan_max_busy")
max_spill = p2.number_input("Policy: max eligible work on GCPs %", 0.0, 100.0,
                            value=float(policy.max_spill_pct or 100.0), key="plan_max_spill")

answer = res.plan(workload, key, float(clients), float(think), int(n_gcp), float(slo), float(max_busy), float(max_spill),
                  int(policy.max_n_ziip))
if answer["n_ziip"] is None:
    st.error(answer["reason"])
else:
    st.success(f"Recommendation: {answer['reason']}.")
table = answer["table"].rename(columns={
    "resp_ms": "response ms", "resp_ms_lo": "band lo", "resp_ms_hi": "band hi", "ziip_busy_pct": "zIIP busy %",
    "gcp_busy_pct": "GCP busy %", "spill_pct": "eligible on GCP %", "ziip_eligible_on_gcp_pct": "IIPCP (APPL%)"})
st.dataframe(table.round(3), hide_index=True, key="plan_table")
st.download_button("Download plan (CSV)", answer["table"].to_csv(index=False), file_name=f"{workload}-ziip-plan.csv",
                   mime="text/csv", key="plan_download")
st.caption("zIIP busy is the load offered to the zIIP pool per engine; eligible work on GCPs follows "
           "IIPHONORPRIORITY=YES with ZIIPAWMT from params.yaml. IBM publishes no numeric zIIP busy limit: the "
           "policy caps are yours (params.yaml `planner`).")
