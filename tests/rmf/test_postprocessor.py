"""RMF Postprocessor XML reader on the real zowe/zebra samples bundled in data/raw/rmf-samples.

Expected values are read from the XML text itself (the element is cited in each comment),
from ZEBRA's own parsed JSON of the small file, or recomputed by hand from other printed
fields with RMF's documented definitions.
"""

from __future__ import annotations

import io
import json
import math
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap.rmf import (
    CPU_COLUMNS,
    PARTITION_COLUMNS,
    RMFReportError,
    iter_reports,
    read_cpu_report,
    read_postprocessor,
    read_workload_report,
)

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "raw" / "rmf-samples"
BIG_2022 = SAMPLES / "rmfpp-cpu-RPRT-20220406-20220411.xml"
FILE_2020 = SAMPLES / "rmfpp-cpu-RPRT-20200910.xml"
SMALL = SAMPLES / "rmfpp-cpu-small-RPRT-20220412.xml"
SMALL_JSON = SAMPLES / "rmfpp-cpu-small-RPRT-20220412.zebra-parsed.json"

# RMF prints percentages with 2 decimals, so any value recomputed from other printed
# fields can differ from the printed one by half a unit in the last place (0.005), plus
# the input fields' own rounding (dispatch times are printed to the millisecond).
ROUNDING_PCT = 0.0051


@pytest.fixture(scope="module")
def big() -> tuple[pd.DataFrame, pd.DataFrame]:
    tables = read_cpu_report(BIG_2022)
    return tables.cpu, tables.partition


@pytest.fixture(scope="module")
def y2020() -> tuple[pd.DataFrame, pd.DataFrame]:
    tables = read_cpu_report(FILE_2020)
    return tables.cpu, tables.partition


def _row(df: pd.DataFrame, start: str, **match: object) -> pd.Series:
    sel = df["interval_start_at"] == pd.Timestamp(start)
    for key, val in match.items():
        sel &= df[key] == val
    rows = df[sel]
    assert len(rows) == 1, f"expected one row for {start} {match}, got {len(rows)}"
    return rows.iloc[0]


# ------------------------------------------------------------------ completeness


def test_big_file_parses_all_263_intervals(big):
    cpu, part = big
    assert tuple(cpu.columns) == CPU_COLUMNS
    assert tuple(part.columns) == PARTITION_COLUMNS
    # 263 <postprocessor> elements in the file (grep -c '<postprocessor>' = 263), one
    # processor type (CP) each.
    assert len(cpu) == 263
    assert cpu["interval_start_at"].nunique() == 263
    assert cpu["interval_start_at"].min() == pd.Timestamp("2022-04-06 12:30:00")
    assert cpu["interval_start_at"].max() == pd.Timestamp("2022-04-11 23:30:00")
    # consecutive half-hour reports, no gaps
    steps = cpu["interval_start_at"].sort_values().diff().dropna().unique()
    assert list(steps) == [pd.Timedelta(minutes=30)]
    assert set(cpu["system_id"]) == {"RPRT"}
    assert set(cpu["cpu_type"]) == {"CP"}
    assert cpu[["lpar_busy_pct", "mvs_busy_pct", "interval_s"]].notna().all().all()
    # 11 configured partitions; each interval lists 14 non-SUM rows (11 partitions, of which
    # 2 deactivated, + one *PHYSICAL* row per CP/IFL/ICF pool).
    assert len(part) == 263 * 14
    assert part.groupby("interval_start_at")["is_own_partition"].sum().eq(1).all()


def test_cpu_columns_match_smf70_table():
    type70 = pytest.importorskip("kneecap.smf.type70")
    assert CPU_COLUMNS == tuple(c for c in type70.COLUMNS if c != "n_records")


