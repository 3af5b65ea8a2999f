"""Closed populations: exact multi-server MVA over the zIIP and GCP pools with the help rule at every step."""

from __future__ import annotations

import numba
import numpy as np

from kneecap.modeling.dispatch._closed_help import (
    closed_cycle_table,
    help_throughput,
    throughput_beside_background,
    ziip_wait_beside_background,
)
from kneecap.modeling.dispatch._memo import MEMO_FLOATS
from kneecap.modeling.dispatch._pool_rule import pool_wait_held_at_peaks, ziip_spill_and_wait
from kneecap.modeling.dispatch._queues import rejoining_bursts, residual_ratio


@numba.njit(cache=True)
def _mva_bracket(p_row, q_k, m):  # pragma: no cover - compiled
    """``1 + Q(n-1) + sum_{j<m} (m-1-j) p(j | n-1)``: residence of an ``m``-server pool over ``D / m``."""
    bracket = 1.0 + q_k
    for j in range(m):
        bracket += (m - 1 - j) * p_row[j]
    return bracket


@numba.njit(cache=True)
def _mva_residual_excess(p_row, m, xd, s, ratio):  # pragma: no cover - compiled
    """Wait per burst beyond exact MVA's at an FCFS ``m``-server pool of mixed bursts (see solve_closed).

    ``P(all m busy | n-1) (r - s) / m`` with ``r / s = ratio`` (:func:`residual_ratio`). The
    probability that every engine is busy comes from the utilisation law, ``X D`` busy engines
    on average at ``n - 1`` (``xd``), less those of the states with an idle engine,
    ``(X D - sum_{0<j<m} j p(j | n-1)) / m``: for one engine it is ``X D`` itself, Reiser's ``U``.
    """
    if ratio <= 1.0:
        return 0.0
    busy = xd
    for j in range(1, m):
        busy -= j * p_row[j]
    busy /= m
    if busy <= 0.0:
        return 0.0
    return (busy if busy < 1.0 else 1.0) * s * (ratio - 1.0) / m


@numba.njit(cache=True)
def _advance_busy(p_row, xd, m):  # pragma: no cover - compiled
    """Step ``p(j | n-1) -> p(j | n) = X D / j p(j-1 | n-1)`` for ``1 <= j < m``, in place.

    Descending ``j`` so ``p_row[j - 1]`` is still the population ``n - 1`` value when read.
    """
    for j in range(m - 1, 0, -1):
        p_row[j] = xd / j * p_row[j - 1]


@numba.njit(cache=True)
def _blank_past(out, solved, width):  # pragma: no cover - compiled
    """NaN in row ``i`` of ``out`` from column ``solved[i]`` (the populations past its crossing) to ``width``."""
    for i in range(out.shape[0]):
        for j in range(solved[i], width):
            out[i, j] = np.nan


