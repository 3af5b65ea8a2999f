"""The factor catalogue: every row cited and as printed, the arithmetic of applying a factor, and
a forecast with factors against the model refitted by hand with the adjusted demand."""

from __future__ import annotations

import csv
import dataclasses
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kneecap import factors, forecasting, warehouse
from kneecap.factors import FactorError
from kneecap.modeling import ClosedMVAModel, PlannerPolicy
from tests.bundled import read_bundled

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "data" / "reference"
SEEDS = REPO.parent / "shared" / "seeds"
CATALOGUE = factors.read_catalogue(REFERENCE / "factors.csv")


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _seed_text(name: str) -> str:
    return _squash((SEEDS / name).read_text(encoding="utf-8"))


def _raw_rows(name: str) -> list[dict[str, str]]:
    with (REFERENCE / name).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# --- the catalogue as data ---------------------------------------------------------------------


def test_catalogue_has_the_exact_header_and_seed_000_001_002_entries():
    with (REFERENCE / "factors.csv").open(newline="", encoding="utf-8") as fh:
        assert tuple(next(csv.reader(fh))) == factors.CATALOGUE_COLUMNS
    seeds = {f.source_file[:3] for f in CATALOGUE.values()}
    assert {"000", "001", "002"} <= seeds
    applicable = [f.factor_id for f in CATALOGUE.values() if f.applicable]
    assert {"smc_rv2_vs_tcpip_str_server", "ltpa_token_mq_rest", "comm_stub_8k"} <= set(applicable)


@pytest.mark.skipif(not SEEDS.exists(), reason="seed documents not beside the repo")
@pytest.mark.parametrize("name", ["factors.csv", "seed002_numbers.csv"])
def test_every_quote_is_in_its_seed_and_every_printed_value_in_its_quote(name):
    for row in _raw_rows(name):
        key = row.get("factor_id") or row["number_id"]
        if row["status"] == "missing" and not row["quote"]:
            assert row["value"] == "", key
            continue
        seed = _seed_text(row["source_file"])
        quote = _squash(row["quote"])
        if " / " in quote:  # a text table quoted row by row: each row's cells appear in the seed
            for part in quote.split(" / "):
                cells = [c for c in re.split(r"[|\s]+", part) if c]
                assert re.search(r"\W*".join(map(re.escape, cells)), seed), (key, part)
        else:
            assert quote in seed, key
        if row["status"] == "printed":
            value = row["value"].lstrip("-")
            # numbers the text spells out or groups
            words = {"2": ("double", "Two"), "1000000": ("1,000,000",), "100000": ("100,000",), "1": ("1 CP",)}
            assert value in quote or any(w in quote for w in words.get(value, ())), (key, value)
            if row.get("base_value"):
                assert row["base_value"] in quote, key
        else:
            assert row["value"] == "" and row.get("base_value", "") == "", key


def test_factors_repeat_the_measurement_tables_they_share_numbers_with():
    measurements, _ = read_bundled()
    by_point = measurements.set_index(["source_id", "point_id"])
    stub = measurements[measurements["source_id"] == "seed000_comm_stub"]
    for k, size in (("1k", 1024), ("4k", 4096), ("8k", 8192)):
        f = CATALOGUE[f"comm_stub_{k}"]
        at = stub[stub["resp_bytes"] == size].set_index("config")["cpu_ms_per_tran"]
        assert set(at.index) == {"with_stub", "without_stub"}
        assert (f.value, f.base_value) == (at["with_stub"], at["without_stub"])
    rest = measurements[measurements["source_id"] == "seed001_console_vs_rest"]
    for q in (1000, 2000, 3000):
        f = CATALOGUE[f"rest_filtered_{q}q"]
        at = rest[rest["n_queues"] == q].set_index("config")["cpu_ms_per_tran"]
        assert f.value in set(at) and f.base_value in set(at) and f.base_value == at.max()
    socket = by_point.loc["seed003_transports"]
    assert CATALOGUE["legstar_socket_unpooled_ts23"].value == socket.loc["socket_unpooled_ts23", "tps"]
    assert CATALOGUE["legstar_socket_unpooled_ts23"].base_value == socket.loc["socket_pooled_ts23", "tps"]
    assert CATALOGUE["legstar_socket_unpooled_ts31"].base_value == socket.loc["socket_pooled_ts31", "tps"]


def test_seed_002_charts_are_marked_missing_not_read():
    numbers = pd.read_csv(REFERENCE / "seed002_numbers.csv", dtype=str, keep_default_na=False)
    missing = numbers[numbers["status"] == "missing"]
    assert (missing["value"] == "").all() and missing["locator"].str.contains("Figure").all()
    assert set(numbers["status"]) == {"printed", "missing"}
    assert CATALOGUE["smc_rv2_vs_tcpip_rr"].status == "missing"
    assert CATALOGUE["crr_vs_rr_connection_setup"].value is None


