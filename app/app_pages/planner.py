"""Engine planner: target load and SLO in, the cheapest zIIP + GCP mix with utilisation and spill out.

A closed workload's load is clients and a think time; a WLM class from SMF (open dispatch model)
is planned at a target tps with the LPAR's other classes on the same engines.
"""

import math
from dataclasses import replace

import inputs
import pandas as pd
import resources as res
import streamlit as st
import tables

from kneecap import forecasting, measured_fit, modeling

st.title("zIIP planner")
# the planner weighs engine counts: a model of the zIIP and GCP pools answers it
workloads = [w for w in res.workloads_with("response") if res.response_model(w).pools]
if not workloads:
    st.info("No closed-workload or SMF class model has a champion yet (run `make run`).")
    st.stop()
default = inputs.opening_workload(workloads, "plan_workload")
workload = st.selectbox("Workload", workloads, index=default, key="plan_workload")
inputs.follow_workload("plan", workload)
key = res.champion_key(workload)
model = res.response_model(workload)
policy = res.policy()
is_class = measured_fit.is_class_model(model)

# every zIIP + GCP mix the plan weighs is one banded solve up to the target: 10,000 clients keeps a
# plan within seconds on the desk (kneecap forecast takes up to MAX_SCENARIO_CLIENTS, 50,000)
MAX_TARGET_CLIENTS = 10_000
c1, c2, c3, c4 = st.columns(4)
if is_class:
    lpar = model.base
    measured_max = float(model.train_ranges["tps_max"])
    unloaded = res.class_knee(workload, key, int(lpar["n_gcp"]), int(lpar["n_ziip"]), 1.0).unloaded_resp_ms
    at_peak = bool(model.history) and st.toggle(
        "Plan at the forecast peak", key=inputs.widget_key("plan_at_peak", workload),
        help="the load the class's daily (or weekly) peaks reach by a date, read off its growth trend: the "
             "params.yaml growth.plan_peak_pct % of the simulated futures stay below it")
    if at_peak:
        horizon = res.growth_policy()
        history = forecasting.class_history(model)["interval_start_at"]
        first, last = history.min(), history.max()
        # a year ahead, but no further ahead than the history reaches back: a trend read off a week
        # says little about next year
        ahead = min(pd.Timedelta(days=365), max(last.normalize() - first.normalize(), pd.Timedelta(days=1)))
        peak_by = c1.date_input("Peak by", value=(last + ahead).date(), min_value=(last + pd.Timedelta(days=1)).date(),
                                key=inputs.widget_key("plan_peak_by", workload),
                                help=f"starts a year past the data, or as far ahead as the history reaches back if "
                                     f"shorter; the growth forecast runs {horizon.horizon} periods ({horizon.freq}) "
                                     "ahead")
        try:
            peak = res.class_planned_peak(workload, key, peak_by.isoformat(), float(horizon.plan_peak_pct))
        except modeling.ModelError as exc:
            st.error(f"{workload}: {exc}")
            st.stop()
        tps = float(peak["peak_tps"])
        st.info(f"Planned load: {peak['load_from']}.")
    else:
        tps = c1.number_input("Target tps", 0.001, float(forecasting.MAX_TPS),
                              value=max(0.001, round(measured_max * 1.2, 3)), format="%.3f",
                              key=inputs.widget_key("plan_tps", workload),
                              help=f"the class's peak interval measured {measured_max:.4g} tps; default 20 % more")
    bg = c2.number_input("Other classes' load x", 0.0, 3.0, value=1.0, step=0.05,
                         key=inputs.widget_key("plan_bg_load", workload),
                         help=f"their busy at the class's peak ({lpar['bg_gcp_busy_pct']:.1f} % per GCP, "
                              f"{lpar['bg_ziip_busy_pct']:.1f} % per zIIP) times this factor")
    n_gcp = c3.number_input("GCPs", 1, 64, value=int(lpar["n_gcp"]), key=inputs.widget_key("plan_n_gcp", workload))
    slo = c4.number_input("Response-time SLO (ms)", 0.01, 100_000.0,
                          value=float(math.ceil(2 * unloaded * 10) / 10), key=inputs.widget_key("plan_slo", workload),
                          help=f"default twice the unloaded response ({unloaded:.3g} ms)")
