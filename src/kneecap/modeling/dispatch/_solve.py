"""The public solvers: one transaction's CPU residence, open load, measured intervals, closed populations."""

from __future__ import annotations

import math

import numpy as np

from kneecap.modeling.dispatch._closed import Populations, closed_kernel, new_mva_states
from kneecap.modeling.dispatch._memo import new_memo, new_memos
from kneecap.modeling.dispatch._open import open_kernel, open_residence, rows_kernel
from kneecap.modeling.dispatch._rules import Dispatch, DispatchSolution, engine_demand, rules_of
from kneecap.schema import MAX_ENGINES


def cpu_residence(tps: float, cpu_ms_per_tran: float, ziip_eligible_fraction: float,
                  dispatch: Dispatch) -> tuple[float, float, float, float]:
    r"""CPU residence time of one transaction at arrival rate ``tps``: service plus dispatch waits.

    Returns ``(residence_ms, spill_fraction, ziip_busy, gcp_busy)``; ``inf`` residence when a pool
    the work needs is full.

    Notes
    -----
    Per burst, with ``lambda`` bursts/ms, mean burst ``s`` and ``c`` engines (``a = lambda s``):

    *zIIP pool, IIPHONORPRIORITY=YES* — an M/M/c queue whose customers leave for a GCP after
    waiting ``tau``: the M/M/c+D queue. Under the burst rule ``tau`` is ZIIPAWMT; under the pool
    rule a burst queued behind others is helped when the oldest reaches ZIIPAWMT, so ``tau`` is
    the mean patience ``ZIIPAWMT (1 + q) / 2`` with ``q`` the share of waiting bursts that find
    no other waiting (:func:`ziip_spill_and_wait`). Level crossing on the virtual waiting time
    ``v`` gives its density, with ``beta = lambda - c/s`` and ``p_{c-1}`` the probability that
    ``c - 1`` engines are busy:

    .. math::

        f(v) = \lambda p_{c-1} e^{\beta v}\ (v < \tau), \qquad
        f(v) = \lambda p_{c-1} e^{\beta\tau} e^{-c (v-\tau)/s}\ (v > \tau)

        \frac{1}{p_{c-1}} = \frac{1}{B(c-1, a)} + \lambda\frac{e^{\beta\tau}-1}{\beta}
            + \lambda s \frac{e^{\beta\tau}}{c}

    with ``B`` Erlang's loss formula. The spill is ``P(V > tau)`` and an eligible burst waits
    ``E[min(V, tau)]`` for a zIIP before it runs there or is helped. With NO, M/M/c (Erlang C).

    *Pool rule, the wait* — M/M/c+D at the mean patience gives the spill but caps the queue at
    about half the backlog a trigger finds, and its wait was low where the zIIPs are nearly full
    (docs/models/dispatch.md). The wait is
    instead the pool rule's own: the zIIPs alone until a burst has waited ZIIPAWMT, the flush of
    the backlog behind it and the help that follows, with a transaction's bursts offered one
    after another (:func:`pool_rule_wait`).

    *Pool rule, zIIPs behind* — where ``f D X`` exceeds the zIIPs, the help cycle of
    :func:`_help_cycle_wait` (zIIPs alone until a burst has waited ZIIPAWMT, then every spare GCP until
    the queue empties), weighted by :func:`cycle_weight`, replaces the M/M/c+D residence where it
    is the smaller; where the response that gives falls as the load rises it is held to the
    geometric mean of its highest value below and its least above (:func:`cycle_waits_raised_to_peak`).

    *GCP pool* — M/M/c with two non-preemptive priorities (Cobham): GCP-native work and
    background, then helped eligible work (load ``pi a_Z``). With ``C`` Erlang C at the total load
    and ``sigma`` the per-engine load of the classes at or above each priority,

    .. math:: W_k = \frac{C(c, a)\, s / c}{(1 - \sigma_{k-1})(1 - \sigma_k)}

    Residence ``= D + k_G W_1 + k_E (E[\min(V,\tau)] + \pi W_2)``. Help is part of the queues, not
    estimated afterwards: spilled work leaves the zIIP queue and loads the GCPs.

    *No zIIP* — every burst queues FCFS for the GCPs: GCP-only bursts of ``(1-f) D / k_G`` and
    eligible ones of ``f D / k_E`` (and background bursts), a mixture with a larger second moment
    than one exponential burst of the mean. M/G/c by Allen-Cunneen with Poisson arrivals: the
    Erlang C wait times ``r / s``, the residual an arrival waits for over the mean burst
    (:func:`residual_ratio`, which counts the residual only for bursts that do not follow their
    own transaction's burst on the pool):

    .. math:: W = \frac{C(c, a)\, s}{c - a} \cdot \frac{r}{s}

    The GCP pool beside zIIPs keeps M/M/c for the class's own bursts: its GCP-only bursts are of
    one size, and scaling the waits where helped bursts join them made the points where GCPs help
    worse (docs/benchmarks.md).

    *Beside other classes' work* (``bg_*_busy_pct``, bursts of ``bg_burst_ms``) a pool serves
    bursts of different sizes FCFS, and M/M/c at their mean burst let the class's small bursts
    lower the wait in ms as its load rose. The zIIP queue (M/M/c+D or M/M/c) and the
    GCP pool's Cobham base take the mean burst times :func:`wait_ratio_beside_background`, the class's wait
    over M/M/c's: a transaction's first burst on the pool waits Allen-Cunneen's residual of the
    work in service, its later ones for the work that arrived since its previous one there.

    References
    ----------
    IBM, *z/OS MVS Initialization and Tuning Reference*, IEAOPTxx: IIPHONORPRIORITY, ZIIPAWMT.
    Baccelli, F. and Hebuterne, G. (1981), "On queues with impatient customers" (M/M/c+D).
    Zeltyn, S. and Mandelbaum, A. (2005), "Call centers with impatient customers: many-server
    asymptotics of the M/M/n+G queue", *Queueing Systems* 51. Cobham, A. (1954), "Priority
    assignment in waiting line problems", *Operations Research* 2; Kleinrock (1976),
    *Queueing Systems Vol. 2*, §3.7 (multi-server non-preemptive priority). Allen, A. O. (1990),
    *Probability, Statistics, and Queueing Theory*, 2nd ed., §6.5 (M/G/c).
    """
    # the cycle's least-wait rate and the pool rule's wait's peaks: to be found
    d, f = engine_demand(float(cpu_ms_per_tran), ziip_eligible_fraction, dispatch)
    out = open_residence(float(tps) / 1000.0, d, f, rules_of(dispatch), new_memo())
    return float(out[0]), float(out[1]), float(out[2]), float(out[3])


