"""Synthetic SMF writer for the tests and the benchmark.

Builds SMF 70.1, 72.3 and 30 (interval) records byte by byte from IBM's mappings, independently of the decoder
(own HFP encoder, own packed-decimal packing, plain ``struct``), then frames them the ways a dump
arrives on Linux: RDW-prefixed, BDW-blocked (RECFM=U copy), RECFM=VBS with spanned segments,
and gzip.

Layouts (offsets include the 4-byte RDW, as in IBM's tables):

* Standard header - IBM *z/OS MVS System Management Facilities (SMF)*, "Standard and extended
  SMF record headers": LEN 0, SEG 2, FLG 4, RTY 5, TME 6, DTE 10 (0cyydddF), SID 14, SSI 18,
  STY 22; RMF: TRN 24, triplets of 4/2/2 bytes from 28.
* RMF product section - SMF manual record type 70 "RMF product section": IST 10 (0HHMMSSF),
  DAT 14, INT 18 (MMSSTTTF), SAM 24, PTN 50, XNM 88, SNM 96; length 104.
* 72.3 - SMF manual record type 72 subtype 3 "Workload Manager Control Section" (MSCF 0, MCPU 52,
  MSRB 64, MWNM 80, MCNM 120, MCPG 160, MADJ 172, NFFI 240, NFFS 244, MCF 256, MCFS 260) and
  "Service/Report Class Period Data Section" (CRTX 0, CPER 8, CRTF 9, CRGF 10, CVAL 12, CPCT 16,
  CIMP 18, CCPU 32, CSRB 56, CRCP 184, CTET 200, CCUS 224, CTOT 228, CCDE 232, CTOU 344, SUPU 532,
  SUCU 536, SUPD 540, CSUP 544, CSUC 552; RTDM 608 from franfcwong smf72h.h) and "Response Time
  Distribution Data Section" (triplet RTS/RTL/RTN at 68/72/74; arrays of 14 4-byte binary entries,
  entry 0 the map of maximum percentages of the midpoint, entry R723CRTX a period's counts).
* 70.1 - SMF manual record type 70 subtype 1 "CPU Data Section" (WAT 0, CID 8, CNF 10, TYP 15,
  PAT 32), "PR/SM Partition Data Section" (LPM 0, LPN 8, BDN 10, BDS 12), "PR/SM Logical
  Processor Data Section" (PDT 0, VPA 8, CIX 14, EDT 16, ONT 40), "CPU Identification Section"
  (CIN 0, CTN 16), "CPU control section" (MOD 0, STF 5, CPA 28, WLA 32, LAC 36, SUP 64; MCR 148,
  CPA_actual 224, CPA_scaling_factor 228, MCF 232, MCFS 236 from ERBSMFR's SMF70CTL as franfcwong's C
  header has it); with SMT-2 cores also SMF70MTID (partition section 59) and the "Logical core data
  section" (triplet 84; franfcwong's smf70lcs), see :func:`record_70_1`.
"""

from __future__ import annotations

import datetime as dt
import gzip
import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

# --------------------------------------------------------------------------- encoders


def hfp_encode(x: float) -> bytes:
    """8-byte IBM hexadecimal float for ``x`` (value = 0.f x 16**(e - 64))."""
    if x == 0:
        return bytes(8)
    sign = 0x80 if x < 0 else 0
    a = abs(x)
    e = math.floor(math.log(a, 16)) + 1
    frac = a / 16.0**e
    while frac >= 1.0:
        e += 1
        frac /= 16.0
    while frac < 1.0 / 16:
        e -= 1
        frac *= 16.0
    f = round(frac * 2**56)
    if f >= 2**56:
        f >>= 4
        e += 1
    return bytes([sign | (e + 64)]) + f.to_bytes(7, "big")


def _bcd(digits: str, sign: str = "F") -> bytes:
    return bytes.fromhex(digits + sign)


def pack_date(d: dt.date) -> bytes:
    """0cyydddF."""
    c = (d.year - 1900) // 100
    return _bcd(f"0{c}{d.year % 100:02d}{d.timetuple().tm_yday:03d}")


def pack_time(t: dt.datetime) -> bytes:
    """0HHMMSSF."""
    return _bcd(f"0{t.hour:02d}{t.minute:02d}{t.second:02d}")


def pack_interval(seconds: float) -> bytes:
    """MMSSTTTF."""
    ms = round(seconds * 1000)
    mm, rest = divmod(ms, 60000)
    ss, ttt = divmod(rest, 1000)
    return _bcd(f"{mm:02d}{ss:02d}{ttt:03d}")


def e(text: str, n: int, codepage: str = "cp037") -> bytes:
    """EBCDIC, blank padded."""
    return text.ljust(n)[:n].encode(codepage)


# --------------------------------------------------------------------------- records


