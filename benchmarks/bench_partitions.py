"""Benchmark: partitions by month against the old partitions by day (#35 item 7), in one run.

Two synthetic dumps (tests/smf/synth.py), each ingested by ``kneecap.ingest.smf.ingest_paths`` into
a fresh folder with either layout (``kneecap.ingest.store.PARTITION_KEY``/``PARTITION_UNIT``: month,
the default, or day, as kneecap wrote before), the two layouts alternated, ``--repeats`` times each:

* **sparse**: one small SMF 70.1 record a day for ``--years`` years (the shape that made 12,697
  files of 35 years of daily records);
* **dense**: ``--days`` LPAR-days of the ``lpar`` mix of ``bench_smf_decode.py`` (96 intervals a
  day of forty 72.3, two 70.1 of three 16-way partitions and forty SMF 30).

For each it prints (and with ``--save`` writes as CSV) the Parquet files and partition folders of
the table with most files, the files of every table, the bytes of the folder, the median seconds
and MB/s of the ingest, and month's throughput over day's (a ratio of medians in one run, so the
machine's speed cancels out; goal: >= 1 on the sparse dump, no worse than noise on the dense day).

Usage::

    PYTHONPATH=src python benchmarks/bench_partitions.py [--years 10] [--days 1] [--repeats 5] [--save CSV]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "smf"))
sys.path.insert(0, str(HERE))

LAYOUTS = {"month": ("month", "M"), "day": ("date", "D")}


def sparse_dump(path: Path, years: int) -> int:
    """One 70.1 record a day at noon for ``years`` years from 2010; returns the records."""
    import synth  # tests/smf/synth.py

    own = synth.Partition("LPAR1", 1, [synth.LogicalCPU("CP", 900, 300, 590), synth.LogicalCPU("IIP", 900, 200, 700)])
    start = dt.datetime(2010, 1, 1, 12)
    days = (dt.datetime(2010 + years, 1, 1, 12) - start).days
    path.write_bytes(synth.frame_rdw(synth.record_70_1("SYSA", "PLEX1", start + dt.timedelta(days=i), 900.0, [own], 1,
                                                       ("CP", "IIP")) for i in range(days)))
    return days


def dense_dump(path: Path, days: int) -> int:
    """``days`` LPAR-days of the ``lpar`` mix (bench_smf_decode.py); returns the records."""
    import synth
    from bench_smf_decode import address_spaces, day_records, lpar_partitions

    k, partitions, spaces = synth.Coefficients(), lpar_partitions(synth), address_spaces(synth)
    n = 0
    with path.open("wb") as fh:
        for d in range(days):
            recs = day_records(synth, k, dt.datetime(2025, 3, 3) + dt.timedelta(days=d), "lpar", partitions, spaces)
            fh.write(synth.frame_rdw(recs))
            n += len(recs)
    return n


def ingest_once(dump: Path, out: Path, layout: str) -> tuple[float, dict[str, float]]:
    """Ingest ``dump`` into a fresh ``out`` with ``layout``: (seconds, what the folder holds)."""
    from kneecap.ingest import store
    from kneecap.ingest.smf import ingest_paths

    shutil.rmtree(out, ignore_errors=True)
    before = store.PARTITION_KEY, store.PARTITION_UNIT
    store.PARTITION_KEY, store.PARTITION_UNIT = LAYOUTS[layout]
    try:
        t0 = time.perf_counter()
        summary = ingest_paths([dump], out)
        seconds = time.perf_counter() - t0
    finally:
        store.PARTITION_KEY, store.PARTITION_UNIT = before
    assert summary.files[0].status == "ingested", summary.files[0].error
    tables = {p.name: store.table_files(p) for p in out.iterdir() if p.is_dir() and not p.name.startswith("_")}
    largest = max(tables, key=lambda t: len(tables[t]))
    files = tables[largest]
    return seconds, {"table": largest, "files": len(files), "folders": len({f.parent for f in files}),
                     "all_files": sum(len(v) for v in tables.values()),
                     "mb_on_disk": sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 1e6,
                     "rows": summary.files[0].records}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--years", type=int, default=10)
    ap.add_argument("--days", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--save", type=Path, default=None, help="write the rows as CSV here")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="kneecap-bench-partitions-") as tmp:
        work = Path(tmp)
        dumps = {"sparse": (work / "sparse.smf", sparse_dump(work / "sparse.smf", args.years),
                            f"one 70.1 a day, {args.years} years"),
                 "dense": (work / "dense.smf", dense_dump(work / "dense.smf", args.days),
                           f"{args.days} LPAR-day(s), lpar mix")}
        for name, (dump, records, what) in dumps.items():
            mb = dump.stat().st_size / 1e6
            times: dict[str, list[float]] = {layout: [] for layout in LAYOUTS}
            held: dict[str, dict[str, float]] = {}
            for r in range(args.repeats):
                order = list(LAYOUTS) if r % 2 == 0 else list(reversed(LAYOUTS))  # alternate: drift cancels
                for layout in order:
                    seconds, held[layout] = ingest_once(dump, work / f"out-{layout}", layout)
                    times[layout].append(seconds)
            for layout in LAYOUTS:
                med = statistics.median(times[layout])
                rows.append({"dump": name, "what": what, "input_mb": round(mb, 2), "records": records,
                             "layout": layout, **held[layout], "mb_on_disk": round(held[layout]["mb_on_disk"], 2),
                             "median_s": round(med, 3), "mb_per_s": round(mb / med, 2),
                             "month_over_day": ""})
            ratio = statistics.median(times["day"]) / statistics.median(times["month"])
            rows[-2]["month_over_day"] = round(ratio, 2)  # the month row: its throughput over day's
    if args.save is not None:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        with args.save.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    header = (f"{'dump':7} {'layout':6} {'input MB':>8} {'files':>6} {'folders':>7} {'all files':>9} "
              f"{'MB on disk':>10} {'median s':>8} {'MB/s':>7} {'month/day':>9}")
    lines = [header] + [f"{r['dump']:7} {r['layout']:6} {r['input_mb']:8.2f} {r['files']:6} {r['folders']:7} "
                        f"{r['all_files']:9} {r['mb_on_disk']:10.2f} {r['median_s']:8.3f} {r['mb_per_s']:7.2f} "
                        f"{r['month_over_day']!s:>9}" for r in rows]
    lines.append(f"(files and folders: of the table with most files; {args.repeats} runs of each layout, "
                 "alternated; month/day: throughput by month over by day, ratio of medians)")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
