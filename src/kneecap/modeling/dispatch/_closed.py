"""Closed populations: exact multi-server MVA over the zIIP and GCP pools with the help rule at every step."""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from kneecap.modeling import knee
from kneecap.modeling.dispatch._closed_help import (
    closed_class,
    closed_cycle_table,
    help_throughput,
    throughput_beside_background,
    ziip_wait_beside_background,
)
from kneecap.modeling.dispatch._memo import forget
from kneecap.modeling.dispatch._pool_rule import ZiipPool, pool_wait_held_at_peaks, ziip_spill_and_wait
from kneecap.modeling.dispatch._queues import rejoining_bursts, residual_ratio
from kneecap.schema import MAX_ENGINES


@numba.njit(cache=True)
def _mva_bracket(p_row, q_k, m):
    """``1 + Q(n-1) + sum_{j<m} (m-1-j) p(j | n-1)``: residence of an ``m``-server pool over ``D / m``."""
    bracket = 1.0 + q_k
    for j in range(m):
        bracket += (m - 1 - j) * p_row[j]
    return bracket


@numba.njit(cache=True)
def _mva_residual_excess(p_row, m, xd, s, ratio):
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
def _advance_busy(p_row, xd, m):
    """Step ``p(j | n-1) -> p(j | n) = X D / j p(j-1 | n-1)`` for ``1 <= j < m``, in place.

    Descending ``j`` so ``p_row[j - 1]`` is still the population ``n - 1`` value when read.
    """
    for j in range(m - 1, 0, -1):
        p_row[j] = xd / j * p_row[j - 1]


@numba.njit(cache=True)
def _blank_past(out, solved, width):
    """NaN in row ``i`` of ``out`` from column ``solved[i]`` (the populations past its crossing) to ``width``."""
    for i in range(out.shape[0]):
        for j in range(solved[i], width):
            out[i, j] = np.nan



#: The exact MVA state one parameter set carries from population to population, one structured
#: record (passed by reference: a NamedTuple of these arrays had numba count references to each
#: at every call, and the closed solves that never help, no zIIP or IIPHONORPRIORITY=NO, took
#: twice as long). Station 0 is the zIIP pool, 1 the GCP pool, each of ``servers[k]`` engines:
#:
#: - ``p[k, j] = P(j busy at station k | population)``, carried for ``j < servers[k]``; ``q`` the
#:   queues;
#: - ``p_alone``, ``q_alone``, ``x_alone``: the same two stations, each alone with the delay: the
#:   network without the other station, whose throughput gives ``p(0 | n)`` by a ratio instead of
#:   by subtraction (see solve_closed).
MVA_STATE = np.dtype([("p", np.float64, (2, MAX_ENGINES)), ("q", np.float64, (2,)),
                      ("p_alone", np.float64, (2, MAX_ENGINES)), ("q_alone", np.float64, (2,)),
                      ("x_alone", np.float64, (2,)), ("servers", np.int64, (2,))])


@numba.njit(cache=True)
def _empty_network(mva, n_g, n_z):
    """Set ``mva`` (an :data:`MVA_STATE` record) to the empty network: no client, every engine idle."""
    mva.servers[0] = max(n_z, 1)
    mva.servers[1] = n_g
    for k in range(2):
        for j in range(mva.servers[k]):
            mva.p[k, j] = 0.0
            mva.p_alone[k, j] = 0.0
        mva.p[k, 0] = 1.0
        mva.p_alone[k, 0] = 1.0
        mva.q[k] = 0.0
        mva.q_alone[k] = 0.0
        mva.x_alone[k] = 0.0


class GcpMixture(NamedTuple):
    """The class's bursts on a GCP pool without zIIPs: every burst queues FCFS there (see solve_closed).

    GCP-only and eligible bursts of different sizes (and other classes' bursts beside them) make the
    pool's service not exponential; beside zIIPs the GCP pool is left exponential, as in the open
    model (cpu_residence), and ``ratio`` is 1.
    """

    #: bursts per transaction on the pool, the GCP-only and eligible burst (ms), rejoining bursts
    #: per transaction (:func:`rejoining_bursts`)
    visits: int
    s_native: float
    s_eligible: float
    rejoin: float
    #: the class's bursts alone: ``r / s`` (:func:`residual_ratio`) and the mean burst, ms
    ratio: float
    s_mean: float


