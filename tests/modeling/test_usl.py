"""USL fit against the published R ``usl`` package results."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap.modeling import ModelError, USLModel, results_from_dict

# SPEC SDM91 benchmark data as shipped with R usl (data/specsdm91), Gunther GCaP ch. 5
SPECSDM91 = pd.DataFrame({
    "clients": [1, 18, 36, 72, 108, 144, 216],
    "tps": [64.9, 995.9, 1652.4, 1853.2, 1828.9, 1775.0, 1702.2],
})


def test_specsdm91_matches_r_usl():
    # smoeding/usl tests/peak-scalability.Rout.save: peak.scalability = 96.51956;
    # NLS coefficients sigma ~ 0.0277, kappa ~ 1.04e-4 (issue #3 and modeling notes §1.2)
    res = USLModel().fit(SPECSDM91)
    alpha, beta, _ = res.params
    np.testing.assert_allclose(alpha, 0.0277, rtol=0.01)
    np.testing.assert_allclose(beta, 1.04e-4, rtol=0.01)
    np.testing.assert_allclose(res.peak_clients, 96.51956, rtol=1e-3)


def test_specsdm91_standard_errors_match_r_usl_summary():
    # R usl 3.0.3 tests/summary.Rout.save (summary(usl(throughput ~ load, specsdm91))): estimates
    # 2.773e-02, 1.044e-04, 9.000e+01; std. errors 9.122e-03, 1.988e-05, 1.421e+01; residual
    # standard error 82.85 on 4 degrees of freedom
    res = USLModel().fit(SPECSDM91)
    np.testing.assert_allclose(res.params, [2.773e-02, 1.044e-04, 9.000e+01], rtol=5e-4)
    np.testing.assert_allclose(np.sqrt(np.diag(res.cov)), [9.122e-03, 1.988e-05, 1.421e+01], rtol=5e-4)
    np.testing.assert_allclose(np.sqrt(res.s2), 82.85, rtol=1e-4)
    assert res.dof == 4


def test_cisco_benchmark_matches_the_published_fit():
    # Schwartz, Practical Scalability Analysis with the USL: the Cisco benchmark's 32 points as
    # bundled in data/backtest/usl_cisco; the book's fit (as usl4j's ModelTest lists it, to 0.02 %):
    # sigma 0.02671591, kappa 7.690945e-4, lambda 995.6486, peak at N = 35 (floored), X max 12341
    table = pd.read_csv(Path(__file__).resolve().parents[2] / "data" / "backtest" / "usl_cisco" / "measurements.csv")
    res = USLModel().fit(table)
    np.testing.assert_allclose(res.params, [0.02671591, 7.690945e-4, 995.6486], rtol=2e-4)
    assert int(res.peak_clients) == 35
    peak = res.predict(pd.DataFrame({"clients": [res.peak_clients]}))["tps"].iloc[0]
    np.testing.assert_allclose(peak, 12341, rtol=2e-4)


def test_synthetic_coefficients_recovered():
    # smoeding/usl tests/coef.Rout.save: this data gives alpha = beta = 0.02, gamma = 1
    data = pd.DataFrame({"clients": [1, 2, 4, 6, 8, 10],
                         "tps": [1, 1.8868, 3.0769, 3.5294, 3.5398, 3.3557]})
    res = USLModel().fit(data)
    np.testing.assert_allclose(res.params, [0.02, 0.02, 1.0], atol=2e-4)


def test_field_fit_recovers_exact_usl_data_from_its_quadratic_start():
    # X(N) = N / (1 + 0.03 (N - 1) + 0.0005 N (N - 1)) exactly, X(1) = 1 measured: the deviation
    # from linearity N / C(N) - 1 is exactly 0.0005 (N-1)^2 + 0.0305 (N-1), so Gunther's quadratic
    # regression alone finds the coefficients, and the relative-error fit keeps them
    from kneecap.modeling.usl import _quadratic_start, usl_tps

    n = np.array([1.0, 2, 4, 8, 16, 32, 48, 64])
    x = usl_tps(n, 0.03, 0.0005, 1.0)
    np.testing.assert_allclose(_quadratic_start(n, x, 1.0, True), [0.03, 0.0005, 1.0], rtol=1e-9)
    res = USLModel(method="field").fit(pd.DataFrame({"clients": n, "tps": x}))
    np.testing.assert_allclose(res.params, [0.03, 0.0005, 1.0], rtol=1e-6)
    assert res.relative_errors and res.cov[2, 2] == 0.0  # gamma is X(1), not a parameter


def test_field_fit_normalises_by_the_measured_single_client_throughput():
    # SPEC SDM91 measures X(1) = 64.9: the field's fit keeps it as gamma; R's usl fits gamma (90.0)
    from kneecap.modeling.usl import _quadratic_start

    # the transform alone (modeling notes §1.2, computed there independently): alpha 0.01705,
    # beta 7.89e-5, N* 111.6
    start = _quadratic_start(SPECSDM91["clients"].to_numpy(float), SPECSDM91["tps"].to_numpy(float), 64.9, True)
    np.testing.assert_allclose(start[:2], [0.01705, 7.89e-5], rtol=1e-3)
    res = USLModel(method="field").fit(SPECSDM91)
    assert res.params[2] == 64.9 and np.all(res.params[:2] >= 0.0)
    nls = USLModel().fit(SPECSDM91)
    np.testing.assert_allclose(nls.params[2], 90.0, rtol=1e-3)
    # relative errors: the band is the relative scatter times the throughput, and survives its document
    pred = res.predict(SPECSDM91)
    assert (pred["tps_lo"] < pred["tps"]).all() and (pred["tps"] < pred["tps_hi"]).all()
    again = results_from_dict(res.to_dict())
    assert again.relative_errors
    np.testing.assert_allclose(again.predict(SPECSDM91)["tps_hi"], pred["tps_hi"], rtol=1e-12)
    # without a single-client row gamma is fitted, from the largest X / N
    fitted = USLModel(method="field").fit(SPECSDM91.iloc[1:])
    assert fitted.cov[2, 2] > 0.0
    with pytest.raises(ValueError, match="USL method must be one of nls, field"):
        USLModel(method="gunther")


def test_prediction_interval_covers_and_roundtrips():
    res = USLModel().fit(SPECSDM91)
    pred = res.predict(SPECSDM91)
    assert (pred["tps_lo"] <= pred["tps"]).all() and (pred["tps"] <= pred["tps_hi"]).all()
    again = results_from_dict(res.to_dict())
    np.testing.assert_allclose(again.predict(SPECSDM91)["tps"], pred["tps"], rtol=1e-12)


def test_too_few_points():
    with pytest.raises(ModelError, match="at least 3"):
        USLModel().fit(SPECSDM91.head(2))


def test_amdahl_is_the_usl_without_coherency():
    # exact Amdahl data, X(N) = 20 N / (1 + 0.05 (N - 1)): recovered with beta held at 0, the
    # curve never turns down, and the fit survives its stored document
    n = np.array([1, 4, 8, 12, 16, 24])
    data = pd.DataFrame({"clients": n, "tps": 20 * n / (1 + 0.05 * (n - 1))})
    res = USLModel(coherency=False).fit(data)
    np.testing.assert_allclose(res.params, [0.05, 0.0, 20.0], rtol=1e-6, atol=1e-12)
    assert res.dof == len(n) - 2 and res.cov[1].tolist() == [0.0, 0.0, 0.0]
    assert res.peak_clients == np.inf and "Amdahl" in res.summary()
    far = res.predict(pd.DataFrame({"clients": [32, 64, 128]}))["tps"].to_numpy()
    assert np.all(np.diff(far) > 0) and far[-1] < 20 / 0.05
    back = results_from_dict(res.to_dict())
    assert back.coherency is False
    np.testing.assert_allclose(back.predict(data)["tps"], res.predict(data)["tps"])
    # the USL's own document is unchanged: no coherency key when the term is fitted
    assert "coherency" not in USLModel().fit(SPECSDM91).to_dict()


def test_three_point_band_contains_the_generating_curve_at_the_training_loads():
    # the few-point band is the spread of refits within FEW_POINTS_NOISE (5.7 %) plus that noise
    # again: with 2 % measurement noise it holds the curve the points came from, at every
    # training load, for every seed (some with beta at its bound 0, not interpolating); an
    # exactly determined fit's residual band has zero width
    from kneecap.modeling.usl import FEW_POINTS_NOISE, usl_tps

    n = np.array([1.0, 4.0, 8.0])
    truth = usl_tps(n, 0.05, 0.002, 20.0)
    for seed in range(25):
        x = truth * np.exp(np.random.default_rng(seed).normal(0.0, 0.02, 3))
        res = USLModel(seed=seed).fit(pd.DataFrame({"clients": n, "tps": x}))
        assert res.flags == ("few_points",)
        pred = res.predict(pd.DataFrame({"clients": n}))
        assert (pred["tps_lo"] <= truth).all() and (truth <= pred["tps_hi"]).all(), seed
        # about +-1.96 x 5.7 % x sqrt(2) at the points themselves, never zero
        assert (pred["tps_hi"] / pred["tps_lo"] > np.exp(2 * 1.5 * FEW_POINTS_NOISE)).all()


def test_few_point_refits_are_the_exact_interpolant_and_survive_their_document():
    # the linear form N / X = a + b (N - 1) + c N (N - 1) through three points is the USL the
    # non-linear fit finds, to its tolerance (independent of the optimiser)
    from kneecap.modeling.usl import _linearised_fit, usl_tps

    n = np.array([2.0, 6.0, 10.0])
    x = usl_tps(n, 0.08, 0.004, 12.0)
    np.testing.assert_allclose(_linearised_fit(n, x, None, True, False), [0.08, 0.004, 12.0], rtol=1e-10)
    np.testing.assert_allclose(USLModel().fit(pd.DataFrame({"clients": n, "tps": x})).params,
                               [0.08, 0.004, 12.0], rtol=1e-5)
    # outside the bounds (a superlinear segment asks beta < 0) the refit keeps beta at 0
    assert _linearised_fit(n, np.array([10.0, 40.0, 80.0]), None, True, False)[1] == 0.0
    res = USLModel(n_boot=50).fit(pd.DataFrame({"clients": n, "tps": x}))
    back = results_from_dict(res.to_dict())
    assert back.flags == ("few_points",) and back.few_points_draws.shape == (50, 3)
    far = pd.DataFrame({"clients": [20.0, 40.0]})
    pd.testing.assert_frame_equal(back.predict(far), res.predict(far))
    # four loads are not few: no draws, the residual band, the document as before
    four = USLModel().fit(SPECSDM91.head(4))
    assert four.flags == () and "few_points_draws" not in four.to_dict()


def test_amdahl_on_two_points_is_flagged_with_a_band():
    from kneecap.modeling.usl import usl_tps

    n = np.array([1.0, 8.0])
    res = USLModel(coherency=False).fit(pd.DataFrame({"clients": n, "tps": usl_tps(n, 0.05, 0.0, 20.0)}))
    np.testing.assert_allclose(res.params, [0.05, 0.0, 20.0], rtol=1e-6)
    pred = res.predict(pd.DataFrame({"clients": [1.0, 8.0, 16.0, 32.0]}))
    ratio = (pred["tps_hi"] / pred["tps_lo"]).to_numpy()
    assert res.flags == ("few_points",) and ratio[0] > 1.2 and np.all(np.diff(ratio[1:]) > 0)
    assert "few points (2)" in res.summary()
