"""MSU cost, beside the zIIP planner: what a WLM class's zIIP-eligible work on GCPs costs at the LPAR's peak R4HA.

The peak of the rolling four-hour average (R4HA) of the LPAR's MSU in the latest reporting month, the
SMF70LAC WLM recorded, the class's MSU at that peak, what one more zIIP removes from it (with its
band), and the peak at the class's forecast load: the numbers ``kneecap forecast`` writes in its
``msu_*`` columns.
"""

import inputs
import resources as res
import streamlit as st

st.title("MSU cost")
workloads = res.class_workloads()
if not workloads:
    st.info("No SMF class has a champion model yet (ingest an SMF dump with 70.1 and 72.3, then `make run`).")
    st.stop()
workload = st.selectbox("WLM class", workloads, index=inputs.opening_workload(workloads, "msu_workload"),
                        key="msu_workload")
inputs.follow_workload("msu", workload)
key = res.champion_key(workload)
lpar = res.response_model(workload).base
c1, c2 = st.columns(2)
n_gcp = c1.number_input("GCPs", 1, 64, value=int(lpar["n_gcp"]), key=inputs.widget_key("msu_n_gcp", workload))
n_ziip = c2.number_input("zIIPs", 0, 64, value=int(lpar["n_ziip"]), key=inputs.widget_key("msu_n_ziip", workload),
                         help="one more zIIP than this is what the saving is for")
answer = res.class_msu(workload, key, int(n_gcp), int(n_ziip))
if answer["msu_peak_r4ha"] is None:
    st.info(answer["msu_note"])
    st.stop()

st.markdown(f"**{answer['msu_system_id']}, reporting month {answer['msu_month']}:** peak R4HA at "
            f"{answer['msu_peak_hour']}, {answer['msu_per_cpu_s'] * 3600:.4g} MSU per GCP hour.")
m1, m2, m3, m4 = st.columns(4)
lac = answer["msu_peak_lac"]
m1.metric("Peak R4HA (MSU/h)", f"{answer['msu_peak_r4ha']:.4g}",
          help=f"SMF70LAC peak {lac:.4g}" if lac == lac else "SMF70LAC not recorded")
m2.metric("Eligible work on GCPs at the peak (MSU/h)", f"{answer['msu_eligible_on_gcp_at_peak']:.3g}",
          help=f"the class's GCP time at the peak: {answer['msu_class_gcp_at_peak']:.3g} MSU/h")
m3.metric("One more zIIP saves (MSU/h)", f"{answer['msu_saved_one_ziip']:.3g}",
          help=f"95 % band {answer['msu_saved_one_ziip_lo']:.3g} - {answer['msu_saved_one_ziip_hi']:.3g}")
if answer["msu_forecast_date"] is not None:
    m4.metric(f"Peak R4HA at the load of {answer['msu_forecast_date']}", f"{answer['msu_peak_r4ha_forecast']:.4g}",
              help=f"band {answer['msu_peak_r4ha_forecast_lo']:.4g} - {answer['msu_peak_r4ha_forecast_hi']:.4g}")
st.markdown(f"One more zIIP removes **{answer['msu_saved_one_ziip']:.3g} MSU/h** "
            f"({answer['msu_saved_one_ziip_lo']:.3g} - {answer['msu_saved_one_ziip_hi']:.3g}) from the peak R4HA.")
series = res.lpar_r4ha(answer["msu_system_id"])
st.line_chart(series.set_index("interval_start_at")[["lpar_msu_per_h", "r4ha_msu_per_h", "lac_msu_per_h"]],
              y_label="MSU/h")
st.caption(answer["msu_note"])
