"""The desk's upload path under the same input bounds as ``kneecap ingest`` (issue 35, item 4e).

Inside the 200 MB upload limit a 9.7 MB UTF-16 XML added 813 MB and a 25.6 MB gzip 2.86 GB: an
upload is read by the same readers, so it is refused or quarantined as they refuse or quarantine.
"""

from __future__ import annotations

import gzip
import struct
import sys
from pathlib import Path

import pytest

from tests.app.conftest import app_resources
from tests.rmf.test_hardening import _laughs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def resources():
    return app_resources()


@pytest.mark.parametrize("name", ["report.xml", "report"])
def test_utf16_xml_with_entities_is_refused(resources, name):
    payload = _laughs("utf-16")
    assert resources.upload_kind(name, payload[:256]) == "xml"  # by its byte-order mark without the suffix
    with pytest.raises(resources.UploadError,
                       match=rf"^{name}: a document type declaration <!DOCTYPE ddsml>: .*refused"):
        resources.ingest_upload(name, payload)


def test_long_spanned_chain_in_an_upload_is_quarantined(resources):
    sys.path.insert(0, str(REPO / "tests" / "smf"))
    try:
        import synth
    finally:
        sys.path.remove(str(REPO / "tests" / "smf"))
    records, _ = synth.week_of_intervals(days=0.25)
    first = records[0]
    chain = (struct.pack(">HBB", len(first), 1, 0) + first[4:]
             + (struct.pack(">HBB", 8004, 3, 0) + bytes(8000)) * 250)  # 2 MB, never completed
    payload = gzip.compress(synth.frame_rdw(records[1:5]) + chain, compresslevel=1, mtime=0)
    result = resources.ingest_upload("dump.smf.gz", payload)
    assert result["records"] == 5  # four records and the chain's row
    q = result["quarantine"]
    assert len(q) == 1 and q["file"].iloc[0] == "dump.smf.gz"
    assert q["offset"].iloc[0] == len(synth.frame_rdw(records[1:5])) and q["bytes"].iloc[0] == len(chain)
    assert "spanned record longer than 32,760 bytes" in q["reason"].iloc[0]
    assert "never completed: the end of the input came before its last segment" in q["reason"].iloc[0]
