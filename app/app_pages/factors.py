"""What-if factors: a cited catalogue factor applied to a workload's fitted CPU cost.

The adjusted answer is shown side by side with the unadjusted one; the page also parses
Communications Server workload names and works out cost per transaction from RMF.
"""

import charts
import inputs
import pandas as pd
import plotly.graph_objects as go
import resources as res
import streamlit as st
import tables

from kneecap import factors, forecasting, modeling, workloads

st.title("What-if factors")
st.caption("Published effects of configuration choices (SMC-Rv2, an LTPA token, the z/OS Connect communication "
           "stub, ...), each with the value as its source prints it and the sentence or table it comes from "
           "(`data/reference/factors.csv`). A CPU-cost factor changes the workload's fitted CPU demand per "
           "transaction; the knee and the zIIP answer are recomputed with it.")

try:
    catalogue = res.factor_catalogue()
except factors.FactorError as exc:
    st.error(f"The factor catalogue cannot be read:\n\n{exc}")
    st.stop()

with st.expander("Catalogue", expanded=False):
    tables.show_table(res.catalogue_table(), "factor_catalogue",
                   ["factor_id", "factor", "effect", "qualifier", "value", "base_value", "unit", "apply_as", "cpu_on",
                    "status", "applicable", "why_not", "source_file", "section", "table_or_figure"], rounded=False)

st.subheader("Apply a factor to a workload")
# a factor changes a fitted CPU demand: only a model with a demand of its own to change answers it
workload_list = [w for w in res.workloads_with("response") if res.response_model(w).factor_demand() is not None]
if not workload_list:
    st.info("No closed-workload model has a champion yet (run `make run`).")
else:
    default = inputs.opening_workload(workload_list, "factor_workload")
    workload = st.selectbox("Workload", workload_list, index=default, key="factor_workload")
    inputs.follow_workload("factor", workload)
    key = res.champion_key(workload)
    model = res.response_model(workload)
    base = forecasting.default_configuration(model)
    applicable = [f for f in catalogue.values() if f.applicable]
    ids = [f.factor_id for f in applicable]
    first = ids.index("smc_rv2_vs_tcpip_str_server") if "smc_rv2_vs_tcpip_str_server" in ids else 0
    factor_id = st.selectbox("Factor", ids, index=first, key=inputs.widget_key("factor_id", workload),
                             format_func=lambda i: f"{i}: {catalogue[i].factor}")
    factor = catalogue[factor_id]
    gcp_only = 1.0 - float(model.ziip_eligible_fraction)
    # a factor on general-CP work can act at most on the share that is not zIIP-eligible
    default_share = round(gcp_only, 2) if factor.cpu_on == "gcp" else 1.0
    share_help = ("Multiplying factor: the fraction of the workload's CPU cost it acts on. Adding factor: the "
                  "fraction of transactions it applies to.")
    c1, c2, c3 = st.columns(3)
    share = c1.number_input("Share", 0.0, 1.0, value=default_share, step=0.01,
                            key=inputs.widget_key(f"factor_share_{factor_id}", workload),
                            help=share_help)
    clients = c2.number_input("Clients", 1, 100_000, value=int(model.train_ranges["clients"][1]),
                              key=inputs.widget_key("factor_clients", workload))
    slo = c3.number_input("Response-time SLO (ms)", 0.01, 100_000.0, value=2.0,
                          key=inputs.widget_key("factor_slo", workload))
    c4, c5, c6 = st.columns(3)
    n_gcp = c4.number_input("GCPs", 1, 64, value=int(base["n_gcp"]), key=inputs.widget_key("factor_n_gcp", workload))
    n_ziip = c5.number_input("zIIPs", 0, 64, value=int(base["n_ziip"]),
                             key=inputs.widget_key("factor_n_ziip", workload))
    think = c6.number_input("Think time (ms)", 0.0, 10_000.0, value=float(base["think_time_ms"]),
                            key=inputs.widget_key("factor_think", workload))

    qualifier = {"~": "about ", ">": "more than ", "": ""}[factor.qualifier]
    printed = f"{qualifier}{factor.value:g}" + (f" vs {factor.base_value:g}" if factor.base_value is not None else "")
    st.info(f"**{factor.factor}** ({printed} {factor.unit}, {factor.apply_as}; CPU on: {factor.cpu_on})\n\n"
            f"Measured on: {factor.applies_to}\n\n"
            f"> {factor.quote}\n\n"
            f"Source: `{factor.source_file}`, {factor.section}, {factor.table_or_figure}."
            + (f"\n\n{factor.note}" if factor.note else ""))
    try:
        row = res.factor_forecast(workload, key, float(clients), int(n_gcp), int(n_ziip), float(think), float(slo),
                                  factor_id, float(share))
    except (factors.FactorError, modeling.ModelError) as exc:
        st.error(str(exc))
    else:
        configuration = inputs.configuration_words(n_gcp, n_ziip, float(think))
        st.markdown(f"**{configuration}, {clients} clients, SLO {slo:g} ms:** knee at about "
                    f"{row['knee_clients']:.0f} clients, {row['knee_clients_adjusted']:.0f} with {factor_id}; "
                    f"response {row['resp_ms']:.2f} ms, {row['resp_ms_adjusted']:.2f} ms with it.")
        left, right = st.columns(2)
        for column, suffix, title in ((left, "", "Unadjusted"), (right, "_adjusted", f"With {factor_id}")):
            with column:
                st.markdown(f"**{title}**")
                d1, d2 = st.columns(2)
                d1.metric("CPU demand (ms/tran)", f"{row['demand_ms_per_tran' + suffix]:.4f}",
                          help=f"zIIP-eligible share {row['ziip_eligible_fraction' + suffix]:.3f}")
                d2.metric("Knee (clients)", f"{row['knee_clients' + suffix]:.0f}",
                          delta=f"95% band {row['knee_clients_lo' + suffix]:.0f}-{row['knee_clients_hi' + suffix]:.0f}",
                          delta_color="off", delta_arrow="off")
                d3, d4 = st.columns(2)
                d3.metric(f"Response at {clients} clients", f"{row['resp_ms' + suffix]:.2f} ms",
                          delta=f"95% band {row['resp_ms_lo' + suffix]:.2f}-{row['resp_ms_hi' + suffix]:.2f} ms",
                          delta_color="off", delta_arrow="off")
                n = row["recommended_n_ziip" + suffix]
                d4.metric(f"zIIPs for {slo:g} ms", "none meets it" if n is None else f"{n}")
                st.caption(row["recommendation" + suffix])
        st.caption(f"Change: {row['factor_changes']}. The fixed delay is unchanged; the bootstrap draws of the "
                   "demand are scaled by the same ratio.")
        curves = res.factor_curves(workload, key, int(n_gcp), int(n_ziip), float(think),
                                   int(max(clients * 1.5, row["knee_clients_adjusted"] * 1.2, 50)), factor_id,
                                   float(share))
        fig = go.Figure()
        colours = (("#1f77b4", "rgba(31,119,180,0.15)"), ("#ff7f0e", "rgba(255,127,14,0.15)"))
        for (label, part), (colour, fill) in zip(curves.groupby("cost", sort=False), colours):
            # each curve over its own 95 % band, as on the Knee page
            fig.add_trace(go.Scatter(x=part["clients"], y=part["resp_ms_hi"], line={"width": 0}, showlegend=False,
                                     hoverinfo="skip", legendgroup=label))
            fig.add_trace(go.Scatter(x=part["clients"], y=part["resp_ms_lo"], fill="tonexty", fillcolor=fill,
                                     line={"width": 0}, name=f"95% band, {label}", legendgroup=label))
            fig.add_trace(go.Scatter(x=part["clients"], y=part["resp_ms"], name=label, line={"color": colour},
                                     legendgroup=label))
        for suffix, (colour, _) in zip(("", "_adjusted"), colours):
            fig.add_vline(x=row["knee_clients" + suffix], line_dash="dash", line_color=colour)
        fig.update_layout(xaxis_title="clients", yaxis_title="response time (ms)", height=380,
                          yaxis_range=[0, float(curves["resp_ms"].quantile(0.9) * 1.5)])
        charts.show(fig, key="factor_chart")

