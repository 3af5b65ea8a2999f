"""Engines not all alike (issue #37 items 1-2): GCP and zIIP speeds, SMT-2 zIIPs, the speeds SMF gives.

Known truths: a change of the demand's unit (both speeds doubled), the pools of IIPHONORPRIORITY=NO
that never share work (each pool's demand at its own speed), MT-2 at a capacity factor of 2
(two full-speed threads a core: twice the zIIPs), hand-computed capacities and costs, SMF 72.3
written with a sub-capacity normalisation factor and an MT capacity factor and read back, and the
dispatcher simulation on the same engines (its kept grid, and one point simulated here).
"""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap import forecasting
from kneecap.modeling.dispatch import Dispatch, cost_per_tran, solve_closed, solve_open
from kneecap.modeling.engines import on_engines, speeds_from_smf72
from kneecap.simulation import SimScenario, simulate
from kneecap.smf.reader import decode_file
from tests.modeling.benches import bench as bench_module
from tests.smf import synth
from tests.test_factors import POLICY, SCENARIO, seed004_models  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[2]
TPS = np.array([200.0, 600.0, 1000.0, 1400.0])


def test_both_speeds_doubled_is_the_demand_halved():
    # a speed is work per ms relative to the demand's unit: doubling both halves every time
    fast = Dispatch(2, 2, eligible_bursts=4, gcp_speed=2.0, ziip_speed=2.0)
    unit = Dispatch(2, 2, eligible_bursts=4)
    np.testing.assert_array_equal(solve_open(TPS, 1.0, 0.2, 0.7, fast).resp_ms,
                                  solve_open(TPS, 0.5, 0.2, 0.7, unit).resp_ms)
    np.testing.assert_array_equal(solve_closed(1.0, 0.2, 0.7, fast, think_time_ms=20.0, n_max=80).resp_ms,
                                  solve_closed(0.5, 0.2, 0.7, unit, think_time_ms=20.0, n_max=80).resp_ms)


def test_without_help_each_pool_serves_its_own_work_at_its_own_speed():
    # IIPHONORPRIORITY=NO: no work changes pool, so GCPs at 0.4 and zIIPs at 1 are equal engines
    # serving (1 - f) D / 0.4 and f D / 1 of work
    d, f = 1.0, 0.6
    slow = Dispatch(3, 2, honor_priority=False, eligible_bursts=4, gcp_speed=0.4)
    native, eligible = (1 - f) * d / 0.4, f * d
    alike = Dispatch(3, 2, honor_priority=False, eligible_bursts=4)
    f_alike = eligible / (native + eligible)
    np.testing.assert_allclose(solve_open(TPS, d, 0.2, f, slow).resp_ms,
                               solve_open(TPS, native + eligible, 0.2, f_alike, alike).resp_ms, rtol=1e-12)


def test_without_ziips_eligible_work_runs_at_gcp_speed():
    slow = Dispatch(2, 0, eligible_bursts=3, gcp_speed=0.5)
    np.testing.assert_allclose(solve_open(TPS / 2, 1.0, 0.1, 0.8, slow).resp_ms,
                               solve_open(TPS / 2, 2.0, 0.1, 0.8, Dispatch(2, 0, eligible_bursts=3)).resp_ms,
                               rtol=1e-12)
    np.testing.assert_allclose(solve_closed(1.0, 0.1, 0.8, slow, think_time_ms=10.0, n_max=60).resp_ms,
                               solve_closed(2.0, 0.1, 0.8, Dispatch(2, 0, eligible_bursts=3), think_time_ms=10.0,
                                            n_max=60).resp_ms, rtol=1e-12)


def test_smt2_at_capacity_factor_two_is_twice_the_ziips():
    # CF 2: each of a core's two threads runs at the core's MT-1 speed
    mt2 = Dispatch(3, 2, eligible_bursts=4, ziip_mt=2, ziip_mt_capacity=2.0)
    mt1 = Dispatch(3, 4, eligible_bursts=4)
    np.testing.assert_array_equal(solve_open(TPS, 1.0, 0.2, 0.8, mt2).resp_ms,
                                  solve_open(TPS, 1.0, 0.2, 0.8, mt1).resp_ms)
    assert mt2.ziip_threads == 4 and mt2.ziip_thread_speed == 1.0


