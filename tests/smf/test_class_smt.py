"""A WLM class answered with its zIIPs in SMT-2, against the dispatcher simulation (issue #37).

The class of the SMF round trip's simulated days (:mod:`tests.smf.simdays`, 2 GCPs + 2 zIIPs in
MT-1, other classes 30 % per GCP and 10 % per zIIP) fitted as the train stage fits it, then
answered on 1 and 2 zIIP cores in SMT-2 at an MT capacity factor of 1.3 (an input, not a published
figure): ``n`` cores are ``2 n`` threads of 0.65 a core's speed, and the other classes' zIIP work
(0.2 zIIP engines) keeps ``0.2 / (n 1.3)`` of each thread busy
(:func:`kneecap.modeling.engines.background_scale`). The simulation runs the same threads.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from kneecap.modeling.engines import on_engines
from kneecap.modeling.open_dispatch import OpenDispatchModel
from kneecap.simulation import simulate
from tests.smf import simdays as sd

CF = 1.3


@pytest.fixture(scope="module")
def fit():
    records, truth = sd.simulated_days(seed=11)
    return OpenDispatchModel(n_boot=0, calibrate=False).fit(sd.class_rows(records, truth))


# measured: 1 core +0.2 / +5.1 / -5.3 %, 2 cores +0.3 / -1.0 / +6.1 % at 30 / 60 / 85 % of capacity
@pytest.mark.parametrize("cores", [1, 2])
@pytest.mark.parametrize("share", [0.3, 0.6, 0.85])
def test_a_class_on_smt2_ziips_follows_the_simulation(fit, cores, share):
    smt = on_engines(fit, ziip_mt=2, ziip_mt_capacity=CF)
    tps = share * smt.max_tps(n_ziip=cores)
    config = sd.CONFIG
    per_thread = 100.0 * config.bg_ziip_busy_pct / 100.0 * config.n_ziip / (cores * CF)
    lpar = smt.lpar(pd.DataFrame({"n_ziip": [cores]}))
    assert lpar["bg_ziip_busy_pct"][0] == pytest.approx(per_thread * fit.base["bg_ziip_busy_pct"]
                                                        / config.bg_ziip_busy_pct)  # the fit's measured busy
    scenario = replace(config, n_ziip=2 * cores, ziip_speed=CF / 2, bg_ziip_busy_pct=per_thread).scenario(tps)
    sim = simulate(scenario, replications=4, transactions=20000, seed=7).iloc[0]
    model = smt.predict(pd.DataFrame([{"tps": tps, "n_ziip": cores}]), max_draws=0).iloc[0]
    assert model["resp_ms"] == pytest.approx(sim["resp_ms"], rel=0.10)
    assert model["ziip_busy_pct"] == pytest.approx(sim["ziip_busy_pct"], abs=7.0)


def test_smt2_moves_the_class_knee_out(fit):
    smt = on_engines(fit, ziip_mt=2, ziip_mt_capacity=CF)
    # 1 core: 1159 -> 1641 tps; 2 cores: 2417 -> 3390
    for cores in (1, 2):
        assert smt.knee(n_ziip=cores, max_draws=0).load > 1.3 * fit.knee(n_ziip=cores, max_draws=0).load
