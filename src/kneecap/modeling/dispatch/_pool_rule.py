"""The pool rule's wait for a zIIP: zIIPs alone until a burst has waited ZIIPAWMT, a flush, then help."""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from kneecap.modeling.dispatch._memo import MAX_PEAKS
from kneecap.modeling.dispatch._queues import erlang_b, mmcd_at_mean_patience, random_walk_excess, ziip_queue

#: power series of E_2(x) = (e^x - 1 - x) / x^2 = sum x^n / (n + 2)! and of
#: E_4(x) = ((e^x (x - 1) + 1) / x^2 - 1/2) / x = sum x^n (n + 2) / (n + 3)! (:func:`pool_rule_wait`),
#: ten terms each: where they are used (|x| < 0.2) the first left out is below 1e-15 of the sum,
#: and the direct forms' cancellation error at |x| = 0.2 about 1e-14
_E2_SERIES = (1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040, 1 / 40320, 1 / 362880, 1 / 3628800, 1 / 39916800)


_E4_SERIES = (2 / 6, 3 / 24, 4 / 120, 5 / 720, 6 / 5040, 7 / 40320, 8 / 362880, 9 / 3628800, 10 / 39916800,
              11 / 479001600)


@numba.njit(cache=True)
def _horner(coeffs, x):
    """``sum_n coeffs[n] x^n``."""
    total = 0.0
    for k in range(len(coeffs) - 1, -1, -1):
        total = total * x + coeffs[k]
    return total


class BurstQueue(NamedTuple):
    """A zIIP pool's bursts: ``lam`` bursts/ms of ``s`` ms on ``c`` zIIPs, ZIIPAWMT ``tau`` (:func:`pool_rule_wait`)."""

    lam: float
    s: float
    c: float
    tau: float


class Alone(NamedTuple):
    """The zIIPs-alone terms of :func:`pool_rule_wait` per ``p_{c-1}``.

    ``head`` the states with an engine free, ``mass`` ``int f``, ``area`` ``int v f``, ``trig`` the
    trigger rate ``F``.
    """

    head: float
    mass: float
    area: float
    trig: float


