"""Ingest RMF Postprocessor XML reports into an ingest folder, beside the decoded SMF tables.

Writes ``<out_dir>/rmf_cpu|rmf_partition|rmf_workload/system=<SID>/date=<YYYY-MM-DD>/<content_sha256>.parquet``
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
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from kneecap.ingest.manifest import (
    FileResult,
    append_manifest,
    locked,
    manifest_entry,
    read_manifest,
    sha256_file,
)
from kneecap.ingest.store import remove_leftovers, write_table
from kneecap.rmf.postprocessor import RMFReportError, read_postprocessor

__all__ = ["QUARANTINE_TABLE", "TABLES", "ingest_xml"]

TABLES = ("rmf_cpu", "rmf_partition", "rmf_workload")
QUARANTINE_TABLE = "rmf_quarantine"


def _ingest_one(path: Path, sha: str, out: Path) -> FileResult:
    """Read one report and write its tables (caller holds the lock and appends the manifest)."""
    size = path.stat().st_size
    try:
        tables = read_postprocessor(path)
    except (RMFReportError, ValueError) as exc:
        return FileResult(str(path), sha, "failed", bytes=size, error=str(exc))
    rows: dict[str, int] = {}
    for name, frame in zip(TABLES, (tables.cpu, tables.partition, tables.workload)):
        if frame.empty:
            continue
        rows[name] = write_table(frame, out, name, sha)
    q = tables.quarantine
    if not q.empty:
        write_table(q.assign(file=str(path))[["file", "interval", "reason"]], out, QUARANTINE_TABLE, sha)
    return FileResult(str(path), sha, "ingested", bytes=size, records=sum(rows.values()), rows=rows,
                      quarantined=len(q), framing="rmf-xml",
                      quarantine_reasons=q["reason"].tolist())


def ingest_xml(paths: list[Path], out_dir: str | os.PathLike[str]) -> tuple[list[FileResult], float]:
    """Read every XML report in ``paths``; returns per-file results and the elapsed seconds."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: list[FileResult] = []
    swept = False
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
            result = _ingest_one(path, sha, out)
            results.append(result)
            if result.status != "ingested":
                continue
            append_manifest(out, manifest_entry(result, None))
    return results, time.perf_counter() - t0
