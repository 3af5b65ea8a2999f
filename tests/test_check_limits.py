"""`kneecap check` on hostile and careless CSVs (issue 14, findings 7 and 8): a clear error that
names the file, line and column, never a traceback, never exit 0 for a file that is not evidence."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from kneecap import cli, measurement_csv, schema, warehouse
from kneecap.modeling.dispatch import MAX_ENGINES
from tests.conftest import closed_rows, write_reference_csv


def _check(capsys, path: Path) -> tuple[int, str, str]:
    status = cli.main(["check", str(path)])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_latin1_byte_names_line_and_byte_not_a_traceback(tmp_path, capsys):
    rows = closed_rows("t")
    rows[1]["note"] = "caf\u00e9"
    path = write_reference_csv(tmp_path / "t.csv", rows)
    path.write_bytes(path.read_bytes().replace("caf\u00e9".encode(), b"caf\xe9"))
    status, _, err = _check(capsys, path)
    assert status == 1
    assert f"{path}:3: (file): not UTF-8 text: byte 0xe9" in err
    assert "Traceback" not in err


def test_field_over_128_kib_names_the_line(tmp_path, capsys):
    rows = closed_rows("t")
    rows[2]["note"] = "x" * (200 * 1024)
    path = write_reference_csv(tmp_path / "t.csv", rows)
    status, _, err = _check(capsys, path)
    assert status == 1
    assert re.search(re.escape(f"{path}:4: (row): ") + r"a field longer than 131,072 characters", err)


def test_a_utf8_bom_as_spreadsheets_write_it_reads_like_the_plain_file(tmp_path):
    path = write_reference_csv(tmp_path / "t.csv", closed_rows("t"))
    plain = warehouse.read_measurement_csv(path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    pd.testing.assert_frame_equal(warehouse.read_measurement_csv(path), plain)


def test_header_only_file_is_not_ok(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(",".join(schema.REFERENCE_CSV_COLUMNS) + "\n")
    status, out, err = _check(capsys, path)
    assert status == 1 and "ok" not in out
    assert f"{path}:2: (file): no data rows" in err


@pytest.mark.parametrize(("column", "value"), [("clients", "1e12"), ("resp_ms", "1e300"),
                                               ("n_ziip", "10000")])
def test_implausibly_large_values_are_rejected(tmp_path, capsys, column, value):
    rows = closed_rows("t")
    rows[0][column] = value
    path = write_reference_csv(tmp_path / "t.csv", rows)
    status, _, err = _check(capsys, path)
    assert status == 1
    assert re.search(re.escape(f"{path}:2: {column}: {value} is above ") + r"the plausible maximum", err)


def test_engine_ceiling_is_the_dispatch_models():
    assert schema.MAX_VALUES["n_gcp"] == schema.MAX_VALUES["n_ziip"] == MAX_ENGINES


def test_many_bad_rows_print_the_first_problems_and_a_total(tmp_path, capsys):
    rows = closed_rows("t")
    good = ",".join(str(rows[0].get(c, "")) for c in schema.REFERENCE_CSV_COLUMNS)
    bad = good.replace(f",{rows[0]['tps']},", ",abc,", 1)
    path = tmp_path / "t.csv"
    lines = [",".join(schema.REFERENCE_CSV_COLUMNS)]
    lines += [bad.replace(f",{rows[0]['point_id']},", f",p{i},", 1) for i in range(5000)]
    path.write_text("\n".join(lines) + "\n")
    status, _, err = _check(capsys, path)
    assert status == 1
    printed = err.strip().splitlines()
    assert len(printed) == warehouse.MAX_PROBLEMS_SHOWN + 1
    assert printed[0] == f"{path}:2: tps: 'abc' is not a number"
    assert printed[-1] == f"{path}: 5,000 problems in all; the first {warehouse.MAX_PROBLEMS_SHOWN} are shown"


def test_csv_over_the_size_limit_is_refused_before_reading(tmp_path, capsys, monkeypatch):
    path = write_reference_csv(tmp_path / "t.csv", closed_rows("t"))
    monkeypatch.setattr(measurement_csv, "MAX_CSV_BYTES", 100)
    status, _, err = _check(capsys, path)
    assert status == 1
    assert re.search(re.escape(f"{path}: (file): ") + r"\d+ bytes is over the 100-byte limit", err)


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    status, _, err = _check(capsys, tmp_path / "nope.csv")
    # a missing file is a wrong request: exit 2, as README and `kneecap --help` say (issue 35 item 8)
    assert status == 2 and "nope.csv" in err and "Traceback" not in err
