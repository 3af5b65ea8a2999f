r"""SMF record type 72 subtype 3 - RMF workload activity, one row per service/report class period.

One 72.3 record describes one service or report class of the active WLM policy for one RMF
interval: a workload-manager control section (class name, workload, service coefficients,
normalisation factors) and one *service/report class period data section* per period.

The decoder is vectorised: a :class:`~kneecap.smf.framing.RecordBatch` of thousands of 72.3
records is decoded with one numpy gather per section layout, so decoding runs near disk speed.
Records whose structure is inconsistent (triplets outside the record, sections too short, zero
service coefficients, malformed packed dates) are returned as quarantine entries with the reason
and the offending record offset; all other records of the batch are decoded.

Derived quantities
------------------
With the CPU service coefficient :math:`c = \text{R723MCPU}/10^4`, SRB coefficient
:math:`s = \text{R723MSRB}/10^4` and CPU-rate adjustment :math:`a = \text{R723MADJ}` (one service
unit per second of CPU is :math:`16 \cdot 10^6 / a`), IBM's overview conditions define

.. math::

    t_{TCB} = \frac{\text{R723CCPU}\, a}{16\cdot10^6\, c},\qquad
    t_{SRB} = \frac{\text{R723CSRB}\, a}{16\cdot10^6\, s}

(``TCBSEC = R723CCPU × R723MADJ / (1600 × R723MCPU)``). R723CCPU/R723CSRB include the
*normalised* zIIP service units. The zIIP and zIIP-on-CP times are

.. math::

    t_{IIP} = \frac{\text{R723CSUP}\, a}{16\cdot10^6\, c},\qquad
    t_{IIPCP} = \frac{\text{R723CSUC}\, a}{16\cdot10^6\, c}

where :math:`t_{IIP}` is zIIP *engine* time (IBM: multiply R723CSUP by R723NFFS/256 for the CP
equivalent). With :math:`T` the interval and the multithreading capacity factors
:math:`m = \text{R723MCF}/1024`, :math:`m_s = \text{R723MCFS}/1024`, RMF's APPL% are

.. math::

    \text{APPL\% CP} = 100\,\frac{t_{TCB} + t_{SRB} + t_{RCT} + t_{IIT} + t_{HST}
        - t_{IIP}\,\text{NFFS}/256 - t_{AAP}\,\text{NFFI}/256}{T\, m}

    \text{APPL\% IIP} = 100\,\frac{t_{IIP}}{T\, m_s},\qquad
    \text{APPL\% IIPCP} = 100\,\frac{t_{IIPCP}}{T\, m}

``cpu_s`` is the total CPU time of the period, :math:`t_{TCB} + t_{SRB} + t_{RCT} + t_{IIT} +
t_{HST}` (CP-equivalent, zIIP included). A capacity factor of 0 (multithreading not active, or
R723MFLG bit 3 "HISMT failure") is taken as 1024 (factor 1). Mean response time is
R723CTET / R723CRCP, R723CTET being in 1024-µs units.

zIIPs in SMT-2 (MT mode 2)
--------------------------
R723MCFS is the "multithreading maximum capacity numerator for zIIP. Divide this value by 1024 to
get the multithreading maximum capacity factor for all zIIPs that were configured ONLINE for the
complete interval" (IBM's field text, IBM SMF Explorer SMF72S3 ``r723mcfs``): the work a core does
with both threads busy over the work it would do in MT-1. One thread per core is that work by
definition, so MT-1 gives 1024; ``ziip_mt_capacity`` is :math:`m_s` where it is above 1 (the
zIIPs ran MT-2 that interval) and NaN otherwise (MT-1, no zIIP, or the MT numerators invalid).
zIIP times in MT-2 are MT-1 equivalent ("IBM state all zIIP measurements are as if the system was
in SMT1 mode", Precisely's Syncsort Capacity Management guide, "Working with SMT data"), which is why
APPL% IIP divides them by :math:`m_s`: 100 is one core's full MT-2 capacity.

Goals and the response time distribution
----------------------------------------
Each period carries its WLM goal (:func:`goals`): R723CRGF (10) the type, R723CRTF (9) the unit
of a response time goal, R723CVAL (12, 4 bytes) the goal in that unit or the velocity in %,
R723CPCT (16, 2 bytes) the percentile, R723CIMP (18) the importance; R723RTDM (608, 4 bytes,
"Midpoint of all response times that were collected in the response time distribution buckets in
milliseconds. For response time goals, the mid point is always the response time goal"; only when
the section is at least 612 bytes long). The response time distribution data section is located by
the header triplet SMF72RTS/RTL/RTN (68/72/74): SMF72RTN sections of SMF72RTL bytes, each an array
of 14 four-byte binary entries (R723TRDB). Section 0 is the map: "Each map entry defines a maximum
percentage of the midpoint" (50, 60, 70, 80, 90, 100 for entries 1-6 in IBM's table; 110 ... 150,
200, 400 for 7-13). Section R723CRTX (0 = none: "These buckets exist only for periods with a
response time or execution velocity goal") holds the period's 14 counts of completed transactions:
bucket 1 at most 50 % of the midpoint, bucket :math:`k` above bound :math:`k-1` and at most bound
:math:`k`, bucket 14 above 400 %. What map entry 14 holds is not in the public text read (SMF2JSON
prints it as hex, not as a number): the decoder reads bounds 1-13 from the map and leaves bucket 14
open. A map that does not rise, a distribution triplet that is short or leaves the record, and an
R723CRTX past the sections put the record in quarantine. ``smf72_workload`` gets the bounds as
``rt_bucket_01_max_pct`` ... ``rt_bucket_13_max_pct`` (NaN without a distribution) and the counts
as ``rt_bucket_01_count`` ... ``rt_bucket_14_count`` (0 without): wide, one row per period and
interval, like the other columns; the ``fct_rt_buckets`` mart makes them one row per bucket.

References
----------
IBM, *z/OS MVS System Management Facilities (SMF)*, record type 72 subtype 3: "Workload Manager
Control Section", "Service/Report Class Period Data Section".
IBM, *z/OS RMF Report Analysis* / *RMF User's Guide*, "Overview conditions based on SMF record
type 72-3" (TCBSEC, SRBSEC, TRANS, RTIME, EXVEL).
smf-notes §3 (kneecap shared reference), including the APPL% formulas as implemented in
franfcwong/smf2db ``api/api_72.py`` (MIT).
IBM, *z/OS MVS System Management Facilities (SMF)*, record type 72 subtype 3, "Response Time
Distribution Data Section" (z/OS 2.1, iea3g2_Response_Time_Distribution_Data_Section).
IBM SMF Explorer, mapping SMF72S3: fields ``rts``, ``rtl``, ``rtn``, ``r723crtx``, ``class_rt``
(R723TRDB, 14 entries), ``class_goal_flags`` (R723CRGF), ``r723crtf``, ``class_goal_value``,
``class_goal_percentile``, ``r723rtdm``.
franfcwong's C mapping ``smf72h.h`` (``struct r723scs``: R723CRTX 0, R723CRTF 9, R723CRGF 10,
R723CVAL 12, R723CPCT 16, R723RTDM 608; ``struct r723rts``, ``r723tent`` 14) and SMF2JSON
``printR723rts`` (section ``i`` at ``SMF72RTS + i x SMF72RTL``, 14 four-byte entries each);
franfcwong/smf2db ``db_models/smf72_base.py`` (IBM's bucket descriptions).
"""

