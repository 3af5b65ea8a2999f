"""Forecast combination (kneecap.modeling.combine) and closed MVA with c servers + delay."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kneecap.modeling import (
    CombinedModel,
    CombinedResults,
    ModelError,
    ModelingConfig,
    MultiServerMVAModel,
    USLModel,
    choose_response_model,
    results_from_dict,
    usl_tps,
)
from kneecap.modeling.closed import servers_delay_curve
from kneecap.modeling.combine import (
    combination_weights,
    combine_frames,
    registered_weights,
    rolling_origin_errors,
    run_metrics,
)
from kneecap.modeling.queueing import multiserver_mva

# SPEC SDM91 (R package usl 3.0.3, data/specsdm91; Gunther, Guerrilla Capacity Planning ch. 5),
# throughput in scripts per hour as the data set stores it; 16 CPUs
SPECSDM91 = pd.DataFrame({"clients": [1, 18, 36, 72, 108, 144, 216], "think_time_ms": 0.0, "n_gcp": 16,
                          "tps": [64.9, 995.9, 1652.4, 1853.2, 1828.9, 1775.0, 1702.2]})


def _members():
    return {"usl": USLModel, "closed_mva_c": MultiServerMVAModel}


# --- weights --------------------------------------------------------------------------------------


def test_weights_are_inverse_squared_error_normalised():
    # Bates & Granger (1969) with uncorrelated errors: w_i = e_i^-2 / sum e_j^-2; 1/4 : 1/16 = 0.8 : 0.2
    w = combination_weights({"a": 2.0, "b": 4.0})
    np.testing.assert_allclose([w["a"], w["b"]], [0.8, 0.2], rtol=1e-12)
    # p = 1: inverse error; p = 0: the simple average
    np.testing.assert_allclose(list(combination_weights({"a": 2.0, "b": 4.0}, power=1.0).values()), [2 / 3, 1 / 3])
    assert combination_weights({"a": 2.0, "b": 4.0}, power=0.0) == {"a": 0.5, "b": 0.5}


def test_weights_without_scores_and_with_a_perfect_member():
    assert combination_weights({"a": math.nan, "b": math.nan}) == {"a": 0.5, "b": 0.5}
    assert combination_weights({"a": math.nan, "b": 3.0}) == {"a": 0.0, "b": 1.0}
    assert combination_weights({"a": 0.0, "b": 3.0}) == {"a": 1.0, "b": 0.0}
    with pytest.raises(ValueError, match="no members"):
        combination_weights({})
    with pytest.raises(ValueError, match="power must be >= 0"):
        combination_weights({"a": 1.0}, power=-1.0)


# --- the band and the mean ------------------------------------------------------------------------


def test_combined_frame_is_the_weighted_mean_and_the_band_spans_every_member():
    idx = pd.RangeIndex(2)
    a = pd.DataFrame({"tps": [10.0, 20.0], "tps_lo": [9.0, 18.0], "tps_hi": [11.0, 22.0]}, index=idx)
    b = pd.DataFrame({"tps": [14.0, 16.0], "tps_lo": [13.0, 15.5], "tps_hi": [15.0, 16.5]}, index=idx)
    out = combine_frames({"a": a, "b": b}, {"a": 0.25, "b": 0.75}, ("tps",))
    np.testing.assert_allclose(out["tps"], [13.0, 17.0], rtol=1e-12)
    np.testing.assert_allclose(out["tps_lo"], [9.0, 15.5], rtol=1e-12)
    np.testing.assert_allclose(out["tps_hi"], [15.0, 22.0], rtol=1e-12)
    # a member with no weight neither moves the mean nor widens the band
    out = combine_frames({"a": a, "b": b}, {"a": 0.0, "b": 1.0}, ("tps",))
    np.testing.assert_allclose(out[["tps", "tps_lo", "tps_hi"]].to_numpy(), b.to_numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="positive weight"):
        combine_frames({"a": a}, {"a": 0.0}, ("tps",))


_curve = st.lists(st.floats(0.0, 1e3, allow_nan=False), min_size=2, max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(_curve, min_size=2, max_size=4), st.lists(st.floats(0.0, 1.0), min_size=4, max_size=4))
def test_combination_of_rising_curves_rises(increments, raw_weights):
    # physics: throughput (and response) of a closed curve never falls with load where every member
    # says so; a convex combination keeps that, and lies between the lowest and highest member
    n = min(len(i) for i in increments)
    frames = {}
    for j, inc in enumerate(increments):
        mean = np.cumsum(inc[:n])
        frames[f"m{j}"] = pd.DataFrame({"tps": mean, "tps_lo": mean * 0.9, "tps_hi": mean * 1.1})
    weights = {f"m{j}": w for j, w in enumerate(raw_weights[: len(frames)])}
    if sum(weights.values()) <= 0:
        weights = dict.fromkeys(weights, 1.0)
    out = combine_frames(frames, weights, ("tps",))
    assert np.all(np.diff(out["tps"].to_numpy()) >= -1e-9 * (1 + out["tps"].abs().max()))
    used = np.vstack([f["tps"] for name, f in frames.items() if weights[name] > 0])
    scale = 1e-12 * (1 + np.abs(used).max())
    assert np.all(out["tps"] >= used.min(axis=0) - scale) and np.all(out["tps"] <= used.max(axis=0) + scale)
    assert np.all(out["tps_lo"] <= out["tps"]) and np.all(out["tps"] <= out["tps_hi"])


@settings(max_examples=25, deadline=None)
@given(st.floats(0.0, 0.2), st.floats(0.5, 20.0), st.floats(1.0, 50.0), st.integers(1, 8))
def test_fitted_combination_rises_where_both_families_rise(alpha, demand_ms, delay_ms, servers):
    # a USL without coherency (beta = 0) and an MVA curve both rise forever: so must their combination,
    # at and far beyond the trained populations
    clients = np.array([1, 2, 4, 8, 16], dtype=float)
    tps, _ = servers_delay_curve(16, demand_ms, delay_ms, servers)
    train = pd.DataFrame({"clients": clients, "think_time_ms": 0.0, "tps": tps[clients.astype(int) - 1]})
    usl = USLModel().fit(train)
    usl.params = np.array([alpha, 0.0, usl.params[2]])
    res = CombinedResults(members={"usl": usl, "closed_mva_c": MultiServerMVAModel().fit(train)},
                          weights={"usl": 0.4, "closed_mva_c": 0.6}, scores={"usl": 1.5, "closed_mva_c": 1.0},
                          n_origins=2, load="clients", target="tps", weight_power=2.0, min_loads=3,
                          targets=("tps", "resp_ms"))
    grid = pd.DataFrame({"clients": np.arange(1, 200, dtype=float), "think_time_ms": 0.0})
    pred = res.predict(grid)["tps"].to_numpy()
    assert np.all(np.diff(pred) >= -1e-9 * pred.max())


# --- closed MVA with c servers + delay ------------------------------------------------------------


def test_servers_delay_curve_is_exact_mva():
    # the same network through the general solver: one station of 4 servers (D = 2 ms) and a 6 ms delay
    tps, resp = servers_delay_curve(50, 2.0, 6.0, 4)
    sol = multiserver_mva((2.0,), (4,), delay_ms=6.0, think_time_ms=0.0, n_max=50)
    np.testing.assert_allclose(tps, sol.tps, rtol=1e-12)
    np.testing.assert_allclose(resp, sol.resp_ms, rtol=1e-12)
    # one client: X = 1 / (D + R0); many: the ceiling c / D
    np.testing.assert_allclose(tps[0], 1000.0 / 8.0, rtol=1e-12)
    np.testing.assert_allclose(tps[-1], 1000.0 * 4 / 2.0, rtol=1e-3)


def test_multiserver_fit_recovers_a_noiseless_curve():
    tps, _ = servers_delay_curve(64, 3.0, 20.0, 6)
    clients = np.array([1, 4, 8, 16, 24, 32, 48, 64])
    res = MultiServerMVAModel().fit(pd.DataFrame({"clients": clients, "tps": tps[clients - 1]}))
    assert res.n_servers == 6 and res.servers_source == "fitted"
    np.testing.assert_allclose([res.demand_ms, res.delay_ms], [3.0, 20.0], rtol=1e-4)
    # with the count given (n_gcp) it is kept
    res = MultiServerMVAModel().fit(pd.DataFrame({"clients": clients, "tps": tps[clients - 1], "n_gcp": 6}))
    assert res.n_servers == 6 and res.servers_source == "measured"


def test_multiserver_fit_predicts_and_roundtrips():
    res = MultiServerMVAModel().fit(SPECSDM91)
    pred = res.predict(SPECSDM91)
    assert (pred["tps_lo"] <= pred["tps"]).all() and (pred["tps"] <= pred["tps_hi"]).all()
    assert np.all(np.diff(pred["tps"].to_numpy()) >= 0)  # MVA throughput never falls
    np.testing.assert_allclose(pred["resp_ms"], SPECSDM91["clients"] / pred["tps"] * 1000.0, rtol=1e-12)
    again = results_from_dict(res.to_dict())
    np.testing.assert_allclose(again.predict(SPECSDM91)["tps_hi"], pred["tps_hi"], rtol=1e-12)


def test_multiserver_errors():
    with pytest.raises(ModelError, match="3 or more populations"):
        MultiServerMVAModel().fit(SPECSDM91.head(2))
    res = MultiServerMVAModel().fit(SPECSDM91)
    with pytest.raises(ModelError, match="clients >= 1"):
        res.predict(pd.DataFrame({"clients": [0.0]}))


# --- rolling origin and the fitted combination -----------------------------------------------------


def test_rolling_origin_fits_the_lower_loads_and_scores_the_rest():
    # a noiseless USL curve: the USL itself predicts every origin's held-out part exactly
    clients = np.array([1, 2, 4, 8, 16, 32], dtype=float)
    data = pd.DataFrame({"clients": clients, "tps": usl_tps(clients, 0.05, 0.001, 10.0)})
    errors = rolling_origin_errors(data, USLModel, load="clients", target="tps", hide=("tps",), min_loads=3)
    assert list(errors) == [4.0, 8.0, 16.0]  # origins k = 3, 4, 5 of the 6 loads
    assert max(errors.values()) < 1e-4
    # min_loads above the loads there are: no origin
    assert rolling_origin_errors(data, USLModel, load="clients", target="tps", hide=("tps",), min_loads=6) == {}


def test_rolling_origin_skips_origins_a_family_cannot_fit():
    data = SPECSDM91.head(5)
    errors = rolling_origin_errors(data, USLModel, load="clients", target="tps", hide=("tps",), min_loads=2)
    assert list(errors) == [36.0, 72.0]  # two points are too few for the USL's three parameters


def test_combination_weights_come_from_the_training_rows_only():
    train, test = SPECSDM91.head(5), SPECSDM91.tail(2)
    res = CombinedModel(_members(), min_loads=3).fit(train)
    # origins at 36 and 72 clients (k = 3, 4), both scored for both families
    assert res.n_origins == 2
    for name, make in _members().items():
        errors = rolling_origin_errors(train, make, load="clients", target="tps", hide=("tps", "resp_ms"))
        np.testing.assert_allclose(res.scores[name], np.mean(list(errors.values())), rtol=1e-12)
    expected = combination_weights(res.scores)
    assert res.weights == expected
    # the held-out rows do not move them: the same fit with other held-out values
    again = CombinedModel(_members(), min_loads=3).fit(train)
    assert again.weights == res.weights
    pred = res.predict(test)
    members = res.member_predictions(test)
    np.testing.assert_allclose(pred["tps"], sum(res.weights[n] * members[n]["tps"] for n in members), rtol=1e-12)
    assert (pred["tps_lo"] <= np.minimum(members["usl"]["tps"], members["closed_mva_c"]["tps"])).all()
    assert (pred["tps_hi"] >= np.maximum(members["usl"]["tps"], members["closed_mva_c"]["tps"])).all()


def test_combination_roundtrips_and_logs_its_weights():
    res = CombinedModel(_members()).fit(SPECSDM91)
    again = results_from_dict(res.to_dict())
    assert again.weights == res.weights and again.label == "combined:usl+closed_mva_c"
    np.testing.assert_allclose(again.predict(SPECSDM91)["tps_hi"], res.predict(SPECSDM91)["tps_hi"], rtol=1e-12)
    # the members come back only through the serialiser's table (combine does not import it)
    with pytest.raises(ModelError, match="serialise.results_from_dict"):
        CombinedResults.from_dict(res.to_dict())
    metrics = run_metrics(res)
    assert metrics["combine_weight.usl"] == res.weights["usl"]
    assert metrics["combine_rolling_origin_mape_pct.closed_mva_c"] == res.scores["closed_mva_c"]
    registry = pd.DataFrame([{"name": "kneecap-x-response", "version": 1, "aliases": "",
                              **{f"metric.{k}": v for k, v in metrics.items()}},
                             {"name": "kneecap-y-response", "version": 1, "aliases": "champion"}])
    table = registered_weights(registry)
    assert list(table["family"]) == ["usl", "closed_mva_c"] and set(table["name"]) == {"kneecap-x-response"}
    np.testing.assert_allclose(table["weight"].sum(), 1.0, rtol=1e-12)


def test_a_member_that_cannot_fit_is_left_out():
    class Never:
        def fit(self, table):
            raise ModelError("never fits")

    res = CombinedModel({"usl": USLModel, "never": Never}).fit(SPECSDM91)
    assert list(res.members) == ["usl"] and res.weights == {"usl": 1.0}
    with pytest.raises(ModelError, match="no member of the combination fits"):
        CombinedModel({"never": Never}).fit(SPECSDM91)


def test_zero_think_curves_without_ziips_get_the_combination():
    choice = choose_response_model(SPECSDM91, ModelingConfig(n_boot=0))
    assert choice.family == "combined"
    assert set(choice.competitors["family"]) == {"usl", "amdahl", "closed_mva_c"}
    np.testing.assert_allclose(choice.competitors["weight"].sum(), 1.0, rtol=1e-12)


def test_the_usl_method_reaches_the_usl_and_amdahl_members():
    # params.yaml train.usl_method: field normalises by the measured X(1) in both USL members
    default = choose_response_model(SPECSDM91, ModelingConfig(n_boot=0)).results
    field = choose_response_model(SPECSDM91, ModelingConfig(n_boot=0, usl_method="field")).results
    x1 = float(SPECSDM91.loc[SPECSDM91["clients"] == 1, "tps"].iloc[0])
    for name in ("usl", "amdahl"):
        assert field.members[name].params[2] == x1 and field.members[name].relative_errors
        assert default.members[name].params[2] != x1 and not default.members[name].relative_errors
    assert field.members["closed_mva_c"].to_dict() == default.members["closed_mva_c"].to_dict()
