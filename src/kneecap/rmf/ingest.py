"""Ingest RMF Postprocessor XML reports into Parquet beside the decoded SMF tables (I/O module).

Writes ``<out_dir>/rmf_cpu|rmf_partition|rmf_workload/<content_sha256>.parquet`` and appends to the
same ``_manifest.jsonl`` as :mod:`kneecap.smf.ingest`, so a report already ingested (under any
name) adds no rows. A DDS error reply (e.g. GPM0739E) is reported as failed with its message.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from pathlib import Path

from kneecap.rmf.postprocessor import RMFReportError, read_postprocessor
from kneecap.smf.ingest import MANIFEST, FileResult, _read_manifest, _sha256

TABLES = ("rmf_cpu", "rmf_partition", "rmf_workload")


def ingest_xml(paths: list[Path], out_dir: str | os.PathLike[str]) -> tuple[list[FileResult], float]:
    """Read every XML report in ``paths``; returns per-file results and the elapsed seconds."""
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done = _read_manifest(out)
    results: list[FileResult] = []
    for path in paths:
        sha = _sha256(path)
        size = path.stat().st_size
        if sha in done:
            results.append(FileResult(str(path), sha, "skipped", bytes=size))
            continue
        try:
            tables = read_postprocessor(path)
        except (RMFReportError, ValueError) as exc:
            results.append(FileResult(str(path), sha, "failed", bytes=size, error=str(exc)))
            continue
        rows: dict[str, int] = {}
        for name, frame in zip(TABLES, (tables.cpu, tables.partition, tables.workload)):
            if frame.empty:
                continue
            target = out / name / f"{sha}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".parquet.tmp")
            frame.to_parquet(tmp, index=False)
            tmp.replace(target)
            rows[name] = len(frame)
        result = FileResult(str(path), sha, "ingested", bytes=size, records=sum(rows.values()), rows=rows,
                            framing="rmf-xml")
        results.append(result)
        entry = {"sha256": sha, "path": str(path), "bytes": size, "records": result.records, "rows": rows,
                 "quarantined": 0, "orphan_segments": 0, "framing": "rmf-xml",
                 "ingested_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        with (out / MANIFEST).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
        done[sha] = entry
    return results, time.perf_counter() - t0