@numba.njit(cache=True)
def _gcp_mixture(cls):
    """The class's :class:`GcpMixture`: the same at every throughput for the class's bursts alone."""
    visits = cls.kg + cls.ke
    s_native = (1.0 - cls.f) * cls.d / cls.kg if cls.kg > 0 else 0.0
    s_eligible = cls.f * cls.d / cls.ke if cls.ke > 0 else 0.0
    rejoin = rejoining_bursts(cls.kg, cls.ke, 1.0)
    ratio = (residual_ratio(cls.kg, s_native, cls.ke, s_eligible, 0.0, cls.rules.bg_s, rejoin) if cls.rules.n_z == 0
             else 1.0)
    return GcpMixture(visits, s_native, s_eligible, rejoin, ratio, cls.d / visits if visits > 0 else 0.0)


@numba.njit(cache=True, inline="always")
def _ziip_time(cls, p, q, x_prev, spill_prev, q_help, memo):
    """The zIIP pool at the next population: (spill, zIIP time, zIIP demand, ziip_open, help_near, q).

    Exact MVA's FCFS wait, truncated by the help rule where the open M/M/c+D queue at the
    throughput the population before carried gives less (:func:`solve_closed`). ``ziip_open``:
    the pool is timed by the open queue beside other classes' zIIP work; ``help_near``: that open
    queue spills, but its wait is still above the exact one, so help is not solved yet.
    """
    d, f, ke, n_g, n_z = cls.d, cls.f, cls.ke, cls.rules.n_g, cls.rules.n_z
    honor, tau, pool, bg_z, a_bg_g = cls.rules.honor, cls.rules.tau, cls.rules.pool, cls.rules.bg_z, cls.a_bg_g
    rho = cls.rules.rho
    spill = 1.0 if (n_z == 0 and f > 0.0) else 0.0
    if not (n_z > 0 and f > 0.0):
        return spill, 0.0, 0.0, False, False, q_help
    t_z = 0.0
    ziip_open = False
    help_near = False
    m = n_z
    d_e = f * d / (1.0 - bg_z)
    s = cls.s
    wait = s / m * _mva_bracket(p[0], q[0], m) - s  # FCFS wait per burst, exact MVA
    if wait < 0.0:
        wait = 0.0
    wait_z = wait
    if cls.a_bz > 0.0 and not (honor and spill_prev > 0.0):
        # beside other classes' zIIP work MVA stretches the class's burst by 1 / (1 - U_bg), as if
        # every zIIP were that much slower, which leaves out the residual of their bursts (0.02 ms
        # eligible bursts beside 0.2 ms ones waited a quarter of the simulation's), and the help
        # path, the open queue beside the background, took over from it where help began, so
        # response fell there. The open model's queue (ziip_queue) at the throughput the
        # population before carried, its service the class's own burst, as the help path has it
        s_e, spill_open, wait_open, q_help = ziip_wait_beside_background(x_prev, q_help, cls, memo)
        if not honor and wait_open == np.inf:
            wait_open, s_e = wait, s  # a full pool: the closed network's wait, which stays finite
        # help solved from here on, as below (spill is 0 here before it)
        spill = spill_open if spill_open > 1e-12 else 0.0
        t_z = ke * ((1.0 - spill_open) * s_e + wait_open)
        ziip_open = True
    elif honor and spill_prev > 0.0:
        spill = spill_prev  # GCPs helped the population before: solved with the throughput
    elif honor and x_prev > 0.0:
        # the help rule truncates waits at tau: the M/M/c+D queue at the burst rate the arrival
        # sees gives the truncated wait and the spill; below saturation the exact closed wait is
        # the smaller (an open queue overstates a finite one)
        spill_open, wait_open, q_help = ziip_spill_and_wait(x_prev * ke, s, m, tau, pool, q_help,
                                                            (n_g - x_prev * (1.0 - f) * d - a_bg_g) / rho,
                                                            (ke - 1.0) / ke)
        wait_open = pool_wait_held_at_peaks(wait_open, x_prev, ZiipPool(s, ke, 0.0, 0.0, m, tau, n_g / rho,
                                                                         a_bg_g / rho, (1.0 - f) * d / rho), pool, memo)
        if wait_open < wait:
            wait_z = wait_open
        # a spill below 1e-12 moves no measurable work; counting it as none keeps the network
        # product-form and the recursion exact. Help is solved from the population whose open
        # zIIP wait is no longer above the exact one: the help path takes the open wait, so
        # switching earlier made response jump up where help began and fall back after it
        spill = spill_open if spill_open > 1e-12 and wait_open <= wait else 0.0
        help_near = pool and spill == 0.0 and spill_open > 1e-12
    if not ziip_open:
        t_z = ke * ((1.0 - spill) * s + wait_z)
    return spill, t_z, (1.0 - spill) * d_e, ziip_open, help_near, q_help