def test_capacity_and_cost_by_hand():
    # 2 GCPs at 0.4 + 1 zIIP at 1, D 1 ms, f 0.5: all work 1.8 units/ms, GCP-only 0.5 of 0.8 units/ms
    dispatch = Dispatch(2, 1, gcp_speed=0.4)
    assert dispatch.max_tps(1.0, 0.5) == pytest.approx(1600.0, rel=1e-12)
    assert Dispatch(2, 1, gcp_speed=0.4, honor_priority=False).max_tps(1.0, 0.5) == pytest.approx(1600.0)
    assert Dispatch(2, 1, gcp_speed=0.4, honor_priority=False).max_tps(1.0, 0.8) == pytest.approx(1250.0)
    # a quarter of 0.6 ms eligible helped: GCP (0.4 + 0.15) / 0.4, zIIP 0.45; CP-equivalent D / 0.4
    cost = cost_per_tran(1.0, 0.6, 0.25, Dispatch(2, 1, gcp_speed=0.4))
    np.testing.assert_allclose([cost["gcp_ms"], cost["ziip_ms"], cost["engine_ms"], cost["cp_equiv_ms"]],
                               [1.375, 0.45, 1.825, 2.5], rtol=1e-12)


@pytest.mark.parametrize("kwargs,message", [
    ({"ziip_mt": 2}, "ziip_mt=2 needs ziip_mt_capacity"),
    ({"ziip_mt": 3, "ziip_mt_capacity": 1.2}, "ziip_mt must be 1 or 2"),
    ({"ziip_mt_capacity": 1.2}, "applies only to ziip_mt=2"),
    ({"gcp_speed": 0.0}, "gcp_speed must be > 0"),
])
def test_bad_engines_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Dispatch(2, 1, **kwargs)


def test_speeds_and_mt_capacity_read_back_from_smf_72_3():
    # GCP at 40 % of a zIIP's speed: R723NFFS = 256 / 0.4 = 640; SMT-2 zIIPs, R723MCFS 1331 / 1024
    k = synth.Coefficients(nffs=640, mcfs=1331)
    start = dt.datetime(2025, 3, 3, 14, 15)
    records = [synth.record_72_3("SYSA", "P", start + dt.timedelta(minutes=15 * i), 900.0, "C", "W",
                                 [synth.Period(ended=100, tcb_s=50.0 + i, ziip_s=20.0 + i)], k) for i in range(3)]
    table = decode_file(io.BytesIO(b"".join(records))).smf72_workload
    engines = speeds_from_smf72(table)
    assert engines.gcp_speed == 1.0 and engines.intervals == 3
    np.testing.assert_allclose([engines.ziip_speed, engines.ziip_mt_capacity], [2.5, 1331 / 1024], rtol=1e-12)
    assert engines.dispatch_options() == {"gcp_speed": 1.0, "ziip_speed": engines.ziip_speed, "ziip_mt": 2,
                                          "ziip_mt_capacity": engines.ziip_mt_capacity}
    mt1 = decode_file(io.BytesIO(synth.record_72_3("SYSA", "P", start, 900.0, "C", "W",
                                                   [synth.Period(ended=1, tcb_s=5.0, ziip_s=2.0)],
                                                   synth.Coefficients()))).smf72_workload
    assert speeds_from_smf72(mt1).ziip_mt_capacity is None and speeds_from_smf72(mt1).ziip_speed == 1.0


def test_the_speeds_grid_against_its_reference_simulation():
    # GCPs at 40 % of zIIP speed and SMT-2 zIIPs (CF 1.3), open and closed, 30-85 % of capacity:
    # every point whose simulated busy is <= 85 % within 10 % (the same-speed grid's goal)
    bench = bench_module("bench_dispatch_speeds")
    table = bench.score(pd.read_csv(ROOT / "benchmarks" / "reference" / "dispatch_speeds_sim.csv"), 1.3)
    low = table[table["busy_pct"] <= 85.0]
    assert len(low) >= 80 and set(low["engines"]) == {"sub40", "mt2"}
    assert (low["err_pct"].abs() <= 10.0).all(), low.loc[low["err_pct"].abs() > 10.0, [*bench.KEYS, "err_pct"]]


