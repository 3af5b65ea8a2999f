"""Queueing solvers: exact multi-server MVA for closed workloads, Erlang C for open ones (references).

Pure functions on numbers; the fitted models built on them live in :mod:`kneecap.modeling.closed`
and :mod:`kneecap.modeling.open`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
from scipy import special


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
    r"""Exact MVA for one class over multi-server (load-dependent) stations plus a fixed delay.

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

        R_k(n) = \frac{D_k}{m_k}\Big[1 + Q_k(n-1) + \sum_{j=0}^{m_k-2} (m_k-1-j)\,p_k(j\mid n-1)\Big]

        X(n) = \frac{n}{Z + R_0 + \sum_k R_k(n)}, \qquad Q_k(n) = X(n) R_k(n)

        p_k(j\mid n) = \frac{X(n) D_k}{j}\,p_k(j-1\mid n-1)\ (1 \le j < m_k), \qquad
        p_k(0\mid n) = p_k(0\mid n-1)\,\frac{X(n)}{X_{-k}(n)}

    The bracket follows from ``R_k(n) = sum_j j / mu_k(j) p_k(j-1|n-1)`` with ``sum_j j p(j-1) = 1 + Q``.
    ``p_k(0|n) = G_{-k}(n) / G(n)`` with ``G`` the normalisation constant and ``X(n) = G(n-1) / G(n)``,
    so ``X_{-k}``, the throughput of the network without station ``k``, comes from solving every
    sub-network alongside (``2^S`` of them, ``S <= MAX_STATIONS``). The utilisation law
    ``sum_j min(j, m) p(j) = X D`` gives the same value by subtraction, which cancels
    catastrophically at high load (8 servers, 1709 clients: 11.2 ms instead of 1.46).

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
    if len(servers) > MAX_STATIONS:
        raise ValueError(f"at most {MAX_STATIONS} stations, got {len(servers)}")
    if any(m < 1 for m in servers):
        raise ValueError(f"every station needs >= 1 server, got {tuple(servers)}")
    if np.any(demands_ms < 0) or np.any(np.asarray(delay_ms) < 0) or think_time_ms < 0:
        raise ValueError("demands, delay and think time must be non-negative")
    if n_max < 1:
        raise ValueError(f"n_max must be >= 1, got {n_max}")


#: Stations :func:`multiserver_mva` accepts: the idle probabilities come from every sub-network
#: (``2^S`` of them), and kneecap's networks have one or two CPU pools.
MAX_STATIONS = 8


# Compiled because every fit solves the recursion for hundreds of bootstrap draws: interpreted, one
# population step costs microseconds per server, compiled it costs nanoseconds. cache=True keeps the
# machine code in __pycache__ so only the first call on a machine pays the compile.
@numba.njit(cache=True)
def _mva_kernel(demands, servers, delays, think_time_ms, n_max):  # pragma: no cover - compiled
    """The recursion of :func:`multiserver_mva` for ``B`` parameter sets.

    ``demands`` is ``(B, S)`` ms, ``servers`` ``(S,)``, ``delays`` ``(B,)`` ms. Returns throughput
    per ms ``(B, n_max)``, response excluding think time ``(B, n_max)``, station response
    ``(B, n_max, S)`` and ``sum_{j<m} p_k(j | n-1)`` ``(B, n_max, S)``, the probability an arrival
    finds a free server.

    Every sub-network (a subset of the stations, with the delay) is solved alongside, smallest
    first, because ``p_k(0 | n) = G_{-k}(n) / G(n)`` advances by the ratio ``X(n) / X_{-k}(n)`` of
    the network's throughput to that of the network without station ``k``. The utilisation law
    would give ``p_k(0 | n)`` by subtraction, which loses every digit past about a thousand
    clients on eight servers.
    """
    n_sets, n_st = demands.shape
    m_max = 1
    for k in range(n_st):
        m_max = max(m_max, servers[k])
    n_masks = 1 << n_st
    # masks by number of stations, so a sub-network is stepped to n before the networks holding it
    order = np.empty(n_masks - 1, dtype=np.int64)
    pos = 0
    for size in range(1, n_st + 1):
        for mask in range(1, n_masks):
            bits = 0
            for k in range(n_st):
                bits += (mask >> k) & 1
            if bits == size:
                order[pos] = mask
                pos += 1
    full = n_masks - 1
    x_out = np.empty((n_sets, n_max))
    total_out = np.empty((n_sets, n_max))
    r_out = np.empty((n_sets, n_max, n_st))
    free_out = np.empty((n_sets, n_max, n_st))
    # p[mask, k, j] = P(j transactions at station k | population) in sub-network mask, j < m_k
    p = np.zeros((n_masks, n_st, m_max))
    q = np.zeros((n_masks, n_st))
    x_mask = np.zeros(n_masks)
    r = np.zeros(n_st)
    for i in range(n_sets):
        p[:, :, :] = 0.0
        p[:, :, 0] = 1.0
        q[:, :] = 0.0
        delay_loop = think_time_ms + delays[i]
        for n in range(1, n_max + 1):
            # the delay alone: X = n / (Z + R0), and G_empty(n) = 0 when there is no delay at all
            x_mask[0] = n / delay_loop if delay_loop > 0.0 else 0.0
            for mask in order:
                total = delays[i]
                for k in range(n_st):
                    if (mask >> k) & 1:
                        m = servers[k]
                        free = 0.0
                        bracket = 1.0 + q[mask, k]
                        for j in range(m):
                            free += p[mask, k, j]
                            bracket += (m - 1 - j) * p[mask, k, j]
                        r[k] = demands[i, k] / m * bracket
                        total += r[k]
                        if mask == full:
                            r_out[i, n - 1, k] = r[k]
                            free_out[i, n - 1, k] = free
                denom = think_time_ms + total
                x = n / denom if denom > 0.0 else np.inf
                x_mask[mask] = x
                for k in range(n_st):
                    if (mask >> k) & 1:
                        m = servers[k]
                        q[mask, k] = x * r[k]
                        xd = x * demands[i, k]
                        # descending j so p[mask, k, j - 1] is still the population n - 1 value
                        for j in range(m - 1, 0, -1):
                            p[mask, k, j] = xd / j * p[mask, k, j - 1]
                        x_without = x_mask[mask & ~(1 << k)]
                        if x_without > 0.0 and np.isfinite(x_without) and np.isfinite(x):
                            p[mask, k, 0] *= x / x_without
                        else:
                            p[mask, k, 0] = 0.0
                if mask == full:
                    x_out[i, n - 1] = x
                    total_out[i, n - 1] = total
    return x_out, total_out, r_out, free_out