@numba.njit(cache=True, inline="always")
def _gcp_mva_time(cls, p, q, mix, spill, x_prev):
    """(GCP time, GCP demand) of a transaction at the next population by exact MVA, GCPs not helping.

    The residual of mixed bursts (:func:`_mva_residual_excess`) is added where the pool serves
    bursts of several sizes: without zIIPs, and beside other classes' work at the mixture the
    population before carried.
    """
    d, f, ke, kg, n_g = cls.d, cls.f, cls.ke, cls.kg, cls.rules.n_g
    a_bg_g, bg_s = cls.a_bg_g, cls.rules.bg_s
    d_g = ((1.0 - f) * d + spill * f * d * cls.rules.rho) / (1.0 - cls.rules.bg_g)
    r_g = d_g / n_g * _mva_bracket(p[1], q[1], n_g)
    ratio_g = mix.ratio  # 1 (exponential) for bursts of one size or beside zIIPs
    s_mix = mix.s_mean
    if cls.rules.n_z == 0 and a_bg_g > 0.0:
        # beside background work, the mixture at the throughput the population before carried
        rate_g = x_prev * mix.visits + a_bg_g / bg_s
        s_mix = (x_prev * d + a_bg_g) / rate_g
        ratio_g = residual_ratio(x_prev * kg, mix.s_native, x_prev * ke, mix.s_eligible, a_bg_g / bg_s, bg_s,
                                 x_prev * mix.rejoin)
    if ratio_g > 1.0:
        r_g += mix.visits * _mva_residual_excess(p[1], n_g, x_prev * d_g, s_mix, ratio_g)
    return r_g, d_g


@numba.njit(cache=True, inline="always")
def _throughput_without_help(n, z, r0, t_z, r_g, ziip_open, x_prev, q_help, cls, memo):
    """(X, zIIP time, GCP time, gcp_open, q) of ``n`` clients while GCPs do not help.

    Beside other classes' work, as for the zIIPs in :func:`_ziip_time`: MVA's ``1 / (1 - U_bg)``
    stretch overstates a pool of several GCPs (docs/models/dispatch.md), and the help path's GCP
    time, the smaller of the two, would take over where help begins: the open pool's time where
    it is the smaller, each pool's open time solved with the throughput it carries
    (:func:`throughput_beside_background`); ``gcp_open`` says the GCP pool took the open time.
    Otherwise ``X = n / (Z + R0 + T)``.
    """
    if cls.a_bg_g > 0.0 or ziip_open:
        x, t_z, r_g_open, q_help = throughput_beside_background(n, z + r0, x_prev, ziip_open, t_z, r_g, q_help, cls,
                                                                memo)
        return x, t_z, r_g_open, cls.a_bg_g > 0.0 and r_g_open < r_g, q_help
    total = r0 + t_z + r_g
    return n / (z + total) if z + total > 0.0 else np.inf, t_z, r_g, False, q_help


@numba.njit(cache=True, inline="always")
def _help_solve(n, z, r0, cls, mva, q_help, seen, memo, weight):
    """(X, zIIP time, GCP time, spill, q) of ``n`` clients while GCPs help (:func:`help_throughput`).

    The GCP pool's MVA time per ms of demand bounds the open one.
    """
    n_g = cls.rules.n_g
    gcp_mva = _mva_bracket(mva.p[1], mva.q[1], n_g) / (n_g * (1.0 - cls.rules.bg_g))
    return help_throughput(n, z + r0, gcp_mva, q_help, cls, seen, memo, weight)


@numba.njit(cache=True, inline="always")
def _helped_demands(cls, spill):
    """(zIIP demand, GCP demand) per transaction in the MVA state with a share ``spill`` helped."""
    d, f = cls.d, cls.f
    return ((1.0 - spill) * f * d / (1.0 - cls.rules.bg_z),
            ((1.0 - f) * d + spill * f * d * cls.rules.rho) / (1.0 - cls.rules.bg_g))