def test_a_sub_capacity_point_against_the_simulation():
    # 2 GCPs at 0.4 + 1 zIIP, f 0.9, open at 60 % of capacity: GCPs help the zIIP at 0.4 speed
    dispatch = Dispatch(2, 1, eligible_bursts=4, gcp_speed=0.4)
    tps = 0.6 * dispatch.max_tps(1.0, 0.9)
    model = solve_open(tps, 1.0, 0.2, 0.9, dispatch).resp_ms[0, 0]
    row = simulate(SimScenario(tps=tps, n_gcp=2, n_ziip=1, cpu_ms_per_tran=1.0, ziip_eligible_fraction=0.9,
                               delay_ms=0.2, eligible_bursts=4, gcp_speed=0.4), replications=4, transactions=8000,
                   seed=5).iloc[0]
    assert row["ziip_eligible_on_gcp_share_pct"] > 5.0  # help at GCP speed is part of the answer
    assert model == pytest.approx(row["resp_ms"], rel=0.10)


def test_a_slower_gcp_moves_the_knee_of_a_fitted_model():
    # seed 004 (2 GCPs + 2 zIIPs): with no zIIP all work runs on the GCPs, at 0.4 speed 2.5x the
    # demand, so saturation is N* = (D / 0.4 + R0 + Z) / (D / (0.4 * 2))
    bench = bench_module("bench_engines_plan")
    from kneecap.modeling import ClosedMVAModel

    fit = ClosedMVAModel(n_boot=4, seed=1).fit(bench.SEED004)
    slow = on_engines(fit, gcp_speed=0.4, ziip_speed=1.0)
    knee = slow.knee(n_gcp=2, n_ziip=0, think_time_ms=200.0)
    d, r0 = fit.cpu_ms_per_tran, fit.delay_ms
    assert knee.saturation == pytest.approx((d / 0.4 + r0 + 200.0) / (d / 0.8), rel=1e-9)
    assert knee.load < fit.knee(n_gcp=2, n_ziip=0, think_time_ms=200.0).load
    with pytest.raises(ValueError, match="ziip_mt=2 needs"):
        on_engines(fit, ziip_mt=2)


def test_the_smt_plan_at_capacity_factor_two_judges_each_core_as_two_ziips():
    from kneecap.modeling import ClosedMVAModel
    from kneecap.modeling.ziip import PlannerPolicy, plan_smt, smt_sentence

    fit = ClosedMVAModel(n_boot=4, seed=1).fit(bench_module("bench_engines_plan").SEED004)
    plans = plan_smt(fit, mt_capacity=2.0, clients=400, think_time_ms=200.0, n_gcp=2, slo_resp_ms=3.0,
                     policy=PlannerPolicy(max_n_ziip=6))
    mt1, mt2 = plans["mt1"].table.set_index("n_ziip"), plans["mt2"].table.set_index("n_ziip")
    for cores in (1, 2, 3):
        np.testing.assert_allclose(mt2.loc[cores, "resp_ms"], mt1.loc[2 * cores, "resp_ms"], rtol=1e-12)
    assert plans["mt2"].n_ziip == (plans["mt1"].n_ziip + 1) // 2
    assert smt_sentence(plans, 2.0).endswith("in SMT-2 (MT capacity factor 2)")


def test_a_forecast_scenario_answers_on_its_engines_with_both_costs(seed004_models):  # noqa: F811
    models = seed004_models  # seed 004 Table 1 from the bundled measurements, fitted
    base = forecasting.forecast_scenario(models, {**SCENARIO, "clients": 300}, POLICY)
    slow = forecasting.forecast_scenario(models, {**SCENARIO, "clients": 300, "gcp_speed": 0.4, "ziip_speed": 1.0},
                                         POLICY)
    assert "cpu_cp_equiv_ms_per_tran" not in base
    d, f = slow["demand_ms_per_tran"], slow["ziip_eligible_fraction"]
    spill = slow["ziip_eligible_on_gcp_share_pct"] / 100.0
    # engine time: GCP work at 0.4, zIIP work at 1; CP-equivalent: all of it as if on a GCP
    np.testing.assert_allclose([slow["cpu_engine_ms_per_tran"], slow["cpu_cp_equiv_ms_per_tran"]],
                               [((1 - f) * d + spill * f * d) / 0.4 + (1 - spill) * f * d, d / 0.4], rtol=1e-12)
    assert slow["resp_ms"] > base["resp_ms"]  # the GCP-only work runs 2.5 times as long
    with pytest.raises(ValueError, match="applies only to ziip_mt=2"):
        forecasting.forecast_scenario(models, {**SCENARIO, "ziip_mt_capacity": 1.3}, POLICY)