@numba.njit(cache=True)
def pool_rule_wait(lam, s, c, tau, b_head, spare, chain, offered):
    r"""Mean wait per burst for a zIIP under the pool rule: the zIIPs alone, a trigger, a flush, help.

    ``lam`` bursts/ms of mean ``s`` on ``c`` zIIPs, ``b_head = B(c-1, a)``; ``spare`` GCPs left by
    GCP-native and other classes' work, ``chain`` the share of the bursts a transaction offers the
    moment its previous one on the pool ends, ``offered`` the share offered while GCPs help
    (:func:`_share_offered_in_help`). Returns the wait in ms.

    Notes
    -----
    Under the pool rule no burst leaves the zIIP queue on its own: the zIIPs serve it alone, an
    M/M/c queue, until a burst arrives that will wait ``tau`` (its virtual wait ``V > tau``);
    ``tau`` later it heads the queue with every burst offered since behind it (the *pending*
    phase, a backlog of about ``lambda tau``), the pool needs help and every spare GCP with the
    zIIPs drains it until a zIIP finds the queue empty (the *help* phase). Level crossing on
    ``V`` while the zIIPs are alone, with ``beta = lambda - c/s``, ``F`` the rate of triggers and
    ``p_{c-1}`` the probability that ``c - 1`` zIIPs are busy: an arrival below ``tau`` adds an
    exponential ``c/s`` jump, one above it is the trigger and takes the mass out (back at ``V = 0``
    after the flush), so ``P(V > tau) = F / lambda`` and below ``tau``

    .. math::

        f(v) = \lambda p_{c-1} e^{\beta v} - F\big(1 + \lambda v\, E_1(\beta v)\big), \quad
        \frac{F}{p_{c-1}} = \frac{\lambda e^{\beta\tau}}{1 + \frac{c}{s\lambda} + \lambda\tau E_1(\beta\tau)},
        \quad E_1(x) = \frac{e^x - 1}{x}

    (``f(tau) = 0``). A transaction offers its eligible bursts one after another: a share
    ``chi`` (``chain``) of the pool's bursts come as the same transaction's burst there ends, so the
    number of bursts at the pool moves only by fresh arrivals and by bursts that end a run, an
    M/M/c queue with the same stationary distribution (BCMP) but ``1 / (1 - chi)`` times slower;
    the pending and help phases last their own time. Such a burst waits one burst-end less than a
    fresh one, seen where a burst ends (``min(n, c)`` weighted): the phase alone
    (``A = int_0^tau f`` over the states ``H = 1/B(c-1, a)`` with an engine free) gives

    .. math::

        w_{fresh} = \frac{\int_0^\tau v f}{H + A}, \quad
        w_{follow} = \frac{c\,(\int_0^\tau v f - \frac{s}{c} A)}{a (H - 1) + c A}, \quad
        w_{alone} = \frac{\frac{H + A}{1 - \chi}\big((1 - \chi) w_{fresh} + \chi w_{follow}\big)
            + F\tau\big(\frac{1}{\lambda} + \frac{\tau + D}{2}\big)}{\frac{H + A}{1 - \chi}
            + F\big(\frac{1}{\lambda} + \tau\big)}

    with a burst offered in the pending phase waiting for the trigger, ``tau / 2`` on average,
    then for its place in the backlog, ``D / 2`` with ``D = lambda tau s / (c + G)`` (the backlog
    drained by every engine). A burst offered while GCPs help waits behind that backlog drained
    straight, ``D / 2``, plus the excess of the queue, a random walk, over the straight line (as
    in :func:`_help_cycle_wait`): with ``M = (c + G) / s`` bursts/ms served and ``lambda`` offered, of
    which the fresh ``lambda (1 - chi)`` add to the queue and the last ``M (1 - chi)`` leave it,
    the mean height of a walk with drift ``-(M - lambda)(1 - chi)`` and variance rate
    ``(lambda + M)(1 - chi)`` over its way down is the line's plus ``(lambda + M) / (2 M (M -
    lambda))`` per burst. A share ``theta`` (``offered``) of the bursts are offered then:

    .. math:: W = (1 - \theta)\, w_{alone}
        + \theta \Big(\frac{D}{2} + \frac{\lambda + M}{2 M (M - \lambda)}\Big)

    How each term compares with the instrumented simulation: docs/models/dispatch.md.
    """
    if lam <= 0.0:
        return 0.0
    mass, area, trig = _ziips_alone_terms(lam, s, c, tau)
    return _pool_rule_phases_wait(BurstQueue(lam, s, c, tau), Alone(1.0 / b_head, mass, area, trig), spare, chain,
                                  offered)


@numba.njit(cache=True)
def _ziips_alone_terms(lam, s, c, tau):
    """:func:`pool_rule_wait`'s zIIPs-alone terms per ``p_{c-1}``: (``int f``, ``int v f``, ``F``), ``lam > 0``."""
    mu_c = c / s
    x = (lam - mu_c) * tau
    ratio = 1.0 + mu_c / lam
    if x > 1.0:
        # past the zIIPs' capacity: every term per e^{beta tau} p_{c-1} (no overflow), with the
        # differences that would cancel worked out (E_1^2 - E_2 and E_1 E_3 - E_4 below are
        # e^-x (x - 1 + e^-x) / x^2 and e^-x (x^2/2 - x + 1 - e^-x) / x^3 times e^x)
        e_0 = math.exp(-x)
        e1 = (1.0 - e_0) / x
        e3 = (x - 1.0 + e_0) / (x * x)
        den = ratio * e_0 + lam * tau * e1
        trig = lam / den
        mass = lam * tau * (e1 * ratio - 1.0 + lam * tau * (x - 1.0 + e_0) / (x * x)) / den
        area = lam * tau * tau * (e3 * ratio - 0.5 + lam * tau * (x * x / 2.0 - x + 1.0 - e_0) / (x * x * x)) / den
        return mass, area, trig
    # per p_{c-1}, with the power series where |x| < 0.2 (E_1 ... E_4 cancel there;
    # E_1 = 1 + x E_2 and E_3 = 1/2 + x E_4 exactly)
    e_x = math.exp(x)
    if abs(x) < 0.2:
        e2 = _horner(_E2_SERIES, x)
        e4 = _horner(_E4_SERIES, x)
        e1 = 1.0 + x * e2
        e3 = 0.5 + x * e4
    else:
        inv_x = 1.0 / x
        e1 = (e_x - 1.0) * inv_x
        e2 = (e1 - 1.0) * inv_x
        e3 = (e_x * (x - 1.0) + 1.0) * inv_x * inv_x
        e4 = (e3 - 0.5) * inv_x
    trig = lam * e_x / (ratio + lam * tau * e1)  # F / p_{c-1}
    mass = lam * tau * e1 - trig * tau * (1.0 + lam * tau * e2)  # int_0^tau f / p_{c-1}
    area = lam * tau * tau * e3 - trig * tau * tau * (0.5 + lam * tau * e4)  # int_0^tau v f / p_{c-1}
    return mass, area, trig


