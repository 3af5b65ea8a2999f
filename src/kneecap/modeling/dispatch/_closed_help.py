"""Closed populations while GCPs help or beside other classes' work: throughput solved with the open times."""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from kneecap.modeling.dispatch._help_cycle import (
    Cycle,
    cycle_waits_raised_to_peak,
    cycle_weight,
    monotone_cycle_waits,
    tabulate_cycle_least_waits,
)
from kneecap.modeling.dispatch._open import open_residence
from kneecap.modeling.dispatch._pool_rule import ZiipPool, pool_wait_held_at_peaks, ziip_spill_and_wait
from kneecap.modeling.dispatch._queues import erlang_c, gcp_priority_waits, ziip_queue
from kneecap.modeling.dispatch._rules import Rules, on_gcps


class ClosedClass(NamedTuple):
    """One parameter set's class on its LPAR, as the closed recursion takes it (:func:`closed_class`)."""

    #: the LPAR and its dispatching rules
    rules: Rules
    #: CPU per transaction (ms) and its zIIP-eligible share
    d: float
    f: float
    #: eligible and GCP-only bursts per transaction that exist (none of a kind whose share is 0)
    ke: int
    kg: int
    #: other classes' busy engines in each pool
    a_bg_g: float
    a_bz: float
    #: the eligible burst MVA serves, stretched by ``1 / (1 - U_bg)`` of the zIIPs (0 without one)
    s: float


@numba.njit(cache=True)
def closed_class(d, f, rules):
    """The :class:`ClosedClass` of a transaction of ``d`` ms CPU, a share ``f`` eligible, under ``rules``.

    Without zIIPs the eligible work runs on the GCPs at their speed (:func:`on_gcps`), and the
    class's rules then have ``rho`` 1.
    """
    if rules.n_z == 0 and rules.rho != 1.0:
        d, f = on_gcps(d, f, rules.rho)
        rules = Rules(rules.k_e, rules.k_g, rules.n_g, 0, rules.honor, rules.tau, rules.pool, rules.bg_g, rules.bg_z,
                      rules.bg_s, 1.0)
    ke = rules.k_e if f > 0.0 else 0
    kg = rules.k_g if f < 1.0 else 0
    s = f * d / (1.0 - rules.bg_z) / ke if ke > 0 else 0.0
    return ClosedClass(rules, d, f, ke, kg, rules.bg_g * rules.n_g, rules.bg_z * rules.n_z, s)


@numba.njit(cache=True)
def _open_gcp_time(x, spill, cls):
    """A transaction's time on and queued for the GCP pool at ``x`` tran/ms, helped share ``spill``."""
    d, f, ke, kg, n_g = cls.d, cls.f, cls.ke, cls.kg, cls.rules.n_g
    bg_s, a_bg_g = cls.rules.bg_s, cls.a_bg_g
    rho = cls.rules.rho
    w_hi, w_lo, a_g = gcp_priority_waits(x, d, f, kg, n_g, a_bg_g, bg_s, spill * x * f * d * rho, spill * x * ke, 0.0)
    if a_g >= n_g:
        return np.inf
    return (1.0 - f) * d + spill * f * d * rho + kg * w_hi + ke * spill * w_lo


