"""Models: registered versions with aliases and metrics; promote a version to champion."""

import streamlit as st

import resources as res

st.title("Models")
frame = res.registered()
if frame.empty:
    st.info("No registered kneecap models yet: run `make run` (or `dvc repro`).")
    st.stop()
st.dataframe(frame, hide_index=True, key="models_table")
st.download_button("Download (CSV)", frame.to_csv(index=False), file_name="registered_models.csv", mime="text/csv",
                   key="models_download")

st.subheader("Promote a version to champion")
name = st.selectbox("Registered model", sorted(frame["name"].unique()), key="promote_name")
versions = sorted(frame.loc[frame["name"] == name, "version"].tolist(), reverse=True)
version = st.selectbox("Version", versions, key="promote_version")
if st.button("Set @champion", key="promote_button"):
    res.promote(name, int(version))
    st.success(f"{name} version {version} is now @champion")