# parallel over parameter sets (bootstrap draws): each solve is independent, and the desk's
# band and knee solve two hundred of them per slider step
@numba.njit(cache=True, parallel=True)
def closed_kernel(ds, r0s, z, n_max, stop_ratio, n_min, f, k_e, k_g, n_g, n_z, honor, tau, pool, bg_g, bg_z,
                   bg_s):  # pragma: no cover - compiled
    """The recursion of :func:`solve_closed`; station 0 is the zIIP pool, 1 the GCP pool."""
    b = ds.shape[0]
    x_out = np.empty((b, n_max))
    resp_out = np.empty((b, n_max))
    spill_out = np.empty((b, n_max))
    zb_out = np.empty((b, n_max))
    gb_out = np.empty((b, n_max))
    solved = np.full(b, n_max, dtype=np.int64)
    m_max = max(n_g, n_z, 1)
    servers = np.array([max(n_z, 1), n_g])
    ke = k_e if f > 0.0 else 0
    kg_on = k_g if f < 1.0 else 0
    a_bg_g = bg_g * n_g
    a_bz = bg_z * n_z
    for i in numba.prange(b):
        p = np.zeros((2, m_max))  # p[k, j] = P(j busy at station k | population), carried for j < m_k
        q = np.zeros(2)
        # the same two stations, each alone with the delay: the network without the other station,
        # whose throughput gives p(0 | n) by a ratio instead of by subtraction (see solve_closed)
        p_alone = np.zeros((2, m_max))
        q_alone = np.zeros(2)
        x_alone = np.zeros(2)
        p[:, 0] = 1.0
        p_alone[:, 0] = 1.0
        d = ds[i]
        z_loop = z + r0s[i]
        x_prev = 0.0
        q_help = 1.0
        seen = np.zeros(8)  # the help solve's last three roots and two q, its start at the next population
        spill_prev = 0.0
        # _help_cycle_wait's least-wait rate and its waits (tabulate_cycle_least_waits) and the cycle's weight, found
        # the first time GCPs help
        floor = np.empty(MEMO_FLOATS)
        floor[0] = -1.0
        floor[3] = -1.0
        weight = 0.0
        # without zIIPs every burst queues FCFS for the GCPs, GCP-only and eligible ones of
        # different sizes with other classes' bursts beside them (see solve_closed); beside zIIPs
        # the GCP pool is left exponential, as in the open model (cpu_residence)
        visits_g = kg_on + ke
        s_gn = (1.0 - f) * d / kg_on if kg_on > 0 else 0.0
        s_ge = f * d / ke if ke > 0 else 0.0
        rejoin_g = rejoining_bursts(kg_on, ke, 1.0)
        # the class's bursts alone set the same mixture at every throughput
        ratio_class = residual_ratio(kg_on, s_gn, ke, s_ge, 0.0, bg_s, rejoin_g) if n_z == 0 else 1.0
        s_class = d / visits_g if visits_g > 0 else 0.0
        for n in range(1, n_max + 1):
            spill = 1.0 if (n_z == 0 and f > 0.0) else 0.0
            t_z = 0.0
            d_z = 0.0
            ziip_open = False  # each pool timed by the open queue beside background work (below)
            gcp_open = False
            help_near = False  # the open queue at the population before's throughput spills (below)
            if n_z > 0 and f > 0.0:
                m = n_z
                d_e = f * d / (1.0 - bg_z)
                s = d_e / ke
                wait = s / m * _mva_bracket(p[0], q[0], m) - s  # FCFS wait per burst, exact MVA
                if wait < 0.0:
                    wait = 0.0
                wait_z = wait
                if a_bz > 0.0 and not (honor and spill_prev > 0.0):
                    # beside other classes' zIIP work MVA stretches the class's burst by
                    # 1 / (1 - U_bg), as if every zIIP were that much slower, which leaves out the
                    # residual of their bursts: 0.02 ms eligible bursts beside 0.2 ms ones waited
                    # a quarter of what the simulation measured (5 GCPs + 1 zIIP, 30 % background,
                    # the reproducer), and the help path, the open queue beside the
                    # background, took over from it where help began, so response fell there. The
                    # open model's queue (ziip_queue) at the throughput the population before
                    # carried, its service the class's own burst, as the help path has it
                    s_e, spill_open, wait_open, q_help = ziip_wait_beside_background(x_prev, f, d, ke, m, a_bz, bg_s,
                                                                                     honor,
                                                                           tau, pool, q_help, n_g, a_bg_g, floor)
                    if not honor and wait_open == np.inf:
                        wait_open, s_e = wait, s  # a full pool: the closed network's wait, which stays finite
                    # help solved from here on, as below (spill is 0 here before it)
                    spill = spill_open if spill_open > 1e-12 else 0.0
                    t_z = ke * ((1.0 - spill_open) * s_e + wait_open)
                    ziip_open = True
                elif honor and spill_prev > 0.0:
                    spill = spill_prev  # GCPs helped the population before: solved below
                elif honor and x_prev > 0.0:
                    # the help rule truncates waits at tau: the M/M/c+D queue at the burst rate the
                    # arrival sees gives the truncated wait and the spill; below saturation the
                    # exact closed wait is the smaller (an open queue overstates a finite one)
                    spill_open, wait_open, q_help = ziip_spill_and_wait(x_prev * ke, s, m, tau, pool, q_help,
                                                              n_g - x_prev * (1.0 - f) * d - a_bg_g, (ke - 1.0) / ke)
                    wait_open = pool_wait_held_at_peaks(wait_open, x_prev, s, ke, m, tau, pool, n_g, a_bg_g,
                                                        (1.0 - f) * d,
                                                0.0, 0.0, floor)
                    if wait_open < wait:
                        wait_z = wait_open
                    # a spill below 1e-12 moves no measurable work; counting it as none keeps
                    # the network product-form and the recursion exact. Help is solved (below)
                    # from the population whose open zIIP wait is no longer above the exact
                    # closed one: the help path takes the open wait, so switching earlier made
                    # response jump up where help began and fall back after it
                    spill = spill_open if spill_open > 1e-12 and wait_open <= wait else 0.0
                    help_near = pool and spill == 0.0 and spill_open > 1e-12
                if not ziip_open:
                    t_z = ke * ((1.0 - spill) * s + wait_z)
                d_z = (1.0 - spill) * d_e
            if spill > 0.0 and n_z > 0:
                # helped work makes the network not product-form: p(0 | n) of the GCP pool would
                # come by subtraction, which loses its digits within a few hundred steps on many
                # GCPs. The pools' times are the open model's at the throughput they carry,
                # solved with it (see solve_closed); the GCP pool's MVA time per ms of demand
                # bounds the open one
                gcp_mva = _mva_bracket(p[1], q[1], n_g) / (n_g * (1.0 - bg_g))
                if floor[0] < 0.0:
                    weight = closed_cycle_table(floor, s, f, d, ke, kg_on, n_z, n_g, a_bz, a_bg_g, bg_s, tau, pool)
                x, t_z, r_g, spill, q_help = help_throughput(n, z + r0s[i], gcp_mva, s, n_z, tau, pool,
                                                              q_help, d, f, kg_on, ke, n_g, a_bg_g, bg_s, a_bz,
                                                              seen, floor, weight)
                if spill <= 1e-12:
                    spill = 0.0
                d_z = (1.0 - spill) * f * d / (1.0 - bg_z)
                d_g = ((1.0 - f) * d + spill * f * d) / (1.0 - bg_g)
                total = r0s[i] + t_z + r_g
            else:
                d_g = ((1.0 - f) * d + spill * f * d) / (1.0 - bg_g)
                r_g = d_g / n_g * _mva_bracket(p[1], q[1], n_g)
                ratio_g = ratio_class  # 1 (exponential) for bursts of one size or beside zIIPs
                s_mix = s_class
                if n_z == 0 and a_bg_g > 0.0:
                    # beside background work, the mixture at the throughput the population before
                    # carried
                    rate_g = x_prev * visits_g + a_bg_g / bg_s
                    s_mix = (x_prev * d + a_bg_g) / rate_g
                    ratio_g = residual_ratio(x_prev * kg_on, s_gn, x_prev * ke, s_ge, a_bg_g / bg_s, bg_s,
                                              x_prev * rejoin_g)
                if ratio_g > 1.0:
                    r_g += visits_g * _mva_residual_excess(p[1], n_g, x_prev * d_g, s_mix, ratio_g)
                if a_bg_g > 0.0 or ziip_open:
                    # beside other classes' GCP work, as for the zIIPs above: MVA's 1 / (1 - U_bg)
                    # stretch overstates a pool of several GCPs (4 GCPs at 30 %, no zIIP: 19 % above
                    # the simulation at 30 % of capacity, closed, where the open pool is 1 % above
                    # it), and the help path's GCP time, the smaller of the two, would take over
                    # where help begins. The open pool's time where it is the smaller, and each
                    # pool's open time solved with the throughput it carries
                    r_g_mva = r_g
                    x, t_z, r_g, q_help = throughput_beside_background(
                        n, z + r0s[i], x_prev, ziip_open, t_z, r_g_mva, d, f, k_e, k_g, ke, kg_on, n_g, n_z, honor,
                        tau, pool, bg_g, a_bg_g, a_bz, bg_s, q_help, floor)
                    # to the other pool's idle probability, below, a delay of the open time it takes
                    gcp_open = a_bg_g > 0.0 and r_g < r_g_mva
                    total = r0s[i] + t_z + r_g
                else:
                    total = r0s[i] + t_z + r_g
                    x = n / (z + total) if z + total > 0.0 else np.inf
                if help_near and floor[0] < 0.0:
                    weight = closed_cycle_table(floor, s, f, d, ke, kg_on, n_z, n_g, a_bz, a_bg_g, bg_s, tau, pool)
                # the help cycle's waits are at least its least ones (floor[1:3]): only above them can
                # the help path be the smaller, and most populations need no help solve to know it
                if help_near and weight > 0.0 and total > r0s[i] + d + floor[1] + floor[2]:
                    # the help path takes the help cycle's waits where they are the smaller (as the
                    # open model does, open_residence), which the exact network's zIIP wait above does
                    # not see: where the zIIP waits alone rose past them before the open queue's
                    # wait fell below the exact one, switching to help then made response fall
                    # (1 GCP 10 % busy with other work + 5 zIIPs, one 1.7 ms burst, Z 1 s: 9.33 ->
                    # 6.98 ms at 2,804 clients; 14 GCPs + 1 zIIP, ZIIPAWMT 10 ms, no think time:
                    # 13.56 -> 13.31 ms at 10 clients). Taken from the population where the help
                    # path is the smaller, the response is the smaller of two that each rise with
                    # the population, so it rises too
                    gcp_mva = _mva_bracket(p[1], q[1], n_g) / (n_g * (1.0 - bg_g))
                    seen_try = seen.copy()  # the help solve's warm start, kept only if it is taken
                    x_h, t_z_h, r_g_h, spill_h, q_h = help_throughput(n, z + r0s[i], gcp_mva, s, n_z, tau, pool,
                                                                       q_help, d, f, kg_on, ke, n_g, a_bg_g, bg_s,
                                                                       a_bz, seen_try, floor, weight)
                    if r0s[i] + t_z_h + r_g_h < total and spill_h > 1e-12:
                        x, t_z, r_g, spill, q_help = x_h, t_z_h, r_g_h, spill_h, q_h
                        seen[:] = seen_try
                        d_z = (1.0 - spill) * f * d / (1.0 - bg_z)
                        d_g = ((1.0 - f) * d + spill * f * d) / (1.0 - bg_g)
                        total = r0s[i] + t_z + r_g
                        gcp_open = False
            q[0] = x * t_z
            q[1] = x * r_g
            for k in range(2):
                mk = servers[k]
                dk = d_z if k == 0 else d_g
                r_k = dk / mk * _mva_bracket(p_alone[k], q_alone[k], mk)
                x_k = n / (z_loop + r_k) if z_loop + r_k > 0.0 else np.inf
                x_alone[k] = x_k
                q_alone[k] = x_k * r_k
                _advance_busy(p_alone[k], x_k * dk, mk)
                # the network without this station is the delay alone: X = n / (Z + R0)
                p_alone[k, 0] *= x_k * z_loop / n if z_loop > 0.0 else 0.0
            # a pool timed by the open queue beside background work (above) is, to the other
            # pool's idle probability, a delay of the time it takes: the ratio below then keeps
            # that pool's MVA time at or above its demand (with the network without it as MVA
            # would have it, a zIIP pool timed above its MVA time put a GCP's time below its own
            # demand: 0.7162 against 0.7173 ms at 2 clients, 5 GCPs + 1 zIIP, 30 % background)
            if ziip_open:
                x_alone[0] = n / (z_loop + t_z) if z_loop + t_z > 0.0 else np.inf
            if gcp_open:
                x_alone[1] = n / (z_loop + r_g) if z_loop + r_g > 0.0 else np.inf
            for k in range(2):
                mk = servers[k]
                _advance_busy(p[k], x * (d_z if k == 0 else d_g), mk)
                # P(station k idle | n) = G_-k(n) / G(n): the ratio of consecutive values is
                # X(n) / X_-k(n), X_-k the throughput of the network without station k. While
                # GCPs help the network is not product-form and the ratio is an approximation,
                # used there only for the GCP pool's MVA time, which caps the open one
                x_without = x_alone[1 - k]
                p[k, 0] *= x / x_without if x_without > 0.0 and np.isfinite(x_without) else 0.0
            x_prev = x
            spill_prev = spill if n_z > 0 else 0.0
            x_out[i, n - 1] = x
            resp_out[i, n - 1] = total
            spill_out[i, n - 1] = spill
            # the spill comes from the population before, so at saturation the utilisation law can
            # step a hair past a full pool: an engine is never more than busy
            zb_out[i, n - 1] = min(x * d_z * (1.0 - bg_z) / n_z + bg_z, 1.0) if n_z > 0 else np.nan
            gb_out[i, n - 1] = min(x * d_g * (1.0 - bg_g) / n_g + bg_g, 1.0)
            if stop_ratio > 0.0 and n >= n_min and total > stop_ratio * resp_out[i, 0] and n < n_max:
                solved[i] = n  # the columns after it are blanked below
                break
    # the knee's bound on the populations (the bottleneck bound of the slowest set) is often twice
    # the last crossing: the arrays end at the widest solve and the columns past it are never
    # written (filling them with NaN took a tenth of the desk's 200-set knee solve), and each set's
    # columns past its own crossing up to there are NaN
    width = n_max
    if stop_ratio > 0.0 and b > 0:
        width = solved.max()
        for out in (x_out, resp_out, spill_out, zb_out, gb_out):
            _blank_past(out, solved, width)
    return x_out[:, :width], resp_out[:, :width], spill_out[:, :width], zb_out[:, :width], gb_out[:, :width], solved