@numba.njit(cache=True)
def _pool_rule_phases_wait(q, alone, spare, chain, offered):
    """:func:`pool_rule_wait`'s phases put together: the mean wait per burst, ms.

    ``q`` is the zIIPs' :class:`BurstQueue`, ``alone`` their :class:`Alone` terms; ``offered`` is the
    share of bursts offered while GCPs help (:func:`_share_offered_in_help`).
    """
    lam, s, c, tau = q
    head, mass, area, trig = alone
    drain = lam * tau * s / (c + max(spare, 0.0))  # the backlog lambda tau over every engine's rate
    # w_alone of pool_rule_wait with numerator and denominator times (1 - chi) (H + A): the
    # fresh bursts' term is then (1 - chi) int v f, and a solve evaluates this a few times a population
    inv_lam = 1.0 / lam
    follow = (head + mass) * c * max(area - s / c * mass, 0.0) / (lam * s * (head - 1.0) + c * mass)
    alone = (((1.0 - chain) * area + chain * follow + (1.0 - chain) * trig * tau * (inv_lam + (tau + drain) / 2.0))
             / (head + mass + (1.0 - chain) * trig * (inv_lam + tau)))
    if offered <= 0.0:
        return alone
    # bursts arrive at lam and all M = (c + G) / s engines serve them (see pool_rule_wait)
    return (1.0 - offered) * alone + offered * (drain / 2.0 + random_walk_excess(lam, (c + max(spare, 0.0)) / s, 1))


@numba.njit(cache=True)
def _share_offered_in_help(a, c, spill, spare, chain):
    r"""The share of a pool's bursts offered while GCPs help it (:func:`pool_rule_wait`), at most 1.

    ``a`` busy engines' worth of bursts, a share ``spill`` of them helped on ``spare`` GCPs, which
    take queued bursts all the time help is on: help is on a share ``h = spill a / G`` of the time
    (work conservation). Fresh bursts are offered at ``lambda (1 - chi)`` then as at any time,
    follow-ons as the pool's bursts end, ``chi (c + G) / s`` per ms while every engine serves it,
    so

    .. math:: \theta = h \Big(1 - \chi + \chi\frac{c + G}{a}\Big)

    Against the instrumented simulation: docs/models/dispatch.md.
    """
    if spill <= 1e-12:
        # a spill below 1e-12 moves no measurable work (as the closed solve counts it): none
        # offered while GCPs help. Otherwise spill / spare decides it where the spare GCPs reach
        # zero, and a closed population at the GCPs' capacity, solved beside other classes' work,
        # had a spill of 1.6e-28 offer every burst in help 1e-14 GCPs later: its zIIP wait jumped
        # 0.11 -> 2.15 ms within one ulp of throughput (9 GCPs at 45 % + 7 zIIPs, 2,912 clients)
        return 0.0
    if spare <= 0.0:
        return 1.0
    offered = spill * (a * (1.0 - chain) + chain * (c + spare)) / spare
    return offered if offered < 1.0 else 1.0


