"""A WLM class measured on zIIPs in SMT-2 (issue #37 item 2): the fit on the engines it ran on.

Known truth: ten simulated days (:mod:`tests.smf.simdays`, variant ``smt2``) of the 2 GCP + 2 zIIP
LPAR with its zIIP cores in SMT-2 at an MT capacity factor of 1331 / 1024 (R723MCFS 1331, the
numerator nearest 1.3), simulated by :mod:`kneecap.simulation` on the 4 threads of 0.65 an MT-1
zIIP each (``tests/smf/data/simdays_grid_smt2.csv``), the other classes 10 % of each thread. The
records carry what IBM's do in MT-2: 72.3 zIIP times MT-1 equivalent with R723MCFS 1331 (so RMF's
APPL% IIP is that time over the interval x 1331 / 1024), and 70.1 one PR/SM logical processor section
per zIIP core, one CPU data section per thread, SMF70MTID, SMF70MCFS and the logical core data
sections (:func:`tests.smf.synth.record_70_1`). They are decoded and built into the marts by
kneecap's own pipeline code. The fit that reads ``ziip_mt_capacity`` is checked against the
simulation's knee and response; the same week fitted as before the marts carried it (no
``ziip_mt_capacity``, the zIIP cores' LPAR busy) against it, to say how far off that was.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kneecap.modeling.engines import fit_engines, on_engines
from kneecap.modeling.open_dispatch import OpenDispatchModel, OpenDispatchResults
from tests.smf import simdays as sd

VARIANT = sd.VARIANTS["smt2"]
CF = 1331 / 1024


@pytest.fixture(scope="module")
def week():
    records, truth = sd.variant_days("smt2", seed=11)
    return records, sd.class_rows(records, truth), truth


@pytest.fixture(scope="module")
def fits(week):
    records, rows, _ = week
    # the marts before they carried the MT capacity factor: APPL% IIP as RMF gives it, the zIIPs'
    # busy the cores' LPAR busy (PR/SM dispatch time over online time), the fit on MT-1 engines
    _, cpu = sd.decode_days(records)
    core_busy = cpu[cpu["cpu_type"] == "IIP"].set_index("interval_start_at")["lpar_busy_pct"]
    before = rows.drop(columns=["ziip_mt_capacity"]).assign(
        lpar_ziip_busy_pct=core_busy.loc[rows["interval_start_at"]].to_numpy())
    model = OpenDispatchModel(n_boot=20, calibrate=False)
    return model.fit(rows), model.fit(before)


def test_the_week_decodes_to_the_written_mt_fields(week):
    records, rows, truth = week
    assert VARIANT.mcfs == 1331
    # APPL% IIP within 1e-9 of the truth (MT-1 equivalent time over T x 1331 / 1024), LPAR busy
    # per zIIP thread the threads' MVS busy, class + background APPL% IIP over the cores = it
    assert sd.check_round_trip(records, truth)["appl_iip_pct"] < 1e-9
    assert (rows["ziip_mt_capacity"] == CF).all()  # exactly R723MCFS / 1024
    assert (rows["n_ziip"] == VARIANT.n_ziip).all()  # cores: PR/SM's logical processors are cores in MT-2
    assert fit_engines(rows) == {"gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 2, "ziip_mt_capacity": CF}


def test_the_fit_recovers_the_capacity_factor_and_the_knee(week, fits):
    _, _, truth = week
    measured, _ = fits
    assert measured.measured_engines == {"gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 2, "ziip_mt_capacity": CF}
    # demand in MT-1 ms: 0.8003 (truth 0.8), eligible 0.8997 (0.9)
    assert measured.cpu_ms_per_tran == pytest.approx(VARIANT.cpu_ms_per_tran, rel=0.01)
    assert measured.ziip_eligible_fraction == pytest.approx(VARIANT.ziip_eligible_fraction, rel=0.01)
    # the other classes per thread: 10.0002 % (truth 10 %)
    assert measured.base["bg_ziip_busy_pct"] == pytest.approx(VARIANT.bg_ziip_busy_pct, rel=0.02)
    knee = measured.knee()
    # measured: 3305.8 tps against the simulation's 3373.9 (-2.0 %); capacity 4670.7 (4674.6)
    assert knee.load == pytest.approx(truth.knee_tps, rel=0.10)
    assert knee.max_tps == pytest.approx(VARIANT.max_tps, rel=0.01)
    assert "zIIP cores in SMT-2 at MT capacity factor 1.3" in measured.summary()
    back = OpenDispatchResults.from_dict(measured.to_dict())  # kept with the model
    assert back.measured_engines == measured.measured_engines
    assert back.knee(max_draws=0).load == measured.knee(max_draws=0).load


def test_the_same_week_fitted_as_mt1_is_far_off(week, fits):
    _, _, truth = week
    measured, before = fits
    # fitted as before: demand 0.634 ms (-21 %: APPL% IIP is divided by the factor), other classes
    # 23.3 % per zIIP (the cores' LPAR busy), knee 4291.6 tps (+27.2 %) where SMT-2's is -2.0 %
    assert before.measured_engines == {}
    assert before.cpu_ms_per_tran < 0.85 * VARIANT.cpu_ms_per_tran
    assert before.knee().load > 1.2 * truth.knee_tps
    assert abs(measured.knee().load / truth.knee_tps - 1) < 0.05


def test_the_smt2_fit_follows_the_simulation_past_the_knee(fits):
    # the simulated response at every grid level on the base LPAR, up to 95 % of the pools' capacity
    grid, frame = sd.grid_on_base_lpar("smt2")
    measured, before = fits
    err = {name: fit.predict(frame, max_draws=0)["resp_ms"].to_numpy() / grid["resp_ms"].to_numpy() - 1
           for name, fit in (("smt2", measured), ("before", before))}
    # SMT-2: -0.3 .. +4.8 % at all 20 levels; fitted as MT-1: -5.4 .. -59.4 % (-35.1 % at 2980 tps,
    # -59.4 % at 4441)
    assert np.abs(err["smt2"]).max() < 0.10
    assert err["before"].max() < -0.04 and err["before"][-1] < -0.5
    # APPL% IIP as RMF reports it in SMT-2: the simulation's thread time x (CF / 2) / CF = half of it
    pred = measured.predict(frame.iloc[[9]], max_draws=0).iloc[0]
    assert pred["cpu_ziip_pct"] == pytest.approx(grid["cpu_ziip_pct"].iloc[9] / 2, rel=0.01)


def test_asked_in_mt1_the_class_runs_on_whole_ziips(fits):
    measured, _ = fits
    mt1 = on_engines(measured, ziip_mt=1)
    assert mt1.engines == {"gcp_speed": 1.0, "ziip_speed": 1.0, "ziip_mt": 1}
    # the other classes' zIIP work per MT-1 zIIP: 10 % of each of 2 threads x CF per core
    lpar = mt1.lpar(pd.DataFrame(index=[0]))
    assert lpar["bg_ziip_busy_pct"][0] == pytest.approx(measured.base["bg_ziip_busy_pct"] * CF, rel=1e-9)
    # two threads at 0.65 a core do more than one MT-1 zIIP: the class carries less in MT-1
    assert mt1.max_tps() < measured.max_tps()


# measured (4 x 20,000, seed 7): +0.4 / +1.9 / +1.6 % at 30 / 60 / 85 % of the MT-1 capacity
@pytest.mark.parametrize("share", [0.3, 0.6, 0.85])
def test_the_class_measured_in_smt2_answered_in_mt1_follows_the_mt1_simulation(fits, share):
    from dataclasses import replace

    from kneecap.simulation import simulate

    measured, _ = fits
    mt1 = on_engines(measured, ziip_mt=1)
    tps = share * mt1.max_tps()
    # the simulated LPAR in MT-1: 2 whole zIIPs, the other classes' zIIP work as in SMT-2 (x CF)
    scenario = replace(VARIANT, ziip_mt=1, ziip_mt_capacity=None,
                       bg_ziip_busy_pct=VARIANT.bg_ziip_busy_pct * CF).scenario(tps)
    sim = simulate(scenario, replications=4, transactions=20000, seed=7).iloc[0]
    model = mt1.predict(pd.DataFrame([{"tps": tps}]), max_draws=0).iloc[0]
    assert model["resp_ms"] == pytest.approx(sim["resp_ms"], rel=0.10)
