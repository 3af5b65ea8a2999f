"""The help cycle where the zIIPs cannot keep up, and the holds that keep response from falling with load."""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from kneecap.modeling.dispatch._memo import NODES
from kneecap.modeling.dispatch._open_queues import queue_residence
from kneecap.modeling.dispatch._queues import gcp_priority_waits, random_walk_excess

#: The help cycle (:func:`_help_cycle_wait`) is a fluid picture of a backlog of ``mu tau`` bursts (the
#: backlog at which a burst has waited ZIIPAWMT): it is given no weight up to 2 such bursts and full
#: weight from 8, between the two in proportion: where ``mu tau`` is a couple of bursts the cycle
#: lasts a couple of bursts and the M/M/c+D queue describes it better. The bounds were set against
#: the dispatcher simulation (docs/models/dispatch.md).
HELP_CYCLE_BURSTS = (2.0, 8.0)


class Cycle(NamedTuple):
    """The class and LPAR the help cycle is solved for (:func:`help_cycle_waits`); times in ms."""

    #: the eligible burst on a zIIP, eligible and GCP-only bursts per transaction
    s: float
    ke: int
    kg: int
    #: the zIIPs other classes leave, the GCPs online
    c_z: float
    n_g: int
    #: the class's GCP-only CPU per transaction
    d_n: float
    #: other classes' busy GCPs and their mean burst
    a_bg_g: float
    bg_s: float
    #: ZIIPAWMT
    tau: float
    #: a zIIP's speed over a GCP's (:class:`Rules`)
    rho: float


@numba.njit(cache=True)
def cycle_weight(c_z, tau, s):
    """The help cycle's weight beside M/M/c+D: 0 to 1 as ``mu tau = c_Z tau / s`` passes :data:`HELP_CYCLE_BURSTS`."""
    if s <= 0.0:
        return 0.0
    lo, hi = HELP_CYCLE_BURSTS
    share = (c_z * tau / s - lo) / (hi - lo)
    return 0.0 if share <= 0.0 else (1.0 if share >= 1.0 else share)


@numba.njit(cache=True)
def _follow_on_ratio(lam, mu, ke):
    r"""The ratio ``r`` in (0, 1) of follow-on to fresh bursts per stage while the zIIPs alone serve a backlog.

    The root of ``lam (r + r^2 + ... + r^k) = mu`` (``mu`` bursts/ms served, ``lam`` transactions/ms
    arriving with ``k`` eligible bursts each); see :func:`_help_rounds_wait`. Newton's method from
    ``r = min(1, mu / lam)``, where the left side is at least ``mu`` in the cycle's regime
    (``lam k > mu``); the side is increasing and convex, so the steps fall monotonically to the root
    (at once for ``k = 1``).
    """
    r = min(1.0, mu / lam)
    for _ in range(64):
        power, total, slope = 1.0, 0.0, 0.0
        for i in range(1, ke + 1):
            slope += i * power  # d r^i / dr = i r^(i-1)
            power *= r
            total += power
        step = (lam * total - mu) / (lam * slope)
        r -= step
        if abs(step) < 1e-12 * r:
            break
    return r


# rounds of the help phase, per eligible burst of a transaction, before the rest are taken as
# one straight drain: the stages' mix has settled by then
_TAIL_AFTER = 16


