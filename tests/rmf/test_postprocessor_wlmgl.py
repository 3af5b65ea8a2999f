"""WLMGL (Workload Activity) reader on a SYNTHETIC ddsml document.

No licensed real WLMGL XML exists (see data/raw/rmf-samples/README.md). The document below
is hand-written by us, following the ddsml structure of RMF Postprocessor XML (IBM z/OS RMF
User's Guide, "How to work with Postprocessor XML reports"; element and part names as RMF
writes them, documented in /work/shared/reference/smf-notes.md section 7.3). EVERY NUMBER IN
IT IS MADE UP; expected values in the tests are hand conversions of those numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kneecap.rmf import WORKLOAD_COLUMNS, RMFReportError, read_postprocessor, read_workload_report
from kneecap.rmf.postprocessor import SMF72_WORKLOAD_COLUMNS


def _vars(pairs: dict[str, str]) -> str:
    return "<var-list>" + "".join(
        f"<var><name>{k}</name><value>{v}</value></var>" for k, v in pairs.items()
    ) + "</var-list>"


def _part(name: str, pairs: dict[str, str]) -> str:
    return f"<part><name>{name}</name>{_vars(pairs)}</part>"


GOALS_HEADER = (
    "<column-headers><col type='N'>Period</col><col type='M'>Importance</col>"
    "<col type='M'>Performance Index</col><col type='N'># of Transactions</col>"
    "<col type='N'>% of Transactions</col><col type='T'>Response Time Goal</col>"
    "<col type='M'>Response Time Actual</col><col type='N'>Response Time Total</col>"
    "<col type='N'>Execution Velocity % Goal</col><col type='M'>Execution Velocity % Actual</col>"
    "<col type='N'>Total Using %</col><col type='N'>Execution Delay %</col></column-headers>"
)


def _goal_row(period: str, imp: str, pi: str, vel: str) -> str:
    cells = [period, imp, pi, "10", "100", "", "", "", "40", vel, "5.0", "1.0"]
    return "<row>" + "".join(f"<col>{c}</col>" if c else "<col/>" for c in cells) + "</row>"


def _class_segment(kind: str, name: str, workload: str, *, ended: str, actual: str,
                   service_time: dict[str, str], appl: dict[str, str],
                   goal_rows: list[str]) -> str:
    head_key = "Service Class" if kind == "Service" else "Report Class"
    return (
        f"<segment><name>{kind} Class {name}</name>"
        + f"<part>{_vars({'Policy': 'SYNPOL', 'Workload': workload, head_key: name})}</part>"
        + _part("Transactions", {"Average": "2.50", "MPL": "2.40", "Ended": ended,
                                 "Ended/sec": "6.67", "# of Swaps": "0", "Executed": ended})
        + _part("Transaction Time (HHH.MM.SS.FFFFFF)",
                {"Actual": actual, "Execution": "000.00.00.011000",
                 "Queued": "000.00.00.001500", "Standard Deviation": "000.00.00.020000"})
        + _part("Service", {"IOC": "0", "CPU": "123456", "MSO": "0", "SRB": "6544",
                            "Total": "130000", "Per Second": "72"})
        + _part("Service Time", service_time)
        + _part("Application Time %", appl)
        + "<part><name>Goals/Actuals Summary</name><table>" + GOALS_HEADER
        + "".join(goal_rows) + "</table></part>"
        + "</segment>"
    )


ZCON_SERVICE_TIME = {"CPU": "360.000", "SRB": "9.000", "RCT": "0.000", "I/O Interrupt": "0.900",
                     "Hiperspace": "0.000", "zIIP": "180.000", "zAAP": "N/A"}
ZCON_APPL = {"CP": "10.55", "zIIP on CP": "1.50", "zIIP": "10.00", "zAAP on CP": "0.00",
             "zAAP": "N/A"}

SYNTHETIC_WLMGL = (
    "<?xml version='1.0' encoding='UTF-8'?>"
    "<ddsml><server><name>RMF-DDS-Server</name><version>ZOSV2R5</version></server>"
    "<postprocessor>"
    "<metric id='WLMGL' option='SCPER'><description>Workload Activity Report</description>"
    "<type>Interval</type></metric>"
    "<resource><resname>SYNPLEX</resname><restype>SYSPLEX</restype></resource>"
    "<time-data><display-start locale='en-us'>01/15/2024-10.00.00</display-start>"
    "<display-end locale='en-us'>01/15/2024-10.30.00</display-end>"
    "<report-interval unit='minutes'>29:59:997</report-interval></time-data>"
    "<segment><name>Policy Activation</name><part>"
    + _vars({"Date": "01/01/2024", "Time": "00.00.00"}) + "</part></segment>"
    + _class_segment("Service", "ZCONHI", "ONLINE", ended="12000",
                     actual="000.00.00.012500", service_time=ZCON_SERVICE_TIME,
                     appl=ZCON_APPL, goal_rows=[_goal_row("1", "2", "0.8", "N/A")])
    # A whole multi-period class: no per-period split in the report -> period 0.
    + _class_segment("Service", "BATCHLO", "BATCH", ended="0", actual="000.00.00.000000",
                     service_time={"CPU": "12.345", "SRB": "0.100", "zIIP": "N/A"},
                     appl={"CP": "0.69", "zIIP on CP": "0.00", "zIIP": "N/A"},
                     goal_rows=[_goal_row("1", "4", "N/A", "30.0"),
                                _goal_row("2", "5", "N/A", "12.5")])
    + _class_segment("Report", "RZCONAPI", "ONLINE", ended="3000",
                     actual="000.00.01.250000",
                     service_time={"CPU": "90.000", "SRB": "1.000", "zIIP": "45.000"},
                     appl={"CP": "2.53", "zIIP on CP": "0.25", "zIIP": "2.50"},
                     goal_rows=[_goal_row("1", "", "", "")])
    # "All data zero": RMF writes only the header part and a message.
    + "<segment><name>Service Class IDLE</name><part>"
    + _vars({"Policy": "SYNPOL", "Workload": "OTHER", "Service Class": "IDLE"})
    + "</part><message><description>All data zero</description><severity>1</severity>"
      "</message></segment>"
    + "<segment><name>Workload ONLINE</name><part>"
    + _vars({"Policy": "SYNPOL", "Workload": "ONLINE"}) + "</part>"
    + _part("Transactions", {"Ended": "15000"}) + "</segment>"
    "</postprocessor></ddsml>"
)


@pytest.fixture
def wlmgl_file(tmp_path):
    path = tmp_path / "synthetic-wlmgl.xml"
    path.write_text(SYNTHETIC_WLMGL, encoding="utf-8")
    return path


@pytest.fixture
def workload(wlmgl_file) -> pd.DataFrame:
    return read_workload_report(wlmgl_file)


def test_smf72_columns_come_first_and_match_the_binary_table():
    assert WORKLOAD_COLUMNS[: len(SMF72_WORKLOAD_COLUMNS)] == SMF72_WORKLOAD_COLUMNS
    type72 = pytest.importorskip("kneecap.smf.type72")
    assert SMF72_WORKLOAD_COLUMNS == type72.COLUMNS


def test_columns_and_rows(workload):
    assert tuple(workload.columns) == WORKLOAD_COLUMNS
    # three class segments with data; IDLE (all data zero), Workload and Policy segments skipped
    assert list(workload["class_name"]) == ["ZCONHI", "BATCHLO", "RZCONAPI"]
    assert list(workload["is_report_class"]) == [False, False, True]
    assert list(workload["workload_name"]) == ["ONLINE", "BATCH", "ONLINE"]
    assert list(workload["period"]) == [1, 0, 1]
    # sysplex-wide report: resname goes to sysplex, no single system
    assert set(workload["sysplex"]) == {"SYNPLEX"}
    assert workload["system_id"].isna().all()
    assert set(workload["interval_start_at"]) == {pd.Timestamp("2024-01-15 10:00:00")}


def test_service_class_values_hand_converted(workload):
    r = workload.iloc[0]
    interval_s = 29 * 60 + 59 + 997 / 1000  # 29:59:997 -> 1799.997 s
    np.testing.assert_allclose(r["interval_s"], interval_s, rtol=0, atol=1e-9)
    # 000.00.00.012500 -> 0.0125 s = 12.5 ms; Execution 11 ms; Queued 1.5 ms; std 20 ms
    np.testing.assert_allclose(
        r[["resp_ms", "exec_ms", "queued_ms", "resp_std_ms"]].to_numpy(float),
        [12.5, 11.0, 1.5, 20.0], rtol=1e-12,
    )
    np.testing.assert_allclose(
        r[["ended", "ended_per_s", "avg_trans", "mpl", "service_units"]].to_numpy(float),
        [12000, 6.67, 2.50, 2.40, 130000], rtol=1e-12,
    )
    np.testing.assert_allclose(
        r[["tcb_s", "srb_s", "rct_s", "iit_s", "hst_s", "ziip_s"]].to_numpy(float),
        [360.0, 9.0, 0.0, 0.9, 0.0, 180.0], rtol=1e-12,
    )
    # cpu_s = TCB + SRB + RCT + IIT + HST = 360 + 9 + 0 + 0.9 + 0 = 369.9 s
    np.testing.assert_allclose(r["cpu_s"], 369.9, rtol=1e-12)
    # not printed in the report -> NaN, never 0
    assert math.isnan(r["ziip_cp_equiv_s"]) and math.isnan(r["cpu_delay_samples"])
    assert math.isnan(r["zaap_s"])  # "N/A"
    np.testing.assert_allclose(
        r[["appl_cp_pct", "appl_iipcp_pct", "appl_iip_pct", "appl_aapcp_pct"]].to_numpy(float),
        [10.55, 1.50, 10.00, 0.00], rtol=1e-12,
    )
    # APPL% IIPCP 1.50 of 1799.997 s -> 0.015 * 1799.997 = 26.999955 s of zIIP-eligible CP time
    np.testing.assert_allclose(r["ziip_on_cp_s"], 26.999955, rtol=1e-12)
    np.testing.assert_allclose(r[["importance", "perf_index"]].to_numpy(float), [2, 0.8])
    assert math.isnan(r["exec_velocity_pct"])


def test_zero_ended_has_no_response_time_and_period_zero(workload):
    r = workload.iloc[1]
    assert r["ended"] == 0
    assert math.isnan(r["resp_ms"]) and math.isnan(r["exec_ms"])
    # two periods listed and no per-period split -> the whole class (period 0): no goal row
    assert r["period"] == 0 and math.isnan(r["importance"])
    # 12.345 + 0.100, RCT/IIT/HST absent from this class's Service Time part -> 0
    np.testing.assert_allclose(r["cpu_s"], 12.445, rtol=1e-12)


def test_report_class_values(workload):
    r = workload.iloc[2]
    np.testing.assert_allclose(r["resp_ms"], 1250.0)  # 000.00.01.250000 -> 1.25 s
    np.testing.assert_allclose(r["ziip_on_cp_s"], 0.0025 * (29 * 60 + 59.997), rtol=1e-12)


def test_read_postprocessor_routes_wlmgl(wlmgl_file):
    tables = read_postprocessor(wlmgl_file)
    assert tables.cpu.empty and tables.partition.empty
    assert len(tables.workload) == 3


def test_bad_transaction_time_raises(tmp_path):
    path = tmp_path / "bad-time.xml"
    path.write_text(SYNTHETIC_WLMGL.replace("000.00.00.012500", "12.5ms", 1))
    with pytest.raises(RMFReportError, match=r"bad-time\.xml: interval 1 \(WLMGL 2024-01-15 10:00:00\), 'Actual': "
                                             r"not an RMF clock value.*12\.5ms"):
        read_workload_report(path)
