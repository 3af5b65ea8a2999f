"""What a closed dispatch solution says: the bottleneck demand and the per-point metrics of the draws."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kneecap.modeling.dispatch import Dispatch, DispatchSolution, solve_closed
from kneecap.modeling.knee import past_knee


def bottleneck_demand_ms(cpu_ms_per_tran: float, f: float, n_gcp: int, n_ziip: int,
                         honor_priority: bool = True, **engines: Any) -> float:
    """``D_max = 1 / X_max``: demand per engine at the bottleneck, ms.

    With help (IIPHONORPRIORITY=YES) or no zIIP, eligible work can use every engine and the pools
    saturate together; without help each kind is limited by its own pool
    (:meth:`kneecap.modeling.dispatch.Dispatch.max_tps`); ``engines``: the engines' speeds and
    SMT mode as :class:`~kneecap.modeling.dispatch.Dispatch` takes them.
    """
    x_max = Dispatch(n_gcp=n_gcp, n_ziip=n_ziip, honor_priority=honor_priority, **engines).max_tps(cpu_ms_per_tran, f)
    return 1000.0 / x_max if x_max > 0 else math.inf


def point_metrics(sol: DispatchSolution, ns: np.ndarray, d: np.ndarray, f: float, n_ziip: int) -> np.ndarray:
    """(B, R, 8): resp, tps, CPU% total / zIIP / GCP / IIPCP, spill%, eligible CPU% at populations ``ns``."""
    cols = np.asarray(ns, dtype=int) - 1
    d = d[:, None]
    x_per_ms = sol.tps[:, cols] / 1000.0
    s = sol.spill_fraction[:, cols]
    eligible_ms = f * d
    on_ziip_ms = eligible_ms * (1.0 - s) if n_ziip > 0 else np.zeros_like(s)
    iipcp_ms = eligible_ms - on_ziip_ms
    gcp_ms = (1.0 - f) * d + iipcp_ms
    to_pct = x_per_ms * 100.0
    return np.stack([sol.resp_ms[:, cols], sol.tps[:, cols], d * to_pct, on_ziip_ms * to_pct,
                     gcp_ms * to_pct, iipcp_ms * to_pct, s * 100.0, eligible_ms * to_pct], axis=2)


def pool_busy_pct(columns: dict[str, np.ndarray], n_gcp: np.ndarray, n_ziip: np.ndarray,
                  engines: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    r"""Busy per zIIP and per GCP, %, from the predicted APPL% of each pool (``cpu_ziip_pct``, ``cpu_gcp_pct``).

    APPL% counts work in the unit of the demand (CP-equivalent ms); an engine's busy is that work
    over its speed, per engine: :math:`U_Z = \text{APPL\%}_Z / (v_Z\, c_Z)` with ``c_Z`` the
    logical zIIPs (two per core in MT-2) and ``v_Z`` a thread's speed, ``U_G = APPL%_G / (v_G c_G)``.
    ``engines`` holds :class:`~kneecap.modeling.dispatch.Dispatch`'s speed and SMT keywords.
    """
    v_g = float(engines.get("gcp_speed", 1.0))
    mt = int(engines.get("ziip_mt", 1))
    v_z = float(engines.get("ziip_speed", 1.0)) * (float(engines["ziip_mt_capacity"]) / 2.0 if mt == 2 else 1.0)
    threads = n_ziip * mt
    ziip = np.where(n_ziip > 0, columns["cpu_ziip_pct"] / v_z / np.maximum(threads, 1), np.nan)
    return ziip, columns["cpu_gcp_pct"] / v_g / n_gcp


def unloaded_cpu_per_ms(f: float, n_ziip: int, engines: dict[str, Any]) -> float:
    r"""A transaction's CPU time alone on the LPAR per ms of demand: 1 on engines all alike.

    With speeds (``engines``, :class:`~kneecap.modeling.dispatch.Dispatch`'s keywords) the
    GCP-only work runs at GCP speed and the eligible work on a zIIP thread, or on a GCP where
    there is no zIIP: :math:`(1 - f)/v_G + f/v_Z`, or :math:`1/v_G`. The unloaded response is
    ``D`` times this plus ``R0`` (the saturation population :math:`N^* = (R(1) + Z) / D_{max}`).
    """
    if not engines:
        return 1.0
    from kneecap.modeling.dispatch import Dispatch

    d = Dispatch(n_gcp=1, n_ziip=max(int(n_ziip), 1), **engines)
    if int(n_ziip) == 0:
        return 1.0 / float(d.gcp_speed)
    return (1.0 - f) / float(d.gcp_speed) + f / d.ziip_thread_speed


def point_knee_clients(cpu_ms_per_tran: float, delay_ms: float, f: float, dispatch: Dispatch, *,
                       think_time_ms: float, k: float, engines: dict[str, Any] | None = None) -> float:
    r"""Clients at which one point fit's response first passes ``k`` x its one-client response.

    Solved up to the population whose response bound reaches the knee,
    :math:`\lceil (k (D u + R_0) + Z) / (D \, D_{max}) \rceil + 1` clients with :math:`D_{max}` per
    ms of demand from :func:`bottleneck_demand_ms` and :math:`u` the CPU time alone per ms of demand
    (:func:`unloaded_cpu_per_ms`; both at the speeds of ``engines``, Dispatch's keywords) (at least
    50, at most 50,000); ``inf`` when the response has not passed it there.
    """
    engines = engines or {}
    per_ms = bottleneck_demand_ms(1.0, f, dispatch.n_gcp, dispatch.n_ziip, dispatch.honor_priority, **engines)
    cpu = unloaded_cpu_per_ms(f, dispatch.n_ziip, engines)  # 1 on engines all alike
    bound = (k * (cpu_ms_per_tran * cpu + delay_ms) + think_time_ms) / (cpu_ms_per_tran * per_ms)
    n_max = int(min(max(math.ceil(bound) + 1, 50), 50_000))
    sol = solve_closed(np.array([cpu_ms_per_tran]), np.array([delay_ms]), f, dispatch, think_time_ms=think_time_ms,
                       n_max=n_max, stop_ratio=k)
    above = past_knee(sol.resp_ms[0], sol.resp_ms[0, 0], k)
    return float(above.argmax() + 1) if above.any() else math.inf
