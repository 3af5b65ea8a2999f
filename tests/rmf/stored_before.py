"""Folders as an older kneecap left them: a report stored without the interval check, day partitions.

Shared by the tests of the duplicate check (#35 item 5), the month partitions (#35 item 7) and the
Spark engine, which must all read such folders as they are.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from kneecap.ingest import store
from kneecap.ingest.manifest import FileResult, append_manifest, locked, manifest_entry, sha256_file
from kneecap.ingest.rmf import TABLES
from kneecap.rmf import read_postprocessor


@contextlib.contextmanager
def day_partitions() -> Iterator[None]:
    """Write ``system=<SID>/date=<YYYY-MM-DD>`` folders, as kneecap did before month partitions, inside the block."""
    before = store.PARTITION_KEY, store.PARTITION_UNIT
    store.PARTITION_KEY, store.PARTITION_UNIT = "date", "D"
    try:
        yield
    finally:
        store.PARTITION_KEY, store.PARTITION_UNIT = before


def store_report_unchecked(out: Path, report: Path, *, by_day: bool = True) -> str:
    """Store every interval of ``report`` in ``out`` and commit it, whatever is stored already; its SHA-256.

    What an ingest that compared only bytes did with a report saved again (by day, as it partitioned).
    """
    sha = sha256_file(report)
    tables = read_postprocessor(report)
    out.mkdir(parents=True, exist_ok=True)
    with locked(out), (day_partitions() if by_day else contextlib.nullcontext()):
        rows = {t: store.write_table(f, out, t, sha)
                for t, f in zip(TABLES, (tables.cpu, tables.partition, tables.workload), strict=True) if not f.empty}
        result = FileResult(str(report), sha, "ingested", bytes=report.stat().st_size, records=sum(rows.values()),
                            rows=rows, framing="rmf-xml")
        append_manifest(out, manifest_entry(result, None))
    return sha