@numba.njit(cache=True)
def ziip_spill_and_wait(lam, s, c, tau, pool, q0, spare, chain):
    """(spill, mean wait for a zIIP, q) under the help rule.

    Burst rule: M/M/c+D at patience ``tau`` (:func:`mmcd_at_mean_patience`). Pool rule: the spill of
    M/M/c+D at the mean patience of a burst queued behind others (:func:`mmcd_at_mean_patience`) and the
    wait of the zIIPs alone until a trigger, its flush and the help that follows
    (:func:`pool_rule_wait`). ``spare`` GCPs are left by GCP-native and other classes' work;
    ``chain`` is the share of the pool's bursts a transaction offers the moment its previous one
    there ends. ``q`` (the share of waiting bursts that find no other waiting) is the patience's
    fixed point, kept for the next solve's warm start. Past the zIIPs' capacity this wait can fall
    as the load rises; the callers hold it at its peaks (:func:`_find_pool_wait_peaks`).
    """
    b_head = erlang_b(c - 1, lam * s)
    spill, wait, q = mmcd_at_mean_patience(lam, s, c, tau, pool, q0, b_head)
    if pool and tau > 0.0 and lam > 0.0:
        wait = _pool_rule_wait_least_over_spare(BurstQueue(lam, s, c, tau), 1.0 / b_head, spare, chain, spill)
    return spill, wait, q


@numba.njit(cache=True)
def _pool_rule_wait_at_spare(q, alone, spare, chain, spill):
    """:func:`_pool_rule_phases_wait` at ``spare`` GCPs, the share offered in help by :func:`_share_offered_in_help`."""
    offered = _share_offered_in_help(q.lam * q.s, q.c, spill, spare, chain)
    return _pool_rule_phases_wait(q, alone, spare, chain, offered)


@numba.njit(cache=True)
def _pool_rule_wait_least_over_spare(q, head, spare, chain, spill):
    r""":func:`pool_rule_wait` at ``spare`` GCPs, or its least over fewer spare GCPs where that is lower.

    The pool rule's wait is ``W = (1 - theta) w_alone + theta w_help`` with ``theta`` the share of
    bursts offered while GCPs help (:func:`_share_offered_in_help`) and ``w_help = D / 2`` plus the random
    walk's term (:func:`pool_rule_wait`). More spare GCPs drain the backlog sooner (``w_help``
    falls) but so help is on for less of the time and fewer bursts are offered
    then (``theta ~ spill a / G``): with one eligible burst per transaction, a short ZIIPAWMT and
    the zIIPs just behind, ``W`` can rise with ``G`` (docs/models/dispatch.md), too little for a
    simulation to tell either
    way. A GCP added must not predict worse, so where ``W`` rises with ``G`` it is held at its
    least over ``(0, G]``.
    """
    lam, s, c, tau = q
    alone = Alone(head, *_ziips_alone_terms(lam, s, c, tau))
    a = lam * s
    wait = _pool_rule_wait_at_spare(q, alone, spare, chain, spill)
    if spill <= 1e-12 or spare <= 0.0:
        return wait
    # below g_1 every burst is offered while GCPs help (theta = 1) and W = w_help falls with G: the
    # least over (0, spare] is at g_1 or past it, where W is smooth. g_1 itself is a kink, taken
    # exactly, so spare GCPs past the least all give the same wait
    follow_spill = spill * chain
    g_1 = spill * (a * (1.0 - chain) + chain * c) / (1.0 - follow_spill) if follow_spill < 1.0 else spare
    lo, hi = min(max(g_1, 1e-9 * spare), spare), spare
    at_kink = _pool_rule_wait_at_spare(q, alone, lo, chain, spill)
    rising = _pool_rule_wait_at_spare(q, alone, spare * (1.0 - 1e-6), chain, spill) < wait
    if not rising and at_kink >= wait:
        # falling in G at spare and no lower at the kink: the least is spare's own (a dip of W
        # between the two, down, up and down again, would be missed). Both ends are compared at
        # every load, so the held wait moves continuously where W(spare) and W(g_1) trade places:
        # checking the slope at spare alone let it jump down by 8 % as the slope there changed
        # sign (1 zIIP, 1 burst of 2.5 ms, ZIIPAWMT 3.2 ms, 6 GCPs 20 % busy with other classes'
        # work, at 24 tps), response by 0.23 %
        return wait
    ratio = 0.3819660112501051
    x1 = lo + ratio * (hi - lo)
    x2 = hi - ratio * (hi - lo)
    f1 = _pool_rule_wait_at_spare(q, alone, x1, chain, spill)
    f2 = _pool_rule_wait_at_spare(q, alone, x2, chain, spill)
    while hi - lo > 1e-7 * spare:
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = lo + ratio * (hi - lo)
            f1 = _pool_rule_wait_at_spare(q, alone, x1, chain, spill)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = hi - ratio * (hi - lo)
            f2 = _pool_rule_wait_at_spare(q, alone, x2, chain, spill)
    return min(wait, at_kink, f1, f2)


