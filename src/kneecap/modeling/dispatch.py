"""The zIIP/GCP dispatch model: one LPAR's CPU pools, with GCP help fed back into the queues.

Every response-time path in kneecap uses these rules: :func:`solve_open` (open arrivals) evaluates
:func:`cpu_residence` at the offered rate, and :func:`solve_closed` (clients with think time, zero
think time included) applies the same rules inside exact MVA, with the same M/M/c+D zIIP queue.
The rules follow z/OS dispatching as IEAOPTxx sets it, and :mod:`kneecap.simulation` implements the
same rules event by event; ``make bench`` compares the two.

Dispatch rules (equal-speed engines, times in CP-equivalent ms):

* a transaction's CPU demand ``D`` is ``gcp_bursts`` GCP-only bursts of ``(1-f) D / gcp_bursts``
  and ``eligible_bursts`` zIIP-eligible bursts of ``f D / eligible_bursts``;
* with no zIIP online, eligible work is ordinary GCP work (RMF reports it as IIPCP);
* otherwise eligible bursts queue FCFS for the zIIP pool; with IIPHONORPRIORITY=YES they may run on
  a GCP that has no GCP-native work waiting (lower priority than native work) once the pool needs
  help: under the ``pool`` rule (default) from the moment the oldest queued burst has waited
  ``ZIIPAWMT`` until a zIIP finds the queue empty, under the ``burst`` rule only bursts that have
  themselves waited ``ZIIPAWMT``; with NO eligible work waits for a zIIP;
* other classes load the pools at ``bg_gcp_busy_pct`` / ``bg_ziip_busy_pct`` per engine, in
  bursts of ``bg_burst_ms`` FCFS beside the class's (:func:`_beside_background`: the class's
  bursts of another size must not lower the wait the background sets); their zIIP work is helped
  like the class's own.

Under the pool rule an eligible burst's wait is that of the zIIPs alone until a queued burst has
waited ZIIPAWMT, the flush of the backlog behind it and the help that follows
(:func:`_pool_trigger_wait`); the spill is M/M/c+D's at the mean patience of a burst queued behind
others. Where the class's eligible load is more than its zIIPs can run, help comes
in cycles (:func:`_help_cycle`) that the M/M/c+D queue of independent bursts misses; the model
takes the smaller of the two, the cycle weighted by how many bursts ZIIPAWMT spans. There the
simulated response rises, then falls as more bursts are offered while GCPs help, then rises again;
the model holds it to the geometric mean of the highest response below and the least above
(:func:`_hold_cycle`), so response never falls as load rises and is wrong by no more than any
monotone curve must be. A zIIP added (or other classes' zIIP work taken away) can then raise response, as in
the simulation: :meth:`Dispatch.ziips_fall_behind` says where.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

# engines per pool: z/OS defines at most a few hundred logical processors per LPAR, and every
# per-engine loop below is O(engines); one constant for the model and the input checks
from kneecap.schema import MAX_ENGINES

#: When GCPs help (see :class:`Dispatch`).
HELP_RULES = ("pool", "burst")


#: z/OS's own dispatcher settings, the default of every model and of ``params.yaml`` ``train``:
#: IEAOPTxx IIPHONORPRIORITY=YES and ZIIPAWMT=3200 microseconds (the default with HiperDispatch),
#: with the zIIP pool asking for help as a whole (``help_rule``, see :class:`Dispatch`).
HONOR_PRIORITY = True
HELP_WAIT_MS = 3.2
HELP_RULE = "pool"

#: The help cycle (:func:`_help_cycle`) is a fluid picture of a backlog of ``mu tau`` bursts (the
#: backlog at which a burst has waited ZIIPAWMT): it is given no weight up to 2 such bursts and full
#: weight from 8, between the two in proportion. Where ``mu tau`` is a couple of bursts the cycle
#: lasts a couple of bursts and the M/M/c+D queue describes it better (3 GCPs + 1 zIIP, 2 bursts of
#: 0.5 ms, ZIIPAWMT 1 ms, ``mu tau`` 2: simulation 2.42 ms, M/M/c+D 2.46, the cycle 2.00). Set on
#: the grid and on probes of 8 + 1 and 3 + 1 engines at ZIIPAWMT 0.4-10 ms; the points of
#: ``benchmarks/bench_dispatch_holdout.py`` were not used.
HELP_CYCLE_BURSTS = (2.0, 8.0)


@dataclass(frozen=True)
class Dispatch:
    """The LPAR and dispatching rules a prediction is made for.

    Parameters
    ----------
    n_gcp : general purpose processors online (``>= 1``).
    n_ziip : zIIPs online (``>= 0``).
    honor_priority : IEAOPTxx IIPHONORPRIORITY=YES: GCPs help eligible work that waited ``help_wait_ms``.
    help_wait_ms : IEAOPTxx ZIIPAWMT in ms (3.2 ms is the z/OS default with HiperDispatch).
    help_rule : ``"pool"``: the zIIP pool *needs help* once its oldest queued eligible burst has
        waited ``help_wait_ms``, and then GCPs take queued eligible work however long it has
        waited (z/OS: standard CPs help "if zIIP processors are unable to execute all zIIP-eligible
        work"; the dispatcher considers eligible work for a CP only when the zIIPs need help).
        ``"burst"``: a GCP takes only bursts that have themselves waited ``help_wait_ms``.
    eligible_bursts, gcp_bursts : dispatches per transaction of each kind; queueing delay per burst
        scales with burst size, but the ZIIPAWMT threshold does not, so these matter for help.
    bg_gcp_busy_pct, bg_ziip_busy_pct : per-engine utilisation of the pools by other classes, %.
    bg_burst_ms : mean burst of that background work, ms.
    """

    n_gcp: int
    n_ziip: int = 0
    honor_priority: bool = HONOR_PRIORITY
    help_wait_ms: float = HELP_WAIT_MS
    help_rule: str = HELP_RULE
    eligible_bursts: int = 1
    gcp_bursts: int = 1
    bg_gcp_busy_pct: float = 0.0
    bg_ziip_busy_pct: float = 0.0
    bg_burst_ms: float = 0.2

    def __post_init__(self) -> None:
        if not 1 <= int(self.n_gcp) <= MAX_ENGINES:
            raise ValueError(f"n_gcp must be between 1 and {MAX_ENGINES} (z/OS needs a general purpose "
                             f"processor), got {self.n_gcp}")
        if not 0 <= int(self.n_ziip) <= MAX_ENGINES:
            raise ValueError(f"n_ziip must be between 0 and {MAX_ENGINES}, got {self.n_ziip}")
        if not (math.isfinite(self.help_wait_ms) and self.help_wait_ms >= 0):
            raise ValueError(f"help_wait_ms must be >= 0, got {self.help_wait_ms}")
        if self.help_rule not in HELP_RULES:
            raise ValueError(f"help_rule must be one of {', '.join(HELP_RULES)}, got {self.help_rule!r}")
        if self.eligible_bursts < 1 or self.gcp_bursts < 1:
            raise ValueError(f"eligible_bursts and gcp_bursts must be >= 1, got "
                             f"{self.eligible_bursts} and {self.gcp_bursts}")
        for name in ("bg_gcp_busy_pct", "bg_ziip_busy_pct"):
            value = getattr(self, name)
            if not 0.0 <= value < 100.0:
                raise ValueError(f"{name} must be in [0, 100), got {value}")
        if self.n_ziip == 0 and self.bg_ziip_busy_pct > 0:
            raise ValueError("bg_ziip_busy_pct needs n_ziip >= 1")
        if not self.bg_burst_ms > 0:
            raise ValueError(f"bg_burst_ms must be > 0, got {self.bg_burst_ms}")

    def _args(self) -> tuple:
        return (int(self.eligible_bursts), int(self.gcp_bursts), int(self.n_gcp), int(self.n_ziip),
                bool(self.honor_priority), float(self.help_wait_ms), self.help_rule == "pool",
                self.bg_gcp_busy_pct / 100.0,
                self.bg_ziip_busy_pct / 100.0, float(self.bg_burst_ms))

    def max_tps(self, cpu_ms_per_tran: float, ziip_eligible_fraction: float) -> float:
        r"""Throughput at which the pools the class may use are full (asymptotic bound), tps.

        With help (or no zIIP) eligible work may use every engine, GCP-native work only GCPs;
        without help each kind is limited by its own pool:

        .. math::

            X_{max} = \min\Big(\frac{c_G + c_Z}{D}, \frac{c_G}{(1-f)D}\Big) \text{ (help)}, \quad
            \min\Big(\frac{c_Z}{f D}, \frac{c_G}{(1-f)D}\Big) \text{ (no help)}

        with ``c`` the engines each pool has left after background work.
        """
        d, f = float(cpu_ms_per_tran), float(ziip_eligible_fraction)
        if d <= 0:
            return math.inf
        c_g = self.n_gcp * (1 - self.bg_gcp_busy_pct / 100.0)
        c_z = self.n_ziip * (1 - self.bg_ziip_busy_pct / 100.0)
        native = c_g / ((1 - f) * d) if (1 - f) * d > 0 else math.inf
        if self.n_ziip == 0 or self.honor_priority:
            pooled = (c_g + c_z) / d
            return 1000.0 * min(pooled, native)
        eligible = c_z / (f * d) if f * d > 0 else math.inf
        return 1000.0 * min(eligible, native)

    def ziips_fall_behind(self, tps: float, cpu_ms_per_tran: float, ziip_eligible_fraction: float) -> bool:
        r"""True where the zIIPs cannot run the class's eligible load and GCPs help as a matter of course.

        That is ``f D X > c_Z`` at ``X = tps`` with ``c_Z`` the zIIPs left by other classes, under
        IIPHONORPRIORITY=YES, ``help_rule="pool"`` and ZIIPAWMT > 0.

        There a zIIP added can raise response, in the dispatcher simulation as in the model: the
        pool needs help less often, and more of the eligible bursts wait up to ZIIPAWMT for it
        (docs/models.md). Everywhere else another engine of either kind never predicts worse.
        """
        if self.n_ziip == 0 or not self.honor_priority or self.help_rule != "pool" or self.help_wait_ms <= 0:
            return False
        c_z = self.n_ziip * (1.0 - self.bg_ziip_busy_pct / 100.0)
        return float(ziip_eligible_fraction) * float(cpu_ms_per_tran) * float(tps) / 1000.0 > c_z


@dataclass(frozen=True)
class DispatchSolution:
    """Predictions for ``B`` parameter sets at ``M`` loads; every array is ``(B, M)``.

    ``resp_ms`` excludes think time and includes the fixed delay. ``spill_fraction`` is the share
    of the class's zIIP-eligible work that runs on GCPs (RMF's IIPCP over IIP + IIPCP).
    ``ziip_busy`` / ``gcp_busy`` are busy engines per engine of each pool, background included.
    ``saturated`` marks loads beyond what the pools can carry (open load only; a closed population
    always settles at a throughput the pools sustain). ``ziip_wait_ms`` / ``gcp_wait_ms`` (open
    load by interval only, else None): a transaction's time with an eligible burst queued for a
    zIIP, and with a GCP-only burst queued for a GCP (all of it GCP wait without zIIPs).
    ``solved`` (closed solves, else None): the last population solved for each parameter set,
    ``n_max`` unless :func:`solve_closed` stopped it early; the columns after it are NaN.
    """

    tps: np.ndarray
    resp_ms: np.ndarray
    spill_fraction: np.ndarray
    ziip_busy: np.ndarray
    gcp_busy: np.ndarray
    saturated: np.ndarray
    ziip_wait_ms: np.ndarray | None = None
    gcp_wait_ms: np.ndarray | None = None
    solved: np.ndarray | None = None


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
    no other waiting (:func:`_mmc_help`). Level crossing on the virtual waiting time
    ``v`` gives its density, with ``beta = lambda - c/s`` and ``p_{c-1}`` the probability that
    ``c - 1`` engines are busy:

    .. math::

        f(v) = \lambda p_{c-1} e^{\beta v}\ (v < \tau), \qquad
        f(v) = \lambda p_{c-1} e^{\beta\tau} e^{-c (v-\tau)/s}\ (v > \tau)

        \frac{1}{p_{c-1}} = \frac{1}{B(c-1, a)} + \lambda\frac{e^{\beta\tau}-1}{\beta}
            + \lambda s \frac{e^{\beta\tau}}{c}

    with ``B`` Erlang's loss formula. The spill is ``P(V > tau)`` and an eligible burst waits
    ``E[min(V, tau)]`` for a zIIP before it runs there or is helped. With NO, M/M/c (Erlang C).

    *Pool rule, the wait* — M/M/c+D at the mean patience gives the spill (within 10 % of the
    simulation's on the SMF round trip's LPAR) but caps the queue at about half the backlog a
    trigger finds, and its wait was 16-17 % low at 91-96 % zIIP busy (issue #10). The wait is
    instead the pool rule's own: the zIIPs alone until a burst has waited ZIIPAWMT, the flush of
    the backlog behind it and the help that follows, with a transaction's bursts offered one
    after another (:func:`_pool_trigger_wait`).

    *Pool rule, zIIPs behind* — where ``f D X`` exceeds the zIIPs, the help cycle of
    :func:`_help_cycle` (zIIPs alone until a burst has waited ZIIPAWMT, then every spare GCP until
    the queue empties), weighted by :func:`_cycle_weight`, replaces the M/M/c+D residence where it
    is the smaller; where the response that gives falls as the load rises it is held to the
    geometric mean of its highest value below and its least above (:func:`_hold_cycle`).

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
    (:func:`_residual_ratio`, which counts the residual only for bursts that do not follow their
    own transaction's burst on the pool):

    .. math:: W = \frac{C(c, a)\, s}{c - a} \cdot \frac{r}{s}

    The GCP pool beside zIIPs keeps M/M/c for the class's own bursts: its GCP-only bursts are of
    one size, and scaling the waits where helped bursts join them made the points where GCPs help
    worse (docs/benchmarks.md).

    *Beside other classes' work* (``bg_*_busy_pct``, bursts of ``bg_burst_ms``) a pool serves
    bursts of different sizes FCFS, and M/M/c at their mean burst let the class's small bursts
    lower the wait in ms as its load rose (issue #10). The zIIP queue (M/M/c+D or M/M/c) and the
    GCP pool's Cobham base take the mean burst times :func:`_beside_background`, the class's wait
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
    rules_and_floor = (*dispatch._args(), np.full(_FLOOR, -1.0))
    out = _residence(float(tps) / 1000.0, float(cpu_ms_per_tran), float(ziip_eligible_fraction), *rules_and_floor)
    return float(out[0]), float(out[1]), float(out[2]), float(out[3])


def solve_open(tps: np.ndarray, cpu_ms_per_tran: np.ndarray, delay_ms: np.ndarray,
               ziip_eligible_fraction: float, dispatch: Dispatch) -> DispatchSolution:
    """Response at offered arrival rates ``tps`` (``M``) for ``B`` pairs ``(D, R0)``.

    ``resp_ms = R0 + residence`` (:func:`cpu_residence`); ``inf`` and ``saturated`` beyond the
    pools' capacity.
    """
    d, r0, loads = _broadcast(cpu_ms_per_tran, delay_ms, tps, "tps")
    x, resp, spill, zb, gb, sat = _open_kernel(loads / 1000.0, d, r0, float(ziip_eligible_fraction),
                                              *dispatch._args())
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
    k_e, k_g, _, _, honor, tau, pool, _, _, bg_s = dispatch._args()
    resp, spill, zb, gb, wz, wg = _rows_kernel(loads / 1000.0, d, f, k_e, k_g, n_g.astype(np.int64),
                                               n_z.astype(np.int64), honor, tau, pool, bg_g / 100.0,
                                               np.where(n_z > 0, bg_z, 0.0) / 100.0, bg_s)
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
    rather than a mean burst ``s`` (:func:`_residual_ratio`). For one engine that is Reiser's
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
    it (:func:`_throughput_beside_background`): the zIIPs by that queue, the GCPs by the open pool
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
    x, resp, spill, zb, gb, solved = _closed_kernel(d, r0, float(think_time_ms), int(n_max), float(stop_ratio),
                                                    int(n_min), float(ziip_eligible_fraction), *dispatch._args())
    x *= 1000.0  # tran/ms to tps, in place: the array is the kernel's own
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


# Compiled: the desk redraws a curve on every slider move and each fit evaluates hundreds of
# bootstrap parameter sets; interpreted, one residence costs tens of microseconds.


@numba.njit(cache=True)
def _erlang_b(c, a):  # pragma: no cover - compiled
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


@numba.njit(cache=True)
def _erlang_c(c, a):  # pragma: no cover - compiled
    if a >= c:
        return 1.0
    b = _erlang_b(c, a)
    rho = a / c
    return b / (1.0 - rho + rho * b)


@numba.njit(cache=True)
def _residual_ratio(rate_1, s_1, rate_2, s_2, rate_3, s_3, rejoin):  # pragma: no cover - compiled
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
    ``C_a^2 = 1``). It is 1 for bursts of one size. The same ``r`` on any number of engines: the
    variant that lets a rejoining burst also meet the residuals of the other ``c - 1`` engines,
    ``s + (r_{mix} - s)(1 - \rho_r / c)``, put 2-8 GCPs without zIIPs (f 0.3, 4 bursts of 0.06 ms
    and one of 0.56 ms, open) 30-61 % above the simulation at 85-95 % busy, where this one is
    within 4 %; the full ``r_mix``, as if every burst came from outside, puts one GCP 32-90 %
    above it at 30-85 % busy.

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
def _rejoins(kg, ke, on_pool_e):  # pragma: no cover - compiled
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
def _beside_background(c, a_pool, c_wait, rate_c, s_c, k_c, rate_o, s_o):  # pragma: no cover - compiled
    r"""``W_class / W_M/M/c``: the class's wait per burst at a pool beside other classes' bursts, over M/M/c's.

    A pool of ``c`` engines serves FCFS the class's bursts (``rate_c`` bursts/ms of mean ``s_c``,
    ``k_c`` per transaction) and other classes' (a Poisson stream, ``rate_o`` bursts/ms of mean
    ``s_o``), each exponential about its own mean; ``a_pool`` is the pool's load (busy engines)
    and ``c_wait`` its Erlang C, ``C(c, a_pool)``. M/M/c at the mean burst ``s = a / lambda``
    lets the class's small bursts lower ``s`` and with it the wait in ms, so more load predicted
    less wait (issue #10). A transaction's bursts on the pool are of two kinds:

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
    overflow GCPs take) ``h = 0`` and the ratio is ``r / s``. Counting as later only the bursts
    that follow the transaction's own burst on the pool at once, and the others as first ones,
    put the zIIP wait 1.7-1.8 times the simulation's where 1 ms background bursts meet eligible
    bursts of 0.025 ms with GCP bursts between (3 GCPs + 1 zIIP, IIPHONORPRIORITY=NO, 10-30 % of
    capacity; ``benchmarks/bench_dispatch_background.py``, docs/benchmarks.md). With the class's own burst
    ``s_c`` for ``s_e`` on every engine the wait grew less with ``k_c`` than the simulation's
    where the class's bursts are near the background's size, and the SMF round trip's zIIP delay
    samples chose 6 eligible bursts for the simulated 4: 2 GCPs + 2 zIIPs, 0.2 ms background
    bursts at 10 % of the zIIPs, 0.72 ms of eligible CPU in 4 / 6 / 8 bursts, zIIP wait per
    transaction at 400 tps simulated 0.047 / 0.051 / 0.053 ms (4 x 20,000 transactions), with
    ``s_c`` 0.046 / 0.048 / 0.049, with ``s_e`` 0.047 / 0.053 / 0.059; at 1,200-2,200 tps within
    2.2 % of the simulation's with ``s_c``, with ``s_e`` within 1.8 % for 4 bursts and 3.6-8.0 %
    high for 6 and 8. The pool's mean burst ``s`` for ``r`` in ``s_e`` followed the simulation
    closer in ``k_c`` (0.047 / 0.051 / 0.054) but let the wait fall as the class's load rose where
    its bursts are far smaller than the background's, as M/M/c at ``s`` did (docs/models.md).

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
def _mmc_terms(lam, s, c, tau, b_head):  # pragma: no cover - compiled
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


