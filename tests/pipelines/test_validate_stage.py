"""The validate stage: bad measured points are quarantined, the rest is published."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from kneecap import warehouse
from tests.bundled import read_bundled
from tests.stages import load_stage

REPO = Path(__file__).resolve().parents[2]


def _marts(tmp_path: Path) -> tuple[Path, dict[str, pd.DataFrame]]:
    measurements, sources = read_bundled()
    tables = warehouse.build_marts(measurements, sources, sql_root=REPO / "pipelines" / "sql")
    marts = {k: tables[k] for k in ("fct_measurements", "dim_workloads", "dim_sources")}
    return tmp_path / "marts", marts


def _run(tmp_path: Path, marts_dir: Path, capsys) -> tuple[int, str, str]:
    rc = load_stage("validate").main(["--marts", str(marts_dir), "--out", str(tmp_path / "processed"),
                                      "--report", str(tmp_path / "report.json"), "--params", str(REPO / "params.yaml")])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_a_point_breaking_littles_law_is_quarantined_and_the_rest_published(tmp_path, capsys):
    marts_dir, marts = _marts(tmp_path)
    fct = marts["fct_measurements"].copy()
    seed004 = fct.index[(fct["workload"] == "zosconnect_cics_diag") & (fct["clients"] == 400)]
    fct.loc[seed004[0], "tps"] *= 3  # 3 x the measured throughput: N = X (R + Z) no longer holds
    warehouse.write_tables({**marts, "fct_measurements": fct}, marts_dir)
    rc, out, err = _run(tmp_path, marts_dir, capsys)
    assert rc == 0, err
    bad_point = fct.loc[seed004[0], "point_id"]
    assert "rule expect_column_values_to_be_between column check_littles_law_rel_err failed at rows" in err
    assert bad_point in err and "1 measured point(s) quarantined" in err
    published = warehouse.read_parquet_dir(tmp_path / "processed")
    assert len(published["fct_measurements"]) == len(fct) - 1
    assert bad_point not in set(published["fct_measurements"]["point_id"])
    assert set(published["dim_workloads"]["workload"]) == set(marts["dim_workloads"]["workload"])
    q = published["quarantine_measurements"]
    assert list(q["point_id"]) == [bad_point] and q["rule"].iloc[0] == "expect_column_values_to_be_between"
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["published"] is True and report["quarantined_rows"] == 1 and report["success"] is False


def test_a_table_level_failure_publishes_nothing(tmp_path, capsys):
    marts_dir, marts = _marts(tmp_path)
    good_dir = tmp_path / "good"
    warehouse.write_tables(marts, good_dir)
    assert _run(tmp_path, good_dir, capsys)[0] == 0
    generation = warehouse.current_generation(tmp_path / "processed")
    before = warehouse.read_table(tmp_path / "processed", "fct_measurements")
    broken = marts["fct_measurements"].drop(columns=["resp_ms"])
    warehouse.write_tables({**marts, "fct_measurements": broken}, marts_dir)
    rc, _, err = _run(tmp_path, marts_dir, capsys)
    assert rc == 1 and "nothing published" in err
    assert warehouse.current_generation(tmp_path / "processed") == generation
    pd.testing.assert_frame_equal(warehouse.read_table(tmp_path / "processed", "fct_measurements"), before)
    assert json.loads((tmp_path / "report.json").read_text())["published"] is False


def test_the_gate_writes_gx_data_docs_that_show_the_failed_rule(tmp_path, capsys):
    marts_dir, marts = _marts(tmp_path)
    fct = marts["fct_measurements"].copy()
    row = fct.index[(fct["workload"] == "zosconnect_cics_diag") & (fct["clients"] == 400)][0]
    fct.loc[row, "tps"] *= 3
    warehouse.write_tables({**marts, "fct_measurements": fct}, marts_dir)
    docs = tmp_path / "data_docs"
    rc = load_stage("validate").main(["--marts", str(marts_dir), "--out", str(tmp_path / "processed"),
                                      "--report", str(tmp_path / "report.json"), "--params", str(REPO / "params.yaml"),
                                      "--docs", str(docs)])
    assert rc == 0, capsys.readouterr().err
    index = (docs / "index.html").read_text(encoding="utf-8")
    for table in ("fct_measurements", "dim_workloads", "dim_sources"):
        assert table in index
        assert (docs / "expectations" / f"{table}.html").exists()
    [page] = list((docs / "validations" / "fct_measurements").rglob("*.html"))
    text = " ".join(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")).split())
    # GX's own rendering of the result: the suite failed on exactly one expectation (the
    # Little's-law check at the tripled point), the other 34 held
    assert "Status: Failed" in text
    assert "Unsuccessful Expectations 1 " in text and "check_littles_law_rel_err" in text
    # not a DVC output (its pages carry the run's time): the stage itself replaces the folder, so it
    # shows this run only, as it did when DVC cleared it
    warehouse.write_tables(marts, marts_dir)
    stale = docs / "validations" / "stale.html"
    stale.write_text("an earlier run", encoding="utf-8")
    assert load_stage("validate").main(["--marts", str(marts_dir), "--out", str(tmp_path / "processed"),
                                        "--report", str(tmp_path / "report.json"),
                                        "--params", str(REPO / "params.yaml"), "--docs", str(docs)]) == 0
    assert not stale.exists()
    [page] = list((docs / "validations" / "fct_measurements").rglob("*.html"))
    assert "Status: Succeeded" in " ".join(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")).split())
