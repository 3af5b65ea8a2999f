"""kneecap.simulation.response_quantiles: the simulation's response time distribution at one load."""

from __future__ import annotations

import numpy as np
import pytest

from kneecap.simulation import SimScenario, response_quantiles, response_sample, simulate


def _scenario(tps: float) -> SimScenario:
    return SimScenario(n_gcp=1, n_ziip=1, cpu_ms_per_tran=1.0, ziip_eligible_fraction=0.5, tps=tps, delay_ms=2.0)


def test_the_sample_is_the_replication_simulate_measures():
    # simulate's replication 0 draws from SeedSequence(seed, spawn_key=(0,)), the sample from SeedSequence(seed):
    # the same transactions only in distribution, so the check is on the mean, within the replications' spread
    sample = response_sample(_scenario(300.0), transactions=6000, seed=5)
    assert len(sample) == 6000 - 600 and sample.min() >= 2.0  # the delay outside the CPU is every response's floor
    row = simulate(_scenario(300.0), replications=5, transactions=6000, seed=5).iloc[0]
    half = (row["resp_ms_hi"] - row["resp_ms_lo"]) / 2
    assert abs(sample.mean() - row["resp_ms"]) <= 4 * half * np.sqrt(5)


def test_quantiles_rise_with_probability_and_load():
    low = response_quantiles(_scenario(150.0), (0.5, 0.9, 0.95), transactions=6000, seed=1)
    high = response_quantiles(_scenario(700.0), (0.5, 0.9, 0.95), transactions=6000, seed=1)
    assert np.all(np.diff(low) > 0) and np.all(np.diff(high) > 0) and np.all(high > low)
    with pytest.raises(ValueError, match="warmup_fraction must be in"):
        response_sample(_scenario(150.0), warmup_fraction=1.0)