st.subheader("Communications Server workload name")
name = st.text_input("Workload name", value="CRR30(200B/200B)", key="cs_name",
                     help="RR, CRR or STR, clients, (request bytes/response bytes), e.g. STR3(1B/20MB)")
try:
    parsed = workloads.parse_workload_name(name)
except workloads.WorkloadNameError as exc:
    st.error(str(exc))
else:
    tables.show_table(pd.DataFrame([{"pattern": parsed.pattern, "meaning": workloads.PATTERNS[parsed.pattern],
                                      "clients": parsed.clients, "req_bytes": parsed.req_bytes,
                                      "resp_bytes": parsed.resp_bytes, "connect_per_tran": parsed.connect_per_tran}]),
                   "cs_name_parsed", rounded=False)

st.subheader("CPU cost per transaction from RMF LPAR utilisation")
st.caption("As the z/OS Communications Server performance report computes it (seed 002, 'CPU Cost/Tran'): "
           "utilisation across the online CPs x CPs x interval = CPU seconds, divided by the transactions.")
u1, u2, u3, u4 = st.columns(4)
util = u1.number_input("LPAR utilisation %", 0.0, 100.0, value=25.0, key="lpar_util")
n_cp = u2.number_input("Online CPs", 1, 256, value=4, key="lpar_n_cp")
interval = u3.number_input("Interval (s)", 0.001, 86_400.0, value=10.0, key="lpar_interval")
trans = u4.number_input("Transactions", 1, 10**12, value=1_000_000, key="lpar_trans")
cost_ms = workloads.cpu_ms_per_tran_from_lpar(float(util), int(n_cp), float(interval), float(trans))
st.metric("CPU cost per transaction", f"{cost_ms * 1000:.4g} us",
          help=f"{cost_ms:.6g} ms; {trans / interval:,.0f} trans/s")
