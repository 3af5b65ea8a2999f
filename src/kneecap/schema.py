"""The canonical measurement grain every source lands in (``fct_measurements``).

Units are carried in the column names. CPU percentages follow RMF APPL%: 100 means one
engine busy for the whole interval, so a pool of ``n`` engines tops out at ``100 * n``.
"""

from __future__ import annotations

#: Identity columns of one measured point.
KEY_COLUMNS: tuple[str, ...] = ("source_id", "workload", "point_id")

#: Numeric measurement columns, in table order, with their meaning.
NUMERIC_COLUMNS: dict[str, str] = {
    "clients": "simulated clients (closed workload population N)",
    "think_time_ms": "client think time Z between response and next request, ms",
    "tps": "throughput, transactions per second",
    "resp_ms": "average response time, ms",
    "n_gcp": "general purpose processors (CPs) online to the LPAR",
    "n_ziip": "zIIPs online to the LPAR",
    "cpu_total_pct": "CPU used on all engine types, APPL% (100 = one engine)",
    "cpu_gcp_pct": "CPU used on general purpose processors, APPL% CP",
    "cpu_ziip_pct": "CPU used on zIIPs, APPL% IIP",
    "ziip_eligible_pct": "zIIP-eligible CPU wherever it ran, APPL% (IIP + IIPCP)",
    "ziip_eligible_on_gcp_pct": "zIIP-eligible CPU that ran on GCPs, APPL% IIPCP",
    "cpu_s": "CPU service time in the interval, seconds",
    "cpu_ms_per_tran": "CPU cost per transaction, ms (IBM: cpu_s / interval_s / tps * 1000)",
    "req_bytes": "request payload size, bytes",
    "resp_bytes": "response payload size, bytes",
    "interval_s": "measurement interval length, seconds",
    "n_queues": "MQ queues defined / returned by the request",
}

#: Categorical factor columns a source may use to tell its configurations apart.
FACTOR_COLUMNS: dict[str, str] = {
    "transport": "client transport (HTTP, WebSphere MQ, Socket, ...)",
    "pooling": "connection pooling (yes/no)",
    "release": "software release of the measured subsystem",
    "api": "API or interface exercised",
    "config": "other configuration label (payload filter, stub on/off, ...)",
    "system_id": "SMF system id (SMF records only)",
    "service_class": "WLM service or report class (SMF records only)",
}

#: Time column for interval data (SMF/RMF); null for report tables.
TIME_COLUMNS: tuple[str, ...] = ("interval_start_at",)

#: The LPAR around an interval (SMF 70.1 / RMF CPU Activity, same system and interval): what every
#: class on the LPAR shares. Busy per engine, 0-100, all classes and address spaces included;
#: null for report tables. A class's background is this minus its own APPL% over the pool.
LPAR_COLUMNS: dict[str, str] = {
    "lpar_gcp_busy_pct": "LPAR busy per general purpose processor, all work, % (SMF 70.1)",
    "lpar_ziip_busy_pct": "LPAR busy per zIIP, all work, % (SMF 70.1); zIIPs in SMT-2: per zIIP thread, "
                          "the threads' MVS busy",
}

#: WLM state samples of a class period in the interval (SMF 72.3; WLM looks at each unit of work
#: every 250 ms): how its time splits between using and waiting for each engine type. Null for
#: report tables and RMF Postprocessor reports (which print none).
SAMPLE_COLUMNS: dict[str, str] = {
    "cpu_using_samples": "samples using a general purpose processor (R723CCUS)",
    "cpu_delay_samples": "samples delayed for a general purpose processor (R723CCDE)",
    "ziip_using_samples": "samples using a zIIP (R723SUPU)",
    "ziip_on_cp_using_samples": "samples of zIIP-eligible work using a general purpose processor (R723SUCU)",
    "ziip_delay_samples": "samples delayed for a zIIP (R723SUPD)",
}

#: The class period's zIIP time as engine time and normalised to CP time (SMF 72.3: R723CSUP, and
#: R723CSUP x R723NFFS / 256): their ratio is a zIIP's speed over a GCP's
#: (:func:`kneecap.modeling.engines.speeds_from_smf72`); and where the zIIPs ran SMT-2 their MT
#: capacity factor (R723MCFS / 1024, :func:`kneecap.modeling.engines.fit_engines`). Null for report
#: tables and RMF reports.
ENGINE_COLUMNS: dict[str, str] = {
    "ziip_s": "zIIP engine seconds of the class period (SMF 72.3 R723CSUP)",
    "ziip_cp_equiv_s": "zIIP seconds normalised to CP time, R723CSUP x R723NFFS / 256 (SMF 72.3)",
    "ziip_mt_capacity": "the zIIPs' MT maximum capacity factor, R723MCFS / 1024, where they ran SMT-2 "
                        "(SMF 72.3); null in MT-1",
}

