"""The queues the dispatch model is built from: Erlang's formulas, M/M/c+D, mixed-burst residuals, priorities."""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True)
def erlang_b(c, a):
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


@numba.njit(cache=True)
def erlang_c(c, a):
    if a >= c:
        return 1.0
    b = erlang_b(c, a)
    rho = a / c
    return b / (1.0 - rho + rho * b)


@numba.njit(cache=True)
def residual_ratio(rate_1, s_1, rate_2, s_2, rate_3, s_3, rejoin):
    r"""``r / s``: the residual an arrival waits for at an FCFS pool of mixed bursts, over the mean burst.

    The pool serves up to three streams of exponential bursts (``rate_i`` bursts/ms of mean
    ``s_i``: a transaction's GCP-only and eligible bursts, other classes' work). M/M/c takes one
    exponential burst of the mean ``s``; the mixture has the larger second moment, and an arrival
    from outside (PASTA) that finds the engines busy waits for the residual of a burst in service,

    .. math::

        s = \frac{\sum_i \lambda_i s_i}{\sum_i \lambda_i}, \qquad
        r_{mix} = \frac{E[S^2]}{2 E[S]} = \frac{\sum_i \lambda_i s_i^2}{\sum_i \lambda_i s_i}

    (``r_mix / s = (1 + C_s^2) / 2``; the simulation draws each burst exponential about its kind's
    mean, so ``E[S_i^2] = 2 s_i^2``). But a transaction runs its bursts one after another:
    ``rejoin`` of the pool's bursts per ms arrive the moment the same transaction's previous burst
    on this pool ended, when the engine it freed starts the next queued burst afresh, a burst of
    the arrival-weighted mean ``s`` and no residual. With ``rho_r`` that share of arrivals,

    .. math:: r = \rho_r s + (1 - \rho_r) r_{mix} = s + (r_{mix} - s)(1 - \rho_r)

    and ``r / s`` scales an M/M/c wait into the M/G/c one (Allen-Cunneen, Poisson arrivals,
    ``C_a^2 = 1``). It is 1 for bursts of one size. The same ``r`` on any number of engines
    (the alternatives tried: docs/models/dispatch.md).

    References
    ----------
    Allen, A. O. (1990), *Probability, Statistics, and Queueing Theory*, 2nd ed., §6.5 (M/G/c,
    Allen-Cunneen); Kingman, J. F. C. (1961), "The single server queue in heavy traffic",
    *Proc. Cambridge Philos. Soc.* 57.
    """
    rate = rate_1 + rate_2 + rate_3
    a = rate_1 * s_1 + rate_2 * s_2 + rate_3 * s_3
    if rate <= 0.0 or a <= 0.0:
        return 1.0
    ratio = (rate_1 * s_1 * s_1 + rate_2 * s_2 * s_2 + rate_3 * s_3 * s_3) * rate / (a * a)
    share = rejoin / rate
    if share > 1.0:
        share = 1.0
    return 1.0 + (ratio - 1.0) * (1.0 - share)


@numba.njit(cache=True)
def rejoining_bursts(kg, ke, on_pool_e):
    r"""A transaction's bursts per transaction that follow its own burst on the same pool.

    The ``k = k_G + k_E`` bursts run in a random order (the simulation shuffles them), so each of
    the ``k - 1`` consecutive pairs is a random pair of distinct bursts. GCP-only bursts always
    run on the GCPs, eligible ones with probability ``on_pool_e`` (1 without zIIPs, the spill with
    them; independent per burst), so the GCP pool sees
    ``[k_G (k_G - 1) + 2 k_G k_E \pi + k_E (k_E - 1) \pi^2] / k`` such bursts per transaction.
    """
    k = kg + ke
    if k <= 1:
        return 0.0
    return (kg * (kg - 1) + 2.0 * kg * ke * on_pool_e + ke * (ke - 1) * on_pool_e * on_pool_e) / k