def header(rtype: int, subtype: int, sid: str, written: dt.datetime, total_len: int) -> bytes:
    """24-byte standard header with subtypes (RDW included)."""
    cs = (written.hour * 3600 + written.minute * 60 + written.second) * 100
    return (
        struct.pack(">HHBBI", total_len, 0, 0x40 | 0x1E, rtype, cs)
        + pack_date(written.date())
        + e(sid, 4)
        + e("RMF", 4)
        + struct.pack(">H", subtype)
    )


def product_section(start: dt.datetime, interval_s: float, sysplex: str, system: str,
                    ptn: int = 1, ziip: bool = True) -> bytes:
    b = bytearray(104)
    b[0:2] = bytes.fromhex("075F")
    b[2:10] = e("RMF", 8)
    b[10:14] = pack_time(start)
    b[14:18] = pack_date(start.date())
    b[18:22] = pack_interval(interval_s)
    b[24:28] = struct.pack(">I", int(interval_s))
    b[36:40] = bytes.fromhex("0001000F")
    b[40:48] = e("SP7.2.5", 8)
    b[49] = 0x04 if ziip else 0
    b[50] = ptn
    b[88:96] = e(sysplex, 8)
    b[96:104] = e(system, 8)
    return bytes(b)


@dataclass
class Period:
    """Inputs of one 72.3 period section, in natural units."""

    period: int = 1
    ended: int = 0
    resp_ms: float = 0.0          # mean response time
    tcb_s: float = 0.0            # TCB time incl. normalised zIIP time
    srb_s: float = 0.0
    ziip_s: float = 0.0           # zIIP engine time (not normalised)
    ziip_on_cp_s: float = 0.0
    cpu_using: int = 0
    cpu_delay: int = 0
    ziip_using: int = 0
    ziip_on_cp_using: int = 0
    ziip_delay: int = 0
    total_using: int = 0
    total_delay: int = 0
    importance: int = 2
    goal: str | None = None       # "percentile", "average", "velocity", "discretionary", "system"
    goal_value: int = 0           # R723CVAL: response time in goal_unit, or velocity %
    goal_unit: str = "ms"         # R723CRTF: "ms", "s", "min" or "h"
    goal_percentile: int = 0      # R723CPCT
    rt_midpoint_ms: int = 0       # R723RTDM (for a response time goal, the goal in ms)
    rt_buckets: Sequence[int] | None = None  # the period's 14 response time distribution counts


@dataclass
class Coefficients:
    mcpu: int = 10000      # CPU service coefficient 1.0 (x 10,000)
    msrb: int = 10000
    madj: int = 2000       # 16e6 / 2000 = 8000 SU per CPU second
    nffs: int = 256
    nffi: int = 256
    mcf: int = 1024
    mcfs: int = 1024

    @property
    def su_per_s(self) -> float:
        return 16e6 / self.madj


PERIOD_LEN = 752
WMS_LEN = 280
#: R723CRGF and R723CRTF bits (IBM SMF manual, 72.3 period section; IBM SMF Explorer SMF72S3).
GOAL_FLAG = {"percentile": 0x80, "average": 0x40, "velocity": 0x20, "discretionary": 0x10, "system": 0x08}
UNIT_FLAG = {"ms": 0x80, "s": 0x40, "min": 0x20, "h": 0x10}
#: The response time distribution map, entries 1-13: maximum % of the goal of each bucket. IBM's
#: "Response Time Distribution Data Section" lists 50, 60, 70, 80, 90, 100 for entries 1-6;
#: 110-150, 200 and 400 are franfcwong/smf2db's copy of IBM's bucket descriptions ("Response time
#: > 150% of the goal. Response time <= 200% of the goal." ...). What entry 14 holds (the bucket
#: above 400 %) is not in the public text: the writer leaves it 0.
RT_MAP_PCT = (50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 200, 400)
RT_ENTRIES = 14
RT_LEN = 4 * RT_ENTRIES


def rt_bucket_counts(resp_ms: Sequence[float] | np.ndarray, goal_ms: float) -> tuple[int, ...]:
    """The 14 bucket counts of transactions with these response times under a goal of ``goal_ms``.

    Bucket 1 holds responses <= 50 % of the goal, bucket ``k`` those above bound ``k - 1`` and at
    most bound ``k``, bucket 14 those above 400 % (smf2db's copy of IBM's bucket descriptions).
    """
    bounds = np.asarray(RT_MAP_PCT, dtype=float) / 100.0 * goal_ms
    which = np.searchsorted(bounds, np.asarray(resp_ms, dtype=float), side="left")
    return tuple(int(c) for c in np.bincount(which, minlength=RT_ENTRIES))


