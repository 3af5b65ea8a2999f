"""The pool rule's help cycle (``dispatch._help_cycle._help_cycle_wait``) against the dispatcher simulation.

Where the zIIPs cannot keep up, GCPs help in cycles; the model takes the cycle beside M/M/c+D.
Each comparison here simulates afresh (or reads the reference grid the bench keeps) and checks the
model against it, not against numbers the model once gave.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap.modeling.dispatch import Dispatch, solve_open
from kneecap.modeling.dispatch._help_cycle import Cycle, help_cycle_waits
from kneecap.modeling.dispatch._memo import new_memo
from kneecap.modeling.dispatch._open import open_residence
from kneecap.modeling.dispatch._open_queues import queue_residence
from kneecap.modeling.dispatch._rules import Rules
from kneecap.simulation import SimScenario, simulate
from tests.modeling.benches import bench as bench_module

ROOT = Path(__file__).resolve().parents[2]


def _sim_and_model(n_gcp, n_ziip, d, f, tau, bursts, tps):
    scenario = SimScenario(tps=tps, n_gcp=n_gcp, n_ziip=n_ziip, cpu_ms_per_tran=d, ziip_eligible_fraction=f,
                           delay_ms=0.2, help_wait_ms=tau, eligible_bursts=bursts, gcp_bursts=1)
    row = simulate(scenario, replications=6, transactions=20000, seed=7).iloc[0]
    dispatch = Dispatch(n_gcp, n_ziip, help_wait_ms=tau, eligible_bursts=bursts)
    return row, float(solve_open(tps, d, 0.2, f, dispatch).resp_ms[0, 0]), dispatch


def test_a_ziip_added_can_raise_response_where_the_ziips_fall_behind():
    # 3 GCPs, f 0.9, four eligible bursts, ZIIPAWMT 3.2 ms, 2985 tps: 2.7 engines of eligible work.
    # With one zIIP the pool needs help most of the time and the bursts offered then wait little;
    # with two it needs help less often and more bursts wait up to ZIIPAWMT for it
    one, model_one, dispatch = _sim_and_model(3, 1, 1.005, 0.9, 3.2, 4, 2985.0)
    two, model_two, _ = _sim_and_model(3, 2, 1.005, 0.9, 3.2, 4, 2985.0)
    assert dispatch.ziips_fall_behind(2985.0, 1.005, 0.9)
    assert two["resp_ms_lo"] > one["resp_ms_hi"]  # the simulation: worse with the second zIIP
    assert model_two > model_one  # and the model, the same way
    for row, model in ((one, model_one), (two, model_two)):
        assert model == pytest.approx(row["resp_ms"], rel=0.10)


def test_the_cycle_follows_the_simulation_where_help_is_long_in_coming():
    # ZIIPAWMT 10 ms on 2 GCPs + 1 zIIP, every burst eligible: the M/M/c+D rule alone was 32 % high
    one, model, _ = _sim_and_model(2, 1, 1.0, 1.0, 10.0, 4, 2250.0)
    assert model == pytest.approx(one["resp_ms"], rel=0.05)


def _grid_scores() -> pd.DataFrame:
    bench_dispatch = bench_module("bench_dispatch")
    table = pd.read_csv(ROOT / "benchmarks" / "reference" / "dispatch_grid_sim.csv")
    model = [bench_dispatch._model_resp_ms(int(r.n_gcp), int(r.n_ziip), float(r.f), r.honor == "YES", r.load,
                                           float(r.share))[0] for r in table.itertuples()]
    table["err_pct"] = 100.0 * (np.array(model) / table["sim_resp_ms"] - 1.0)
    return table


def test_the_grid_against_its_reference_simulation():
    # the bench's grid (n_gcp 1-8, n_ziip 0-4, f 0.3 / 0.95, honor YES / NO, closed and open) scored
    # against the simulation kept in benchmarks/reference: before the help cycle 32 points at
    # <= 85 % busy were 10-73 % off, all with GCPs helping a zIIP pool that could not keep up
    table = _grid_scores()
    err = table["err_pct"].abs()
    low, high = err[table["busy_pct"] <= 85.0], err[table["busy_pct"] <= 95.0]
    assert low.mean() <= 2.5 and low.max() <= 25.0
    assert (low <= 10.0).sum() >= 373  # 365 when a falling response was held at its least
    # up to 95 % busy every point within 25 %: 1 GCP + 2 zIIPs at 95 % was -29.6 % before the pool
    # rule's in-help wait had the random walk's term
    assert (high <= 25.0).all() and high.max() <= 15.0


@pytest.mark.xfail(strict=True, reason="known (#10): 1 of 374 points at <= 85 % busy is 10.3 % off (8 GCPs + "
                   "1 zIIP, open, 60 % load), where the simulation's response falls 1.24x from 17.5 % to 60 % "
                   "of capacity, so no curve that never falls with load is within 10 % at both "
                   "(docs/benchmarks.md)")
def test_every_grid_point_up_to_85_percent_busy_is_within_10_percent():
    table = _grid_scores()
    assert (table.loc[table["busy_pct"] <= 85.0, "err_pct"].abs() <= 10.0).all()


def _raw_and_model(n_gcp, n_ziip, d, f, bursts, tau, lams):
    """The residence the queues give (pool rule, the cycle where smaller: no hold) and the model's, R0 left out."""
    rules = Rules(bursts, 1, n_gcp, n_ziip, True, tau, True, 0.0, 0.0, 0.2, 1.0)
    memo = new_memo()
    model = np.array([open_residence(lam, d, f, rules, memo)[0] for lam in lams])
    s_e = f * d / bursts
    raw = []
    for lam in lams:
        r = queue_residence(lam, d, f, rules, memo)[0]
        cyc = Cycle(s_e, bursts, 1, float(n_ziip), n_gcp, (1.0 - f) * d, 0.0, 0.2, tau, 1.0)
        e, g, _, _ = help_cycle_waits(lam, cyc)
        raw.append(min(r, d + e + g))  # the cycle's weight is 1 here (ZIIPAWMT spans 17 bursts)
    return np.array(raw), model


def test_where_the_response_falls_with_load_the_model_holds_it_with_the_least_worst_error():
    # 8 GCPs + 1 zIIP, f 0.95, 4 bursts: the queues' response rises past the zIIP's capacity, falls
    # as more bursts are offered while GCPs help, then rises to saturation (the simulation's too:
    # 3.80 / 5.45 / 4.34 ms at 86 / 145 / 513 % of the zIIP). No monotone curve can be nearer than
    # sqrt(U / L) (U the highest response at or below a load, L the least at or above it); the
    # model is monotone and reaches that bound, not the twice as large error of holding L alone
    d, f, bursts = 0.8, 0.95, 4
    cap = 1.0 / (f * d)  # tran/ms the zIIP carries
    lams = np.linspace(0.8 * cap, 7.5 * cap, 3000)
    raw, model = _raw_and_model(8, 1, d, f, bursts, 3.2, lams)
    assert np.all(np.isfinite(raw)) and np.all(np.diff(model) >= -1e-12 * model[1:])
    upper = np.maximum.accumulate(raw)
    lower = np.minimum.accumulate(raw[::-1])[::-1]
    bound = np.log(np.sqrt(upper / lower)).max()
    assert bound > np.log(np.sqrt(1.25))  # the raw curve really does fall: peak over trough > 1.25
    worst = np.abs(np.log(model / raw)).max()
    assert worst <= bound + 1e-3
    assert worst >= bound - 1e-2  # and no better is possible: the bound is met at the peak or trough
