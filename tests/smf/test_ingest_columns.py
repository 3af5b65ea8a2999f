"""The SMF ingest without pandas (#14 ingest speed): plain columns give the same Arrow tables, Parquet
bytes, 70.1 rows and printed counts as DataFrames did, and ``kneecap ingest`` of an SMF dump does
not import pandas (0.35 s of its start-up)."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import synth

from kneecap.ingest.smf import format_counts, ingest_paths
from kneecap.ingest.store import TableWriter, _arrow, arrow_table, table_files
from kneecap.smf import type70
from kneecap.smf.reader import decode_file

SRC = Path(__file__).resolve().parents[2] / "src"


def _columns() -> dict:
    return {
        "system_id": np.array(["SYSA", None, "SYSB", "S\u00c9B"], dtype=object),  # None and non-ASCII text
        "nothing": np.array([None] * 4, dtype=object),  # all None: pandas' object column, written as text
        "fixed": np.array(["a", "bc", "", "d"]),  # numpy's own text dtype
        "interval_start_at": np.array(["2025-03-03T00:15", "NaT", "2025-03-04", "2025-03-04T23:45"],
                                      dtype="datetime64[us]"),
        "interval_s": np.array([900.0, np.nan, 899.5, -0.0]),
        "period": np.array([1, 2, 3, 4], dtype=np.int64),
        "small": np.array([1, 2, 250, 0], dtype=np.uint8),
        "is_report_class": np.array([True, False, False, True]),
        "subtype": [1, None, 3, 0],  # pandas' nullable Int64
    }


def _frame(cols: dict) -> pd.DataFrame:
    df = pd.DataFrame(cols)
    df["subtype"] = df["subtype"].astype("Int64")
    return df


def test_arrow_table_is_what_pandas_conversion_gives():
    cols = _columns()
    plain, framed = arrow_table(cols), _arrow(_frame(cols))
    assert plain.schema.equals(framed.schema, check_metadata=True)
    assert plain.equals(framed)
    # later chunks are converted to the first chunk's schema, as from_pandas(schema=...) does
    later = {k: v[1:] for k, v in cols.items()}
    assert arrow_table(later, framed.schema).equals(_arrow(_frame(later), framed.schema))


def test_table_writer_writes_the_same_bytes_from_columns_as_from_a_frame(tmp_path):
    cols = {k: v for k, v in _columns().items() if k not in ("nothing",)}
    for name, table in (("from_frame", _frame(cols)), ("from_columns", cols)):
        w = TableWriter(tmp_path / name, "t")
        w.write(table)
        w.close("0" * 64)
    a, b = table_files(tmp_path / "from_frame" / "t"), table_files(tmp_path / "from_columns" / "t")
    assert [f.relative_to(tmp_path / "from_frame") for f in a] == [f.relative_to(tmp_path / "from_columns")
                                                                    for f in b]
    assert len(a) == 4  # three system-days and Hive's default partition (no system id)
    assert [f.read_bytes() for f in a] == [f.read_bytes() for f in b]


def _mix_dump(path: Path) -> None:
    part = synth.Partition("LPAR1", 1, [synth.LogicalCPU("CP", 900, 300), synth.LogicalCPU("IIP", 900, 200)])
    recs = []
    for i in range(6):
        t0 = dt.datetime(2025, 3, 31, 23) + dt.timedelta(minutes=15 * i)  # into April: two partitions
        recs.append(synth.record_70_1("SYSA", "PLEX1", t0, 900.0, [part], 1))
        for c in range(3):
            p = [synth.Period(period=1, ended=100 + c, resp_ms=5.0, tcb_s=10.0 + c, srb_s=0.5, ziip_s=4.0)]
            recs.append(synth.record_72_3("SYSA", "PLEX1", t0, 900.0, f"SC{c}", "WKL1", p))
            recs.append(synth.record_30("SYSA", "PLEX1", t0, 900.0, synth.AddressSpace(f"JOB{c}", 1.0 + c + i)))
    path.write_bytes(synth.frame_rdw(recs))


def test_ingest_files_are_the_frames_files_byte_for_byte(tmp_path):
    dump = tmp_path / "mix.smf"
    _mix_dump(dump)
    ingest_paths([dump], tmp_path / "ingested", workers=1)
    decoded = decode_file(dump)
    sha = hashlib.sha256(dump.read_bytes()).hexdigest()
    for table in ("smf70_cpu", "smf72_workload", "smf30_interval"):
        w = TableWriter(tmp_path / "frames", table)
        w.write(decoded[table])
        w.close(sha)
        got = table_files(tmp_path / "ingested" / table)
        want = table_files(tmp_path / "frames" / table)
        assert len(got) == 2
        assert [f.read_bytes() for f in got] == [f.read_bytes() for f in want], table


def test_finalize_columns_is_finalize_to_the_last_bit():
    rng = np.random.default_rng(14)
    rows = []
    for i in range(40):
        g = (i * 7) % 10  # ten groups of four rows, interleaved: four broken records of one interval
        start = dt.datetime(2025, 3, 3) + dt.timedelta(minutes=15 * (g // 2))
        rows.append({"system_id": "SYS" + "BA"[g % 2], "sysplex": "PLEX1", "interval_start_at": start,
                     "interval_s": 900.0, "cpu_type": ["IIP", "CP"][g % 2],
                     **{c: float(rng.uniform(0, 1e9)) / 3.0 for c in type70._PART_SUMS}})
    rows[5]["n_lp"] = 0.0
    rows[5]["online_us"] = 0.0  # no PR/SM view: n_online from the CPU data sections, no LPAR busy
    want = type70.finalize(pd.DataFrame(rows))
    got = type70.finalize_columns({c: [r[c] for r in rows] for c in rows[0]})
    pd.testing.assert_frame_equal(pd.DataFrame(got), want, check_exact=True)
    assert (want["n_records"] == 4).all()
    empty = type70.finalize_columns({c: [] for c in rows[0]})
    assert list(empty) == list(type70.COLUMNS) and all(len(v) == 0 for v in empty.values())


def test_format_counts_prints_as_pandas_does():
    for rows in ([(30, 2, 69120, True)], [(6, None, 3, False), (70, 1, 1, True), (123456, 12345678, 1, True)]):
        frame = pd.DataFrame(rows, columns=["record_type", "subtype", "records", "decoded"])
        frame["subtype"] = frame["subtype"].astype("Int64")
        assert format_counts(rows) == frame.to_string(index=False)


def test_kneecap_ingest_of_an_smf_dump_does_not_import_pandas(tmp_path):
    dump = tmp_path / "mix.smf"
    _mix_dump(dump)
    script = textwrap.dedent(f"""
        import sys
        from kneecap.cli import main
        status = main(["-q", "ingest", {str(dump)!r}, "--out", {str(tmp_path / "out")!r}])
        print("pandas imported" if "pandas" in sys.modules else "no pandas", status)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "no pandas 0"
    assert "records by type/subtype:" in done.stdout
    assert len(table_files(tmp_path / "out" / "smf72_workload")) == 2