#: power series of E_2(x) = (e^x - 1 - x) / x^2 = sum x^n / (n + 2)! and of
#: E_4(x) = ((e^x (x - 1) + 1) / x^2 - 1/2) / x = sum x^n (n + 2) / (n + 3)! (:func:`_pool_trigger_wait`),
#: ten terms each: where they are used (|x| < 0.2) the first left out is below 1e-15 of the sum,
#: and the direct forms' cancellation error at |x| = 0.2 about 1e-14
_E2_SERIES = (1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040, 1 / 40320, 1 / 362880, 1 / 3628800, 1 / 39916800)
_E4_SERIES = (2 / 6, 3 / 24, 4 / 120, 5 / 720, 6 / 5040, 7 / 40320, 8 / 362880, 9 / 3628800, 10 / 39916800,
              11 / 479001600)


@numba.njit(cache=True)
def _horner(coeffs, x):  # pragma: no cover - compiled
    """``sum_n coeffs[n] x^n``."""
    total = 0.0
    for k in range(len(coeffs) - 1, -1, -1):
        total = total * x + coeffs[k]
    return total


@numba.njit(cache=True)
def _pool_trigger_wait(lam, s, c, tau, b_head, spare, chain, offered):  # pragma: no cover - compiled
    r"""Mean wait per burst for a zIIP under the pool rule: the zIIPs alone, a trigger, a flush, help.

    ``lam`` bursts/ms of mean ``s`` on ``c`` zIIPs, ``b_head = B(c-1, a)``; ``spare`` GCPs left by
    GCP-native and other classes' work, ``chain`` the share of the bursts a transaction offers the
    moment its previous one on the pool ends, ``offered`` the share offered while GCPs help
    (:func:`_help_offered`). Returns the wait in ms.

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
    in :func:`_help_cycle`): with ``M = (c + G) / s`` bursts/ms served and ``lambda`` offered, of
    which the fresh ``lambda (1 - chi)`` add to the queue and the last ``M (1 - chi)`` leave it,
    the mean height of a walk with drift ``-(M - lambda)(1 - chi)`` and variance rate
    ``(lambda + M)(1 - chi)`` over its way down is the line's plus ``(lambda + M) / (2 M (M -
    lambda))`` per burst. A share ``theta`` (``offered``) of the bursts are offered then:

    .. math:: W = (1 - \theta)\, w_{alone}
        + \theta \Big(\frac{D}{2} + \frac{\lambda + M}{2 M (M - \lambda)}\Big)

    Measured in the instrumented simulation (``benchmarks/probe_pool_flush.py``): on the SMF round
    trip's LPAR (2 GCPs + 2 zIIPs, 4 eligible bursts, 1800-2600 tps) the backlog at a trigger is
    0.88-1.03 ``lambda tau``; 2 zIIPs, f 0.95, 3000 tps with 2 / 3 / 6 GCPs: bursts offered
    while GCPs help wait 1.00 / 0.78 / 0.45 ms (the in-help term: 1.03 / 0.80 / 0.49; ``D / 2``
    alone 0.94 / 0.75 / 0.46), those offered in the pending phase 2.47 / 2.28 / 2.00 (``(tau + D)
    / 2``: 2.54 / 2.35 / 2.06). Where the pooled engines are nearly full the walk's term is most of
    it (``benchmarks/probe_help_phases.py``, f 0.95, 4 bursts, open at 95 % of the LPAR's
    capacity): bursts offered while GCPs help wait 2.88 / 3.24 / 2.28 / 2.29 ms on 1 + 2 / 1 + 1
    / 2 + 2 / 1 + 4 engines against the term's 2.75 / 3.37 / 2.44 / 2.26 (``D / 2`` alone 1.52, and
    response was 22-30 % low there). M/M/c+D at the mean patience (:func:`_mmc_patience`, the
    wait before) caps the queue at about half the backlog a trigger finds, and its wait was 16-17
    % below the simulation's where those zIIPs are 91-96 % busy (issue #10).
    """
    if lam <= 0.0:
        return 0.0
    mass, area, trig = _pool_alone(lam, s, c, tau)
    return _pool_phases(lam, s, c, tau, 1.0 / b_head, mass, area, trig, spare, chain, offered)