def test_2020_file_parses_all_34_intervals(y2020):
    cpu, _ = y2020
    assert len(cpu) == 34
    assert cpu["interval_start_at"].min() == pd.Timestamp("2020-09-10 00:00:00")
    assert cpu["interval_start_at"].max() == pd.Timestamp("2020-09-10 16:30:00")


# ------------------------------------------------------------------ values read from the XML


def test_big_file_values_from_xml_text(big):
    cpu, part = big
    # Line 11100: <display-start>04/08/2022-14.00.00</display-start>
    #             <report-interval unit="minutes">30:00:001</report-interval>
    # Line 11113: <row refno="3" type="SUM"><col>TOTAL/AVERAGE</col><col>CP</col><col/>
    #             <col>0.65</col><col>0.64</col>...
    r = _row(cpu, "2022-04-08 14:00:00")
    np.testing.assert_allclose(r["interval_s"], 30 * 60 + 0.001, rtol=0, atol=1e-9)
    np.testing.assert_allclose([r["lpar_busy_pct"], r["mvs_busy_pct"]], [0.65, 0.64], atol=1e-12)
    # rows refno 1 and 2: CPUs 0 and 1, both <col>100.00</col> online
    assert r["n_online"] == 2
    # 2 CPUs x 100 % x 1800.001 s
    np.testing.assert_allclose(r["online_s"], 2 * 1800.001, rtol=1e-12)
    assert pd.isna(r["sysplex"])
    # Line 11183 (Partition Data, same interval): VIRPT ... <col>2</col><col>CP</col>
    # <col>00.00.22.332</col><col>00.00.23.451</col><col>0.62</col><col>0.65</col>
    # <col>0.03</col><col>0.62</col><col>0.65</col>
    p = _row(part, "2022-04-08 14:00:00", partition_name="VIRPT")
    assert p["is_own_partition"] and p["partition_status"] == "Active"
    np.testing.assert_allclose(
        p[["weight", "msu_actual", "n_logical", "effective_dispatch_s", "total_dispatch_s",
           "log_proc_effective_pct", "log_proc_total_pct", "phys_lpar_mgmt_pct"]].to_numpy(float),
        [52, 3, 2, 22.332, 23.451, 0.62, 0.65, 0.03],
        atol=1e-9,
    )
    # Line 29356: last interval 04/11/2022-23.30.00, report-interval 30:00:000, SUM row
    # <col>0.91</col><col>0.90</col>
    r = _row(cpu, "2022-04-11 23:30:00")
    np.testing.assert_allclose(
        [r["interval_s"], r["lpar_busy_pct"], r["mvs_busy_pct"]], [1800.0, 0.91, 0.90], atol=1e-9
    )


def test_2020_file_values_from_xml_text(y2020):
    cpu, _ = y2020
    # Line 1804: <display-start>09/10/2020-08.00.00</display-start>, report-interval
    # 30:00:001; SUM row <col>TOTAL/AVERAGE</col><col>CP</col><col/><col>1.90</col><col>1.89</col>
    r = _row(cpu, "2020-09-10 08:00:00")
    np.testing.assert_allclose(
        [r["interval_s"], r["lpar_busy_pct"], r["mvs_busy_pct"]], [1800.001, 1.90, 1.89], atol=1e-9
    )


# ------------------------------------------------------------------ ZEBRA golden output


