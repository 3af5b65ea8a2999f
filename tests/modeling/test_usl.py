"""USL fit against the published R ``usl`` package results."""

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


def test_synthetic_coefficients_recovered():
    # smoeding/usl tests/coef.Rout.save: this data gives alpha = beta = 0.02, gamma = 1
    data = pd.DataFrame({"clients": [1, 2, 4, 6, 8, 10],
                         "tps": [1, 1.8868, 3.0769, 3.5294, 3.5398, 3.3557]})
    res = USLModel().fit(data)
    np.testing.assert_allclose(res.params, [0.02, 0.02, 1.0], atol=2e-4)


def test_prediction_interval_covers_and_roundtrips():
    res = USLModel().fit(SPECSDM91)
    pred = res.predict(SPECSDM91)
    assert (pred["tps_lo"] <= pred["tps"]).all() and (pred["tps"] <= pred["tps_hi"]).all()
    again = results_from_dict(res.to_dict())
    np.testing.assert_allclose(again.predict(SPECSDM91)["tps"], pred["tps"], rtol=1e-12)


def test_too_few_points():
    with pytest.raises(ModelError, match="at least 3"):
        USLModel().fit(SPECSDM91.head(2))