from __future__ import annotations

import numpy as np

from kneecap.smf.header import HEADER_LEN_SUBTYPES, RMF_PRODUCT, rmf_product_columns
from kneecap.smf.layout import Field, Layout

__all__ = [
    "HEADER_72_3",
    "WLM_CONTROL",
    "CLASS_PERIOD",
    "CLASS_PERIOD_RT_MIDPOINT",
    "RT_MIDPOINT_OFFSET",
    "RT_DISTRIBUTION",
    "RT_BUCKETS",
    "GOAL_TYPE_FLAGS",
    "GOAL_UNIT_MS",
    "RT_BOUND_COLUMNS",
    "RT_COUNT_COLUMNS",
    "TABLE",
    "COLUMNS",
    "Type72Subtype3",
    "derive",
    "goals",
]

TABLE = "smf72_workload"

HEADER_72_3 = Layout(
    "SMF 72.3 header/self-defining section (triplets)",
    [
        Field("trn", 24, 2, "u", "SMF72TRN", "number of triplets"),
        Field("prs", 28, 4, "u", "SMF72PRS", "offset to RMF product section"),
        Field("prl", 32, 2, "u", "SMF72PRL", "length of RMF product section"),
        Field("prn", 34, 2, "u", "SMF72PRN", "number of RMF product sections"),
        Field("wms", 36, 4, "u", "SMF72WMS", "offset to workload manager control section"),
        Field("wml", 40, 2, "u", "SMF72WML", "length of workload manager control section"),
        Field("wmn", 42, 2, "u", "SMF72WMN", "number of workload manager control sections"),
        Field("scs", 60, 4, "u", "SMF72SCS", "offset to service/report class period sections"),
        Field("scl", 64, 2, "u", "SMF72SCL", "length of a period data section"),
        Field("scn", 66, 2, "u", "SMF72SCN", "number of period data sections"),
        Field("rts", 68, 4, "u", "SMF72RTS", "offset to response time distribution sections"),
        Field("rtl", 72, 2, "u", "SMF72RTL", "length of a response time distribution section"),
        Field("rtn", 74, 2, "u", "SMF72RTN", "number of response time distribution sections"),
    ],
    source="IBM SMF manual, record type 72 subtype 3 'Header/self-defining section'",
)

