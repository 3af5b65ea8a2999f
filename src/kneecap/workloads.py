"""z/OS Communications Server workload names, and CPU cost per transaction from LPAR utilisation.

IBM's Communications Server performance reports name a network benchmark
``[NameOfBenchmark][#OfClients](BytesSentByClient/BytesSentByServer)``: ``RR40(100B/100B)`` is 40
clients doing request/response transactions on a persistent connection, ``CRR9(200B/200B)`` 9
clients that connect, send, receive and close per transaction, ``STR3(1B/20MB)`` 3 streaming
clients. :func:`parse_workload_name` turns such a name into its pattern, clients and payload
bytes; :func:`workload_columns` does it for a column of a table, and :func:`with_workload_name`
for a forecast scenario's ``cs_workload``.

:func:`cpu_ms_per_tran_from_lpar` is the report's cost-per-transaction computation from the RMF
LPAR utilisation, and :func:`connection_setup` the per-connection CPU cost a table measuring
both CRR and RR at the same payloads implies.

References
----------
IBM, "V2R5 z/OS Communications Server Performance Summary Report" (2022), seed
``002_be0684e436341215.txt``: "Workload Naming Convention" (names, RR/CRR/STR) and "CPU Cost/Tran
& Transaction [Trans/sec]" (the worked example).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

#: Benchmark patterns and what the report says each does.
PATTERNS: dict[str, str] = {
    "RR": "request/response on a persistent connection",
    "CRR": "connect, request/response, close per transaction",
    "STR": "streaming",
}

#: Bytes per payload unit. The report writes "4kB", "20MB", "1GB" without saying whether k is 1000
#: or 1024; kneecap reads them as 1024-based, as ``data/reference`` reads "1K/4K/8K" (README there).
UNIT_BYTES: dict[str, int] = {"B": 1, "kB": 1024, "KB": 1024, "MB": 1024**2, "GB": 1024**3}

#: Columns :func:`workload_columns` adds, in order.
WORKLOAD_COLUMNS: tuple[str, ...] = ("pattern", "clients", "req_bytes", "resp_bytes", "connect_per_tran")

_NAME = re.compile(r"^\[?(?P<pattern>[A-Za-z]*)\]?\s*\[?(?P<clients>[^\[\]()]*?)\]?\s*"
                   r"\((?P<req>[^/()]*)/(?P<resp>[^/()]*)\)$")
_SIZE = re.compile(r"^(?P<number>\d+)\s*(?P<unit>[A-Za-z]+)$", re.ASCII)


class WorkloadNameError(ValueError):
    """A workload name that is not ``RR|CRR|STR<clients>(<request>/<response>)``.

    The message names the name, the field and the value.
    """


@dataclass(frozen=True)
class WorkloadName:
    """A parsed Communications Server workload name.

    Attributes
    ----------
    pattern : str
        ``RR``, ``CRR`` or ``STR``.
    clients : int
        Concurrent clients (at least 1).
    req_bytes, resp_bytes : int
        Bytes the client sends and the server sends back per transaction.
    """

    pattern: str
    clients: int
    req_bytes: int
    resp_bytes: int

    @property
    def connect_per_tran(self) -> bool:
        """True for CRR: each transaction opens and closes its own connection."""
        return self.pattern == "CRR"

    def __str__(self) -> str:
        return format_workload_name(self)


def _size_bytes(text: str, name: str, field: str) -> int:
    """``"4kB"`` -> 4096, with an error naming ``field`` (``request`` / ``response``) otherwise."""
    cell = text.strip()
    m = _SIZE.match(cell)
    if not m:
        raise WorkloadNameError(f"workload name {name!r}: {field} size {cell!r} is not a whole number "
                                f"followed by a unit ({', '.join(UNIT_BYTES)}), e.g. '100B' or '4kB'")
    if m["unit"] not in UNIT_BYTES:
        raise WorkloadNameError(f"workload name {name!r}: {field} size {cell!r} has unit {m['unit']!r}; "
                                f"known units: {', '.join(UNIT_BYTES)}")
    return int(m["number"]) * UNIT_BYTES[m["unit"]]


def parse_workload_name(text: str) -> WorkloadName:
    """Parse ``RR40(100B/100B)``, ``CRR9(200B/200B)``, ``STR3(1B/20MB)`` or ``[RR][10](1B/100B)``.

    Parameters
    ----------
    text : str
        The name as a report or a planner writes it. Spaces around the parts are allowed; the
        pattern must be upper case; sizes are a whole number and a unit in :data:`UNIT_BYTES`.

    Returns
    -------
    WorkloadName

    Raises
    ------
    WorkloadNameError
        Naming the field (pattern, clients, request or response size) and the value at fault.

    Notes
    -----
    ``x(y/z)``: x clients, y bytes sent by the client, z bytes sent by the server (seed 002,
    "Workload Naming Convention"); k, M and G are read as powers of 1024 (:data:`UNIT_BYTES`).

    Examples
    --------
    >>> parse_workload_name("CRR30(200B/200B)")
    WorkloadName(pattern='CRR', clients=30, req_bytes=200, resp_bytes=200)
    >>> parse_workload_name("STR3(1B/20MB)").resp_bytes
    20971520
    """
    if not isinstance(text, str):
        raise WorkloadNameError(f"workload name must be text, got {type(text).__name__} {text!r}")
    name = text.strip()
    m = _NAME.match(name)
    if not m:
        raise WorkloadNameError(f"workload name {text!r} is not <pattern><clients>(<request>/<response>), "
                                "e.g. 'RR40(100B/100B)', 'CRR9(200B/200B)' or 'STR3(1B/20MB)'")
    pattern = m["pattern"]
    if pattern not in PATTERNS:
        raise WorkloadNameError(f"workload name {text!r}: pattern {pattern!r} is not one of "
                                f"{', '.join(PATTERNS)} (upper case)")
    clients_text = m["clients"].strip()
    if not clients_text:
        raise WorkloadNameError(f"workload name {text!r}: clients missing: write them after the pattern, "
                                f"e.g. '{pattern}40({m['req'].strip()}/{m['resp'].strip()})'")
    if not clients_text.isdigit() or not clients_text.isascii():
        raise WorkloadNameError(f"workload name {text!r}: clients {clients_text!r} is not a whole number")
    clients = int(clients_text)
    if clients < 1:
        raise WorkloadNameError(f"workload name {text!r}: clients {clients} must be at least 1")
    return WorkloadName(pattern, clients, _size_bytes(m["req"], text, "request"),
                        _size_bytes(m["resp"], text, "response"))


def format_size(n_bytes: int) -> str:
    """Bytes in the largest unit that divides them exactly: 4096 -> ``"4kB"``, 100 -> ``"100B"``."""
    if n_bytes < 0:
        raise ValueError(f"size {n_bytes} bytes is negative")
    for unit in ("GB", "MB", "kB"):
        if n_bytes and n_bytes % UNIT_BYTES[unit] == 0:
            return f"{n_bytes // UNIT_BYTES[unit]}{unit}"
    return f"{n_bytes}B"


def format_workload_name(workload: WorkloadName) -> str:
    """The canonical name, e.g. ``CRR30(200B/200B)``; :func:`parse_workload_name` reads it back."""
    return (f"{workload.pattern}{workload.clients}"
            f"({format_size(workload.req_bytes)}/{format_size(workload.resp_bytes)})")


def with_workload_name(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario with ``cs_workload`` (e.g. ``CRR30(200B/200B)``) expanded into its columns.

    ``clients``, ``req_bytes`` and ``resp_bytes`` are filled from the name; a value the scenario
    also gives must agree. Adds ``pattern`` and ``connect_per_tran`` under those names only in the
    returned row (see :func:`kneecap.forecasting.forecast_scenario`), not as model inputs.

    Raises
    ------
    WorkloadNameError
        A malformed name, or a name that disagrees with an explicit value (both are named).
    """
    out = dict(scenario)
    name = out.get("cs_workload")
    if name is None:
        return out
    parsed = parse_workload_name(name)
    for key in ("clients", "req_bytes", "resp_bytes"):
        given = out.get(key)
        value = getattr(parsed, key)
        if given is not None and float(given) != value:
            raise WorkloadNameError(
                f"cs_workload {name!r} says {key} = {value} but the scenario gives {key} = {given}")
        out[key] = value
    return out


