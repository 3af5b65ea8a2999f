"""CPU-cost regression and the open M/M/c model."""

import numpy as np
import pandas as pd
import pytest

from kneecap.modeling import CostModel, ModelError, OpenMMcModel, mmc_resp_ms, results_from_dict
from kneecap.modeling.cost import cost_mape, cost_table

# seed 000 §14, Figure 20 text: 0.197 / 0.210 / 0.228 CPU ms per BAQR transaction, 1K/4K/8K responses
STUB = pd.DataFrame({"resp_bytes": [1024, 4096, 8192], "cpu_ms_per_tran": [0.197, 0.210, 0.228]})
# seed 001 "MQ Console vs REST API": CPU ms per request at 1000/2000/3000 queues
MQ = pd.DataFrame({
    "n_queues": [1000, 2000, 3000] * 3,
    "config": ["console"] * 3 + ["rest_filtered"] * 3 + ["rest_all"] * 3,
    "cpu_ms_per_tran": [99, 169, 243, 93, 169, 246, 195, 370, 561],
})


def test_ibm_cost_formula_derivation():
    # IBM: cost = CPU% x 10 / TPS; 150% busy at 1500 TPS is 1 ms per transaction
    rows = cost_table(pd.DataFrame({"cpu_total_pct": [150.0], "tps": [1500.0]}))
    assert rows["cpu_ms_per_tran"].iloc[0] == pytest.approx(1.0)


def test_payload_interpolation():
    res = CostModel().fit(STUB.iloc[[0, 2]])
    # straight line between 1K and 8K: 0.197 + 0.031 * 3/7 = 0.2103 vs measured 0.210
    assert cost_mape(res, STUB.iloc[[1]]) < 1.0


def test_separate_slopes_when_configurations_differ():
    train = MQ[MQ["n_queues"] != 2000]
    res = CostModel().fit(train)
    assert res.design.form == "linear_by_factor"
    # the midpoints of each configuration's line: (99+243)/2, (93+246)/2, (195+561)/2
    np.testing.assert_allclose(res.predict(MQ[MQ["n_queues"] == 2000])["cpu_ms_per_tran"],
                               [171.0, 169.5, 378.0], rtol=1e-9)
    assert cost_mape(res, MQ[MQ["n_queues"] == 2000]) < 5.0


def test_intervals_and_roundtrip():
    res = CostModel().fit(MQ)
    pred = res.predict(MQ)
    assert (pred["cpu_ms_per_tran_lo"] <= pred["cpu_ms_per_tran"]).all()
    again = results_from_dict(res.to_dict())
    pd.testing.assert_frame_equal(again.predict(MQ), pred)


def test_no_cost_columns():
    with pytest.raises(ModelError, match="cpu_ms_per_tran"):
        CostModel().fit(pd.DataFrame({"tps": [1.0, 2.0]}))


def test_open_mmc_recovers_known_parameters():
    # generated from M/M/4 with S = 2 ms plus a 1 ms delay: the fit must find c = 4 and S = 2
    tps = np.array([200.0, 600.0, 1000.0, 1400.0, 1700.0, 1900.0])
    resp = np.array([1.0 + mmc_resp_ms(x, 2.0, 4) for x in tps])
    res = OpenMMcModel(n_boot=20).fit(pd.DataFrame({"tps": tps, "resp_ms": resp}))
    assert res.n_servers == 4
    np.testing.assert_allclose([res.service_ms, res.delay_ms], [2.0, 1.0], rtol=1e-3)
    np.testing.assert_allclose(res.max_tps, 2000.0, rtol=1e-3)


def test_leave_one_out_without_refits_equals_refitting_each_fold():
    """The leverage shortcut scores exactly what dropping each row and refitting scores."""
    import statsmodels.api as sm

    from kneecap.modeling.cost import Design, _loo_mape, _transform, _untransform

    rng = np.random.default_rng(4)
    n = 30
    table = pd.DataFrame({"req_bytes": rng.uniform(100, 9000, n), "transport": rng.choice(["HTTP", "MQ", "Socket"], n)})
    table["cpu_ms_per_tran"] = (0.2 + 2e-5 * table["req_bytes"] + (table["transport"] == "MQ") * 0.05) * np.exp(
        rng.normal(0, 0.05, n))
    for form in ("linear", "log"):
        design = Design(form, ("req_bytes",), {"transport": ["HTTP", "MQ", "Socket"]})
        y = table["cpu_ms_per_tran"].to_numpy()
        errors = []
        for i in range(n):
            sub = table.drop(index=i)
            fit = sm.OLS(_transform(sub["cpu_ms_per_tran"].to_numpy(), form), design.matrix(sub)).fit()
            pred = _untransform(np.asarray(fit.predict(design.matrix(table.iloc[[i]]))), form)[0]
            errors.append(abs(pred - y[i]) / y[i])
        assert _loo_mape(table, design) == pytest.approx(100 * np.mean(errors), rel=1e-9)
    # a level seen in one row only: that fold cannot estimate its dummy, so no score
    lone = table.assign(transport=["Socket"] + ["HTTP"] * (n - 1))
    assert np.isnan(_loo_mape(lone, Design("linear", (), {"transport": ["HTTP", "Socket"]})))