def erlang_c(offered_erlangs: float, n_servers: int) -> float:
    r"""Probability an arrival waits in an M/M/c queue (Erlang C).

    Notes
    -----
    With ``a = lambda S`` and ``rho = a / c``, Erlang B by the stable recursion
    ``B_0 = 1``, ``B_k = a B_{k-1} / (k + a B_{k-1})``, then

    .. math:: C(c, a) = \frac{B_c}{1 - \rho + \rho B_c}

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


def mmc_resp_ms_array(tps: np.ndarray, service_ms: float, n_servers: int) -> np.ndarray:
    r""":func:`mmc_resp_ms` at many arrival rates at once (``inf`` where saturated).

    Erlang B in closed form, the Poisson probability of ``c`` over that of at most ``c``,

    .. math:: B(c, a) = \frac{a^c e^{-a} / c!}{\sum_{k=0}^{c} a^k e^{-a} / k!}
              = \frac{\exp(c \log a - a - \log \Gamma(c + 1))}{P(c, a)}

    (``P`` the Poisson distribution function, :func:`scipy.special.pdtr`), then Erlang C as in
    :func:`erlang_c`: a few array operations whatever ``c``, where the recursion takes ``c`` of
    them, so an open fit trying server counts in the hundreds pays for each about what it pays for
    one. Within 3e-14 of the recursion's response from 1 to 1,024 servers
    (``tests/modeling/test_open.py``).

    References
    ----------
    Kleinrock, L. (1975), *Queueing Systems, Vol. 1*, §3.5 and §3.6 (Erlang's loss formula
    as a truncated Poisson distribution).
    """
    a = np.asarray(tps, dtype=float) * float(service_ms) / 1000.0
    c = int(n_servers)
    out = np.full(a.shape, np.inf)
    ok = np.isfinite(a) & (a >= 0) & (a < c)
    a_ok = a[ok]
    with np.errstate(divide="ignore"):  # log 0 = -inf: no load, no wait
        log_pmf = c * np.log(a_ok) - a_ok - special.gammaln(c + 1.0)
    b = np.exp(log_pmf) / special.pdtr(c, a_ok)
    rho = a_ok / c
    wait_prob = b / (1.0 - rho + rho * b)
    out[ok] = service_ms + wait_prob * service_ms / (c * (1.0 - rho))
    return out


def mmc_resp_ms(tps: float, service_ms: float, n_servers: int) -> float:
    """Mean response time of M/M/c, ms: ``S + C(c, a) S / (c (1 - rho))``; ``inf`` when saturated."""
    a = tps * service_ms / 1000.0
    if a >= n_servers:
        return math.inf
    return service_ms + erlang_c(a, n_servers) * service_ms / (n_servers * (1.0 - a / n_servers))
