"""One RMF report saved again (CRLF, UTF-16) is a duplicate by its intervals, not a new input (#35 item 5).

At ingest it is named and not stored (nor copied into the input area); a partly overlapping report keeps
its new intervals only; and duplicates already in a store reach the SQL as two rows per key, which the
staging models reduce to one and ``fct_rmf_duplicates`` counts, so the pipeline still publishes.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd

from kneecap import warehouse
from kneecap.ingest.cli import bring_into, run_ingest
from kneecap.ingest.manifest import read_manifest, sha256_file
from kneecap.ingest.rmf import TABLES, ingest_xml
from kneecap.ingest.store import table_files
from kneecap.validation import validate_tables
from tests.bundled import bundled_reference, read_bundled
from tests.rmf.stored_before import store_report_unchecked
from tests.stages import load_stage

REPO = Path(__file__).resolve().parents[2]
REPORT = REPO / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-RPRT-20200910.xml"  # 34 intervals of system RPRT
N_INTERVALS = 34


def _crlf(tmp_path: Path) -> Path:
    path = tmp_path / "saved-again-crlf.xml"
    path.write_bytes(REPORT.read_bytes().replace(b"\n", b"\r\n"))
    return path


def _utf16(tmp_path: Path) -> Path:
    path = tmp_path / "saved-again-utf16.xml"
    text = REPORT.read_text(encoding="utf-8").replace('encoding="UTF-8"', 'encoding="UTF-16"')
    path.write_bytes(text.encode("utf-16"))
    return path


def _first_intervals(tmp_path: Path, keep: int) -> Path:
    """The report with only its first ``keep`` intervals (``<postprocessor>`` elements)."""
    text = REPORT.read_text(encoding="utf-8")
    blocks = list(re.finditer(r"<postprocessor>.*?</postprocessor>\s*", text, re.S))
    assert len(blocks) == N_INTERVALS
    path = tmp_path / f"first-{keep}.xml"
    path.write_text(text[:blocks[keep].start()] + text[blocks[-1].end():], encoding="utf-8")
    return path


def _stored_rows(out: Path) -> dict[str, int]:
    return {t: sum(len(pd.read_parquet(f)) for f in table_files(out / t)) for t in TABLES}


def test_a_report_saved_again_is_named_and_not_stored(tmp_path, capsys):
    out = tmp_path / "store"
    crlf, utf16 = _crlf(tmp_path), _utf16(tmp_path)
    assert len({sha256_file(p) for p in (REPORT, crlf, utf16)}) == 3  # other bytes, the same report
    assert run_ingest([str(REPORT)], out_dir=str(out)) == 0
    before = _stored_rows(out)
    assert before["rmf_cpu"] == N_INTERVALS
    capsys.readouterr()
    assert run_ingest([str(crlf), str(utf16)], out_dir=str(out)) == 0
    printed = capsys.readouterr().out
    for copy in (crlf, utf16):
        assert f"ingest: {copy}: its {N_INTERVALS} intervals are already stored from {REPORT}: skipped" in printed
    assert "0 ingested, 0 already ingested, 2 duplicate reports skipped, 0 failed" in printed
    assert _stored_rows(out) == before  # nothing written
    assert list(read_manifest(out)) == [sha256_file(REPORT)]  # nothing committed


def test_copies_in_one_run_keep_the_first(tmp_path):
    # the decode stage ingests the whole input area at once: the original and its copy together
    results, _ = ingest_xml([REPORT, _crlf(tmp_path)], tmp_path / "store")
    assert [r.status for r in results] == ["ingested", "duplicate"]
    assert results[1].duplicates == N_INTERVALS and results[1].duplicate_of == str(REPORT)
    assert _stored_rows(tmp_path / "store")["rmf_cpu"] == N_INTERVALS


def test_a_partly_overlapping_report_keeps_only_its_new_intervals(tmp_path, capsys):
    out = tmp_path / "store"
    first = _first_intervals(tmp_path, 20)
    (early,), _ = ingest_xml([first], out)
    assert early.rows["rmf_cpu"] == 20
    (whole,), _ = ingest_xml([REPORT], out)
    assert whole.status == "ingested" and whole.duplicates == 20 and whole.duplicate_of == str(first)
    assert whole.rows["rmf_cpu"] == N_INTERVALS - 20
    cpu = pd.concat([pd.read_parquet(f) for f in table_files(out / "rmf_cpu")])
    assert len(cpu) == N_INTERVALS and not cpu.duplicated(["system_id", "interval_start_at", "cpu_type"]).any()
    assert read_manifest(out)[whole.sha256]["duplicates"] == 20
    capsys.readouterr()
    assert run_ingest([str(_crlf(tmp_path))], out_dir=str(out)) == 0  # now every interval is stored: skipped
    assert "its 34 intervals are already stored from" in capsys.readouterr().out


def test_ingest_into_the_input_area_does_not_copy_a_report_saved_again(tmp_path, capsys):
    area = tmp_path / "raw"
    assert bring_into([str(REPORT)], str(area)) == 0
    capsys.readouterr()
    assert bring_into([str(_crlf(tmp_path)), str(_utf16(tmp_path))], str(area)) == 0
    printed = capsys.readouterr().out
    assert sorted(p.name for p in area.iterdir()) == [REPORT.name]
    assert f"already stored from {area / REPORT.name}: skipped" in printed
    assert "2 duplicate report(s) left out" in printed


def _old_store(tmp_path: Path) -> Path:
    """A store holding the report twice, as an ingest that compared only bytes wrote it (by day)."""
    out = tmp_path / "decoded"
    ingest_xml([REPORT], out)
    store_report_unchecked(out, _crlf(tmp_path))
    return out


def test_duplicates_already_stored_give_one_row_per_key_and_a_count(tmp_path):
    decoded = warehouse.read_decoded_tables(_old_store(tmp_path))
    assert len(decoded["rmf_cpu"]) == 2 * N_INTERVALS
    measurements, sources = read_bundled()
    marts = warehouse.build_marts(measurements, sources, decoded, sql_root=REPO / "pipelines" / "sql")
    cpu = marts["fct_cpu_intervals"]
    rmf = cpu[cpu["source_id"] == "rmf_xml"]
    assert len(rmf) == N_INTERVALS
    assert not cpu.duplicated(["source_id", "system_id", "interval_start_at", "cpu_type"]).any()
    dup = marts["fct_rmf_duplicates"]
    assert set(dup["table_name"]) == {"rmf_cpu", "rmf_partition"}
    assert (dup["copies"] == 2).all()
    assert dup.loc[dup["table_name"] == "rmf_cpu", "rows_dropped"].sum() == N_INTERVALS
    # every stored row has exactly one twin: half of them are left out
    assert int(dup["rows_dropped"].sum()) == (len(decoded["rmf_cpu"]) + len(decoded["rmf_partition"])) // 2
    report = validate_tables({k: marts[k] for k in ("fct_cpu_intervals", "fct_rmf_duplicates")})
    assert report.success, [str(f) for f in report.failures]


def test_the_pipeline_publishes_a_store_holding_a_report_twice(tmp_path, capsys):
    decoded = _old_store(tmp_path)
    reference = tmp_path / "reference"
    bundled_reference(reference)
    marts, processed, report = tmp_path / "marts", tmp_path / "processed", tmp_path / "report.json"
    assert load_stage("build_marts").main(["--reference", str(reference), "--sql", str(REPO / "pipelines" / "sql"),
                                           "--smf", str(decoded), "--out", str(marts),
                                           "--params", str(REPO / "params.yaml")]) == 0
    rc = load_stage("validate").main(["--marts", str(marts), "--out", str(processed), "--report", str(report),
                                      "--params", str(REPO / "params.yaml")])
    err = capsys.readouterr().err
    assert rc == 0, err
    body = json.loads(report.read_text())
    assert body["published"] is True
    assert body["rmf_duplicate_rows_dropped"] > N_INTERVALS  # the CPU rows and the partition rows
    assert "duplicate row(s) left out, one row kept per key: see fct_rmf_duplicates" in err
    published = warehouse.read_parquet_dir(processed)
    cpu = published["fct_cpu_intervals"]
    assert (cpu["source_id"] == "rmf_xml").sum() == N_INTERVALS


def test_the_pipeline_decodes_an_input_area_holding_a_report_three_times_and_publishes(tmp_path, capsys):
    # what `make pipeline` runs after a report was dropped into data/raw again, CRLF and UTF-16
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy2(REPORT, raw / REPORT.name)
    _crlf(raw)
    _utf16(raw)
    decoded, marts, processed, report = (tmp_path / d for d in ("decoded", "marts", "processed", "report.json"))
    assert load_stage("decode_smf").main(["--raw", str(raw), "--out", str(decoded),
                                          "--params", str(REPO / "params.yaml")]) == 0
    printed = capsys.readouterr().out
    assert printed.count(f"intervals are already stored from {raw / REPORT.name}: skipped") == 2
    assert [e["path"] for e in read_manifest(decoded).values()] == [str(raw / REPORT.name)]
    reference = tmp_path / "reference"
    bundled_reference(reference)
    assert load_stage("build_marts").main(["--reference", str(reference), "--sql", str(REPO / "pipelines" / "sql"),
                                           "--smf", str(decoded), "--out", str(marts),
                                           "--params", str(REPO / "params.yaml")]) == 0
    assert load_stage("validate").main(["--marts", str(marts), "--out", str(processed), "--report", str(report),
                                        "--params", str(REPO / "params.yaml")]) == 0
    body = json.loads(report.read_text())
    assert body["published"] is True and body["rmf_duplicate_rows_dropped"] == 0
    cpu = warehouse.read_parquet_dir(processed)["fct_cpu_intervals"]
    assert (cpu["source_id"] == "rmf_xml").sum() == N_INTERVALS