def test_a_wlm_class_answers_on_slower_gcps_and_on_smt2_ziips():
    from kneecap.modeling.open_dispatch import OpenDispatchModel
    from tests.modeling.test_open_dispatch import intervals

    res = OpenDispatchModel(n_boot=4, seed=3).fit(intervals())
    # both engines twice as fast: the other classes' work takes half the busy it did, and every
    # pool carries twice the class's tps at that busy
    fast = on_engines(res, gcp_speed=2.0, ziip_speed=2.0)
    half = {"bg_gcp_busy_pct": res.base["bg_gcp_busy_pct"] / 2, "bg_ziip_busy_pct": res.base["bg_ziip_busy_pct"] / 2}
    assert fast.max_tps() == pytest.approx(2.0 * res.max_tps(**half), rel=1e-12)
    assert fast.lpar(pd.DataFrame(index=[0]))["bg_gcp_busy_pct"][0] == pytest.approx(half["bg_gcp_busy_pct"])
    slow = on_engines(res, gcp_speed=0.4, ziip_speed=1.0)
    tps = 0.5 * slow.max_tps()
    frame = pd.DataFrame({"tps": [tps]})
    assert slow.predict(frame)["resp_ms"].iloc[0] > res.predict(frame)["resp_ms"].iloc[0]
    assert slow.knee().load < res.knee().load
    # SMT-2 at a capacity factor of 2: two full-speed threads a core, the other classes' zIIP work
    # per thread as on twice the zIIPs in MT-1
    smt = on_engines(res, ziip_mt=2, ziip_mt_capacity=2.0)
    cores, threads = pd.DataFrame({"tps": [tps], "n_ziip": [1]}), pd.DataFrame({"tps": [tps], "n_ziip": [2]})
    np.testing.assert_allclose(smt.predict(cores, max_draws=0)["resp_ms"], res.predict(threads, max_draws=0)["resp_ms"],
                               rtol=1e-12)
    assert smt.lpar(cores)["bg_ziip_busy_pct"][0] == pytest.approx(res.lpar(threads)["bg_ziip_busy_pct"][0])


