"""The CPU report: the CPU Activity table to ``smf70_cpu`` rows, the Partition Data Report to ``rmf_partition``."""

from __future__ import annotations

import math

import numpy as np

from kneecap.rmf.postprocessor._document import DdsReport
from kneecap.rmf.postprocessor._values import clock_s, col


def cpu_rows(report: DdsReport, where: str) -> list[dict[str, object]]:
    r"""One row per processor type of the CPU Activity table.

    ``lpar_busy_pct`` / ``mvs_busy_pct`` are RMF's own TOTAL/AVERAGE line of each type
    (the ``<row type="SUM">``); when a type has no SUM row the unweighted mean of its
    logical processors is used, which is how RMF forms that line for fully online CPUs.
    ``n_online`` counts the type's logical processors with TIME % ONLINE > 0, and

    .. math:: \text{online\_s} = t_{int} \sum_{cpu} \text{ONLINE\%}_{cpu} / 100

    (the SMF 70.1 ``online_s`` is the sum of SMF70ONT over the same processors).
    """
    seg = report.segment("CPU Activity")
    if seg is None:
        return []
    table = None
    for part in seg.parts:
        for t in part.tables:
            if "CPU Type" in t.columns and "Time% LPAR Busy" in t.columns:
                table = t
                break
        if table is not None:
            break
    if table is None:
        return []
    per_type: dict[str, dict[str, list[float]]] = {}
    sums: dict[str, dict[str, float]] = {}
    for rec in table.records():
        cpu_type = rec.get("CPU Type")
        if cpu_type is None:
            continue
        lpar = col(rec, "Time% LPAR Busy", where)
        mvs = col(rec, "Time% MVS Busy", where)
        if rec["__type__"] == "SUM":
            sums[cpu_type] = {"lpar": lpar, "mvs": mvs}
            continue
        acc = per_type.setdefault(cpu_type, {"online": [], "lpar": [], "mvs": []})
        acc["online"].append(col(rec, "Time% Online", where))
        acc["lpar"].append(lpar)
        acc["mvs"].append(mvs)
    rows: list[dict[str, object]] = []
    for cpu_type, acc in per_type.items():
        online = np.asarray(acc["online"], dtype=float)
        if cpu_type in sums:
            lpar_pct, mvs_pct = sums[cpu_type]["lpar"], sums[cpu_type]["mvs"]
        else:
            lpar_arr = np.asarray(acc["lpar"], dtype=float)
            mvs_arr = np.asarray(acc["mvs"], dtype=float)
            lpar_pct = float(np.nanmean(lpar_arr)) if np.isfinite(lpar_arr).any() else math.nan
            mvs_pct = float(np.nanmean(mvs_arr)) if np.isfinite(mvs_arr).any() else math.nan
        rows.append(
            {
                "system_id": report.resname,
                "sysplex": None,
                "interval_start_at": report.start_at,
                "interval_s": report.interval_s,
                "cpu_type": cpu_type,
                "n_online": int(np.sum(np.nan_to_num(online) > 0)),
                "online_s": float(np.nansum(online)) / 100.0 * report.interval_s,
                "lpar_busy_pct": lpar_pct,
                "mvs_busy_pct": mvs_pct,
            }
        )
    return rows


def partition_rows(report: DdsReport, where: str) -> list[dict[str, object]]:
    seg = report.segment("Partition Data Report")
    if seg is None:
        return []
    own = None
    header = seg.part(None)
    if header is not None:
        own = header.variables.get("MVS Partition Name")
    part = seg.part("Partition Data")
    if part is None or not part.tables:
        return []
    rows: list[dict[str, object]] = []
    for rec in part.tables[0].records(include_sum=False):
        name = rec.get("Partition Name")
        if name is None:
            continue
        rows.append(
            {
                "system_id": report.resname,
                "interval_start_at": report.start_at,
                "interval_s": report.interval_s,
                "partition_name": name,
                "is_own_partition": own is not None and name == own,
                "is_physical": name == "*PHYSICAL*",
                "partition_status": rec.get("Partition Status"),
                "cpu_type": rec.get("PROC Type"),
                "weight": col(rec, "Partition Weight", where),
                "msu_defined": col(rec, "MSU Defined", where),
                "msu_actual": col(rec, "MSU Actual", where),
                "n_logical": col(rec, "Num of LOG PROCs", where),
                "effective_dispatch_s": col(rec, "Effective Dispatch Time", where, clock_s),
                "total_dispatch_s": col(rec, "Total Dispatch Time", where, clock_s),
                "log_proc_effective_pct": col(rec, "Avg Util%: LOG PROC Effective", where),
                "log_proc_total_pct": col(rec, "Avg Util%: LOG PROC Total", where),
                "phys_lpar_mgmt_pct": col(rec, "Avg Util%: PHYS PROC LPAR MGMT", where),
                "phys_effective_pct": col(rec, "Avg Util%: PHYS PROC Effective", where),
                "phys_total_pct": col(rec, "Avg Util%: PHYS PROC Total", where),
            }
        )
    return rows