@numba.njit(cache=True)
def _pool_rule_wait_at_rate(lam_t, zp, q0):
    """The pool rule's (wait per burst for a zIIP, q) of :func:`ziip_spill_and_wait` at ``lam_t`` transactions/ms.

    For the class and zIIP pool ``zp`` (:class:`ZiipPool`); ``q0`` starts the patience's fixed
    point (:func:`mmcd_at_mean_patience`).
    """
    s_e, ke, rate_bz, a_bz, n_z, tau, n_g, a_bg_g, native_per_tran = zp
    rate_z = lam_t * ke + rate_bz
    native = lam_t * native_per_tran
    # the queue the callers solve: beside other classes' bursts that of ziip_queue, so the peaks
    # are those of the wait they hold
    rate_q, s_q = ziip_queue(lam_t, lam_t * ke * s_e, s_e, ke, n_z, a_bz, a_bz / rate_bz if a_bz > 0.0 else 1.0)
    _, wait, q = ziip_spill_and_wait(rate_q, s_q, n_z, tau, True, q0, n_g - native - a_bg_g,
                                     lam_t * (ke - 1.0) / rate_z)
    return wait, q


class ZiipPool(NamedTuple):
    """A class's eligible work on its zIIP pool, where the pool rule's wait is held at its peaks; times in ms.

    Beside other classes' zIIP work ``s_e`` is the class's own burst and the wait that of
    :func:`ziip_queue`'s queue; without it the burst the caller's queue serves.
    """

    #: the eligible burst and eligible bursts per transaction
    s_e: float
    ke: int
    #: other classes' zIIP work: bursts/ms and busy engines; the zIIPs online
    rate_bz: float
    a_bz: float
    n_z: int
    #: ZIIPAWMT
    tau: float
    #: the GCPs online, other classes' busy GCPs, the class's GCP-only CPU per transaction
    n_g: int
    a_bg_g: float
    native: float


#: the pool rule's wait is held at its peaks (:func:`_find_pool_wait_peaks`) from this share of the
#: load at which the zIIPs left by other classes are full
_HOLD_FROM = 0.5


@numba.njit(cache=True)
def _scan_load(i, lo, full, step_below, step, n_below):
    """Load ``i`` of :func:`_find_pool_wait_peaks`' scan: ``n_below`` steps to ``full``, then steps of ``step``."""
    return lo + i * step_below if i <= n_below else full + (i - n_below) * step