def workload_columns(names: Iterable[str], *, column: str = "workload") -> pd.DataFrame:
    """Parse a column of workload names into :data:`WORKLOAD_COLUMNS`, one row per name.

    Parameters
    ----------
    names
        The names, in table order.
    column
        The column's name, used in error messages.

    Raises
    ------
    WorkloadNameError
        For the first bad name, naming its row (1-based) and column.
    """
    rows = []
    for i, name in enumerate(names, start=1):
        try:
            w = parse_workload_name(name)
        except WorkloadNameError as exc:
            raise WorkloadNameError(f"row {i}: {column}: {exc}") from None
        rows.append((w.pattern, w.clients, w.req_bytes, w.resp_bytes, w.connect_per_tran))
    return pd.DataFrame(rows, columns=list(WORKLOAD_COLUMNS)).astype(
        {"clients": "int64", "req_bytes": "int64", "resp_bytes": "int64", "connect_per_tran": "bool"})


def lpar_cpu_seconds(lpar_util_pct: float, n_cp: int, interval_s: float) -> float:
    r"""CPU seconds an LPAR used in an interval, from RMF's utilisation across its online CPs.

    Notes
    -----
    .. math:: \text{cpu\_s} = \frac{U}{100}\, n_{cp}\, T

    "if RMF result shows a LPAR utilization of 25% across 4 CPs then we translate this into 100%
    of 1 CP. If the sampling interval is 10 seconds [...] the benchmark consumes 10 seconds of CPU"
    (seed 002, "CPU Cost/Tran & Transaction [Trans/sec]").
    """
    if not np.isfinite(lpar_util_pct) or not 0 <= lpar_util_pct <= 100:
        raise ValueError(f"lpar_util_pct {lpar_util_pct!r} must be between 0 and 100 "
                         "(RMF LPAR utilisation is averaged across the online CPs)")
    if int(n_cp) != n_cp or n_cp < 1:
        raise ValueError(f"n_cp {n_cp!r} must be a whole number of CPs, at least 1")
    if not np.isfinite(interval_s) or interval_s <= 0:
        raise ValueError(f"interval_s {interval_s!r} must be a positive number of seconds")
    return lpar_util_pct / 100.0 * int(n_cp) * interval_s