@numba.njit(cache=True)
def _help_rounds_wait(lam, mu, big_m, ke, c_z, spare, tau):
    r"""Mean wait (ms) of an eligible burst while GCPs help, in a fluid picture of the help phase in rounds.

    Notes
    -----
    While the zIIPs alone serve a backlog, FCFS, a transaction's next burst joins the back of the
    queue as its last one ends, so the bursts served are those offered about one wait earlier and
    the mix of bursts still to go is steady: fresh bursts (``k`` to go) arrive at ``lam``, and each
    stage ``j`` at ``r`` times the rate of stage ``j + 1``, with ``r`` from
    ``lam (r + ... + r^k) = mu`` (:func:`_follow_on_ratio`); the queue takes
    ``X = lam (1 + r + ... + r^{k-1})`` bursts/ms. Help starts when the oldest queued burst has
    waited ``tau``: every burst behind it came in the last ``tau``, so ``b_j = X_j (tau + c_Z / X)``
    bursts of stage ``j`` are queued or on a zIIP.

    From there all ``C = c_Z + G`` engines serve the backlog in rounds, each round the ``B_n``
    bursts of the one before in ``B_n / M`` ms: the bursts with one to go leave, the others come
    back one stage on, and ``lam B_n / M`` fresh ones join. The queue, ``B_n - C`` at the start of
    round ``n``, stays near its start for about ``k`` rounds (the fresh bursts keep their place)
    and then falls; help ends where it is empty, at ``T``. Through the rounds' ends the queue is
    taken as straight lines with the corners rounded (a quadratic over half the shorter
    neighbouring round on either side of each end), so that ``T`` and the wait move smoothly with
    the load:

    .. math:: w_{rounds} = \frac{1}{M T} \int_0^T Q(t)\, dt

    (against the simulation: docs/models/dispatch.md). Past :data:`_TAIL_AFTER` rounds per burst (near
    the pools' saturation help lasts tens of thousands of rounds) the stages fall together by the
    last round's ratio ``rho``, which on the rounds' time scale is the straight line
    ``dB/dt = -(1 - rho) M`` continued to the end.
    """
    r = _follow_on_ratio(lam, mu, ke)
    stages = np.empty(ke)
    x_rate = 0.0
    power = 1.0
    for i in range(ke):
        x_rate += lam * power
        power *= r
    head = tau + c_z / x_rate
    b = 0.0
    power = 1.0
    for i in range(ke):  # stages[first + i] holds the bursts with i + 1 to go; fresh ones last
        stages[ke - 1 - i] = lam * power * head
        b += stages[ke - 1 - i]
        power *= r
    engines = c_z + spare
    if b <= engines:
        return 0.0
    # the rounds' ends (time, queue) to one past the first empty one
    n_max = _TAIL_AFTER * ke
    times = np.empty(n_max + 2)
    queue = np.empty(n_max + 2)
    times[0], queue[0] = 0.0, b - engines
    per_round = lam / big_m  # fresh transactions per burst served
    first = 0
    n = 0
    t = 0.0
    while True:
        fresh = per_round * b
        b_next = b - stages[first] + fresh
        t += b / big_m
        n += 1
        times[n], queue[n] = t, b_next - engines
        if queue[n - 1] < 0.0:
            break
        if n == n_max:
            slope = (b_next - b) * big_m / b
            if slope >= 0.0:
                return np.inf
            if queue[n] >= 0.0:  # the straight line on to an empty backlog
                n += 1
                times[n], queue[n] = t + b_next / -slope, -engines
            break
        stages[first] = fresh
        first += 1
        if first == ke:
            first = 0
        b = b_next
    return _rounded_queue_mean(times, queue, n) / big_m


@numba.njit(cache=True)
def _rounded_queue_mean(times, queue, n):
    """Time-average of the queue through the points ``(times[i], queue[i])``, ``i <= n``, to its first zero.

    Straight lines between the points with each inner corner replaced by the quadratic Bezier
    curve over ``+- eps`` (half the shorter neighbouring interval) with the corner as its middle
    control point: continuous in value and slope, so that the first zero and the mean move
    smoothly as the points do. The points must start at ``queue >= 0`` and end below 0.
    """
    area = 0.0
    eps_prev = 0.0
    for k in range(n):
        dt = times[k + 1] - times[k]
        slope = (queue[k + 1] - queue[k]) / dt
        eps_next = 0.5 * min(dt, times[k + 2] - times[k + 1]) if k + 1 < n else 0.0
        # straight piece of interval k
        a, b = times[k] + eps_prev, times[k + 1] - eps_next
        y_a = queue[k] + slope * eps_prev
        y_b = queue[k + 1] - slope * eps_next
        if y_b < 0.0:
            t_zero = a + y_a / (y_a - y_b) * (b - a)
            area += 0.5 * y_a * (t_zero - a)
            return area / t_zero
        area += 0.5 * (y_a + y_b) * (b - a)
        if k + 1 == n:
            break
        # the corner at point k + 1
        slope_next = (queue[k + 2] - queue[k + 1]) / (times[k + 2] - times[k + 1])
        y0, y1, y2 = y_b, queue[k + 1], queue[k + 1] + slope_next * eps_next
        quad = y0 - 2.0 * y1 + y2
        lin = 2.0 * (y1 - y0)
        u_zero = 2.0
        if y2 < 0.0 or y1 < 0.0:
            # first root of quad u^2 + lin u + y0 on [0, 1]
            if abs(quad) < 1e-12 * (abs(y0) + abs(y1) + abs(y2)):
                u_zero = -y0 / lin if lin < 0.0 else 2.0
            else:
                disc = lin * lin - 4.0 * quad * y0
                if disc >= 0.0:
                    root = math.sqrt(disc)
                    # the smaller nonnegative root, in the form that keeps its digits
                    q_ = -0.5 * (lin + (root if lin >= 0.0 else -root))
                    u1 = q_ / quad if q_ != 0.0 else 2.0
                    u2 = y0 / q_ if q_ != 0.0 else 2.0
                    for u in (u1, u2):
                        if 0.0 <= u <= 1.0 and u < u_zero:
                            u_zero = u
        if u_zero <= 1.0:
            t_zero = times[k + 1] - eps_next + 2.0 * eps_next * u_zero
            area += 2.0 * eps_next * (quad * u_zero ** 3 / 3.0 + lin * u_zero ** 2 / 2.0 + y0 * u_zero)
            return area / t_zero
        area += 2.0 * eps_next * (y0 + y1 + y2) / 3.0
        eps_prev = eps_next
    return area / times[n]