@numba.njit(cache=True)
def wait_ratio_beside_background(c, a_pool, c_wait, rate_c, s_c, k_c, rate_o, s_o):
    r"""``W_class / W_M/M/c``: the class's wait per burst at a pool beside other classes' bursts, over M/M/c's.

    A pool of ``c`` engines serves FCFS the class's bursts (``rate_c`` bursts/ms of mean ``s_c``,
    ``k_c`` per transaction) and other classes' (a Poisson stream, ``rate_o`` bursts/ms of mean
    ``s_o``), each exponential about its own mean; ``a_pool`` is the pool's load (busy engines)
    and ``c_wait`` its Erlang C, ``C(c, a_pool)``. M/M/c at the mean burst ``s = a / lambda``
    lets the class's small bursts lower ``s`` and with it the wait in ms, so more load predicted
    less wait. A transaction's bursts on the pool are of two kinds:

    * its *first*, an arrival from outside: one that finds every engine busy waits for the
      residual of the work in service (Allen-Cunneen's M/G/c with Poisson arrivals, ``C`` Erlang C
      at ``a = lambda s``)

      .. math::

          W_f = \frac{C(c, a)}{c - a} r, \qquad r = \frac{E[S^2]}{2 E[S]}
              = \frac{\lambda_c s_c^2 + \lambda_o s_o^2}{a}

    * *the others*: the transaction comes back to the pool a short while after its previous
      burst there ended (at once, or after a burst on the other pool), before the queue has
      forgotten it; such a burst waits for what arrived during that burst's wait and service.
      With one engine and no burst between, that is exact: ``W_r = a (W_p + s_c)``, all of it
      queued work and none of it a residual. With ``c`` engines the previous burst held one of
      them; the others free after the residual ``r`` of the work they hold, not the class's
      burst, so the service counted is ``s_e = s_c / c + (1 - 1/c) r``, and
      ``W_r = g (W_p + s_e)`` with ``g = C / (C + c - a)`` (``a`` at ``c = 1``), the factor for
      which, in M/M/c, such a burst waits what a first one does (``g (W + s) = W`` at
      ``W = C s / (c - a)``).

    Taking the burst a later one follows as waiting the class's mean ``W``,
    ``k_c W = W_f + (k_c - 1) g (W + s_e)``, and over ``W_{M/M/c} = C s / (c - a)``:

    .. math::

        \frac{W}{W_{M/M/c}} = \frac{r / s + (k_c - 1) (s_e / s)\, h}{1 + (k_c - 1)\, h}, \qquad
        h = \frac{c - a}{C + c - a}, \qquad s_e = \frac{s_c}{c} + \Big(1 - \frac{1}{c}\Big) r

    It is 1 where every burst has one size (``r = s_c = s``), so a pool without other classes'
    work is M/M/c as before, and Allen-Cunneen's ``r / s`` for one burst per transaction. The
    class's wait ``W`` rises with load, as ``W_f`` and ``g`` do. At ``a >= c`` (a pool whose
    overflow GCPs take) ``h = 0`` and the ratio is ``r / s``. The choices of
    what counts as a later burst and of the service ``s_e`` were made against the dispatcher
    simulation (docs/models/dispatch.md).

    References
    ----------
    Allen, A. O. (1990), *Probability, Statistics, and Queueing Theory*, 2nd ed., §6.5 (M/G/c,
    Allen-Cunneen); Kleinrock, L. (1975), *Queueing Systems Vol. 1*, §5.6 (the M/G/1 waiting
    time as the work found queued plus the residual in service).
    """
    a_c = rate_c * s_c
    a_o = rate_o * s_o
    a = a_c + a_o
    rate = rate_c + rate_o
    if k_c <= 0 or a <= 0.0 or rate <= 0.0:
        return 1.0
    s = a / rate
    r = (a_c * s_c + a_o * s_o) / a
    # g and h from the pool's whole load a_pool (helped work included) and its Erlang C c_wait,
    # which the caller has: the ratio is 1 for bursts of one size whatever they are
    h = (c - a_pool) / (c_wait + c - a_pool) if a_pool < c else 0.0
    later = k_c - 1.0
    # a later burst's own engine frees after the class's burst, the other c - 1 after the residual
    # of the work they hold (r, not the mean burst s: s falls as the class's small bursts are added,
    # and with it the wait, which fell with load)
    s_e = s_c / c + (1.0 - 1.0 / c) * r
    return (r / s + later * (s_e / s) * h) / (1.0 + later * h)