def test_the_warehouse_skips_the_catalogues():
    assert {"factors.csv", "seed002_workloads.csv", "seed002_numbers.csv"} <= warehouse.REFERENCE_OTHER_FILES
    measurements, sources = read_bundled()
    assert not set(measurements["source_id"]) & {"factors", "seed002_workloads", "seed002_numbers"}


def test_a_broken_catalogue_lists_every_problem_with_its_line(tmp_path):
    rows = _raw_rows("factors.csv")
    rows[0]["effect"] = "latency"
    rows[1]["quote"] = ""
    rows[2]["value"] = "12"  # a 'missing' factor with a value
    rows[5]["value"] = "about 0.2"
    rows.append(dict(rows[3]))  # a repeated id
    path = tmp_path / "factors.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=factors.CATALOGUE_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(FactorError) as info:
        factors.read_catalogue(path)
    message = str(info.value)
    assert f"{path}:2: effect: 'latency' is not one of" in message
    assert f"{path}:3: quote: empty (every row cites its source)" in message
    assert f"{path}:4: value: a 'missing' factor has no value" in message
    assert f"{path}:7: value: 'about 0.2' is not a number" in message
    assert f"{path}:{len(rows) + 1}: factor_id: 'tls13_rsassa_pss_v2r5_long_handshake' repeats" in message


def test_a_wrong_header_is_refused(tmp_path):
    path = tmp_path / "factors.csv"
    path.write_text("factor,value\nx,1\n", encoding="utf-8")
    with pytest.raises(FactorError, match=r":1: \(header\): expected exactly factor_id"):
        factors.read_catalogue(path)


# --- applying factors -------------------------------------------------------------------------


def test_multipliers_and_added_costs_follow_the_printed_numbers():
    np.testing.assert_allclose(factors.multiplier(CATALOGUE["smc_rv2_vs_tcpip_str_server"]), 0.49, rtol=1e-12)
    np.testing.assert_allclose(factors.multiplier(CATALOGUE["smc_rv2_vs_tcpip_str_client"]), 0.15, rtol=1e-12)
    np.testing.assert_allclose(factors.multiplier(CATALOGUE["rest_filtered_1000q"]), 93 / 195, rtol=1e-12)
    assert factors.multiplier(CATALOGUE["basic_auth_queue_update"]) == 2.0
    np.testing.assert_allclose(factors.added_ms(CATALOGUE["comm_stub_8k"]), 0.228 - 0.077, rtol=1e-12)
    assert factors.added_ms(CATALOGUE["ltpa_token_mq_rest"]) == -14.0


@pytest.mark.parametrize(("factor_id", "match"), [
    ("smc_rv2_vs_tcpip_rr", "has no printed value (Figure 17 (chart)): nothing is read off charts"),
    ("crr_vs_rr_connection_setup", "has no printed value"),
    ("tls13_rsassa_pss_v2r5_long_handshake", "changes unspecified, not CPU cost"),
    ("rest_filtered_roundtrip_1000q", "changes response, not CPU cost"),
    ("legstar_socket_unpooled_ts23", "changes throughput, not CPU cost"),
])
def test_factors_without_a_cpu_cost_value_are_refused_with_the_reason(factor_id, match):
    assert not CATALOGUE[factor_id].applicable
    with pytest.raises(FactorError, match=re.escape(match)):
        factors.adjust_demand(1.0, 0.5, [factor_id], CATALOGUE)


def test_a_gcp_factor_moves_only_non_eligible_work():
    # D = 1 ms, 90 % eligible; SMC-Rv2 server (-51 %) on a tenth of the cost (hand computation)
    adj = factors.adjust_demand(1.0, 0.9, [{"id": "smc_rv2_vs_tcpip_str_server", "share": 0.1}], CATALOGUE)
    np.testing.assert_allclose(adj.adjusted_demand_ms, 1.0 - 0.1 * 0.51, rtol=1e-12)
    np.testing.assert_allclose(adj.adjusted_eligible_fraction, 0.9 / 0.949, rtol=1e-12)
    assert adj.applied[0].citation.startswith("002_be0684e436341215.txt, V2R5: New Function > SMCv2")
    # an unstated-engine factor keeps the eligible share: the 8K stub adds 0.151 ms
    stub = factors.adjust_demand(1.0, 0.9, ["comm_stub_8k"], CATALOGUE)
    np.testing.assert_allclose(stub.adjusted_demand_ms, 1.151, rtol=1e-12)
    assert stub.adjusted_eligible_fraction == 0.9


