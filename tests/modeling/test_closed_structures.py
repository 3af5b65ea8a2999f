"""The closed MVA champion weighs the dispatcher structures a load-test table cannot tell apart.

The tables are made by kneecap's own analytic model under a known structure (help rule, eligible
bursts per transaction) with measurement noise; a fit that weighs every structure must find the one
that made the table, and answer beyond the trained clients with it where the configured structure
(pool help, 4 bursts) answers off.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kneecap.config import TrainConfig
from kneecap.modeling.closed import MIN_STRUCTURE_WEIGHT, ClosedMVAModel, ClosedMVAResults
from kneecap.modeling.dispatch import HELP_RULES, Dispatch, solve_closed

RULES = ("pool", "burst")
BURSTS = (1, 2, 3, 4, 6, 8)
D_MS, R0_MS, F = 0.9, 0.2, 0.95


def _truth(rule: str, bursts: int, n_gcp: int, n_ziip: int, think_ms: float, n_max: int):
    return solve_closed(np.array([D_MS]), np.array([R0_MS]), F,
                        Dispatch(n_gcp=n_gcp, n_ziip=n_ziip, help_rule=rule, eligible_bursts=bursts),
                        think_time_ms=think_ms, n_max=n_max)


def _table(rule: str, bursts: int, clients=(100, 200, 300, 400, 500), n_gcp=2, n_ziip=2, think_ms=200.0,
           seed=1) -> pd.DataFrame:
    sol = _truth(rule, bursts, n_gcp, n_ziip, think_ms, max(clients))
    rng = np.random.default_rng(seed)
    cols = np.array(clients) - 1
    return pd.DataFrame({"clients": clients, "think_time_ms": think_ms, "n_gcp": n_gcp, "n_ziip": n_ziip,
                         "resp_ms": sol.resp_ms[0, cols] * np.exp(rng.normal(0, 0.02, len(cols))),
                         "tps": sol.tps[0, cols] * np.exp(rng.normal(0, 0.005, len(cols)))})


@pytest.fixture(scope="module")
def burst2():
    """A 2 GCP + 2 zIIP table made under the burst rule with 2 eligible bursts, fitted both ways."""
    table = _table("burst", 2)
    weighed = ClosedMVAModel(n_boot=40, help_rules=RULES, burst_options=BURSTS).fit(table)
    fixed = ClosedMVAModel(n_boot=40).fit(table)  # pool help, 4 bursts
    return table, weighed, fixed


def test_the_table_points_at_the_structure_that_made_it(burst2):
    _, weighed, fixed = burst2
    assert (fixed.help_rule, fixed.eligible_bursts) == ("pool", 4)
    assert (weighed.help_rule, weighed.eligible_bursts) == ("burst", 2)
    weights = {(s["help_rule"], s["eligible_bursts"]): s["weight"] for s in weighed.structures}
    assert len(weights) == len(RULES) * len(BURSTS)
    assert sum(weights.values()) == pytest.approx(1.0)
    assert weights[("burst", 2)] == max(weights.values()) > 0.5
    assert "burst help with 2 eligible bursts" in weighed.structure_sentence()


def test_beyond_the_trained_clients_the_weighed_fit_answers_with_the_true_structure(burst2):
    _, weighed, fixed = burst2
    true_ms = float(_truth("burst", 2, 2, 2, 200.0, 700).resp_ms[0, 699])
    scenario = pd.DataFrame({"clients": [700], "n_gcp": 2, "n_ziip": 2, "think_time_ms": 200.0})
    got, off = weighed.predict(scenario).iloc[0], fixed.predict(scenario).iloc[0]
    assert got["resp_ms_lo"] <= true_ms <= got["resp_ms_hi"]
    assert abs(np.log(got["resp_ms"] / true_ms)) < abs(np.log(off["resp_ms"] / true_ms))


def test_draws_carry_only_the_structures_the_band_resolves(burst2):
    _, weighed, _ = burst2
    assert weighed.boot_params.shape == (40, 4)
    kept = {(HELP_RULES.index(s["help_rule"]), s["eligible_bursts"]) for s in weighed.structures
            if s["weight"] >= MIN_STRUCTURE_WEIGHT}
    drawn = {(int(r), int(b)) for r, b in weighed.boot_params[:, 2:4]}
    assert drawn <= kept


def test_mixed_structures_solve_as_each_alone(burst2):
    _, weighed, _ = burst2
    thetas = weighed._thetas()
    sol = weighed._solve_draws(thetas, 2, 1, think_time_ms=100.0, n_max=300)
    for rule_idx, bursts in {(int(r), int(b)) for r, b in thetas[:, 2:4]}:
        rows = np.flatnonzero((thetas[:, 2] == rule_idx) & (thetas[:, 3] == bursts))
        alone = solve_closed(thetas[rows, 1], thetas[rows, 0], weighed.ziip_eligible_fraction,
                             weighed.dispatch(2, 1, (HELP_RULES[rule_idx], bursts)), think_time_ms=100.0, n_max=300)
        np.testing.assert_allclose(sol.resp_ms[rows], alone.resp_ms, rtol=1e-12)
        np.testing.assert_allclose(sol.tps[rows], alone.tps, rtol=1e-12)


def test_a_stored_fit_reads_back_with_its_structures(burst2):
    table, weighed, fixed = burst2
    for res in (weighed, fixed):
        back = ClosedMVAResults.from_dict(res.to_dict())
        assert back.boot_params.shape == res.boot_params.shape
        assert [(s["help_rule"], s["eligible_bursts"]) for s in back.structures] == \
            [(s["help_rule"], s["eligible_bursts"]) for s in res.structures]
        np.testing.assert_allclose([s["weight"] for s in back.structures], [s["weight"] for s in res.structures])
        pd.testing.assert_frame_equal(back.predict(table), res.predict(table))


def test_train_config_refuses_structures_it_cannot_weigh():
    assert TrainConfig(closed_eligible_bursts=[2, 4]).closed_eligible_bursts == (2, 4)
    with pytest.raises(ValueError, match="closed_eligible_bursts"):
        TrainConfig(closed_eligible_bursts=[0, 4])
    with pytest.raises(ValueError, match="closed_help_rules"):
        TrainConfig(closed_help_rules=["fifo"])
