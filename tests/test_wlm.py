"""The Performance Index rules of kneecap.wlm against hand-counted cases and IBM's definitions."""

import numpy as np
import pytest

from kneecap import wlm


def _counts(*pairs: tuple[int, int]) -> np.ndarray:
    c = np.zeros(14)
    for bucket, n in pairs:
        c[bucket - 1] = n
    return c


def test_percentile_pi_is_the_bound_of_the_bucket_the_percentile_reaches():
    # 100 transactions: 80 within 50 % of the goal, 9 in 90-100 %, 1 in 100-110 %, 10 in 150-200 %.
    # 90 % have completed by the end of bucket 7 (80 + 9 + 1 = 90): PI 1.1 (IBM SMF Explorer takes
    # the bucket's bound, 110 %, not a point inside it)
    pi, bucket = wlm.percentile_performance_index(_counts((1, 80), (6, 9), (7, 1), (12, 10)), 90)
    assert (pi[0], bucket[0]) == (pytest.approx(1.1), 7)
    # at 91 % the 10 transactions of bucket 12 are needed: PI 2.0
    pi, bucket = wlm.percentile_performance_index(_counts((1, 80), (6, 9), (7, 1), (12, 10)), 91)
    assert (pi[0], bucket[0]) == (pytest.approx(2.0), 12)


def test_percentile_share_is_compared_exactly():
    # 29 of 100 at a 29 % goal reach it in bucket 1; 29/100*100 is 28.999999999999996 in floating point
    assert 29 / 100 * 100 < 29
    pi, bucket = wlm.percentile_performance_index(_counts((1, 29), (14, 71)), 29)
    assert (pi[0], bucket[0]) == (0.5, 1)


def test_open_bucket_and_no_transactions():
    pi, bucket = wlm.percentile_performance_index(np.vstack([_counts((1, 5), (14, 95)), np.zeros(14)]), 90)
    assert pi[0] == wlm.OPEN_BUCKET_PI and bucket[0] == 14
    assert np.isnan(pi[1]) and bucket[1] == 0


def test_percentile_pi_from_individual_response_times():
    # an independent count: the goal percentile's order statistic over the goal lies in the PI's bucket
    rng = np.random.default_rng(3)
    goal_ms = 5.0
    for _ in range(50):
        resp = rng.gamma(2.0, rng.uniform(0.5, 3.0), size=int(rng.integers(20, 400)))
        bounds = np.array(wlm.RT_BUCKET_MAX_PCT) / 100 * goal_ms
        counts = np.bincount(np.searchsorted(bounds, resp, side="left"), minlength=14)
        pi, bucket = wlm.percentile_performance_index(counts, 90)
        # the smallest response r with at least 90 % of the responses <= r
        r90 = np.sort(resp)[int(np.ceil(0.9 * resp.size)) - 1]
        edges = np.concatenate([[0.0], bounds, [np.inf]])
        assert edges[bucket[0] - 1] < r90 <= edges[bucket[0]]
        if bucket[0] < 14:
            assert pi[0] == pytest.approx(edges[bucket[0]] / goal_ms)


def test_average_velocity_and_discretionary():
    assert wlm.average_performance_index(6.0, 4.0) == pytest.approx(1.5)
    # velocity 100 x 30 / (30 + 70) = 30 % against a 40 % goal: PI 40 / 30
    assert wlm.velocity_performance_index(30, 70, 40) == pytest.approx(4 / 3)
    assert np.isnan(wlm.velocity_performance_index(0, 0, 40))
    pi = wlm.performance_index(
        np.array(["percentile", "average", "velocity", "discretionary", "system"], dtype=object),
        counts=np.tile(_counts((6, 10)), (5, 1)), goal_percentile=np.array([90, 0, 0, 0, 0]),
        resp_ms=np.array([0.0, 6.0, 0, 0, 0]), goal_resp_ms=np.array([5.0, 4.0, np.nan, np.nan, np.nan]),
        using_samples=np.array([0, 0, 30, 0, 0]), delay_samples=np.array([0, 0, 70, 0, 0]),
        goal_velocity_pct=np.array([np.nan, np.nan, 40, np.nan, np.nan]))
    np.testing.assert_allclose(pi[:4], [1.0, 1.5, 4 / 3, 0.81], rtol=1e-12)
    assert np.isnan(pi[4])


def test_sysplex_pi_of_systems_alike_is_their_local_pi():
    counts = _counts((5, 50), (6, 40), (12, 10))
    local = wlm.performance_index(np.array(["percentile"], dtype=object), counts=counts[None, :],
                                  goal_percentile=np.array([90.0]), resp_ms=np.array([4.0]),
                                  goal_resp_ms=np.array([5.0]), using_samples=np.array([1.0]),
                                  delay_samples=np.array([1.0]), goal_velocity_pct=np.array([np.nan]))[0]
    plex = wlm.sysplex_performance_index("percentile", counts=np.stack([counts, counts]), goal_percentile=90,
                                         ended=[100, 100], resp_ms=[4.0, 4.0], goal_resp_ms=5.0,
                                         using_samples=[1, 1], delay_samples=[1, 1], goal_velocity_pct=np.nan)
    assert plex == local == pytest.approx(1.0)


def test_sysplex_pi_reads_the_summed_counts_not_the_mean_of_the_local_pis():
    goal = {"goal_percentile": 90, "goal_resp_ms": 5.0, "goal_velocity_pct": 40.0}
    fast, slow = _counts((5, 450), (6, 405), (7, 45)), _counts((7, 50), (12, 50))  # local PI 1.0 and 2.0
    # of the 1000 transactions 855 completed by bucket 6, 950 by bucket 7 (the 45 fast and 50 slow): PI 1.1
    pi = wlm.sysplex_performance_index("percentile", counts=np.stack([fast, slow]), ended=[900, 100],
                                       resp_ms=[4.0, 9.0], using_samples=[0, 0], delay_samples=[0, 0], **goal)
    assert pi == pytest.approx(1.1)
    # average: (900 x 4 + 100 x 20) / 1000 = 5.6 ms; a system that ended nothing adds nothing (its mean is NaN)
    pi = wlm.sysplex_performance_index("average", counts=np.zeros((3, 14)), ended=[900, 100, 0],
                                       resp_ms=[4.0, 20.0, np.nan], using_samples=[0, 0, 0],
                                       delay_samples=[0, 0, 0], **goal)
    assert pi == pytest.approx(5.6 / 5.0)
    # velocity: 350 using of 900 samples (38.9 %), not the mean of 75 % and 10 %
    pi = wlm.sysplex_performance_index("velocity", counts=np.zeros((2, 14)), ended=[0, 0], resp_ms=[np.nan] * 2,
                                       using_samples=[300, 50], delay_samples=[100, 450], **goal)
    assert pi == pytest.approx(40.0 / (100 * 350 / 900))
    assert np.isnan(wlm.sysplex_performance_index("average", counts=np.zeros((2, 14)), ended=[0, 0],
                                                  resp_ms=[np.nan] * 2, using_samples=[0, 0],
                                                  delay_samples=[0, 0], **goal))