WLM_CONTROL = Layout(
    "SMF 72.3 workload manager control section",
    [
        Field("mscf", 0, 1, "u", "R723MSCF", "x'80' report class"),
        Field("mflg", 1, 1, "u", "R723MFLG", "x'10' HISMT failure: MT numerators invalid"),
        Field("policy", 4, 8, "ebcdic", "R723MNSP", "service policy name"),
        Field("mcpu", 52, 4, "u", "R723MCPU", "CPU service coefficient x 10,000"),
        Field("mioc", 56, 4, "u", "R723MIOC", "I/O service coefficient x 10,000"),
        Field("mmso", 60, 4, "u", "R723MMSO", "storage service coefficient x 10,000"),
        Field("msrb", 64, 4, "u", "R723MSRB", "SRB service coefficient x 10,000"),
        Field("workload_name", 80, 8, "ebcdic", "R723MWNM", "workload name"),
        Field("class_name", 120, 8, "ebcdic", "R723MCNM", "service or report class name"),
        Field("n_periods", 160, 2, "u", "R723MCPG", "number of periods"),
        Field("madj", 172, 4, "u", "R723MADJ", "CPU-rate adjustment factor"),
        Field("nffi", 240, 4, "u", "R723NFFI", "zAAP normalisation factor (x/256)"),
        Field("nffs", 244, 4, "u", "R723NFFS", "zIIP normalisation factor (x/256)"),
        Field("mcf", 256, 4, "u", "R723MCF", "MT max capacity factor, CP (x/1024)"),
        Field("mcfs", 260, 4, "u", "R723MCFS", "MT max capacity factor, zIIP (x/1024)"),
    ],
    source="IBM SMF manual, record type 72 subtype 3 'Workload Manager Control Section'",
)

