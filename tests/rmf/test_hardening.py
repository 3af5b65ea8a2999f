"""RMF XML input as a hostile or careless user sends it (issue 14): bounded text nodes (finding 7),
documents without reports (finding 8), and the manifest shared with SMF ingest (lock, torn line)."""

from __future__ import annotations

import fcntl
import re
import shutil
import threading
import time
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

from kneecap.ingest.manifest import LOCK, MANIFEST, read_manifest
from kneecap.ingest.rmf import ingest_xml
from kneecap.rmf import RMFReportError, postprocessor, read_postprocessor

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "raw" / "rmf-samples"
SMALL = SAMPLES / "rmfpp-cpu-small-RPRT-20220412.xml"


def test_huge_text_node_stops_early_with_bounded_memory(tmp_path):
    path = tmp_path / "big.xml"
    big = 8 * postprocessor.MAX_TEXT_BYTES
    with path.open("wb") as fh:
        fh.write(b"<?xml version='1.0'?><ddsml><server><name>")
        fh.write(b"A" * big)
        fh.write(b"</name></server></ddsml>")
    tracemalloc.start()
    with pytest.raises(RMFReportError, match=rf"{path}: byte \d+: a text or tag of more than "
                                             rf"{postprocessor.MAX_TEXT_BYTES:,} bytes"):
        read_postprocessor(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 4 * postprocessor.MAX_TEXT_BYTES  # never the whole node


def test_real_reports_fit_under_the_text_limit():
    tables = read_postprocessor(SMALL)
    assert len(tables.cpu) == 1 and len(tables.partition) == 14


@pytest.mark.parametrize(("body", "holds"), [
    (b"<ddsml><server><name>x</name></server></ddsml>", "no interval reports at all"),
    (b"<ddsml><postprocessor><metric id='PAGING'/><segment><name>s</name></segment></postprocessor></ddsml>",
     "1 PAGING"),
])
def test_document_without_cpu_or_workload_reports_says_so(tmp_path, body, holds):
    path = tmp_path / "empty.xml"
    path.write_bytes(b"<?xml version='1.0'?>" + body)
    with pytest.raises(RMFReportError, match=rf"{path}: no CPU Activity or Workload Activity \(WLMGL\) "
                                             rf"report.*{holds}"):
        read_postprocessor(path)
    (result,), _ = ingest_xml([path], tmp_path / "out")
    assert result.status == "failed" and "no CPU Activity" in result.error


def test_torn_manifest_line_is_cut_before_the_rmf_entry(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / MANIFEST).write_text('{"sha256": "aaa", "path": "x"}\n{"sha2')
    (first,), _ = ingest_xml([SMALL], out)
    assert first.status == "ingested"
    assert set(read_manifest(out)) == {"aaa", first.sha256}
    (again,), _ = ingest_xml([SMALL], out)
    assert again.status == "skipped"


def test_rmf_ingest_waits_for_the_folder_lock(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    xml = tmp_path / "r.xml"
    shutil.copy(SMALL, xml)
    done = threading.Event()
    with (out / LOCK).open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        worker = threading.Thread(target=lambda: (ingest_xml([xml], out), done.set()))
        worker.start()
        time.sleep(0.5)
        held_back = not done.is_set()
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    worker.join(30)
    assert held_back, "ingest_xml wrote while another ingest held the folder lock"
    assert done.is_set() and len(read_manifest(out)) == 1


# --- one bad interval costs that interval only (the rest of the file loads, the bad one is quarantined)

WEEK_2020 = SAMPLES / "rmfpp-cpu-RPRT-20200910.xml"


#: the start of a CP row of the CPU Activity table, up to its LPAR busy cell
CP_ROW = "<col>CP</col><col>100.00</col><col>"


def _intervals(text: str) -> list[str]:
    head, *intervals = text.split("<postprocessor>")
    return [head, *intervals]


def test_bad_value_quarantines_its_interval_and_the_others_load(tmp_path):
    whole = read_postprocessor(WEEK_2020)
    assert whole.quarantine.empty
    head, *intervals = _intervals(WEEK_2020.read_text())
    # interval 5's first CP row: its LPAR busy cell becomes unreadable
    intervals[4] = intervals[4].replace(CP_ROW, CP_ROW + "2,4x", 1)
    path = tmp_path / "week.xml"
    path.write_text("<postprocessor>".join([head, *intervals]))
    tables = read_postprocessor(path)
    assert tables.quarantine["interval"].tolist() == [5]
    reason = tables.quarantine["reason"].iloc[0]
    assert f"{path}: interval 5 (CPU " in reason and "'Time% LPAR Busy': not a number: '2,4x" in reason
    dropped = whole.cpu["interval_start_at"].drop_duplicates().sort_values().iloc[4]
    assert tables.cpu.reset_index(drop=True).equals(whole.cpu[whole.cpu["interval_start_at"] != dropped]
                                                    .reset_index(drop=True))
    assert len(tables.partition) == len(whole.partition) - (whole.partition["interval_start_at"] == dropped).sum()


def test_xml_breaking_off_keeps_the_intervals_before(tmp_path):
    whole = read_postprocessor(WEEK_2020)
    head, *intervals = _intervals(WEEK_2020.read_text())
    path = tmp_path / "cut.xml"
    # the file ends in the middle of interval 10
    path.write_text("<postprocessor>".join([head, *intervals[:9], intervals[9][: len(intervals[9]) // 2]]))
    tables = read_postprocessor(path)
    assert tables.cpu["interval_start_at"].nunique() == 9
    starts = sorted(whole.cpu["interval_start_at"].unique())[:9]
    assert sorted(tables.cpu["interval_start_at"].unique()) == starts
    (interval, reason), = tables.quarantine.itertuples(index=False)
    assert interval == 10 and f"{path}: interval 10: malformed XML" in reason and "no interval follows it" in reason


@pytest.mark.parametrize("damage", ["unclosed", "junk", "start tag", "renamed tag"])
def test_xml_broken_inside_an_interval_costs_that_interval_only(tmp_path, damage):
    # after the break the file is read again from the next interval's start tag
    whole = read_postprocessor(WEEK_2020)
    head, *intervals = _intervals(WEEK_2020.read_text())
    if damage == "unclosed":  # interval 12's end tag lost: the intervals after it parse as nested in it
        intervals[11] = intervals[11].replace("</postprocessor>", "", 1)
    elif damage == "junk":  # a stray "<" in a cell of interval 12
        intervals[11] = intervals[11].replace("<col>CP</col>", "<col>C<P</col>", 1)
    path = tmp_path / "broken.xml"
    if damage in ("start tag", "renamed tag"):  # interval 12's own start tag broken, or renamed
        path.write_text("<postprocessor>".join([head, *intervals[:11]])
                        + ("<postprocessor =>" if damage == "start tag" else "<postprocesso>")
                        + "<postprocessor>".join(intervals[11:]))
    else:
        path.write_text("<postprocessor>".join([head, *intervals]))
    tables = read_postprocessor(path)
    (interval, reason), = tables.quarantine.itertuples(index=False)
    assert interval == 12 and f"{path}: interval 12: malformed XML" in reason
    assert "read again from the next interval" in reason
    lost = sorted(whole.cpu["interval_start_at"].unique())[11]
    assert tables.cpu.reset_index(drop=True).equals(whole.cpu[whole.cpu["interval_start_at"] != lost]
                                                    .reset_index(drop=True))


def test_unreadable_time_quarantines_its_interval(tmp_path):
    head, *intervals = _intervals(WEEK_2020.read_text())
    intervals[1] = re.sub(r'(<display-start locale="en-us">)[^<]*', r"\1someday", intervals[1], count=1)
    path = tmp_path / "time.xml"
    path.write_text("<postprocessor>".join([head, *intervals]))
    tables = read_postprocessor(path)
    (interval, reason), = tables.quarantine.itertuples(index=False)
    assert interval == 2 and f"{path}: interval 2: unrecognised display time 'someday'" in reason
    assert tables.cpu["interval_start_at"].nunique() == len(intervals) - 1


def test_rmf_ingest_counts_and_keeps_the_quarantined_intervals(tmp_path):
    head, *intervals = _intervals(WEEK_2020.read_text())
    intervals[0] = intervals[0].replace(CP_ROW, CP_ROW + "?", 1)
    path = tmp_path / "week.xml"
    path.write_text("<postprocessor>".join([head, *intervals]))
    out = tmp_path / "out"
    (result,), _ = ingest_xml([path], out)
    assert result.status == "ingested" and result.quarantined == 1
    assert result.quarantine_reasons[0].startswith(f"{path}: interval 1 (CPU ")
    assert read_manifest(out)[result.sha256]["quarantined"] == 1
    (kept,) = (out / "rmf_quarantine").rglob("*.parquet")
    q = pd.read_parquet(kept)
    assert q[["file", "interval"]].values.tolist() == [[str(path), 1]] and "not a number: '?" in q["reason"].iloc[0]
