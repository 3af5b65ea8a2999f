"""Engine planner: target load and SLO in, the cheapest zIIP + GCP mix with utilisation and spill out.

A closed workload's load is clients and a think time; a WLM class from SMF (open dispatch model)
is planned at a target tps with the LPAR's other classes on the same engines.
"""

import math
from dataclasses import replace

import resources as res
import streamlit as st

st.title("zIIP planner")
workloads = [w for w in res.workloads_with("response")
             if res.response_model(w).family == "closed_mva" or res.is_class_model(res.response_model(w))]
if not workloads:
    st.info("No closed-workload or SMF class model has a champion yet (run `make run`).")
    st.stop()
default = workloads.index("zosconnect_cics_diag") if "zosconnect_cics_diag" in workloads else 0
workload = st.selectbox("Workload", workloads, index=default, key="plan_workload")
res.follow_workload("plan", workload, ("plan_tps", "plan_bg_load", "plan_class_n_gcp", "plan_class_slo",
                                       "plan_clients", "plan_think", "plan_n_gcp", "plan_slo"))
key = res.champion_key(workload)
model = res.response_model(workload)
policy = res.policy()
is_class = res.is_class_model(model)

# every zIIP + GCP mix the plan weighs is one banded solve up to the target: 10,000 clients keeps a
# plan within seconds on the desk (kneecap forecast takes up to MAX_SCENARIO_CLIENTS, 50,000)
MAX_TARGET_CLIENTS = 10_000
c1, c2, c3, c4 = st.columns(4)
if is_class:
    lpar = model.base
    measured_max = float(model.train_ranges["tps_max"])
    unloaded = res.class_knee(workload, key, int(lpar["n_gcp"]), int(lpar["n_ziip"]), 1.0)["unloaded_resp_ms"]
    tps = c1.number_input("Target tps", 0.001, float(res.forecasting.MAX_TPS),
                          value=max(0.001, round(measured_max * 1.2, 3)), format="%.3f", key="plan_tps",
                          help=f"the class's peak interval measured {measured_max:.4g} tps; default 20 % more")
    bg = c2.number_input("Other classes' load x", 0.0, 3.0, value=1.0, step=0.05, key="plan_bg_load",
                         help=f"their busy at the class's peak ({lpar['bg_gcp_busy_pct']:.1f} % per GCP, "
                              f"{lpar['bg_ziip_busy_pct']:.1f} % per zIIP) times this factor")
    n_gcp = c3.number_input("GCPs", 1, 64, value=int(lpar["n_gcp"]), key="plan_class_n_gcp")
    slo = c4.number_input("Response-time SLO (ms)", 0.01, 100_000.0,
                          value=float(math.ceil(2 * unloaded * 10) / 10), key="plan_class_slo",
                          help=f"default twice the unloaded response ({unloaded:.3g} ms)")
else:
    base = res.forecasting.default_configuration(model)
    clients = c1.number_input("Target clients", 1, MAX_TARGET_CLIENTS, value=int(model.train_ranges["clients"][1]),
                              key="plan_clients")
    think = c2.number_input("Think time (ms)", 0.0, 10_000.0, value=float(base["think_time_ms"]), key="plan_think")
    n_gcp = c3.number_input("GCPs", 1, 64, value=int(base["n_gcp"]), key="plan_n_gcp")
    slo = c4.number_input("Response-time SLO (ms)", 0.01, 100_000.0, value=2.0, key="plan_slo")
p1, p2, p3, p4 = st.columns(4)
max_busy = p1.number_input("Policy: max zIIP busy % per engine", 1.0, 100.0,
                           value=float(policy.max_ziip_busy_pct or 100.0), key="plan_max_busy")
max_spill = p2.number_input("Policy: max eligible work on GCPs %", 0.0, 100.0,
                            value=float(policy.max_spill_pct or 100.0), key="plan_max_spill")
max_added = p3.number_input("GCPs the plan may add", 0, 64, value=int(policy.max_added_gcp), key="plan_max_added_gcp")
conservative = p4.checkbox("SLO met by the band's upper end", value=bool(policy.conservative), key="plan_conservative")

chosen = replace(policy, max_ziip_busy_pct=float(max_busy), max_spill_pct=float(max_spill),
                 max_added_gcp=int(max_added), conservative=bool(conservative))
if is_class:
    answer = res.class_plan(workload, key, float(tps), int(n_gcp), float(slo), float(bg), chosen)
else:
    answer = res.plan(workload, key, float(clients), float(think), int(n_gcp), float(slo), chosen)
if answer["n_ziip"] is None:
    st.error(answer["reason"])
else:
    st.success(f"Recommendation: {answer['reason']}.")
st.markdown(f"**Binding rule:** {answer['binding_sentence']}.")
if is_class:
    beyond = res.forecasting.extrapolation((model.train_ranges["tps_min"], measured_max), float(tps), "tps")
else:
    beyond = res.forecasting.extrapolation(model.train_ranges["clients"], float(clients), "clients")
for warning in res.answer_warnings(workload, key, beyond):
    st.warning(f"The plan's responses: {warning}.")
table = answer["table"].rename(columns={
    "resp_ms": "response ms", "resp_ms_lo": "band lo", "resp_ms_hi": "band hi", "ziip_busy_pct": "zIIP busy %",
    "gcp_busy_pct": "GCP busy %", "ziip_eligible_on_gcp_share_pct": "eligible on GCP, % of eligible",
    "ziip_eligible_on_gcp_pct": "IIPCP (APPL%)", "failed_rules": "fails"})
st.dataframe(table.round(3), hide_index=True, key="plan_table")
st.download_button("Download plan (CSV)", answer["table"].to_csv(index=False), file_name=f"{workload}-ziip-plan.csv",
                   mime="text/csv", key="plan_download")
if is_class:
    st.caption(f"{workload} is a WLM class from SMF: each row is the class at {tps:g} tps on that many zIIPs with "
               "the GCPs above, the other classes' load carried by the same engines (busy % includes them). "
               "A saturated row shows an infinite response.")
st.caption("Rows: zIIP counts with the GCPs above; 'fails' names the rules a row breaks (slo, ziip_busy, "
           "eligible_on_gcp). Busy is what each pool runs, GCP help included; eligible "
           "work moves to GCPs under IIPHONORPRIORITY=YES once the zIIPs need help (ZIIPAWMT, `help_rule`: "
           "params.yaml `train`). The plan is the "
           "cheapest mix by the engine costs in params.yaml `planner` (ties go to zIIPs). IBM publishes no numeric "
           "zIIP busy limit: the policy caps are yours.")