def test_factors_compose_in_order():
    # filtering (x 93/195) then LTPA (-14 ms) on a 200 ms call, vs the other order
    a = factors.adjust_demand(200.0, 0.0, ["rest_filtered_1000q", "ltpa_token_mq_rest"], CATALOGUE)
    b = factors.adjust_demand(200.0, 0.0, ["ltpa_token_mq_rest", "rest_filtered_1000q"], CATALOGUE)
    np.testing.assert_allclose(a.adjusted_demand_ms, 200 * 93 / 195 - 14, rtol=1e-12)
    np.testing.assert_allclose(b.adjusted_demand_ms, (200 - 14) * 93 / 195, rtol=1e-12)
    assert "ltpa_token_mq_rest (share 1): -14 ms" in a.describe()


@pytest.mark.parametrize(("demand", "fraction", "selection", "match"), [
    (1.0, 0.5, ["ltpa_token_mq_rest"], "1 ms would become -13 ms, not a cost"),
    (1.0, 0.95, ["smc_rv2_vs_tcpip_str_server"], "removes 0.51 ms of general-CP work but the workload has 0.05 ms"),
    (1.0, 0.5, ["no_such_factor"], "unknown factor 'no_such_factor'"),
    (1.0, 0.5, [{"id": "comm_stub_1k", "share": 1.5}], "share 1.5 must be between 0 and 1"),
    (1.0, 0.5, [{"id": "comm_stub_1k", "shares": 1}], "expected a factor id or {id, share}"),
    (1.0, 0.5, [{"id": "comm_stub_1k", "share": "most"}], "share 'most' is not a number"),
    (0.0, 0.5, ["comm_stub_1k"], "demand_ms 0.0 must be a positive"),
])
def test_impossible_adjustments_are_refused(demand, fraction, selection, match):
    with pytest.raises(FactorError, match=re.escape(match)):
        factors.adjust_demand(demand, fraction, selection, CATALOGUE)


_multiply = sorted(f.factor_id for f in CATALOGUE.values() if f.applicable and f.apply_as == "multiply")


@settings(max_examples=200, deadline=None)
@given(st.floats(0.01, 100.0), st.floats(0.0, 0.99, allow_subnormal=False), st.sampled_from(_multiply),
       st.floats(0.0, 1.0))
def test_a_multiplying_factor_scales_its_share_and_keeps_eligible_work_on_gcp_factors(d, f, factor_id, share):
    factor = CATALOGUE[factor_id]
    try:
        adj = factors.adjust_demand(d, f, [{"id": factor_id, "share": share}], CATALOGUE)
    except FactorError as exc:  # only a GCP-only saving larger than the GCP-only work may refuse
        assert factor.cpu_on == "gcp" and "general-CP work" in str(exc)
        assert share * d * (1 - factors.multiplier(factor)) > d * (1 - f)
        return
    np.testing.assert_allclose(adj.adjusted_demand_ms, d * (1 + share * (factors.multiplier(factor) - 1)),
                               rtol=1e-12)
    if factor.cpu_on == "gcp":
        # atol: eligible work near the smallest double (1e-308 ms) has no relative precision left
        np.testing.assert_allclose(adj.adjusted_eligible_fraction * adj.adjusted_demand_ms, f * d, rtol=1e-9,
                                   atol=1e-300)
    else:
        assert adj.adjusted_eligible_fraction == f


# --- a forecast with factors ------------------------------------------------------------------


@pytest.fixture(scope="module")
def seed004_models():
    measurements, sources = read_bundled()
    fct = warehouse.build_marts(measurements, sources, sql_root=REPO / "pipelines" / "sql")["fct_measurements"]
    results = ClosedMVAModel(n_boot=8, seed=1).fit(fct[fct["source_id"] == "seed004_table1"])
    return forecasting.WorkloadModels("zosconnect_cics_diag", results, None)


POLICY = PlannerPolicy(max_ziip_busy_pct=80.0, max_spill_pct=10.0, max_n_ziip=8, knee_k=3.0)
SCENARIO = {"workload": "zosconnect_cics_diag", "name": "peak", "clients": 500, "think_time_ms": 200, "n_gcp": 2,
            "n_ziip": 2, "slo_resp_ms": 2.0}