else:
    base = forecasting.default_configuration(model)
    clients = c1.number_input("Target clients", 1, MAX_TARGET_CLIENTS, value=int(model.train_ranges["clients"][1]),
                              key=inputs.widget_key("plan_clients", workload))
    think = c2.number_input("Think time (ms)", 0.0, 10_000.0, value=float(base["think_time_ms"]),
                            key=inputs.widget_key("plan_think", workload))
    n_gcp = c3.number_input("GCPs", 1, 64, value=int(base["n_gcp"]), key=inputs.widget_key("plan_n_gcp", workload))
    slo = c4.number_input("Response-time SLO (ms)", 0.01, 100_000.0, value=2.0,
                          key=inputs.widget_key("plan_slo", workload))
p1, p2, p3, p4 = st.columns(4)
max_busy = p1.number_input("Policy: max zIIP busy % per engine", 1.0, 100.0,
                           value=float(policy.max_ziip_busy_pct or 100.0),
                           key=inputs.widget_key("plan_max_busy", workload))
max_spill = p2.number_input("Policy: max eligible work on GCPs %", 0.0, 100.0,
                            value=float(policy.max_spill_pct or 100.0),
                            key=inputs.widget_key("plan_max_spill", workload))
max_added = p3.number_input("GCPs the plan may add", 0, 64, value=int(policy.max_added_gcp),
                            key=inputs.widget_key("plan_max_added_gcp", workload))
conservative = p4.checkbox("SLO met by the band's upper end", value=bool(policy.conservative),
                           key=inputs.widget_key("plan_conservative", workload))

chosen = replace(policy, max_ziip_busy_pct=float(max_busy), max_spill_pct=float(max_spill),
                 max_added_gcp=int(max_added), conservative=bool(conservative))
# the engines, from the model's measured ones, or another processor's from the published capacities
measured_engines = getattr(model, "measured_engines", {}) or {}
choice = inputs.engine_inputs("plan", workload, measured_engines, smt=True)
other = inputs.processor_inputs("plan", workload, measured_engines,
                                {k: v for k, v in choice.engines if k in ("ziip_mt", "ziip_mt_capacity")})
if other is not None:  # the target's engines replace the GCP share asked above; the MT mode stays
    choice = replace(choice, engines=other.engines[1], words=other.words)
slo_words = f"SLO {slo:g} ms"
if is_class:
    kinds = res.class_slo_kinds(workload, key)
    if len(kinds) > 1:  # a distribution measured from the 72.3 buckets: the SLO may be a percentile or the goal
        kind = st.radio("The SLO is on the", kinds, horizontal=True, key=inputs.widget_key("plan_slo_kind", workload),
                        help="mean response; the 90th / 95th percentile (the response time distribution fitted "
                             "to the class's buckets); or the class's own WLM goal, PI <= 1 (the SLO field unused)")
        if kind != "mean":
            try:
                mean_slo, said = res.class_slo_mean(workload, key, kind, float(slo))
            except modeling.ModelError as exc:
                st.error(f"{workload}: {exc}")
                st.stop()
            slo_words = f"SLO {said} (a mean response <= {mean_slo:.3g} ms)"
            slo = mean_slo


def plan_on(engines: res.Engines) -> dict:
    """The page's plan on ``engines`` (the asked ones, or a processor change's ratio ends)."""
    if is_class:
        return res.class_plan(workload, key, float(tps), int(n_gcp), float(slo), float(bg), chosen, engines)
    return res.plan(workload, key, float(clients), float(think), int(n_gcp), float(slo), chosen, engines)


answer = plan_on(choice.engines)
# the configuration first: the answer is for these inputs and says so
engine_words = f", {choice.words}" if choice.words else ""
if is_class:
    configuration = (f"{inputs.configuration_words(n_gcp, other_load=float(bg))}{engine_words}, {tps:g} tps, "
                     f"{slo_words}")
else:
    machine = inputs.configuration_words(n_gcp, think_time_ms=float(think))
    configuration = f"{machine}{engine_words}, {clients} clients, SLO {slo:g} ms"
if answer["n_ziip"] is None:
    st.error(f"**{configuration}:** {answer['reason']}.")
