"""The RMF intervals an open dispatch fit reads: the class's rows, the other classes' load, the LPAR.

Per class (SMF 72.3) the transactions ended, their response and CPU split by engine type; per LPAR
(SMF 70.1) how busy each pool was. Used by :mod:`kneecap.modeling.open_dispatch`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kneecap.modeling.base import column_or
from kneecap.modeling.engines import row_ziip_mt_capacity, row_ziip_speeds

#: Busy per engine above which a background estimate is capped: a pool the other classes fill
#: leaves the class nothing, which no measured interval with ended transactions can show.
MAX_BG_PCT = 99.0
#: Fewest zIIP using samples (eligible work on a zIIP or a CP) an interval needs before its zIIP
#: delay samples count as a second signal: with 250 ms sampling, 100 samples are 25 s of CPU.
MIN_USING_SAMPLES = 100


def class_intervals(table: pd.DataFrame) -> np.ndarray:
    """Rows an open dispatch fit can use: tps and response > 0, GCPs known, APPL% CP measured."""
    tps = column_or(table, "tps", np.nan)
    resp = column_or(table, "resp_ms", np.nan)
    n_gcp = column_or(table, "n_gcp", np.nan)
    cp = column_or(table, "cpu_gcp_pct", np.nan)
    with np.errstate(invalid="ignore"):
        return (np.isfinite(tps) & (tps > 0) & np.isfinite(resp) & (resp > 0) & np.isfinite(n_gcp)
                & (n_gcp >= 1) & np.isfinite(cp) & (cp >= 0))


def has_interval_cpu(table: pd.DataFrame, min_points: int = 3) -> bool:
    """True when at least ``min_points`` rows carry what :class:`OpenDispatchModel` needs."""
    return int(class_intervals(table).sum()) >= min_points


@dataclass(frozen=True)
class Intervals:
    """The measured columns of the rows a fit uses, as arrays (one entry per RMF interval)."""

    tps: np.ndarray
    resp_ms: np.ndarray
    n_gcp: np.ndarray
    n_ziip: np.ndarray
    cp_pct: np.ndarray        # APPL% CP, IIPCP included
    iip_pct: np.ndarray       # APPL% IIP as CP-equivalent MT-1 work (x NFFS / 256, x MCFS / 1024 in SMT-2)
    iipcp_pct: np.ndarray     # APPL% IIPCP
    weight_s: np.ndarray      # interval length: a mean over the history weights by time
    bg_gcp_pct: np.ndarray
    bg_ziip_pct: np.ndarray
    day: np.ndarray           # bootstrap block: intervals of one day share that day's conditions
    ziip_using_samples: np.ndarray   # eligible work using a zIIP or a CP (NaN: no usable samples)
    ziip_delay_samples: np.ndarray
    cpu_using_samples: np.ndarray    # R723CCUS: work on a GCP, IIPCP included (NaN: not usable)
    cpu_delay_samples: np.ndarray    # R723CCDE
    ziip_speed: np.ndarray    # a zIIP thread's speed over a GCP's: NFFS / 256, x CF / 2 in SMT-2

    def take(self, idx: np.ndarray) -> Intervals:
        """The intervals at positions ``idx`` (a resample keeps every column aligned)."""
        return Intervals(**{k: getattr(self, k)[idx] for k in self.__dataclass_fields__})


def other_classes_busy(table: pd.DataFrame) -> pd.DataFrame:
    """Each interval's other classes' busy per engine of each pool, %: what the class competed with.

    ``bg = LPAR busy per engine (70.1) - the class's APPL% / engines`` (APPL% CP includes IIPCP),
    clipped to ``[0, 99]``; 0 where the interval has no 70.1 busy, and for zIIPs where none is
    online. Columns ``bg_gcp_busy_pct``, ``bg_ziip_busy_pct``, on ``table``'s index.
    """
    n_gcp = column_or(table, "n_gcp", np.nan)
    n_ziip = np.nan_to_num(column_or(table, "n_ziip", 0.0), nan=0.0)
    cp = column_or(table, "cpu_gcp_pct", np.nan)
    iip = np.nan_to_num(column_or(table, "cpu_ziip_pct", 0.0), nan=0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        bg_g = np.clip(column_or(table, "lpar_gcp_busy_pct", np.nan) - cp / n_gcp, 0.0, MAX_BG_PCT)
        bg_z = np.where(n_ziip > 0, np.clip(column_or(table, "lpar_ziip_busy_pct", np.nan)
                                            - iip / np.maximum(n_ziip, 1), 0.0, MAX_BG_PCT), 0.0)
    return pd.DataFrame({"bg_gcp_busy_pct": np.nan_to_num(bg_g, nan=0.0),
                         "bg_ziip_busy_pct": np.nan_to_num(bg_z, nan=0.0)}, index=table.index)


def read_intervals(table: pd.DataFrame, rows: np.ndarray) -> tuple[Intervals, list[str]]:
    notes: list[str] = []
    t = table.loc[rows]
    n_gcp = column_or(t, "n_gcp", np.nan)
    n_ziip = np.nan_to_num(column_or(t, "n_ziip", 0.0), nan=0.0)
    cp = column_or(t, "cpu_gcp_pct", np.nan)
    speed, cf = row_ziip_speeds(t), row_ziip_mt_capacity(t)
    # zIIP time in CP-equivalent units, the unit of APPL% CP and of the fitted demand; in SMT-2 RMF
    # divided the MT-1 equivalent time by the capacity factor, which gives the work back
    iip = np.nan_to_num(column_or(t, "cpu_ziip_pct", 0.0), nan=0.0) * speed * cf
    iipcp = np.nan_to_num(column_or(t, "ziip_eligible_on_gcp_pct", 0.0), nan=0.0)
    interval_s = column_or(t, "interval_s", np.nan)
    weight = np.where(np.isfinite(interval_s) & (interval_s > 0), interval_s, 1.0)
    missing = ~np.isfinite(column_or(t, "lpar_gcp_busy_pct", np.nan))
    if missing.any():
        notes.append(f"{int(missing.sum())} interval(s) without SMF 70.1 LPAR busy: other classes taken as 0 % busy")
    other = other_classes_busy(t)
    bg_g, bg_z = other["bg_gcp_busy_pct"].to_numpy(), other["bg_ziip_busy_pct"].to_numpy()
    if "interval_start_at" in t and t["interval_start_at"].notna().any():
        day = pd.to_datetime(t["interval_start_at"]).dt.strftime("%Y-%m-%d").fillna("?").to_numpy()
    else:
        day = np.array(["?"] * len(t))
    using = column_or(t, "ziip_using_samples", np.nan) + np.nan_to_num(column_or(t, "ziip_on_cp_using_samples", 0.0))
    delay = column_or(t, "ziip_delay_samples", np.nan)
    usable = (n_ziip > 0) & np.isfinite(using) & (using >= MIN_USING_SAMPLES) & np.isfinite(delay) & (delay >= 0)
    cpu_using = column_or(t, "cpu_using_samples", np.nan)
    cpu_delay = column_or(t, "cpu_delay_samples", np.nan)
    with np.errstate(invalid="ignore"):
        cpu_usable = (np.isfinite(cpu_using) & (cpu_using >= 0) & np.isfinite(cpu_delay) & (cpu_delay >= 0)
                      & (cp > 0))
    return Intervals(column_or(t, "tps", np.nan), column_or(t, "resp_ms", np.nan), n_gcp, n_ziip,
                     cp, iip, iipcp, weight, bg_g, bg_z, day, np.where(usable, using, np.nan),
                     np.where(usable, delay, np.nan), np.where(cpu_usable, cpu_using, np.nan),
                     np.where(cpu_usable, cpu_delay, np.nan), np.where(cf > 1.0, speed * cf / 2.0, speed)), notes


def demand_and_eligibility(iv: Intervals) -> tuple[float, float]:
    r"""The class's CPU per transaction and zIIP-eligible share over a set of intervals.

    .. math::

        D = \frac{10 \sum_i (CP_i + IIP_i)\, t_i}{\sum_i X_i t_i}, \qquad
        f = \frac{\sum_i (IIP_i + IIPCP_i)\, t_i}{\sum_i (CP_i + IIP_i)\, t_i}

    with APPL% per interval, ``X`` in tps and ``t`` the interval length: IBM's CPU cost per
    transaction (CPU seconds over transactions ended) over the whole history, so a busy interval
    counts for the transactions it ran. APPL% CP already includes IIPCP. ``IIP`` is in
    CP-equivalent units (:attr:`Intervals.iip_pct`: APPL% IIP, zIIP engine time, times NFFS / 256),
    so ``D`` is CP-equivalent ms and ``f`` a share of work whatever the engines' speeds.

    References
    ----------
    IBM, *z/OS RMF Report Analysis*, Workload Activity report: APPL% CP, IIPCP, IIP.
    """
    cpu = (iv.cp_pct + iv.iip_pct) * iv.weight_s
    ended = iv.tps * iv.weight_s
    total = float(cpu.sum())
    d = 10.0 * total / float(ended.sum())
    f = float(((iv.iip_pct + iv.iipcp_pct) * iv.weight_s).sum() / total) if total > 0 else 0.0
    return d, min(max(f, 0.0), 1.0)


def predicted_appl(cpu: np.ndarray, f: float, spill: np.ndarray, n_ziip: np.ndarray,
                   engines: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    r"""A class's predicted APPL% as RMF reports them, from its CPU work in % (``X D / 10``).

    Each engine's time is the work it ran over its speed: ``cpu_ziip_pct`` (APPL% IIP) the
    eligible work that stayed on zIIPs over ``ziip_speed``, ``cpu_gcp_pct`` (APPL% CP, IIPCP
    included) and ``ziip_eligible_on_gcp_pct`` (IIPCP) the rest over ``gcp_speed``;
    ``cpu_total_pct`` and ``ziip_eligible_pct`` their sums as the marts take them (CP + IIP,
    IIP + IIPCP); ``ziip_eligible_on_gcp_share_pct`` the share of the eligible work on GCPs. With
    the demand in CP-equivalent ms (``gcp_speed`` 1, ``ziip_speed`` NFFS / 256) APPL% IIP times
    NFFS / 256 is the work again, as RMF normalises it. ``engines``: the
    :class:`~kneecap.modeling.dispatch.Dispatch` keywords answered on; with ``ziip_mt`` 2 APPL% IIP
    is also divided by ``ziip_mt_capacity``, as RMF divides by R723MCFS / 1024
    (:mod:`kneecap.smf.type72`).
    """
    engines = engines or {}
    gcp_speed, ziip_speed = float(engines.get("gcp_speed", 1.0)), float(engines.get("ziip_speed", 1.0))
    cf = float(engines["ziip_mt_capacity"]) if int(engines.get("ziip_mt", 1)) == 2 else 1.0
    on_ziip = np.where(n_ziip > 0, cpu * f * (1 - spill), 0.0)
    out = {"cpu_total_pct": cpu, "cpu_ziip_pct": on_ziip, "ziip_eligible_on_gcp_pct": cpu * f * spill,
           "ziip_eligible_pct": cpu * f, "cpu_gcp_pct": cpu - on_ziip,
           "ziip_eligible_on_gcp_share_pct": 100.0 * spill if f > 0 else 0.0}
    if (gcp_speed, ziip_speed, cf) != (1.0, 1.0, 1.0):  # engines alike in MT-1: the work is the engine time
        out["cpu_ziip_pct"] = on_ziip / (ziip_speed * cf)
        out["cpu_gcp_pct"] = (cpu - on_ziip) / gcp_speed
        out["ziip_eligible_on_gcp_pct"] = cpu * f * spill / gcp_speed
        out["cpu_total_pct"] = out["cpu_gcp_pct"] + out["cpu_ziip_pct"]
        out["ziip_eligible_pct"] = out["cpu_ziip_pct"] + out["ziip_eligible_on_gcp_pct"]
    return out


def base_lpar(iv: Intervals) -> dict[str, float]:
    """The LPAR a forecast starts from.

    The engines most intervals had and the other classes' busy in the busiest tenth of the class's
    intervals (what they do while the class peaks).
    """
    configs = pd.DataFrame({"n_gcp": iv.n_gcp, "n_ziip": iv.n_ziip}).value_counts()
    n_gcp, n_ziip = configs.index[0]
    same = (iv.n_gcp == n_gcp) & (iv.n_ziip == n_ziip)
    peak = same & (iv.tps >= np.quantile(iv.tps[same], 0.9))
    return {"n_gcp": int(n_gcp), "n_ziip": int(n_ziip),
            "bg_gcp_busy_pct": float(np.median(iv.bg_gcp_pct[peak])),
            "bg_ziip_busy_pct": float(np.median(iv.bg_ziip_pct[peak])) if n_ziip > 0 else 0.0}


def peak_history(table: pd.DataFrame, rows: np.ndarray) -> list[list[Any]]:
    """``[[interval_start_at ISO, tps], ...]`` of the intervals fitted: what a growth trend reads."""
    if "interval_start_at" not in table:
        return []
    t = table.loc[rows, ["interval_start_at", "tps"]].dropna()
    t = t.assign(interval_start_at=pd.to_datetime(t["interval_start_at"])).sort_values("interval_start_at")
    return [[ts.isoformat(), float(x)] for ts, x in zip(t["interval_start_at"], t["tps"])]
