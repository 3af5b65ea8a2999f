"""Data: upload a measurement CSV, an SMF dump or an RMF XML report; see what it holds and what failed."""

import streamlit as st

import resources as res

st.title("Data")
st.markdown("Uploads are parsed with kneecap's readers and never executed or unpickled. For the pipeline, "
            "put files under `data/raw/` (SMF, RMF XML) or `data/reference/` (tables) and run `make run`.")
upload = st.file_uploader("Measurement CSV, SMF dump (RDW / RECFM=U / VBS, optionally gzip) or RMF XML",
                          key="data_upload")
if upload is not None:
    with st.spinner(f"Reading {upload.name}"):
        try:
            result = res.ingest_upload(upload.name, upload.getvalue())
        except (ValueError, OSError) as exc:
            st.error(str(exc))
        else:
            st.success(f"{upload.name}: {result['kind']}, rows {result['rows']}")
            for key in ("table", "records_by_type", "quarantine"):
                frame = result.get(key)
                if frame is not None and not frame.empty:
                    st.markdown(f"**{key.replace('_', ' ')}**")
                    st.dataframe(frame, hide_index=True, key=f"data_{key}")

st.subheader("Published marts")
report = res.ROOT / "reports" / "validation" / "marts.json"
for name in ("fct_measurements", "dim_workloads", "dim_sources", "fct_cpu_intervals"):
    frame = res.table(name)
    st.markdown(f"`{name}`: {len(frame)} rows")
if report.exists():
    with st.expander("Validation report (great_expectations)"):
        st.code(report.read_text(encoding="utf-8")[:20000], language="json")