@numba.njit(cache=True)
def _pool_alone(lam, s, c, tau):  # pragma: no cover - compiled
    """:func:`_pool_trigger_wait`'s zIIPs-alone terms per ``p_{c-1}``: (``int f``, ``int v f``, ``F``), ``lam > 0``."""
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
def _pool_phases(lam, s, c, tau, head, mass, area, trig, spare, chain, offered):  # pragma: no cover - compiled
    """:func:`_pool_trigger_wait`'s phases put together: the mean wait per burst, ms.

    ``head``, ``mass``, ``area`` and ``trig`` are the zIIPs-alone terms per ``p_{c-1}``: the states
    with an engine free, ``int f``, ``int v f`` and the trigger rate ``F``; ``offered`` is the share
    of bursts offered while GCPs help (:func:`_help_offered`).
    """
    drain = lam * tau * s / (c + max(spare, 0.0))  # the backlog lambda tau over every engine's rate
    # w_alone of _pool_trigger_wait with numerator and denominator times (1 - chi) (H + A): the
    # fresh bursts' term is then (1 - chi) int v f, and a solve evaluates this a few times a population
    inv_lam = 1.0 / lam
    follow = (head + mass) * c * max(area - s / c * mass, 0.0) / (lam * s * (head - 1.0) + c * mass)
    alone = (((1.0 - chain) * area + chain * follow + (1.0 - chain) * trig * tau * (inv_lam + (tau + drain) / 2.0))
             / (head + mass + (1.0 - chain) * trig * (inv_lam + tau)))
    if offered <= 0.0:
        return alone
    # bursts arrive at lam and all M = (c + G) / s engines serve them (see _pool_trigger_wait)
    return (1.0 - offered) * alone + offered * (drain / 2.0 + _walk_excess(lam, (c + max(spare, 0.0)) / s, 1))


@numba.njit(cache=True)
def _walk_excess(lam, big_m, per):  # pragma: no cover - compiled
    r"""Mean wait (ms) a draining queue's random walk adds to its straight line, per burst served.

    Items arrive at ``lam`` and ``M / per`` leave while every engine serves (``M`` bursts/ms; items
    of ``per`` bursts each: transactions, or bursts with ``per = 1``): the mean height of a walk
    with drift ``-(M / per - lam)`` and variance rate ``lam + M / per`` over its way down is the
    straight line's plus

    .. math:: \frac{\lambda + M / k}{2 M (M / k - \lambda)}

    (in bursts over ``M``). The help phase's term in :func:`_help_cycle` (transactions) and in
    :func:`_pool_trigger_wait` (bursts, where it comes to the same); ``inf`` where the engines do
    not drain the queue.
    """
    leave = big_m / per
    return (lam + leave) / (2.0 * big_m * (leave - lam)) if leave > lam else np.inf


@numba.njit(cache=True)
def _help_offered(a, c, spill, spare, chain):  # pragma: no cover - compiled
    r"""The share of a pool's bursts offered while GCPs help it (:func:`_pool_trigger_wait`), at most 1.

    ``a`` busy engines' worth of bursts, a share ``spill`` of them helped on ``spare`` GCPs, which
    take queued bursts all the time help is on: help is on a share ``h = spill a / G`` of the time
    (work conservation). Fresh bursts are offered at ``lambda (1 - chi)`` then as at any time,
    follow-ons as the pool's bursts end, ``chi (c + G) / s`` per ms while every engine serves it,
    so

    .. math:: \theta = h \Big(1 - \chi + \chi\frac{c + G}{a}\Big)

    Measured (``benchmarks/probe_pool_flush.py``, 2 zIIPs, f 0.95, 3000 tps, 2 / 3 / 6 GCPs): help
    on 17.8 / 11.5 / 5.5 % of the time (``h`` at the simulated spill 17.4 / 11.4 / 5.6), 25 / 19 /
    14 % of the bursts offered then (``theta`` 26 / 21 / 16).
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
def _mmc_impatient(lam, s, c, tau):  # pragma: no cover - compiled
    """M/M/c+D: (P(V > tau), E[min(V, tau)]) for arrival rate ``lam``/ms, mean service ``s`` ms."""
    spill, wait, _, _ = _mmc_terms(lam, s, c, tau, _erlang_b(c - 1, lam * s))
    return spill, wait


@numba.njit(cache=True)
def _mmc_help(lam, s, c, tau, pool, q0, spare, chain):  # pragma: no cover - compiled
    """(spill, mean wait for a zIIP, q) under the help rule.

    Burst rule: M/M/c+D at patience ``tau`` (:func:`_mmc_patience`). Pool rule: the spill of
    M/M/c+D at the mean patience of a burst queued behind others (:func:`_mmc_patience`) and the
    wait of the zIIPs alone until a trigger, its flush and the help that follows
    (:func:`_pool_trigger_wait`). ``spare`` GCPs are left by GCP-native and other classes' work;
    ``chain`` is the share of the pool's bursts a transaction offers the moment its previous one
    there ends. ``q`` (the share of waiting bursts that find no other waiting) is the patience's
    fixed point, kept for the next solve's warm start. Past the zIIPs' capacity this wait can fall
    as the load rises; the callers hold it at its peaks (:func:`_pool_wait_peaks`).
    """
    b_head = _erlang_b(c - 1, lam * s)
    spill, wait, q = _mmc_patience(lam, s, c, tau, pool, q0, b_head)
    if pool and tau > 0.0 and lam > 0.0:
        wait = _pool_wait_spare_held(lam, s, c, tau, 1.0 / b_head, spare, chain, spill)
    return spill, wait, q


@numba.njit(cache=True)
def _pool_wait_with_spare(lam, s, c, tau, head, mass, area, trig, spare, chain, a, spill):  # pragma: no cover
    """:func:`_pool_phases` at ``spare`` GCPs, the share offered while they help from :func:`_help_offered`."""
    return _pool_phases(lam, s, c, tau, head, mass, area, trig, spare, chain, _help_offered(a, c, spill, spare, chain))


@numba.njit(cache=True)
def _pool_wait_spare_held(lam, s, c, tau, head, spare, chain, spill):  # pragma: no cover - compiled
    r""":func:`_pool_trigger_wait` at ``spare`` GCPs, or its least over fewer spare GCPs where that is lower.

    The pool rule's wait is ``W = (1 - theta) w_alone + theta w_help`` with ``theta`` the share of
    bursts offered while GCPs help (:func:`_help_offered`) and ``w_help = D / 2`` plus the random
    walk's term (:func:`_pool_trigger_wait`). More spare GCPs drain the backlog sooner (``w_help``
    falls) but so help is on for less of the time and fewer bursts are offered
    then (``theta ~ spill a / G``): with one eligible burst per transaction, a short ZIIPAWMT and
    the zIIPs just behind, ``W`` can rise with ``G`` (1 zIIP at 30 % busy with other classes'
    work, 5 -> 6 GCPs: 0.3577 -> 0.3586 ms per transaction, the response +0.02 %, seen by
    ``benchmarks/stress_dispatch_background.py``), too little for a simulation to tell either
    way. A GCP added must not predict worse, so where ``W`` rises with ``G`` it is held at its
    least over ``(0, G]``.
    """
    mass, area, trig = _pool_alone(lam, s, c, tau)
    a = lam * s
    wait = _pool_wait_with_spare(lam, s, c, tau, head, mass, area, trig, spare, chain, a, spill)
    if spill <= 1e-12 or spare <= 0.0:
        return wait
    # below g_1 every burst is offered while GCPs help (theta = 1) and W = w_help falls with G: the
    # least over (0, spare] is at g_1 or past it, where W is smooth. g_1 itself is a kink, taken
    # exactly, so spare GCPs past the least all give the same wait
    follow_spill = spill * chain
    g_1 = spill * (a * (1.0 - chain) + chain * c) / (1.0 - follow_spill) if follow_spill < 1.0 else spare
    lo, hi = min(max(g_1, 1e-9 * spare), spare), spare
    at_kink = _pool_wait_with_spare(lam, s, c, tau, head, mass, area, trig, lo, chain, a, spill)
    rising = _pool_wait_with_spare(lam, s, c, tau, head, mass, area, trig, spare * (1.0 - 1e-6), chain, a,
                                   spill) < wait
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
    f1 = _pool_wait_with_spare(lam, s, c, tau, head, mass, area, trig, x1, chain, a, spill)
    f2 = _pool_wait_with_spare(lam, s, c, tau, head, mass, area, trig, x2, chain, a, spill)
    while hi - lo > 1e-7 * spare:
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = lo + ratio * (hi - lo)
            f1 = _pool_wait_with_spare(lam, s, c, tau, head, mass, area, trig, x1, chain, a, spill)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = hi - ratio * (hi - lo)
            f2 = _pool_wait_with_spare(lam, s, c, tau, head, mass, area, trig, x2, chain, a, spill)
    return min(wait, at_kink, f1, f2)


@numba.njit(cache=True)
def _pool_wait_at(lam_t, s_e, ke, rate_bz, a_bz, n_z, tau, n_g, a_bg_g, native_per_tran, q0):  # pragma: no cover
    """The pool rule's (wait per burst for a zIIP, q) of :func:`_mmc_help` at ``lam_t`` transactions/ms.

    ``ke`` eligible bursts of ``s_e`` per transaction beside other classes' zIIP work (``rate_bz``
    bursts/ms, ``a_bz`` engines) on ``n_z`` zIIPs; the GCPs left are ``n_g`` less other classes'
    ``a_bg_g`` and the class's ``native_per_tran`` per transaction; ``q0`` starts the patience's
    fixed point (:func:`_mmc_patience`).
    """
    rate_z = lam_t * ke + rate_bz
    native = lam_t * native_per_tran
    # the queue the callers solve: beside other classes' bursts that of _ziip_queue, so the peaks
    # are those of the wait they hold
    rate_q, s_q = _ziip_queue(lam_t, lam_t * ke * s_e, s_e, ke, n_z, a_bz, a_bz / rate_bz if a_bz > 0.0 else 1.0)
    _, wait, q = _mmc_help(rate_q, s_q, n_z, tau, True, q0, n_g - native - a_bg_g, lam_t * (ke - 1.0) / rate_z)
    return wait, q


#: the most peaks of the pool rule's wait past the zIIPs' capacity kept (:func:`_pool_wait_peaks`),
#: and the floats a solve keeps per LPAR state: the help cycle's least-wait rate and waits, those
#: peaks, then at ``_PEAK`` the highest residence below that rate (:func:`_cycle_hold_peak`), at
#: ``_SCAN`` how far the peaks' scan has gone
_MAX_PEAKS = 4
_PEAK = 3 + 1 + 2 * _MAX_PEAKS
#: after those, the help cycle's waits on :data:`_NODES` loads of its regime, each the least at or
#: above its load (:func:`_cycle_floor`): (load, eligible waits, GCP-only waits) per node
_NODES = 16
_SCAN = _PEAK + 1
_TABLE = _SCAN + 4
_FLOOR = _TABLE + 3 * _NODES


#: the pool rule's wait is held at its peaks (:func:`_pool_wait_peaks`) from this share of the
#: load at which the zIIPs left by other classes are full
_HOLD_FROM = 0.5


@numba.njit(cache=True)
def _scan_load(i, lo, full, step_below, step, n_below):  # pragma: no cover - compiled
    """Load ``i`` of :func:`_pool_wait_peaks`' scan: ``n_below`` steps to ``full``, then steps of ``step``."""
    return lo + i * step_below if i <= n_below else full + (i - n_below) * step