@numba.njit(cache=True)
def ziip_wait_beside_background(x, q0, cls, memo):
    """The class's zIIP wait per burst beside other classes' zIIP work at ``x`` tran/ms: (s_e, spill, wait, q).

    The open model's queue (:func:`ziip_queue`) with the class's own burst ``s_e = f D / k_E`` as its
    service. With honor YES the help rule's spill and wait (:func:`ziip_spill_and_wait`: the GCPs left by
    GCP-native and other classes' work, the class's follow-on bursts among all those offered the
    pool), held past the zIIPs' capacity (:func:`pool_wait_held_at_peaks`); with NO Erlang C, and an
    infinite wait where the pool is full. ``q`` is :func:`ziip_spill_and_wait`'s, else ``q0``. Used alike by
    the help path, the closed recursion and the closed solve beside background.
    """
    d, f, ke, n_g, m = cls.d, cls.f, cls.ke, cls.rules.n_g, cls.rules.n_z
    honor, tau, pool, bg_s, a_bg_g = cls.rules.honor, cls.rules.tau, cls.rules.pool, cls.rules.bg_s, cls.a_bg_g
    a_bz = cls.a_bz
    s_e = f * d / ke
    rate_q, s_q = ziip_queue(x, x * f * d, s_e, ke, m, a_bz, bg_s)
    if rate_q * s_q <= 1e-12:  # no zIIP queue to speak of (as in open_residence)
        return s_e, 0.0, 0.0, q0
    if honor:
        rho = cls.rules.rho
        spill, wait, q = ziip_spill_and_wait(rate_q, s_q, m, tau, pool, q0, (n_g - x * (1.0 - f) * d - a_bg_g) / rho,
                                             x * (ke - 1.0) / (x * ke + a_bz / bg_s))
        zp = ZiipPool(s_e, ke, a_bz / bg_s, a_bz, m, tau, n_g / rho, a_bg_g / rho, (1.0 - f) * d / rho)
        wait = pool_wait_held_at_peaks(wait, x, zp, pool, memo)
        return s_e, spill, wait, q
    if rate_q * s_q < m:
        return s_e, 0.0, erlang_c(m, rate_q * s_q) * s_q / (m - rate_q * s_q), q0
    return s_e, 0.0, np.inf, q0


@numba.njit(cache=True)
def _help_times(x, gcp_mva, q0, cls, memo, weight):
    """(zIIP time, GCP time, spill, q) of a transaction at ``x`` tran/ms while GCPs help.

    The zIIP pool is the open M/M/c+D queue at the burst rate ``k_E x`` (beside other classes'
    zIIP work, ``a_bz`` busy zIIPs, the open model's queue of :func:`ziip_queue` and the class's
    own burst ``f D / k_E`` as its service, not ``s``, the burst MVA stretches by that work's
    share of the zIIPs); the GCP time is the open
    pool's (:func:`_open_gcp_time`) or the closed network's MVA time (``gcp_mva`` per ms of
    GCP demand) where that is smaller, as an open queue overstates a finite one below saturation
    (and so the GCP time is continuous where help starts). The closed zIIP wait is not used here:
    it rises when a GCP is added (clients move from the GCP queue to the zIIP queue), which only
    the exact network offsets, and with the open GCP time it let a GCP added predict worse.
    """
    d, f, ke, kg, n_g = cls.d, cls.f, cls.ke, cls.kg, cls.rules.n_g
    m, tau, pool, bg_s, a_bg_g = cls.rules.n_z, cls.rules.tau, cls.rules.pool, cls.rules.bg_s, cls.a_bg_g
    a_bz, s, rho = cls.a_bz, cls.s, cls.rules.rho
    if a_bz > 0.0:
        s_e, spill, wait_open, q = ziip_wait_beside_background(x, q0, cls, memo)
        t_z = ke * ((1.0 - spill) * s_e + wait_open)
    else:
        spill, wait_open, q = ziip_spill_and_wait(x * ke, s, m, tau, pool, q0, (n_g - x * (1.0 - f) * d - a_bg_g) / rho,
                                                  (ke - 1.0) / ke)
        zp = ZiipPool(s, ke, 0.0, 0.0, m, tau, n_g / rho, a_bg_g / rho, (1.0 - f) * d / rho)
        wait_open = pool_wait_held_at_peaks(wait_open, x, zp, pool, memo)
        t_z = ke * ((1.0 - spill) * s + wait_open)
    r_g = _open_gcp_time(x, spill, cls)
    r_mva = ((1.0 - f) * d + spill * f * d * rho) * gcp_mva
    if r_mva < r_g:
        r_g = r_mva
    if pool and weight > 0.0:
        # where the zIIPs cannot keep up, help comes in cycles (see _help_cycle_wait); as in the open
        # model (open_residence), the smaller time in proportion to the cycle's weight. Beside other
        # classes' zIIP work, the open model's cycle (the zIIPs they leave, the class's own burst:
        # with MVA's stretched burst as service, work moved to the GCPs lost its stretch and the
        # response fell with load, 4.392 -> 4.383 ms from 1735 to 1780 tps on 8 GCPs + 2 zIIPs)
        cyc = _closed_cycle(cls)
        s_c = cyc.s
        e_c, g_c, spill_c = monotone_cycle_waits(x, cyc, memo)
        # the LPAR as the open model's cycle sees it, other classes' busy per engine from their engines
        rules = Rules(ke, kg, n_g, m, True, tau, True, a_bg_g / n_g, a_bz / m, bg_s, rho)
        e_c, g_c = cycle_waits_raised_to_peak(e_c, g_c, d, f, t_z + r_g, rules, weight, memo)
        if e_c < np.inf:
            t_z_c = ke * (1.0 - spill_c) * s_c + e_c
            r_g_c = (1.0 - f) * d + spill_c * f * d + g_c
            if t_z_c + r_g_c < t_z + r_g:
                # all of the gain on the zIIP side: the GCP time feeds the GCP pool's MVA state
                # (its queue at the next population), which the cycle does not describe. At most
                # down to the zIIP service of the unhelped share, the rest from the GCP time: a GCP
                # pool filled by other classes' work (1 GCP at 10 %) has an MVA time without bound,
                # and a zIIP time pushed below zero to offset it cancelled it to nothing, the
                # throughput without bound and the recursion to NaN (1 GCP + 5 zIIPs, 2,800 clients)
                gain = weight * (t_z + r_g - t_z_c - r_g_c)
                room = max(t_z - ke * (1.0 - spill_c) * s_c, 0.0)
                if gain <= room:
                    t_z -= gain
                else:
                    t_z -= room
                    r_g -= gain - room
        if spill_c > spill:
            spill += weight * (spill_c - spill)
    return t_z, r_g, spill, q