#: Every column of ``fct_measurements`` in order.
FCT_MEASUREMENTS_COLUMNS: tuple[str, ...] = (
    KEY_COLUMNS + tuple(NUMERIC_COLUMNS) + tuple(FACTOR_COLUMNS) + TIME_COLUMNS + tuple(LPAR_COLUMNS)
    + tuple(SAMPLE_COLUMNS) + tuple(ENGINE_COLUMNS)
)

#: Provenance columns every bundled reference CSV carries on each row.
PROVENANCE_COLUMNS: tuple[str, ...] = ("source_file", "source_locator", "note", "duplicate_of")

#: The exact header of every CSV in ``data/reference/`` (other than ``sources.csv``).
REFERENCE_CSV_COLUMNS: tuple[str, ...] = (
    KEY_COLUMNS + tuple(NUMERIC_COLUMNS) + tuple(FACTOR_COLUMNS) + PROVENANCE_COLUMNS
)

#: The one measurement-table contract (``kneecap check``, ``kneecap add-table``, the desk's upload
#: and the pipeline read tables alike). A table needs :data:`REQUIRED_TABLE_COLUMNS` and at least
#: one of :data:`LOAD_COLUMNS`; any other column of :data:`REFERENCE_CSV_COLUMNS` is optional, in
#: any order. An absent column reads as empty cells (not measured), except ``source_id`` (the
#: file's stem) and ``point_id`` (``line<N>``, the row's line in the file).
REQUIRED_TABLE_COLUMNS: tuple[str, ...] = ("workload",)
#: A measured point says how much load it carried: simulated clients (closed) or a rate (open).
LOAD_COLUMNS: tuple[str, ...] = ("clients", "tps")

#: Columns that may never be negative.
NON_NEGATIVE_COLUMNS: tuple[str, ...] = tuple(NUMERIC_COLUMNS)

#: Percentage columns and the engine-count expression that bounds them (100 x engines).
PCT_BOUNDS: dict[str, tuple[str, ...]] = {
    "cpu_total_pct": ("n_gcp", "n_ziip"),
    "cpu_gcp_pct": ("n_gcp",),
    "cpu_ziip_pct": ("n_ziip",),
    "ziip_eligible_pct": ("n_gcp", "n_ziip"),
    "ziip_eligible_on_gcp_pct": ("n_gcp",),
}

#: Engines per pool (z/OS defines at most a few hundred logical processors per LPAR): the
#: ceiling of the dispatch model (:mod:`kneecap.modeling.dispatch` imports it) and of every input.
MAX_ENGINES = 512
_DAY_MS = 86_400_000.0
#: Most clients a what-if (forecast, simulation, desk planner) may ask for. One banded solve of
#: N = 1..50,000 (all 200 bootstrap draws) takes 1.6 s with 2 + 2 engines and 2.3 s with 16 + 16,
#: the process peaking at 786 MB (320 MB before the solve); memory grows linearly with N, so
#: 200,000 would need about 2 GB. The knee search stops at 50,000 too.
MAX_SCENARIO_CLIENTS = 50_000

#: Plausible maximum of each numeric column: a value above it is a typing or unit error (1e12
#: clients, a response time of 1e300 ms), not a measurement, and is rejected where tables come in.
#: Each bound is orders of magnitude past anything published for z/OS middleware.
MAX_VALUES: dict[str, float] = {
    "clients": 1_000_000.0,
    "think_time_ms": _DAY_MS,
    "tps": 10_000_000.0,
    "resp_ms": _DAY_MS,
    "n_gcp": float(MAX_ENGINES),
    "n_ziip": float(MAX_ENGINES),
    "cpu_total_pct": 100.0 * 2 * MAX_ENGINES,
    "cpu_gcp_pct": 100.0 * MAX_ENGINES,
    "cpu_ziip_pct": 100.0 * MAX_ENGINES,
    "ziip_eligible_pct": 100.0 * 2 * MAX_ENGINES,
    "ziip_eligible_on_gcp_pct": 100.0 * MAX_ENGINES,
    "cpu_s": 2 * MAX_ENGINES * 31 * 86_400.0,  # every engine busy for a month
    "cpu_ms_per_tran": 3_600_000.0,  # an hour of CPU per transaction
    "req_bytes": float(2**31),
    "resp_bytes": float(2**31),
    "interval_s": 31 * 86_400.0,
    "n_queues": 10_000_000.0,
}
