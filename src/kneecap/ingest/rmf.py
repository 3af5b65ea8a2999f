"""Ingest RMF Postprocessor XML reports into an ingest folder, beside the decoded SMF tables.

Writes ``<out_dir>/rmf_cpu|rmf_partition|rmf_workload/system=<SID>/month=<YYYY-MM>/<content_sha256>.parquet``
(the SMF tables' layout, :func:`kneecap.ingest.store.write_table`) and appends to the same
``_manifest.jsonl`` as :mod:`kneecap.ingest.smf`, with the same helpers: each input is ingested
under the folder's lock (:func:`kneecap.ingest.manifest.locked`), and the manifest line is appended
after a torn last line is cut (:func:`kneecap.ingest.manifest.append_manifest`), so SMF and RMF
ingests into one folder, concurrent or interrupted, take turns and never damage it. A report
already ingested (under any name) adds no rows. A DDS error reply (e.g. GPM0739E) or a document
with no CPU or Workload Activity report is reported as failed with its message. Intervals the
reader (:func:`kneecap.rmf.postprocessor.read_postprocessor`) quarantines (a bad value, XML that
breaks off) are counted in the result and the manifest, their reasons kept in table
``rmf_quarantine`` (file, interval, reason); the other intervals load.

Duplicates by their intervals, not their bytes: the same report saved again with CRLF line ends,
re-encoded in UTF-16 or pretty-printed has other bytes (another SHA-256) and the same intervals.
An interval is identified by its report (the table its rows go to), its resource (the system, or
the sysplex of a sysplex-wide Workload Activity report) and its start (:func:`interval_keys`).
A report all of whose intervals are already stored, from another file, is not stored (status
``duplicate``, nothing written, no manifest line, so ``kneecap ingest`` does not copy it into the
input area either); a report of which only some are stored keeps what is new: the rows of the
stored intervals are left out and counted (``duplicates``, in intervals), the rest is stored.
Keeping the new intervals, not quarantining the file, is deliberate: reports over overlapping
periods (a day's and a week's) are normal, and the overlap is the same measurement. Identity is
taken from the stored Parquet files themselves (:func:`stored_intervals`), so a store ingested
before this check existed is checked too.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kneecap.ingest.manifest import (
    FileResult,
    append_manifest,
    locked,
    manifest_entry,
    read_manifest,
    sha256_file,
)
from kneecap.ingest.store import remove_leftovers, stored_sha, table_files, write_table
from kneecap.rmf.postprocessor import RMFReportError, read_postprocessor

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["QUARANTINE_TABLE", "TABLES", "IntervalKey", "ingest_xml", "interval_keys", "new_intervals",
           "stored_intervals"]

TABLES = ("rmf_cpu", "rmf_partition", "rmf_workload")
QUARANTINE_TABLE = "rmf_quarantine"

#: One RMF interval: (table, resource, interval start as ISO text).
IntervalKey = tuple[str, str, str]


def interval_keys(table: str, frame: pd.DataFrame) -> list[IntervalKey]:
    """The interval each row of ``frame`` (an RMF table named ``table``) belongs to, row by row.

    The resource is the system id, or ``sysplex:<name>`` for a row without one (a sysplex-wide
    Workload Activity report); the start is ``interval_start_at`` to the microsecond.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"system_id": ["SYSA", None], "sysplex": [None, "PLEX"],
    ...                   "interval_start_at": pd.to_datetime(["2022-04-12 00:00", "2022-04-12 00:30"])})
    >>> for key in interval_keys("rmf_workload", f):
    ...     print(key)
    ('rmf_workload', 'SYSA', '2022-04-12T00:00:00.000000')
    ('rmf_workload', 'sysplex:PLEX', '2022-04-12T00:30:00.000000')
    """
    import pandas as pd

    if frame.empty:
        return []
    system = frame["system_id"].astype(object)
    sysplex = frame["sysplex"].astype(object) if "sysplex" in frame else pd.Series(None, index=frame.index,
                                                                                     dtype=object)
    resource = [str(s) if isinstance(s, str) and s else f"sysplex:{p}"
                for s, p in zip(system.tolist(), sysplex.tolist(), strict=True)]
    starts = pd.to_datetime(frame["interval_start_at"]).dt.strftime("%Y-%m-%dT%H:%M:%S.%f").tolist()
    return [(table, r, s) for r, s in zip(resource, starts, strict=True)]


def new_intervals(keys: Mapping[str, list[IntervalKey]], stored: Mapping[IntervalKey, str]
                  ) -> tuple[set[IntervalKey], Counter[str]]:
    """Which of a report's intervals are not stored yet, and the stored ones by the input holding them.

    ``keys`` is :func:`interval_keys` of each of the report's tables; ``stored`` maps every stored
    interval to the SHA-256 of the input it came from.

    Returns
    -------
    new : set
        The report's intervals ``stored`` does not hold.
    already : Counter
        Input SHA-256 -> how many of the report's intervals it holds, each resource and start counted
        once (a CPU report's interval has rows in two tables: CPU Activity and Partition Data).

    Examples
    --------
    >>> k = {"rmf_cpu": [("rmf_cpu", "S", "t1"), ("rmf_cpu", "S", "t1"), ("rmf_cpu", "S", "t2")],
    ...      "rmf_partition": [("rmf_partition", "S", "t1")]}
    >>> new, already = new_intervals(k, {("rmf_cpu", "S", "t1"): "abc", ("rmf_partition", "S", "t1"): "abc"})
    >>> sorted(new), dict(already)
    ([('rmf_cpu', 'S', 't2')], {'abc': 1})
    """
    every = {k for table_keys in keys.values() for k in table_keys}
    held = {(k[1], k[2]): stored[k] for k in sorted(every) if k in stored}
    return {k for k in every if k not in stored}, Counter(held.values())


def stored_intervals(out: Path, done: Mapping[str, Any]) -> dict[IntervalKey, str]:
    """Every RMF interval the committed inputs ``done`` stored in ``out``, -> the SHA-256 of its input.

    Read from the RMF tables' Parquet files (two or three columns of each), not from a list kept
    beside them, so a store written before duplicates were checked is checked all the same.
    """
    import pandas as pd

    found: dict[IntervalKey, str] = {}
    for table in TABLES:
        for f in table_files(out / table):
            sha = stored_sha(f.name)
            if sha is None or sha not in done:
                continue
            columns = ["system_id", "interval_start_at"] + (["sysplex"] if table == "rmf_workload" else [])
            for key in interval_keys(table, pd.read_parquet(f, columns=columns)):
                found.setdefault(key, sha)
    return found


def _ingest_one(path: Path, sha: str, out: Path, stored: dict[IntervalKey, str],
                done: Mapping[str, Any]) -> FileResult:
    """Read one report and write its new intervals (caller holds the lock and appends the manifest)."""
    size = path.stat().st_size
    try:
        tables = read_postprocessor(path)
    except (RMFReportError, ValueError) as exc:
        return FileResult(str(path), sha, "failed", bytes=size, error=str(exc))
    frames = dict(zip(TABLES, (tables.cpu, tables.partition, tables.workload), strict=True))
    keys = {name: interval_keys(name, frame) for name, frame in frames.items()}
    new, already = new_intervals(keys, stored)
    holder = already.most_common(1)[0][0] if already else None
    other = None if holder is None else str(done.get(holder, {}).get("path", holder))
    if already and not new:
        return FileResult(str(path), sha, "duplicate", bytes=size, duplicates=sum(already.values()),
                          framing="rmf-xml", duplicate_of=other)
    rows: dict[str, int] = {}
    for name, frame in frames.items():
        if frame.empty:
            continue
        if already:  # only the intervals not stored yet
            frame = frame[[k in new for k in keys[name]]].reset_index(drop=True)
            if frame.empty:
                continue
        rows[name] = write_table(frame, out, name, sha)
    q = tables.quarantine
    if not q.empty:
        write_table(q.assign(file=str(path))[["file", "interval", "reason"]], out, QUARANTINE_TABLE, sha)
    for k in new:
        stored.setdefault(k, sha)
    return FileResult(str(path), sha, "ingested", bytes=size, records=sum(rows.values()), rows=rows,
                      quarantined=len(q), framing="rmf-xml", quarantine_reasons=q["reason"].tolist(),
                      duplicates=sum(already.values()), duplicate_of=other)


def ingest_xml(paths: list[Path], out_dir: str | os.PathLike[str]) -> tuple[list[FileResult], float]:
    """Read every XML report in ``paths``; returns per-file results and the elapsed seconds."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: list[FileResult] = []
    swept = False
    stored: dict[IntervalKey, str] = {}
    known: set[str] | None = None  # the committed inputs ``stored`` was read for, and this run's
    for path in paths:
        sha = sha256_file(path)
        with locked(out):
            # read under the lock: another process may have ingested this input meanwhile
            done = read_manifest(out)
            if not swept:  # once a run: what an ingest killed before its commit left is not evidence
                remove_leftovers(out, done)
                swept = True
            if sha in done:
                results.append(FileResult(str(path), sha, "skipped", bytes=path.stat().st_size))
                continue
            if known != set(done):  # the first time, or another ingest committed inputs meanwhile
                stored, known = stored_intervals(out, done), set(done)
            result = _ingest_one(path, sha, out, stored, done)
            results.append(result)
            if result.status != "ingested":
                continue
            append_manifest(out, manifest_entry(result, None))
            known.add(sha)
    return results, time.perf_counter() - t0