@numba.njit(cache=True)
def _illinois(x, h, lo, h_lo, hi, h_hi, side):
    """One bracket update of Illinois regula falsi: ``h(x)`` replaces the end of its sign.

    An end kept twice in a row has its value halved, so the bracket closes from both sides
    (Dowell and Jarratt 1971). Returns ``(lo, h_lo, hi, h_hi, side)``.
    """
    if h < 0.0:
        if side == -1:
            h_hi *= 0.5
        return x, h, hi, h_hi, -1
    if side == 1:
        h_lo *= 0.5
    return lo, h_lo, x, h, 1


@numba.njit(cache=True)
def _push_root(seen, x, t, q):
    """Shift ``seen`` (``[X, T]`` of the last three populations, then ``q`` of the last two) and append."""
    # element by element: a slice assignment between overlapping views copies through a
    # temporary array, an allocation per population in the help path
    seen[0], seen[1], seen[2], seen[3] = seen[2], seen[3], seen[4], seen[5]
    seen[4], seen[5] = x, t
    seen[6], seen[7] = seen[7], q


@numba.njit(cache=True)
def help_throughput(n, z_r0, gcp_mva, q0, cls, seen, memo, weight):
    """The throughput ``X`` (tran/ms) of ``n`` clients while GCPs help: ``X = n / (Z + R0 + T(X))``.

    ``T`` is :func:`_help_times`'s zIIP plus GCP time, solved together with the spill it sets (a spill
    taken from the population before makes the throughput swing from one population to the next
    once the GCP pool fills). ``T`` grows with ``X`` and without bound as the GCP pool fills, so
    ``h(X) = X - n / (Z + R0 + T(X))`` rises with slope at least 1, is finite everywhere (0 beyond
    the pool's capacity) and has one root, below that capacity.

    The roots move smoothly with the population, so the first try is the quadratic extrapolation
    ``3 X(n-1) - 3 X(n-2) + X(n-3)`` of the roots before (``seen``: ``[X, T]`` of populations
    ``n - 3, n - 2, n - 1``, then the pool rule's ``q`` of ``n - 2, n - 1``, updated in place;
    zeros where there are none), then the secant method
    from it and ``X(n - 1)``: two or three evaluations a population. It falls back to Illinois
    regula falsi on ``[0, n / (Z + R0 + D)]`` if a step leaves that bracket or six do not converge.
    Returns ``(X, zIIP time, GCP time, spill, q)``.
    """
    d = cls.d
    q = q0
    if q0 < 1.0 and seen[6] > 0.0:
        # q moves smoothly too: from the line through the last two populations' q the pool rule's
        # Newton step is small enough to be taken without evaluating again (see ziip_spill_and_wait)
        q = 2.0 * seen[7] - seen[6]
        q = 0.0 if q < 0.0 else (q0 if q >= 1.0 else q)
    top = n / (z_r0 + d)
    t_z, r_g, spill = 0.0, 0.0, 0.0
    if seen[2] > 0.0 and seen[4] > 0.0 and seen[2] != seen[4]:
        x_a, h_a = seen[4], seen[4] - n / (z_r0 + seen[5])
        if seen[0] > 0.0:
            x_b = 3.0 * seen[4] - 3.0 * seen[2] + seen[0]
            h_b = np.nan  # not evaluated yet
        else:
            x_b, h_b = seen[2], seen[2] - n / (z_r0 + seen[3])
        for _ in range(6):
            if np.isnan(h_b):
                x = x_b
            elif h_b == h_a:
                break
            else:
                x = x_b - h_b * (x_b - x_a) / (h_b - h_a)
            if not 0.0 < x <= top:
                break
            t_z, r_g, spill, q = _help_times(x, gcp_mva, q, cls, memo, weight)
            h = x - n / (z_r0 + t_z + r_g)
            if abs(h) <= 1e-10 * x:
                _push_root(seen, x, t_z + r_g, q)
                return x, t_z, r_g, spill, q
            if np.isnan(h_b):
                h_b = h
            else:
                x_a, h_a, x_b, h_b = x_b, h_b, x, h
    lo, h_lo = 0.0, -top
    hi = top
    t_z, r_g, spill, q = _help_times(hi, gcp_mva, q, cls, memo, weight)
    h_hi = hi - n / (z_r0 + t_z + r_g)
    side = 0
    x = hi
    for _ in range(200):
        x = (lo * h_hi - hi * h_lo) / (h_hi - h_lo) if h_hi > h_lo else 0.5 * (lo + hi)
        t_z, r_g, spill, q = _help_times(x, gcp_mva, q, cls, memo, weight)
        h = x - n / (z_r0 + t_z + r_g)
        if abs(h) <= 1e-12 * x or hi - lo <= 1e-14 * hi:
            break
        lo, h_lo, hi, h_hi, side = _illinois(x, h, lo, h_lo, hi, h_hi, side)
    _push_root(seen, x, t_z + r_g, q)
    return x, t_z, r_g, spill, q