@numba.njit(cache=True)
def _help_cycle_wait(lam, s, ke, c_z, g_free, d_n, tau):
    r"""The pool rule's help cycle where the zIIPs cannot keep up: (eligible wait per burst ms, spill).

    ``g_free`` is the GCP capacity other classes leave, ``d_n`` the class's GCP-only CPU per
    transaction; ``inf`` wait outside the cycle's regime (the eligible load ``a_E = lam k_E s``
    within the zIIPs' capacity ``c_Z``, or beyond what the zIIPs and the GCPs carry).

    Notes
    -----
    With ``a_E > c_Z`` the pool needs help as a matter of course and the help comes in cycles (the
    instrumented simulation, ``benchmarks/probe_help_phases.py``): *off*, the zIIPs work alone and
    a backlog of transactions builds until its oldest burst has waited ``tau``; *on*, every spare
    GCP takes queued bursts with the zIIPs until a zIIP finds the queue empty. A transaction waiting
    offers no burst, and one whose burst ends offers its next at once (``p = (k_E - 1) / k_E``).

    While GCPs help, the class's transactions move at the pace of the eligible service and their
    GCP-only bursts come with them, ``d_n / (k_E s)`` of GCP work per unit of eligible work, so
    the GCPs left to help are

    .. math:: G = \frac{g_{free} - \nu c_Z}{1 + \nu}, \quad \nu = \frac{d_n}{k_E s}

    (``f n_GCP - (1 - f) c_Z`` for one class alone), not the spare capacity ``g_free - lam d_n``
    of the whole cycle: help phases are when the class's GCP work is heaviest. (The simulation's
    helping GCPs against ``G``: docs/models/dispatch.md.)

    With ``mu = c_Z / s``, ``M = (c_Z + G) / s`` and a backlog of ``Q_0 = p G`` when help stops
    (the helped bursts' next ones):

    .. math::

        u = \max\Big(\frac{\mu\tau - Q_0}{\lambda - \mu / k_E}, 0\Big), \quad
        T_{off} = u + \tau, \quad
        h = \frac{a_E - c_Z}{G}, \quad T_{on} = \frac{h}{1 - h} T_{off}

    (``h``, the share of time in help, from work conservation: the zIIPs are always busy, the
    helping GCPs while help is on). A burst offered off waits for a zIIP or for help, whichever
    comes first, on the fluid backlog; one offered on waits the help phase's mean queue
    (:func:`_help_rounds_wait`) plus the random walk's excess over its fluid path:

    .. math::

        w_{off} = \frac{(Q_0 u + (\lambda - \mu / k_E) u^2 / 2) / \mu + \tau^2 / 2}{T_{off}}, \quad
        w_{on} = w_{rounds} + \frac{\sigma^2}{2 M \delta}

    with ``delta = M / k_E - lam`` the rate at which help drains transactions and ``sigma^2 = lam
    + M / k_E`` the variance rate of the transactions arriving and leaving (the mean height of a
    random walk with drift ``-delta`` over its way down is the straight line's plus ``sigma^2 /
    (2 delta)``). No constant is fitted (against the simulation: docs/models/dispatch.md). Bursts
    are offered at ``lam + p mu`` off and ``lam + p M`` on; ``theta`` is the share offered on and
    the wait per burst
    ``(1 - theta) w_off + theta w_on``. The spill is ``(a_E - c_Z) / a_E``.

    Where help is occasional (``a_E`` below or near ``c_Z``) the M/M/c+D queue of
    :func:`ziip_spill_and_wait` describes it and this cycle, which always waits a full ``tau`` for help,
    overstates the wait; callers take the smaller of the two, which keeps both monotone.
    """
    a_e = lam * ke * s
    if ke < 1 or tau <= 0.0 or c_z <= 0.0 or s <= 0.0:
        return np.inf, 0.0
    # while GCPs help, the class's transactions move at the pace of the eligible service, and
    # their GCP-only bursts with them: d_n / (k_E s) of GCP work per unit of eligible work served
    native = d_n / (ke * s)
    spare = (g_free - native * c_z) / (1.0 + native)
    if a_e <= c_z or a_e >= c_z + spare:
        return np.inf, 0.0
    p = (ke - 1.0) / ke
    mu = c_z / s
    big_m = (c_z + spare) / s
    rise = lam - mu / ke
    if rise <= 0.0:  # a_e a rounding above c_z: the backlog never rises
        return np.inf, 0.0
    q_0 = p * spare
    u = (mu * tau - q_0) / rise if mu * tau > q_0 else 0.0
    t_off = u + tau
    h = (a_e - c_z) / spare
    t_on = h / (1.0 - h) * t_off
    w_off = ((q_0 * u + rise * u * u / 2.0) / mu + tau * tau / 2.0) / t_off
    drain = big_m / ke - lam  # > 0 as a_e < c_z + spare, but a rounding can leave 0 where they meet
    if drain <= 0.0:  # (no think time or delay: a population as large as the engines is their capacity)
        return np.inf, 0.0
    w_on = _help_rounds_wait(lam, mu, big_m, ke, c_z, spare, tau) + random_walk_excess(lam, big_m, ke)
    offered_on = (lam + p * big_m) * t_on
    theta = offered_on / (offered_on + (lam + p * mu) * t_off)
    return (1.0 - theta) * w_off + theta * w_on, (a_e - c_z) / a_e


