"""A champion against its measured points: curves per measured configuration, residuals, observed knee, provenance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kneecap import forecasting, measured_fit
from kneecap.modeling import ClosedMVAModel, CostModel, OpenDispatchModel, USLModel
from tests.modeling.test_open_dispatch import intervals

# seed 004, Table 1 (004_30fd347cf9df2afe.txt): 2 GCP + 2 zIIP, Z = 200 ms
SEED004 = pd.DataFrame({
    "point_id": [f"p{n}" for n in range(5)], "clients": [100, 200, 300, 400, 500],
    "tps": [500.0, 1000.0, 1500.0, 1960.0, 2420.0], "resp_ms": [1.06, 1.13, 1.38, 3.32, 5.03],
    "n_gcp": 2, "n_ziip": 2, "think_time_ms": 200.0,
})


@pytest.fixture(scope="module")
def closed():
    return ClosedMVAModel(n_boot=4, seed=1).fit(SEED004)


def test_a_curve_per_measured_configuration_up_to_past_the_most_clients_measured(closed):
    # a point on 3 zIIPs, and one whose row leaves the engines empty: the model's first configuration
    points = pd.concat([SEED004, pd.DataFrame({"point_id": ["q", "r"], "clients": [600, 50], "resp_ms": [2.0, 1.0],
                                               "n_gcp": [2, np.nan], "n_ziip": [3, np.nan],
                                               "think_time_ms": [200.0, np.nan]})], ignore_index=True)
    curves = measured_fit.measured_configuration_curves(closed, points, points_per_curve=20)
    assert curves.groupby("config", sort=False).size().to_dict() == {"2 GCP / 2 zIIP / Z 200 ms": 20,
                                                                     "2 GCP / 3 zIIP / Z 200 ms": 20}
    one = curves[curves["config"] == "2 GCP / 3 zIIP / Z 200 ms"].drop(columns="config").reset_index(drop=True)
    alone = forecasting.response_curve(closed, n_gcp=2, n_ziip=3, think_time_ms=200.0, max_load=780.0, points=20)
    # up to 1.3 x the 600 clients measured; the configuration's values as the points give them (floats)
    pd.testing.assert_frame_equal(one, alone, check_dtype=False)
    assert len(measured_fit.measured_configuration_curves(closed, points, most=1, points_per_curve=20)) == 20
    # no clients to draw a curve over: a model of another family, or no points
    usl = USLModel().fit(SEED004)
    assert measured_fit.measured_configuration_curves(usl, SEED004).empty
    assert measured_fit.measured_configuration_curves(closed, SEED004.iloc[0:0]).empty


def test_residuals_compare_each_point_with_the_model_at_its_configuration(closed):
    points = SEED004.assign(resp_ms=SEED004["resp_ms"].where(SEED004["clients"] != 300))  # one not measured
    out = measured_fit.residuals(closed, points)
    assert out["point_id"].tolist() == ["p0", "p1", "p3", "p4"] and (out["target"] == "resp_ms").all()
    measured = points.dropna(subset=["resp_ms"]).reset_index(drop=True)
    predicted = closed.predict(measured)
    np.testing.assert_array_equal(out["measured"], measured["resp_ms"])
    np.testing.assert_array_equal(out["fitted"], predicted["resp_ms"])
    np.testing.assert_array_equal(out[["lo", "hi"]], predicted[["resp_ms_lo", "resp_ms_hi"]])
    np.testing.assert_allclose(out["residual_pct"], (predicted["resp_ms"] / measured["resp_ms"] - 1) * 100,
                               rtol=1e-12)
    assert list(out.columns[:5]) == ["point_id", "clients", "n_gcp", "n_ziip", "think_time_ms"]


def test_a_cost_model_is_compared_on_cpu_per_transaction():
    # seed 001 "MQ Console vs REST API": CPU ms per request at 1000/2000/3000 queues
    mq = pd.DataFrame({"point_id": list("abc"), "n_queues": [1000, 2000, 3000], "config": "console",
                       "cpu_ms_per_tran": [99.0, 169.0, 243.0]})
    cost = CostModel().fit(mq)
    out = measured_fit.residuals(cost, mq)
    assert (out["target"] == "cpu_ms_per_tran").all()
    np.testing.assert_array_equal(out["fitted"], cost.predict(mq)["cpu_ms_per_tran"])
    assert (out["lo"] <= out["fitted"]).all() and (out["fitted"] <= out["hi"]).all()
    assert measured_fit.residuals(None, mq).empty
    assert measured_fit.residuals(cost, mq.drop(columns="cpu_ms_per_tran")).empty  # nothing measured to compare


def test_a_wlm_class_is_predicted_on_each_intervals_own_lpar():
    table = intervals(days=2)
    model = OpenDispatchModel(n_boot=0, seed=2).fit(table)
    assert measured_fit.is_class_model(model) and not measured_fit.is_class_model(None)
    out = measured_fit.residuals(model, table)
    assert len(out) == len(table) and out["interval_start_at"].is_monotonic_increasing
    # the generator put the other classes' busy per GCP at 70.1's LPAR busy less the class's APPL% / 2
    np.testing.assert_allclose(out["bg_gcp_busy_pct"], table["lpar_gcp_busy_pct"] - table["cpu_gcp_pct"] / 2,
                               rtol=1e-12)
    i = int(np.argmax(out["bg_gcp_busy_pct"]))
    alone = model.predict(out.iloc[[i]][["tps", "n_gcp", "n_ziip", "bg_gcp_busy_pct", "bg_ziip_busy_pct"]])
    assert out["fitted"].iloc[i] == alone["resp_ms"].iloc[0]


def test_the_observed_knee_of_seed_004():
    # Kneedle (Satopää et al. 2011) by hand: normalised, x - y = 0, .232, .419, .180, 0 peaks at 300 clients
    assert measured_fit.observed_knee_point(SEED004) == {"clients": 300.0, "resp_ms": 1.38}
    assert measured_fit.observed_knee_point(SEED004.head(2)) is None
    assert measured_fit.observed_knee_point(SEED004.drop(columns="clients")) is None


def test_provenance_counts_each_systems_intervals_and_days():
    at = pd.to_datetime(["2026-03-02 10:00", "2026-03-02 10:15", "2026-03-03 09:00", "2026-03-02 10:00", None])
    points = pd.DataFrame({"interval_start_at": at, "system_id": ["SYSA", "SYSA", "SYSA", None, "SYSA"],
                           "source_id": "smf", "interval_s": [900.0, 900.0, 1800.0, np.nan, 900.0]})
    out = measured_fit.provenance(points)
    assert out.columns.tolist() == measured_fit.PROVENANCE_COLUMNS
    assert out[["system_id", "intervals", "interval_s", "days"]].to_dict("records") == [
        {"system_id": "?", "intervals": 1, "interval_s": "-", "days": 1},
        {"system_id": "SYSA", "intervals": 3, "interval_s": "900, 1800", "days": 2}]
    assert out["last_interval_start"].iloc[1] == pd.Timestamp("2026-03-03 09:00")
    assert measured_fit.provenance(SEED004).empty  # a table of runs has no intervals
