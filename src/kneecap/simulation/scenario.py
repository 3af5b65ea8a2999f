"""One simulated LPAR and its load: :class:`SimScenario`, validated at the boundary."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kneecap.limits import short_repr
from kneecap.schema import MAX_ENGINES
from kneecap.schema import MAX_SCENARIO_CLIENTS as MAX_CLIENTS

BURST_DISTRIBUTIONS = ("exponential", "deterministic", "gamma")
HELP_RULES = ("pool", "burst")


@dataclass(frozen=True, kw_only=True)
class SimScenario:
    """One z/OS LPAR with GCPs and zIIPs, one transaction class and its load, and background work.

    Exactly one of ``clients`` (closed load) and ``tps`` (open load) is given. Times are in ms,
    utilisations in % of one engine (0-100).

    Parameters
    ----------
    n_gcp : general purpose processors, ``>= 1`` (z/OS needs one).
    n_ziip : zIIPs, ``>= 0`` (logical zIIPs: in SMT-2 two per core, each at the thread's speed).
    cpu_ms_per_tran : CPU demand ``D`` of one transaction, ms, ``> 0``.
    ziip_eligible_fraction : share ``f`` of ``D`` that is zIIP-eligible, in [0, 1].
    clients : closed load, ``N >= 1`` clients, each submitting its next transaction one think time
        after the previous one completed.
    tps : open load, Poisson arrivals at this many transactions per second.
    think_time_ms : mean ``Z`` of the exponential think time (closed load only; 0 resubmits at
        once).
    delay_ms : fixed non-CPU part ``R0`` of every response (network, I/O, back-end waits), spent
        before the first CPU burst.
    honor_priority : IEAOPTxx IIPHONORPRIORITY=YES: an idle GCP helps zIIP-eligible work that has
        waited ``help_wait_ms``. With NO, eligible work runs only on zIIPs.
    help_wait_ms : IEAOPTxx ZIIPAWMT converted to ms (IEAOPTxx codes it in microseconds); the
        default 3.2 ms (ZIIPAWMT=3200) is the z/OS default with HiperDispatch, as in
        :mod:`kneecap.modeling`.
    help_rule : when GCPs help. ``"pool"`` (default): the zIIP pool *needs help* once its oldest
        queued eligible burst has waited ``help_wait_ms``, and keeps needing it until a zIIP finds
        the queue empty; meanwhile GCPs with no GCP-native work take eligible bursts however long
        they have waited. ``"burst"``: a GCP takes only bursts that have themselves waited
        ``help_wait_ms``.
    gcp_bursts, eligible_bursts : how many bursts the GCP-only and the eligible demand are split
        into (``>= 1``; a kind with zero demand has no bursts).
    burst_dist : burst service-time distribution: ``"exponential"``, ``"deterministic"`` or
        ``"gamma"``.
    burst_cv : coefficient of variation of gamma bursts (``> 0``); only for ``burst_dist="gamma"``.
    bg_gcp_busy_pct, bg_ziip_busy_pct : per-engine utilisation of each pool by background work of
        other classes, in [0, 100). Background zIIP work needs ``n_ziip >= 1``.
    bg_burst_ms : mean of the exponential background bursts, ms, on the engines of their pool.
    gcp_speed, ziip_speed : work an engine of each kind does per ms (``> 0``; 1 and 1: all alike).
        ``cpu_ms_per_tran`` is work, ms on an engine of speed 1: a burst of work ``w`` runs
        ``w / gcp_speed`` ms on a GCP (helped eligible bursts too) and ``w / ziip_speed`` on a zIIP.
    """

    n_gcp: int
    n_ziip: int
    cpu_ms_per_tran: float
    ziip_eligible_fraction: float
    clients: int | None = None
    tps: float | None = None
    think_time_ms: float = 0.0
    delay_ms: float = 0.0
    honor_priority: bool = True
    help_wait_ms: float = 3.2
    help_rule: str = "pool"
    gcp_bursts: int = 1
    eligible_bursts: int = 1
    burst_dist: str = "exponential"
    burst_cv: float | None = None
    bg_gcp_busy_pct: float = 0.0
    bg_ziip_busy_pct: float = 0.0
    bg_burst_ms: float = 0.2
    gcp_speed: float = 1.0
    ziip_speed: float = 1.0

    def __post_init__(self) -> None:
        _require_int(self, "n_gcp", minimum=1, maximum=MAX_ENGINES)
        _require_int(self, "n_ziip", minimum=0, maximum=MAX_ENGINES)
        _require_int(self, "gcp_bursts", minimum=1)
        _require_int(self, "eligible_bursts", minimum=1)
        _require_number(self, "cpu_ms_per_tran", positive=True)
        _require_number(self, "ziip_eligible_fraction", upper=1.0, upper_inclusive=True)
        _require_number(self, "think_time_ms")
        _require_number(self, "delay_ms")
        _require_number(self, "help_wait_ms")
        _require_number(self, "bg_burst_ms", positive=True)
        _require_number(self, "bg_gcp_busy_pct", upper=100.0)
        _require_number(self, "bg_ziip_busy_pct", upper=100.0)
        _require_number(self, "gcp_speed", positive=True)
        _require_number(self, "ziip_speed", positive=True)
        if not isinstance(self.honor_priority, bool):
            raise ValueError(f"honor_priority must be true or false, got {short_repr(self.honor_priority)}")
        if (self.clients is None) == (self.tps is None):
            raise ValueError("give exactly one of clients (closed load) and tps (open load), "
                             f"got clients={short_repr(self.clients)}, tps={short_repr(self.tps)}")
        if self.clients is not None:
            # every client is a simulated process: the ceiling bounds memory, as for forecasts
            _require_int(self, "clients", minimum=1, maximum=MAX_CLIENTS)
        else:
            _require_number(self, "tps", positive=True)
            if self.think_time_ms != 0:
                raise ValueError(f"think_time_ms applies only to closed load (clients), "
                                 f"got {self.think_time_ms} with tps")
        if self.help_rule not in HELP_RULES:
            raise ValueError(f"help_rule must be one of {', '.join(HELP_RULES)}, "
                             f"got {short_repr(self.help_rule)}")
        if self.burst_dist not in BURST_DISTRIBUTIONS:
            raise ValueError(f"burst_dist must be one of {', '.join(BURST_DISTRIBUTIONS)}, "
                             f"got {short_repr(self.burst_dist)}")
        if self.burst_dist == "gamma":
            if self.burst_cv is None:
                raise ValueError("burst_cv is required with burst_dist='gamma'")
            _require_number(self, "burst_cv", positive=True)
        elif self.burst_cv is not None:
            raise ValueError(f"burst_cv applies only to burst_dist='gamma', "
                             f"got burst_cv={short_repr(self.burst_cv)} with burst_dist={short_repr(self.burst_dist)}")
        if self.n_ziip == 0 and self.bg_ziip_busy_pct > 0:
            raise ValueError("bg_ziip_busy_pct must be 0 when n_ziip is 0, "
                             f"got {self.bg_ziip_busy_pct}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> SimScenario:
        """Build a scenario from a mapping (a YAML entry), rejecting keys that are not fields.

        Raises
        ------
        ValueError
            Naming the unknown or missing keys, or the first invalid field.
        """
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown scenario field(s) {', '.join(map(short_repr, unknown))}; "
                             f"known fields: {', '.join(known)}")
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.default is dataclasses.MISSING and f.name not in values]
        if missing:
            raise ValueError(f"missing scenario field(s) {', '.join(map(short_repr, missing))}")
        return cls(**values)

    @property
    def is_closed(self) -> bool:
        """True for a closed load (``clients``), False for an open one (``tps``)."""
        return self.clients is not None

    @property
    def eligible_helped(self) -> bool:
        """True when a GCP may run eligible work that is queued for a zIIP (the help rule)."""
        return self.honor_priority and self.n_ziip > 0


def check_open_load_fits(scenario: SimScenario) -> None:
    """Raise ValueError if an open scenario offers more work than the engines it may use can do.

    Each kind of work is checked against the pools it may run on, background included:
    GCP-only work against the GCPs; eligible work against the zIIPs when GCPs may not help
    (``honor_priority`` False), against GCPs + zIIPs when they may, and against the GCPs when there
    are no zIIPs. A closed load cannot overrun: its clients wait for their answers.
    """
    if scenario.is_closed:
        return
    assert scenario.tps is not None
    v_g, v_z = scenario.gcp_speed, scenario.ziip_speed
    class_work = scenario.tps / 1000.0 * scenario.cpu_ms_per_tran  # work per ms: U = X D at speed 1
    eligible = class_work * scenario.ziip_eligible_fraction
    native = class_work - eligible
    bg_gcp = scenario.bg_gcp_busy_pct / 100.0 * scenario.n_gcp * v_g
    bg_ziip = scenario.bg_ziip_busy_pct / 100.0 * scenario.n_ziip * v_z
    # each check in engines of the pool's speed (both pools: in GCPs)
    checks: list[tuple[str, str, float, float]] = [("GCP", "GCP-only", (native + bg_gcp) / v_g, scenario.n_gcp)]
    if scenario.n_ziip == 0:
        checks.append(("GCP", "total", (class_work + bg_gcp) / v_g, scenario.n_gcp))
    elif scenario.honor_priority:
        checks.append(("GCP + zIIP", "total", (class_work + bg_gcp + bg_ziip) / v_g,
                       scenario.n_gcp + scenario.n_ziip * v_z / v_g))
    else:
        checks.append(("zIIP", "zIIP-eligible", (eligible + bg_ziip) / v_z, scenario.n_ziip))
    for pool, kind, offered, engines in checks:
        if offered >= engines:
            raise ValueError(f"open load too high for the {pool} pool: {scenario.tps} tps offer "
                             f"{offered:.3g} engines of {kind} work (background included) to "
                             f"{engines:g} engine(s); the queue would grow without bound")


def _require_int(scenario: SimScenario, name: str, *, minimum: int, maximum: int | None = None) -> None:
    value = getattr(scenario, name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {short_repr(value)}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be between {minimum} and {maximum:,}, got {value}")


def _require_number(scenario: SimScenario, name: str, *, positive: bool = False,
                    upper: float | None = None, upper_inclusive: bool = False) -> None:
    """Check a finite number in [0, upper) (or (0, ...) when positive) and store it as float."""
    value = getattr(scenario, name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {short_repr(value)}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    if upper is not None and (value > upper or (value == upper and not upper_inclusive)):
        bracket = "]" if upper_inclusive else ")"
        raise ValueError(f"{name} must be in [0, {upper:g}{bracket}, got {value}")
    # YAML gives 1 for 1.0; store floats so equal scenarios compare and hash equal
    object.__setattr__(scenario, name, float(value))
