"""Ingest RMF Postprocessor XML reports into Parquet beside the decoded SMF tables (I/O module).

Writes ``<out_dir>/rmf_cpu|rmf_partition|rmf_workload/system=<SID>/date=<YYYY-MM-DD>/<content_sha256>.parquet``
(the SMF tables' layout, :func:`kneecap.smf.ingest.write_table`) and appends to the same
``_manifest.jsonl`` as :mod:`kneecap.smf.ingest`, with the same helpers: each input is
ingested under the folder's lock (:func:`kneecap.smf.ingest.locked`), and the manifest line is
appended after a torn last line is cut (:func:`kneecap.smf.ingest.append_manifest`), so SMF and
RMF ingests into one folder, concurrent or interrupted, take turns and never damage it. A report
already ingested (under any name) adds no rows. A DDS error reply (e.g. GPM0739E) or a document
with no CPU or Workload Activity report is reported as failed with its message. Intervals the
reader quarantines (a bad value, XML that breaks off) are counted in the result and the manifest,
their reasons kept in table ``rmf_quarantine`` (file, interval, reason); the other intervals load.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from pathlib import Path

from kneecap.rmf.postprocessor import RMFReportError, read_postprocessor
from kneecap.smf.ingest import FileResult, append_manifest, locked, read_manifest, sha256_file, write_table

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
    for path in paths:
        sha = sha256_file(path)
        with locked(out):
            # read under the lock: another process may have ingested this input meanwhile
            if sha in read_manifest(out):
                results.append(FileResult(str(path), sha, "skipped", bytes=path.stat().st_size))
                continue
            result = _ingest_one(path, sha, out)
            results.append(result)
            if result.status != "ingested":
                continue
            append_manifest(out, {
                "sha256": sha, "path": str(path), "bytes": result.bytes, "records": result.records,
                "rows": result.rows, "quarantined": result.quarantined, "orphan_segments": 0, "framing": "rmf-xml",
                "ingested_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")})
    return results, time.perf_counter() - t0
