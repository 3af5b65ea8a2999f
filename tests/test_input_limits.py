"""Bounded work for every user file and honest answers about it (issue 35, items 4c, 4d and 8).

A YAML alias bomb, a tagged or malformed params.yaml, ``/dev/zero`` or a FIFO, a missing file, a
table with a row given twice, a formula in a cell: each gets a one-line message and the right exit
code, never a traceback, unbounded memory or a formula written for a spreadsheet to run.
"""

from __future__ import annotations

import csv
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kneecap import cli, config, limits
from kneecap.csvsafe import neutralise_frame

REPO = Path(__file__).resolve().parents[1]
SQL = str(REPO / "pipelines" / "sql")
TABLE = REPO / "data" / "reference" / "seed000_tps.csv"

#: 549 bytes in the issue's probe; nine levels of nine aliases: 9**9 = 387,420,489 strings once walked
BOMB = "\n".join(['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
                 + [f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)])


def _kneecap(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """``kneecap ARGS`` in a process of its own, its memory capped so that an unbounded read fails fast."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "kneecap.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, preexec_fn=cap)


# -- 4c: YAML aliases, values in messages ---------------------------------------------------------------------------

def test_alias_bomb_as_a_scenario_value_is_refused_in_one_line(tmp_path, capsys):
    # the probe: the bomb as `clients`; an error message that repr'd it took 3.5 GB
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB + "\nscenarios:\n  - {workload: w, name: bomb, clients: *i}\n", encoding="utf-8")
    assert cli._read_scenarios(str(path), "forecast") is None
    err = capsys.readouterr().err
    assert err == (f"forecast: {path}: line 7: aliases expand this document to more than "
                   f"{limits.MAX_YAML_NODES:,} nodes: refused\n")


def test_aliases_within_the_bound_load_as_before():
    text = "base: &b {n_gcp: 2, n_ziip: 1}\nscenarios: [{<<: *b, name: x}, {<<: *b, name: y}]\n"
    assert limits.load_yaml(text, "s.yaml")["scenarios"][1] == {"n_gcp": 2, "n_ziip": 1, "name": "y"}


def test_alias_to_itself_is_refused():
    with pytest.raises(limits.InputError, match=r"^s\.yaml: line 1: an alias to a node that contains it: refused$"):
        limits.load_yaml("a: &a [1, *a]", "s.yaml")


def test_error_messages_show_a_large_value_cut_short():
    from kneecap.scenario_checks import scenario_value_problem
    from kneecap.simulation.scenario import SimScenario

    big = [[1] * 1000] * 1000  # a million items, as a loaded alias tree shares them
    assert len(scenario_value_problem("clients", big)) < 200
    with pytest.raises(ValueError, match="give exactly one of clients") as caught:
        SimScenario.from_mapping({"n_gcp": 1, "n_ziip": 0, "cpu_ms_per_tran": 1.0, "ziip_eligible_fraction": 0.5,
                                  "clients": None, "tps": None, "burst_cv": None, "burst_dist": big})
    assert len(str(caught.value)) < 300


# -- 8: params.yaml ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "problem"), [
    ("common: !!python/object/apply:os.system ['true']\n", "could not determine a constructor for the tag"),
    ("common: {seed: 1\ntrain: {}\n", "expected ',' or '}'"),
    ("train: [1, 2]\n", "train: expected a mapping of parameters, got list [1, 2]"),
    ("- common\n- train\n", "expected a mapping of sections (common, train, ...), got list ['common', 'train']"),
])
def test_tagged_or_malformed_params_is_one_line_naming_the_file(tmp_path, capsys, text, problem):
    params = tmp_path / "params.yaml"
    params.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=str(params)) as caught:
        config.load_params(params)
    assert problem in str(caught.value) and "\n" not in str(caught.value)
    assert cli.main(["check", "--params", str(params), "--sql", SQL, str(TABLE)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"check: {params}: ") and problem in err


# -- 4d: files that are not regular files, missing files ------------------------------------------------------------

def test_check_refuses_a_character_device_and_a_fifo(tmp_path):
    # `kneecap check /dev/zero` read without end (and a FIFO with no writer blocks for ever)
    fifo = tmp_path / "table.csv"
    os.mkfifo(fifo)
    got = _kneecap("check", "/dev/zero", str(fifo), "--sql", SQL)
    assert got.returncode == 2, got.stderr
    assert got.stderr.splitlines() == [
        "check: /dev/zero: a character device, not a regular file: refused (kneecap reads only regular files)",
        f"check: {fifo}: a FIFO (named pipe), not a regular file: refused (kneecap reads only regular files)"]


@pytest.mark.parametrize("args", [
    ("check", "--params", "/dev/zero", "--sql", SQL, str(TABLE)),
    ("forecast", "--scenarios", "/dev/zero", "--out", "x.csv"),
    ("simulate", "--scenarios", "/dev/zero"),
    ("ingest", "/dev/zero", "--into", "never-written"),
    ("add-table", "/dev/zero", "--source", "s", "--sql", SQL),
])
def test_every_command_refuses_a_device_it_is_given(tmp_path, args):
    got = _kneecap(*args, cwd=tmp_path) if args[0] != "check" else _kneecap(*args)
    assert got.returncode == 2, got.stderr
    assert "/dev/zero: a character device, not a regular file: refused" in got.stderr
    assert "Traceback" not in got.stderr and not (tmp_path / "never-written").exists()


def test_check_on_a_missing_file_exits_2(tmp_path, capsys):
    # README and the exit-code rule: a missing file is a wrong request (2), not a table with problems (1)
    missing = tmp_path / "nope.csv"
    assert cli.main(["check", str(missing), "--sql", SQL]) == 2
    assert capsys.readouterr().err == f"check: {missing}: no such file\n"


def test_measurement_reader_refuses_a_device():
    # /dev/null, not /dev/zero: a reader without the check gets an empty file here instead of filling memory
    from kneecap import warehouse

    with pytest.raises(warehouse.ReferenceDataError, match=r"^/dev/null: \(file\): a character device"):
        warehouse.read_measurement_csv("/dev/null")


# -- 8: duplicate rows ------------------------------------------------------------------------------------------------

def test_check_names_rows_given_twice(tmp_path, capsys):
    lines = TABLE.read_text(encoding="utf-8").splitlines(keepends=True)
    table = tmp_path / "mine.csv"
    # line 2 again as line 5, line 3 again as line 6 (without point_id, which the reader numbers per line)
    rows = list(csv.reader(lines))
    drop = rows[0].index("point_id")
    keep = [[c for i, c in enumerate(r) if i != drop] for r in rows]
    with table.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows([*keep[:4], keep[1], keep[2]])
    assert cli.main(["check", str(table), "--sql", SQL]) == 1
    err = capsys.readouterr().err
    assert f"{table}:5: (row): repeats line 2 exactly" in err and f"{table}:6: (row): repeats line 3 exactly" in err
    assert f"{table}:4:" not in err


def test_bundled_tables_have_no_row_given_twice():
    from kneecap import tables, warehouse

    for path in sorted((REPO / "data" / "reference").glob("*.csv")):
        if path.name in ("sources.csv", *warehouse.REFERENCE_OTHER_FILES):
            continue
        assert tables.duplicate_rows(warehouse.read_measurement_csv(path)) == [], path


# -- 8: formula-like cells (OWASP CSV injection) ----------------------------------------------------------------------

def test_formula_cells_are_neutralised_and_numbers_are_not():
    frame = pd.DataFrame({"name": ["=HYPERLINK(\"http://x\")", "-1+cmd|' /C calc'!A0", "@SUM(A1)", "\tx", "ok",
                                   "-2.5"],
                          "value": [-1.0, -2.5, 3.0, 0.0, 1.0, 2.0]})
    out = neutralise_frame(frame)
    assert out["name"].tolist() == ["'=HYPERLINK(\"http://x\")", "'-1+cmd|' /C calc'!A0", "'@SUM(A1)", "'\tx", "ok",
                                    "-2.5"]
    assert out["value"].tolist() == [-1.0, -2.5, 3.0, 0.0, 1.0, 2.0]  # negative numbers stay numbers
    assert frame["name"].iloc[0].startswith("=")  # the caller's frame is left as it was


def test_add_table_writes_a_formula_title_neutralised(tmp_path):
    from kneecap import tables

    reference = tmp_path / "reference"
    shutil.copytree(REPO / "data" / "reference", reference)
    own = tmp_path / "mine.csv"
    own.write_text("workload,clients,tps,resp_ms\nmine,10,9.5,5\nmine,20,18,10\n", encoding="utf-8")
    tables.add_table(own, reference, title='=HYPERLINK("http://evil","report")', sql_root=SQL,
                     notes="@SUM(1+1)", fill={"n_gcp": 2.0, "n_ziip": 0.0, "think_time_ms": 1000.0})
    row = next(r for r in csv.DictReader((reference / "sources.csv").open(encoding="utf-8"))
               if r["source_id"] == "mine")
    assert row["title"] == "'=HYPERLINK(\"http://evil\",\"report\")" and row["notes"] == "'@SUM(1+1)"


def test_simulate_csv_neutralises_a_formula_scenario_name(tmp_path):
    scenarios = tmp_path / "s.yaml"
    scenarios.write_text("scenarios:\n  - {name: \"=cmd|' /C calc'!A0\", n_gcp: 1}\n", encoding="utf-8")
    out = tmp_path / "sim.csv"
    assert cli.main(["simulate", "--scenarios", str(scenarios), "--out", str(out)]) == 1  # a field is missing
    assert pd.read_csv(out)["name"].tolist() == ["'=cmd|' /C calc'!A0"]


# -- 8: the same dump under several names -----------------------------------------------------------------------------

def test_the_same_file_under_three_names_is_copied_once(tmp_path, capsys):
    from kneecap.ingest.cli import bring_into

    sample = REPO / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-small-RPRT-20220412.xml"
    names = [tmp_path / "in" / n for n in ("a.xml", "b.xml", "c.xml")]
    names[0].parent.mkdir()
    for n in names:
        shutil.copy(sample, n)
    into = tmp_path / "raw"
    assert bring_into([str(n) for n in names], str(into), quiet=True) == 0
    out = capsys.readouterr().out
    assert sorted(p.name for p in into.iterdir()) == ["a.xml"]
    assert f"ingest: skipped  {names[1]}: the same bytes as {names[0]} (SHA-256), not copied again" in out
    assert f"ingest: skipped  {names[2]}: the same bytes as {names[0]} (SHA-256), not copied again" in out
    assert "1 file(s) copied" in out
    # and under a fourth name later: the copy already in the input area is its twin
    fourth = tmp_path / "in" / "d.xml"
    shutil.copy(sample, fourth)
    assert bring_into([str(fourth)], str(into), quiet=True) == 0
    assert f"ingest: skipped  {fourth}: the same bytes as {into / 'a.xml'} (SHA-256)" in capsys.readouterr().out
    assert sorted(p.name for p in into.iterdir()) == ["a.xml"]


# -- 8: the desk's address ---------------------------------------------------------------------------------------------

def test_streamlit_run_in_the_project_listens_on_this_machine_only():
    # `streamlit run app/streamlit_app.py` without `make serve` listened on every interface
    probe = ("import sys; sys.argv = ['streamlit']\nfrom streamlit import config\n"
             "config.get_config_options(force_reparse=True)\nprint(config.get_option('server.address'))")
    got = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert got.stdout.splitlines()[-1] == "127.0.0.1", got.stderr
    # and `make serve` still chooses: its --server.address $(HOST) wins over the file
    assert "--server.address $(HOST)" in (REPO / "Makefile").read_text(encoding="utf-8")


#: Each stage's required options (dummy paths: the params are read before any of them).
STAGE_ARGS = {"decode_smf": ["--raw", "r", "--out", "o"],
              "build_marts": ["--reference", "r", "--sql", SQL, "--smf", "s", "--out", "o"],
              "validate": ["--marts", "m", "--out", "o", "--report", "j"],
              "train": ["--marts", "m", "--models", "mo", "--metrics", "me"],
              "evaluate": ["--cases", "c", "--out", "o"]}


@pytest.mark.parametrize("stage", list(STAGE_ARGS))
def test_every_stage_says_a_tagged_params_file_in_one_line(tmp_path, capsys, stage):
    from tests.stages import load_stage

    params = tmp_path / "params.yaml"
    params.write_text("common: !!python/object/apply:os.system ['true']\n", encoding="utf-8")
    rc = load_stage(stage).main([*STAGE_ARGS[stage], "--params", str(params)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith(f"{stage}: {params}: ")
    assert "could not determine a constructor" in err


def test_backtest_says_a_tagged_params_file_in_one_line(tmp_path, capsys):
    params = tmp_path / "params.yaml"
    params.write_text("common: !!python/object/apply:os.system ['true']\n", encoding="utf-8")
    assert cli.main(["backtest", str(REPO / "data" / "backtest"), "--params", str(params)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"kneecap backtest: {params}: ")