@numba.njit(cache=True)
def _pool_wait_peaks(s_e, ke, rate_bz, a_bz, n_z, tau, n_g, a_bg_g, native_per_tran, out, scan,
                     upto):  # pragma: no cover - compiled
    """Where the zIIPs fall behind, the loads at which :func:`_pool_wait_at` stops rising, into ``out``.

    ``out[0]`` is the number of peaks found (up to :data:`_MAX_PEAKS`), ``out[1 + 2k]`` and
    ``out[2 + 2k]`` the rate (tran/ms) and wait of peak ``k``, in rising order of both: each is
    higher than the one before. Past the zIIPs' capacity more of the bursts are offered while GCPs
    help and wait less (:func:`_help_offered`), so the wait can fall as the load rises before it
    rises again (as the simulation's can there); the callers hold it at the last peak below the
    load (:func:`_held_past_peak`), so more load never predicts better. With a short ZIIPAWMT and
    other classes' zIIP work it can start to fall a little before the zIIPs are full (1 zIIP 30 %
    busy with other work, 8 bursts of 0.04 ms, ZIIPAWMT 0.5 ms: from 92 % of the zIIP left), so the
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
        prev, q = _pool_wait_at(lo, s_e, ke, rate_bz, a_bz, n_z, tau, n_g, a_bg_g, native_per_tran, 1.0)
        scan[0], scan[1], scan[2], scan[3] = 0.0, prev, q, -np.inf
    i = int(scan[0])
    prev, q, level = scan[1], scan[2], scan[3]
    count = int(out[0])
    # a fall found at load i is a peak between loads i - 2 and i: scan while load i - 2 is below upto
    while i < n and count < _MAX_PEAKS and _scan_load(max(i - 1, 0), lo, full, step_below, step, n_below) <= upto:
        i += 1
        # each load's patience fixed point from the one before: a step or two of Newton's method
        cur, q = _pool_wait_at(_scan_load(i, lo, full, step_below, step, n_below), s_e, ke, rate_bz, a_bz, n_z, tau,
                               n_g, a_bg_g, native_per_tran, q)
        if cur < prev and prev > level:
            a = _scan_load(max(i - 2, 0), lo, full, step_below, step, n_below)
            b = _scan_load(i, lo, full, step_below, step, n_below)
            ratio = 0.3819660112501051
            x1 = a + ratio * (b - a)
            x2 = b - ratio * (b - a)
            f1 = _pool_wait_at(x1, s_e, ke, rate_bz, a_bz, n_z, tau, n_g, a_bg_g, native_per_tran, q)[0]
            f2 = _pool_wait_at(x2, s_e, ke, rate_bz, a_bz, n_z, tau, n_g, a_bg_g, native_per_tran, q)[0]
            while b - a > 1e-6 * hi:
                if f1 >= f2:
                    b, x2, f2 = x2, x1, f1
                    x1 = a + ratio * (b - a)
                    f1 = _pool_wait_at(x1, s_e, ke, rate_bz, a_bz, n_z, tau, n_g, a_bg_g, native_per_tran, q)[0]
                else:
                    a, x1, f1 = x1, x2, f2
                    x2 = b - ratio * (b - a)
                    f2 = _pool_wait_at(x2, s_e, ke, rate_bz, a_bz, n_z, tau, n_g, a_bg_g, native_per_tran, q)[0]
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
def _held_past_peak(wait, x, s, ke, m, tau, pool, n_g, a_bg_g, native_per_tran, rate_bz, a_bz,
                    floor):  # pragma: no cover - compiled
    """A pool-rule wait per burst at ``x`` tran/ms, held near and past the zIIPs' capacity (:func:`_hold`).

    ``s`` is the class's burst on the zIIPs; beside other classes' zIIP work (``rate_bz`` bursts/ms,
    ``a_bz`` engines) ``s`` is its own burst and the wait that of :func:`_ziip_queue`'s queue.
    """
    if not pool or tau <= 0.0 or x * ke * s <= _HOLD_FROM * (m - a_bz):  # below the scan's start
        return wait
    # on to the peaks below x (nothing to do where the scan has been there)
    _pool_wait_peaks(s, ke, rate_bz, a_bz, m, tau, n_g, a_bg_g, native_per_tran, floor[3:], floor[_SCAN:], x)
    return _hold(wait, x, floor)


@numba.njit(cache=True)
def _hold(wait, x, floor):  # pragma: no cover - compiled
    """``wait`` at ``x`` tran/ms, or the last of :func:`_pool_wait_peaks`' peaks (``floor[3:]``) below ``x``."""
    # indexed, not sliced: a solve asks a few times a population
    for k in range(int(floor[3]) - 1, -1, -1):
        if x > floor[4 + 2 * k]:
            return floor[5 + 2 * k] if floor[5 + 2 * k] > wait else wait
    return wait


@numba.njit(cache=True)
def _mmc_patience(lam, s, c, tau, pool, q0, b_head):  # pragma: no cover - compiled
    """(spill, mean wait for a zIIP, q) of M/M/c+D at the help rule's effective patience.

    Burst rule: every burst's patience is ``tau``. Pool rule: a burst that finds other bursts
    waiting is helped when the oldest of them reaches ``tau``; taking that head's age as uniform
    on ``[0, tau)``, such a burst's patience averages ``tau / 2``, and a burst that finds none
    waiting keeps ``tau``. With ``q`` the share of waiting bursts that find no other waiting
    (``p_c / P(V > 0)``, which is ``1 - rho`` in M/M/c), the patience used is the mean
    ``tau (1 + q) / 2``; ``q`` and the queue it comes from are solved together, starting from
    ``q0`` (the previous population's ``q`` in the closed recursion, which converges in a few
    steps from there). Under the pool rule :func:`_mmc_help` keeps the spill and takes the wait
    from :func:`_pool_trigger_wait`.
    """
    if not pool or tau <= 0.0:
        spill, wait, q, _ = _mmc_terms(lam, s, c, tau, b_head)
        return spill, wait, q
    # the patience lies in [tau / 2, tau]: if even tau / 2 spills nothing measurable, neither
    # does the fixed point, and the waits differ by at most that spill times a burst (checked on a
    # cold start only: a warm q0 < 1 comes from a solve that spilled, where the check only costs)
    if q0 >= 1.0:
        spill, wait, q, _ = _mmc_terms(lam, s, c, tau / 2.0, b_head)
        if spill < 1e-12:
            return spill, wait, q0
    # q = g(q) by Newton's method on h(q) = g(q) - q with g's derivative from _mmc_terms: g falls
    # as the patience grows, so h falls with slope <= -1 and has one root in [0, 1]; a step that
    # leaves the bracket kept around the root is replaced by bisection. To 1e-8: q moves the
    # patience by tau / 2 per unit, so the waits by far less than any answer shows. From a warm
    # start (the population before, or the throughput solve's previous try) one or two steps
    lo, hi = 0.0, 1.0
    q = q0
    spill, wait = 0.0, 0.0
    for _ in range(60):
        patience = tau * (1.0 + q) / 2.0
        spill, wait, g, dg = _mmc_terms(lam, s, c, patience, b_head)
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
            # d norm / d tau = lam w2, d w2 / d tau = beta w2 in _mmc_terms)
            dt = tau * step / 2.0
            return (spill + spill * (lam - c / s - lam * spill) * dt,
                    wait + spill * (1.0 + lam * (patience - wait)) * dt, q_next)
        q = q_next if lo < q_next < hi else 0.5 * (lo + hi)
    return spill, wait, q


@numba.njit(cache=True)
def _cycle_weight(c_z, tau, s):  # pragma: no cover - compiled
    """The help cycle's weight beside M/M/c+D: 0 to 1 as ``mu tau = c_Z tau / s`` passes :data:`HELP_CYCLE_BURSTS`."""
    if s <= 0.0:
        return 0.0
    lo, hi = HELP_CYCLE_BURSTS
    share = (c_z * tau / s - lo) / (hi - lo)
    return 0.0 if share <= 0.0 else (1.0 if share >= 1.0 else share)


