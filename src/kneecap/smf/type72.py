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

References
----------
IBM, *z/OS MVS System Management Facilities (SMF)*, record type 72 subtype 3: "Workload Manager
Control Section", "Service/Report Class Period Data Section".
IBM, *z/OS RMF Report Analysis* / *RMF User's Guide*, "Overview conditions based on SMF record
type 72-3" (TCBSEC, SRBSEC, TRANS, RTIME, EXVEL).
smf-notes §3 (kneecap shared reference), including the APPL% formulas as implemented in
franfcwong/smf2db ``api/api_72.py`` (MIT).
"""

from __future__ import annotations

import numpy as np

from kneecap.smf.header import HEADER_LEN_SUBTYPES, RMF_PRODUCT, rmf_product_columns
from kneecap.smf.layout import Field, Layout

__all__ = [
    "HEADER_72_3",
    "WLM_CONTROL",
    "CLASS_PERIOD",
    "TABLE",
    "COLUMNS",
    "Type72Subtype3",
    "derive",
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
        Field("crs1", 6, 1, "u", "R723CRS1", "x'80' heterogeneous report class period"),
        Field("period", 8, 1, "u", "R723CPER", "period number"),
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
            "ziip_on_cp_s": ziip_on_cp_s,
            "appl_cp_pct": 100.0 * cp_s / (t * mcf),
            "appl_iip_pct": 100.0 * ziip_s / (t * mcfs),
            "appl_iipcp_pct": 100.0 * ziip_on_cp_s / (t * mcf),
            "resp_ms": resp_ms,
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

        ok = reason == ""
        for i in np.flatnonzero(~ok):
            bad.append((int(i), int(where[i]), str(reason[i])))
        good = np.flatnonzero(ok)
        if good.size == 0:
            return {TABLE: {c: np.zeros(0) for c in COLUMNS}}, bad

        # text columns of the control section only for good records
        wtext = WLM_CONTROL.columns(wraw[good], codepage=codepage,
                                    names=("workload_name", "class_name"))
        counts = scn[good].astype(np.int64)
        rep = np.repeat(np.arange(good.size), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        k = np.arange(rep.size) - first
        ppos = (starts[good] + h["scs"][good])[rep] + k * h["scl"][good][rep]
        p = CLASS_PERIOD.columns(CLASS_PERIOD.gather(u8, ppos), codepage=codepage)

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
        for key in ("tcb_s", "srb_s", "cpu_s", "ziip_s", "ziip_cp_equiv_s", "ziip_on_cp_s",
                    "appl_cp_pct", "appl_iip_pct", "appl_iipcp_pct"):
            out[key] = d[key]
        for key in ("cpu_using_samples", "cpu_delay_samples", "ziip_using_samples",
                    "ziip_on_cp_using_samples", "ziip_delay_samples", "total_using_samples",
                    "total_delay_samples"):
            out[key] = p[key]
        return {TABLE: {c: out[c] for c in COLUMNS}}, bad