@numba.njit(cache=True)
def _mmcd_terms(lam, s, c, tau, b_head):
    """M/M/c+D at patience ``tau`` given ``b_head = B(c-1, a)``: (P(V > tau), E[min(V, tau)], q, dq/dtau).

    ``q = p_c / P(V > 0)`` is the share of waiting bursts that find no other waiting.
    """
    a = lam * s
    mu_c = c / s
    beta = lam - mu_c
    x = beta * tau
    big = x if x > 0.0 else 0.0  # scale by e^-big so an overloaded pool does not overflow
    e_x = math.exp(x - big)
    e_0 = math.exp(-big)
    head = e_0 / b_head  # sum_{j<c} p_j / p_{c-1}, scaled
    if abs(x) < 1e-4:
        w1 = lam * tau * (1.0 + x / 2.0 + x * x / 6.0) * e_0
        vint = lam * tau * tau * (0.5 + x / 3.0 + x * x / 8.0) * e_0
    else:
        w1 = lam * (e_x - e_0) / beta
        vint = lam * (e_x * (x - 1.0) + e_0) / (beta * beta)
    w2 = lam * e_x / mu_c
    norm = head + w1 + w2
    q = (a / c) * e_0 / (w1 + w2) if w1 + w2 > 0.0 else 1.0
    # dq/dtau = -q lam w2 / (w1 + w2): d(w1)/dtau = lam e^(beta tau), d(w2)/dtau = beta/mu_c of that
    dq = -q * lam * w2 / (w1 + w2) if q < 1.0 else 0.0
    return w2 / norm, (vint + tau * w2) / norm, min(q, 1.0), dq


@numba.njit(cache=True)
def mmcd_at_mean_patience(lam, s, c, tau, pool, q0, b_head):
    """(spill, mean wait for a zIIP, q) of M/M/c+D at the help rule's effective patience.

    Burst rule: every burst's patience is ``tau``. Pool rule: a burst that finds other bursts
    waiting is helped when the oldest of them reaches ``tau``; taking that head's age as uniform
    on ``[0, tau)``, such a burst's patience averages ``tau / 2``, and a burst that finds none
    waiting keeps ``tau``. With ``q`` the share of waiting bursts that find no other waiting
    (``p_c / P(V > 0)``, which is ``1 - rho`` in M/M/c), the patience used is the mean
    ``tau (1 + q) / 2``; ``q`` and the queue it comes from are solved together, starting from
    ``q0`` (the previous population's ``q`` in the closed recursion, which converges in a few
    steps from there). Under the pool rule :func:`ziip_spill_and_wait` keeps the spill and takes the wait
    from :func:`pool_rule_wait`.
    """
    if not pool or tau <= 0.0:
        spill, wait, q, _ = _mmcd_terms(lam, s, c, tau, b_head)
        return spill, wait, q
    # the patience lies in [tau / 2, tau]: if even tau / 2 spills nothing measurable, neither
    # does the fixed point, and the waits differ by at most that spill times a burst (checked on a
    # cold start only: a warm q0 < 1 comes from a solve that spilled, where the check only costs)
    if q0 >= 1.0:
        spill, wait, q, _ = _mmcd_terms(lam, s, c, tau / 2.0, b_head)
        if spill < 1e-12:
            return spill, wait, q0
    # q = g(q) by Newton's method on h(q) = g(q) - q with g's derivative from _mmcd_terms: g falls
    # as the patience grows, so h falls with slope <= -1 and has one root in [0, 1]; a step that
    # leaves the bracket kept around the root is replaced by bisection. To 1e-8: q moves the
    # patience by tau / 2 per unit, so the waits by far less than any answer shows. From a warm
    # start (the population before, or the throughput solve's previous try) one or two steps
    lo, hi = 0.0, 1.0
    q = q0
    spill, wait = 0.0, 0.0
    for _ in range(60):
        patience = tau * (1.0 + q) / 2.0
        spill, wait, g, dg = _mmcd_terms(lam, s, c, patience, b_head)
        h = g - q
        if abs(h) < 1e-8:
            break
        if h > 0.0:
            lo = q
        else:
            hi = q
        step = -h / (dg * tau / 2.0 - 1.0)
        q_next = q + step
        if abs(step) < 1e-5 and lo < q_next < hi:
            # the step lands within ~step^2 of the root: instead of evaluating there, move the
            # terms along their tangents, d spill / d tau = spill (beta - lam spill) and
            # d wait / d tau = spill (1 + lam (tau - wait)) with beta = lam - c / s (from
            # d norm / d tau = lam w2, d w2 / d tau = beta w2 in _mmcd_terms)
            dt = tau * step / 2.0
            return (spill + spill * (lam - c / s - lam * spill) * dt,
                    wait + spill * (1.0 + lam * (patience - wait)) * dt, q_next)
        q = q_next if lo < q_next < hi else 0.5 * (lo + hi)
    return spill, wait, q