@numba.njit(cache=True)
def help_cycle_waits(lam, cyc):
    """(eligible waits, GCP-only waits) per transaction, spill and GCP load under :func:`_help_cycle_wait`.

    ``lam`` tran/ms of the class and LPAR ``cyc`` (:class:`Cycle`); ``inf`` waits outside the
    cycle's regime. GCPs slower than zIIPs (``rho > 1``) help as ``1 / rho`` zIIPs each, and the
    eligible time counts the helped bursts' longer service, ``k_E pi s (rho - 1)``.
    """
    s, ke, kg, c_z, n_g, d_n, a_bg_g, bg_s, tau, rho = cyc
    # the cycle in zIIP engines: a GCP does 1 / rho of a zIIP's work
    w_c, spill_c = _help_cycle_wait(lam, s, ke, c_z, (n_g - a_bg_g) / rho, d_n / rho, tau)
    if w_c == np.inf:
        return np.inf, np.inf, 0.0, 0.0
    a_lo = spill_c * lam * ke * s
    # Cobham's first class beside the helped work (rho times the zIIP engines it would have
    # taken); d_n with no eligible share is the GCP-only demand
    w_hi, _, a_g = gcp_priority_waits(lam, d_n, 0.0, kg, n_g, a_bg_g, bg_s, a_lo * rho, a_lo / s, 0.0)
    if a_g >= n_g:
        return np.inf, np.inf, spill_c, a_g
    # the eligible time beyond its zIIP service: the waits, and the helped bursts' longer service
    return ke * w_c + ke * spill_c * s * (rho - 1.0), kg * w_hi, spill_c, a_g