@numba.njit(cache=True)
def _follow_on_ratio(lam, mu, ke):  # pragma: no cover - compiled
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
def _help_rounds_wait(lam, mu, big_m, ke, c_z, spare, tau):  # pragma: no cover - compiled
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
    bursts of stage ``j`` are queued or on a zIIP (the instrumented simulation, 8 GCPs + 2 zIIPs
    at 60 % of capacity: 17.2 bursts offered per ms while the zIIPs work alone, against
    ``lam + (k-1)/k mu`` = 15.4 and ``X`` = 16.9; at the start of help 24.2 / 14.6 / 9.5 / 5.5
    queued bursts with 4 / 3 / 2 / 1 to go, against 24.0 / 15.0 / 9.3 / 5.8).

    From there all ``C = c_Z + G`` engines serve the backlog in rounds, each round the ``B_n``
    bursts of the one before in ``B_n / M`` ms: the bursts with one to go leave, the others come
    back one stage on, and ``lam B_n / M`` fresh ones join. The queue, ``B_n - C`` at the start of
    round ``n``, stays near its start for about ``k`` rounds (the fresh bursts keep their place)
    and then falls; help ends where it is empty, at ``T``. Through the rounds' ends the queue is
    taken as straight lines with the corners rounded (a quadratic over half the shorter
    neighbouring round on either side of each end), so that ``T`` and the wait move smoothly with
    the load:

    .. math:: w_{rounds} = \frac{1}{M T} \int_0^T Q(t)\, dt

    (the simulation's time-average queue in help over ``M``: 32.4 / 50.1 = 0.647 ms there; its
    mean at the moment a burst is offered 0.657). Past :data:`_TAIL_AFTER` rounds per burst (near
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
def _rounded_queue_mean(times, queue, n):  # pragma: no cover - compiled
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
def _help_cycle(lam, s, ke, c_z, g_free, d_n, tau):  # pragma: no cover - compiled
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
    of the whole cycle: help phases are when the class's GCP work is heaviest. Measured in the
    simulation, GCP engines on eligible work while help is on: 0.50 / 0.52 / 1.01 / 7.53 at 4 + 1
    (f 0.3, 95 and 85 % load), 8 + 2 (f 0.3, 95 %) and 8 + 2 (f 0.95, 60 %), against ``G`` =
    0.50 / 0.50 / 1.00 / 7.50 and a spare capacity of 0.67 / 1.03 / 1.35 / 7.70.

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
    (2 delta)``). No constant is fitted: against the simulation's in-help wait (probe, f 0.95)
    ``w_on`` is within -6..+5 % at 8 + 1, 4 + 1, 2 + 1, 8 + 2, 4 + 2 and 2 + 2 engines, 30-85 %
    load, 4 bursts (the backlog-shape constant 0.75 it replaces: -20..+8 %), and -13..+4 % at 1, 2
    and 8 bursts (that constant: -27..+19 %); at f 0.3 it is -1 % at 85 % load but -12..-23 % at
    95 % (that constant: -7..-30 %), where the GCP-only bursts' own queueing, which the random walk
    leaves out, lengthens the help phases. Bursts are offered at ``lam + p mu`` off and
    ``lam + p M`` on; ``theta`` is the share offered on and the wait per burst
    ``(1 - theta) w_off + theta w_on``. The spill is ``(a_E - c_Z) / a_E``.

    Where help is occasional (``a_E`` below or near ``c_Z``) the M/M/c+D queue of
    :func:`_mmc_help` describes it and this cycle, which always waits a full ``tau`` for help,
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
    w_on = _help_rounds_wait(lam, mu, big_m, ke, c_z, spare, tau) + _walk_excess(lam, big_m, ke)
    offered_on = (lam + p * big_m) * t_on
    theta = offered_on / (offered_on + (lam + p * mu) * t_off)
    return (1.0 - theta) * w_off + theta * w_on, (a_e - c_z) / a_e


@numba.njit(cache=True)
def _cycle_waits(lam, s, ke, kg, c_z, n_g, d_n, a_bg_g, bg_s, tau):  # pragma: no cover - compiled
    """(eligible waits, GCP-only waits) per transaction, spill and GCP load under :func:`_help_cycle`.

    ``d_n`` is the GCP-only demand per transaction; ``inf`` waits outside the cycle's regime.
    """
    w_c, spill_c = _help_cycle(lam, s, ke, c_z, n_g - a_bg_g, d_n, tau)
    if w_c == np.inf:
        return np.inf, np.inf, 0.0, 0.0
    a_lo = spill_c * lam * ke * s
    # Cobham's first class beside the helped work; d_n with no eligible share is the GCP-only demand
    w_hi, _, a_g = _gcp_waits(lam, d_n, 0.0, kg, n_g, a_bg_g, bg_s, a_lo, a_lo / s, 0.0)
    if a_g >= n_g:
        return np.inf, np.inf, spill_c, a_g
    return ke * w_c, kg * w_hi, spill_c, a_g


@numba.njit(cache=True)
def _cycle_floor(s, ke, kg, c_z, n_g, d_n, a_bg_g, bg_s, tau, table):  # pragma: no cover - compiled
    """The rate (tran/ms) at which :func:`_help_cycle`'s waits are least, and those waits; ``table`` filled.

    ``(rate, eligible waits, GCP-only waits)`` per transaction (:func:`_cycle_waits`); ``(0, inf,
    inf)`` where the cycle has no regime (``table`` then left as it is). In the simulation as in the
    cycle, a pool that needs help more often can serve a transaction sooner (more of its bursts are
    offered while GCPs help), so the waits fall as the load rises from where the zIIPs stop keeping
    up, then rise to the GCPs' saturation. The model keeps response from falling with load by
    holding it between the highest response below this rate and these least waits
    (:func:`_hold_cycle`), and above this rate by the least waits at or above each load.

    The waits are taken on :data:`_NODES` loads of the regime, closer together towards the
    saturation where they climb fastest; ``table`` (``3 _NODES`` floats) gets, per node, its load
    and the eligible and GCP-only waits of the least total at that node or above, so the totals
    never fall from node to node (the waits are not unimodal everywhere: where the help phase's
    queue changes shape with load they can dip past their least, and a hold that took them for
    unimodal let response fall by 0.005 %, ``benchmarks/stress_dispatch_background.py``). The
    least is the least node's: against 32 nodes with the least refined by golden section to a
    millionth of the rate, 16 nodes and no refinement moved no grid point at <= 85 % busy by more
    than 0.3 point of error and none by more than 2.1 (at 95 %), at a third of the cost (an SMF
    class's intervals, each with its own other classes' work, build one table each).
    """
    lo = c_z / (ke * s)
    hi = (c_z + n_g - a_bg_g) / (ke * s + d_n)
    if ke < 1 or tau <= 0.0 or c_z <= 0.0 or hi <= lo:
        return 0.0, np.inf, np.inf
    for i in range(_NODES):
        step = 1.0 - (i + 0.5) / _NODES
        x = hi - (hi - lo) * step * step
        e, g, _, _ = _cycle_waits(x, s, ke, kg, c_z, n_g, d_n, a_bg_g, bg_s, tau)
        table[3 * i], table[3 * i + 1], table[3 * i + 2] = x, e, g
    best = _NODES - 1
    for i in range(_NODES - 2, -1, -1):  # the least at or above each node, from the top
        if table[3 * i + 1] + table[3 * i + 2] < table[3 * best + 1] + table[3 * best + 2]:
            best = i
        else:
            table[3 * i + 1], table[3 * i + 2] = table[3 * best + 1], table[3 * best + 2]
    return table[3 * best], table[3 * best + 1], table[3 * best + 2]


@numba.njit(cache=True)
def _help_cycle_env(lam, floor, s, ke, kg, c_z, n_g, d_n, a_bg_g, bg_s, tau):  # pragma: no cover
    """The help cycle's waits at ``lam`` held to the least at ``lam`` or above, and its spill.

    Below the least-wait rate ``floor[0]`` the least waits (``floor[1:3]``); above it the line
    between the neighbouring nodes of :func:`_cycle_floor`'s table (each the least at or above its
    node, so the total never falls with load), starting from the least itself; past the last node,
    nearer the saturation than any load a solve meets but for its last few, the waits themselves
    where higher than the last node's. :func:`_hold_cycle` then holds them where the response rose
    higher at a lower load. The spill stays that of ``lam`` (none below the regime): only the waits
    are held.
    """
    if floor[1] == np.inf:  # no regime (_cycle_floor): as _cycle_waits answers there
        return np.inf, np.inf, 0.0
    a_e = lam * ke * s
    spill = (a_e - c_z) / a_e if a_e > c_z else 0.0
    if lam <= floor[0]:
        return floor[1], floor[2], spill
    x0, e0, g0 = floor[0], floor[1], floor[2]
    for i in range(_NODES):
        x1 = floor[_TABLE + 3 * i]
        if x1 <= x0:
            continue
        e1, g1 = floor[_TABLE + 3 * i + 1], floor[_TABLE + 3 * i + 2]
        if lam <= x1:
            share = (lam - x0) / (x1 - x0)
            return e0 + share * (e1 - e0), g0 + share * (g1 - g0), spill
        x0, e0, g0 = x1, e1, g1
    e, g, spill_c, _ = _cycle_waits(lam, s, ke, kg, c_z, n_g, d_n, a_bg_g, bg_s, tau)
    if e + g > e0 + g0:
        return e, g, spill_c
    return e0, g0, spill_c


@numba.njit(cache=True)
def _hold_cycle(e, g, d, total, floor, f, ke, kg, n_g, n_z, tau, bg_g, bg_z, bg_s, weight):  # pragma: no cover
    r"""The cycle's waits ``e``, ``g`` (:func:`_help_cycle_env`) held so that more load never predicts less.

    ``total`` is the residence without the cycle (the pool rule's queues), ``d`` the class's CPU
    per transaction; the cycle counts only where ``d + e + g < total``, and only then is
    :func:`_cycle_hold_peak`'s highest residence ``P`` needed (found once into ``floor[_PEAK]``,
    ``< 0`` asks for it). Returns the held ``(e, g)``, in the cycle's eligible / GCP-only split.

    Notes
    -----
    Where the zIIPs cannot keep up, the simulated response rises to a peak and then *falls* as the
    load rises (more of the bursts are offered while GCPs help; on 8 GCPs + 1 zIIP, f 0.95, 4 bursts
    of 0.19 ms, open: 3.80 ms at 86 % of the zIIP's capacity, 5.45 at 145 %, 4.34 at 513 %), then
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
    raised (the least waits held alone, as before). Holding ``T`` alone was wrong by up to
    ``P / T`` against ``r``, and 30 % low at the simulation's peak above.
    """
    if not d + e + g < total or e + g <= 0.0:
        return e, g
    if floor[_PEAK] < 0.0:
        floor[_PEAK] = _cycle_hold_peak(d, f, ke, kg, n_g, n_z, tau, bg_g, bg_z, bg_s, weight, floor)
    r = d + e + g
    peak = floor[_PEAK]
    if peak > r:
        scale = (math.sqrt(peak * r) - d) / (e + g)
        e *= scale
        g *= scale
    return e, g


