"""Every page of the desk through Streamlit's AppTest: widgets driven, key numbers shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")

pytestmark = pytest.mark.xdist_group("app")


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120).run()


def _knee_clients(at: AppTest) -> int:
    text = next(m.value for m in at.markdown if m.value.startswith("**Knee:**"))
    return int(re.search(r"at about (\d+) clients", text).group(1))


def test_knee_page_shows_the_knee_and_moves_with_ziips(app_env):
    at = _app()
    assert not at.exception
    assert at.selectbox(key="knee_workload").value == "zosconnect_cics_diag"
    with_two = _knee_clients(at)
    # IBM's curve breaks away between 300 and 500 clients with 2 zIIPs
    assert 300 < with_two < 550
    at.slider(key="knee_n_ziip").set_value(3).run()
    assert not at.exception
    assert _knee_clients(at) > with_two * 1.2  # a third zIIP moves the knee out
    labels = {m.label: m.value for m in at.metric}
    assert any(k.startswith("Response at") for k in labels)
    assert len(at.get("plotly_chart")) == 2


def test_planner_page_recommends_ibms_answer(app_env):
    at = _app()
    at.switch_page("app_pages/planner.py").run()
    assert not at.exception
    at.number_input(key="plan_clients").set_value(500).run()
    at.number_input(key="plan_slo").set_value(2.0).run()
    assert "3 zIIP(s)" in at.success[0].value
    at.number_input(key="plan_clients").set_value(300).run()
    assert "2 zIIP(s)" in at.success[0].value
    assert len(at.dataframe) == 1


def test_workloads_page_lists_workloads_and_fits(app_env):
    at = _app()
    at.switch_page("app_pages/workloads.py").run()
    assert not at.exception
    dims = at.dataframe[0].value
    assert "zosconnect_cics_diag" in set(dims["workload"])
    codes = [c.value for c in at.code]
    assert any("Closed MVA" in c for c in codes)
    at.selectbox(key="wl_workload").set_value("zosconnect_apireq_v3_baqr").run()
    assert not at.exception
    assert any("cpu_ms_per_tran" in c.value for c in at.code)


def test_models_page_promotes(app_env):
    at = _app()
    at.switch_page("app_pages/models.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert {"kneecap-zosconnect_cics_diag-response", "kneecap-zosconnect_apireq_v3_baqr-cost"} <= set(table["name"])
    at.selectbox(key="promote_name").set_value("kneecap-zosconnect_cics_diag-response").run()
    at.button(key="promote_button").click().run()
    assert "is now @champion" in at.success[0].value


def test_data_page_lists_marts(app_env):
    at = _app()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception
    assert any("`fct_measurements`: 61 rows" in m.value for m in at.markdown)


def test_upload_parsing_reports_bad_rows(app_env, tmp_path):
    import sys

    sys.path.insert(0, str(Path(APP).parent))
    import resources

    good = (Path(APP).parents[1] / "data" / "reference" / "seed004_table1.csv").read_bytes()
    assert resources.ingest_upload("t.csv", good)["rows"] == 5
    bad = good.replace(b",1960,", b",fast,")
    with pytest.raises(ValueError, match=r"t\.csv:5: tps: 'fast' is not a number"):
        resources.ingest_upload("t.csv", bad)
    with pytest.raises(ValueError, match="site rdw|RDW|length"):
        resources.ingest_upload("dump.bin", b"\x00" * 3 + b"plain binary without record descriptors" * 4)
