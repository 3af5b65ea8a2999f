"""The LPAR and dispatching rules a prediction is made for, and the solution arrays."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from kneecap.schema import MAX_ENGINES

#: When GCPs help (see :class:`Dispatch`).
HELP_RULES = ("pool", "burst")


#: z/OS's own dispatcher settings, the default of every model and of ``params.yaml`` ``train``:
#: IEAOPTxx IIPHONORPRIORITY=YES and ZIIPAWMT=3200 microseconds (the default with HiperDispatch),
#: with the zIIP pool asking for help as a whole (``help_rule``, see :class:`Dispatch`).
HONOR_PRIORITY = True


HELP_WAIT_MS = 3.2


HELP_RULE = "pool"


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


def rules_of(dispatch: Dispatch) -> Rules:
    """The kernels' :class:`Rules` for ``dispatch``."""
    return Rules(int(dispatch.eligible_bursts), int(dispatch.gcp_bursts), int(dispatch.n_gcp), int(dispatch.n_ziip),
                 bool(dispatch.honor_priority), float(dispatch.help_wait_ms), dispatch.help_rule == "pool",
                 dispatch.bg_gcp_busy_pct / 100.0, dispatch.bg_ziip_busy_pct / 100.0, float(dispatch.bg_burst_ms))
