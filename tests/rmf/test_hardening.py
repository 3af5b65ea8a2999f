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


def _laughs(encoding: str, levels: int = 5, declared: str | None = "UTF-16") -> bytes:
    """The small sample with an entity DTD referenced in its first CPU cell, in ``encoding``.

    ``levels`` of ten-fold entities: 10**levels characters where referenced (kept small here, so that
    a parser that does expand them only costs a moment).
    """
    text = SMALL.read_text(encoding="utf-8")
    decl = '<!DOCTYPE ddsml [<!ENTITY a "aaaaaaaaaa">' + "".join(
        f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(levels - 1)) + "]>"
    head = f'<?xml version="1.0" encoding="{declared}"?>' if declared else ""
    body = text[text.index("<ddsml"):]
    cell = body.index("<col>CP</col>") + len("<col>")
    body = body[:cell] + f"&{chr(97 + levels - 1)};" + body[cell + len("CP"):]
    return (head + decl + body).encode(encoding)


@pytest.mark.parametrize(("encoding", "declared"), [
    ("utf-16", "UTF-16"),        # with a byte-order mark
    ("utf-16-le", "UTF-16"),     # without one: expat tells the byte order from "<?"
    ("utf-16-be", "UTF-16"),
    ("utf-16", None),            # no XML declaration at all
    ("latin-1", "ISO-8859-1"),
])
def test_entity_declarations_are_refused_in_every_encoding(tmp_path, encoding, declared):
    # issue 35 item 4: the ASCII byte check missed "<!DOCTYPE" in UTF-16 (9.7 MB -> 972 MB of memory);
    # the parser itself now refuses the declaration, after expat has decoded the bytes, in any encoding
    path = tmp_path / f"laughs-{encoding}.xml"
    path.write_bytes(_laughs(encoding, declared=declared))
    with pytest.raises(RMFReportError, match=rf"{re.escape(str(path))}: .*RMF reports have no document type or "
                                             "entity declarations.*refused"):
        read_postprocessor(path)
    (result,), _ = ingest_xml([path], tmp_path / "out")
    assert result.status == "failed" and "no document type or entity declarations" in result.error


def test_a_report_in_utf16_without_the_xml_suffix_goes_to_the_xml_reader(tmp_path):
    # by its first bytes: a byte-order mark, or "<?" in UTF-16 without one; not to the SMF reader
    from kneecap.ingest.sniff import sort_inputs

    text = SMALL.read_text(encoding="utf-8").replace('encoding="UTF-8"', 'encoding="UTF-16"')
    files = []
    for encoding in ("utf-16", "utf-16-le", "utf-16-be"):
        files.append(tmp_path / f"report-{encoding}.dat")
        files[-1].write_bytes(text.encode(encoding))
    inputs = sort_inputs(files)
    assert inputs.rmf_xml == files and inputs.smf == []
    assert len(read_postprocessor(files[1]).cpu) == 1  # and it reads as the UTF-8 original does
