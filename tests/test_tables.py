"""A user's own table: one contract, the gate's rules before the pipeline, `kneecap add-table`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kneecap import cli, schema, tables, warehouse
from kneecap.config import ValidationConfig
from kneecap.validation import quarantine, validate_tables
from tests.bundled import bundled_reference

REPO = Path(__file__).resolve().parents[1]
SQL = REPO / "pipelines" / "sql"

# seed 004 Table 1 (004_30fd347cf9df2afe.txt, "Recorded average response times") as a planner would
# type it: only the columns the table prints, the LPAR given on the command line
MINIMAL = ("workload,clients,tps,resp_ms\n"
           "mylpar_api,100,500,1.06\nmylpar_api,200,1000,1.13\nmylpar_api,300,1500,1.38\n"
           "mylpar_api,400,1960,3.32\nmylpar_api,500,2420,5.03\n")


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    """The bundled data/reference, as a new project has it."""
    return bundled_reference(tmp_path / "reference")


def _add(tmp_path: Path, reference: Path, text: str = MINIMAL, name: str = "mylpar.csv", **kwargs):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    kwargs.setdefault("fill", {"n_gcp": 2, "n_ziip": 2, "think_time_ms": 200})
    return tables.add_table(path, reference, title="in-house load test, LPAR SYSA", sql_root=SQL, **kwargs)


def test_add_table_writes_the_full_table_and_one_sources_row(tmp_path: Path, reference: Path) -> None:
    before = (reference / "sources.csv").read_bytes()
    added = _add(tmp_path, reference, locator="run 7")
    assert added.path == reference / "mylpar.csv" and added.check.ok and not added.replaced
    # the pipeline reads it as it reads the bundled tables
    measurements, sources = warehouse.read_reference_dir(reference)
    mine = measurements[measurements["source_id"] == "mylpar"]
    assert mine["clients"].tolist() == [100.0, 200.0, 300.0, 400.0, 500.0]
    assert (mine[["n_gcp", "n_ziip", "think_time_ms"]] == [2.0, 2.0, 200.0]).all().all()
    assert set(mine["source_file"]) == {"mylpar.csv"} and set(mine["source_locator"]) == {"run 7"}
    assert (reference / "mylpar.csv").read_text().splitlines()[0] == ",".join(schema.REFERENCE_CSV_COLUMNS)
    row = sources.set_index("source_id").loc["mylpar"]
    assert row["title"] == "in-house load test, LPAR SYSA" and row["workload_kind"] == "closed"
    assert (row["n_gcp"], row["n_ziip"], row["think_time_ms"]) == (2, 2, 200)
    # the bundled rows are left byte for byte (CRLF line ends and quoting included): one line added
    after = (reference / "sources.csv").read_bytes()
    assert after.startswith(before) and after[len(before):].count(b"\r\n") == 1


def test_a_name_already_taken_is_refused_and_replace_replaces(tmp_path: Path, reference: Path) -> None:
    _add(tmp_path, reference)
    sources = (reference / "sources.csv").read_bytes()
    with pytest.raises(tables.TableError, match="already in the project; --replace"):
        _add(tmp_path, reference, text=MINIMAL.replace("1.06", "1.07"))
    assert (reference / "sources.csv").read_bytes() == sources
    again = _add(tmp_path, reference, text=MINIMAL.replace("1.06", "1.07"), replace=True)
    assert again.replaced
    measurements, sources_frame = warehouse.read_reference_dir(reference)
    assert (sources_frame["source_id"] == "mylpar").sum() == 1
    assert measurements.loc[measurements["source_id"] == "mylpar", "resp_ms"].iloc[0] == 1.07
    with pytest.raises(tables.TableError, match="seed004_table1"):  # a bundled table, too
        _add(tmp_path, reference, name="seed004_table1.csv")


def test_fill_fills_only_what_rows_leave_empty(tmp_path: Path, reference: Path) -> None:
    text = "workload,clients,tps,resp_ms,n_ziip\nw,100,500,1.06,\nw,200,1000,1.13,3\nw,300,1500,1.38,\n"
    added = _add(tmp_path, reference, text=text)
    assert added.frame["n_ziip"].tolist() == [2.0, 3.0, 2.0]
    assert added.source_row["n_ziip"] is None  # rows differ: the citation does not claim one count
    with pytest.raises(tables.TableError, match="n_gcp for rows that do not say: -1 is negative"):
        _add(tmp_path, reference, name="other.csv", fill={"n_gcp": -1})


def test_a_bad_cell_writes_nothing(tmp_path: Path, reference: Path) -> None:
    listing = sorted(p.name for p in reference.iterdir())
    with pytest.raises(warehouse.ReferenceDataError, match=r"mylpar\.csv:3: tps: 'fast' is not a number"):
        _add(tmp_path, reference, text=MINIMAL.replace("1000", "fast"))
    assert sorted(p.name for p in reference.iterdir()) == listing


def test_the_rows_check_reports_are_the_rows_the_gate_quarantines(tmp_path: Path, reference: Path) -> None:
    """One rule set: what `kneecap check` / `add-table` / the upload say is what the stage sets aside."""
    text = (MINIMAL.replace("2420,5.03", "2420,50.3")  # Little's law off by ~21 %
            .replace("workload,clients,tps,resp_ms", "workload,clients,tps,resp_ms,cpu_gcp_pct")
            .replace("1.06\n", "1.06,20\n").replace("1.13\n", "1.13,250\n")  # 250 % on 2 GCPs
            .replace("1.38\n", "1.38,60\n").replace("3.32\n", "3.32,80\n").replace("50.3\n", "50.3,100\n"))
    path = tmp_path / "mine.csv"
    path.write_text(text, encoding="utf-8")
    frame = warehouse.read_measurement_csv(path).assign(n_gcp=2.0, n_ziip=2.0, think_time_ms=200.0)
    sources = warehouse.read_sources_csv(reference / "sources.csv")
    check = tables.validate_measurements(frame, sources=sources, sql_root=SQL, config=ValidationConfig())
    # the stage's path: the same SQL, the gate's suites, its quarantine
    marts = warehouse.build_marts(frame, sources, sql_root=SQL)
    report = validate_tables({"fct_measurements": marts["fct_measurements"]}, ValidationConfig())
    _, quarantined, blocking = quarantine({"fct_measurements": marts["fct_measurements"]}, report)
    assert not blocking
    assert set(check.problems["point_id"]) == set(quarantined["point_id"]) == {"line3", "line6"}
    by_point = check.problems.set_index("point_id")
    assert by_point.loc["line6", "column"] == "clients" and by_point.loc["line6", "line"] == 6
    assert by_point.loc["line6", "problem"].startswith("Little's law: clients != tps x (resp_ms + think_time_ms)")
    assert by_point.loc["line3", "column"] == "cpu_gcp_pct" and "50 points too high" in by_point.loc["line3", "problem"]


def test_check_and_add_table_on_the_command_line(tmp_path: Path, reference: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)  # the project's pipelines/sql and params.yaml
    mine = tmp_path / "mylpar.csv"
    mine.write_text(MINIMAL, encoding="utf-8")
    # without the think time Little's law cannot hold: check says so, line by line, and exits 1
    assert cli.main(["check", str(mine), "--reference", str(reference)]) == 1
    err = capsys.readouterr().err
    assert f"{mine}:2: clients: Little's law" in err and "5 of 5 rows break the gate's rules" in err
    add = ["add-table", str(mine), "--reference", str(reference), "--source", "in-house load test",
           "--n-gcp", "2", "--n-ziip", "2", "--think-time-ms", "200"]
    assert cli.main(add) == 0
    out = capsys.readouterr().out
    assert "mylpar_api: 5 points, clients 100-500; n_gcp 2, n_ziip 2, think_time_ms 200" in out
    assert f"wrote {reference / 'mylpar.csv'} (5 rows)" in out
    assert cli.main(["check", str(reference / "mylpar.csv"), str(reference / "sources.csv"),
                     str(reference / "factors.csv"), "--reference", str(reference)]) == 0
    out = capsys.readouterr().out
    assert f"{reference / 'mylpar.csv'}: ok, 5 rows" in out and "sources.csv: ok, 10 sources" in out
    assert cli.main(add) == 2 and "already in the project" in capsys.readouterr().err
    # a table dropped into the project without its citation is named
    shutil.copy(mine, reference / "stray.csv")
    assert cli.main(["check", str(reference / "stray.csv"), "--reference", str(reference)]) == 1
    assert "table 'stray' has no row in sources.csv; `kneecap add-table`" in capsys.readouterr().err


def _own_table() -> str:
    """Six points of a closed test on 3 GCPs + 1 zIIP with Z = 100 ms, solved by exact MVA.

    0.6 ms of GCP and 0.4 ms of zIIP CPU per transaction and a 1 ms delay: the zIIP saturates near
    2,500 tps, so the last rows run the engines hard, and Little's law holds by construction.
    """
    from kneecap.modeling.queueing import multiserver_mva

    sol = multiserver_mva((0.6, 0.4), (3, 1), delay_ms=1.0, think_time_ms=100.0, n_max=300)
    rows = ["workload,clients,tps,resp_ms,cpu_gcp_pct,cpu_ziip_pct"]
    for n in (50, 100, 150, 200, 250, 300):
        tps, resp_ms = sol.tps[n - 1], sol.resp_ms[n - 1]
        rows.append(f"own_api,{n},{tps:.1f},{resp_ms:.3f},{tps * 0.6 / 10:.1f},{tps * 0.4 / 10:.1f}")
    return "\n".join(rows) + "\n"


def test_check_takes_the_setup_add_table_takes(tmp_path: Path, reference: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    mine = tmp_path / "own.csv"
    mine.write_text(_own_table(), encoding="utf-8")
    setup = ["--n-gcp", "3", "--n-ziip", "1", "--think-time-ms", "100"]
    assert cli.main(["check", str(mine), "--reference", str(reference), *setup]) == 0
    captured = capsys.readouterr()
    assert f"{mine}: ok, 6 rows (n_gcp 3, n_ziip 1, think_time_ms 100 where rows do not say)" in captured.out
    assert captured.err == ""
    # without them Little's law reads Z as 0 and fails every row; the message names the options to pass
    assert cli.main(["check", str(mine), "--reference", str(reference)]) == 1
    err = capsys.readouterr().err
    assert "6 of 6 rows break the gate's rules" in err
    assert f"{mine}: 6 of 6 rows break Little's law and give no think time (read as 0): pass the test's " \
           "--think-time-ms MS" in err
    assert "rows give APPL% (cpu_gcp_pct, cpu_ziip_pct) without n_gcp and n_ziip, so it was not held to the " \
           "engines: pass --n-gcp N and --n-ziip N" in err
    # the engines given are the ones the APPL% is held to: one GCP cannot deliver 150 %
    assert cli.main(["check", str(mine), "--reference", str(reference), "--n-gcp", "1", "--n-ziip", "1",
                     "--think-time-ms", "100"]) == 1
    err = capsys.readouterr().err
    assert "cpu_gcp_pct: APPL% over what the engines can deliver" in err and "Little's law" not in err
    # a value the contract refuses is a wrong request, as add-table treats it
    assert cli.main(["check", str(mine), "--reference", str(reference), "--n-gcp", "-3"]) == 2
    assert "n_gcp for rows that do not say: -3 is negative" in capsys.readouterr().err
    # and add-table with the same options writes a table that checks clean in the project
    assert cli.main(["add-table", str(mine), "--reference", str(reference), "--source", "own test", *setup]) == 0
    capsys.readouterr()
    assert cli.main(["check", str(reference / "own.csv"), "--reference", str(reference)]) == 0