def period_section(p: Period, k: Coefficients, rt_index: int = 0) -> bytes:
    b = bytearray(PERIOD_LEN)
    su = k.su_per_s * k.mcpu / 1e4
    su_srb = k.su_per_s * k.msrb / 1e4
    struct.pack_into(">H", b, 0, rt_index)
    b[8] = p.period
    if p.goal is not None:
        b[9] = UNIT_FLAG[p.goal_unit] if p.goal in ("percentile", "average") else 0
        b[10] = GOAL_FLAG[p.goal]
        struct.pack_into(">IH", b, 12, p.goal_value, p.goal_percentile)
    struct.pack_into(">I", b, 608, p.rt_midpoint_ms)
    struct.pack_into(">H", b, 18, p.importance)
    b[24:32] = hfp_encode(p.tcb_s * su + p.srb_s * su_srb)
    b[32:40] = hfp_encode(p.tcb_s * su)
    b[56:64] = hfp_encode(p.srb_s * su_srb)
    struct.pack_into(">I", b, 184, p.ended)
    struct.pack_into(">I", b, 192, p.ended)
    b[200:208] = hfp_encode(p.resp_ms * p.ended / 1.024)
    struct.pack_into(">IIII", b, 224, p.cpu_using, p.total_delay, p.cpu_delay, 0)
    struct.pack_into(">I", b, 344, p.total_using)
    struct.pack_into(">III", b, 532, p.ziip_using, p.ziip_on_cp_using, p.ziip_delay)
    b[544:552] = hfp_encode(p.ziip_s * su)
    b[552:560] = hfp_encode(p.ziip_on_cp_s * su)
    return bytes(b)


def wms_section(class_name: str, workload: str, k: Coefficients, n_periods: int,
                report_class: bool = False) -> bytes:
    b = bytearray(WMS_LEN)
    b[0] = 0x80 if report_class else 0
    b[4:12] = e("WEEKPOL", 8)
    struct.pack_into(">IIII", b, 52, k.mcpu, 5000, 1, k.msrb)
    b[80:88] = e(workload, 8)
    b[120:128] = e(class_name, 8)
    struct.pack_into(">H", b, 160, n_periods)
    struct.pack_into(">I", b, 172, k.madj)
    struct.pack_into(">IIII", b, 240, k.nffi, k.nffs, 0, 0)
    struct.pack_into(">III", b, 256, k.mcf, k.mcfs, 1024)
    return bytes(b)


def record_72_3(sid: str, sysplex: str, start: dt.datetime, interval_s: float,
                class_name: str, workload: str, periods: Sequence[Period],
                k: Coefficients | None = None, report_class: bool = False) -> bytes:
    """One complete 72.3 record (RDW included)."""
    k = k or Coefficients()
    trip_end = 92  # triplets at 28 (product) and 36..84 (7 sections), 8 bytes each
    prs = trip_end
    wms = prs + 104
    scs = wms + WMS_LEN
    rts = scs + PERIOD_LEN * len(periods)
    # the periods with a distribution get arrays 1, 2, ... after the map (array 0)
    rt_index = list(np.cumsum([p.rt_buckets is not None for p in periods]) * [p.rt_buckets is not None
                                                                               for p in periods])
    rtn = 1 + int(max(rt_index, default=0)) if any(rt_index) else 0
    total = rts + RT_LEN * rtn
    trip = bytearray(trip_end - 24)
    struct.pack_into(">H", trip, 0, 8)
    struct.pack_into(">IHH", trip, 28 - 24, prs, 104, 1)
    struct.pack_into(">IHH", trip, 36 - 24, wms, WMS_LEN, 1)
    struct.pack_into(">IHH", trip, 60 - 24, scs, PERIOD_LEN, len(periods))
    if rtn:
        struct.pack_into(">IHH", trip, 68 - 24, rts, RT_LEN, rtn)
    arrays = b""
    if rtn:
        arrays = struct.pack(f">{RT_ENTRIES}I", *RT_MAP_PCT, 0) + b"".join(
            struct.pack(f">{RT_ENTRIES}I", *p.rt_buckets) for p in periods if p.rt_buckets is not None)
    written = start + dt.timedelta(seconds=interval_s)
    body = (
        header(72, 3, sid, written, total)
        + bytes(trip)
        + product_section(start, interval_s, sysplex, sid)
        + wms_section(class_name, workload, k, len(periods), report_class)
        + b"".join(period_section(p, k, int(i)) for p, i in zip(periods, rt_index, strict=True))
        + arrays
    )
    assert len(body) == total
    return body


@dataclass
class LogicalCPU:
    """One logical processor of a partition, times in seconds."""

    cpu_type: str            # "CP" or "IIP"
    online_s: float
    dispatch_s: float
    wait_s: float = 0.0      # MVS wait (own image only; per thread in SMT-2)
    parked_s: float = 0.0
    # threads of this logical core (2: SMT-2): PR/SM sees the core, MVS one logical processor a thread
    threads: int = 1


