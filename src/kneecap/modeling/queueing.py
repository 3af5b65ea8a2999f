"""Queueing solvers: exact multi-server MVA for closed workloads, Erlang C for open ones (references).

Pure functions on numbers; the fitted models built on them live in :mod:`kneecap.modeling.closed`
and :mod:`kneecap.modeling.open`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np


@dataclass(frozen=True)
class MVASolution:
    """Exact MVA results for populations ``1..n_max`` (index ``n - 1``).

    ``resp_ms`` excludes think time. ``station_busy`` is the mean number of busy servers of each
    station (utilisation law ``U = X * D``), ``all_busy_on_arrival`` the probability that an
    arriving transaction finds every server of a station busy. The zIIP/GCP pools with GCP help
    are :func:`kneecap.modeling.dispatch.solve_closed`, which extends this recursion.
    """

    tps: np.ndarray
    resp_ms: np.ndarray
    station_resp_ms: np.ndarray  # (n_max, n_stations)
    station_busy: np.ndarray  # (n_max, n_stations)
    all_busy_on_arrival: np.ndarray  # (n_max, n_stations): P(all m_k servers busy | n - 1)


def multiserver_mva(
    demands_ms: tuple[float, ...],
    servers: tuple[int, ...],
    *,
    delay_ms: float,
    think_time_ms: float,
    n_max: int,
) -> MVASolution:
    """Exact MVA for one class over multi-server (load-dependent) stations plus a fixed delay.

    Parameters
    ----------
    demands_ms : service demand ``D_k`` per transaction at each station, ms.
    servers : number of identical servers ``m_k`` at each station (``>= 1``).
    delay_ms : pure delay per transaction ``R0`` (network, non-CPU waits), ms.
    think_time_ms : think time ``Z``, ms (0 allowed for load tests without think time).
    n_max : largest population solved.

    Notes
    -----
    Station ``k`` serves at rate ``min(j, m_k) / D_k`` with ``j`` transactions present (flow-equivalent
    multi-server, PDQ's ``MServerFESC``). Only the marginals ``p_k(j | n)`` for ``j < m_k`` are
    carried, which makes each population step ``O(sum m_k)``:

    .. math::

        R_k(n) = \\frac{D_k}{m_k}\\Big[1 + Q_k(n-1) + \\sum_{j=0}^{m_k-2} (m_k-1-j)\\,p_k(j\\mid n-1)\\Big]

        X(n) = \\frac{n}{Z + R_0 + \\sum_k R_k(n)}, \\qquad Q_k(n) = X(n) R_k(n)

        p_k(j\\mid n) = \\frac{X(n) D_k}{j}\\,p_k(j-1\\mid n-1)\\ (1 \\le j < m_k), \\qquad
        p_k(0\\mid n) = 1 - \\frac{1}{m_k}\\Big[X(n) D_k + \\sum_{j=1}^{m_k-1}(m_k-j)\\,p_k(j\\mid n)\\Big]

    The bracket follows from ``R_k(n) = sum_j j / mu_k(j) p_k(j-1|n-1)`` with ``sum_j j p(j-1) = 1 + Q``;
    ``p_k(0|n)`` from the utilisation law ``sum_j min(j, m) p(j) = X D``.

    References
    ----------
    Reiser, M. and Lavenberg, S. S. (1980), "Mean-value analysis of closed multichain queuing
    networks", J. ACM 27(2). Menascé, D. A., Almeida, V. A. F. and Dowdy, L. W. (2004),
    *Performance by Design*, ch. 14 (multiple-server MVA). Gunther, N. J., PDQ ``MServerFESC``.
    """
    return _solve(demands_ms, servers, delay_ms, think_time_ms, n_max)


def _solve(
    demands_ms: tuple[float, ...],
    servers: tuple[int, ...],
    delay_ms: float,
    think_time_ms: float,
    n_max: int,
) -> MVASolution:
    demands_2d = np.array([demands_ms], dtype=float)
    _check_network(demands_2d, servers, delay_ms, think_time_ms, n_max)
    x, total, r, idle = _mva_kernel(demands_2d, np.array(servers, dtype=np.int64),
                                    np.array([delay_ms], dtype=float), float(think_time_ms), int(n_max))
    x_arr = x[0]
    st_busy = x_arr[:, None] * np.array(demands_ms, dtype=float)[None, :]
    all_busy = np.clip(1.0 - idle[0], 0.0, 1.0)
    return MVASolution(x_arr * 1000.0, total[0], r[0], st_busy, all_busy)


def _check_network(demands_ms: np.ndarray, servers, delay_ms, think_time_ms: float, n_max: int) -> None:
    """``demands_ms`` is ``(B, S)``: one row of station demands per parameter set."""
    if demands_ms.ndim != 2 or demands_ms.shape[1] != len(servers) or not len(servers):
        raise ValueError("demands_ms and servers must be non-empty and of equal length")
    if any(m < 1 for m in servers):
        raise ValueError(f"every station needs >= 1 server, got {tuple(servers)}")
    if np.any(demands_ms < 0) or np.any(np.asarray(delay_ms) < 0) or think_time_ms < 0:
        raise ValueError("demands, delay and think time must be non-negative")
    if n_max < 1:
        raise ValueError(f"n_max must be >= 1, got {n_max}")


# Compiled because the desk redraws N = 1..5000 on every slider move and every fit solves the
# recursion for hundreds of bootstrap draws: interpreted, one population step costs microseconds
# per server, compiled it costs nanoseconds. cache=True keeps the machine code in __pycache__ so only
# the first call on a machine pays the compile.
@numba.njit(cache=True)
def _mva_kernel(demands, servers, delays, think_time_ms, n_max):  # pragma: no cover - compiled
    """The recursion of :func:`multiserver_mva` for ``B`` parameter sets.

    ``demands`` is ``(B, S)`` ms, ``servers`` ``(S,)``, ``delays`` ``(B,)`` ms. Returns throughput
    per ms ``(B, n_max)``, response excluding think time ``(B, n_max)``, station response
    ``(B, n_max, S)`` and ``sum_{j<m} p_k(j | n-1)`` ``(B, n_max, S)``, the probability an arrival
    finds a free server.
    """
    n_sets, n_st = demands.shape
    m_max = 1
    for k in range(n_st):
        m_max = max(m_max, servers[k])
    x_out = np.empty((n_sets, n_max))
    total_out = np.empty((n_sets, n_max))
    r_out = np.empty((n_sets, n_max, n_st))
    free_out = np.empty((n_sets, n_max, n_st))
    # p[k, j] = P(j transactions at station k | current population), carried only for j < m_k
    p = np.zeros((n_st, m_max))
    q = np.zeros(n_st)
    r = np.zeros(n_st)
    for i in range(n_sets):
        p[:, :] = 0.0
        q[:] = 0.0
        p[:, 0] = 1.0
        for n in range(1, n_max + 1):
            total = delays[i]
            for k in range(n_st):
                m = servers[k]
                free = 0.0
                bracket = 1.0 + q[k]
                for j in range(m):
                    free += p[k, j]
                    bracket += (m - 1 - j) * p[k, j]
                r[k] = demands[i, k] / m * bracket
                r_out[i, n - 1, k] = r[k]
                free_out[i, n - 1, k] = free
                total += r[k]
            denom = think_time_ms + total
            x = n / denom if denom > 0.0 else np.inf
            for k in range(n_st):
                m = servers[k]
                q[k] = x * r[k]
                xd = x * demands[i, k]
                busy = xd
                # descending j so p[k, j - 1] is still the population n - 1 value when read
                for j in range(m - 1, 0, -1):
                    p[k, j] = xd / j * p[k, j - 1]
                    busy += (m - j) * p[k, j]
                head = 1.0 - busy / m
                p[k, 0] = head if head > 0.0 else 0.0
            x_out[i, n - 1] = x
            total_out[i, n - 1] = total
    return x_out, total_out, r_out, free_out


def erlang_c(offered_erlangs: float, n_servers: int) -> float:
    """Probability an arrival waits in an M/M/c queue (Erlang C).

    Notes
    -----
    With ``a = lambda S`` and ``rho = a / c``, Erlang B by the stable recursion
    ``B_0 = 1``, ``B_k = a B_{k-1} / (k + a B_{k-1})``, then

    .. math:: C(c, a) = \\frac{B_c}{1 - \\rho + \\rho B_c}

    References
    ----------
    Kleinrock, L. (1975), *Queueing Systems, Vol. 1*, §3.5; PDQ ``ErlangR``.

    Examples
    --------
    >>> round(erlang_c(2.0, 3), 4)   # 4/9
    0.4444
    """
    if n_servers < 1:
        raise ValueError(f"n_servers must be >= 1, got {n_servers}")
    if offered_erlangs < 0:
        raise ValueError(f"offered load must be >= 0, got {offered_erlangs}")
    if offered_erlangs >= n_servers:
        return 1.0
    b = 1.0
    for k in range(1, n_servers + 1):
        b = offered_erlangs * b / (k + offered_erlangs * b)
    rho = offered_erlangs / n_servers
    return b / (1.0 - rho + rho * b)


def mmc_resp_ms(tps: float, service_ms: float, n_servers: int) -> float:
    """Mean response time of M/M/c, ms: ``S + C(c, a) S / (c (1 - rho))``; ``inf`` when saturated."""
    a = tps * service_ms / 1000.0
    if a >= n_servers:
        return math.inf
    return service_ms + erlang_c(a, n_servers) * service_ms / (n_servers * (1.0 - a / n_servers))