@numba.njit(cache=True)
def ziip_queue(lam, a_e, s_e, ke, n_z, a_bz, bg_s):
    """(burst rate /ms, mean burst ms) of the zIIP pool's M/M/c (+D) queue at ``lam`` tran/ms.

    The class's ``k_E`` eligible bursts of ``s_e`` per transaction (``a_e = lam k_E s_e`` busy
    engines, as the caller computes it) and other classes' zIIP work (``a_bz`` busy engines of
    ``bg_s`` bursts): one exponential burst whose M/M/c wait is the class's
    (:func:`wait_ratio_beside_background`), at the pool's load, so the class's small bursts beside larger
    background ones do not lower the wait. Without background, the class's own bursts.
    """
    a_z = a_e + a_bz
    rate = lam * ke + a_bz / bg_s
    s = a_z / rate
    if a_bz > 0.0 and ke > 0:
        s *= wait_ratio_beside_background(n_z, a_z, erlang_c(n_z, a_z), lam * ke, s_e, ke, a_bz / bg_s, bg_s)
        rate = a_z / s
    return rate, s


@numba.njit(cache=True)
def gcp_priority_waits(lam, d, f, kg, n_g, a_bg_g, bg_s, a_lo, rate_lo, a_lo_bg):
    """(wait of a GCP-native burst, wait of a helped burst, GCP load) on the GCP pool.

    M/M/c with two non-preemptive priorities (Cobham): GCP-native work and background first,
    helped eligible work (load ``a_lo`` at ``rate_lo`` bursts/ms, ``a_lo_bg`` of it other
    classes') after. Infinite waits when the pool is full. Beside other classes' bursts (their GCP
    work and their helped zIIP work, both of ``bg_s``) the mean burst is scaled by
    :func:`wait_ratio_beside_background` over the class's GCP-native bursts and those, so the class's small
    bursts do not lower the wait the background's larger ones set, nor the background's small
    ones the wait the class's larger ones set.
    """
    a_hi = lam * (1.0 - f) * d + a_bg_g
    rate_hi = lam * kg + a_bg_g / bg_s
    a_g = a_hi + a_lo
    if a_g >= n_g:
        return np.inf, np.inf, a_g
    w_hi = 0.0
    w_lo = 0.0
    if rate_hi + rate_lo > 0.0 and a_g > 0.0:
        s_g = a_g / (rate_hi + rate_lo)
        c_wait = erlang_c(n_g, a_g)
        a_other = a_bg_g + a_lo_bg
        if a_other > 0.0 and kg > 0:
            s_g *= wait_ratio_beside_background(n_g, a_g, c_wait, lam * kg, (1.0 - f) * d / kg, kg, a_other / bg_s,
                                                bg_s)
        base = c_wait * s_g / n_g
        s_hi = 1.0 - a_hi / n_g
        w_hi = base / s_hi
        w_lo = base / (s_hi * (1.0 - a_g / n_g))
    return w_hi, w_lo, a_g


@numba.njit(cache=True)
def random_walk_excess(lam, big_m, per):
    r"""Mean wait (ms) a draining queue's random walk adds to its straight line, per burst served.

    Items arrive at ``lam`` and ``M / per`` leave while every engine serves (``M`` bursts/ms; items
    of ``per`` bursts each: transactions, or bursts with ``per = 1``): the mean height of a walk
    with drift ``-(M / per - lam)`` and variance rate ``lam + M / per`` over its way down is the
    straight line's plus

    .. math:: \frac{\lambda + M / k}{2 M (M / k - \lambda)}

    (in bursts over ``M``). The help phase's term in :func:`_help_cycle_wait` (transactions) and in
    :func:`pool_rule_wait` (bursts, where it comes to the same); ``inf`` where the engines do
    not drain the queue.
    """
    leave = big_m / per
    return (lam + leave) / (2.0 * big_m * (leave - lam)) if leave > lam else np.inf