@numba.njit(cache=True)
def _times_beside_background(x, ziip_open, t_z_mva, r_g_mva, q0, cls, memo):
    """(zIIP time, GCP time, q) of a transaction at ``x`` tran/ms beside other classes' work, GCPs not helping.

    A pool with other classes' work is timed by the open model's queue at ``x`` (the zIIPs by
    :func:`ziip_queue` where ``ziip_open``, the GCPs by the open pool where that is below their
    MVA time ``r_g_mva``); the other pool keeps its MVA time. ``inf`` beyond a full zIIP pool.
    """
    d, f, ke, n_z, honor, a_bg_g = cls.d, cls.f, cls.ke, cls.rules.n_z, cls.rules.honor, cls.a_bg_g
    t_z = t_z_mva
    q = q0
    if ziip_open:
        s_e, spill, wait, q = ziip_wait_beside_background(x, q0, cls, memo)
        if not honor and wait == np.inf:
            return np.inf, np.inf, q
        t_z = ke * ((1.0 - spill) * s_e + wait)
    r_g = r_g_mva
    if a_bg_g > 0.0:
        if n_z > 0:
            r_open = _open_gcp_time(x, 0.0, cls)
        else:
            r_open = open_residence(x, d, f, cls.rules, memo)[0]  # no zIIP: the class's own rules
        if r_open < r_g:
            r_g = r_open
    return t_z, r_g, q