CLASS_PERIOD = Layout(
    "SMF 72.3 service/report class period data section",
    [
        Field("crtx", 0, 2, "u", "R723CRTX", "index of the period's response time distribution"),
        Field("crs1", 6, 1, "u", "R723CRS1", "x'80' heterogeneous report class period"),
        Field("period", 8, 1, "u", "R723CPER", "period number"),
        Field("crtf", 9, 1, "u", "R723CRTF", "response time goal units: x'80' ms, x'40' s, "
              "x'20' min, x'10' h"),
        Field("crgf", 10, 1, "u", "R723CRGF", "goal type: x'80' percentile, x'40' average, "
              "x'20' velocity, x'10' discretionary, x'08' system"),
        Field("cval", 12, 4, "u", "R723CVAL", "response time goal (R723CRTF units) or velocity "
              "goal (%); 0 for discretionary, system or no goal"),
        Field("cpct", 16, 2, "u", "R723CPCT", "goal percentile"),
        Field("importance", 18, 2, "u", "R723CIMP", "importance"),
        Field("csrv", 24, 8, "hfp", "R723CSRV", "total service units"),
        Field("ccpu", 32, 8, "hfp", "R723CCPU", "TCB service units (zIIP/zAAP normalised incl.)"),
        Field("csrb", 56, 8, "hfp", "R723CSRB", "SRB service units"),
        Field("ctrr", 136, 8, "hfp", "R723CTRR", "in-storage residency time, 1024 us"),
        Field("ctat", 144, 8, "hfp", "R723CTAT", "transaction active time, 1024 us"),
        Field("crct", 152, 8, "hfp", "R723CRCT", "RCT time, us"),
        Field("ciit", 160, 8, "hfp", "R723CIIT", "I/O interrupt time, us"),
        Field("chst", 168, 8, "hfp", "R723CHST", "hiperspace service time, us"),
        Field("ended", 184, 4, "u", "R723CRCP", "transactions completed"),
        Field("executed", 192, 4, "u", "R723CNCP", "transactions completed execution phase"),
        Field("ctet", 200, 8, "hfp", "R723CTET", "total elapsed (response) time, 1024 us"),
        Field("cxet", 208, 8, "hfp", "R723CXET", "total execution time, 1024 us"),
        Field("cpu_using_samples", 224, 4, "u", "R723CCUS", "CPU using samples"),
        Field("total_delay_samples", 228, 4, "u", "R723CTOT", "execution delay samples"),
        Field("cpu_delay_samples", 232, 4, "u", "R723CCDE", "CPU delay samples"),
        Field("cpu_capping_delay_samples", 236, 4, "u", "R723CCCA", "CPU capping delay samples"),
        Field("total_using_samples", 344, 4, "u", "R723CTOU", "total using samples"),
        Field("ziip_using_samples", 532, 4, "u", "R723SUPU", "zIIP using samples"),
        Field("ziip_on_cp_using_samples", 536, 4, "u", "R723SUCU", "zIIP on CP using samples"),
        Field("ziip_delay_samples", 540, 4, "u", "R723SUPD", "zIIP delay samples"),
        Field("csup", 544, 8, "hfp", "R723CSUP", "service units on zIIPs (not normalised)"),
        Field("csuc", 552, 8, "hfp", "R723CSUC", "service units on CPs by zIIP-eligible work"),
        Field("cifa", 560, 8, "hfp", "R723CIFA", "service units on zAAPs"),
    ],
    source="IBM SMF manual, record type 72 subtype 3 'Service/Report Class Period Data Section'",
)

#: R723RTDM sits past the fields above, at 608 in the period section (franfcwong smf72h.h
#: ``struct r723scs``: after R723SPDP at 600); sections shorter than 612 bytes (older RMF
#: releases) have none, and the decoder leaves ``rt_midpoint_ms`` empty for them. Its layout
#: starts at the field, so that reading it copies 4 bytes per period, not 612.
RT_MIDPOINT_OFFSET = 608
CLASS_PERIOD_RT_MIDPOINT = Layout(
    "SMF 72.3 service/report class period data section from offset 608: R723RTDM",
    [Field("rtdm", 0, 4, "u", "R723RTDM", "midpoint of the response time distribution, ms")],
    source="IBM SMF manual, record type 72 subtype 3 'Service/Report Class Period Data Section' "
           "(R723RTDM); offset 608 from franfcwong smf72h.h struct r723scs",
)

#: Entries of one response time distribution section (``r723tent`` in franfcwong smf72h.h).
RT_BUCKETS = 14

RT_DISTRIBUTION = Layout(
    "SMF 72.3 response time distribution data section (one array of 14 entries)",
    [Field(f"trdb_{i + 1:02d}", 4 * i, 4, "u", "R723TRDB",
           "map: maximum % of the midpoint; a period's array: transactions completed")
     for i in range(RT_BUCKETS)],
    source="IBM SMF manual, record type 72 subtype 3 'Response Time Distribution Data Section'",
)

#: R723CRGF bits and the goal type each means, in the order a set bit wins.
GOAL_TYPE_FLAGS: tuple[tuple[int, str], ...] = (
    (0x80, "percentile"), (0x40, "average"), (0x20, "velocity"), (0x10, "discretionary"),
    (0x08, "system"),
)
#: R723CRTF bits and the milliseconds in one unit of R723CVAL for each.
GOAL_UNIT_MS: tuple[tuple[int, float], ...] = ((0x80, 1.0), (0x40, 1e3), (0x20, 6e4), (0x10, 3.6e6))