@numba.njit(cache=True)
def _cycle_hold_peak(d, f, k_e, k_g, n_g, n_z, tau, bg_g, bg_z, bg_s, weight, floor):  # pragma: no cover - compiled
    """The highest residence (``R0`` left out) below the help cycle's least-wait rate ``floor[0]``.

    The pool rule's residence (:func:`_residence_pool`) with the cycle's unheld waits
    (:func:`_cycle_waits`) taken in where smaller, in proportion to ``weight``, as :func:`_residence`
    combines them, from the zIIPs' capacity to ``floor[0]``: the ``P`` of :func:`_hold_cycle`.
    On 64 loads, then by golden section between the neighbours of the highest, to a millionth of
    the rate. ``0`` where the range is empty.
    """
    ke = k_e if f > 0.0 else 0
    kg = k_g if f < 1.0 else 0
    if ke < 1 or d <= 0.0:
        return 0.0
    s_e = f * d / ke
    c_z = n_z * (1.0 - bg_z)
    lo = c_z / (ke * s_e)
    hi = floor[0]
    if not hi > lo:
        return 0.0
    lo += 1e-9 * (hi - lo)  # as in _cycle_floor: at the zIIPs' capacity exactly the cycle's backlog never rises
    n = 64
    step = (hi - lo) / n
    best, at = 0.0, 0
    for i in range(n + 1):
        r = _cycle_combined(lo + i * step, d, f, k_e, k_g, ke, kg, n_g, n_z, tau, bg_g, bg_z, bg_s, weight, floor)
        if r > best:
            best, at = r, i
    a = lo + max(at - 1, 0) * step
    b = lo + min(at + 1, n) * step
    ratio = 0.3819660112501051
    x1 = a + ratio * (b - a)
    x2 = b - ratio * (b - a)
    f1 = _cycle_combined(x1, d, f, k_e, k_g, ke, kg, n_g, n_z, tau, bg_g, bg_z, bg_s, weight, floor)
    f2 = _cycle_combined(x2, d, f, k_e, k_g, ke, kg, n_g, n_z, tau, bg_g, bg_z, bg_s, weight, floor)
    while b - a > 1e-6 * hi:
        if f1 >= f2:
            b, x2, f2 = x2, x1, f1
            x1 = a + ratio * (b - a)
            f1 = _cycle_combined(x1, d, f, k_e, k_g, ke, kg, n_g, n_z, tau, bg_g, bg_z, bg_s, weight, floor)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = b - ratio * (b - a)
            f2 = _cycle_combined(x2, d, f, k_e, k_g, ke, kg, n_g, n_z, tau, bg_g, bg_z, bg_s, weight, floor)
    return max(best, f1, f2)


@numba.njit(cache=True)
def _cycle_combined(lam, d, f, k_e, k_g, ke, kg, n_g, n_z, tau, bg_g, bg_z, bg_s, weight, floor):  # pragma: no cover
    """:func:`_cycle_hold_peak`'s residence at ``lam``: ``0`` where it is not finite."""
    r = _residence_pool(lam, d, f, k_e, k_g, n_g, n_z, True, tau, True, bg_g, bg_z, bg_s, floor)[0]
    e, g, _, _ = _cycle_waits(lam, f * d / ke, ke, kg, n_z * (1.0 - bg_z), n_g, (1.0 - f) * d, bg_g * n_g, bg_s, tau)
    c = d + e + g
    if c < r:
        r = c if r == np.inf else r - weight * (r - c)
    return r if r < np.inf else 0.0


@numba.njit(cache=True)
def _ziip_queue(lam, a_e, s_e, ke, n_z, a_bz, bg_s):  # pragma: no cover - compiled
    """(burst rate /ms, mean burst ms) of the zIIP pool's M/M/c (+D) queue at ``lam`` tran/ms.

    The class's ``k_E`` eligible bursts of ``s_e`` per transaction (``a_e = lam k_E s_e`` busy
    engines, as the caller computes it) and other classes' zIIP work (``a_bz`` busy engines of
    ``bg_s`` bursts): one exponential burst whose M/M/c wait is the class's
    (:func:`_beside_background`), at the pool's load, so the class's small bursts beside larger
    background ones do not lower the wait. Without background, the class's own bursts.
    """
    a_z = a_e + a_bz
    rate = lam * ke + a_bz / bg_s
    s = a_z / rate
    if a_bz > 0.0 and ke > 0:
        s *= _beside_background(n_z, a_z, _erlang_c(n_z, a_z), lam * ke, s_e, ke, a_bz / bg_s, bg_s)
        rate = a_z / s
    return rate, s


@numba.njit(cache=True)
def _residence(lam, d, f, k_e, k_g, n_g, n_z, honor, tau, pool, bg_g, bg_z, bg_s, floor):  # pragma: no cover
    """Residence, spill, busy per engine and waits at ``lam`` tran/ms.

    ``floor`` (:data:`_FLOOR` floats) keeps :func:`_cycle_floor`'s answer for the LPAR and class in
    ``floor[:3]``, :func:`_pool_wait_peaks`' in ``floor[3:_PEAK]`` and :func:`_cycle_hold_peak`'s in
    ``floor[_PEAK]``: ``floor[0] < 0`` (``floor[3] < 0``) asks for it to be found and stored, so a
    caller solving many loads of one LPAR finds it once.

    Returns (residence ms, spill, zIIP busy per engine, GCP busy per engine, eligible wait ms,
    GCP-only wait ms). The waits are per transaction: eligible bursts queued for a zIIP (until a
    zIIP or a helping GCP takes them) and GCP-only bursts queued for a GCP (with no zIIP online all
    of it, eligible work included, is GCP wait).
    """
    resid, spill, ziip_busy, gcp_busy, wait_e, wait_g = _residence_pool(lam, d, f, k_e, k_g, n_g, n_z, honor, tau,
                                                                         pool, bg_g, bg_z, bg_s, floor)
    ke = k_e if f > 0.0 else 0
    if not (honor and pool and ke > 0 and n_z > 0 and d > 0.0 and resid < np.inf):
        return resid, spill, ziip_busy, gcp_busy, wait_e, wait_g
    a_g = gcp_busy * n_g
    # where the zIIPs cannot keep up, help comes in cycles (see _help_cycle): the smaller
    # response of the two, in proportion to the cycle's weight
    kg = k_g if f < 1.0 else 0
    a_bg_g = bg_g * n_g
    a_z = lam * f * d + bg_z * n_z
    s_e = f * d / ke
    c_z = n_z * (1.0 - bg_z)
    weight = _cycle_weight(c_z, tau, s_e)
    if weight > 0.0:
        d_n = (1.0 - f) * d
        if floor[0] < 0.0:  # the same for every load of one LPAR and class: found once (callers keep it)
            floor[0], floor[1], floor[2] = _cycle_floor(s_e, ke, kg, c_z, n_g, d_n, a_bg_g, bg_s, tau,
                                                        floor[_TABLE:])
            floor[_PEAK] = -1.0  # found when first needed (_hold_cycle)
        e_c, g_c, spill_c = _help_cycle_env(lam, floor, s_e, ke, kg, c_z, n_g, d_n, a_bg_g, bg_s, tau)
        e_c, g_c = _hold_cycle(e_c, g_c, d, resid, floor, f, ke, kg, n_g, n_z, tau, bg_g, bg_z, bg_s, weight)
        if d + e_c + g_c < resid:
            resid -= weight * (resid - d - e_c - g_c)
            wait_e += weight * (e_c - wait_e)
            wait_g += weight * (g_c - wait_g)
        if spill_c > spill:
            moved = weight * (spill_c - spill)
            spill += moved
            a_g += moved * a_z
            ziip_busy -= moved * a_z / n_z
    if a_g >= n_g:
        return np.inf, spill, ziip_busy, a_g / n_g, np.inf, np.inf
    return resid, spill, ziip_busy, a_g / n_g, wait_e, wait_g


@numba.njit(cache=True)
def _residence_pool(lam, d, f, k_e, k_g, n_g, n_z, honor, tau, pool, bg_g, bg_z, bg_s, floor):  # pragma: no cover
    """:func:`_residence` before the help cycle: the M/M/c+D or pool rule's queues alone.

    Returns what :func:`_residence` does; ``floor[3:_PEAK]`` as there.
    """
    inf = np.inf
    ke = k_e if f > 0.0 else 0
    kg = k_g if f < 1.0 else 0
    a_bg_g = bg_g * n_g
    if d <= 0.0:
        return 0.0, 0.0, bg_z, bg_g, 0.0, 0.0
    if n_z == 0:
        a = lam * d + a_bg_g
        rate = lam * (ke + kg) + a_bg_g / bg_s
        if a >= n_g:
            return inf, 1.0 if f > 0.0 else 0.0, np.nan, a / n_g, inf, inf
        wait = 0.0
        if rate > 0.0:
            # every burst on one FCFS pool: GCP-only and eligible bursts of different sizes mix
            mix = _residual_ratio(lam * kg, (1.0 - f) * d / kg if kg > 0 else 0.0, lam * ke,
                                  f * d / ke if ke > 0 else 0.0, a_bg_g / bg_s, bg_s,
                                  lam * _rejoins(kg, ke, 1.0))
            wait = _erlang_c(n_g, a) * (a / rate) / (n_g - a) * mix
        return d + (ke + kg) * wait, 1.0 if f > 0.0 else 0.0, np.nan, a / n_g, 0.0, (ke + kg) * wait
    # zIIP pool
    a_e = lam * f * d
    a_bz = bg_z * n_z
    rate_z = lam * ke + a_bz / bg_s
    a_z = a_e + a_bz
    spill = 0.0
    wait_z = 0.0
    if rate_z > 0.0 and a_z > 1e-12:  # a vanishing eligible share has no zIIP queue to speak of
        # beside other classes' bursts of another size, one exponential burst whose M/M/c wait is
        # the class's (the load kept); the helped work's own rate stays rate_z (the GCP pool's)
        rate_q, s_z = _ziip_queue(lam, a_e, f * d / ke if ke > 0 else 0.0, ke, n_z, a_bz, bg_s)
        if honor:
            # the share of the pool's bursts a transaction offers as its previous one there ends
            # (other classes' work offers none): of the bursts offered, rate_z, not the queue's rate_q
            chain = lam * (ke - 1.0) / rate_z if ke > 0 else 0.0
            spill, wait_z, _ = _mmc_help(rate_q, s_z, n_z, tau, pool, 1.0, n_g - lam * (1.0 - f) * d - a_bg_g, chain)
            if ke > 0:
                # past the zIIPs' capacity the wait may fall as the load rises: held at its first
                # peak beyond it (found once per LPAR and class, callers keep it)
                wait_z = _held_past_peak(wait_z, lam, f * d / ke, ke, n_z, tau, pool, n_g, a_bg_g, (1.0 - f) * d,
                                         a_bz / bg_s, a_bz, floor)
        else:
            if a_z >= n_z:
                return inf, 0.0, 1.0, (lam * (1.0 - f) * d + a_bg_g) / n_g, inf, inf
            wait_z = _erlang_c(n_z, a_z) * s_z / (n_z - a_z)
    ziip_busy = a_z * (1.0 - spill) / n_z
    w_hi, w_lo, a_g = _gcp_waits(lam, d, f, kg, n_g, a_bg_g, bg_s, spill * a_z, spill * rate_z, spill * a_bz)
    if a_g >= n_g:
        return inf, spill, ziip_busy, a_g / n_g, inf, inf
    return (d + kg * w_hi + ke * (wait_z + spill * w_lo), spill, ziip_busy, a_g / n_g, ke * (wait_z + spill * w_lo),
            kg * w_hi)


