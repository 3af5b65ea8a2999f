"""The LPAR and dispatching rules a prediction is made for, and the solution arrays."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np

from kneecap.config import HELP_RULES, TrainConfig
from kneecap.schema import MAX_ENGINES

#: z/OS's own dispatcher settings, the default of every model and of ``params.yaml`` ``train``
#: (written in :class:`kneecap.config.TrainConfig`): IEAOPTxx IIPHONORPRIORITY=YES and
#: ZIIPAWMT=3200 microseconds (the default with HiperDispatch), with the zIIP pool asking for help
#: as a whole (``help_rule``, see :class:`Dispatch`); :data:`HELP_RULES`: when GCPs help.
HONOR_PRIORITY = TrainConfig.honor_priority
HELP_WAIT_MS = TrainConfig.help_wait_ms
HELP_RULE = TrainConfig.help_rule


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
    gcp_speed, ziip_speed : work each engine does per ms, relative to the unit ``cpu_ms_per_tran``
        is in (1 and 1: every engine alike). On a sub-capacity model a GCP runs slower than a
        zIIP: with ``cpu_ms_per_tran`` in CP-equivalent ms (RMF's normalised time) ``gcp_speed``
        is 1 and ``ziip_speed`` R723NFFS / 256 (:func:`kneecap.modeling.engines.speeds_from_smf`).
        A burst helped on a GCP runs at GCP speed.
    ziip_mt : threads per zIIP core, 1 (MT-1) or 2 (SMT-2, IEAOPTxx MT_ZIIP_MODE=2). ``n_ziip``
        counts cores; in MT-2 each core is two logical zIIPs.
    ziip_mt_capacity : a zIIP core's capacity in MT-2 over its capacity in MT-1 (RMF's MT
        capacity factor, R723MCFS / 1024, measured in MT-2); each thread runs at
        ``ziip_speed * ziip_mt_capacity / 2``. Required with ``ziip_mt=2``: kneecap carries no
        published default (:func:`kneecap.modeling.engines.mt_capacity_from_smf`).
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
    gcp_speed: float = 1.0
    ziip_speed: float = 1.0
    ziip_mt: int = 1
    ziip_mt_capacity: float | None = None

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
        for name in ("gcp_speed", "ziip_speed"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be > 0, got {value}")
        if self.ziip_mt not in (1, 2):
            raise ValueError(f"ziip_mt must be 1 or 2, got {self.ziip_mt}")
        if self.ziip_mt == 2:
            cap = self.ziip_mt_capacity
            if cap is None or not (math.isfinite(cap) and 0 < cap <= 2):
                raise ValueError("ziip_mt=2 needs ziip_mt_capacity, the MT-2 core's capacity over MT-1's (RMF's MT "
                                 f"capacity factor R723MCFS / 1024, in (0, 2]), got {cap}")
            if self.n_ziip * 2 > MAX_ENGINES:
                raise ValueError(f"n_ziip cores in MT-2 must be at most {MAX_ENGINES // 2}, got {self.n_ziip}")
        elif self.ziip_mt_capacity is not None:
            raise ValueError("ziip_mt_capacity applies only to ziip_mt=2")

    @property
    def ziip_threads(self) -> int:
        """Logical zIIPs: ``n_ziip`` cores times ``ziip_mt`` threads."""
        return int(self.n_ziip) * int(self.ziip_mt)

    @property
    def ziip_thread_speed(self) -> float:
        r"""Work per ms of one logical zIIP: ``ziip_speed`` in MT-1, ``ziip_speed * CF / 2`` in MT-2.

        Notes
        -----
        In MT-2 the core's two threads share it and together do ``CF`` times the work the core
        does in MT-1 (``CF`` the MT capacity factor RMF reports, R723MCFS / 1024). The model
        takes every thread at ``CF / 2`` of the core's MT-1 speed, as when both are busy: a burst
        alone on its core runs faster, so the waits at low load are on the safe side.

        References
        ----------
        IBM, *z/OS RMF Report Analysis*, CPU Activity report: MT capacity factor and productivity;
        SMF 72.3 R723MCFS, SMF 70.1 SMF70MCFS (MT maximum capacity factor numerators, / 1024).
        """
        if self.ziip_mt == 1:
            return float(self.ziip_speed)
        assert self.ziip_mt_capacity is not None
        return float(self.ziip_speed) * float(self.ziip_mt_capacity) / 2.0

    def max_tps(self, cpu_ms_per_tran: float, ziip_eligible_fraction: float) -> float:
        r"""Throughput at which the pools the class may use are full (asymptotic bound), tps.

        With help (or no zIIP) eligible work may use every engine, GCP-native work only GCPs;
        without help each kind is limited by its own pool:

        .. math::

            X_{max} = \min\Big(\frac{c_G + c_Z}{D}, \frac{c_G}{(1-f)D}\Big) \text{ (help)}, \quad
            \min\Big(\frac{c_Z}{f D}, \frac{c_G}{(1-f)D}\Big) \text{ (no help)}

        with ``c`` the engines each pool has left after background work, each times its speed
        (:attr:`ziip_thread_speed` for a zIIP thread).
        """
        d, f = float(cpu_ms_per_tran), float(ziip_eligible_fraction)
        if d <= 0:
            return math.inf
        c_g = self.n_gcp * (1 - self.bg_gcp_busy_pct / 100.0) * self.gcp_speed
        c_z = self.ziip_threads * (1 - self.bg_ziip_busy_pct / 100.0) * self.ziip_thread_speed
        native = c_g / ((1 - f) * d) if (1 - f) * d > 0 else math.inf
        if self.n_ziip == 0 or self.honor_priority:
            pooled = (c_g + c_z) / d
            return 1000.0 * min(pooled, native)
        eligible = c_z / (f * d) if f * d > 0 else math.inf
        return 1000.0 * min(eligible, native)

    def ziips_fall_behind(self, tps: float, cpu_ms_per_tran: float, ziip_eligible_fraction: float) -> bool:
        r"""True where the zIIPs cannot run the class's eligible load and GCPs help as a matter of course.

        That is ``f D X > c_Z`` at ``X = tps`` with ``c_Z`` the zIIPs left by other classes (times
        their speed), under
        IIPHONORPRIORITY=YES, ``help_rule="pool"`` and ZIIPAWMT > 0.

        There a zIIP added can raise response, in the dispatcher simulation as in the model: the
        pool needs help less often, and more of the eligible bursts wait up to ZIIPAWMT for it
        (docs/models.md). Everywhere else another engine of either kind never predicts worse.
        """
        if self.n_ziip == 0 or not self.honor_priority or self.help_rule != "pool" or self.help_wait_ms <= 0:
            return False
        c_z = self.ziip_threads * (1.0 - self.bg_ziip_busy_pct / 100.0) * self.ziip_thread_speed
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


class Rules(NamedTuple):
    """A :class:`Dispatch` as the compiled kernels take it (:func:`rules_of`); times in ms, busy as shares."""

    #: eligible and GCP-only bursts per transaction
    k_e: int
    k_g: int
    #: GCPs and zIIPs online
    n_g: int
    n_z: int
    #: IIPHONORPRIORITY=YES
    honor: bool
    #: ZIIPAWMT, ms
    tau: float
    #: ``help_rule == "pool"``
    pool: bool
    #: other classes' busy per GCP and per zIIP (shares) and their mean burst, ms
    bg_g: float
    bg_z: float
    bg_s: float
    #: a zIIP thread's speed over a GCP's: an eligible burst helped on a GCP runs ``rho`` times
    #: its time on a zIIP (1: engines alike)
    rho: float


def rules_of(dispatch: Dispatch) -> Rules:
    """The kernels' :class:`Rules` for ``dispatch``: zIIPs counted in threads (:attr:`Dispatch.ziip_threads`)."""
    return Rules(int(dispatch.eligible_bursts), int(dispatch.gcp_bursts), int(dispatch.n_gcp), dispatch.ziip_threads,
                 bool(dispatch.honor_priority), float(dispatch.help_wait_ms), dispatch.help_rule == "pool",
                 dispatch.bg_gcp_busy_pct / 100.0, dispatch.bg_ziip_busy_pct / 100.0, float(dispatch.bg_burst_ms),
                 dispatch.ziip_thread_speed / float(dispatch.gcp_speed))