def cpu_ms_per_tran_from_lpar(lpar_util_pct: float, n_cp: int, interval_s: float,
                              transactions: float) -> float:
    r"""CPU cost per transaction in ms, as the Communications Server report computes it from RMF.

    Parameters
    ----------
    lpar_util_pct : float
        RMF LPAR utilisation averaged across the online CPs, 0-100.
    n_cp : int
        Online CPs.
    interval_s : float
        Sampling interval, seconds.
    transactions : float
        Transactions completed in the interval.

    Notes
    -----
    .. math:: \text{cpu\_ms\_per\_tran} = 1000\,\frac{(U/100)\, n_{cp}\, T}{\text{transactions}}

    The report's worked example: 25 % of 4 CPs over 10 s is 10 CPU seconds; 1,000,000 transactions
    in those 10 s (100,000 trans/s) cost 10 µs = 0.01 ms each. It equals seed 000's
    ``cpu_s / interval_s / tps * 1000`` with ``cpu_s`` from :func:`lpar_cpu_seconds`.

    References
    ----------
    IBM, "V2R5 z/OS Communications Server Performance Summary Report" (2022), "CPU Cost/Tran &
    Transaction [Trans/sec]" (seed ``002_be0684e436341215.txt``).
    """
    if not np.isfinite(transactions) or transactions <= 0:
        raise ValueError(f"transactions {transactions!r} must be positive: with none ended in the "
                         "interval there is no cost per transaction")
    return lpar_cpu_seconds(lpar_util_pct, n_cp, interval_s) * 1000.0 / transactions


def connection_setup(table: pd.DataFrame, *, name_column: str = "workload",
                     cost_column: str = "cpu_ms_per_tran",
                     by: Sequence[str] = ()) -> pd.DataFrame:
    r"""CPU cost of a connection's setup and teardown, from CRR and RR rows at the same payloads.

    A CRR transaction is an RR transaction plus one connect and one close, so where a table
    measures both at the same request and response sizes (and the same ``by`` columns, e.g. the
    interface or release), their difference is the cost of one connection's setup and teardown.

    Parameters
    ----------
    table
        Rows with a workload name in ``name_column`` and a CPU cost per transaction in
        ``cost_column``; other patterns (STR) are ignored.
    by
        Columns that must also match for a CRR and an RR row to pair.

    Returns
    -------
    DataFrame
        One row per pair: ``by`` columns, ``req_bytes``, ``resp_bytes``, ``rr_workload``,
        ``crr_workload``, ``rr_cost``, ``crr_cost``, ``setup_cost`` (CRR - RR, per connection, in
        the units of ``cost_column``) and ``crr_to_rr`` (CRR / RR). Where several rows share a
        key (different client counts) their mean cost is used.

    Raises
    ------
    ValueError
        When no CRR row has an RR row with the same sizes, naming what the table holds.

    Notes
    -----
    .. math:: c_{setup} = c_{CRR}(y, z) - c_{RR}(y, z), \qquad r = c_{CRR}(y, z) / c_{RR}(y, z)
    """
    missing = [c for c in (name_column, cost_column, *by) if c not in table.columns]
    if missing:
        raise ValueError(f"connection_setup: table has no column(s) {', '.join(missing)}")
    parsed = workload_columns(table[name_column].tolist(), column=name_column)
    frame = pd.concat([table[[name_column, cost_column, *by]].reset_index(drop=True), parsed], axis=1)
    frame = frame[frame[cost_column].notna()]
    keys = [*by, "req_bytes", "resp_bytes"]

    def side(pattern: str) -> pd.DataFrame:
        part = frame[frame["pattern"] == pattern]
        return part.groupby(keys, as_index=False, dropna=False).agg(
            **{f"{pattern.lower()}_workload": (name_column, lambda s: ", ".join(sorted(set(s)))),
               f"{pattern.lower()}_cost": (cost_column, "mean")})

    pairs = side("CRR").merge(side("RR"), on=keys, how="inner")
    if pairs.empty:
        held = {p: sorted(set(frame.loc[frame["pattern"] == p, name_column])) for p in ("RR", "CRR")}
        raise ValueError("connection_setup: no CRR row has an RR row with the same request/response sizes"
                         + (f" and {', '.join(by)}" if by else "")
                         + f" (RR: {', '.join(held['RR']) or 'none'}; CRR: {', '.join(held['CRR']) or 'none'})")
    pairs["setup_cost"] = pairs["crr_cost"] - pairs["rr_cost"]
    pairs["crr_to_rr"] = pairs["crr_cost"] / pairs["rr_cost"]
    return pairs[[*keys, "rr_workload", "crr_workload", "rr_cost", "crr_cost", "setup_cost", "crr_to_rr"]]