@dataclass
class Partition:
    name: str
    number: int
    cpus: list[LogicalCPU] = field(default_factory=list)


@dataclass
class Capacity:
    """The capacity fields of a 70.1 CPU control section (binary, as IBM's "CPU control section" has them)."""

    cpa: int = 0                  # SMF70CPA, 1/16 us of CPU per service unit (replaced by the next two)
    cpa_actual: int = 0           # SMF70CPA_actual
    cpa_scaling_factor: int = 0   # SMF70CPA_scaling_factor: adjustment factor = actual / scaling factor
    wla: int = 0                  # SMF70WLA, MSU/h available to the image
    lac: int = 0                  # SMF70LAC, the long-term (4-hour) average, MSU/h
    mcr: int = 0                  # SMF70MCR, model capacity rating, MSU/h
    stf: int = 0x10               # SMF70STF; x'10' (bit 3): SMF70LAC without CPU wait

    @property
    def msu_per_cpu_s(self) -> float:
        """MSU per CPU second, 16 / adjustment factor (SMF 30's text: 1/16 us per service unit)."""
        factor = self.cpa_actual / self.cpa_scaling_factor if self.cpa_actual else self.cpa
        return 16.0 / factor


#: A machine's 70.1 capacity fields for the simulated weeks: synthetic values, not a real processor's rating.
#: An adjustment factor of 5,760,000 / 10,000 = 576 sixteenths of a microsecond per service unit
#: (SMF70CPA_actual / SMF70CPA_scaling_factor) is 16 / 576 MSU per CPU second: 100 MSU/h per busy GCP.
SYNTHETIC_CAPACITY = Capacity(cpa_actual=5_760_000, cpa_scaling_factor=10_000, wla=200, mcr=600)


def rolling_lac(msu_per_h: Sequence[float], interval_s: float, hours: float = 4.0) -> list[int]:
    """The LAC a writer puts in each interval: the mean MSU/h of the intervals ending in the last ``hours``.

    Every interval the same length; the first intervals average what there is. Whole MSU (SMF70LAC is
    binary), rounded half up.
    """
    n = max(1, int(round(hours * 3600 / interval_s)))
    out = []
    for i in range(len(msu_per_h)):
        window = msu_per_h[max(0, i - n + 1): i + 1]
        out.append(int(math.floor(sum(window) / len(window) + 0.5)))
    return out


CPU_DATA_LEN = 72
PARTITION_LEN = 84
LPD_LEN = 88
CIN_LEN = 24
CPU_CONTROL_LEN = 344
CORE_LEN = 16
_TYP = {"CP": 0, "AAP": 1, "IIP": 2}