def test_forecast_with_a_factor_matches_the_model_with_the_adjusted_demand(seed004_models):
    res = seed004_models.response
    selection = [{"id": "smc_rv2_vs_tcpip_str_server", "share": 0.05}]
    row = forecasting.forecast_scenario(seed004_models, {**SCENARIO, "factors": selection}, POLICY, CATALOGUE)
    # unadjusted answers are the plain forecast's
    plain = forecasting.forecast_scenario(seed004_models, SCENARIO, POLICY)
    for col in ("resp_ms", "knee_clients", "recommended_n_ziip", "demand_ms_per_tran"):
        assert row[col] == plain[col]
    # adjusted answers: the same fit with D' and f' put in by hand (dataclasses.replace, not to_dict)
    adj = factors.adjust_demand(res.cpu_ms_per_tran, res.ziip_eligible_fraction, selection, CATALOGUE)
    boot = res.boot_params.copy()
    boot[:, 1] *= adj.adjusted_demand_ms / res.cpu_ms_per_tran
    by_hand = dataclasses.replace(res, cpu_ms_per_tran=adj.adjusted_demand_ms, boot_params=boot,
                                  ziip_eligible_fraction=adj.adjusted_eligible_fraction, _cache={})
    expected = forecasting.forecast_scenario(forecasting.WorkloadModels("zosconnect_cics_diag", by_hand), SCENARIO,
                                             POLICY)
    for col in ("resp_ms", "resp_ms_lo", "resp_ms_hi", "knee_clients", "saturation_clients", "recommended_n_ziip",
                "ziip_eligible_on_gcp_share_pct"):
        np.testing.assert_allclose(row[f"{col}_adjusted"], expected[col], rtol=1e-9, err_msg=col)
    np.testing.assert_allclose(row["demand_ms_per_tran_adjusted"], res.cpu_ms_per_tran * (1 - 0.05 * 0.51),
                               rtol=1e-12)
    assert row["factors"] == "smc_rv2_vs_tcpip_str_server"
    assert "client\u2019s CPU cost reduction of ~ 85% and server\u2019s CPU cost reduction of ~ 51%" in \
        row["factor_citations"]


def test_more_cpu_per_transaction_never_brings_more_headroom(seed004_models):
    row = forecasting.forecast_scenario(seed004_models, {**SCENARIO, "factors": ["comm_stub_8k"]}, POLICY, CATALOGUE)
    assert row["demand_ms_per_tran_adjusted"] > row["demand_ms_per_tran"]
    assert row["resp_ms_adjusted"] > row["resp_ms"]
    assert row["saturation_clients_adjusted"] < row["saturation_clients"]
    assert row["max_tps_adjusted"] < row["max_tps"]
    assert row["recommended_n_ziip_adjusted"] >= row["recommended_n_ziip"]


def test_a_zero_share_changes_nothing(seed004_models):
    row = forecasting.forecast_scenario(
        seed004_models, {**SCENARIO, "factors": [{"id": "comm_stub_8k", "share": 0}]}, POLICY, CATALOGUE)
    for col in ("resp_ms", "knee_clients", "recommended_n_ziip", "demand_ms_per_tran"):
        assert row[f"{col}_adjusted"] == row[col]


def test_scenarios_with_bad_factors_or_names_fail_alone(seed004_models):
    scenarios = [
        {**SCENARIO, "name": "ok", "factors": ["comm_stub_1k"]},
        {**SCENARIO, "name": "chart", "factors": ["smc_rv2_vs_tcpip_rr"]},
        {**SCENARIO, "name": "no_catalogue_entry", "factors": ["smc_rv3"]},
        {**SCENARIO, "name": "name", "clients": None, "cs_workload": "CRR30(200B/200B)"},
        {**SCENARIO, "name": "clash", "cs_workload": "CRR30(200B/200B)"},
        {**SCENARIO, "name": "malformed", "clients": None, "cs_workload": "CRR30(200B/200Q)"},
    ]
    table = forecasting.forecast_scenarios(scenarios, lambda w: seed004_models, POLICY, CATALOGUE).set_index("scenario")
    assert table["error"].isna().tolist() == [True, False, False, True, False, False]
    assert "nothing is read off charts" in table.loc["chart", "error"]
    assert "unknown factor 'smc_rv3'" in table.loc["no_catalogue_entry", "error"]
    named = table.loc["name"]
    assert (named["clients"], named["pattern"], named["connect_per_tran"]) == (30, "CRR", True)
    assert "says clients = 30 but the scenario gives clients = 500" in table.loc["clash", "error"]
    assert "response size '200Q' has unit 'Q'" in table.loc["malformed", "error"]
    without = forecasting.forecast_scenarios([{**SCENARIO, "factors": ["comm_stub_1k"]}], lambda w: seed004_models,
                                             POLICY)
    assert "no factor catalogue was given" in without.loc[0, "error"]
