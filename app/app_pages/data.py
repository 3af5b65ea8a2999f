"""Data: upload a measurement CSV, an SMF dump or an RMF XML report and see what it holds.

Also shows what the validation suite said and what was set aside (quarantined) with the reason.
"""

import charts
import plotly.graph_objects as go
import resources as res
import streamlit as st
import tables

from kneecap.upload import MAX_UPLOAD_MB, UploadError, upload_name


def offer(frame, name: str, key: str) -> None:
    """A table (labelled columns, the cells as read) and its CSV download."""
    tables.show_table(frame, key, rounded=False)
    st.download_button(f"Download {name} (CSV)", tables.csv_text(frame), file_name=f"{name}.csv", mime="text/csv",
                       key=f"{key}_download")


def upload_chart(preview: dict, key: str) -> None:
    """One fitted curve of an upload with its band and the points it rests on."""
    table = preview["table"]
    curve = table[table["measured_resp_ms"].isna()] if "measured_resp_ms" in table else table
    measured = table[table["measured_resp_ms"].notna()] if "measured_resp_ms" in table else table.iloc[0:0]
    workload, config = preview["key"].split("__", 1)
    load = "tps" if config == "lpar" else "clients"
    fig = go.Figure()
    fig.add_traces(charts.curve_with_band(curve["load"], curve["model_resp_ms"], curve["model_resp_ms_lo"],
                                          curve["model_resp_ms_hi"], f"model ({preview['family']})"))
    fig.add_trace(go.Scatter(x=measured["load"], y=measured["measured_resp_ms"], mode="markers",
                             name="uploaded points", marker={"size": 10, "color": "#d62728"}))
    fig.update_layout(title=f"{workload}, {config.replace('_', ' ')}", xaxis_title=load,
                      yaxis_title="response time (ms)", height=360)
    charts.show(fig, key=key)
    if preview["note"]:
        st.caption(preview["note"])


st.title("Data")
st.markdown("Uploads are parsed with kneecap's readers and never executed or unpickled; nothing is "
            f"published from here. Limit {MAX_UPLOAD_MB} MB. For the pipeline, `kneecap ingest FILE` brings "
            "SMF dumps and RMF XML in, `kneecap add-table FILE --source ...` a measurement table; then "
            "`make pipeline promote` (README, Your own data).")
upload = st.file_uploader("Measurement CSV, SMF dump (RDW / RECFM=U / VBS, optionally gzip) or RMF Postprocessor XML",
                          key="data_upload")
# what `kneecap check` and `add-table` take as options: a load test's table rarely repeats them
# on every row, and without the think time Little's law fails on every closed row
st.caption("A measurement CSV's LPAR and think time, for the rows that do not give them "
           "(as `kneecap check --n-gcp --n-ziip --think-time-ms`):")
setup = st.columns(3)
given = {"n_gcp": setup[0].number_input("GCPs", min_value=1, max_value=64, value=None, step=1, key="data_n_gcp"),
         "n_ziip": setup[1].number_input("zIIPs", min_value=0, max_value=64, value=None, step=1, key="data_n_ziip"),
         "think_time_ms": setup[2].number_input("Think time (ms)", min_value=0.0, max_value=3_600_000.0, value=None,
                                                step=10.0, key="data_think")}
fill = {column: float(value) for column, value in given.items() if value is not None}
if upload is not None:
    name = upload_name(upload.name)
    bar = st.progress(0.0, text=f"Reading {name}")
    try:
        result = res.ingest_upload(name, upload.getvalue(), fill=fill,
                                   progress=lambda fraction, text: bar.progress(fraction, text=text))
    except UploadError as exc:
        bar.empty()
        st.error(str(exc))
        if not exc.problems.empty:
            st.markdown("**Rejected cells** (nothing from this file was read)")
            offer(exc.problems, "rejected_cells", "data_problems")
    else:
        bar.empty()
        st.success(f"{name}: {result['kind']}, {result['rows']} rows")
        validation = result.get("validation")
        if validation is not None:
            st.subheader("Validation (fct_measurements suite)")
            if validation["success"]:
                st.success(f"All {validation['n_expectations']} expectations pass on {validation['n_rows']} rows")
            else:
                st.warning(f"{len(validation['failures'])} of {validation['n_expectations']} expectations fail "
                           f"on {validation['n_rows']} rows")
                offer(validation["failures"], "validation_failures", "data_failures")
            curves = res.upload_curves(validation["publishable"])
            if curves:
                st.subheader("Curves from this upload")
                st.caption("Fitted here on the rows the gate would publish, as the train stage fits them; "
                           "nothing is published or registered. `kneecap add-table FILE --source ...` puts "
                           "the table in the project (README, Your own data).")
            for i, preview in enumerate(curves):
                upload_chart(preview, f"data_upload_curve_{i}")
        if "records_by_type" in result:
            st.subheader("Records by type")
            offer(result["records_by_type"], "records_by_type", "data_records")
        st.subheader("Quarantine")
        if result["quarantine"].empty:
            st.markdown("Nothing quarantined.")
        else:
            st.markdown(f"{len(result['quarantine'])} row(s) or record(s) set aside, with the reason:")
            offer(result["quarantine"], "quarantine", "data_quarantine")
        for name, frame in result["tables"].items():
            st.subheader(f"`{name}`")
            offer(frame, name, f"data_table_{name}")

st.subheader("Published marts")
counts = res.mart_counts()
offer(counts, "published_marts", "data_marts")
report = res.validation_report()
if report:
    if report.get("success"):
        verdict = "passed"
    elif report.get("published"):
        verdict = f"published, {report.get('quarantined_rows', 0)} row(s) quarantined (table quarantine_measurements)"
    else:
        verdict = "FAILED, nothing published"
    with st.expander(f"Last pipeline validation: {verdict}"):
        st.json(report, expanded=False)