def record_70_1(sid: str, sysplex: str, start: dt.datetime, interval_s: float,
                partitions: Sequence[Partition], own_number: int,
                cpu_types: Sequence[str] = ("CP", "ICF", "IFL", "IIP"),
                capacity: Capacity | None = None, ziip_mt_capacity: float | None = None) -> bytes:
    """One 70.1 record: own image CPU data + PR/SM data for ``partitions`` (+ PHYSICAL), capacity fields.

    Logical cores of more than one thread (SMT-2, ``LogicalCPU.threads``) are laid out as IBM's
    70.1 has them with multithreading: one PR/SM logical processor section per core ("the terms
    logical processor and logical CPU refer to a logical core if multithreading is enabled"), one
    CPU data section per thread (the logical processors MVS dispatches), the own partition's
    SMF70MTID (59) 1, one logical core data section per own core (SMF70COS/COL/CON at 84:
    SMF70_CORE_ID 0, SMF70_CORE_FLG 2 x'80' LPAR busy valid, SMF70_CPU_SKIP 4, SMF70_CPU_NUM 6,
    SMF70_PROD 8, SMF70_LPAR_BUSY 12 in ms; franfcwong's smf70lcs), and ``ziip_mt_capacity`` in
    the CPU control section's SMF70MCFS (236, x 1024; SMF70MCF 232 1024, the CPs in MT-1).
    """
    own = next(p for p in partitions if p.number == own_number)
    parts = list(partitions) + [Partition("PHYSICAL", 0, [])]
    lps = [c for p in parts for c in p.cpus]
    n_threads = sum(c.threads for c in own.cpus)
    mt = any(c.threads > 1 for c in own.cpus)
    trip_end = 100
    prs = trip_end
    ccs = prs + 104
    cps = ccs + CPU_CONTROL_LEN
    bcs = cps + CPU_DATA_LEN * n_threads
    bvs = bcs + PARTITION_LEN * len(parts)
    cns = bvs + LPD_LEN * len(lps)
    cos = cns + CIN_LEN * len(cpu_types)
    total = cos + (CORE_LEN * len(own.cpus) if mt else 0)
    trip = bytearray(trip_end - 24)
    struct.pack_into(">H", trip, 0, 9)

    def t(at: int, off: int, ln: int, n: int) -> None:
        struct.pack_into(">IHH", trip, at - 24, off, ln, n)

    t(28, prs, 104, 1)
    t(36, ccs, CPU_CONTROL_LEN, 1)
    t(44, cps, CPU_DATA_LEN, n_threads)
    t(60, bcs, PARTITION_LEN, len(parts))
    t(68, bvs, LPD_LEN, len(lps))
    t(76, cns, CIN_LEN, len(cpu_types))
    if mt:
        t(84, cos, CORE_LEN, len(own.cpus))
    ctl = bytearray(CPU_CONTROL_LEN)
    struct.pack_into(">H", ctl, 0, 8562)
    struct.pack_into(">H", ctl, 64, sum(c.cpu_type == "IIP" for c in own.cpus))
    cap = capacity or Capacity()
    ctl[5] = cap.stf
    struct.pack_into(">III", ctl, 28, cap.cpa, cap.wla, cap.lac)
    struct.pack_into(">I", ctl, 148, cap.mcr)
    struct.pack_into(">II", ctl, 224, cap.cpa_actual, cap.cpa_scaling_factor)
    if ziip_mt_capacity is not None:
        struct.pack_into(">II", ctl, 232, 1024, round(ziip_mt_capacity * 1024))
    cpu = bytearray()
    core = bytearray()
    for i, c in enumerate(own.cpus):
        if mt:
            x = bytearray(CORE_LEN)
            struct.pack_into(">HBxHHII", x, 0, i, 0x80, len(cpu) // CPU_DATA_LEN, c.threads, 1024,
                             round(c.dispatch_s * 1e3))
            core += x
        for thread in range(c.threads):
            b = bytearray(CPU_DATA_LEN)
            struct.pack_into(">Q", b, 0, round(c.wait_s * 1e6 * 4096))
            struct.pack_into(">H", b, 8, 2 * i + thread if mt else i)
            b[10] = 0x09  # data for complete interval + online at end
            b[15] = _TYP[c.cpu_type]
            struct.pack_into(">Q", b, 32, round(c.parked_s * 1e6 * 4096))
            cpu += b
    bct = bytearray()
    lpd = bytearray()
    idx = 0
    for p in parts:
        b = bytearray(PARTITION_LEN)
        b[0:8] = e(p.name, 8)
        b[8] = p.number
        struct.pack_into(">HI", b, 10, len(p.cpus), idx)
        b[59] = 1 if p is own and mt else 0  # SMF70MTID: highest thread id, 0 without multithreading
        bct += b
        for j, c in enumerate(p.cpus):
            x = bytearray(LPD_LEN)
            struct.pack_into(">QH", x, 0, round(c.dispatch_s * 1e6), j)
            struct.pack_into(">H", x, 14, list(cpu_types).index(c.cpu_type) + 1)
            struct.pack_into(">Q", x, 16, round(c.dispatch_s * 1e6 * 0.99))
            struct.pack_into(">Q", x, 40, round(c.online_s * 1e6))
            lpd += x
        idx += len(p.cpus)
    cin = bytearray()
    for name in cpu_types:
        b = bytearray(CIN_LEN)
        b[0:16] = e(name, 16)
        struct.pack_into(">H", b, 16, 4)
        cin += b
    written = start + dt.timedelta(seconds=interval_s)
    body = (header(70, 1, sid, written, total) + bytes(trip)
            + product_section(start, interval_s, sysplex, sid, ptn=own_number)
            + bytes(ctl) + bytes(cpu) + bytes(bct) + bytes(lpd) + bytes(cin) + bytes(core))
    assert len(body) == total, (len(body), total)
    return body


@dataclass
class AddressSpace:
    """One address space's SMF 30 interval figures (times in seconds)."""

    job: str
    tcb_s: float
    srb_s: float = 0.5
    ziip_s: float = 0.0
    ziip_on_cp_s: float = 0.0
    service_class: str = "STCHI"
    report_class: str = "RSTC"
    work_type: str = "STC"
    job_id: str = "STC00001"


