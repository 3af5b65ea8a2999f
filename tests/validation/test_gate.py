"""The validation gate passes good marts and names table, row and rule for bad ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kneecap import schema
from kneecap.validation import ValidationConfig, add_check_columns, validate_tables
from kneecap.validation.checks import littles_law_rel_err


def _fct(rows: int = 4) -> pd.DataFrame:
    frame = pd.DataFrame({c: np.nan for c in schema.FCT_MEASUREMENTS_COLUMNS}, index=range(rows))
    frame = frame.astype({c: "object" for c in schema.KEY_COLUMNS + tuple(schema.FACTOR_COLUMNS)})
    frame["interval_start_at"] = pd.NaT
    frame["source_id"] = "s"
    frame["workload"] = "w"
    frame["point_id"] = [f"c{i}" for i in range(rows)]
    frame["clients"] = [100.0 * (i + 1) for i in range(rows)]
    frame["think_time_ms"] = 200.0
    frame["resp_ms"] = 1.0
    frame["tps"] = frame["clients"] / 0.201
    frame["n_gcp"] = 2.0
    frame["n_ziip"] = 2.0
    frame["cpu_gcp_pct"] = 50.0
    frame["cpu_ziip_pct"] = 150.0
    return frame


def test_littles_law_matches_the_seed_004_example() -> None:
    # seed 004 Table 1: 100 clients, ~500 TPS, 1.06 ms, Z = 200 ms -> 500 * 0.20106 = 100.53
    row = pd.DataFrame({"clients": [100.0], "tps": [500.0], "resp_ms": [1.06], "think_time_ms": [200.0]})
    np.testing.assert_allclose(littles_law_rel_err(row), [0.53 / 100], rtol=1e-9)


def test_good_table_passes() -> None:
    report = validate_tables({"fct_measurements": _fct()})
    assert report.success, [str(f) for f in report.failures]
    assert report.tables[0].n_expectations > 20


def test_broken_copy_fails_naming_row_and_rule() -> None:
    broken = _fct()
    broken.loc[2, "tps"] = -1.0
    broken.loc[3, "cpu_ziip_pct"] = 250.0  # 2 zIIPs cannot deliver more than 200 %
    broken.loc[1, "point_id"] = None
    report = validate_tables({"fct_measurements": broken})
    assert not report.success
    messages = [str(f) for f in report.failures]
    assert any("expect_column_values_to_be_between column tps" in m and "s/w/c2" in m for m in messages)
    assert any("check_cpu_ziip_pct_headroom" in m and "s/w/c3" in m for m in messages)
    assert any("expect_column_values_to_not_be_null column point_id" in m for m in messages)


def test_littles_law_tolerance_comes_from_config() -> None:
    frame = _fct()
    frame.loc[0, "tps"] = frame.loc[0, "tps"] * 1.08  # 8 % off
    assert not validate_tables({"fct_measurements": frame}, ValidationConfig(0.05)).success
    assert validate_tables({"fct_measurements": frame}, ValidationConfig(0.10)).success


def test_check_columns_skip_rows_without_engine_counts() -> None:
    frame = _fct(2)
    frame.loc[0, "n_ziip"] = np.nan
    checked = add_check_columns(frame)
    assert np.isnan(checked.loc[0, "check_cpu_ziip_pct_headroom"])
    assert checked.loc[1, "check_cpu_ziip_pct_headroom"] == pytest.approx(50.0)


def test_table_without_suite_is_an_error() -> None:
    with pytest.raises(KeyError, match="no validation suite"):
        validate_tables({"mystery": pd.DataFrame({"a": [1]})})
