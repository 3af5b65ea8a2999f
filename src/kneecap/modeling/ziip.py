"""The zIIP planner: the smallest zIIP count that keeps response time within the SLO."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kneecap.modeling.base import to_jsonable
from kneecap.modeling.closed import ClosedMVAResults


@dataclass(frozen=True)
class ZiipPlan:
    """Answer of :func:`plan_ziip`.

    ``table`` has one row per candidate ``n_ziip`` with the predicted response (and bounds), TPS,
    zIIP busy per engine (the load offered to the zIIPs), GCP busy, the share of eligible work
    spilling to GCPs (``spill_pct``) and its APPL% IIPCP, and which tests it passes.
    ``n_ziip`` is the recommendation (``None`` if no candidate up to the limit passes);
    ``margin_ms`` is SLO minus predicted response at that count.
    """

    n_ziip: int | None
    margin_ms: float | None
    slo_resp_ms: float
    clients: float
    think_time_ms: float
    n_gcp: int
    policy: dict[str, Any]
    table: pd.DataFrame
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable({
            "n_ziip": self.n_ziip, "margin_ms": self.margin_ms, "slo_resp_ms": self.slo_resp_ms,
            "clients": self.clients, "think_time_ms": self.think_time_ms, "n_gcp": self.n_gcp,
            "policy": self.policy, "reason": self.reason,
            "table": self.table.to_dict(orient="records"),
        })


def plan_ziip(
    results: ClosedMVAResults,
    *,
    clients: float,
    think_time_ms: float,
    n_gcp: int,
    slo_resp_ms: float,
    max_ziip_busy_pct: float | None = None,
    max_spill_pct: float | None = None,
    max_n_ziip: int = 16,
    min_n_ziip: int = 0,
    conservative: bool = False,
) -> ZiipPlan:
    """Smallest ``n_ziip`` in ``min_n_ziip..max_n_ziip`` meeting the SLO and the policy.

    Parameters
    ----------
    results : a fitted closed-workload model.
    clients, think_time_ms, n_gcp : the load and configuration to plan for.
    slo_resp_ms : response-time objective; met when the prediction (or, with ``conservative``,
        the upper prediction bound) is at or below it.
    max_ziip_busy_pct : policy cap on zIIP busy per engine. IBM publishes no numeric maximum;
        zIIPs "couldn't be run as busy as general purpose processors" (M. Packer, IBM, "zIIP
        Capacity Planning"), so the cap is the planner's choice (params.yaml ``planner``).
    max_spill_pct : policy cap on eligible work running on GCPs (% of eligible work, IIPCP).
    """
    if slo_resp_ms <= 0:
        raise ValueError(f"slo_resp_ms must be > 0, got {slo_resp_ms}")
    if clients < 1:
        raise ValueError(f"clients must be >= 1, got {clients}")
    counts = np.arange(int(min_n_ziip), int(max_n_ziip) + 1)
    frame = pd.DataFrame({"clients": float(clients), "think_time_ms": float(think_time_ms),
                          "n_gcp": int(n_gcp), "n_ziip": counts})
    pred = results.predict(frame)
    table = pd.concat([frame[["n_ziip"]], pred[["resp_ms", "resp_ms_lo", "resp_ms_hi", "tps",
                                                   "ziip_busy_pct", "gcp_busy_pct", "spill_pct",
                                                   "ziip_eligible_on_gcp_pct"]]], axis=1)
    judged = table["resp_ms_hi"] if conservative else table["resp_ms"]
    table["meets_slo"] = judged <= slo_resp_ms
    busy_ok = pd.Series(True, index=table.index)
    if max_ziip_busy_pct is not None:
        busy_ok = table["ziip_busy_pct"].fillna(0.0) <= max_ziip_busy_pct
    spill_ok = pd.Series(True, index=table.index)
    if max_spill_pct is not None:
        spill_ok = table["spill_pct"] <= max_spill_pct
    table["meets_policy"] = busy_ok & spill_ok & (table["n_ziip"] > 0)
    ok = table[table["meets_slo"] & table["meets_policy"]]
    policy = {"max_ziip_busy_pct": max_ziip_busy_pct, "max_spill_pct": max_spill_pct,
              "conservative": conservative, "max_n_ziip": max_n_ziip}
    if ok.empty:
        return ZiipPlan(None, None, slo_resp_ms, clients, think_time_ms, n_gcp, policy, table,
                        f"no zIIP count up to {max_n_ziip} meets the SLO and policy at {clients:g} clients "
                        f"with {n_gcp} GCPs: add GCPs or reduce the CPU per transaction")
    best = ok.iloc[0]
    n = int(best["n_ziip"])
    margin = float(slo_resp_ms - (best["resp_ms_hi"] if conservative else best["resp_ms"]))
    reason = (f"{n} zIIP(s): predicted {best['resp_ms']:.3g} ms (band {best['resp_ms_lo']:.3g}-"
              f"{best['resp_ms_hi']:.3g}) vs SLO {slo_resp_ms:g} ms, zIIPs {best['ziip_busy_pct']:.0f}% busy, "
              f"{best['spill_pct']:.1f}% of eligible work on GCPs")
    return ZiipPlan(n, margin, slo_resp_ms, clients, think_time_ms, n_gcp, policy, table, reason)


def years_to_reach(current: float, target: float, growth_pct_per_year: float) -> float:
    """Years until a load growing ``growth_pct_per_year`` (compound) reaches ``target``.

    ``log(target / current) / log(1 + g)``; 0 when already there, ``inf`` without growth.
    """
    if current <= 0:
        raise ValueError(f"current load must be > 0, got {current}")
    if target <= current:
        return 0.0
    g = growth_pct_per_year / 100.0
    if g <= 0:
        return math.inf
    return math.log(target / current) / math.log1p(g)
