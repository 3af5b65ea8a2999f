"""The desk's CSV downloads neutralise cells a spreadsheet would run as formulas (OWASP CSV injection)."""

from __future__ import annotations

import io

import pandas as pd

from tests.app.conftest import app_resources
from tests.conftest import REPO


def test_a_download_neutralises_formula_cells_and_keeps_numbers():
    frame = pd.DataFrame({"workload": ['=HYPERLINK("http://x","y")', "@SUM(A1)", "CICS-A"],
                          "source": ["+cmd|' /C calc'!A0", "-ish note", "seed 004"],
                          "resp_ms": [-1.5, 2.0, 3.25]})
    text = app_resources().csv_text(frame)
    back = pd.read_csv(io.StringIO(text))
    assert back["workload"].tolist() == ['\'=HYPERLINK("http://x","y")', "'@SUM(A1)", "CICS-A"]
    assert back["source"].tolist() == ["'+cmd|' /C calc'!A0", "'-ish note", "seed 004"]
    assert back["resp_ms"].tolist() == [-1.5, 2.0, 3.25]


def test_every_download_on_the_desk_goes_through_it():
    pages = sorted((REPO / "app" / "app_pages").glob("*.py"))
    calls = [line for page in pages for line in page.read_text().splitlines() if "st.download_button(" in line]
    assert calls and all("res.csv_text(" in line for line in calls), calls


def test_an_upload_works_in_a_scratch_folder_a_killed_desk_cannot_leave_behind(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / "kneecap-ingest-dead"  # a desk killed mid-upload: no process holds its lock
    dead.mkdir()
    (dead / "upload.smf").write_bytes(b"x" * 10)
    csv = b"workload,clients,tps,resp_ms\nmylpar_api,100,500,1.06\nmylpar_api,200,1000,1.13\n"
    out = app_resources().ingest_upload("mylpar.csv", csv, fill={"n_gcp": 2, "n_ziip": 2, "think_time_ms": 200})
    assert out["kind"] == "measurement CSV" and out["rows"] == 2
    assert list(tmp_path.iterdir()) == []  # the dead run's folder swept, this one's removed
