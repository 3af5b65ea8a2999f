"""Fuzz campaign: mutated RMF Postprocessor XML reports through kneecap's reader; crashes / hangs / intervals lost.

Every input is a bundled 34-interval CPU report with one mutation (``tests/rmf/xml_fuzzing.py``
builds it and keeps the ground truth): bit flips, deleted, inserted or random bytes, a cut,
a cell's value replaced (blanks, fillers, ``inf``, ``1_000``, junk), an interval repeated, a
billion-laughs entity declaration, deep nesting, invalid UTF-8, a broken interval start tag.
Input ``i`` of seed ``s`` is the same on every machine and run. Each goes through
:func:`kneecap.rmf.read_postprocessor` in a worker process and is counted as

* a **crash**: any exception but ``RMFReportError``;
* a **hang**: more than :data:`BUDGET_S` seconds, twice (a busy machine does not make one), or
  over :data:`HARD_LIMIT_S` at all (stopped by an alarm);
* **intervals lost**: intervals wholly before or after the damage not read.

It also prints the intervals quarantined and how many inputs the damage left malformed XML
(expat, independently of the reader): after such a break the reader reads on from the next
interval's start tag.

The first few failing inputs go to ``--out`` (``.xml`` and a ``.txt`` saying what was done).
Exit status 1 when anything failed.

Usage::

    PYTHONPATH=src python benchmarks/fuzz_rmf_xml.py [--n 5500] [--seed 14] [--workers 2] [--out DIR]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import signal
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzz_smf_ingest import _alarm, _Overdue  # noqa: E402 - the SMF campaign's alarm, one mechanism for both

#: Seconds one input may take (the reader and the ground truth's own expat parse of 400 KB).
BUDGET_S = 2.0
#: An input still running after this long is stopped (an alarm in the worker) and is a hang.
HARD_LIMIT_S = 30.0
CHUNK = 100

_BASE = None


def _base():
    """The clean report every input mutates, loaded once per process."""
    from tests.rmf import xml_fuzzing

    global _BASE
    if _BASE is None:
        _BASE = xml_fuzzing.Base.load()
    return _BASE


def _run(args: tuple[int, int]) -> tuple[int, str, float, int, int, int, bool, bool, str | None, str | None, str]:
    import numpy as np

    from tests.rmf import xml_fuzzing

    seed, index = args
    kind = xml_fuzzing.KINDS[index % len(xml_fuzzing.KINDS)]
    case = xml_fuzzing.mutate(np.random.default_rng([seed, index]), _base(), kind)
    secs = 0.0
    signal.signal(signal.SIGALRM, _alarm)
    for _ in range(2):  # a run over the budget is measured again
        t0 = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, HARD_LIMIT_S)
        try:
            v = xml_fuzzing.verdict(case, _base())
        except _Overdue:  # a runaway input: a hang, and the campaign goes on
            return (index, kind, HARD_LIMIT_S, 0, 0, 0, xml_fuzzing.well_formed(case.data), True, None, None,
                    case.log)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        secs = time.perf_counter() - t0
        if secs <= BUDGET_S:
            break
    return (index, kind, secs, v.intact, v.lost, v.quarantined, xml_fuzzing.well_formed(case.data),
            secs > BUDGET_S, v.crash, v.file_error, case.log)


def _chunk(args: tuple[int, int, int]) -> list:
    seed, lo, hi = args
    return [_run((seed, i)) for i in range(lo, hi)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5_500, help="inputs (default 5,500: 500 per kind)")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/kneecap-fuzz-rmf"),
                    help="folder for the failing inputs (default /tmp/kneecap-fuzz-rmf)")
    ap.add_argument("--keep", type=int, default=5, help="failing inputs kept per category")
    args = ap.parse_args(argv)
    import numpy as np

    from tests.rmf import xml_fuzzing

    t0 = time.perf_counter()
    tasks = [(args.seed, lo, min(lo + CHUNK, args.n)) for lo in range(0, args.n, CHUNK)]
    with mp.get_context("fork").Pool(args.workers) as pool:
        results = [r for chunk in pool.imap_unordered(_chunk, tasks) for r in chunk]
    wall = time.perf_counter() - t0

    tally: dict[str, Counter] = defaultdict(Counter)
    kept: Counter = Counter()
    for index, kind, secs, intact, lost, quarantined, whole, hang, crash, file_error, log in sorted(results):
        for key in (kind, "all"):
            t = tally[key]
            t["inputs"] += 1
            t["intact"] += intact
            t["lost"] += lost
            t["losing"] += lost > 0
            t["crashes"] += crash is not None
            t["hangs"] += hang
            t["quarantined"] += quarantined
            t["XML broken"] += not whole
            t["file errors"] += file_error is not None
            t["ms"] += secs * 1000
        failed = [c for c, bad in (("crash", crash), ("hang", hang), ("lost", lost)) if bad]
        if failed and kept[failed[0]] < args.keep:
            kept[failed[0]] += 1
            case = xml_fuzzing.mutate(np.random.default_rng([args.seed, index]), _base(), kind)
            args.out.mkdir(parents=True, exist_ok=True)
            stem = args.out / f"{failed[0]}-{index}"
            stem.with_suffix(".xml").write_bytes(case.data)
            stem.with_suffix(".txt").write_text(f"input {index} ({kind}): {', '.join(failed)}\n{log}\n"
                                                f"intact {intact}, lost {lost}\n{file_error or ''}\n{crash or ''}\n",
                                                encoding="utf-8")

    cols = ("inputs", "intact", "crashes", "hangs", "lost", "losing", "quarantined", "XML broken", "file errors")
    print(f"{'kind':14s}" + "".join(f"{c:>13s}" for c in cols) + f"{'ms/input':>10s}")
    for kind in [*sorted(k for k in tally if k != "all"), "all"]:
        t = tally[kind]
        print(f"{kind:14s}" + "".join(f"{t[c]:>13,}" for c in cols) + f"{t['ms'] / max(t['inputs'], 1):>10.1f}")
    a = tally["all"]
    print(f"\n{a['inputs']:,} inputs in {wall:.0f} s ({args.workers} workers): crashes {a['crashes']}, hangs "
          f"{a['hangs']}, intact intervals lost {a['lost']} of {a['intact']:,} (goal 0 / 0 / 0)")
    if kept:
        print(f"failing inputs in {args.out}")
    return 1 if a["crashes"] or a["hangs"] or a["lost"] else 0


if __name__ == "__main__":
    sys.exit(main())