def test_fit_engines_reads_smt2_from_the_marts_capacity_factor():
    from kneecap.modeling.engines import fit_engines, measured_mt_capacity, row_ziip_mt_capacity

    ziip = np.array([20.0, 30.0, 40.0, 0.0])
    mt2 = pd.DataFrame({"ziip_s": ziip, "ziip_cp_equiv_s": ziip, "ziip_mt_capacity": [1.3, 1.3, 1.3, np.nan]})
    # the zIIPs in SMT-2 and alike in speed: the speeds 1, the threads at CF 1.3
    assert fit_engines(mt2) == {"gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 2, "ziip_mt_capacity": 1.3}
    # a sub-capacity LPAR (NFFS 640) in SMT-2: both
    sub = mt2.assign(ziip_cp_equiv_s=2.5 * ziip)
    assert fit_engines(sub) == {"gcp_speed": 1.0, "ziip_speed": pytest.approx(2.5), "ziip_mt": 2,
                                "ziip_mt_capacity": 1.3}
    np.testing.assert_array_equal(row_ziip_mt_capacity(mt2), [1.3, 1.3, 1.3, 1.0])
    # MT-1 in most rows with zIIP time, or no column (report tables, RMF XML): MT-1
    mostly_mt1 = mt2.assign(ziip_mt_capacity=[1.3, np.nan, np.nan, np.nan])
    assert measured_mt_capacity(mostly_mt1) is None and fit_engines(mostly_mt1) == {}
    assert fit_engines(mt2.drop(columns=["ziip_mt_capacity"])) == {}
    np.testing.assert_array_equal(row_ziip_mt_capacity(mt2.drop(columns=["ziip_mt_capacity"])), 1.0)


def test_other_classes_measured_in_smt2_carry_their_work_onto_other_engines():
    from kneecap.modeling.engines import answering_engines, background_scale

    measured = {"gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 2, "ziip_mt_capacity": 1.3}
    # on the measured engines the zIIP busy stays; onto GCPs a thread-busy-core is CF MT-1 engines
    assert background_scale(measured, measured) == (1.0, 1.0, 1.3)
    # the same work on MT-1 zIIPs: each thread's busy x CF per zIIP; onto GCPs likewise
    mt1 = answering_engines(measured, {"ziip_mt": 1})
    assert mt1 == {"gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 1}
    np.testing.assert_allclose(background_scale(measured, mt1), (1.0, 1.3, 1.3), rtol=1e-12)
    np.testing.assert_allclose(background_scale(measured, {**measured, "ziip_mt_capacity": 2.0}),
                               (1.0, 0.65, 1.3), rtol=1e-12)
    Dispatch(n_gcp=1, n_ziip=1, **mt1)  # what the class then answers on is a valid LPAR


def test_a_class_fitted_in_smt2_at_factor_two_is_the_class_on_twice_the_mt1_ziips():
    # 1 zIIP core in SMT-2 at CF 2 is two full-speed threads: the 2 MT-1 zIIPs of the intervals.
    # RMF's APPL% IIP is then half (zIIP time over the interval x 2), the busy per thread the
    # busy per MT-1 zIIP, and the fit must find the same class
    from kneecap.modeling.open_dispatch import OpenDispatchModel
    from tests.modeling.test_open_dispatch import intervals

    mt1_rows = intervals()
    mt2_rows = mt1_rows.assign(n_ziip=1.0, cpu_ziip_pct=mt1_rows["cpu_ziip_pct"] / 2, ziip_mt_capacity=2.0)
    mt1, mt2 = (OpenDispatchModel(n_boot=4, seed=3).fit(rows) for rows in (mt1_rows, mt2_rows))
    assert mt2.measured_engines == {"gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 2, "ziip_mt_capacity": 2.0}
    assert mt2.cpu_ms_per_tran == pytest.approx(mt1.cpu_ms_per_tran, rel=1e-12)
    assert mt2.base["n_ziip"] == 1 and mt2.base["bg_ziip_busy_pct"] == pytest.approx(mt1.base["bg_ziip_busy_pct"])
    assert mt2.knee(max_draws=0).load == pytest.approx(mt1.knee(max_draws=0).load, rel=1e-9)
    frame = pd.DataFrame({"tps": [600.0, 1200.0]})
    pred1, pred2 = mt1.predict(frame, max_draws=0), mt2.predict(frame, max_draws=0)
    np.testing.assert_allclose(pred2["resp_ms"], pred1["resp_ms"], rtol=1e-9)
    # APPL% IIP as RMF reports it in SMT-2: the zIIP work over the capacity factor
    np.testing.assert_allclose(pred2["cpu_ziip_pct"], pred1["cpu_ziip_pct"] / 2, rtol=1e-9)
    assert "zIIP cores in SMT-2 at MT capacity factor 2" in mt2.summary()
    # asked in MT-1 on 2 zIIPs it is the MT-1 class again
    back = on_engines(mt2, ziip_mt=1)
    assert back.knee(n_ziip=2, max_draws=0).load == pytest.approx(mt1.knee(max_draws=0).load, rel=1e-9)


def test_the_desk_inputs_of_a_class_measured_in_smt2():
    from kneecap.modeling.engines import chosen_engines

    measured = {"gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 2, "ziip_mt_capacity": 1.3}
    # its own mode, factor and share: the measured engines
    assert chosen_engines(measured, 1.0, ziip_mt=2, ziip_mt_capacity=1.3) == {}
    # MT-1 asked: MT-1 zIIPs (on_engines drops the factor); another factor: that one
    assert chosen_engines(measured, 1.0) == {"gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 1}
    assert chosen_engines(measured, 1.0, ziip_mt=2, ziip_mt_capacity=1.2) == {
        "gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 2, "ziip_mt_capacity": 1.2}
    # engines measured in MT-1 as before
    assert chosen_engines({}, 1.0) == {}