def engine_demand(cpu_ms_per_tran, ziip_eligible_fraction: float, dispatch: Dispatch):
    r"""The kernels' demand: ``(D', f')`` in engine ms, GCP-only work at GCP speed, eligible at a zIIP thread's.

    .. math::

        D' = D\Big(rac{1 - f}{v_G} + rac{f}{v_Z}\Big), \qquad
        f' = rac{f / v_Z}{(1 - f) / v_G + f / v_Z}

    with ``v_G`` the GCP speed and ``v_Z`` a zIIP thread's (:attr:`Dispatch.ziip_thread_speed`).
    Where GCPs run eligible work (help, or no zIIP online) the kernels stretch it by
    ``rho = v_Z / v_G`` (:class:`Rules`). Engines alike (``v_G = v_Z``): ``D / v_G`` and ``f``.
    """
    v_g, v_z = float(dispatch.gcp_speed), dispatch.ziip_thread_speed
    f = float(ziip_eligible_fraction)
    if v_g == v_z:
        return cpu_ms_per_tran / v_g, f
    per = (1.0 - f) / v_g + f / v_z
    return cpu_ms_per_tran * per, (f / v_z) / per


def cost_per_tran(cpu_ms_per_tran: float, ziip_eligible_fraction: float, spill_fraction: float,
                  dispatch: Dispatch) -> dict[str, float]:
    r"""A transaction's CPU in engine time and in CP-equivalent (normalised) time, ms.

    With a share ``pi`` of the eligible work helped on GCPs (``spill_fraction``):

    .. math::

        t_{GCP} = rac{(1 - f) D + \pi f D}{v_G}, \quad t_{zIIP} = rac{(1 - \pi) f D}{v_Z}, \quad
        t_{CP\,equiv} = t_{GCP} + t_{zIIP}rac{v_Z}{v_G}

    ``t_GCP + t_zIIP`` is engine time (what the engines were busy); the CP-equivalent time is the
    zIIP time normalised to a GCP as RMF does it (R723NFFS / 256 times zIIP time), so it is
    ``D / v_G`` whatever the spill.

    References
    ----------
    IBM, *z/OS RMF Report Analysis*, Workload Activity report (APPL% of CP, IIPCP, IIP); SMF 72.3
    R723CSUP "multiply with R723NFFS and divide by 256 to calculate the CP equivalent value".
    """
    d, f, pi = float(cpu_ms_per_tran), float(ziip_eligible_fraction), float(spill_fraction)
    v_g, v_z = float(dispatch.gcp_speed), dispatch.ziip_thread_speed
    gcp = ((1.0 - f) * d + pi * f * d) / v_g
    ziip = (1.0 - pi) * f * d / v_z
    return {"gcp_ms": gcp, "ziip_ms": ziip, "engine_ms": gcp + ziip, "cp_equiv_ms": gcp + ziip * v_z / v_g}


@numba.njit(cache=True)
def on_gcps(d, f, rho):
    """``(D, f)`` of a class whose eligible work all runs on GCPs (no zIIP online): its time times ``rho``."""
    if rho == 1.0:
        return d, f
    d_e = f * d * rho
    total = (1.0 - f) * d + d_e
    return total, (d_e / total if total > 0.0 else f)
