"""Benchmark: how long damaged SMF input holds kneecap up, beside reading the same bytes.

The hardening tests (``tests/smf/test_hardening.py`` findings 5 and 7) check what kneecap does
with two kinds of damage; how fast it does it is measured here, not in a unit test:

* **resync over zeros**: an RDW dump with 16, 64 and 256 MiB of zeros between its records. The
  framing skips the zeros as one quarantined span; the figure is MB/s of that resync beside
  ``hashlib.sha256`` over the same bytes in the same run (ratio), and the 256 MiB time over the
  16 MiB one (a linear resync makes it about 16; a scan that restarts per byte makes it hundreds).
* **gzip bomb**: a real dump followed by 64 gzip members of 16 MiB of zeros each (1 GiB from
  about 1 MB). ``decode_file`` refuses it once the expansion passes ``MAX_GUNZIP_RATIO``; the
  figure is the time to that refusal beside ``gzip.decompress`` of a quarter of the bomb's
  expanded size (what reading on would cost).

Each timing is the best of ``--repeat`` runs (shared, noisy machines: compare the ratios).

Usage::

    PYTHONPATH=src python benchmarks/bench_damage.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "smf"))

import synth  # noqa: E402

from kneecap.smf.framing import MAX_GUNZIP_RATIO, RecordStream, SMFDataError  # noqa: E402
from kneecap.smf.reader import decode_file  # noqa: E402


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def resync(repeat: int) -> None:
    recs = synth.plain_intervals(4)
    print("resync over zeros (RDW): MiB, resync s, MB/s, sha256 MB/s, resync/sha256 speed")
    times = {}
    for mib in (16, 64, 256):
        data = synth.frame_rdw(recs[:8]) + bytes(mib << 20) + synth.frame_rdw(recs[8:])

        def read(data=data):
            got = list(RecordStream(io.BytesIO(data)))
            bad = [r for r in got if r.error]
            assert len(bad) == 1 and len(got) == len(recs) + 1, "the zeros are one quarantined span"

        secs = _best(read, repeat)
        sha = _best(lambda data=data: hashlib.sha256(data).digest(), repeat)
        times[mib] = secs
        mb = len(data) / 1e6
        print(f"  {mib:3d} MiB  {secs:7.3f} s  {mb / secs:8.1f} MB/s  {mb / sha:8.1f} MB/s  {sha / secs:6.3f}")
    print(f"  256 MiB over 16 MiB: {times[256] / times[16]:.1f}x the time for 16x the zeros")


def bomb(repeat: int, tmp: Path) -> None:
    members = gzip.compress(bytes(16 << 20), 9)
    path = tmp / "bomb.bin.gz"
    path.write_bytes(gzip.compress(synth.frame_rdw(synth.plain_intervals(2))) + members * 64)

    def refuse() -> None:
        try:
            decode_file(path)
        except SMFDataError as e:
            assert f"expands more than {MAX_GUNZIP_RATIO}:1" in str(e), e
        else:
            raise AssertionError("the bomb was not refused")

    secs = _best(refuse, repeat)
    quarter = members * 16
    read_on = _best(lambda: gzip.decompress(quarter), repeat)
    print(f"gzip bomb ({path.stat().st_size / 1e6:.2f} MB, 1 GiB expanded): refused in {secs:.3f} s; "
          f"gzip.decompress of 256 MiB of it {read_on:.3f} s; refusal / that: {secs / read_on:.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    resync(args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        bomb(args.repeat, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