@numba.njit(cache=True)
def _find_pool_wait_peaks(zp, out, scan, upto):
    """Where the zIIPs fall behind, the loads at which :func:`_pool_rule_wait_at_rate` stops rising, into ``out``.

    For the class and zIIP pool ``zp`` (:class:`ZiipPool`).

    ``out[0]`` is the number of peaks found (up to :data:`MAX_PEAKS`), ``out[1 + 2k]`` and
    ``out[2 + 2k]`` the rate (tran/ms) and wait of peak ``k``, in rising order of both: each is
    higher than the one before. Past the zIIPs' capacity more of the bursts are offered while GCPs
    help and wait less (:func:`_share_offered_in_help`), so the wait can fall as the load rises before it
    rises again (as the simulation's can there); the callers hold it at the last peak below the
    load (:func:`pool_wait_held_at_peaks`), so more load never predicts better. With a short ZIIPAWMT and
    other classes' zIIP work it can start to fall a little before the zIIPs are full
    (docs/models/dispatch.md), so the
    search starts at half their capacity (:data:`_HOLD_FROM`). Found on 32 loads from there to
    where the zIIPs are full and 128 from there to the pools' capacity, each fall from above the
    peaks found so far then by golden section between the neighbours of the load that falls, to a
    millionth of the rate.

    The scan goes only as far as the peaks below ``upto`` (tran/ms) need, and ``scan`` (4 floats:
    the last load scanned, its wait and patience fixed point, the last peak's wait) lets a later
    call for a higher load go on from there: a solve whose every load has an LPAR state of its own
    (an SMF class's intervals, each with its own other classes' work) scans to its own load only.
    ``out[0] < 0`` starts afresh.
    """
    s_e, ke, a_bz, n_z, n_g, a_bg_g, native_per_tran = zp.s_e, zp.ke, zp.a_bz, zp.n_z, zp.n_g, zp.a_bg_g, zp.native
    full = (n_z - a_bz) / (ke * s_e)
    lo = _HOLD_FROM * full
    hi = (n_g - a_bg_g + n_z - a_bz) / (ke * s_e + native_per_tran)
    n_below = 32
    n = n_below + 128
    step_below = (full - lo) / n_below
    step = (hi - full) * (1.0 - 1e-6) / (n - n_below)
    if out[0] < 0.0:
        out[0] = 0.0
        if ke < 1 or hi <= full:
            scan[0] = n
            return
        prev, q = _pool_rule_wait_at_rate(lo, zp, 1.0)
        scan[0], scan[1], scan[2], scan[3] = 0.0, prev, q, -np.inf
    i = int(scan[0])
    prev, q, level = scan[1], scan[2], scan[3]
    count = int(out[0])
    # a fall found at load i is a peak between loads i - 2 and i: scan while load i - 2 is below upto
    while i < n and count < MAX_PEAKS and _scan_load(max(i - 1, 0), lo, full, step_below, step, n_below) <= upto:
        i += 1
        # each load's patience fixed point from the one before: a step or two of Newton's method
        cur, q = _pool_rule_wait_at_rate(_scan_load(i, lo, full, step_below, step, n_below), zp, q)
        if cur < prev and prev > level:
            a = _scan_load(max(i - 2, 0), lo, full, step_below, step, n_below)
            b = _scan_load(i, lo, full, step_below, step, n_below)
            ratio = 0.3819660112501051
            x1 = a + ratio * (b - a)
            x2 = b - ratio * (b - a)
            f1 = _pool_rule_wait_at_rate(x1, zp, q)[0]
            f2 = _pool_rule_wait_at_rate(x2, zp, q)[0]
            while b - a > 1e-6 * hi:
                if f1 >= f2:
                    b, x2, f2 = x2, x1, f1
                    x1 = a + ratio * (b - a)
                    f1 = _pool_rule_wait_at_rate(x1, zp, q)[0]
                else:
                    a, x1, f1 = x1, x2, f2
                    x2 = b - ratio * (b - a)
                    f2 = _pool_rule_wait_at_rate(x2, zp, q)[0]
            x_p, w_p = (x1, f1) if f1 >= f2 else (x2, f2)
            if prev > w_p:  # the coarse load itself is the higher: keep it
                x_p, w_p = _scan_load(i - 1, lo, full, step_below, step, n_below), prev
            out[1 + 2 * count] = x_p
            out[2 + 2 * count] = w_p
            count += 1
            out[0] = count
            level = w_p
        prev = cur
    scan[0], scan[1], scan[2], scan[3] = float(i), prev, q, level


@numba.njit(cache=True)
def pool_wait_held_at_peaks(wait, x, zp, pool, memo):
    """A pool-rule wait per burst at ``x`` tran/ms, held near and past the zIIPs' capacity (:func:`_hold_at_last_peak`).

    ``zp`` (:class:`ZiipPool`) is the class and its zIIP pool, ``pool`` the pool rule.
    """
    if not pool or zp.tau <= 0.0 or x * zp.ke * zp.s_e <= _HOLD_FROM * (zp.n_z - zp.a_bz):  # below the scan's start
        return wait
    # on to the peaks below x (nothing to do where the scan has been there)
    _find_pool_wait_peaks(zp, memo.wait_peaks, memo.peak_scan, x)
    return _hold_at_last_peak(wait, x, memo.wait_peaks)


@numba.njit(cache=True)
def _hold_at_last_peak(wait, x, peaks):
    """``wait`` at ``x`` tran/ms, or the last of :func:`_find_pool_wait_peaks`' peaks (``peaks``) below ``x``."""
    # indexed, not sliced: a solve asks a few times a population
    for k in range(int(peaks[0]) - 1, -1, -1):
        if x > peaks[1 + 2 * k]:
            return peaks[2 + 2 * k] if peaks[2 + 2 * k] > wait else wait
    return wait