#: The bucket columns: 13 upper bounds (the 14th bucket has none) and 14 counts.
RT_BOUND_COLUMNS: tuple[str, ...] = tuple(f"rt_bucket_{i:02d}_max_pct" for i in range(1, RT_BUCKETS))
RT_COUNT_COLUMNS: tuple[str, ...] = tuple(f"rt_bucket_{i:02d}_count" for i in range(1, RT_BUCKETS + 1))

#: Columns of ``smf72_workload`` in order.
COLUMNS: tuple[str, ...] = (
    "system_id",
    "sysplex",
    "interval_start_at",
    "interval_s",
    "class_name",
    "is_report_class",
    "period",
    "workload_name",
    "importance",
    "ended",
    "resp_ms",
    "service_units",
    "tcb_s",
    "srb_s",
    "cpu_s",
    "ziip_s",
    "ziip_cp_equiv_s",
    "ziip_mt_capacity",
    "ziip_on_cp_s",
    "appl_cp_pct",
    "appl_iip_pct",
    "appl_iipcp_pct",
    "cpu_using_samples",
    "cpu_delay_samples",
    "ziip_using_samples",
    "ziip_on_cp_using_samples",
    "ziip_delay_samples",
    "total_using_samples",
    "total_delay_samples",
    "goal_type",
    "goal_resp_ms",
    "goal_velocity_pct",
    "goal_percentile",
    "rt_midpoint_ms",
    *RT_BOUND_COLUMNS,
    *RT_COUNT_COLUMNS,
)


def derive(p: dict[str, np.ndarray], w: dict[str, np.ndarray], interval_s: np.ndarray) -> dict:
    """Times, APPL% and response time from raw period (``p``) and control (``w``) columns.

    ``w`` and ``interval_s`` are already repeated to one value per period. See the module
    docstring for the formulas.
    """
    madj = w["madj"].astype(np.float64)
    c = w["mcpu"].astype(np.float64) / 1e4
    s = w["msrb"].astype(np.float64) / 1e4
    su_per_s = 16e6 / madj  # service units per CPU second before the coefficient
    tcb_s = p["ccpu"] / (su_per_s * c)
    srb_s = p["csrb"] / (su_per_s * s)
    other_s = (p["crct"] + p["ciit"] + p["chst"]) / 1e6
    ziip_s = p["csup"] / (su_per_s * c)
    zaap_s = p["cifa"] / (su_per_s * c)
    ziip_on_cp_s = p["csuc"] / (su_per_s * c)
    nffs = np.where(w["nffs"] > 0, w["nffs"], 256).astype(np.float64) / 256.0
    nffi = np.where(w["nffi"] > 0, w["nffi"], 256).astype(np.float64) / 256.0
    mt_invalid = (w["mflg"] & 0x10) != 0
    mcf = np.where((w["mcf"] > 0) & ~mt_invalid, w["mcf"], 1024).astype(np.float64) / 1024.0
    mcfs = np.where((w["mcfs"] > 0) & ~mt_invalid, w["mcfs"], 1024).astype(np.float64) / 1024.0
    cpu_s = tcb_s + srb_s + other_s
    cp_s = cpu_s - ziip_s * nffs - zaap_s * nffi
    with np.errstate(divide="ignore", invalid="ignore"):
        t = interval_s.astype(np.float64)
        ended = p["ended"].astype(np.float64)
        resp_ms = np.where(ended > 0, p["ctet"] * 1.024 / ended, np.nan)
        return {
            "tcb_s": tcb_s,
            "srb_s": srb_s,
            "cpu_s": cpu_s,
            "ziip_s": ziip_s,
            "ziip_cp_equiv_s": ziip_s * nffs,
            # MT-1 reports 1024 (factor 1): a factor above 1 is the zIIPs running two threads a core
            "ziip_mt_capacity": np.where(mcfs > 1.0, mcfs, np.nan),
            "ziip_on_cp_s": ziip_on_cp_s,
            "appl_cp_pct": 100.0 * cp_s / (t * mcf),
            "appl_iip_pct": 100.0 * ziip_s / (t * mcfs),
            "appl_iipcp_pct": 100.0 * ziip_on_cp_s / (t * mcf),
            "resp_ms": resp_ms,
        }