@numba.njit(cache=True, inline="always")
def _advance_mva(mva, n, x, t_z, r_g, d_z, d_g, z_loop, ziip_open, gcp_open):
    """Step the MVA state to population ``n`` at throughput ``x``: queues, busy marginals, idle probabilities."""
    p, q, p_alone, q_alone, x_alone, servers = mva.p, mva.q, mva.p_alone, mva.q_alone, mva.x_alone, mva.servers
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
    # a pool timed by the open queue beside background work is, to the other pool's idle
    # probability, a delay of the time it takes: the ratio below then keeps that pool's MVA time
    # at or above its demand (with the network without it as MVA would have it, a zIIP pool timed
    # above its MVA time put a GCP's time below its own demand: 0.7162 against 0.7173 ms at 2
    # clients, 5 GCPs + 1 zIIP, 30 % background)
    if ziip_open:
        x_alone[0] = n / (z_loop + t_z) if z_loop + t_z > 0.0 else np.inf
    if gcp_open:
        x_alone[1] = n / (z_loop + r_g) if z_loop + r_g > 0.0 else np.inf
    for k in range(2):
        mk = servers[k]
        _advance_busy(p[k], x * (d_z if k == 0 else d_g), mk)
        # P(station k idle | n) = G_-k(n) / G(n): the ratio of consecutive values is X(n) / X_-k(n),
        # X_-k the throughput of the network without station k. While GCPs help the network is not
        # product-form and the ratio is an approximation, used there only for the GCP pool's MVA
        # time, which caps the open one
        x_without = x_alone[1 - k]
        p[k, 0] *= x / x_without if x_without > 0.0 and np.isfinite(x_without) else 0.0


# the knee rule every family's knee() applies (kneecap.modeling.knee.past_knee), compiled for the
# recursion: the early stop and the knee read off the solve cannot disagree
_knee_rule = numba.njit(cache=True, inline="always")(knee.past_knee)


@numba.njit(cache=True, inline="always")
def past_knee(resp_ms, unloaded_ms, stop_ratio):
    """The early stop: :func:`kneecap.modeling.knee.past_knee` with ``k = stop_ratio``; 0 never stops."""
    return stop_ratio > 0.0 and _knee_rule(resp_ms, unloaded_ms, stop_ratio)


@numba.njit(cache=True)
def _solve_set(cls, r0, run, memo, mva, out):
    """Populations ``1..n_max`` of one parameter set into ``out``; returns the last population solved.

    ``run`` is the recursion's :class:`Populations`, ``r0`` the set's fixed delay (ms), ``memo`` and
    ``mva`` its :data:`LPAR_MEMO` and :data:`MVA_STATE` records; ``out`` (``5 x n_max``) gets the
    throughput (tran/ms), response (ms), spill and the zIIP and GCP busy per engine by population.

    Each population: the zIIP pool's time (:func:`_ziip_time`); then, while GCPs help, the
    throughput solved with the open times (:func:`_help_solve`), otherwise the GCP pool's MVA time
    and the throughput (:func:`_throughput_without_help`), with help taken where the help cycle
    makes it the smaller; then the MVA state stepped on (:func:`_advance_mva`). Stops early at
    the first population ``N >= n_min`` past the knee rule (:func:`past_knee`).
    """
    d, n_g, n_z, bg_g, bg_z = cls.d, cls.rules.n_g, cls.rules.n_z, cls.rules.bg_g, cls.rules.bg_z
    z, n_max, stop_ratio, n_min = run
    x_out, resp_out, spill_out, zb_out, gb_out = out[0], out[1], out[2], out[3], out[4]
    _empty_network(mva, n_g, n_z)
    p, q = mva.p, mva.q
    mix = _gcp_mixture(cls)
    z_loop = z + r0
    x_prev = 0.0
    q_help = 1.0
    spill_prev = 0.0
    seen = np.zeros(8)  # the help solve's last three roots and two q, its start at the next population
    # the help cycle's least waits and the pool rule's peaks (found the first time GCPs help), the
    # cycle's weight
    forget(memo)
    weight = 0.0
    for n in range(1, n_max + 1):
        spill, t_z, d_z, ziip_open, help_near, q_help = _ziip_time(cls, p, q, x_prev, spill_prev, q_help, memo)
        gcp_open = False
        if spill > 0.0 and n_z > 0:
            # helped work makes the network not product-form: p(0 | n) of the GCP pool would come
            # by subtraction, which loses its digits within a few hundred steps on many GCPs. The
            # pools' times are the open model's at the throughput they carry, solved with it
            if memo.cycle[0] < 0.0:
                weight = closed_cycle_table(memo, cls)
            x, t_z, r_g, spill, q_help = _help_solve(n, z, r0, cls, mva, q_help, seen, memo, weight)
            if spill <= 1e-12:
                spill = 0.0
            d_z, d_g = _helped_demands(cls, spill)
            total = r0 + t_z + r_g
        else:
            r_g, d_g = _gcp_mva_time(cls, p, q, mix, spill, x_prev)
            x, t_z, r_g, gcp_open, q_help = _throughput_without_help(n, z, r0, t_z, r_g, ziip_open, x_prev, q_help,
                                                                     cls, memo)
            total = r0 + t_z + r_g
            if help_near and memo.cycle[0] < 0.0:
                weight = closed_cycle_table(memo, cls)
            # the help cycle's waits are at least its least ones (memo.cycle[1:3]): only above them
            # can the help path be the smaller, and most populations need no help solve to know it
            if help_near and weight > 0.0 and total > r0 + d + memo.cycle[1] + memo.cycle[2]:
                # the help path takes the help cycle's waits where they are the smaller (as the open
                # model does), which the exact network's zIIP wait does not see: where the zIIP
                # waits alone rose past them before the open queue's wait fell below the exact one,
                # switching to help then made response fall. Taken from the population where the
                # help path is the smaller, the response is the smaller of two that each rise with
                # the population, so it rises too
                seen_try = seen.copy()  # the help solve's warm start, kept only if it is taken
                x_h, t_z_h, r_g_h, spill_h, q_h = _help_solve(n, z, r0, cls, mva, q_help, seen_try, memo,
                                                              weight)
                if r0 + t_z_h + r_g_h < total and spill_h > 1e-12:
                    x, t_z, r_g, spill, q_help = x_h, t_z_h, r_g_h, spill_h, q_h
                    seen[:] = seen_try
                    d_z, d_g = _helped_demands(cls, spill)
                    total = r0 + t_z + r_g
                    gcp_open = False
        _advance_mva(mva, n, x, t_z, r_g, d_z, d_g, z_loop, ziip_open, gcp_open)
        x_prev = x
        spill_prev = spill if n_z > 0 else 0.0
        x_out[n - 1] = x
        resp_out[n - 1] = total
        spill_out[n - 1] = spill
        # the spill comes from the population before, so at saturation the utilisation law can
        # step a hair past a full pool: an engine is never more than busy
        zb_out[n - 1] = min(x * d_z * (1.0 - bg_z) / n_z + bg_z, 1.0) if n_z > 0 else np.nan
        gb_out[n - 1] = min(x * d_g * (1.0 - bg_g) / n_g + bg_g, 1.0)
        if n >= n_min and n < n_max and past_knee(total, resp_out[0], stop_ratio):
            return n  # the columns after it are blanked by the caller
    return n_max