@numba.njit(cache=True)
def tabulate_cycle_least_waits(cyc, table):
    """The rate (tran/ms) at which :func:`_help_cycle_wait`'s waits are least, and those waits; ``table`` filled.

    For the class and LPAR ``cyc`` (:class:`Cycle`).

    ``(rate, eligible waits, GCP-only waits)`` per transaction (:func:`help_cycle_waits`); ``(0, inf,
    inf)`` where the cycle has no regime (``table`` then left as it is). In the simulation as in the
    cycle, a pool that needs help more often can serve a transaction sooner (more of its bursts are
    offered while GCPs help), so the waits fall as the load rises from where the zIIPs stop keeping
    up, then rise to the GCPs' saturation. The model keeps response from falling with load by
    holding it between the highest response below this rate and these least waits
    (:func:`cycle_waits_raised_to_peak`), and above this rate by the least waits at or above each load.

    The waits are taken on :data:`NODES` loads of the regime, closer together towards the
    saturation where they climb fastest; ``table`` (``3 NODES`` floats) gets, per node, its load
    and the eligible and GCP-only waits of the least total at that node or above, so the totals
    never fall from node to node (the waits are not unimodal everywhere: where the help phase's
    queue changes shape with load they can dip past their least). The least is the least node's,
    without refinement (both: docs/models/dispatch.md).
    """
    s, ke, c_z, n_g, d_n, a_bg_g, tau, rho = cyc.s, cyc.ke, cyc.c_z, cyc.n_g, cyc.d_n, cyc.a_bg_g, cyc.tau, cyc.rho
    lo = c_z / (ke * s)
    hi = (c_z + n_g / rho - a_bg_g / rho) / (ke * s + d_n / rho)
    if ke < 1 or tau <= 0.0 or c_z <= 0.0 or hi <= lo:
        return 0.0, np.inf, np.inf
    for i in range(NODES):
        step = 1.0 - (i + 0.5) / NODES
        x = hi - (hi - lo) * step * step
        e, g, _, _ = help_cycle_waits(x, cyc)
        table[i, 0], table[i, 1], table[i, 2] = x, e, g
    best = NODES - 1
    for i in range(NODES - 2, -1, -1):  # the least at or above each node, from the top
        if table[i, 1] + table[i, 2] < table[best, 1] + table[best, 2]:
            best = i
        else:
            table[i, 1], table[i, 2] = table[best, 1], table[best, 2]
    return table[best, 0], table[best, 1], table[best, 2]


@numba.njit(cache=True)
def monotone_cycle_waits(lam, cyc, memo):
    """The help cycle's waits at ``lam`` held to the least at ``lam`` or above, and its spill.

    For the class and LPAR ``cyc`` (:class:`Cycle`), whose table ``memo`` holds.

    Below the least-wait rate ``memo.cycle[0]`` the least waits (``memo.cycle[1:3]``); above it the line
    between the neighbouring nodes of :func:`tabulate_cycle_least_waits`'s table (each the least at or above its
    node, so the total never falls with load), starting from the least itself; past the last node,
    nearer the saturation than any load a solve meets but for its last few, the waits themselves
    where higher than the last node's. :func:`cycle_waits_raised_to_peak` then holds them where the response rose
    higher at a lower load. The spill stays that of ``lam`` (none below the regime): only the waits
    are held.
    """
    if memo.cycle[1] == np.inf:  # no regime (tabulate_cycle_least_waits): as help_cycle_waits answers there
        return np.inf, np.inf, 0.0
    a_e = lam * cyc.ke * cyc.s
    spill = (a_e - cyc.c_z) / a_e if a_e > cyc.c_z else 0.0
    if lam <= memo.cycle[0]:
        return memo.cycle[1], memo.cycle[2], spill
    x0, e0, g0 = memo.cycle[0], memo.cycle[1], memo.cycle[2]
    table = memo.cycle_table
    for i in range(NODES):
        x1 = table[i, 0]
        if x1 <= x0:
            continue
        e1, g1 = table[i, 1], table[i, 2]
        if lam <= x1:
            share = (lam - x0) / (x1 - x0)
            return e0 + share * (e1 - e0), g0 + share * (g1 - g0), spill
        x0, e0, g0 = x1, e1, g1
    e, g, spill_c, _ = help_cycle_waits(lam, cyc)
    if e + g > e0 + g0:
        return e, g, spill_c
    return e0, g0, spill_c