def goals(p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    r"""The WLM goal of each period from its raw R723CRGF, R723CRTF, R723CVAL and R723CPCT.

    Parameters
    ----------
    p : dict of str to ndarray
        Raw period columns ``crgf``, ``crtf``, ``cval``, ``cpct`` (:data:`CLASS_PERIOD`).

    Returns
    -------
    dict of str to ndarray
        ``goal_type`` ("percentile", "average", "velocity", "discretionary", "system", or
        "none" when no R723CRGF bit is set, as for report classes), ``goal_resp_ms`` (response
        time goals only, else NaN; NaN too when R723CRTF names no unit), ``goal_velocity_pct``
        (velocity goals only, else NaN) and ``goal_percentile`` (percentile goals only, else 0).

    Notes
    -----
    With :math:`u` the milliseconds of the unit R723CRTF names (x'80' ms, x'40' s, x'20' min,
    x'10' h), a response time goal is :math:`\text{R723CVAL}\,u` ms. R723CVAL is "Response time
    goal - or Execution velocity goal - or zero if discretionary, system or no goal"; smf2db's
    copy of IBM's text adds "Units are defined in R723CRTF". Should more than one R723CRGF bit be
    set, the first of :data:`GOAL_TYPE_FLAGS` wins (IBM's text describes one goal per period).

    References
    ----------
    IBM, *z/OS MVS System Management Facilities (SMF)*, record type 72 subtype 3, "Service/Report
    Class Period Data Section": R723CRTF, R723CRGF, R723CVAL, R723CPCT (as IBM SMF Explorer's
    SMF72S3 mapping pages and franfcwong/smf2db ``db_models/smf72_base.py`` reproduce them).
    """
    crgf = np.asarray(p["crgf"], dtype=np.int64)
    crtf = np.asarray(p["crtf"], dtype=np.int64)
    cval = np.asarray(p["cval"], dtype=np.float64)
    goal_type = np.full(crgf.size, "none", dtype=object)
    for bit, name in reversed(GOAL_TYPE_FLAGS):  # reversed: the first flag in the table wins
        goal_type[(crgf & bit) != 0] = name
    unit_ms = np.full(crtf.size, np.nan)
    for bit, ms in reversed(GOAL_UNIT_MS):
        unit_ms[(crtf & bit) != 0] = ms
    response_goal = (goal_type == "percentile") | (goal_type == "average")
    return {
        "goal_type": goal_type,
        "goal_resp_ms": np.where(response_goal, cval * unit_ms, np.nan),
        "goal_velocity_pct": np.where(goal_type == "velocity", cval, np.nan),
        "goal_percentile": np.where(goal_type == "percentile",
                                    np.asarray(p["cpct"], dtype=np.int64), 0),
    }


class Type72Subtype3:
    """Batch decoder for SMF 72.3 (register as ``DECODERS[(72, 3)]`` in :mod:`kneecap.smf.reader`).

    ``decode_batch(u8, starts, lengths, *, codepage, system_ids)`` returns
    ``({"smf72_workload": columns}, bad)`` with ``bad`` a list of
    ``(index into starts, record offset, reason)``.
    """

    record_type = 72
    subtype = 3
    tables = (TABLE,)

    def decode_batch(
        self,
        u8: np.ndarray,
        starts: np.ndarray,
        lengths: np.ndarray,
        *,
        codepage: str = "cp037",
        system_ids: np.ndarray,
    ) -> tuple[dict[str, dict[str, np.ndarray]], list[tuple[int, int, str]]]:
        """The ``smf72_workload`` columns of the records at ``starts`` and the bad records."""
        n = starts.size
        bad: list[tuple[int, int, str]] = []
        reason = np.full(n, "", dtype=object)
        where = np.zeros(n, dtype=np.int64)

        def flag(mask: np.ndarray, off: int | np.ndarray, msg: str | np.ndarray) -> None:
            new = mask & (reason == "")
            reason[new] = msg if isinstance(msg, str) else msg[new]
            where[new] = off if np.isscalar(off) else np.asarray(off)[new]

        short = lengths < HEADER_72_3.size
        flag(short, 0, f"72.3 record shorter than its {HEADER_72_3.size}-byte header/triplets")
        hs = np.where(short, 0, starts)
        h = HEADER_72_3.columns(HEADER_72_3.gather(u8, hs))
        L = lengths

        def check_triplet(o, ln, num, at, name, need, *, exactly_one=False):
            if exactly_one:
                flag(num != 1, at, f"{name} triplet: expected 1 section, found another count")
            else:
                flag(num < 1, at, f"{name} triplet: section missing")
            flag((num > 0) & (ln < need), at, f"{name} triplet: section shorter than {need} bytes")
            flag((num > 0) & (o < HEADER_LEN_SUBTYPES), at, f"{name} triplet: offset into header")
            flag(o + ln * num > L, at, f"{name} triplet: sections run past the end of the record")

        check_triplet(h["prs"], h["prl"], h["prn"], 28, "RMF product", RMF_PRODUCT.size)
        check_triplet(h["wms"], h["wml"], h["wmn"], 36, "WLM control", WLM_CONTROL.size,
                      exactly_one=True)
        scn = h["scn"]
        flag((scn > 0) & (h["scl"] < CLASS_PERIOD.size), 60,
             f"period data triplet: sections shorter than {CLASS_PERIOD.size} bytes")
        flag((scn > 0) & (h["scs"] < HEADER_LEN_SUBTYPES), 60, "period data triplet: offset "
             "into header")
        flag(h["scs"] + h["scl"] * scn > L, 60,
             "period data triplet: sections run past the end of the record")
        rtn = h["rtn"]
        flag((rtn > 0) & (h["rtl"] < RT_DISTRIBUTION.size), 68,
             f"response time distribution triplet: sections shorter than {RT_DISTRIBUTION.size} bytes")
        flag((rtn > 0) & (h["rts"] < HEADER_LEN_SUBTYPES), 68,
             "response time distribution triplet: offset into header")
        flag(h["rts"] + h["rtl"] * rtn > L, 68,
             "response time distribution triplet: sections run past the end of the record")

        ok = reason == ""
        prod = rmf_product_columns(u8, np.where(ok, starts + h["prs"], 0), codepage=codepage)
        flag(ok & ~prod["ok"], h["prs"] + 10,
             "RMF product section: malformed packed SMF72IST/SMF72DAT/SMF72INT")
        flag(ok & (prod["interval_s"] <= 0), h["prs"] + 18, "RMF product section: interval 0")
        ok = reason == ""
        wraw = WLM_CONTROL.gather(u8, np.where(ok, starts + h["wms"], 0))
        w = WLM_CONTROL.columns(wraw, codepage=codepage,
                                names=("mscf", "mflg", "mcpu", "msrb", "madj", "nffs", "nffi",
                                       "mcf", "mcfs"))
        wo = h["wms"]
        flag(ok & (w["mcpu"] == 0), wo + 52, "R723MCPU (CPU service coefficient) is zero")
        flag(ok & (w["msrb"] == 0), wo + 64, "R723MSRB (SRB service coefficient) is zero")
        flag(ok & (w["madj"] == 0), wo + 172, "R723MADJ (CPU-rate adjustment) is zero")

        # the period sections of every record still whole: their R723CRTX may yet condemn one
        cand = np.flatnonzero(reason == "")
        counts = scn[cand].astype(np.int64)
        rep = np.repeat(np.arange(cand.size), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        k = np.arange(rep.size) - first
        pin = h["scs"][cand][rep] + k * h["scl"][cand][rep]  # period offset within its record
        p = CLASS_PERIOD.columns(CLASS_PERIOD.gather(u8, starts[cand][rep] + pin),
                                 codepage=codepage)
        crtx = p["crtx"].astype(np.int64)
        past = (crtx > 0) & (crtx >= rtn[cand][rep].astype(np.int64))
        if past.any():
            per_record = np.zeros(cand.size, dtype=bool)
            np.logical_or.at(per_record, rep, past)
            where_past = np.zeros(cand.size, dtype=np.int64)
            where_past[rep[past][::-1]] = pin[past][::-1]  # the first such period of each record
            mask = np.zeros(n, dtype=bool)
            mask[cand] = per_record
            at = np.zeros(n, dtype=np.int64)
            at[cand] = where_past
            flag(mask, at, "R723CRTX points past the record's response time distribution sections")
        # bucket bounds come from the record's map (entry 0); a map that does not rise cannot bound
        # anything, so a record whose periods use one is not decoded
        rt_map = RT_DISTRIBUTION.columns(RT_DISTRIBUTION.gather(
            u8, np.where(rtn[cand] > 0, starts[cand] + h["rts"][cand], 0)))
        bounds = np.column_stack([rt_map[f"trdb_{i + 1:02d}"] for i in range(RT_BUCKETS - 1)]
                                 ).astype(np.float64)
        uses_map = np.zeros(cand.size, dtype=bool)
        np.logical_or.at(uses_map, rep, crtx > 0)
        bad_map = uses_map & ~((bounds[:, 0] > 0) & (np.diff(bounds, axis=1) > 0).all(axis=1))
        mask = np.zeros(n, dtype=bool)
        mask[cand] = bad_map
        flag(mask, h["rts"], "response time distribution map (entry 0) is not a rising list of "
             "percentages")

        ok = reason == ""
        for i in np.flatnonzero(~ok):
            bad.append((int(i), int(where[i]), str(reason[i])))
        keep_rec = ok[cand]
        good = cand[keep_rec]
        if good.size == 0:
            return {TABLE: {c: np.zeros(0) for c in COLUMNS}}, bad
        keep = keep_rec[rep]
        # renumber the kept periods' records 0..good.size-1
        rep = (np.cumsum(keep_rec) - 1)[rep[keep]]
        pin = pin[keep]
        crtx = crtx[keep]
        p = {key: v[keep] for key, v in p.items()}
        bounds = bounds[keep_rec]

        # text columns of the control section only for good records
        wtext = WLM_CONTROL.columns(wraw[good], codepage=codepage,
                                    names=("workload_name", "class_name"))
        ppos = starts[good][rep] + pin

        wrep = {key: v[good][rep] for key, v in w.items()}
        interval_s = prod["interval_s"][good][rep]
        d = derive(p, wrep, interval_s)
        out = {
            "system_id": system_ids[good][rep],
            "sysplex": prod["sysplex"][good][rep],
            "interval_start_at": prod["interval_start_at"][good][rep],
            "interval_s": interval_s,
            "class_name": wtext["class_name"][rep],
            "is_report_class": (wrep["mscf"] & 0x80) != 0,
            "period": p["period"],
            "workload_name": wtext["workload_name"][rep],
            "importance": p["importance"],
            "ended": p["ended"],
            "resp_ms": d["resp_ms"],
            "service_units": p["csrv"],
        }
        for key in ("tcb_s", "srb_s", "cpu_s", "ziip_s", "ziip_cp_equiv_s", "ziip_mt_capacity", "ziip_on_cp_s",
                    "appl_cp_pct", "appl_iip_pct", "appl_iipcp_pct"):
            out[key] = d[key]
        for key in ("cpu_using_samples", "cpu_delay_samples", "ziip_using_samples",
                    "ziip_on_cp_using_samples", "ziip_delay_samples", "total_using_samples",
                    "total_delay_samples"):
            out[key] = p[key]
        out.update(goals(p))
        has_midpoint = h["scl"][good][rep] >= RT_MIDPOINT_OFFSET + CLASS_PERIOD_RT_MIDPOINT.size
        rtdm = CLASS_PERIOD_RT_MIDPOINT.columns(CLASS_PERIOD_RT_MIDPOINT.gather(
            u8, np.where(has_midpoint, ppos + RT_MIDPOINT_OFFSET, 0)))["rtdm"]
        out["rt_midpoint_ms"] = np.where(has_midpoint, rtdm.astype(np.float64), np.nan)
        has_rt = crtx > 0
        arrays = RT_DISTRIBUTION.columns(RT_DISTRIBUTION.gather(
            u8, np.where(has_rt, starts[good][rep] + h["rts"][good][rep] + crtx * h["rtl"][good][rep], 0)))
        period_bounds = np.where(has_rt[:, None], bounds[rep], np.nan)
        for j, col in enumerate(RT_BOUND_COLUMNS):
            out[col] = period_bounds[:, j]
        for j, col in enumerate(RT_COUNT_COLUMNS):
            out[col] = np.where(has_rt, arrays[f"trdb_{j + 1:02d}"].astype(np.int64), 0)
        return {TABLE: {c: out[c] for c in COLUMNS}}, bad
