"""The desk's upload path: read by the pipeline's readers, under the same input bounds as ``kneecap ingest``.

Inside the 200 MB upload limit a 9.7 MB UTF-16 XML added 813 MB and a 25.6 MB gzip 2.86 GB (issue
35, item 4e): an upload is read by the same readers, so it is refused or quarantined as they refuse
or quarantine.
"""

from __future__ import annotations

import gzip
import struct
import tempfile
from pathlib import Path

import pytest

from kneecap import upload
from kneecap.config import ValidationConfig
from tests.rmf.test_hardening import _laughs
from tests.smf import synth

REPO = Path(__file__).resolve().parents[1]
PROJECT = {"sources_csv": REPO / "data" / "reference" / "sources.csv", "sql_root": REPO / "pipelines" / "sql",
           "config": ValidationConfig()}


def _read(name: str, payload: bytes, **options):
    return upload.read_upload(name, payload, **PROJECT, **options)


@pytest.mark.parametrize("name", ["report.xml", "report"])
def test_utf16_xml_with_entities_is_refused(name, tmp_path):
    payload = _laughs("utf-16")
    (tmp_path / name).write_bytes(payload)
    assert upload.upload_kind(tmp_path / name) == "xml"  # by its byte-order mark without the suffix
    with pytest.raises(upload.UploadError, match=rf"^{name}: a document type declaration <!DOCTYPE ddsml>: .*refused"):
        _read(name, payload)


def test_long_spanned_chain_in_an_upload_is_quarantined():
    records, _ = synth.week_of_intervals(days=0.25)
    first = records[0]
    chain = (struct.pack(">HBB", len(first), 1, 0) + first[4:]
             + (struct.pack(">HBB", 8004, 3, 0) + bytes(8000)) * 250)  # 2 MB, never completed
    payload = gzip.compress(synth.frame_rdw(records[1:5]) + chain, compresslevel=1, mtime=0)
    result = _read("dump.smf.gz", payload)
    assert result["records"] == 5  # four records and the chain's row
    q = result["quarantine"]
    assert len(q) == 1 and q["file"].iloc[0] == "dump.smf.gz"
    assert q["offset"].iloc[0] == len(synth.frame_rdw(records[1:5])) and q["bytes"].iloc[0] == len(chain)
    assert "spanned record longer than 32,760 bytes" in q["reason"].iloc[0]
    assert "never completed: the end of the input came before its last segment" in q["reason"].iloc[0]


def test_an_upload_works_in_a_scratch_folder_a_killed_desk_cannot_leave_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / "kneecap-ingest-dead"  # a desk killed mid-upload: no process holds its lock
    dead.mkdir()
    (dead / "upload.smf").write_bytes(b"x" * 10)
    csv = b"workload,clients,tps,resp_ms\nmylpar_api,100,500,1.06\nmylpar_api,200,1000,1.13\n"
    out = _read("mylpar.csv", csv, fill={"n_gcp": 2, "n_ziip": 2, "think_time_ms": 200})
    assert out["kind"] == "measurement CSV" and out["rows"] == 2
    assert out["validation"]["success"] and len(out["validation"]["publishable"]) == 2
    assert list(tmp_path.iterdir()) == []  # the dead run's folder swept, this one's removed


def test_a_bad_cell_is_refused_with_its_line_and_column():
    csv = b"workload,clients,tps,resp_ms\nw,100,500,1.06\nw,200,lots,1.13\n"
    with pytest.raises(upload.UploadError, match=r"^t\.csv:3: tps: ") as caught:
        _read("../t.csv", csv)  # a path in the browser's name is not a folder here
    problem = caught.value.problems.iloc[0].to_dict()
    assert {k: problem[k] for k in ("file", "line", "column")} == {"file": "t.csv", "line": 3, "column": "tps"}


def test_uploads_over_the_limit_or_empty_are_refused():
    with pytest.raises(upload.UploadError, match=r"^big\.smf: 2 MB is over the 1 MB upload limit"):
        _read("big.smf", b"\0" * 2 * 1024 * 1024, max_mb=1)
    with pytest.raises(upload.UploadError, match=r"^empty\.csv: the file is empty$"):
        _read("empty.csv", b"")