def solve_open(tps: np.ndarray, cpu_ms_per_tran: np.ndarray, delay_ms: np.ndarray,
               ziip_eligible_fraction: float, dispatch: Dispatch) -> DispatchSolution:
    """Response at offered arrival rates ``tps`` (``M``) for ``B`` pairs ``(D, R0)``.

    ``resp_ms = R0 + residence`` (:func:`cpu_residence`); ``inf`` and ``saturated`` beyond the
    pools' capacity.
    """
    d, r0, loads = _broadcast(cpu_ms_per_tran, delay_ms, tps, "tps")
    d, f = engine_demand(d, ziip_eligible_fraction, dispatch)
    x, resp, spill, zb, gb, sat = open_kernel(loads / 1000.0, d, r0, f, rules_of(dispatch), new_memo())
    return DispatchSolution(x * 1000.0, resp, spill, zb, gb, sat)


def solve_open_rows(tps: np.ndarray, cpu_ms_per_tran: float, ziip_eligible_fraction: float, *,
                    n_gcp: np.ndarray, n_ziip: np.ndarray, bg_gcp_busy_pct: np.ndarray,
                    bg_ziip_busy_pct: np.ndarray, dispatch: Dispatch) -> DispatchSolution:
    """CPU residence of one class at ``M`` measured intervals, each on its own LPAR state.

    Row ``i`` is :func:`cpu_residence` at ``tps[i]`` on ``n_gcp[i]`` GCPs and ``n_ziip[i]`` zIIPs
    with other classes at ``bg_*_busy_pct[i]`` per engine; the dispatching rules (help, bursts,
    background burst size) come from ``dispatch``, whose engine counts and background are
    ignored. Arrays are ``(1, M)``; ``resp_ms`` is the residence alone (no fixed delay). This is
    what an RMF interval history needs: every interval saw a different load from the other classes.
    """
    loads = np.atleast_1d(np.asarray(tps, dtype=float))
    m = len(loads)
    cols = [np.broadcast_to(np.asarray(a, dtype=float), (m,)).astype(float)
            for a in (n_gcp, n_ziip, bg_gcp_busy_pct, bg_ziip_busy_pct)]
    n_g, n_z, bg_g, bg_z = cols
    if np.any(~np.isfinite(loads)) or np.any(loads < 0):
        raise ValueError("tps must be finite and >= 0")
    if np.any(n_g < 1) or np.any(n_z < 0) or np.any(n_g > MAX_ENGINES) or np.any(n_z > MAX_ENGINES):
        raise ValueError(f"every interval needs 1..{MAX_ENGINES} GCPs and 0..{MAX_ENGINES} zIIPs")
    if np.any(~((bg_g >= 0) & (bg_g < 100))) or np.any(~((bg_z >= 0) & (bg_z < 100))):
        raise ValueError("background busy must be in [0, 100) per engine")
    d, f = float(cpu_ms_per_tran), float(ziip_eligible_fraction)
    if not (math.isfinite(d) and d >= 0 and 0.0 <= f <= 1.0):
        raise ValueError(f"need cpu_ms_per_tran >= 0 and 0 <= ziip_eligible_fraction <= 1, got {d}, {f}")
    d, f = engine_demand(d, f, dispatch)
    # zIIPs counted in threads, as the rules count them
    resp, spill, zb, gb, wz, wg = rows_kernel(loads / 1000.0, d, f, rules_of(dispatch), n_g.astype(np.int64),
                                              n_z.astype(np.int64) * int(dispatch.ziip_mt), bg_g / 100.0,
                                              np.where(n_z > 0, bg_z, 0.0) / 100.0, new_memo())
    return DispatchSolution(loads[None, :].copy(), resp[None, :], spill[None, :], zb[None, :], gb[None, :],
                            ~np.isfinite(resp)[None, :], wz[None, :], wg[None, :])