@numba.njit(cache=True)
def cycle_waits_raised_to_peak(e, g, d, f, total, rules, weight, memo):
    r"""The cycle's waits ``e``, ``g`` (:func:`monotone_cycle_waits`) held so that more load never predicts less.

    ``total`` is the residence without the cycle (the pool rule's queues), ``d`` the class's CPU
    per transaction, ``f`` its eligible share, ``rules`` the LPAR (IIPHONORPRIORITY=YES, the pool
    rule) and ``weight`` the cycle's (:func:`cycle_weight`); the cycle counts only where
    ``d + e + g < total``, and only then is :func:`_highest_residence_below_least`'s highest
    residence ``P`` needed (found once into ``memo.cycle_peak``, ``< 0`` asks for it). Returns the
    held ``(e, g)``, in the cycle's eligible / GCP-only split.

    Notes
    -----
    Where the zIIPs cannot keep up, the simulated response rises to a peak and then *falls* as the
    load rises (more of the bursts are offered while GCPs help; docs/models/dispatch.md), then
    rises again to the pools' saturation. A model that may not predict less for more load cannot
    follow it. With ``r`` the residence the queues give (the pool rule's, the cycle's where
    smaller), rising to ``P`` at one load and falling to ``T`` at a higher one, any monotone ``m``
    has ``m(peak) <= m(trough)``, so ``P / m(peak)`` times ``m(trough) / T`` is at least ``P / T``
    and one of the two relative errors is at least ``sqrt(P / T)``. The model meets that bound
    and no more: the cycle's residence at ``lambda`` is raised to

    .. math:: \sqrt{P\, L(\lambda)}

    with ``L`` the least residence at ``lambda`` or above (the cycle's least waits below its
    least-wait rate, its own waits above), flat at ``sqrt(P T)`` between the peak and the trough,
    and the residence is the smaller of that and the pool rule's (so ``r`` itself where ``r`` is
    below it). ``R0`` is left out. Where ``P`` is no higher than the cycle's residence nothing is
    raised (the least waits held alone). Holding ``T`` alone would be wrong by up to ``P / T``
    against ``r``.
    """
    if not d + e + g < total or e + g <= 0.0:
        return e, g
    if memo.cycle_peak < 0.0:
        memo.cycle_peak = _highest_residence_below_least(d, f, rules, weight, memo)
    r = d + e + g
    peak = memo.cycle_peak
    if peak > r:
        scale = (math.sqrt(peak * r) - d) / (e + g)
        e *= scale
        g *= scale
    return e, g


@numba.njit(cache=True)
def _highest_residence_below_least(d, f, rules, weight, memo):
    """The highest residence (``R0`` left out) below the help cycle's least-wait rate ``memo.cycle[0]``.

    The pool rule's residence (:func:`queue_residence`) with the cycle's unheld waits
    (:func:`help_cycle_waits`) taken in where smaller, in proportion to ``weight``, as :func:`open_residence`
    combines them, from the zIIPs' capacity to ``memo.cycle[0]``: the ``P`` of :func:`cycle_waits_raised_to_peak`.
    On 64 loads, then by golden section between the neighbours of the highest, to a millionth of
    the rate. ``0`` where the range is empty.
    """
    ke = rules.k_e if f > 0.0 else 0
    if ke < 1 or d <= 0.0:
        return 0.0
    s_e = f * d / ke
    c_z = rules.n_z * (1.0 - rules.bg_z)
    lo = c_z / (ke * s_e)
    hi = memo.cycle[0]
    if not hi > lo:
        return 0.0
    # as in tabulate_cycle_least_waits: at the zIIPs' capacity exactly the cycle's backlog never rises
    lo += 1e-9 * (hi - lo)
    n = 64
    step = (hi - lo) / n
    best, at = 0.0, 0
    for i in range(n + 1):
        r = _pool_and_cycle_residence(lo + i * step, d, f, rules, weight, memo)
        if r > best:
            best, at = r, i
    a = lo + max(at - 1, 0) * step
    b = lo + min(at + 1, n) * step
    ratio = 0.3819660112501051
    x1 = a + ratio * (b - a)
    x2 = b - ratio * (b - a)
    f1 = _pool_and_cycle_residence(x1, d, f, rules, weight, memo)
    f2 = _pool_and_cycle_residence(x2, d, f, rules, weight, memo)
    while b - a > 1e-6 * hi:
        if f1 >= f2:
            b, x2, f2 = x2, x1, f1
            x1 = a + ratio * (b - a)
            f1 = _pool_and_cycle_residence(x1, d, f, rules, weight, memo)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = b - ratio * (b - a)
            f2 = _pool_and_cycle_residence(x2, d, f, rules, weight, memo)
    return max(best, f1, f2)


@numba.njit(cache=True)
def _pool_and_cycle_residence(lam, d, f, rules, weight, memo):
    """:func:`_highest_residence_below_least`'s residence at ``lam``: ``0`` where it is not finite."""
    k_e, k_g, n_g, n_z, _, tau, _, bg_g, bg_z, bg_s, rho = rules
    ke = k_e if f > 0.0 else 0
    kg = k_g if f < 1.0 else 0
    r = queue_residence(lam, d, f, rules, memo)[0]
    e, g, _, _ = help_cycle_waits(lam, Cycle(f * d / ke, ke, kg, n_z * (1.0 - bg_z), n_g, (1.0 - f) * d, bg_g * n_g,
                                             bg_s, tau, rho))
    c = d + e + g
    if c < r:
        r = c if r == np.inf else r - weight * (r - c)
    return r if r < np.inf else 0.0
