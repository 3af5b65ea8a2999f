"""The stg_rmf_* staging models run on the reader's output and line up with the SMF models."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

from kneecap.rmf import read_postprocessor
from tests.rmf.test_postprocessor_wlmgl import SYNTHETIC_WLMGL

REPO = Path(__file__).resolve().parents[2]
STAGING = REPO / "pipelines" / "sql" / "staging"
SMALL = REPO / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-small-RPRT-20220412.xml"


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    cpu = read_postprocessor(SMALL)
    path = tmp_path_factory.mktemp("wlmgl") / "synthetic-wlmgl.xml"
    path.write_text(SYNTHETIC_WLMGL, encoding="utf-8")
    wl = read_postprocessor(path).workload
    c = duckdb.connect()
    c.register("rmf_cpu", cpu.cpu)
    c.register("rmf_partition", cpu.partition)
    c.register("rmf_workload", wl)
    for name in ("stg_rmf_cpu", "stg_rmf_partition", "stg_rmf_workload"):
        c.execute(f"create view {name} as " + (STAGING / f"{name}.sql").read_text())
    return c


def _columns(con, sql: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in con.execute(f"describe {sql}").fetchall()]


def test_rmf_cpu_has_the_smf70_staging_columns_and_types(con):
    smf = (STAGING / "stg_smf70_cpu.sql")
    if not smf.exists():
        pytest.skip("stg_smf70_cpu.sql not written yet")
    con.execute("create or replace temp table smf70_cpu as select * from stg_rmf_cpu limit 0")
    con.execute("create or replace view s70 as " + smf.read_text())
    assert _columns(con, "stg_rmf_cpu") == _columns(con, "s70")
    # small file: one CP row, TOTAL/AVERAGE LPAR BUSY 0.89, MVS BUSY 0.88 (XML row refno 3)
    row = con.execute("select cpu_type, n_online, lpar_busy_pct, mvs_busy_pct "
                      "from stg_rmf_cpu").fetchall()
    assert row[0][:2] == ("CP", 2)
    np.testing.assert_allclose(row[0][2:], [0.89, 0.88], atol=1e-12)


def test_rmf_workload_has_the_smf72_staging_columns(con):
    smf = STAGING / "stg_smf72_workload.sql"
    if not smf.exists():
        pytest.skip("stg_smf72_workload.sql not written yet")
    names = [c for c, _ in _columns(con, "stg_rmf_workload")]
    text = smf.read_text()
    expected = [line.split(" as ")[-1].strip().rstrip(",")
                for line in text.splitlines() if " as " in line and "cast(" in line]
    assert names == expected
    n, nulls = con.execute("select count(*), count(cpu_using_samples) "
                           "from stg_rmf_workload").fetchone()
    assert (n, nulls) == (3, 0)  # three classes with data; samples are not in the report


def test_rmf_partition_rows(con):
    # 14 non-TOTAL rows in the small file's Partition Data table (ZEBRA JSON agrees)
    n, own = con.execute("select count(*), count(*) filter (where is_own_partition) "
                         "from stg_rmf_partition").fetchone()
    assert (n, own) == (14, 1)