def test_small_file_matches_zebra_parsed_json():
    tables = read_cpu_report(SMALL)
    golden = json.loads(SMALL_JSON.read_text())["0"]
    assert golden["System"] == "RPRT"
    cpu = tables.cpu
    assert len(cpu) == 1
    assert cpu["interval_start_at"].iloc[0] == pd.Timestamp("2022-04-12 00:00:00")  # "Timestamp"
    rows = golden["CPU Activity"]["Table"]
    total = next(t for t in rows if t["CPU Number"] == "TOTAL/AVERAGE" and t["CPU Type"] == "CP")
    np.testing.assert_allclose(
        cpu[["lpar_busy_pct", "mvs_busy_pct"]].iloc[0].to_numpy(float),
        [float(total["Time% LPAR Busy"]), float(total["Time% MVS Busy"])],
        atol=1e-12,
    )
    per_cpu = [t for t in rows if t["CPU Number"] != "TOTAL/AVERAGE"]
    assert cpu["n_online"].iloc[0] == sum(float(t["Time% Online"]) > 0 for t in per_cpu)

    golden_parts = golden["Partition Data Report"]["Partition Data"]
    ours = tables.partition
    expected = [g for g in golden_parts if g["Partition Name"] != "TOTAL"]
    assert len(ours) == len(expected) == 14
    numeric = {
        "weight": "Partition Weight", "msu_defined": "MSU Defined", "msu_actual": "MSU Actual",
        "n_logical": "Num of LOG PROCs", "log_proc_effective_pct": "Avg Util%: LOG PROC Effective",
        "log_proc_total_pct": "Avg Util%: LOG PROC Total",
        "phys_lpar_mgmt_pct": "Avg Util%: PHYS PROC LPAR MGMT",
        "phys_effective_pct": "Avg Util%: PHYS PROC Effective",
        "phys_total_pct": "Avg Util%: PHYS PROC Total",
    }
    for (_, mine), gold in zip(ours.iterrows(), expected, strict=True):
        assert mine["partition_name"] == gold["Partition Name"]
        assert (mine["cpu_type"] if pd.notna(mine["cpu_type"]) else "") == gold.get("PROC Type", "")
        for col, key in numeric.items():
            # ZEBRA drops trailing empty cells of deactivated partitions: missing = blank.
            text = gold.get(key, "")
            want = float(text) if text not in ("", "N/A") else math.nan
            np.testing.assert_allclose(mine[col], want, atol=1e-12, equal_nan=True)
        for col, key in (("effective_dispatch_s", "Effective Dispatch Time"),
                         ("total_dispatch_s", "Total Dispatch Time")):
            if gold.get(key):
                # ZEBRA keeps "HH.MM.SS.TTT"; convert by hand: 3600 h + 60 m + s + t/1000
                h, m, s, t = (int(x) for x in gold[key].split("."))
                np.testing.assert_allclose(mine[col], 3600 * h + 60 * m + s + t / 1000, atol=1e-9)
            else:
                assert math.isnan(mine[col])


# ------------------------------------------------------------------ internal consistency


@pytest.mark.parametrize("which", ["big", "y2020"])
def test_partition_util_equals_dispatch_time_over_interval(which, request):
    """IBM: LOG PROC TOTAL % = total dispatch time / (interval x logical processors)."""
    _, part = request.getfixturevalue(which)
    act = part[(part["partition_status"] == "Active") & (part["n_logical"] > 0)]
    assert len(act) > 300
    denom = act["interval_s"] * act["n_logical"]
    np.testing.assert_allclose(
        act["total_dispatch_s"] / denom * 100, act["log_proc_total_pct"], atol=ROUNDING_PCT
    )
    np.testing.assert_allclose(
        act["effective_dispatch_s"] / denom * 100, act["log_proc_effective_pct"],
        atol=ROUNDING_PCT,
    )


@pytest.mark.parametrize("which", ["big", "y2020"])
def test_own_partition_busy_equals_cpu_activity_lpar_busy(which, request):
    """The CPU Activity TOTAL/AVERAGE LPAR BUSY and the own partition's LOG PROC TOTAL in the
    Partition Data Report are two printings of the same quantity."""
    cpu, part = request.getfixturevalue(which)
    own = part[part["is_own_partition"] & (part["cpu_type"] == "CP")]
    merged = cpu.merge(own, on=["system_id", "interval_start_at"])
    assert len(merged) == len(cpu)
    np.testing.assert_allclose(merged["lpar_busy_pct"], merged["log_proc_total_pct"], atol=0.011)


