r"""SMF record type 70 subtype 1 - RMF CPU activity: engines online and busy by processor type.

One 70.1 record per RMF interval and system carries (sections located by triplets):

* *CPU data sections* - one per logical CPU of this z/OS image: wait time ``SMF70WAT`` and
  parked time ``SMF70PAT`` (STCK units, bit 51 = 1 µs), type ``SMF70TYP`` (0 CP, 1 zAAP,
  2 zIIP);
* *PR/SM partition data sections* - one per LPAR: name, partition number ``SMF70LPN``, number
  ``SMF70BDN`` and index ``SMF70BDS`` of its logical-processor sections;
* *PR/SM logical processor data sections*: dispatch time ``SMF70PDT`` (µs), online time
  ``SMF70ONT`` and the 1-based index ``SMF70CIX`` into the CPU-identification section;
* *CPU-identification name sections*: ``SMF70CIN`` ("CP", "IIP", "AAP", "IFL", "ICF");
* the *CPU control section*: the capacity fields MSU is reckoned from, table ``smf70_capacity``
  (:mod:`kneecap.smf.type70_capacity`).

The measured image is the partition whose ``SMF70LPN`` equals the product section's
``SMF70PTN``.

Busy definitions (RMF CPU Activity report)
-----------------------------------------
For the logical processors *i* of one type in this partition, with online time :math:`O_i`,
dispatch time :math:`D_i`, wait :math:`W_i` and parked time :math:`P_i`, interval :math:`T`:

.. math::

    \text{LPAR BUSY\%} = 100\,\frac{\sum_i D_i}{\sum_i O_i},\qquad
    \text{MVS BUSY\%} = 100\,\frac{\sum_i (T - P_i - W_i)}{\sum_i (T - P_i)}

IBM: "LPAR BUSY - the percentage of the online time that the logical core was dispatched by
LPAR"; "MVS BUSY - the percentage of the online time that the logical processor was busy"
(parked time excluded under HiperDispatch; IBM SMF Explorer ``mvs_busy``). The type average is
time-weighted (sums, not a mean of percentages) so that broken records and partially online CPUs
combine correctly. This ignores partitions with wait completion = YES (there RMF subtracts
``SMF70WAT`` from ``SMF70PDT``) and SMT core-busy (``SMF70_LPAR_BUSY``).

Broken records
--------------
RMF splits a 70.1 that exceeds 32 KB into several self-contained records of the same interval.
The decoder therefore emits *additive parts* per record (sums of times and counts per type); the
reader's finaliser :func:`finalize` sums them by (system, interval start, interval length,
type) and only then forms percentages.

Consistency
-----------
A record whose sections disagree is quarantined, not decoded: two sections (of the triplets read,
or one of them and the header with its triplets) sharing bytes, or a partition's logical-processor
range (``SMF70BDS``, ``SMF70BDN``) past the logical-processor sections or overlapping another
partition's. Every logical-processor section belongs to one partition; a range widened over the
others' (issue 35: 40 CPs counted for a partition of 8, and its LPAR busy averaged over all 40)
would otherwise pass every per-field check.

Units: ``SMF70PDT`` and ``SMF70EDT`` are microseconds (IBM field text). ``SMF70ONT`` is taken as
microseconds as well, as SMF2JSON prints it (IBM's text was not found; see smf-notes §1.6).

References
----------
IBM, *z/OS MVS System Management Facilities (SMF)*, record type 70 subtype 1: "CPU Data
Section", "PR/SM Partition Data Section", "PR/SM Logical Processor Data Section", "CPU
Identification Section". IBM, *z/OS RMF Report Analysis*, "CPU Activity report" field
descriptions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from kneecap.smf import type70_capacity as capacity
from kneecap.smf.codecs import rmf_interval_s, smf_date
from kneecap.smf.framing import DECODER_FAILURES, SMFDataError
from kneecap.smf.header import (
    HEADER_LEN_SUBTYPES,
    RMF_PRODUCT,
    TRIPLET,
    parse_header,
    parse_rmf_product,
    read_triplet,
    rmf_product_columns,
)
from kneecap.smf.layout import Field, Layout

__all__ = [
    "HEADER_70_1",
    "CPU_DATA",
    "PARTITION",
    "LOGICAL_PROCESSOR",
    "CPU_ID",
    "TABLE",
    "PARTS_TABLE",
    "COLUMNS",
    "CPU_TYPE_BY_SMF70TYP",
    "Type70Subtype1",
    "decode_record",
    "finalize",
    "finalize_columns",
]

TABLE = "smf70_cpu"
#: Name of the intermediate (per-record, additive) table the decoder emits.
PARTS_TABLE = "smf70_cpu_parts"

HEADER_70_1 = Layout(
    "SMF 70.1 header/self-defining section (triplets)",
    [
        Field("trn", 24, 2, "u", "SMF70TRN", "number of triplets"),
        Field("prs", 28, 4, "u", "SMF70PRS", "offset to RMF product section"),
        Field("ccs", 36, 4, "u", "SMF70CCS", "offset to CPU control section"),
        Field("cps", 44, 4, "u", "SMF70CPS", "offset to CPU data sections"),
        Field("bcs", 60, 4, "u", "SMF70BCS", "offset to PR/SM partition data sections"),
        Field("bvs", 68, 4, "u", "SMF70BVS", "offset to PR/SM logical processor sections"),
        Field("cns", 76, 4, "u", "SMF70CNS", "offset to CPU-identification name sections"),
    ],
    source="IBM SMF manual, record type 70 'Header/self-defining section' (subtype 1)",
)

CPU_DATA = Layout(
    "SMF 70.1 CPU data section",
    [
        Field("wat", 0, 8, "stck", "SMF70WAT", "CPU wait time, bit 51 = 1 us"),
        Field("cpu_id", 8, 2, "u", "SMF70CID", "CPU identification number"),
        Field("cnf", 10, 1, "u", "SMF70CNF", "x'01' online at end; x'02' reconfigured"),
        Field("cpu_type_code", 15, 1, "u", "SMF70TYP", "0 CP, 1 zAAP, 2 zIIP"),
        Field("pat", 32, 8, "stck", "SMF70PAT", "parked time, bit 51 = 1 us"),
    ],
    source="IBM SMF manual, record type 70 subtype 1 'CPU Data Section'",
)

PARTITION = Layout(
    "SMF 70.1 PR/SM partition data section",
    [
        Field("lpar_name", 0, 8, "ebcdic", "SMF70LPM", "logical partition name"),
        Field("lpar_no", 8, 1, "u", "SMF70LPN", "logical partition number"),
        Field("n_lp", 10, 2, "u", "SMF70BDN", "number of logical processors"),
        Field("first_lp", 12, 4, "u", "SMF70BDS", "index of first logical processor section"),
    ],
    source="IBM SMF manual, record type 70 subtype 1 'PR/SM Partition Data Section'",
)

LOGICAL_PROCESSOR = Layout(
    "SMF 70.1 PR/SM logical processor data section",
    [
        Field("pdt_us", 0, 8, "u", "SMF70PDT", "total dispatch time, us"),
        Field("vpa", 8, 2, "u", "SMF70VPA", "logical CPU address"),
        Field("cix", 14, 2, "u", "SMF70CIX", "1-based index into CPU-identification sections"),
        Field("edt_us", 16, 8, "u", "SMF70EDT", "effective dispatch time, us"),
        Field("ont_us", 40, 8, "u", "SMF70ONT", "online time, us"),
    ],
    source="IBM SMF manual, record type 70 subtype 1 'PR/SM Logical Processor Data Section'",
)

CPU_ID = Layout(
    "SMF 70.1 CPU-identification name section",
    [
        Field("cpu_type", 0, 16, "ebcdic", "SMF70CIN", "processor type name: CP, IIP, ..."),
        Field("n_physical", 16, 2, "u", "SMF70CTN", "physical processors of this type"),
    ],
    source="IBM SMF manual, record type 70 subtype 1 'CPU Identification Section'",
)

#: SMF70TYP codes (IBM "CPU Data Section") mapped to SMF70CIN-style names.
CPU_TYPE_BY_SMF70TYP = {0: "CP", 1: "AAP", 2: "IIP"}

#: Columns of ``smf70_cpu`` in order.
COLUMNS: tuple[str, ...] = (
    "system_id",
    "sysplex",
    "interval_start_at",
    "interval_s",
    "cpu_type",
    "n_online",
    "online_s",
    "lpar_busy_pct",
    "mvs_busy_pct",
    "n_records",
)

_PART_SUMS = ("n_lp", "online_us", "dispatch_us", "n_mvs", "unparked_us", "busy_us")
#: The columns a part row is grouped by (one ``smf70_cpu`` row per distinct value).
_KEYS = ("system_id", "sysplex", "interval_start_at", "interval_s", "cpu_type")


def _field_index(layout: Layout, name: str) -> int:
    """Where field ``name`` is in the tuple ``layout.struct.unpack_from`` returns."""
    return [f.name for f in layout.fields].index(name)


# the sections decode_record reads most (16 to 48 per record on a busy CEC) are unpacked with the
# layouts' structs straight into tuples: they have no text field, and read_triplet has already
# checked that every section lies whole inside the record, which Layout.unpack would check again
_CPU_WAT, _CPU_TYP, _CPU_PAT = (_field_index(CPU_DATA, n) for n in ("wat", "cpu_type_code", "pat"))
_LP_PDT, _LP_CIX, _LP_ONT = (_field_index(LOGICAL_PROCESSOR, n) for n in ("pdt_us", "cix", "ont_us"))
_LPN_AT = PARTITION.field("lpar_no").offset


#: End of the last triplet the decoder reads (SMF70CNS/CNL/CNN at 76-83): no section starts before it.
_TRIPLETS_END = 84
#: The triplets whose sections must not share bytes (SMF 70.1 header/self-defining section), by offset.
_SECTION_TRIPLETS = ((28, "RMF product"), (36, "CPU control"), (44, "CPU data"), (60, "PR/SM partition"),
                     (68, "PR/SM logical processor"), (76, "CPU-identification name"))


def _check_sections(rec: bytes) -> None:
    """Raise :class:`SMFDataError` when two sections share bytes.

    The sections are those of :data:`_SECTION_TRIPLETS`, and the header with its triplets (the first
    :data:`_TRIPLETS_END` bytes).
    """
    spans = [(0, _TRIPLETS_END, "header and triplets", 0)]
    for at, name in _SECTION_TRIPLETS:
        off, length, number = TRIPLET.unpack_from(rec, at)
        if number and length:
            spans.append((off, off + length * number, name, at))
    spans.sort()
    for (a0, a1, a_name, _), (b0, b1, b_name, b_at) in zip(spans, spans[1:]):
        if b0 < a1:
            raise SMFDataError(f"sections overlap: {a_name} (bytes {a0}..{a1 - 1}) and {b_name} "
                               f"(bytes {b0}..{b1 - 1})", offset=b_at)


def _check_partition_ranges(rec: bytes, part_pos: list[int], n_sections: int, codepage: str) -> None:
    """Raise :class:`SMFDataError` when a partition's logical processors are not its own.

    That is when its range (``SMF70BDS``, ``SMF70BDN``) lies past the ``n_sections`` logical-processor
    sections or overlaps another partition's.
    """
    ranges = []
    for k, pos in enumerate(part_pos):
        first, n_lp = int.from_bytes(rec[pos + 12 : pos + 16], "big"), int.from_bytes(rec[pos + 10 : pos + 12], "big")
        if n_lp:
            ranges.append((first, k, first + n_lp, pos))

    def name(pos: int) -> str:
        p = PARTITION.unpack(rec, pos, codepage=codepage)
        return f"partition {p['lpar_name']} (SMF70LPN {p['lpar_no']})"

    for first, _, end, pos in ranges:
        if end > n_sections:
            raise SMFDataError(f"{name(pos)}: logical processor sections {first}..{end - 1} but only "
                               f"{n_sections} logical processor sections", offset=pos + 10)
    ranges.sort()
    for (a0, _, a1, a_pos), (b0, _, b1, b_pos) in zip(ranges, ranges[1:]):
        if b0 < a1:
            raise SMFDataError(f"{name(b_pos)}: logical processor sections {b0}..{b1 - 1} overlap those of "
                               f"{name(a_pos)}: {a0}..{a1 - 1}", offset=b_pos + 10)


def _sections(rec: bytes, trip_at: int, name: str, layout: Layout) -> list[int]:
    t = read_triplet(rec, trip_at, name=name, min_length=layout.size)
    return t.positions()


def decode_record(rec: bytes, *, codepage: str = "cp037") -> dict[str, list[dict[str, Any]]]:
    """Decode one 70.1 record into additive per-type parts (table ``smf70_cpu_parts``) and its capacity row.

    The capacity row (table ``smf70_capacity``) comes from the CPU control section:
    :mod:`kneecap.smf.type70_capacity`.

    The ingest decodes 70.1 a batch at a time with :class:`Type70Subtype1`, which gives the same rows and hands
    the records its checks do not vouch for to this function.

    Raises :class:`SMFDataError` (offset within the record) for structural damage.
    """
    if len(rec) < HEADER_70_1.size:
        raise SMFDataError(f"70.1 record of {len(rec)} bytes is shorter than its header "
                           f"({HEADER_70_1.size} bytes)", offset=0)
    hdr = parse_header(rec, codepage=codepage)
    prod_t = read_triplet(rec, 28, name="RMF product", min_length=RMF_PRODUCT.size)
    prod = parse_rmf_product(rec, prod_t, codepage=codepage)
    interval_us = prod.interval_s * 1e6
    if interval_us <= 0:
        raise SMFDataError("SMF70INT interval length is zero", offset=prod_t.offset + 18)
    _check_sections(rec)
    keys = {"system_id": hdr.system_id, "sysplex": prod.sysplex, "interval_start_at": prod.interval_start_at,
            "interval_s": prod.interval_s}
    capacity_rows = capacity.decode_control(rec, keys)

    parts: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(_PART_SUMS, 0.0))

    # MVS view: this image's logical CPUs (CPU data sections)
    cpu_struct = CPU_DATA.struct
    for pos in _sections(rec, 44, "CPU data", CPU_DATA):
        c = cpu_struct.unpack_from(rec, pos)
        name = CPU_TYPE_BY_SMF70TYP.get(c[_CPU_TYP])
        if name is None:
            raise SMFDataError(f"SMF70TYP {c[_CPU_TYP]} is not 0, 1 or 2",
                               offset=pos + 15)
        unparked = interval_us - c[_CPU_PAT] / 4096.0
        wait = c[_CPU_WAT] / 4096.0
        if unparked < 0 or wait > interval_us * 1.01:
            raise SMFDataError("SMF70WAT/SMF70PAT exceed the interval length", offset=pos)
        if unparked > 0:
            p = parts[name]
            p["n_mvs"] += 1
            p["unparked_us"] += unparked
            p["busy_us"] += max(unparked - wait, 0.0)

    # PR/SM view: logical processors of this partition
    names = [
        CPU_ID.unpack(rec, pos, codepage=codepage)["cpu_type"]
        for pos in _sections(rec, 76, "CPU-identification name", CPU_ID)
    ]
    lp_pos = _sections(rec, 68, "PR/SM logical processor", LOGICAL_PROCESSOR)
    lp_struct = LOGICAL_PROCESSOR.struct
    part_pos = _sections(rec, 60, "PR/SM partition", PARTITION)
    _check_partition_ranges(rec, part_pos, len(lp_pos), codepage)
    for pos in part_pos:
        if rec[pos + _LPN_AT] != prod.partition_no:  # another partition: its name need not be decoded
            continue
        part = PARTITION.unpack(rec, pos, codepage=codepage)
        if part["lpar_name"] == "PHYSICAL":
            continue
        first, n_lp = part["first_lp"], part["n_lp"]
        if first + n_lp > len(lp_pos):
            raise SMFDataError(
                f"partition {part['lpar_name']}: logical processors {first}..{first + n_lp - 1} "
                f"but only {len(lp_pos)} logical processor sections", offset=pos + 10)
        for lpos in lp_pos[first : first + n_lp]:
            lp = lp_struct.unpack_from(rec, lpos)
            cix = lp[_LP_CIX]
            if not 1 <= cix <= len(names):
                raise SMFDataError(f"SMF70CIX {cix} outside 1..{len(names)}",
                                   offset=lpos + 14)
            p = parts[names[cix - 1]]
            if lp[_LP_ONT] > 0:
                p["n_lp"] += 1
            p["online_us"] += lp[_LP_ONT]
            p["dispatch_us"] += lp[_LP_PDT]
        break

    rows = []
    for cpu_type, p in sorted(parts.items()):
        rows.append({
            "system_id": hdr.system_id,
            "sysplex": prod.sysplex,
            # a datetime, not a pd.Timestamp: the ingest reads these rows without pandas, and a
            # frame of them still gets datetime64[us]
            "interval_start_at": prod.interval_start_at,
            "interval_s": prod.interval_s,
            "cpu_type": cpu_type,
            **p,
        })
    return {PARTS_TABLE: rows, capacity.TABLE: capacity_rows}


def finalize(parts: pd.DataFrame) -> pd.DataFrame:
    """Combine per-record parts (incl. RMF broken records) into ``smf70_cpu`` rows.

    Groups by (system_id, sysplex, interval_start_at, interval_s, cpu_type), sums the parts and
    forms the percentages defined in the module docstring. ``n_online`` is the number of this
    partition's logical processors of the type that were online during the interval (from
    PR/SM data), or - without PR/SM data - the CPU data sections that were not parked all
    interval; ``online_s`` is their summed online time.
    """
    import pandas as pd  # here: the ingest finalises plain columns (finalize_columns) without pandas

    if parts.empty:
        return pd.DataFrame({c: pd.Series(dtype=_dtype(c)) for c in COLUMNS})
    keys = list(_KEYS)
    g = parts.groupby(keys, as_index=False, sort=True)
    s = g[list(_PART_SUMS)].sum()
    s["n_records"] = g.size()["size"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        lpar = np.where(s["online_us"] > 0, 100.0 * s["dispatch_us"] / s["online_us"], np.nan)
        mvs = np.where(s["unparked_us"] > 0, 100.0 * s["busy_us"] / s["unparked_us"], np.nan)
    out = s[keys].copy()
    out["n_online"] = np.where(s["n_lp"] > 0, s["n_lp"], s["n_mvs"]).astype(np.int64)
    out["online_s"] = np.where(s["online_us"] > 0, s["online_us"] / 1e6, np.nan)
    out["lpar_busy_pct"] = lpar
    out["mvs_busy_pct"] = mvs
    out["n_records"] = s["n_records"].astype(np.int64)
    return out[list(COLUMNS)].reset_index(drop=True)


def _kahan_group_sums(values: np.ndarray, group: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Sums of ``values`` per group as pandas' groupby ``sum`` forms them, bit for bit.

    pandas adds a group's values in row order with Kahan compensation and skips NaN; doing the same here (one step
    per position within the groups, over all groups at once) keeps :func:`finalize_columns` equal to
    :func:`finalize` to the last bit when RMF broke an interval's record into three or more.
    """
    n_groups = sizes.size
    order = np.argsort(group, kind="stable")
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    total = np.zeros(n_groups)
    comp = np.zeros(n_groups)
    for k in range(int(sizes.max()) if n_groups else 0):
        live = np.flatnonzero(sizes > k)
        val = values[order[first[live] + k]]
        y = val - comp[live]
        t = total[live] + y
        c = t - total[live] - y
        c[c != c] = 0.0  # pandas resets it when a value is infinite
        counted = ~np.isnan(val)
        total[live] = np.where(counted, t, total[live])
        comp[live] = np.where(counted, c, comp[live])
    return total


