"""Benchmark: how the cost of decode + marts grows with data, on DuckDB and on Spark ``local[2]``.

Synthetic SMF for 1, 10 and 100 LPAR-days (``--days``): one LPAR-day is 96 fifteen-minute
intervals, each with forty 72.3 records (service and report classes, 1-3 periods), two 70.1 records
of three 16-way partitions and forty SMF 30 interval records (the ``--mix lpar`` of
``bench_smf_decode.py``, every day generated afresh so the duplicate check keeps it all). Per
size, each step in its own process, timed from process start to exit, with its peak RSS:

* **decode**: ``kneecap -q ingest DIR --out OUT`` (kneecap's own readers, one dump after another,
  each framed in a second process);
* **decode on Spark**: ``kneecap -q ingest DIR --out OUT --engine spark --spark-master local[2]``
  (one Spark task per dump, session start included; the two output folders must hold the same
  files, byte for byte);
* **marts on DuckDB**: ``warehouse.build_marts`` over the reference tables and the decoded tables
  the driver reads;
* **marts on Spark**: ``spark_engine.build_marts`` on ``local[2]`` reading the partitioned decoded
  Parquet itself (``decoded_dir``), session start included. Two peaks: the Python driver's RSS
  and the JVM's (its ``VmHWM``, read from ``/proc`` just before the session stops).

The dump of a size is one file per LPAR-day (SMF is dumped per system and interval; the files are
what the Spark decode distributes). Then the per-GB slope of each step between the largest two
sizes, and Spark over local per step. Machines here are shared: compare the engines within one run.

Usage: PYTHONPATH=src python benchmarks/bench_scale.py [--days 1,10,100]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "smf"))


def _make_days(folder: Path, days: int) -> tuple[int, int]:
    """Write ``days`` LPAR-days of the lpar mix into ``folder``, a file per day; (records, bytes)."""
    import bench_smf_decode as bsd
    import synth  # tests/smf/synth.py

    k = synth.Coefficients()
    partitions, spaces = bsd.lpar_partitions(synth), bsd.address_spaces(synth)
    start = dt.datetime(2025, 3, 3)
    n = size = 0
    folder.mkdir(parents=True, exist_ok=True)
    for day in range(days):
        recs = bsd.day_records(synth, k, start + dt.timedelta(days=day), "lpar", partitions, spaces)
        path = folder / f"SYSA.D{day:03d}.smf"
        path.write_bytes(synth.frame_rdw(recs))
        n += len(recs)
        size += path.stat().st_size
    return n, size


def _marts_child(engine: str, decoded_dir: str) -> None:
    """One marts build (the step a child process times)."""
    from kneecap import warehouse

    measurements, sources = warehouse.read_reference_dir(ROOT / "data" / "reference")
    jvm_mb = float("nan")
    if engine == "spark":
        from kneecap import spark_engine

        spark = spark_engine.session("local[2]")
        tables = spark_engine.build_marts(measurements, sources, sql_root=ROOT / "pipelines" / "sql",
                                          decoded_dir=decoded_dir, keep=["fct_cpu_intervals", "fct_measurements"],
                                          spark=spark)
        jvm_pid = spark.sparkContext._jvm.ProcessHandle.current().pid()  # py4j: the JVM's own pid
        status = Path(f"/proc/{jvm_pid}/status").read_text(encoding="ascii")
        jvm_mb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM")) / 1024
        spark.stop()
    else:
        tables = warehouse.build_marts(measurements, sources, warehouse.read_decoded_tables(decoded_dir),
                                       sql_root=ROOT / "pipelines" / "sql")
    print(json.dumps({"counts": {"fct_cpu_intervals": len(tables["fct_cpu_intervals"]),
                                 "fct_measurements": len(tables["fct_measurements"])}, "jvm_mb": jvm_mb}))


def _files(folder: Path) -> dict[str, bytes]:
    """Every table and key file of an ingest folder by relative path (the manifest has timestamps)."""
    return {f.relative_to(folder).as_posix(): f.read_bytes() for f in sorted(folder.rglob("*"))
            if f.is_file() and f.name not in ("_manifest.jsonl", ".ingest.lock")}


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run ``cmd`` as a child process; (seconds, its peak RSS in MB, stdout)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True, cwd=ROOT)
        # wait4: this child's own rusage (ru_maxrss in KiB), not a maximum over every child so far
        _, status, usage = os.wait4(proc.pid, 0)
        secs = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err.read()[-3000:]}")
        return secs, usage.ru_maxrss / 1024, out.read()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", default="1,10,100", help="LPAR-days per size, comma-separated")
    ap.add_argument("--marts-child", nargs=2, metavar=("ENGINE", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--save", help="write the per-size table to this CSV (the docs render it)")
    args = ap.parse_args()
    if args.marts_child:
        _marts_child(*args.marts_child)
        return 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
           "MLFLOW_DISABLE_TELEMETRY": "true"}
    kneecap = [sys.executable, "-m", "kneecap.cli"]
    rows = []
    for days in (int(d) for d in args.days.split(",")):
        with tempfile.TemporaryDirectory(prefix="kneecap-bench-scale-") as tmp:
            dumps = Path(tmp) / "dumps"
            t0 = time.perf_counter()
            records, size = _make_days(dumps, days)
            made = time.perf_counter() - t0
            out = Path(tmp) / "decoded"
            dec_s, dec_rss, _ = _timed([*kneecap, "-q", "ingest", str(dumps), "--out", str(out)], env)
            out_spark = Path(tmp) / "decoded-spark"
            sdec_s, sdec_rss, _ = _timed([*kneecap, "-q", "ingest", str(dumps), "--out", str(out_spark),
                                          "--engine", "spark", "--spark-master", "local[2]"], env)
            if _files(out) != _files(out_spark):
                raise RuntimeError(f"{days} days: the Spark decode wrote other files than the local one")
            me = [sys.executable, str(Path(__file__).resolve()), "--marts-child"]
            duck_s, duck_rss, duck_out = _timed([*me, "duckdb", str(out)], env)
            spark_s, spark_rss, spark_out = _timed([*me, "spark", str(out)], env)
            duck, spark = json.loads(duck_out.splitlines()[-1]), json.loads(spark_out.splitlines()[-1])
            if duck["counts"] != spark["counts"]:
                raise RuntimeError(f"{days} days: the engines built different row counts: {duck} vs {spark}")
            counts = {**duck["counts"], "jvm_mb": spark["jvm_mb"]}
            rows.append({"days": days, "mb": size / 1e6, "records": records, "made_s": made, "decode_s": dec_s,
                         "decode_rss": dec_rss, "sdecode_s": sdec_s, "sdecode_rss": sdec_rss,
                         "duck_s": duck_s, "duck_rss": duck_rss, "spark_s": spark_s,
                         "spark_rss": spark_rss, **counts})
            r = rows[-1]
            print(f"{days:4d} LPAR-days {r['mb']:8.1f} MB {records:9,d} records (made in {made:.1f} s): "
                  f"decode {dec_s:6.1f} s, on Spark {sdec_s:6.1f} s; marts DuckDB {duck_s:6.1f} s, "
                  f"Spark {spark_s:6.1f} s; fct_cpu_intervals {r['fct_cpu_intervals']:,} rows", flush=True)
    if args.save:
        with open(args.save, "w", encoding="utf-8", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    print(f"\n{'LPAR-days':>9s} {'MB':>8s} {'records':>10s} {'decode s':>9s} {'RSS MB':>7s} {'Spark s':>8s} "
          f"{'RSS MB':>7s} {'DuckDB s':>9s} {'RSS MB':>7s} {'Spark s':>8s} {'RSS MB':>7s} {'JVM MB':>7s}")
    for r in rows:
        print(f"{r['days']:9d} {r['mb']:8.1f} {r['records']:10,d} {r['decode_s']:9.1f} {r['decode_rss']:7.0f} "
              f"{r['sdecode_s']:8.1f} {r['sdecode_rss']:7.0f} {r['duck_s']:9.1f} {r['duck_rss']:7.0f} "
              f"{r['spark_s']:8.1f} {r['spark_rss']:7.0f} {r['jvm_mb']:7.0f}")
    for r in rows:
        print(f"{r['days']:4d} LPAR-days, Spark local[2] over local: decode {r['sdecode_s'] / r['decode_s']:.2f}x, "
              f"marts {r['spark_s'] / r['duck_s']:.2f}x")
    if len(rows) >= 2:
        a, b = rows[-2], rows[-1]
        gb = (b["mb"] - a["mb"]) / 1000

        def slope(key: str) -> float:
            return (b[key] - a[key]) / gb

        print(f"slope between {a['days']} and {b['days']} LPAR-days, seconds per GB of SMF: decode "
              f"{slope('decode_s'):.1f}, decode on Spark local[2] {slope('sdecode_s'):.1f} "
              f"(ratio {slope('sdecode_s') / slope('decode_s'):.2f}), marts DuckDB {slope('duck_s'):.1f}, "
              f"marts Spark local[2] {slope('spark_s'):.1f} (ratio {slope('spark_s') / slope('duck_s'):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