def test_sum_row_is_mean_of_logical_cpus():
    # Small file, rows refno 1/2: LPAR BUSY 1.36 and 0.42, MVS BUSY 1.33 and 0.42 ->
    # means 0.89 and 0.875, printed 0.89 and 0.88.
    cpu = read_cpu_report(SMALL).cpu
    np.testing.assert_allclose(cpu["lpar_busy_pct"].iloc[0], (1.36 + 0.42) / 2, atol=ROUNDING_PCT)
    np.testing.assert_allclose(cpu["mvs_busy_pct"].iloc[0], (1.33 + 0.42) / 2, atol=ROUNDING_PCT)


# ------------------------------------------------------------------ streaming


def test_streaming_keeps_memory_flat():
    # A full ElementTree of the 3.1 MB file takes ~28 MB; the streaming reader must stay
    # far below that because each interval is dropped once converted.
    tracemalloc.start()
    try:
        n = sum(1 for _ in iter_reports(BIG_2022))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == 263
    assert peak < 8e6


def test_reads_from_binary_stream():
    tables = read_cpu_report(io.BytesIO(SMALL.read_bytes()))
    assert len(tables.cpu) == 1 and len(tables.partition) == 14


# ------------------------------------------------------------------ error paths


def test_pp_error_reply_raises_with_file_and_message():
    with pytest.raises(RMFReportError, match=r"rmfpp-cpu-error\.xml.*GPM0739E.*'DATE'"):
        read_postprocessor(SAMPLES / "rmfpp-cpu-error.xml")


def test_monitor3_error_reply_raises_with_file_and_message():
    with pytest.raises(RMFReportError, match=r"rmf3-cpc-error\.xml.*GPM0731I.*DVLP"):
        list(iter_reports(SAMPLES / "rmf3-cpc-error.xml"))


def test_error_reply_can_be_inspected_without_raising():
    (rep,) = list(iter_reports(SAMPLES / "rmfpp-cpu-error.xml", raise_on_error=False))
    assert rep.messages[0].id == "GPM0739E" and rep.messages[0].severity == 3


def test_monitor3_report_is_read_but_yields_no_pp_tables():
    (rep,) = list(iter_reports(SAMPLES / "rmf3-cpc.xml"))
    # <metric id="CPC">, <gatherer-interval unit="seconds">100</gatherer-interval>,
    # <display-start>04/12/2022 00:23:20</display-start>
    assert rep.kind == "report" and rep.metric_id == "CPC"
    assert rep.start_at == pd.Timestamp("2022-04-12 00:23:20")
    np.testing.assert_allclose(rep.interval_s, 100.0)


def test_cpu_file_has_no_workload_report():
    with pytest.raises(RMFReportError, match=r"rmfpp-cpu-small.*no Workload Activity"):
        read_workload_report(SMALL)


def test_malformed_xml_raises(tmp_path):
    bad = tmp_path / "truncated.xml"
    bad.write_bytes(SMALL.read_bytes()[:5000])
    with pytest.raises(RMFReportError, match=r"truncated\.xml: interval 1: malformed XML: .*no interval follows it: "
                                             r"no interval of the file could be read"):
        read_postprocessor(bad)


def test_not_ddsml_raises(tmp_path):
    other = tmp_path / "other.xml"
    other.write_text("<html><body/></html>")
    with pytest.raises(RMFReportError, match=r"other\.xml: root element is <html>"):
        read_postprocessor(other)


def test_bad_number_raises(tmp_path):
    text = SMALL.read_text().replace("<col>1.36</col>", "<col>1,3x6</col>", 1)
    bad = tmp_path / "badnum.xml"
    bad.write_text(text)
    with pytest.raises(RMFReportError, match=r"badnum\.xml: interval 1 \(CPU 2022-04-12 00:00:00\), 'Time% LPAR Busy': "
                                             r"not a number: '1,3x6': no interval of the file could be read"):
        read_postprocessor(bad)