def solve_closed(cpu_ms_per_tran: np.ndarray, delay_ms: np.ndarray, ziip_eligible_fraction: float,
                 dispatch: Dispatch, *, think_time_ms: float, n_max: int, stop_ratio: float = 0.0,
                 n_min: int = 0) -> DispatchSolution:
    r"""Throughput and response of ``N = 1..n_max`` clients with think time ``Z``, for ``B`` pairs ``(D, R0)``.

    Arrays are ``(B, n_max)``, column ``N - 1`` for ``N`` clients. With ``stop_ratio`` > 0 each
    pair's recursion stops at the first population ``N >= n_min`` whose response passes
    ``stop_ratio`` times its one-client response (the knee needs no population beyond it); the
    populations after it are NaN, ``solved`` holds each pair's last population solved and the
    arrays end at the last population any pair solved (``solved.max()`` columns).

    Notes
    -----
    Exact multi-server MVA over the zIIP pool and the GCP pool (Reiser and Lavenberg; the
    load-dependent form of :func:`kneecap.modeling.queueing.multiserver_mva`), with the help rule
    applied at every population step. By the arrival theorem an eligible burst arriving at
    population ``N`` sees the zIIP pool as at ``N - 1``: FCFS its mean wait is ``W = R_Z - s`` from
    the MVA residence. The help rule truncates that wait at ``tau``: the M/M/c+D queue of
    :func:`cpu_residence` at the burst rate ``k_E X`` gives the truncated wait ``E[min(V, tau)]``
    and the spill ``pi = P(V > tau)``, and the zIIP wait used is

    .. math:: W_Z = \min\big(W,\ E[\min(V, \tau)]\big)

    (below saturation the exact closed wait is the smaller, as an open queue overstates a finite one;
    at saturation the truncated wait is). A fraction ``pi`` of the eligible demand moves to the GCP
    pool (help fed back: it loads the GCP queue and leaves the zIIP queue).

    Help makes the network not product-form, so while GCPs help (a spill above 1e-12 at the
    population before) each population is solved as the open model at the throughput it carries:
    the zIIP pool is the M/M/c+D queue at ``k_E X``, the GCP pool Cobham's priority M/M/c at ``X``
    with the helped work below GCP-native work, or its MVA time where that is smaller (so the
    response is continuous where help starts), and ``X``, ``pi`` and both times are solved
    together:

    .. math::

        T_Z(X) = k_E\big[(1 - \pi(X)) s + E[\min(V, \tau)](X)\big], \quad
        X = \frac{N}{Z + R_0 + T_Z(X) + \min\big(R_G^{open}(X), R_G^{MVA}\big)}

    Exact MVA would need the GCP pool's idle probability by subtraction there, which loses its
    digits within a few hundred populations on many GCPs; a spill taken from the population
    before instead of solved with ``X`` makes the throughput swing between populations once the
    GCP pool fills; and the closed zIIP wait, which rises when a GCP is added, let a GCP added
    predict worse beside the open GCP time. Both pools' busy marginals still advance with the
    demand each serves, their idle probabilities by the ratio below.

    With no help (IIPHONORPRIORITY=NO, or no zIIP) this is exact MVA where each pool serves bursts
    of one size; the GCP station is FCFS, which for equal bursts gives the class the same total
    wait as the priority order (conservation law). Without zIIPs, GCP-only and eligible bursts of
    different sizes (and background bursts) share the FCFS GCP pool, which is then
    not exponential, and an arriving burst waits for the residual ``r`` of the burst in service
    rather than a mean burst ``s`` (:func:`residual_ratio`). For one engine that is Reiser's
    approximation for FCFS centres with non-exponential service, ``W = s (Q - U) + r U`` at
    ``N - 1``. For ``m`` engines exact MVA's wait is ``W = (s/m)(Q_w + P_w)``, the queue ahead
    plus the first departure from a full pool (``Q_w`` bursts waiting, ``P_w`` the probability all
    ``m`` are busy); the generalisation used replaces only that first departure by the residual:

    .. math:: W = \frac{s}{m} Q_w + \frac{r}{m} P_w = W_{MVA} + P_w \frac{r - s}{m}

    which is Reiser's form at ``m = 1`` and, in an open system (``Q_w = \lambda W``), the
    Allen-Cunneen M/G/c wait the open model uses, so closed and open load agree. ``P_w`` comes
    from the utilisation law, ``(X D - \sum_{0<j<m} j\, p(j | N-1)) / m`` (:func:`_mva_residual_excess`).
    Background work of other classes inflates each pool's demand by ``1 / (1 - U_bg)`` in the
    MVA state (mixed-network MVA, Lazowska et al. 1984, ch. 7). That stretch treats their work
    as slower engines and leaves out the residual of their bursts, so a pool with other classes'
    work is timed by the open model's queue at the throughput the population carries, solved with
    it (:func:`throughput_beside_background`): the zIIPs by that queue, the GCPs by the open pool
    where it is below their MVA time. To the other pool's idle probability such a pool is a delay
    of the time it takes.

    References
    ----------
    Reiser, M. and Lavenberg, S. S. (1980), *J. ACM* 27(2); Menascé, Almeida and Dowdy (2004),
    *Performance by Design*, ch. 14; Lazowska, Zahorjan, Graham and Sevcik (1984),
    *Quantitative System Performance* (also the residual approximation for FCFS centres with
    non-exponential service); Kleinrock (1976), *Queueing Systems Vol. 2*, §3.7; Allen, A. O.
    (1990), *Probability, Statistics, and Queueing Theory*, 2nd ed., §6.5 (M/G/c).
    """
    if not (math.isfinite(think_time_ms) and think_time_ms >= 0):
        raise ValueError(f"think_time_ms must be >= 0, got {think_time_ms}")
    if n_max < 1:
        raise ValueError(f"n_max must be >= 1, got {n_max}")
    if not (math.isfinite(stop_ratio) and stop_ratio >= 0):
        raise ValueError(f"stop_ratio must be >= 0, got {stop_ratio}")
    d, r0, _ = _broadcast(cpu_ms_per_tran, delay_ms, np.ones(1), "clients")
    d, f = engine_demand(d, ziip_eligible_fraction, dispatch)
    run = Populations(float(think_time_ms), int(n_max), float(stop_ratio), int(n_min))
    x, resp, spill, zb, gb, solved = closed_kernel(d, r0, f, rules_of(dispatch), run,
                                                    new_memos(len(d)), new_mva_states(len(d)))
    x = x * 1000.0  # tran/ms to tps
    return DispatchSolution(x, resp, spill, zb, gb, np.zeros_like(resp, dtype=bool), solved=solved)


def _broadcast(d, r0, load, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = np.atleast_1d(np.asarray(d, dtype=float))
    r0 = np.broadcast_to(np.asarray(r0, dtype=float), d.shape).astype(float)
    load = np.atleast_1d(np.asarray(load, dtype=float))
    if d.ndim != 1 or load.ndim != 1:
        raise ValueError(f"cpu_ms_per_tran, delay_ms and {name} must be scalars or 1-d arrays")
    if np.any(~np.isfinite(d)) or np.any(d < 0) or np.any(~np.isfinite(r0)) or np.any(r0 < 0):
        raise ValueError("cpu_ms_per_tran and delay_ms must be finite and >= 0")
    if np.any(~np.isfinite(load)) or np.any(load < 0):
        raise ValueError(f"{name} must be finite and >= 0")
    return d, r0, load