@numba.njit(cache=True)
def _gcp_waits(lam, d, f, kg, n_g, a_bg_g, bg_s, a_lo, rate_lo, a_lo_bg):  # pragma: no cover - compiled
    """(wait of a GCP-native burst, wait of a helped burst, GCP load) on the GCP pool.

    M/M/c with two non-preemptive priorities (Cobham): GCP-native work and background first,
    helped eligible work (load ``a_lo`` at ``rate_lo`` bursts/ms, ``a_lo_bg`` of it other
    classes') after. Infinite waits when the pool is full. Beside other classes' bursts (their GCP
    work and their helped zIIP work, both of ``bg_s``) the mean burst is scaled by
    :func:`_beside_background` over the class's GCP-native bursts and those, so the class's small
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
        c_wait = _erlang_c(n_g, a_g)
        a_other = a_bg_g + a_lo_bg
        if a_other > 0.0 and kg > 0:
            s_g *= _beside_background(n_g, a_g, c_wait, lam * kg, (1.0 - f) * d / kg, kg, a_other / bg_s, bg_s)
        base = c_wait * s_g / n_g
        s_hi = 1.0 - a_hi / n_g
        w_hi = base / s_hi
        w_lo = base / (s_hi * (1.0 - a_g / n_g))
    return w_hi, w_lo, a_g


@numba.njit(cache=True)
def _open_kernel(lams, ds, r0s, f, k_e, k_g, n_g, n_z, honor, tau, pool, bg_g, bg_z, bg_s):  # pragma: no cover
    b = ds.shape[0]
    m = lams.shape[0]
    x = np.empty((b, m))
    resp = np.empty((b, m))
    spill = np.empty((b, m))
    zb = np.empty((b, m))
    gb = np.empty((b, m))
    sat = np.zeros((b, m), dtype=np.bool_)
    floor = np.empty(_FLOOR)
    for i in range(b):
        floor[0] = -1.0  # each parameter set's own (its demand sets the burst size)
        floor[3] = -1.0
        for j in range(m):
            r, s, z, g, _, _ = _residence(lams[j], ds[i], f, k_e, k_g, n_g, n_z, honor, tau, pool, bg_g, bg_z, bg_s,
                                          floor)
            x[i, j] = lams[j]
            resp[i, j] = r0s[i] + r
            spill[i, j] = s
            zb[i, j] = z
            gb[i, j] = g
            sat[i, j] = not np.isfinite(r)
    return x, resp, spill, zb, gb, sat


@numba.njit(cache=True)
def _rows_kernel(lams, d, f, k_e, k_g, n_gs, n_zs, honor, tau, pool, bg_gs, bg_zs, bg_s):  # pragma: no cover
    m = lams.shape[0]
    resp = np.empty(m)
    spill = np.empty(m)
    zb = np.empty(m)
    gb = np.empty(m)
    wz = np.empty(m)
    wg = np.empty(m)
    floor = np.empty(_FLOOR)
    for j in range(m):
        if j == 0 or n_gs[j] != n_gs[j - 1] or n_zs[j] != n_zs[j - 1] or bg_gs[j] != bg_gs[j - 1] \
                or bg_zs[j] != bg_zs[j - 1]:
            floor[0] = -1.0  # another LPAR state: its own least-wait rate (a curve's rows share one)
            floor[3] = -1.0
        resp[j], spill[j], zb[j], gb[j], wz[j], wg[j] = _residence(lams[j], d, f, k_e, k_g, n_gs[j], n_zs[j], honor,
                                                                   tau, pool, bg_gs[j], bg_zs[j], bg_s, floor)
    return resp, spill, zb, gb, wz, wg


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

    ``P(all m busy | n-1) (r - s) / m`` with ``r / s = ratio`` (:func:`_residual_ratio`). The
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
def _open_gcp_residence(x, d, f, kg, ke, n_g, a_bg_g, bg_s, spill):  # pragma: no cover - compiled
    """A transaction's time on and queued for the GCP pool at ``x`` tran/ms, helped share ``spill``."""
    w_hi, w_lo, a_g = _gcp_waits(x, d, f, kg, n_g, a_bg_g, bg_s, spill * x * f * d, spill * x * ke, 0.0)
    if a_g >= n_g:
        return np.inf
    return (1.0 - f) * d + spill * f * d + kg * w_hi + ke * spill * w_lo


@numba.njit(cache=True)
def _ziip_wait_beside(x, f, d, ke, m, a_bz, bg_s, honor, tau, pool, q0, n_g, a_bg_g, floor):  # pragma: no cover
    """The class's zIIP wait per burst beside other classes' zIIP work at ``x`` tran/ms: (s_e, spill, wait, q).

    The open model's queue (:func:`_ziip_queue`) with the class's own burst ``s_e = f D / k_E`` as its
    service. With honor YES the help rule's spill and wait (:func:`_mmc_help`: the GCPs left by
    GCP-native and other classes' work, the class's follow-on bursts among all those offered the
    pool), held past the zIIPs' capacity (:func:`_held_past_peak`); with NO Erlang C, and an
    infinite wait where the pool is full. ``q`` is :func:`_mmc_help`'s, else ``q0``. Used alike by
    the help path, the closed recursion and the closed solve beside background.
    """
    s_e = f * d / ke
    rate_q, s_q = _ziip_queue(x, x * f * d, s_e, ke, m, a_bz, bg_s)
    if rate_q * s_q <= 1e-12:  # no zIIP queue to speak of (as in _residence)
        return s_e, 0.0, 0.0, q0
    if honor:
        spill, wait, q = _mmc_help(rate_q, s_q, m, tau, pool, q0, n_g - x * (1.0 - f) * d - a_bg_g,
                                   x * (ke - 1.0) / (x * ke + a_bz / bg_s))
        wait = _held_past_peak(wait, x, s_e, ke, m, tau, pool, n_g, a_bg_g, (1.0 - f) * d, a_bz / bg_s, a_bz, floor)
        return s_e, spill, wait, q
    if rate_q * s_q < m:
        return s_e, 0.0, _erlang_c(m, rate_q * s_q) * s_q / (m - rate_q * s_q), q0
    return s_e, 0.0, np.inf, q0


@numba.njit(cache=True)
def _help_cpu(x, gcp_mva, s, m, tau, pool, q0, d, f, kg, ke, n_g, a_bg_g, bg_s, a_bz, floor,
              weight):  # pragma: no cover - compiled
    """(zIIP time, GCP time, spill, q) of a transaction at ``x`` tran/ms while GCPs help.

    The zIIP pool is the open M/M/c+D queue at the burst rate ``k_E x`` (beside other classes'
    zIIP work, ``a_bz`` busy zIIPs, the open model's queue of :func:`_ziip_queue` and the class's
    own burst ``f D / k_E`` as its service, not ``s``, the burst MVA stretches by that work's
    share of the zIIPs); the GCP time is the open
    pool's (:func:`_open_gcp_residence`) or the closed network's MVA time (``gcp_mva`` per ms of
    GCP demand) where that is smaller, as an open queue overstates a finite one below saturation
    (and so the GCP time is continuous where help starts). The closed zIIP wait is not used here:
    it rises when a GCP is added (clients move from the GCP queue to the zIIP queue), which only
    the exact network offsets, and with the open GCP time it let a GCP added predict worse.
    """
    if a_bz > 0.0:
        s_e, spill, wait_open, q = _ziip_wait_beside(x, f, d, ke, m, a_bz, bg_s, True, tau, pool, q0, n_g, a_bg_g,
                                                     floor)
        t_z = ke * ((1.0 - spill) * s_e + wait_open)
    else:
        spill, wait_open, q = _mmc_help(x * ke, s, m, tau, pool, q0, n_g - x * (1.0 - f) * d - a_bg_g, (ke - 1.0) / ke)
        wait_open = _held_past_peak(wait_open, x, s, ke, m, tau, pool, n_g, a_bg_g, (1.0 - f) * d, 0.0, 0.0, floor)
        t_z = ke * ((1.0 - spill) * s + wait_open)
    r_g = _open_gcp_residence(x, d, f, kg, ke, n_g, a_bg_g, bg_s, spill)
    r_mva = ((1.0 - f) * d + spill * f * d) * gcp_mva
    if r_mva < r_g:
        r_g = r_mva
    if pool and weight > 0.0:
        # where the zIIPs cannot keep up, help comes in cycles (see _help_cycle); as in the open
        # model (_residence), the smaller time in proportion to the cycle's weight. Beside other
        # classes' zIIP work, the open model's cycle (the zIIPs they leave, the class's own burst:
        # with MVA's stretched burst as service, work moved to the GCPs lost its stretch and the
        # response fell with load, 4.392 -> 4.383 ms from 1735 to 1780 tps on 8 GCPs + 2 zIIPs)
        s_c, c_c = _cycle_class(s, f, d, ke, m, a_bz)
        e_c, g_c, spill_c = _help_cycle_env(x, floor, s_c, ke, kg, c_c, n_g, (1.0 - f) * d, a_bg_g, bg_s, tau)
        e_c, g_c = _hold_cycle(e_c, g_c, d, t_z + r_g, floor, f, ke, kg, n_g, m, tau, a_bg_g / n_g, a_bz / m, bg_s,
                               weight)
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
def _illinois(x, h, lo, h_lo, hi, h_hi, side):  # pragma: no cover - compiled
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
def _push_root(seen, x, t, q):  # pragma: no cover - compiled
    """Shift ``seen`` (``[X, T]`` of the last three populations, then ``q`` of the last two) and append."""
    # element by element: a slice assignment between overlapping views copies through a
    # temporary array, an allocation per population in the help path
    seen[0], seen[1], seen[2], seen[3] = seen[2], seen[3], seen[4], seen[5]
    seen[4], seen[5] = x, t
    seen[6], seen[7] = seen[7], q


