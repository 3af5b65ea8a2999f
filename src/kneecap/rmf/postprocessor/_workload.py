"""The Workload Activity (WLMGL) report: one ``smf72_workload`` row per service or report class (period)."""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from kneecap.rmf.postprocessor._document import DdsPart, DdsReport, DdsSegment, var, varnum
from kneecap.rmf.postprocessor._values import clock_s, col, number

_CLASS_SEGMENT_RE = re.compile(
    r"^(?P<kind>Service|Report) Class(?: Period)?\s+(?P<name>\S+)"
    r"(?:\s+(?:Period\s+)?(?P<period>\d+))?\s*$"
)


def workload_rows(report: DdsReport, where: str) -> list[dict[str, object]]:
    r"""One row per service/report class (period) segment of a WLMGL report.

    Mapping from the ddsml parts (names as RMF writes them) to columns:

    * ``Transactions``: Ended -> ``ended``, Ended/sec -> ``ended_per_s``,
      Average -> ``avg_trans``, MPL -> ``mpl``;
    * ``Transaction Time (HHH.MM.SS.FFFFFF)``: Actual / Execution / Queued / Standard
      Deviation -> ``resp_ms`` / ``exec_ms`` / ``queued_ms`` / ``resp_std_ms``
      (``resp_ms`` is NaN when nothing ended, as RMF's 0 is "no data", not 0 ms);
    * ``Service``: Total -> ``service_units``;
    * ``Service Time`` (seconds): CPU, SRB, RCT, I/O Interrupt, Hiperspace, zIIP, zAAP
      -> ``tcb_s, srb_s, rct_s, iit_s, hst_s, ziip_s, zaap_s``, and
      ``cpu_s`` = CPU + SRB + RCT + I/O Interrupt + Hiperspace (the SMF 72.3 definition);
    * ``Application Time %``: CP, zIIP on CP, zIIP, zAAP on CP, zAAP
      -> ``appl_cp_pct, appl_iipcp_pct, appl_iip_pct, appl_aapcp_pct, appl_aap_pct``;
    * ``Goals/Actuals Summary`` row of the period: Importance, Performance Index,
      Execution Velocity % Actual.

    Columns of the SMF table the report cannot fill (``ziip_cp_equiv_s``, which needs the
    zIIP normalisation factor, ``ziip_mt_capacity``, R723MCFS, and the WLM state sample counts)
    are NaN.

    The report carries no zIIP-eligible-on-CP *seconds*; APPL% is engine time over
    interval time (100 = one engine), so

    .. math:: \text{ziip\_on\_cp\_s} = \text{APPL\% IIPCP} \times t_{int} / 100

    which equals SMF 72.3's ``R723CSUC``-derived time when the CP multithreading
    capacity factor is 1 (``R723MCF`` = 1024, i.e. no SMT on general CPs).
    """
    rows: list[dict[str, object]] = []
    for seg in report.segments:
        m = _CLASS_SEGMENT_RE.match(seg.name)
        if m is None:
            continue
        row = _class_row(report, seg, m, where)
        if row is not None:
            rows.append(row)
    return rows


class _ClassParts(NamedTuple):
    """The parts of one class (period) segment, by the names RMF gives them (None where it wrote none)."""

    head: DdsPart | None
    transactions: DdsPart | None
    times: DdsPart | None
    service: DdsPart | None
    service_time: DdsPart | None
    appl: DdsPart | None
    goals: DdsPart | None

    @classmethod
    def of(cls, seg: DdsSegment) -> _ClassParts:
        """The parts of segment ``seg``."""
        return cls(seg.part(None), seg.part("Transactions"), seg.part("Transaction Time (HHH.MM.SS.FFFFFF)"),
                   seg.part("Service"), seg.part("Service Time"), seg.part("Application Time %"),
                   seg.part("Goals/Actuals Summary"))


def _class_row(report: DdsReport, seg: DdsSegment, m: re.Match[str], where: str) -> dict[str, object] | None:
    """The row of one class (period) segment (``m``: its name matched), or None when RMF wrote no data for it."""
    parts = _ClassParts.of(seg)
    class_name = var(parts.head, "Service Class") or var(parts.head, "Report Class") or m["name"]
    period, goal = _period_and_goal(parts, m["period"], where)
    if parts.transactions is None and parts.service_time is None and parts.appl is None:
        # "All data zero": RMF writes only the header part; there is nothing to measure.
        return None
    ended = varnum(parts.transactions, "Ended", where)
    row = _smf72_columns(report, parts, class_name=class_name, is_report_class=m["kind"] == "Report",
                         period=period, goal=goal, ended=ended, where=where)
    row.update(_xml_only_columns(parts, goal=goal, ended=ended, where=where))
    return row


