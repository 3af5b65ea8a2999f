"""RMF XML input as a hostile or careless user sends it (issue 14): bounded text nodes (finding 7),
documents without reports (finding 8), and the manifest shared with SMF ingest (lock, torn line)."""

from __future__ import annotations

import fcntl
import shutil
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from kneecap.rmf import RMFReportError, postprocessor, read_postprocessor
from kneecap.rmf.ingest import ingest_xml
from kneecap.smf.ingest import LOCK, MANIFEST, read_manifest

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