def record_30(sid: str, sysplex: str, start: dt.datetime, interval_s: float, a: AddressSpace,
              subtype: int = 2, step: int = 1) -> bytes:
    """One SMF 30 interval record (subtype 2, or 3 for the last interval) of address space ``a``.

    Header/self-defining section with triplets at SOF 24, IOF 32, COF 56, POF 80; subsystem
    (SYN 22, SYP 30), identification (JBN 0, PGM 8, STM 16, JNM 32, STN 40, ISS 148, IET 156),
    processor accounting (CPT 4, CPS 8, IST 36, IDT 40, TIME_ON_ZIIP 116, TIME_ZIIP_ON_CP 128;
    1/100 s) and performance (SRV 0, CSU 4, SRB 8, WLM 36, SCN 44, RCN 60, SNF 136) sections.
    """
    sub = bytearray(40)
    struct.pack_into(">H", sub, 0, subtype)
    sub[4:6] = e("05", 2)
    sub[6:14] = e("IBM MVS", 8)
    sub[22:30] = e(sid, 8)
    sub[30:38] = e(sysplex, 8)
    ident = bytearray(188)
    ident[0:8] = e(a.job, 8)
    ident[8:16] = e("BPXBATSL", 8)
    ident[16:24] = e("STEP1", 8)
    ident[32:40] = e(a.job_id, 8)
    struct.pack_into(">H", ident, 40, step)
    # TOD clock: microseconds since 1900-01-01, shifted left 12 bits
    iss = round((start - dt.datetime(1900, 1, 1)).total_seconds() * 1e6)
    struct.pack_into(">QQ", ident, 148, iss << 12, (iss + round(interval_s * 1e6)) << 12)
    cpu = bytearray(188)
    cs = round((start.hour * 3600 + start.minute * 60 + start.second) * 100)
    struct.pack_into(">II", cpu, 4, round(a.tcb_s * 100), round(a.srb_s * 100))
    struct.pack_into(">I", cpu, 36, cs)
    cpu[40:44] = pack_date(start.date())
    struct.pack_into(">III", cpu, 44, 7, 3, 0)  # IIP, RCT, HPT
    struct.pack_into(">I", cpu, 116, round(a.ziip_s * 100))
    struct.pack_into(">I", cpu, 128, round(a.ziip_on_cp_s * 100))
    perf = bytearray(220)
    struct.pack_into(">III", perf, 0, round(a.tcb_s * 4000), round(a.tcb_s * 3500), 40)
    perf[36:44] = e("ONLINE", 8)
    perf[44:52] = e(a.service_class, 8)
    perf[60:68] = e(a.report_class, 8)
    struct.pack_into(">H", perf, 136, 256)
    sections = [(24, sub), (32, ident), (56, cpu), (80, perf)]
    trip = bytearray(88 - 24)
    pos = 88
    for at, sec in sections:
        struct.pack_into(">IHH", trip, at - 24, pos, len(sec), 1)
        pos += len(sec)
    written = start + dt.timedelta(seconds=interval_s)
    rec = bytearray(header(30, subtype, sid, written, pos) + bytes(trip)
                    + b"".join(bytes(s) for _, s in sections))
    rec[18:22] = e(a.work_type, 4)  # SMF30WID where RMF records carry "RMF"
    assert len(rec) == pos
    return bytes(rec)


def record_other(rtype: int, subtype: int | None, sid: str, n: int = 40) -> bytes:
    """A record of a type kneecap has no decoder for (e.g. 99)."""
    written = dt.datetime(2025, 3, 3, 10, 0)
    if subtype is None:
        cs = 3600 * 100
        return (struct.pack(">HHBBI", n, 0, 0x1E, rtype, cs) + pack_date(written.date())
                + e(sid, 4) + bytes(n - 18))
    return header(rtype, subtype, sid, written, n) + bytes(n - 24)


# --------------------------------------------------------------------------- framing


def frame_rdw(records: Iterable[bytes]) -> bytes:
    """RDW-prefixed file (FTP ``site rdw``): records already start with their RDW."""
    return b"".join(records)


def frame_plain(records: Iterable[bytes]) -> bytes:
    """What a plain binary FTP delivers: the RDWs stripped."""
    return b"".join(r[4:] for r in records)


def _segments(rec: bytes, first_room: int, room: int) -> list[tuple[int, bytes]]:
    """Split record data into VBS segments (code, data) of at most ``room`` data bytes."""
    data = rec[4:]
    out: list[tuple[int, bytes]] = []
    take = first_room
    while data:
        out.append((0, data[:take]))
        data = data[take:]
        take = room
    if len(out) == 1:
        return [(0, out[0][1])]
    codes = [1] + [3] * (len(out) - 2) + [2]
    return [(c, d) for c, (_, d) in zip(codes, out, strict=True)]


def frame_bdw(records: Iterable[bytes], blksize: int = 27998, spanned: bool = False) -> bytes:
    """BDW-blocked file (RECFM=U copy of a RECFM=VB/VBS dump).

    With ``spanned`` the records are cut into segments that fill each block (RECFM=VBS), so
    records cross block boundaries; otherwise a record that does not fit starts a new block.
    """
    blocks: list[bytes] = []
    cur = bytearray()

    def flush() -> None:
        nonlocal cur
        if cur:
            blocks.append(struct.pack(">HH", len(cur) + 4, 0) + bytes(cur))
            cur = bytearray()

    for rec in records:
        if not spanned:
            if 4 + len(cur) + len(rec) > blksize:
                flush()
            cur += rec
            continue
        free = blksize - 4 - len(cur) - 4
        if free < 16:
            flush()
            free = blksize - 8
        for code, d in _segments(rec, free, blksize - 8):
            if 4 + len(cur) + 4 + len(d) > blksize:
                flush()
            cur += struct.pack(">HBB", len(d) + 4, code, 0) + d
    flush()
    return b"".join(blocks)