else:
    st.success(f"**{configuration}:** recommendation {answer['reason']}.")
st.markdown(f"**Binding rule:** {answer['binding_sentence']}.")
if other is not None:  # the same plan at the capacity ratio's two ends: how much the published figure's doubt moves it
    ends = [plan_on(e) for e in (other.engines[0], other.engines[2])]
    said = ["no mix meets it" if a["n_ziip"] is None else f"{a['n_ziip']} zIIP(s) with {a['n_gcp']} GCP(s)"
            for a in ends]
    st.markdown(f"**At the capacity ratio's ends:** low {said[0]}; high {said[1]}.")
    st.caption(other.notes)
if choice.mt_capacity is not None:
    smt = (res.class_plan_smt(workload, key, float(tps), int(n_gcp), float(slo), float(bg), chosen,
                              float(choice.mt_capacity), choice.engines) if is_class else
           res.plan_smt(workload, key, float(clients), float(think), int(n_gcp), float(slo), chosen,
                        float(choice.mt_capacity), choice.engines))
    st.markdown(f"**MT-1 or SMT-2:** {smt['sentence']}.")
else:
    st.caption("Give the zIIPs' MT capacity factor (RMF, measured in MT-2) to compare n zIIPs in MT-1 with m zIIP "
               "cores in SMT-2.")
if is_class:
    beyond = forecasting.extrapolation((model.train_ranges["tps_min"], measured_max), float(tps), "tps")
else:
    beyond = forecasting.extrapolation(model.train_ranges["clients"], float(clients), "clients")
for warning in res.answer_warnings(workload, key, beyond):
    st.warning(f"The plan's responses: {warning}.")
# the mixes judged, narrow enough to fit: the band as one column, the rules' verdict in words (the
# CSV keeps every column: throughput, IIPCP, meets_slo, meets_policy and the rule names among them)
table = answer["table"].assign(band=[f"{lo:.3g}-{hi:.3g}" for lo, hi in
                                     zip(answer["table"]["resp_ms_lo"], answer["table"]["resp_ms_hi"])])
tables.show_table(table, "plan_table",
               ["n_gcp", "n_ziip", "resp_ms", "band", "ziip_busy_pct", "gcp_busy_pct", "ziip_eligible_on_gcp_share_pct",
                "meets_slo", "meets_policy"])
st.download_button("Download plan (CSV)", tables.csv_text(answer["table"]), file_name=f"{workload}-ziip-plan.csv",
                   mime="text/csv", key="plan_download")
turned_away = table[table["failed_rules"] != ""]
if not turned_away.empty:
    # below the table rather than in it: a sentence per row would not fit beside the numbers
    lines = "\n".join(f"- **{inputs.configuration_words(r.n_gcp, r.n_ziip)}** {r.verdict}."
                       for r in turned_away.itertuples())
    passing = len(table) - len(turned_away)
    tail = (f"\n\nThe other {passing} mix(es) meet the SLO and the policy; the plan is the cheapest of them."
            if passing else "")
    if len(turned_away) <= 6:
        st.markdown(f"**Turned away:**\n\n{lines}{tail}")
    else:
        with st.expander(f"Why {len(turned_away)} mixes were turned away", expanded=False):
            st.markdown(f"{lines}{tail}")
if is_class:
    st.caption(f"{workload} is a WLM class from SMF: each row is the class at {tps:g} tps on that many zIIPs with "
               "the GCPs above, the other classes' load carried by the same engines (busy % includes them). "
               "A saturated row shows an infinite response.")
st.caption("Rows: zIIP counts with the GCPs above; 'Turned away' says what each rejected mix does against the "
           "SLO and the policy, with its numbers (the CSV also names the rules it fails: slo, ziip_busy, "
           "eligible_on_gcp). Busy is what each pool runs, GCP help included; eligible "
           "work moves to GCPs under IIPHONORPRIORITY=YES once the zIIPs need help (ZIIPAWMT, `help_rule`: "
           "params.yaml `train`). The plan is the "
           "cheapest mix by the engine costs in params.yaml `planner` (ties go to zIIPs). IBM publishes no numeric "
           "zIIP busy limit: the policy caps are yours.")