def finalize_columns(parts: Mapping[str, Sequence[Any]]) -> dict[str, np.ndarray]:
    """:func:`finalize` on plain columns (``smf70_cpu_parts`` rows as lists per column), without pandas.

    The same rows in the same order with the same values and dtypes as ``finalize(pd.DataFrame(parts))``: groups
    sorted by their keys, rows with a missing key dropped (as pandas' groupby drops them), sums in pandas' order.
    """
    n = len(parts["system_id"]) if parts else 0
    stamps = np.asarray(parts["interval_start_at"] if n else [], dtype="datetime64[us]")
    keys = list(zip(parts["system_id"], parts["sysplex"], stamps.astype(np.int64).tolist(),
                    parts["interval_s"], parts["cpu_type"], strict=True)) if n else []
    present = [not any(k is None or k != k for k in key) and not np.isnat(stamps[i])
               for i, key in enumerate(keys)]
    number = {key: g for g, key in enumerate(sorted({key for key, ok in zip(keys, present, strict=True) if ok}))}
    rows = np.flatnonzero(np.array(present, dtype=bool)) if n else np.zeros(0, np.int64)
    group = np.array([number[keys[i]] for i in rows.tolist()], dtype=np.int64)
    sizes = np.bincount(group, minlength=len(number)).astype(np.int64)
    sums = {c: _kahan_group_sums(np.asarray(parts[c], dtype=np.float64)[rows], group, sizes) for c in _PART_SUMS}
    ordered = sorted(number, key=number.__getitem__)
    out: dict[str, np.ndarray] = {
        "system_id": np.array([k[0] for k in ordered], dtype=object),
        "sysplex": np.array([k[1] for k in ordered], dtype=object),
        "interval_start_at": np.array([k[2] for k in ordered], dtype=np.int64).astype("datetime64[us]"),
        "interval_s": np.array([k[3] for k in ordered], dtype=np.float64),
        "cpu_type": np.array([k[4] for k in ordered], dtype=object),
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        out["n_online"] = np.where(sums["n_lp"] > 0, sums["n_lp"], sums["n_mvs"]).astype(np.int64)
        out["online_s"] = np.where(sums["online_us"] > 0, sums["online_us"] / 1e6, np.nan)
        out["lpar_busy_pct"] = np.where(sums["online_us"] > 0, 100.0 * sums["dispatch_us"] / sums["online_us"],
                                        np.nan)
        out["mvs_busy_pct"] = np.where(sums["unparked_us"] > 0, 100.0 * sums["busy_us"] / sums["unparked_us"],
                                       np.nan)
    out["n_records"] = sizes
    return {c: out[c] for c in COLUMNS}


def _dtype(c: str) -> str:
    if c in ("system_id", "sysplex", "cpu_type"):
        return "object"
    if c == "interval_start_at":
        return "datetime64[us]"
    if c in ("n_online", "n_records"):
        return "int64"
    return "float64"


# Batch decoding -------------------------------------------------------------------------------

#: All five triplets decode_record reads, for reading them in every record of a batch at once.
_TRIPLETS = Layout(
    "SMF 70.1 triplets read by the decoder",
    [
        Field("prs", 28, 4, "u", "SMF70PRS", "offset to RMF product section"),
        Field("prl", 32, 2, "u", "SMF70PRL", "length of RMF product section"),
        Field("prn", 34, 2, "u", "SMF70PRN", "number of RMF product sections"),
        Field("ccs", 36, 4, "u", "SMF70CCS", "offset to CPU control section"),
        Field("ccl", 40, 2, "u", "SMF70CCL", "length of CPU control section"),
        Field("ccn", 42, 2, "u", "SMF70CCN", "number of CPU control sections"),
        Field("cps", 44, 4, "u", "SMF70CPS", "offset to CPU data sections"),
        Field("cpl", 48, 2, "u", "SMF70CPL", "length of a CPU data section"),
        Field("cpn", 50, 2, "u", "SMF70CPN", "number of CPU data sections"),
        Field("bcs", 60, 4, "u", "SMF70BCS", "offset to PR/SM partition data sections"),
        Field("bcl", 64, 2, "u", "SMF70BCL", "length of a partition data section"),
        Field("bcn", 66, 2, "u", "SMF70BCN", "number of partition data sections"),
        Field("bvs", 68, 4, "u", "SMF70BVS", "offset to PR/SM logical processor sections"),
        Field("bvl", 72, 2, "u", "SMF70BVL", "length of a logical processor section"),
        Field("bvn", 74, 2, "u", "SMF70BVN", "number of logical processor sections"),
        Field("cns", 76, 4, "u", "SMF70CNS", "offset to CPU-identification name sections"),
        Field("cnl", 80, 2, "u", "SMF70CNL", "length of a CPU-identification name section"),
        Field("cnn", 82, 2, "u", "SMF70CNN", "number of CPU-identification name sections"),
    ],
    source="IBM SMF manual, record type 70 'Header/self-defining section' (subtype 1)",
)

_PART_COLUMNS = _KEYS + _PART_SUMS


def _unique_bytes(u8: np.ndarray, positions: np.ndarray, width: int) -> tuple[list[bytes], np.ndarray]:
    """The distinct ``width``-byte strings at ``positions`` and, per position, which one it is."""
    raw = np.take(u8, positions[:, None] + np.arange(width), mode="clip")
    uniq, inv = np.unique(np.ascontiguousarray(raw).view(f"V{width}").reshape(-1), return_inverse=True)
    return [bytes(u) for u in uniq.tolist()], inv.reshape(-1)


def _interval_s(b: bytes) -> float | None:
    """SMF7xINT in seconds as :func:`parse_rmf_product` forms it, or None where it would raise."""
    try:
        return rmf_interval_s(b)
    except SMFDataError:
        return None


def _valid_date(b: bytes) -> bool:
    """Whether :func:`parse_header` accepts ``b`` as SMFxDTE."""
    try:
        smf_date(b)
    except SMFDataError:
        return False
    return True


def _sections_ok(t: dict[str, np.ndarray], s: str, length_and_count: tuple[str, str], n_rec: np.ndarray,
                 min_length: int) -> np.ndarray:
    """Per record, whether :func:`read_triplet` accepts the triplet (columns ``s``, ``l``, ``n`` of ``t``)."""
    ln_col, num_col = length_and_count
    off, ln, num = t[s].astype(np.int64), t[ln_col].astype(np.int64), t[num_col].astype(np.int64)
    return (num == 0) | ((off >= HEADER_LEN_SUBTYPES) & (ln >= min_length) & (off + ln * num <= n_rec))


def _sections_overlap(t: dict[str, np.ndarray]) -> np.ndarray:
    """Per record, whether its sections overlap as :func:`_check_sections` refuses them.

    Two sections of :data:`_SECTION_TRIPLETS` sharing bytes, or one in the header and its triplets.
    """
    spans = []
    for s, ln, num in (("prs", "prl", "prn"), ("ccs", "ccl", "ccn"), ("cps", "cpl", "cpn"), ("bcs", "bcl", "bcn"),
                       ("bvs", "bvl", "bvn"), ("cns", "cnl", "cnn")):
        off, size = t[s].astype(np.int64), t[ln].astype(np.int64) * t[num].astype(np.int64)
        spans.append((off, off + size, size > 0))
    bad = np.zeros(spans[0][0].size, dtype=bool)
    for i, (a0, a1, a_on) in enumerate(spans):
        bad |= a_on & (a0 < _TRIPLETS_END)
        for b0, b1, b_on in spans[i + 1:]:
            bad |= a_on & b_on & (np.maximum(a0, b0) < np.minimum(a1, b1))
    return bad


def _expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ``counts[i]`` items per record: each item's record and its index within the record."""
    rep = np.repeat(np.arange(counts.size), counts)
    k = np.arange(rep.size) - np.repeat(np.cumsum(counts) - counts, counts)
    return rep, k


class Type70Subtype1:
    """Batch decoder for SMF 70.1 (registered as ``DECODERS[(70, 1)]`` in :mod:`kneecap.smf.reader`).

    It emits the same ``smf70_cpu_parts`` rows as :func:`decode_record` applied to each record, in record order, with
    the same float sums bit for bit: the sections of all records of a batch are gathered with numpy and summed per
    (record, type) in section order (``np.bincount`` adds its weights sequentially, as decode_record's loop does).
    Records that any check of decode_record would reject - or that the vectorised checks cannot vouch for - are
    handed to :func:`decode_record` one by one, so damaged records are quarantined with its messages and offsets.
    """

    record_type = 70
    subtype = 1
    tables = (PARTS_TABLE, capacity.TABLE)

    def decode_batch(
        self,
        u8: np.ndarray,
        starts: np.ndarray,
        lengths: np.ndarray,
        *,
        codepage: str = "cp037",
        system_ids: np.ndarray,
    ) -> tuple[dict[str, dict[str, np.ndarray]], list[tuple[int, int, str]]]:
        """The ``smf70_cpu_parts`` and ``smf70_capacity`` columns of the records at ``starts``, and the bad records.

        Parameters
        ----------
        u8 : numpy.ndarray
            The batch's bytes (uint8).
        starts, lengths : numpy.ndarray
            Offset in ``u8`` and length of each record (RDW included).
        codepage : str
            EBCDIC code page of the text fields.
        system_ids : numpy.ndarray
            SMFxSID of each record, decoded (object array of str).

        Returns
        -------
        tables : dict
            ``{"smf70_cpu_parts": columns, "smf70_capacity": columns}``, one array per column of
            :func:`decode_record`'s rows.
        bad : list of tuple
            ``(index into starts, offset within the record, reason)`` per quarantined record.
        """
        starts = np.asarray(starts, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        try:
            cols, cap, fallback = self._vectorised(u8, starts, lengths, codepage, system_ids)
        except DECODER_FAILURES:
            # odd data the vectorised path did not foresee: the record decoder says what is wrong
            cols, cap, fallback = _empty_parts(), _empty_capacity(), np.arange(starts.size)
        got_rows: dict[str, list[dict[str, Any]]] = {PARTS_TABLE: [], capacity.TABLE: []}
        got_rec: dict[str, list[int]] = {PARTS_TABLE: [], capacity.TABLE: []}
        bad: list[tuple[int, int, str]] = []
        for i in fallback.tolist():
            s0 = int(starts[i])
            rec = u8[s0 : s0 + int(lengths[i])].tobytes()
            try:
                got = decode_record(rec, codepage=codepage)
            except SMFDataError as exc:
                bad.append((i, exc.offset if exc.offset is not None else 0, exc.reason))
                continue
            except DECODER_FAILURES as exc:
                bad.append((i, 0, f"decoder failed: {exc!r}"))
                continue
            for name, table_rows in got.items():
                got_rows[name].extend(table_rows)
                got_rec[name].extend([i] * len(table_rows))
        # put the record decoder's rows where their records are, as a record-by-record decode would
        return {PARTS_TABLE: _merge(cols, got_rows[PARTS_TABLE], got_rec[PARTS_TABLE], _PART_COLUMNS),
                capacity.TABLE: _merge(cap, got_rows[capacity.TABLE], got_rec[capacity.TABLE], capacity.COLUMNS)}, bad

    @staticmethod
    def _vectorised(
        u8: np.ndarray, starts: np.ndarray, lengths: np.ndarray, codepage: str, system_ids: np.ndarray
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
        """Parts and capacity rows of the records the checks vouch for (``_rec``: each row's record); the others."""
        n = starts.size
        L = lengths
        # the last triplet ends at 84; a shorter record fails in decode_record's read_triplet
        ok = L >= _TRIPLETS.size
        hs = np.where(ok, starts, 0)
        t = _TRIPLETS.columns(_TRIPLETS.gather(u8, hs))

        # header: parse_header validates SMFxDTE; dates repeat, so each distinct one is checked once
        dates, inv = _unique_bytes(u8, hs + 10, 4)
        ok &= np.array([_valid_date(d) for d in dates], dtype=bool)[inv]

        ok &= (t["prn"] >= 1) & _sections_ok(t, "prs", ("prl", "prn"), L, RMF_PRODUCT.size)
        ps = np.where(ok, starts + t["prs"].astype(np.int64), 0)
        # the vectorised start is exact (integer days and seconds) and its validity check is stricter than
        # parse_rmf_product's (it also wants a sign nibble), so a record it rejects only goes the slower way
        prod_v = rmf_product_columns(u8, ps, codepage=codepage)
        ok &= prod_v["ok"]
        start_at = prod_v["interval_start_at"]
        # SMF7xINT through the scalar rmf_interval_s (np.round and round may differ in the last bit); few
        # distinct interval lengths per batch
        ints, inv = _unique_bytes(u8, ps + 18, 4)
        lengths_s = [_interval_s(b) for b in ints]
        interval_s = np.array([v if v is not None else 0.0 for v in lengths_s], dtype=np.float64)[inv]
        ok &= np.array([v is not None and v > 0 for v in lengths_s], dtype=bool)[inv]

        ok &= _sections_ok(t, "cps", ("cpl", "cpn"), L, CPU_DATA.size)
        ok &= _sections_ok(t, "cns", ("cnl", "cnn"), L, CPU_ID.size)
        ok &= _sections_ok(t, "bvs", ("bvl", "bvn"), L, LOGICAL_PROCESSOR.size)
        ok &= _sections_ok(t, "bcs", ("bcl", "bcn"), L, PARTITION.size)
        ok &= ~_sections_overlap(t)
        # the CPU control section inside the record; a section shorter than the current layout (an older
        # release) goes to decode_record
        has_ctl = t["ccn"] >= 1
        ok &= _sections_ok(t, "ccs", ("ccl", "ccn"), L, 0) & ~(has_ctl & (t["ccl"] < capacity.CONTROL_FULL.size))

        def positions(s: str, ln: str, num: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            counts = np.where(ok, t[num].astype(np.int64), 0)
            rep, k = _expand(counts)
            return (starts + t[s].astype(np.int64))[rep] + k * t[ln].astype(np.int64)[rep], rep, counts

        interval_us = interval_s * 1e6

        # MVS view: CPU data sections
        cpos, crep, _ = positions("cps", "cpl", "cpn")
        c = CPU_DATA.columns(CPU_DATA.gather(u8, cpos), names=("wat", "cpu_type_code", "pat"))
        unparked = interval_us[crep] - c["pat"].astype(np.float64) / 4096.0
        wait = c["wat"].astype(np.float64) / 4096.0
        cpu_bad = (c["cpu_type_code"] > 2) | (unparked < 0) | (wait > interval_us[crep] * 1.01)
        ok &= np.bincount(crep[cpu_bad], minlength=n) == 0

        # CPU-identification names of each record (index = SMF70CIX - 1)
        npos, nrep, ncount = positions("cns", "cnl", "cnn")
        names = CPU_ID.columns(CPU_ID.gather(u8, npos), codepage=codepage, names=("cpu_type",))["cpu_type"]
        nfirst = np.cumsum(ncount) - ncount

        # PR/SM view: the first partition section with this image's number that is not PHYSICAL
        bpos, brep, _ = positions("bcs", "bcl", "bcn")
        part = PARTITION.gather(u8, bpos)
        match = np.flatnonzero(part["lpar_no"] == prod_v["partition_no"][brep])
        pname = PARTITION.columns(part[match], codepage=codepage, names=("lpar_name",))["lpar_name"]
        match = match[pname != "PHYSICAL"]
        # every partition's logical processors inside the sections and apart from every other's
        # (_check_partition_ranges says which are not)
        b_first, b_n = part["first_lp"].astype(np.int64), part["n_lp"].astype(np.int64)
        has = b_n > 0
        past = has & (b_first + b_n > t["bvn"].astype(np.int64)[brep])
        ok &= np.bincount(brep[past], minlength=n) == 0
        srt = np.flatnonzero(has)
        srt = srt[np.lexsort((b_first[srt], brep[srt]))]
        clash = (brep[srt][1:] == brep[srt][:-1]) & (b_first[srt][1:] < (b_first + b_n)[srt][:-1])
        ok &= np.bincount(brep[srt][1:][clash], minlength=n) == 0
        prec, first_at = np.unique(brep[match], return_index=True)
        chosen = match[first_at]
        first = part["first_lp"][chosen].astype(np.int64)
        n_lp = part["n_lp"][chosen].astype(np.int64)
        lp_ok = first + n_lp <= t["bvn"].astype(np.int64)[prec]
        ok[prec[~lp_ok]] = False
        lp_ok &= ok[prec]
        prec, first, n_lp = prec[lp_ok], first[lp_ok], n_lp[lp_ok]
        r, k = _expand(n_lp)
        lrep = prec[r]
        lpos = (starts + t["bvs"].astype(np.int64))[lrep] + (first[r] + k) * t["bvl"].astype(np.int64)[lrep]
        lp = LOGICAL_PROCESSOR.columns(LOGICAL_PROCESSOR.gather(u8, lpos), names=("pdt_us", "cix", "ont_us"))
        cix = lp["cix"]
        cix_ok = (cix >= 1) & (cix <= ncount[lrep])
        ok &= np.bincount(lrep[~cix_ok], minlength=n) == 0

        # keep the sections of the records that passed every check
        ckeep = ok[crep] & (unparked > 0)
        lkeep = ok[lrep]
        crep, lrep, cix = crep[ckeep], lrep[lkeep], cix[lkeep]
        unparked, wait, ctyp = unparked[ckeep], wait[ckeep], c["cpu_type_code"][ckeep]
        lp_names = names[nfirst[lrep] + cix - 1] if lrep.size else np.zeros(0, dtype=object)
        # one type index per name, in sorted order, so that rows come out sorted by type as decode_record sorts them
        vocab, tix = np.unique(np.concatenate([np.array(["CP", "AAP", "IIP"], dtype=object),
                                               lp_names.astype(object)]), return_inverse=True)
        tix = tix.reshape(-1)
        n_types = vocab.size
        cg = crep * n_types + tix[:3][ctyp.astype(np.int64)]
        lg = lrep * n_types + tix[3:]
        size = n * n_types
        sums = {
            "n_lp": np.bincount(lg, weights=(lp["ont_us"][lkeep] > 0).astype(np.float64), minlength=size),
            "online_us": np.bincount(lg, weights=lp["ont_us"][lkeep].astype(np.float64), minlength=size),
            "dispatch_us": np.bincount(lg, weights=lp["pdt_us"][lkeep].astype(np.float64), minlength=size),
            "n_mvs": np.bincount(cg, minlength=size).astype(np.float64),
            "unparked_us": np.bincount(cg, weights=unparked, minlength=size),
            "busy_us": np.bincount(cg, weights=np.maximum(unparked - wait, 0.0), minlength=size),
        }
        touched = np.flatnonzero((np.bincount(cg, minlength=size) + np.bincount(lg, minlength=size)) > 0)
        rec = touched // n_types
        cols: dict[str, np.ndarray] = {
            "system_id": np.asarray(system_ids, dtype=object)[rec],
            "sysplex": prod_v["sysplex"][rec],
            "interval_start_at": start_at[rec],
            "interval_s": interval_s[rec],
            "cpu_type": vocab[touched % n_types],
        }
        for s in _PART_SUMS:
            cols[s] = sums[s][touched]
        cols["_rec"] = rec
        crec = np.flatnonzero(ok & has_ctl)
        cap = {"system_id": np.asarray(system_ids, dtype=object)[crec], "sysplex": prod_v["sysplex"][crec],
               "interval_start_at": start_at[crec], "interval_s": interval_s[crec],
               **capacity.control_columns(u8, (starts + t["ccs"].astype(np.int64))[crec]), "_rec": crec}
        return cols, cap, np.flatnonzero(~ok)


def _empty_parts() -> dict[str, np.ndarray]:
    cols = {c: np.zeros(0, dtype=np.float64) for c in _PART_COLUMNS}
    for c in ("system_id", "sysplex", "cpu_type"):
        cols[c] = np.zeros(0, dtype=object)
    cols["interval_start_at"] = np.zeros(0, dtype="datetime64[us]")
    cols["_rec"] = np.zeros(0, dtype=np.int64)
    return cols


def _empty_capacity() -> dict[str, np.ndarray]:
    return {**capacity.empty_columns(), "_rec": np.zeros(0, dtype=np.int64)}


def _merge(cols: dict[str, np.ndarray], rows: list[dict[str, Any]], rows_rec: list[int],
           columns: Sequence[str]) -> dict[str, np.ndarray]:
    """The vectorised ``cols`` (with ``_rec``) and decode_record's ``rows`` of records ``rows_rec``, in record order."""
    rec = cols.pop("_rec")
    if not rows:
        return {c: cols[c] for c in columns}
    extra = {c: np.array([r[c] for r in rows], dtype=cols[c].dtype) for c in columns}
    order = np.argsort(np.concatenate([rec, np.array(rows_rec, dtype=np.int64)]), kind="stable")
    return {c: np.concatenate([cols[c], extra[c]])[order] for c in columns}
