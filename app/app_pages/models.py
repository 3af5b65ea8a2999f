"""Models: registered versions with aliases and metrics; promote a version to champion."""

import resources as res
import streamlit as st
import tables

st.title("Models")
frame = res.registered()
if frame.empty:
    st.info("No registered kneecap models yet: run `make run` (or `dvc repro`).")
    st.stop()
# one name for a model everywhere: as `kneecap models` lists it and `kneecap promote` takes it
registered_as = {res.listed_name(n): n for n in frame["name"].unique()}
frame = frame.assign(name=frame["name"].map(res.listed_name))

done = st.session_state.pop("models_promoted", None)
if done:
    st.success(done)

champions = frame[frame["aliases"].str.contains("champion", na=False)]
st.markdown(f"{frame['name'].nunique()} registered models, {len(frame)} versions, "
            f"{len(champions)} with a `@champion` (the version the other pages and the CLI use).")
tables.show_table(frame, "models_table", tables.planner_columns(frame, tables.MODEL_COLUMNS))
st.caption("Each version's model family, run and every metric logged with it are in the CSV; the Workloads page "
           "shows a champion's metrics in words.")
st.download_button("Download registered models (CSV)", tables.csv_text(frame), file_name="registered_models.csv",
                   mime="text/csv", key="models_download")

weights = res.combination_weights()
if not weights.empty:
    weights = weights.assign(name=weights["name"].map(res.listed_name))
    st.subheader("Combination weights")
    st.caption("Where several model families fit one curve, each is scored by rolling-origin backtests on "
               "the training rows (fit the lower loads, MAPE on the loads above) and weighted by "
               "1 / MAPE^p; the prediction is the weighted mean, its band spans every member's band.")
    tables.show_table(weights, "models_weights")

st.subheader("Promote a version to champion")
left, right = st.columns(2)
name = left.selectbox("Registered model", sorted(frame["name"].unique()), key="promote_name")
rows = frame[frame["name"] == name]
versions = sorted(rows["version"].tolist(), reverse=True)
version = right.selectbox("Version", versions, key="promote_version")
current = rows.loc[rows["aliases"].str.contains("champion", na=False), "version"].tolist()
st.caption(f"Current champion: version {current[0]}" if current else "No champion yet.")
if st.button("Set @champion", key="promote_button", disabled=bool(current) and int(current[0]) == int(version)):
    res.promote(registered_as[name], int(version))
    st.session_state["models_promoted"] = f"{name} version {version} is now @champion"
    st.rerun()
