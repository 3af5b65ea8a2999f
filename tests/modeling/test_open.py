"""Open M/M/c fits: many-server queues and loads past the fitted capacity (issue #12 item 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kneecap.modeling import results_from_dict
from kneecap.modeling.open import OpenMMcModel, server_counts
from kneecap.modeling.queueing import mmc_resp_ms, mmc_resp_ms_array

SERVERS, SERVICE_MS, DELAY_MS = 64, 100.0, 5.0
CAPACITY_TPS = 1000.0 * SERVERS / SERVICE_MS


def _flat_then_sharp(noise: float, seed: int = 4) -> pd.DataFrame:
    """M/M/64: flat to ~85 % of capacity, then a sharp rise (a CICS region's TCBs, a thread pool)."""
    rng = np.random.default_rng(seed)
    tps = np.linspace(0.05, 0.97, 24) * CAPACITY_TPS
    resp = (DELAY_MS + mmc_resp_ms_array(tps, SERVICE_MS, SERVERS)) * np.exp(rng.normal(0.0, noise, len(tps)))
    return pd.DataFrame({"tps": tps, "resp_ms": resp})


def test_vector_erlang_matches_the_scalar_one_and_saturates():
    tps = np.array([0.0, 10.0, 300.0, 639.0, 640.0, 700.0])
    vector = mmc_resp_ms_array(tps, SERVICE_MS, SERVERS)
    scalar = np.array([mmc_resp_ms(float(x), SERVICE_MS, SERVERS) for x in tps])
    np.testing.assert_allclose(vector[:4], scalar[:4], rtol=1e-12)
    assert np.isinf(vector[4:]).all() and np.isinf(scalar[4:]).all()


@pytest.mark.parametrize("servers", [1, 2, 7, 16, 17, 100, 400, 1024])
def test_closed_form_erlang_b_matches_the_recursion_up_to_a_thousand_servers(servers):
    # the array form takes Erlang B as a truncated Poisson ratio, the scalar one by recursion
    tps = np.linspace(0.0, 0.9999 * servers * 1000.0 / SERVICE_MS, 200)
    vector = mmc_resp_ms_array(tps, SERVICE_MS, servers)
    scalar = np.array([mmc_resp_ms(float(x), SERVICE_MS, servers) for x in tps])
    np.testing.assert_allclose(vector, scalar, rtol=1e-12)
    busy = tps > 0.5 * servers * 1000.0 / SERVICE_MS
    np.testing.assert_allclose(vector[busy] - SERVICE_MS, scalar[busy] - SERVICE_MS, rtol=1e-9)


def test_server_counts_cover_every_small_count_then_grow_geometrically():
    counts = server_counts(1024)
    assert counts[:16] == list(range(1, 17))
    assert counts[-1] == 1024 and all(b > a for a, b in zip(counts, counts[1:], strict=False))
    assert max(b / a for a, b in zip(counts[16:], counts[17:], strict=False)) <= 1.3
    assert server_counts(8) == list(range(1, 9))


def test_many_server_curve_is_predicted_past_the_trained_range():
    table = _flat_then_sharp(noise=0.005)
    train, test = table[table["tps"] <= 0.85 * CAPACITY_TPS], table[table["tps"] > 0.85 * CAPACITY_TPS]
    res = OpenMMcModel(n_boot=40, seed=1).fit(train)
    assert res.n_servers >= 32
    assert abs(res.max_tps / CAPACITY_TPS - 1.0) < 0.10
    pred = res.predict(test[["tps"]])
    assert not pred["saturated"].any()
    inside = (pred["resp_ms_lo"] <= test["resp_ms"].to_numpy()) & (test["resp_ms"].to_numpy() <= pred["resp_ms_hi"])
    assert inside.all()
    # the sharp rise at 97 % of capacity (143 ms against ~105 flat) is followed, not flattened
    assert pred["resp_ms"].iloc[-1] > 115.0
    # with servers capped at 16 (the model before), the band at 97 % missed the measured response
    capped = OpenMMcModel(n_boot=40, seed=1, max_servers=16).fit(train).predict(test[["tps"]])
    assert capped["resp_ms_hi"].iloc[-1] < test["resp_ms"].iloc[-1]


def test_loads_past_capacity_are_flagged_with_the_capacity_not_dropped():
    res = OpenMMcModel(n_boot=20, seed=1).fit(_flat_then_sharp(noise=0.005))
    pred = res.predict(pd.DataFrame({"tps": [0.5 * res.max_tps, 1.2 * res.max_tps]}))
    assert pred["saturated"].tolist() == [False, True]
    assert np.isfinite(pred["resp_ms"].iloc[0]) and np.isinf(pred["resp_ms"].iloc[1])
    assert (pred["capacity_tps_lo"] <= pred["capacity_tps"]).all()
    assert (pred["capacity_tps"] <= pred["capacity_tps_hi"]).all()
    np.testing.assert_allclose(pred["capacity_tps"], res.max_tps)


def test_a_forecast_past_capacity_says_saturated_with_the_capacity():
    from kneecap import forecasting
    from tests.test_factors import POLICY

    res = OpenMMcModel(n_boot=20, seed=1).fit(_flat_then_sharp(noise=0.005))
    models = forecasting.WorkloadModels("pool", response=res)
    inside = forecasting.forecast_scenario(models, {"workload": "pool", "tps": 0.5 * res.max_tps}, POLICY)
    past = forecasting.forecast_scenario(models, {"workload": "pool", "tps": 1.5 * res.max_tps}, POLICY)
    assert inside["saturated"] is False and np.isfinite(inside["resp_ms"])
    assert past["saturated"] is True
    assert past["capacity_tps"] == res.max_tps
    assert past["capacity_tps_lo"] <= past["capacity_tps"] <= past["capacity_tps_hi"]


def _doubling_curve(noise: float = 0.02, seed: int = 0) -> tuple[pd.DataFrame, float]:
    """0.7 ms unloaded, ``R = 0.7 / (1 - X / 410,000)``: trained to half the capacity, 1.4 ms there."""
    capacity = 410_000.0
    tps = np.linspace(0.05, 0.5, 10) * capacity
    resp = 0.7 / (1.0 - tps / capacity) * np.exp(np.random.default_rng(seed).normal(0.0, noise, len(tps)))
    return pd.DataFrame({"tps": tps, "resp_ms": resp}), capacity


def test_mmc_puts_its_pole_at_the_data_where_the_response_rises_from_low_load():
    # the cause behind issue #33 item 4's open curve: M/M/c's rise is about S before the pole and
    # S fixes the capacity 1000 c / S, so at 205,000 tps a response that doubles can only be drawn
    # as a pole just past the largest load, with a poor fit on the way
    train, _ = _doubling_curve()
    res = OpenMMcModel(n_boot=0).fit(train)
    assert 1.0 < res.max_tps / train["tps"].max() < 1.02
    assert res.train_mape["resp_ms"] > 10.0


def test_a_fitted_capacity_is_read_from_where_the_response_rises():
    # with its own capacity the same curve is R0 + S g_1(X / X_max): response 2x unloaded at the
    # largest load puts it at about half the capacity (M/M/1: R = S / (1 - rho), rho = 0.5)
    train, capacity = _doubling_curve()
    res = OpenMMcModel(n_boot=60, seed=2, fit_capacity=True).fit(train)
    assert res.n_servers == 1 and res.train_mape["resp_ms"] < 3.0
    np.testing.assert_allclose(res.max_tps, capacity, rtol=0.05)
    assert 0.45 < train["tps"].max() / res.max_tps < 0.55
    lo, hi = res.capacity_tps()[1:]
    assert lo < capacity < hi
    held_out = pd.DataFrame({"tps": [0.6 * capacity, 0.7 * capacity]})
    pred = res.predict(held_out)
    truth = 0.7 / (1.0 - held_out["tps"] / capacity)
    assert not pred["saturated"].any()
    assert ((pred["resp_ms_lo"] <= truth) & (truth <= pred["resp_ms_hi"])).all()
    # M/M/c is the special case X_max = 1000 c / S: on M/M/c data the fit finds that curve
    mmc = _flat_then_sharp(noise=0.0)
    both = OpenMMcModel(n_boot=0).fit(mmc), OpenMMcModel(n_boot=0, fit_capacity=True).fit(mmc)
    assert both[1].train_mape["resp_ms"] <= both[0].train_mape["resp_ms"] + 1e-9


def test_past_a_fitted_capacity_the_band_is_open_above_not_nan():
    train, capacity = _doubling_curve()
    res = OpenMMcModel(n_boot=60, seed=2, fit_capacity=True).fit(train)
    cap, lo, hi = res.capacity_tps()
    pred = res.predict(pd.DataFrame({"tps": [0.5 * (cap + hi), 2.0 * hi]}))
    assert pred["saturated"].tolist() == [True, True]
    # past the fitted capacity but within some draws' capacity: a finite lower end, no upper end
    assert np.isfinite(pred["resp_ms_lo"].iloc[0]) and np.isinf(pred["resp_ms_hi"].iloc[0])
    # past every draw's capacity: certainly saturated, [inf, inf]
    assert np.isinf(pred[["resp_ms", "resp_ms_lo", "resp_ms_hi"]].iloc[1]).all()
    assert not pred.isna().any().any()
    back = results_from_dict(res.to_dict())
    assert back.fitted_capacity_tps == res.fitted_capacity_tps and back.boot_params.shape == (60, 3)
    pd.testing.assert_frame_equal(back.predict(train[["tps"]]), res.predict(train[["tps"]]))