@numba.njit(cache=True)
def _help_throughput(n, z_r0, gcp_mva, s, m, tau, pool, q0, d, f, kg, ke, n_g, a_bg_g, bg_s, a_bz,
                     seen, floor, weight):  # pragma: no cover - compiled
    """The throughput ``X`` (tran/ms) of ``n`` clients while GCPs help: ``X = n / (Z + R0 + T(X))``.

    ``T`` is :func:`_help_cpu`'s zIIP plus GCP time, solved together with the spill it sets (a spill
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
    q = q0
    if q0 < 1.0 and seen[6] > 0.0:
        # q moves smoothly too: from the line through the last two populations' q the pool rule's
        # Newton step is small enough to be taken without evaluating again (see _mmc_help)
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
            t_z, r_g, spill, q = _help_cpu(x, gcp_mva, s, m, tau, pool, q, d, f, kg, ke, n_g, a_bg_g, bg_s, a_bz, floor,
                                           weight)
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
    t_z, r_g, spill, q = _help_cpu(hi, gcp_mva, s, m, tau, pool, q, d, f, kg, ke, n_g, a_bg_g, bg_s, a_bz, floor,
                                   weight)
    h_hi = hi - n / (z_r0 + t_z + r_g)
    side = 0
    x = hi
    for _ in range(200):
        x = (lo * h_hi - hi * h_lo) / (h_hi - h_lo) if h_hi > h_lo else 0.5 * (lo + hi)
        t_z, r_g, spill, q = _help_cpu(x, gcp_mva, s, m, tau, pool, q, d, f, kg, ke, n_g, a_bg_g, bg_s, a_bz, floor,
                                       weight)
        h = x - n / (z_r0 + t_z + r_g)
        if abs(h) <= 1e-12 * x or hi - lo <= 1e-14 * hi:
            break
        lo, h_lo, hi, h_hi, side = _illinois(x, h, lo, h_lo, hi, h_hi, side)
    _push_root(seen, x, t_z + r_g, q)
    return x, t_z, r_g, spill, q


@numba.njit(cache=True)
def _times_beside_background(x, ziip_open, t_z_mva, r_g_mva, d, f, k_e, k_g, ke, kg, n_g, n_z, honor, tau, pool,
                             bg_g, a_bg_g, a_bz, bg_s, q0, floor):  # pragma: no cover - compiled
    """(zIIP time, GCP time, q) of a transaction at ``x`` tran/ms beside other classes' work, GCPs not helping.

    A pool with other classes' work is timed by the open model's queue at ``x`` (the zIIPs by
    :func:`_ziip_queue` where ``ziip_open``, the GCPs by the open pool where that is below their
    MVA time ``r_g_mva``); the other pool keeps its MVA time. ``inf`` beyond a full zIIP pool.
    """
    t_z = t_z_mva
    q = q0
    if ziip_open:
        s_e, spill, wait, q = _ziip_wait_beside(x, f, d, ke, n_z, a_bz, bg_s, honor, tau, pool, q0, n_g, a_bg_g, floor)
        if not honor and wait == np.inf:
            return np.inf, np.inf, q
        t_z = ke * ((1.0 - spill) * s_e + wait)
    r_g = r_g_mva
    if a_bg_g > 0.0:
        if n_z > 0:
            r_open = _open_gcp_residence(x, d, f, kg, ke, n_g, a_bg_g, bg_s, 0.0)
        else:
            r_open = _residence(x, d, f, k_e, k_g, n_g, 0, honor, tau, pool, bg_g, 0.0, bg_s, floor)[0]
        if r_open < r_g:
            r_g = r_open
    return t_z, r_g, q


@numba.njit(cache=True)
def _throughput_beside_background(n, z_r0, x_prev, ziip_open, t_z_mva, r_g_mva, d, f, k_e, k_g, ke, kg, n_g, n_z,
                                  honor, tau, pool, bg_g, a_bg_g, a_bz, bg_s, q0, floor):  # pragma: no cover
    """``X = n / (Z + R0 + T(X))`` with :func:`_times_beside_background`'s times: (X, zIIP time, GCP time, q).

    Solved with the throughput it carries, as the help path is (:func:`_help_throughput`): the open
    times at the population before's throughput lag one population behind, and near a full GCP
    pool, where they are steep, the throughput swung from one population to the next and the
    response with it (11 GCPs at 32 % + 4 zIIPs: 5.24, 5.34, 5.29, 5.40 ms at 591-594 clients).
    ``T`` rises with ``X``, so ``h(X) = X - n / (Z + R0 + T(X))`` rises and has one root; response
    never falls with load, so it lies in ``[X(n-1), X(n-1) n / (n - 1)]``. Illinois regula falsi.
    """
    lo = x_prev
    hi = x_prev * n / (n - 1.0) if n > 1 and x_prev > 0.0 else n / (z_r0 + d)
    t_z, r_g, q = _times_beside_background(lo, ziip_open, t_z_mva, r_g_mva, d, f, k_e, k_g, ke, kg, n_g, n_z, honor,
                                           tau, pool, bg_g, a_bg_g, a_bz, bg_s, q0, floor)
    h_lo = lo - n / (z_r0 + t_z + r_g)
    if h_lo >= 0.0:  # the MVA time fell below the population before's (its bookkeeping): from zero
        lo = 0.0
        t_z, r_g, q = _times_beside_background(lo, ziip_open, t_z_mva, r_g_mva, d, f, k_e, k_g, ke, kg, n_g, n_z,
                                               honor, tau, pool, bg_g, a_bg_g, a_bz, bg_s, q0, floor)
        h_lo = lo - n / (z_r0 + t_z + r_g)
    t_hi, r_hi, q = _times_beside_background(hi, ziip_open, t_z_mva, r_g_mva, d, f, k_e, k_g, ke, kg, n_g, n_z,
                                             honor, tau, pool, bg_g, a_bg_g, a_bz, bg_s, q, floor)
    h_hi = hi - n / (z_r0 + t_hi + r_hi)
    top = n / (z_r0 + d)
    if h_hi <= 0.0 and hi < top:  # the MVA time fell (its bookkeeping): up to the bound of no queue
        hi = top
        t_hi, r_hi, q = _times_beside_background(hi, ziip_open, t_z_mva, r_g_mva, d, f, k_e, k_g, ke, kg, n_g, n_z,
                                                 honor, tau, pool, bg_g, a_bg_g, a_bz, bg_s, q, floor)
        h_hi = hi - n / (z_r0 + t_hi + r_hi)
    if h_hi <= 0.0:
        return hi, t_hi, r_hi, q
    x = lo
    side = 0
    for _ in range(200):
        x = (lo * h_hi - hi * h_lo) / (h_hi - h_lo) if np.isfinite(h_hi) else 0.5 * (lo + hi)
        t_z, r_g, q = _times_beside_background(x, ziip_open, t_z_mva, r_g_mva, d, f, k_e, k_g, ke, kg, n_g, n_z,
                                               honor, tau, pool, bg_g, a_bg_g, a_bz, bg_s, q, floor)
        h = x - n / (z_r0 + t_z + r_g)
        if abs(h) <= 1e-12 * x or hi - lo <= 1e-14 * hi:
            break
        lo, h_lo, hi, h_hi, side = _illinois(x, h, lo, h_lo, hi, h_hi, side)
    return x, t_z, r_g, q


@numba.njit(cache=True)
def _cycle_class(s, f, d, ke, m, a_bz):  # pragma: no cover - compiled
    """The help cycle's (burst, zIIPs) in a closed solve: beside other classes' zIIP work the open model's.

    That is the class's own burst ``f D / k_E`` on the zIIPs the other classes leave (see
    :func:`_help_cpu`); without them the recursion's burst ``s`` on all ``m``.
    """
    return (f * d / ke, m - a_bz) if a_bz > 0.0 else (s, float(m))


@numba.njit(cache=True)
def _closed_cycle_floor(floor, s, f, d, ke, kg, n_z, n_g, a_bz, a_bg_g, bg_s, tau, pool):  # pragma: no cover
    """The closed solve's help cycle table (:func:`_cycle_floor`) into ``floor``; returns the cycle's weight.

    The cycle's burst and zIIPs are :func:`_cycle_class`'s.
    """
    s_c, c_c = _cycle_class(s, f, d, ke, n_z, a_bz)
    weight = _cycle_weight(c_c, tau, s_c) if pool else 0.0
    floor[0], floor[1], floor[2] = (_cycle_floor(s_c, ke, kg, c_c, n_g, (1.0 - f) * d, a_bg_g, bg_s, tau,
                                                 floor[_TABLE:])
                                    if weight > 0.0 else (0.0, np.inf, np.inf))
    floor[_PEAK] = -1.0  # the open model's highest residence below that rate, when needed
    return weight


@numba.njit(cache=True)
def _blank_past(out, solved, width):  # pragma: no cover - compiled
    """NaN in row ``i`` of ``out`` from column ``solved[i]`` (the populations past its crossing) to ``width``."""
    for i in range(out.shape[0]):
        for j in range(solved[i], width):
            out[i, j] = np.nan


# parallel over parameter sets (bootstrap draws): each solve is independent, and the desk's
# band and knee solve two hundred of them per slider step
@numba.njit(cache=True, parallel=True)
def _closed_kernel(ds, r0s, z, n_max, stop_ratio, n_min, f, k_e, k_g, n_g, n_z, honor, tau, pool, bg_g, bg_z,
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
        # _help_cycle's least-wait rate and its waits (_cycle_floor) and the cycle's weight, found
        # the first time GCPs help
        floor = np.empty(_FLOOR)
        floor[0] = -1.0
        floor[3] = -1.0
        weight = 0.0
        # without zIIPs every burst queues FCFS for the GCPs, GCP-only and eligible ones of
        # different sizes with other classes' bursts beside them (see solve_closed); beside zIIPs
        # the GCP pool is left exponential, as in the open model (cpu_residence)
        visits_g = kg_on + ke
        s_gn = (1.0 - f) * d / kg_on if kg_on > 0 else 0.0
        s_ge = f * d / ke if ke > 0 else 0.0
        rejoin_g = _rejoins(kg_on, ke, 1.0)
        # the class's bursts alone set the same mixture at every throughput
        ratio_class = _residual_ratio(kg_on, s_gn, ke, s_ge, 0.0, bg_s, rejoin_g) if n_z == 0 else 1.0
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
                    # the issue's reproducer), and the help path, the open queue beside the
                    # background, took over from it where help began, so response fell there. The
                    # open model's queue (_ziip_queue) at the throughput the population before
                    # carried, its service the class's own burst, as the help path has it
                    s_e, spill_open, wait_open, q_help = _ziip_wait_beside(x_prev, f, d, ke, m, a_bz, bg_s, honor,
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
                    spill_open, wait_open, q_help = _mmc_help(x_prev * ke, s, m, tau, pool, q_help,
                                                              n_g - x_prev * (1.0 - f) * d - a_bg_g, (ke - 1.0) / ke)
                    wait_open = _held_past_peak(wait_open, x_prev, s, ke, m, tau, pool, n_g, a_bg_g, (1.0 - f) * d,
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
                    weight = _closed_cycle_floor(floor, s, f, d, ke, kg_on, n_z, n_g, a_bz, a_bg_g, bg_s, tau, pool)
                x, t_z, r_g, spill, q_help = _help_throughput(n, z + r0s[i], gcp_mva, s, n_z, tau, pool,
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
                    ratio_g = _residual_ratio(x_prev * kg_on, s_gn, x_prev * ke, s_ge, a_bg_g / bg_s, bg_s,
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
                    x, t_z, r_g, q_help = _throughput_beside_background(
                        n, z + r0s[i], x_prev, ziip_open, t_z, r_g_mva, d, f, k_e, k_g, ke, kg_on, n_g, n_z, honor,
                        tau, pool, bg_g, a_bg_g, a_bz, bg_s, q_help, floor)
                    # to the other pool's idle probability, below, a delay of the open time it takes
                    gcp_open = a_bg_g > 0.0 and r_g < r_g_mva
                    total = r0s[i] + t_z + r_g
                else:
                    total = r0s[i] + t_z + r_g
                    x = n / (z + total) if z + total > 0.0 else np.inf
                if help_near and floor[0] < 0.0:
                    weight = _closed_cycle_floor(floor, s, f, d, ke, kg_on, n_z, n_g, a_bz, a_bg_g, bg_s, tau, pool)
                # the help cycle's waits are at least its least ones (floor[1:3]): only above them can
                # the help path be the smaller, and most populations need no help solve to know it
                if help_near and weight > 0.0 and total > r0s[i] + d + floor[1] + floor[2]:
                    # the help path takes the help cycle's waits where they are the smaller (as the
                    # open model does, _residence), which the exact network's zIIP wait above does
                    # not see: where the zIIP waits alone rose past them before the open queue's
                    # wait fell below the exact one, switching to help then made response fall
                    # (1 GCP 10 % busy with other work + 5 zIIPs, one 1.7 ms burst, Z 1 s: 9.33 ->
                    # 6.98 ms at 2,804 clients; 14 GCPs + 1 zIIP, ZIIPAWMT 10 ms, no think time:
                    # 13.56 -> 13.31 ms at 10 clients). Taken from the population where the help
                    # path is the smaller, the response is the smaller of two that each rise with
                    # the population, so it rises too
                    gcp_mva = _mva_bracket(p[1], q[1], n_g) / (n_g * (1.0 - bg_g))
                    seen_try = seen.copy()  # the help solve's warm start, kept only if it is taken
                    x_h, t_z_h, r_g_h, spill_h, q_h = _help_throughput(n, z + r0s[i], gcp_mva, s, n_z, tau, pool,
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