class Populations(NamedTuple):
    """The populations a closed solve runs (:func:`solve_closed`)."""

    #: think time, ms
    z: float
    #: the largest population, and the early stop: past ``stop_ratio`` times the one-client
    #: response from ``n_min`` clients on (0: never)
    n_max: int
    stop_ratio: float
    n_min: int


def new_mva_states(count: int) -> np.recarray:
    """``count`` :data:`MVA_STATE` records (set to the empty network by the solve itself).

    A record array, so that its fields read as attributes in Python too (``NUMBA_DISABLE_JIT=1``).
    """
    return np.zeros(count, dtype=MVA_STATE).view(np.recarray)


# parallel over parameter sets (bootstrap draws): each solve is independent, and the desk's
# band and knee solve two hundred of them per slider step
@numba.njit(cache=True, parallel=True)
def closed_kernel(ds, r0s, f, rules, run, memos, mvas):
    """The recursion of :func:`solve_closed` for every demand of ``ds`` (delay ``r0s``), in parallel.

    ``run`` is the :class:`Populations` to solve; ``memos`` and ``mvas`` hold an :data:`LPAR_MEMO`
    and an :data:`MVA_STATE` record per demand, owned by the caller. Returns the throughput
    (tran/ms), response, spill, zIIP and GCP busy arrays ``(B, width)`` and each set's last
    population solved.
    """
    b = ds.shape[0]
    n_max, stop_ratio = run.n_max, run.stop_ratio
    out = np.empty((5, b, n_max))
    solved = np.full(b, n_max, dtype=np.int64)
    for i in numba.prange(b):
        solved[i] = _solve_set(closed_class(ds[i], f, rules), r0s[i], run, memos[i], mvas[i], out[:, i])
    # the knee's bound on the populations (the bottleneck bound of the slowest set) is often twice
    # the last crossing: the arrays end at the widest solve and the columns past it are never
    # written (filling them with NaN took a tenth of the desk's 200-set knee solve), and each set's
    # columns past its own crossing up to there are NaN
    width = n_max
    if stop_ratio > 0.0 and b > 0:
        width = solved.max()
        for k in range(5):
            _blank_past(out[k], solved, width)
    return out[0, :, :width], out[1, :, :width], out[2, :, :width], out[3, :, :width], out[4, :, :width], solved