def frame_rdw_segments(records: Iterable[bytes], max_seg: int = 1000) -> bytes:
    """RDW-style file whose long records arrive as VBS segments (SDW-prefixed)."""
    out = bytearray()
    for rec in records:
        for code, d in _segments(rec, max_seg, max_seg):
            out += struct.pack(">HBB", len(d) + 4, code, 0) + d
    return bytes(out)


def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=1, mtime=0)


# --------------------------------------------------------------------------- a known week


#: The average response time goal of :func:`week_of_intervals`'s service class, ms.
WEEK_GOAL_MS = 50


def plain_intervals(n_intervals: int, classes: int = 3, start: dt.datetime = dt.datetime(2025, 3, 3)) -> list[bytes]:
    """Records of ``n_intervals`` fifteen-minute intervals: a 72.3 per class and a 70.1 (2 CP + 2 zIIP) each,
    with nothing to fit in them (the damage tests and ``benchmarks/bench_damage.py`` frame and break them)."""
    out = []
    for i in range(n_intervals):
        t0 = start + dt.timedelta(minutes=15 * i)
        for c in range(classes):
            out.append(record_72_3("SYSA", "PLEX1", t0, 900.0, f"C{c}", "W",
                                   [Period(period=1, ended=100 + i, tcb_s=1.0 + c)]))
        own = Partition("LPAR1", 1, [LogicalCPU("CP", 900, 100, 700), LogicalCPU("CP", 900, 100, 700),
                                     LogicalCPU("IIP", 900, 50, 800), LogicalCPU("IIP", 900, 50, 800)])
        out.append(record_70_1("SYSA", "PLEX1", t0, 900.0, [own], 1))
    return out


@dataclass
class WeekTruth:
    """The parameters the synthetic week was generated from (what the tests must recover)."""

    cpu_ms_per_tran: float
    ziip_eligible_fraction: float
    n_gcp: int
    n_ziip: int
    interval_s: float
    per_interval: list[dict] = field(default_factory=list)