@numba.njit(cache=True)
def throughput_beside_background(n, z_r0, x_prev, ziip_open, t_z_mva, r_g_mva, q0, cls, memo):
    """``X = n / (Z + R0 + T(X))`` with :func:`_times_beside_background`'s times: (X, zIIP time, GCP time, q).

    Solved with the throughput it carries, as the help path is (:func:`help_throughput`): the open
    times at the population before's throughput lag one population behind, and near a full GCP
    pool, where they are steep, the throughput swung from one population to the next and the
    response with it (docs/models/dispatch.md).
    ``T`` rises with ``X``, so ``h(X) = X - n / (Z + R0 + T(X))`` rises and has one root; response
    never falls with load, so it lies in ``[X(n-1), X(n-1) n / (n - 1)]``. Illinois regula falsi.
    """
    d = cls.d
    lo = x_prev
    hi = x_prev * n / (n - 1.0) if n > 1 and x_prev > 0.0 else n / (z_r0 + d)
    t_z, r_g, q = _times_beside_background(lo, ziip_open, t_z_mva, r_g_mva, q0, cls, memo)
    h_lo = lo - n / (z_r0 + t_z + r_g)
    if h_lo >= 0.0:  # the MVA time fell below the population before's (its bookkeeping): from zero
        lo = 0.0
        t_z, r_g, q = _times_beside_background(lo, ziip_open, t_z_mva, r_g_mva, q0, cls, memo)
        h_lo = lo - n / (z_r0 + t_z + r_g)
    t_hi, r_hi, q = _times_beside_background(hi, ziip_open, t_z_mva, r_g_mva, q, cls, memo)
    h_hi = hi - n / (z_r0 + t_hi + r_hi)
    top = n / (z_r0 + d)
    if h_hi <= 0.0 and hi < top:  # the MVA time fell (its bookkeeping): up to the bound of no queue
        hi = top
        t_hi, r_hi, q = _times_beside_background(hi, ziip_open, t_z_mva, r_g_mva, q, cls, memo)
        h_hi = hi - n / (z_r0 + t_hi + r_hi)
    if h_hi <= 0.0:
        return hi, t_hi, r_hi, q
    x = lo
    side = 0
    for _ in range(200):
        x = (lo * h_hi - hi * h_lo) / (h_hi - h_lo) if np.isfinite(h_hi) else 0.5 * (lo + hi)
        t_z, r_g, q = _times_beside_background(x, ziip_open, t_z_mva, r_g_mva, q, cls, memo)
        h = x - n / (z_r0 + t_z + r_g)
        if abs(h) <= 1e-12 * x or hi - lo <= 1e-14 * hi:
            break
        lo, h_lo, hi, h_hi, side = _illinois(x, h, lo, h_lo, hi, h_hi, side)
    return x, t_z, r_g, q


@numba.njit(cache=True)
def _closed_cycle(cls):
    """The help cycle's :class:`Cycle` in a closed solve: beside other classes' zIIP work the open model's.

    That is the class's own burst ``f D / k_E`` on the zIIPs the other classes leave (see
    :func:`_help_times`); without them the recursion's burst ``s`` on all ``m``.
    """
    d, f, ke, m, a_bz = cls.d, cls.f, cls.ke, cls.rules.n_z, cls.a_bz
    s_c, c_c = (f * d / ke, m - a_bz) if a_bz > 0.0 else (cls.s, float(m))
    return Cycle(s_c, ke, cls.kg, c_c, cls.rules.n_g, (1.0 - f) * d, cls.a_bg_g, cls.rules.bg_s, cls.rules.tau,
                 cls.rules.rho)


@numba.njit(cache=True)
def closed_cycle_table(memo, cls):
    """The closed solve's help cycle table into ``memo`` (:func:`tabulate_cycle_least_waits`); returns its weight.

    The cycle's burst and zIIPs are :func:`_closed_cycle`'s.
    """
    cyc = _closed_cycle(cls)
    weight = cycle_weight(cyc.c_z, cyc.tau, cyc.s) if cls.rules.pool else 0.0
    memo.cycle[0], memo.cycle[1], memo.cycle[2] = (
        tabulate_cycle_least_waits(cyc, memo.cycle_table)
        if weight > 0.0 else (0.0, np.inf, np.inf))
    memo.cycle_peak = -1.0  # the open model's highest residence below that rate, when needed
    return weight
