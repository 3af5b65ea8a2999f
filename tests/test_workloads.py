"""Communications Server workload names, the report's cost-per-transaction computation, and the
CRR-vs-RR connection-setup cost; checked against the numbers seed 002 prints."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kneecap import workloads
from kneecap.workloads import WorkloadName, WorkloadNameError, parse_workload_name

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"


def _printed(number_id: str) -> float:
    numbers = pd.read_csv(REFERENCE / "seed002_numbers.csv", dtype={"value": float})
    return float(numbers.set_index("number_id").loc[number_id, "value"])


# --- the worked example (seed 002, "CPU Cost/Tran & Transaction [Trans/sec]") -------------------


def test_the_reports_worked_example_gives_10_us_per_transaction():
    util, n_cp = _printed("cost_example_lpar_util_pct"), _printed("cost_example_n_cp")
    interval_s, transactions = _printed("cost_example_interval_s"), _printed("cost_example_transactions")
    # "25% across 4 CPs [...] 100% of 1 CP [...] consumes 10 seconds of CPU"
    assert util / 100 * n_cp == _printed("cost_example_busy_cp")
    assert workloads.lpar_cpu_seconds(util, int(n_cp), interval_s) == pytest.approx(_printed("cost_example_cpu_s"),
                                                                                    rel=1e-12)
    cost_ms = workloads.cpu_ms_per_tran_from_lpar(util, int(n_cp), interval_s, transactions)
    # "10 CPU Seconds / 1,000,000 Trans (or 10 us/tran)"
    np.testing.assert_allclose(cost_ms * 1000.0, _printed("cost_example_cpu_us_per_tran"), rtol=1e-12)
    # the same number by seed 000's formula cpu_s / interval_s / tps * 1000 at the printed rate
    tps = _printed("cost_example_tps")
    assert transactions / interval_s == tps
    np.testing.assert_allclose(cost_ms, _printed("cost_example_cpu_s") / interval_s / tps * 1000.0, rtol=1e-12)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"lpar_util_pct": 125.0}, "lpar_util_pct 125.0 must be between 0 and 100"),
    ({"lpar_util_pct": float("nan")}, "lpar_util_pct nan"),
    ({"n_cp": 0}, "n_cp 0 must be a whole number of CPs"),
    ({"n_cp": 2.5}, "n_cp 2.5"),
    ({"interval_s": 0.0}, "interval_s 0.0 must be a positive"),
    ({"transactions": 0}, "transactions 0 must be positive"),
])
def test_cost_inputs_out_of_range_are_named(kwargs, match):
    args = {"lpar_util_pct": 25.0, "n_cp": 4, "interval_s": 10.0, "transactions": 1e6, **kwargs}
    with pytest.raises(ValueError, match=re.escape(match)):
        workloads.cpu_ms_per_tran_from_lpar(**args)


# --- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "expected"), [
    ("RR40(100B/100B)", WorkloadName("RR", 40, 100, 100)),
    ("CRR9(200B/200B)", WorkloadName("CRR", 9, 200, 200)),
    ("CRR30(200B/200B)", WorkloadName("CRR", 30, 200, 200)),
    ("STR3(1B/20MB)", WorkloadName("STR", 3, 1, 20 * 1024**2)),
    ("STR3(1GB/1B)", WorkloadName("STR", 3, 1024**3, 1)),
    ("CRR40(64B/8kB)", WorkloadName("CRR", 40, 64, 8192)),
    ("[RR][10](1B/100B)", WorkloadName("RR", 10, 1, 100)),  # the naming section's own spelling
    ("  RR 60 ( 4kB / 4kB ) ", WorkloadName("RR", 60, 4096, 4096)),
])
def test_names_parse_into_pattern_clients_and_bytes(name, expected):
    assert parse_workload_name(name) == expected


def test_every_name_seed_002_prints_parses_and_round_trips():
    table = pd.read_csv(REFERENCE / "seed002_workloads.csv", dtype=str, keep_default_na=False)
    assert len(table) == 43 and table["point_id"].is_unique
    parsed = workloads.workload_columns(table["workload"])
    assert list(parsed.columns) == list(workloads.WORKLOAD_COLUMNS)
    assert set(parsed["pattern"]) == {"RR", "CRR", "STR"}
    for name, row in zip(table["workload"], parsed.itertuples(index=False)):
        canonical = workloads.format_workload_name(parse_workload_name(name))
        assert canonical == name.replace("[", "").replace("]", ""), name
        assert row.connect_per_tran == (row.pattern == "CRR")
    # the zERT run's Figure 19 caption: two client instances with 15 connections each = CRR30's 30 clients
    zert = table[table["section"].str.contains("zERT")]
    assert parse_workload_name(zert["workload"].item()).clients == (
        _printed("zert_client_instances") * _printed("zert_connections_per_instance"))


@pytest.mark.parametrize(("name", "match"), [
    ("RQ40(100B/100B)", "pattern 'RQ' is not one of RR, CRR, STR"),
    ("rr40(100B/100B)", "pattern 'rr' is not one of RR, CRR, STR (upper case)"),
    ("CRR(200B/200B)", "clients missing"),
    ("RR0(1B/1B)", "clients 0 must be at least 1"),
    ("RR4x(1B/1B)", "clients '4x' is not a whole number"),
    ("RR40(100/100B)", "request size '100' is not a whole number followed by a unit"),
    ("RR40(100B/1.5kB)", "response size '1.5kB' is not a whole number"),
    ("RR40(100B/100KiB)", "response size '100KiB' has unit 'KiB'"),
    ("RR40(100B/100mb)", "response size '100mb' has unit 'mb'"),
    ("RR40 100B/100B", "is not <pattern><clients>(<request>/<response>)"),
    ("RR40(100B)", "is not <pattern><clients>(<request>/<response>)"),
    ("", "is not <pattern><clients>"),
])
def test_malformed_names_say_which_field_is_wrong(name, match):
    with pytest.raises(WorkloadNameError, match=re.escape(match)):
        parse_workload_name(name)


def test_a_name_that_is_not_text_is_refused():
    with pytest.raises(WorkloadNameError, match="must be text, got int 40"):
        parse_workload_name(40)  # type: ignore[arg-type]


def test_a_bad_name_in_a_column_names_its_row():
    with pytest.raises(WorkloadNameError, match=re.escape("row 2: cs_workload: workload name 'RR(1B/1B)'")):
        workloads.workload_columns(["RR1(1B/1B)", "RR(1B/1B)"], column="cs_workload")


_sizes = st.integers(min_value=0, max_value=4 * 1024**3)
_names = st.builds(WorkloadName, st.sampled_from(sorted(workloads.PATTERNS)),
                   st.integers(min_value=1, max_value=100_000), _sizes, _sizes)


@settings(max_examples=300, deadline=None)
@given(_names)
def test_format_then_parse_is_the_identity(w):
    assert parse_workload_name(workloads.format_workload_name(w)) == w


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(workloads.PATTERNS)), st.integers(1, 10_000),
       st.integers(0, 9999), st.sampled_from(sorted(workloads.UNIT_BYTES)),
       st.integers(0, 9999), st.sampled_from(sorted(workloads.UNIT_BYTES)),
       st.booleans(), st.text(alphabet=" \t", max_size=2))
def test_any_well_formed_name_parses_to_its_parts(pattern, clients, req, req_unit, resp, resp_unit, brackets, pad):
    name = (f"[{pattern}][{clients}]" if brackets else f"{pattern}{clients}") + \
        f"({pad}{req}{req_unit}{pad}/{pad}{resp}{resp_unit}{pad})"
    w = parse_workload_name(f"{pad}{name}{pad}")
    assert (w.pattern, w.clients) == (pattern, clients)
    assert w.req_bytes == req * workloads.UNIT_BYTES[req_unit]
    assert w.resp_bytes == resp * workloads.UNIT_BYTES[resp_unit]
    # the canonical spelling is a fixed point
    canonical = workloads.format_workload_name(w)
    assert workloads.format_workload_name(parse_workload_name(canonical)) == canonical


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=30))
def test_arbitrary_text_parses_or_raises_a_workload_name_error(text):
    try:
        w = parse_workload_name(text)
    except WorkloadNameError as exc:
        assert repr(text.strip()) in str(exc) or repr(text) in str(exc)
    else:
        assert w.pattern in workloads.PATTERNS and w.clients >= 1
        assert min(w.req_bytes, w.resp_bytes) >= 0


# --- CRR vs RR connection setup ---------------------------------------------------------------


def test_connection_setup_is_crr_minus_rr_at_the_same_sizes():
    # hand-made costs (CPU ms per transaction); two interfaces, so `by` keeps them apart
    table = pd.DataFrame({
        "workload": ["RR60(4kB/4kB)", "CRR40(4kB/4kB)", "RR60(4kB/4kB)", "CRR40(4kB/4kB)", "CRR40(64B/8kB)",
                     "STR3(1B/20MB)"],
        "interface": ["osa", "osa", "hipersockets", "hipersockets", "osa", "osa"],
        "cpu_ms_per_tran": [0.010, 0.025, 0.008, 0.020, 0.030, 2.0],
    })
    pairs = workloads.connection_setup(table, by=["interface"]).set_index("interface")
    assert set(pairs.index) == {"osa", "hipersockets"}  # CRR40(64B/8kB) has no RR partner, STR is ignored
    np.testing.assert_allclose(pairs.loc["osa", "setup_cost"], 0.015, rtol=1e-12)
    np.testing.assert_allclose(pairs.loc["osa", "crr_to_rr"], 2.5, rtol=1e-12)
    np.testing.assert_allclose(pairs.loc["hipersockets", "setup_cost"], 0.012, rtol=1e-12)
    assert pairs.loc["osa", "rr_workload"] == "RR60(4kB/4kB)"


def test_seed_002_runs_rr_and_crr_only_at_different_sizes():
    # the catalogue marks the CRR-vs-RR factor missing: even with costs, no RR/CRR pair shares sizes
    table = pd.read_csv(REFERENCE / "seed002_workloads.csv", dtype=str, keep_default_na=False)
    table["cpu_ms_per_tran"] = 1.0  # placeholder: seed 002 prints no cost for any of them
    with pytest.raises(ValueError, match=r"no CRR row has an RR row with the same request/response sizes "
                                         r"and environment \(RR: .*RR60\(4kB/4kB\).*; CRR: .*CRR40\(64B/8kB\)"):
        workloads.connection_setup(table, by=["environment"])
    with pytest.raises(ValueError, match="no CRR row has an RR row"):
        workloads.connection_setup(table)


def test_connection_setup_names_missing_columns():
    with pytest.raises(ValueError, match="no column\\(s\\) cpu_ms_per_tran"):
        workloads.connection_setup(pd.DataFrame({"workload": ["RR1(1B/1B)"]}))