def week_of_intervals(
    *,
    days: int = 7,
    interval_s: float = 900.0,
    tps_start: float = 20.0,
    tps_end: float = 80.0,
    cpu_ms_per_tran: float = 12.0,
    ziip_eligible_fraction: float = 0.6,
    noise: float = 0.02,
    seed: int = 7,
    sid: str = "SYSA",
    sysplex: str = "PLEX1",
    class_name: str = "ZCONHI",
    start: dt.datetime = dt.datetime(2025, 3, 3, 0, 0),
) -> tuple[list[bytes], WeekTruth]:
    """72.3 + 70.1 records for ``days`` of intervals of growing load on 2 GCPs + 2 zIIPs.

    Model: arrivals grow linearly from ``tps_start`` to ``tps_end`` with a daily cycle; every
    transaction costs ``cpu_ms_per_tran`` (x lognormal noise of sd ``noise``) of which
    ``ziip_eligible_fraction`` is zIIP-eligible. Eligible work overflows to the GCPs in
    proportion to zIIP utilisation squared (a crude stand-in for zIIP contention). Response time
    follows M/M/2 on the GCPs (Erlang C) plus a fixed 20 ms outside the CPU.

    The service class has an average response time goal of :data:`WEEK_GOAL_MS` and its 72.3
    periods carry the 14 response time buckets: ``Multinomial(ended, p)`` with ``p`` the buckets'
    mass under 20 ms plus an exponential with the rest of the interval's mean (a stand-in shape,
    not the M/M/2 distribution), drawn from a generator of their own (``default_rng([seed, 723])``)
    so that the other draws stay as they were. The report class copy has neither.
    """
    rng = np.random.default_rng(seed)
    rt_rng = np.random.default_rng([seed, 723])
    bounds_ms = np.asarray(RT_MAP_PCT, dtype=float) / 100.0 * WEEK_GOAL_MS
    n = int(days * 86400 / interval_s)
    truth = WeekTruth(cpu_ms_per_tran, ziip_eligible_fraction, 2, 2, interval_s)
    records: list[bytes] = []
    lpar_msu: list[float] = []
    lac_window = max(1, int(round(4 * 3600 / interval_s)))
    k = Coefficients()
    for i in range(n):
        t0 = start + dt.timedelta(seconds=i * interval_s)
        hour = (t0.hour + t0.minute / 60)
        daily = 0.6 + 0.4 * math.sin(math.pi * max(0.0, min(1.0, (hour - 6) / 14)))
        tps = (tps_start + (tps_end - tps_start) * i / max(n - 1, 1)) * daily
        ended = int(rng.poisson(tps * interval_s))
        d_ms = cpu_ms_per_tran * float(np.exp(rng.normal(0, noise)))
        cpu_s = ended * d_ms / 1000
        elig_s = cpu_s * ziip_eligible_fraction
        rho_z = min(elig_s / (2 * interval_s), 0.99)
        spill = min(0.5, rho_z**2)
        ziip_s = elig_s * (1 - spill)
        on_cp_s = elig_s * spill
        cp_s = cpu_s - ziip_s  # NFFS = 256: zIIP time equals its CP-equivalent time
        rho = min(cp_s / (2 * interval_s), 0.98)
        s_ms = d_ms * (1 - ziip_eligible_fraction * (1 - spill))
        c = _erlang_c(2, 2 * rho)
        resp_ms = 20.0 + s_ms + c * s_ms / (2 * (1 - rho))
        samples = int(interval_s * 4)  # 250 ms WLM sampling
        per = Period(
            period=1, ended=ended, resp_ms=resp_ms, tcb_s=cpu_s, ziip_s=ziip_s,
            ziip_on_cp_s=on_cp_s, cpu_using=int(samples * rho), cpu_delay=int(samples * rho**3),
            ziip_using=int(samples * rho_z), ziip_on_cp_using=int(samples * rho_z * spill),
            ziip_delay=int(samples * rho_z**3), total_using=int(samples * (rho + rho_z)),
            total_delay=int(samples * (rho**3 + rho_z**3)),
        )
        cdf = np.where(bounds_ms > 20.0, 1.0 - np.exp(-(bounds_ms - 20.0) / (resp_ms - 20.0)), 0.0)
        rt_p = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
        goal = replace(per, goal="average", goal_value=WEEK_GOAL_MS, rt_midpoint_ms=WEEK_GOAL_MS,
                       rt_buckets=tuple(int(c) for c in rt_rng.multinomial(ended, rt_p)))
        records.append(record_72_3(sid, sysplex, t0, interval_s, class_name, "ZCONWKL", [goal], k))
        # report class with the same work (RMF reports it both ways)
        records.append(record_72_3(sid, sysplex, t0, interval_s, "RZCON", "ZCONWKL", [per], k,
                                   report_class=True))
        background = 0.05 * interval_s
        own = Partition("LPAR1", 1, [
            LogicalCPU("CP", interval_s, cp_s / 2 + background, interval_s - cp_s / 2 - background),
            LogicalCPU("CP", interval_s, cp_s / 2 + background, interval_s - cp_s / 2 - background),
            LogicalCPU("IIP", interval_s, ziip_s / 2, interval_s - ziip_s / 2),
            LogicalCPU("IIP", interval_s, ziip_s / 2, interval_s - ziip_s / 2),
        ])
        other = Partition("LPAR2", 2, [LogicalCPU("CP", interval_s, 0.3 * interval_s)])
        # the LPAR's MSU/h from its CP dispatch time as written (whole microseconds), and its trailing LAC
        cp_dispatch_s = sum(round(c.dispatch_s * 1e6) / 1e6 for c in own.cpus if c.cpu_type == "CP")
        lpar_msu.append(cp_dispatch_s * 3600.0 / interval_s * SYNTHETIC_CAPACITY.msu_per_cpu_s)
        capacity = replace(SYNTHETIC_CAPACITY, lac=rolling_lac(lpar_msu[-lac_window:], interval_s)[-1])
        records.append(record_70_1(sid, sysplex, t0, interval_s, [own, other], own_number=1, capacity=capacity))
        truth.per_interval.append({
            "interval_start_at": t0, "ended": ended, "cpu_s": cpu_s, "ziip_s": ziip_s,
            "ziip_on_cp_s": on_cp_s, "resp_ms": resp_ms, "cp_s": cp_s,
            "cpu_ms_per_tran_true": d_ms, "lpar_msu_per_h": lpar_msu[-1], "lac_msu_per_h": capacity.lac,
        })
    return records, truth


def _erlang_c(c: int, a: float) -> float:
    """Erlang C probability of waiting, c servers, offered load a (Erlangs)."""
    if a <= 0:
        return 0.0
    s = sum(a**k / math.factorial(k) for k in range(c))
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (s + top)


def damaged(data: bytes, seed: int) -> bytes:
    """``data`` with 30 random bytes overwritten and 333 bytes cut out, the same for a seed."""
    import random

    rng = random.Random(seed)
    b = bytearray(data)
    for _ in range(30):
        b[rng.randrange(len(b))] = rng.randrange(256)
    cut = rng.randrange(len(b) - 1000)
    del b[cut:cut + 333]
    return bytes(b)
