"""What a closed dispatch solution says: the bottleneck demand and the per-point metrics of the draws."""

from __future__ import annotations

import math

import numpy as np

from kneecap.modeling.dispatch import Dispatch, DispatchSolution


def bottleneck_demand_ms(cpu_ms_per_tran: float, f: float, n_gcp: int, n_ziip: int,
                         honor_priority: bool = True) -> float:
    """``D_max = 1 / X_max``: demand per engine at the bottleneck, ms.

    With help (IIPHONORPRIORITY=YES) or no zIIP, eligible work can use every engine and the pools
    saturate together; without help each kind is limited by its own pool
    (:meth:`kneecap.modeling.dispatch.Dispatch.max_tps`).
    """
    x_max = Dispatch(n_gcp=n_gcp, n_ziip=n_ziip, honor_priority=honor_priority).max_tps(cpu_ms_per_tran, f)
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
