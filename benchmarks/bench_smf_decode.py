"""Benchmark: decode speed and peak memory of kneecap.smf.reader.decode_file, or of the whole
``kneecap ingest`` process.

Generates a synthetic SMF dump in a temporary directory: 72.3-heavy by default (40 service/report
classes with 1-3 periods per interval, plus one 70.1 per interval), or with ``--mix lpar`` the
mix of issue #14: one 70.1 per twenty 72.3 records, each 70.1 describing three partitions of 16
logical processors (CPs and zIIPs), as on a busy CEC, and one SMF 30 interval record per address
space and interval for forty address spaces (as many 30 as 72.3 records). Then

* decodes it in a child process (so its peak RSS can be read with
  ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``) and prints MB/s and records/s; with
  ``--ingest`` the child is ``kneecap ingest FILE --out DIR`` itself, timed from process start to
  exit (interpreter start, imports, decoding, checks and the Parquet writes),
* times ``sha256sum`` of the same file in the same run and prints the speed ratio (goal >= 0.25
  for decode, >= 0.5 for the whole ingest) and the peak RSS (goal < 500 MB).

With ``--ingest --pairs N`` the ingest (each into a new folder) and ``sha256sum`` run in turn N
times, and each pair's ratio is printed with their median: pairs keep the ratio meaningful on a
shared machine whose speed drifts between runs. Before timing, kneecap's modules are compiled to
bytecode (``compileall``, as ``pip install`` does): where ``PYTHONDONTWRITEBYTECODE`` is set, as in
some CI and sandbox shells, every ``kneecap`` process would otherwise compile them again (about
50 ms of CPU before the framing process starts), which is not what a user's installed kneecap does.

Usage::

    PYTHONPATH=src python benchmarks/bench_smf_decode.py [--mb 200] [--framing rdw|bdw|vbs]
                                                         [--mix class|lpar] [--ingest [--pairs N]]
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "smf"))


def lpar_partitions(synth) -> list:
    """Three partitions of 16 logical processors: the measured one (8 CPs + 8 zIIPs) and two others."""
    own = synth.Partition("LPAR1", 1, [synth.LogicalCPU("CP" if i < 8 else "IIP", 900, 300 + 7 * i, 590 - 7 * i)
                                       for i in range(16)])
    others = [synth.Partition(f"LPAR{n}", n, [synth.LogicalCPU("CP", 900, 200 + 5 * i) for i in range(16)])
              for n in (2, 3)]
    return [own, *others]


def address_spaces(synth) -> list:
    """Forty address spaces writing SMF 30 interval records: as many as there are 72.3 records
    per interval (z/OS Connect servers, CICS regions, Db2, MQ, batch initiators, system tasks)."""
    kinds = [("ZCON", 40.0, 60.0), ("CICS", 25.0, 2.0), ("DB2", 15.0, 20.0), ("MQ", 5.0, 1.0),
             ("INIT", 8.0, 0.0)]
    return [synth.AddressSpace(f"{kinds[i % 5][0]}{i:03d}", kinds[i % 5][1] + i, 0.5 + 0.01 * i,
                               kinds[i % 5][2], 0.02 * i, job_id=f"STC{10000 + i:05d}")
            for i in range(40)]


def day_records(synth, k, start: dt.datetime, mix: str, partitions: list, spaces: list) -> list[bytes]:
    """One LPAR-day of records from ``start``: 96 fifteen-minute intervals of forty 72.3 records
    (1-3 periods, report classes from class 30) plus, for ``mix`` ``class``, one small 70.1, or
    for ``lpar``, two 70.1 of ``partitions`` and one SMF 30 per address space in ``spaces``."""
    recs = []
    for i in range(96):
        t0 = start + dt.timedelta(minutes=15 * i)
        for c in range(40):
            n_per = 1 + c % 3
            periods = [
                synth.Period(period=j + 1, ended=1000 + 37 * c + j, resp_ms=5.0 + c,
                             tcb_s=10.0 + c, srb_s=0.5, ziip_s=4.0 + j,
                             ziip_on_cp_s=0.2, cpu_using=100, cpu_delay=10,
                             ziip_using=50, ziip_delay=3, total_using=150,
                             total_delay=20)
                for j in range(n_per)
            ]
            recs.append(synth.record_72_3("SYSA", "PLEX1", t0, 900.0, f"SC{c:03d}",
                                          "WKL1", periods, k, report_class=c >= 30))
        if mix == "lpar":  # one 70.1 per twenty 72.3, each with 48 logical processors
            recs.extend(synth.record_70_1("SYSA", "PLEX1", t0, 900.0, partitions, 1) for _ in range(2))
            recs.extend(synth.record_30("SYSA", "PLEX1", t0, 900.0, a) for a in spaces)
            continue
        own = synth.Partition("LPAR1", 1, [
            synth.LogicalCPU("CP", 900, 300, 590), synth.LogicalCPU("CP", 900, 280, 610),
            synth.LogicalCPU("IIP", 900, 200, 700), synth.LogicalCPU("IIP", 900, 150, 750),
        ])
        recs.append(synth.record_70_1("SYSA", "PLEX1", t0, 900.0, [own], 1))
    return recs


def _make_dump(path: Path, target_mb: float, framing: str, mix: str = "class") -> int:
    import synth  # tests/smf/synth.py

    start = dt.datetime(2025, 3, 3)
    k = synth.Coefficients()
    written = 0
    n_records = 0
    day = 0
    partitions = lpar_partitions(synth)
    spaces = address_spaces(synth)
    with path.open("wb") as fh:
        while written < target_mb * 1e6:
            recs = day_records(synth, k, start + dt.timedelta(days=day), mix, partitions, spaces)
            day += 1
            if framing == "rdw":
                data = synth.frame_rdw(recs)
            elif framing == "bdw":
                data = synth.frame_bdw(recs)
            else:
                data = synth.frame_bdw(recs, spanned=True)
            # every day is generated afresh (about 0.6 s per 7.7 MB): repeated bytes would be
            # dropped by the reader's duplicate-record check and leave nothing to measure
            fh.write(data)
            written += len(data)
            n_records += len(recs)
    return n_records


def _child(path: str) -> None:
    from kneecap.smf.reader import decode_file

    t0 = time.perf_counter()
    res = decode_file(path)
    secs = time.perf_counter() - t0
    print(json.dumps({
        "seconds": secs,
        "records": res.records,
        "rows_72": len(res.smf72_workload),
        "rows_70": len(res.smf70_cpu),
        "quarantined": len(res.quarantine),
    }))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--framing", choices=("rdw", "bdw", "vbs"), default="rdw")
    ap.add_argument("--mix", choices=("class", "lpar"), default="class")
    ap.add_argument("--ingest", action="store_true", help="time the whole `kneecap ingest FILE --out DIR` process")
    ap.add_argument("--pairs", type=int, default=1,
                    help="with --ingest: ingest and sha256sum this many times in turn, the median ratio")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"bench.{args.framing}.smf"
        t0 = time.perf_counter()
        n = _make_dump(path, args.mb, args.framing, args.mix)
        size = path.stat().st_size
        print(f"generated {size / 1e6:.1f} MB, {n} records ({args.framing}, {args.mix} mix) "
              f"in {time.perf_counter() - t0:.1f} s")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(HERE.parent / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        if args.ingest:
            _whole_ingest(path, size, Path(tmp), env, max(1, args.pairs))
            return
        out = subprocess.run([sys.executable, __file__, "--child", str(path)], env=env,
                             check=True, capture_output=True, text=True)
        child = json.loads(out.stdout.strip().splitlines()[-1])
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        t1 = time.perf_counter()
        subprocess.run(["sha256sum", str(path)], check=True, capture_output=True)
        sha_s = time.perf_counter() - t1
        dec_mbs = size / 1e6 / child["seconds"]
        sha_mbs = size / 1e6 / sha_s
        print(f"decode_file: {child['seconds']:.2f} s, {dec_mbs:.1f} MB/s, "
              f"{child['records'] / child['seconds']:,.0f} records/s "
              f"({child['rows_72']} smf72_workload rows, {child['rows_70']} smf70_cpu rows, "
              f"{child['quarantined']} quarantined)")
        print(f"sha256sum:   {sha_s:.2f} s, {sha_mbs:.1f} MB/s")
        print(f"ratio decode/sha256 = {dec_mbs / sha_mbs:.3f} (goal >= 0.25)")
        print(f"peak RSS of decode child = {rss_mb:.0f} MB (goal < 500 MB)")


def _whole_ingest(path: Path, size: int, tmp: Path, env: dict[str, str], pairs: int) -> None:
    """``kneecap ingest`` as a user runs it, beside ``sha256sum`` of the same file, ``pairs`` times in turn."""
    kneecap = Path(sys.executable).with_name("kneecap")
    # bytecode as an installed kneecap has it (see the module docstring)
    compileall.compile_dir(HERE.parent / "src" / "kneecap", quiet=1)
    ratios, ingest_times, sha_times = [], [], []
    for i in range(pairs):
        t0 = time.perf_counter()
        done = subprocess.run([str(kneecap), "-q", "ingest", str(path), "--out", str(tmp / f"decoded{i}")],
                              env=env, capture_output=True, text=True)
        ingest_s = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"kneecap ingest exited {done.returncode}: {done.stderr.strip()[-2000:]}")
        t1 = time.perf_counter()
        subprocess.run(["sha256sum", str(path)], check=True, capture_output=True)
        sha_s = time.perf_counter() - t1
        ingest_times.append(ingest_s)
        sha_times.append(sha_s)
        ratios.append(sha_s / ingest_s)  # the ratio of speeds: MB/s of the ingest over MB/s of sha256sum
        if pairs > 1:
            print(f"pair {i + 1}: ingest {ingest_s:.2f} s, sha256sum {sha_s:.2f} s, ratio {ratios[-1]:.3f}")
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    ingest_s, sha_s = statistics.median(ingest_times), statistics.median(sha_times)
    ing_mbs, sha_mbs = size / 1e6 / ingest_s, size / 1e6 / sha_s
    print(f"kneecap ingest (whole process): {ingest_s:.2f} s, {ing_mbs:.1f} MB/s"
          + (f" (median of {pairs})" if pairs > 1 else ""))
    print(f"sha256sum:                      {sha_s:.2f} s, {sha_mbs:.1f} MB/s")
    if pairs > 1:
        print(f"ratio ingest/sha256 = {statistics.median(ratios):.3f}, median of {pairs} pairs "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f}; goal >= 0.5)")
    else:
        print(f"ratio ingest/sha256 = {ratios[0]:.3f} (goal >= 0.5)")
    print(f"peak RSS of the ingest process = {rss_mb:.0f} MB (goal < 500 MB)")


if __name__ == "__main__":
    main()
