"""kneecap desk: page config and navigation only (pages live in app_pages/)."""

import streamlit as st

st.set_page_config(page_title="kneecap", page_icon=":material/speed:", layout="wide")

pages = st.navigation([
    st.Page("app_pages/knee.py", title="Knee & what-if", icon=":material/show_chart:", default=True),
    st.Page("app_pages/workloads.py", title="Workloads", icon=":material/table_chart:"),
    st.Page("app_pages/planner.py", title="zIIP planner", icon=":material/memory:"),
    st.Page("app_pages/msu.py", title="MSU cost", icon=":material/payments:"),
    st.Page("app_pages/classes.py", title="SMF classes", icon=":material/trending_up:"),
    st.Page("app_pages/factors.py", title="What-if factors", icon=":material/tune:"),
    st.Page("app_pages/models.py", title="Models", icon=":material/inventory_2:"),
    st.Page("app_pages/data.py", title="Data", icon=":material/upload_file:"),
])
pages.run()
