"""Queueing solvers against hand-solvable cases, bounds and textbook values."""

import math

import numpy as np
import pytest

from kneecap.modeling.queueing import erlang_c, mmc_resp_ms, multiserver_mva
from tests.modeling.exact import exact_closed_resp_ms


def test_one_client_sees_no_queue():
    # N = 1: nobody to queue behind, so R = D + R0 and X = 1 / (Z + D + R0) (hand computation)
    sol = multiserver_mva((0.8, 0.3), (2, 1), delay_ms=0.5, think_time_ms=200.0, n_max=1)
    np.testing.assert_allclose(sol.resp_ms[0], 0.8 + 0.3 + 0.5, rtol=1e-12)
    np.testing.assert_allclose(sol.tps[0], 1000.0 / (200.0 + 1.6), rtol=1e-12)


def test_single_server_two_clients_by_hand():
    # exact MVA by hand, D = 1, Z = 1: n=1: R=1, X=1/2, Q=1/2; n=2: R=1.5, X=2/2.5=0.8
    sol = multiserver_mva((1.0,), (1,), delay_ms=0.0, think_time_ms=1.0, n_max=2)
    np.testing.assert_allclose(sol.resp_ms, [1.0, 1.5], rtol=1e-12)
    np.testing.assert_allclose(sol.tps, [500.0, 800.0], rtol=1e-12)


@pytest.mark.parametrize("servers", [1, 2, 3, 8])
def test_large_population_reaches_the_throughput_bound(servers):
    # asymptotic bound X <= c / D (Denning & Buzen operational laws)
    d_ms = 0.76
    sol = multiserver_mva((d_ms,), (servers,), delay_ms=0.5, think_time_ms=200.0, n_max=4000)
    bound = 1000.0 * servers / d_ms
    assert np.all(sol.tps <= bound * (1 + 1e-9))
    np.testing.assert_allclose(sol.tps[-1], bound, rtol=5e-3)
    # and R >= N D_max - Z once saturated
    n = np.arange(1, 4001)
    assert np.all(sol.resp_ms + 1e-9 >= n * d_ms / servers - 200.0)


def _machine_repairman(n_clients, servers, d_ms, z_ms):
    """Closed form of the finite-source M/M/m//N queue (Kleinrock 1975, §3.9), independent of MVA."""
    weights = []
    for j in range(n_clients + 1):
        w = math.factorial(n_clients) / math.factorial(n_clients - j) * (d_ms / z_ms) ** j
        for i in range(1, j + 1):
            w /= min(i, servers)
        weights.append(w)
    p = np.array(weights) / sum(weights)
    busy = sum(p[j] * min(j, servers) for j in range(n_clients + 1))
    x_per_ms = busy / d_ms
    queue = sum(j * p[j] for j in range(n_clients + 1))
    return x_per_ms * 1000.0, queue / x_per_ms


@pytest.mark.parametrize("n_clients,servers", [(5, 1), (10, 3), (25, 4), (40, 2)])
def test_multiserver_mva_matches_machine_repairman(n_clients, servers):
    tps, resp = _machine_repairman(n_clients, servers, d_ms=2.0, z_ms=5.0)
    sol = multiserver_mva((2.0,), (servers,), delay_ms=0.0, think_time_ms=5.0, n_max=n_clients)
    np.testing.assert_allclose(sol.tps[-1], tps, rtol=1e-9)
    np.testing.assert_allclose(sol.resp_ms[-1], resp, rtol=1e-9)


@pytest.mark.parametrize(("demands", "servers", "clients"), [((0.8,), (8,), 1709), ((0.4, 0.4), (2, 4), 1200),
                                                             ((0.3, 0.5, 0.2), (1, 4, 2), 2500)])
def test_recursion_stays_exact_at_thousands_of_clients(demands, servers, clients):
    # p(0 | n) by the utilisation law (subtraction) gave 11.17 ms instead of 1.46 at 8 servers and
    # 1709 clients; by the throughput ratio of the sub-networks it keeps the exact answer
    r0, z = 0.3, 200.0
    sol = multiserver_mva(demands, servers, delay_ms=r0, think_time_ms=z, n_max=clients)
    exact = exact_closed_resp_ms(clients, demands, servers, z + r0) + r0
    assert sol.resp_ms[-1] == pytest.approx(exact, rel=1e-9)


def test_seed004_reference_calculation():
    # modeling-notes §2.3: Z = 200 ms, R0 = 0.562 ms, D = 0.763 ms on 2 servers gives
    # 1.35, 1.45, 1.68, 2.29, 5.15 ms at 100..500 clients; with 3 servers at 500 clients 1.59 ms, 2480 TPS
    sol = multiserver_mva((0.763,), (2,), delay_ms=0.562, think_time_ms=200.0, n_max=500)
    np.testing.assert_allclose(sol.resp_ms[[99, 199, 299, 399, 499]], [1.35, 1.45, 1.68, 2.29, 5.15], atol=0.03)
    three = multiserver_mva((0.763,), (3,), delay_ms=0.562, think_time_ms=200.0, n_max=500)
    np.testing.assert_allclose(three.resp_ms[-1], 1.59, atol=0.01)
    np.testing.assert_allclose(three.tps[-1], 2480, rtol=1e-3)


def test_erlang_c_textbook_values():
    # a = 2 Erlangs on 3 servers: B = 4/19, C = 4/9 (hand computation)
    assert erlang_c(2.0, 3) == pytest.approx(4 / 9, rel=1e-12)
    # one server: C = rho
    assert erlang_c(0.7, 1) == pytest.approx(0.7, rel=1e-12)
    # M/M/1: R = S / (1 - rho)
    assert mmc_resp_ms(500.0, 1.0, 1) == pytest.approx(1.0 / (1 - 0.5), rel=1e-12)
    assert mmc_resp_ms(3000.0, 1.0, 3) == math.inf
    with pytest.raises(ValueError, match="n_servers"):
        erlang_c(1.0, 0)