def _period_and_goal(parts: _ClassParts, period_text: str | None,
                     where: str) -> tuple[int, dict[str, str | None] | None]:
    """The period number (0: the class as a whole) and its row of the Goals/Actuals Summary, if any.

    ``period_text`` is the period the segment's name gives, if it gives one.
    """
    period_text = period_text or var(parts.head, "Period")
    goals = parts.goals
    goal_recs = goals.tables[0].records(include_sum=False) if goals and goals.tables else []
    if period_text is None and len(goal_recs) == 1:
        period_text = goal_recs[0].get("Period")
    # 0 = the class as a whole (a multi-period class reported without a period split).
    period_no = number(period_text, f"{where}, 'Period'")
    period = int(period_no) if math.isfinite(period_no) else 0
    goal = next(
        (g for g in goal_recs if col(g, "Period", where) == period), None
    )
    return period, goal


def _time_ms(parts: _ClassParts, name: str, ended: float, where: str) -> float:
    """Transaction time ``name`` in ms; NaN when nothing ended."""
    # RMF prints 0 when nothing ended: that is "no data", not a 0-ms response.
    return varnum(parts.times, name, where, clock_s) * 1000.0 if ended > 0 else math.nan


def _smf72_columns(report: DdsReport, parts: _ClassParts, *, class_name: str, is_report_class: bool, period: int,
                   goal: dict[str, str | None] | None, ended: float, where: str) -> dict[str, object]:
    """The columns the row shares with the binary SMF 72.3 table, in its order."""
    is_sysplex = (report.restype or "").upper() == "SYSPLEX"
    interval_s = report.interval_s
    st, appl = parts.service_time, parts.appl
    appl_iipcp = varnum(appl, "zIIP on CP", where)
    tcb_s = varnum(st, "CPU", where)
    srb_s = varnum(st, "SRB", where)
    rct_s = varnum(st, "RCT", where)
    iit_s = varnum(st, "I/O Interrupt", where)
    hst_s = varnum(st, "Hiperspace", where)
    # Same definition as SMF 72.3's cpu_s: TCB + SRB + RCT + IIT + HST seconds. RCT/IIT/HST
    # missing from a report count as 0; a missing TCB or SRB time leaves the sum unknown.
    cpu_s = tcb_s + srb_s + sum(0.0 if math.isnan(x) else x for x in (rct_s, iit_s, hst_s))
    return {
        "system_id": None if is_sysplex else report.resname,
        "sysplex": report.resname if is_sysplex else None,
        "interval_start_at": report.start_at,
        "interval_s": interval_s,
        "class_name": class_name,
        "is_report_class": is_report_class,
        "period": period,
        "workload_name": var(parts.head, "Workload"),
        "importance": col(goal, "Importance", where) if goal else math.nan,
        "ended": ended,
        "resp_ms": _time_ms(parts, "Actual", ended, where),
        "service_units": varnum(parts.service, "Total", where),
        "tcb_s": tcb_s,
        "srb_s": srb_s,
        "cpu_s": cpu_s,
        "ziip_s": varnum(st, "zIIP", where),
        # needs R723NFFS, which the report does not print
        "ziip_cp_equiv_s": math.nan,
        # R723MCFS: the WLMGL report prints no MT capacity factor (the CPU report's MT analysis does)
        "ziip_mt_capacity": math.nan,
        "ziip_on_cp_s": appl_iipcp * interval_s / 100.0,
        "appl_cp_pct": varnum(appl, "CP", where),
        "appl_iip_pct": varnum(appl, "zIIP", where),
        "appl_iipcp_pct": appl_iipcp,
        # raw WLM state samples are not in the report (only velocity and PI)
        "cpu_using_samples": math.nan,
        "cpu_delay_samples": math.nan,
        "ziip_using_samples": math.nan,
        "ziip_on_cp_using_samples": math.nan,
        "ziip_delay_samples": math.nan,
        "total_using_samples": math.nan,
        "total_delay_samples": math.nan,
    }


def _xml_only_columns(parts: _ClassParts, *, goal: dict[str, str | None] | None, ended: float,
                      where: str) -> dict[str, object]:
    """The columns only the report has (:data:`WORKLOAD_COLUMNS` after the SMF 72.3 ones)."""
    tx, st, appl = parts.transactions, parts.service_time, parts.appl
    return {
        "ended_per_s": varnum(tx, "Ended/sec", where),
        "avg_trans": varnum(tx, "Average", where),
        "mpl": varnum(tx, "MPL", where),
        "exec_ms": _time_ms(parts, "Execution", ended, where),
        "queued_ms": _time_ms(parts, "Queued", ended, where),
        "resp_std_ms": _time_ms(parts, "Standard Deviation", ended, where),
        # summed into cpu_s among the SMF columns (which raised any error in them first)
        "rct_s": varnum(st, "RCT", where),
        "iit_s": varnum(st, "I/O Interrupt", where),
        "hst_s": varnum(st, "Hiperspace", where),
        "zaap_s": varnum(st, "zAAP", where),
        "appl_aapcp_pct": varnum(appl, "zAAP on CP", where),
        "appl_aap_pct": varnum(appl, "zAAP", where),
        "exec_velocity_pct": (
            col(goal, "Execution Velocity % Actual", where) if goal else math.nan
        ),
        "perf_index": (
            col(goal, "Performance Index", where) if goal else math.nan
        ),
    }
