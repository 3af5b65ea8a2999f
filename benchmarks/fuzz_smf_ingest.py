"""Fuzz campaign: mutated SMF dumps through kneecap's ingest path; crashes / hangs / records lost.

Every input is a dump of distinct, known records (72.3, 70.1, 30, 123 and a type kneecap only
counts), framed RDW, RDW with VBS segments, BDW or BDW with spanned segments, then mutated: bit
flips anywhere or in descriptors and headers, byte insertions and deletions, truncation,
duplicated records and blocks, zeroed spans, random garbage runs, fragments of the dump spliced
in, concatenations of dumps, gzip with the stream cut or damaged, and mixes of these
(``tests/smf/fuzzing.py`` builds them and keeps the ground truth of which records a mutation left
intact). Input ``i`` of seed ``s`` is the same on every machine and run.

Each input goes through the framing (``RecordStream``), the decoders (``iter_decode``) and, for
one input in ten, the reader's finalisers, in a worker process, and is counted as

* a **crash**: any exception but ``SMFDataError``;
* a **hang**: more than 0.25 s + 2 ms per KiB of input, twice (a run over the budget is
  measured again, so a busy machine does not make one), or over 60 s at all (stopped by an
  alarm);
* **records lost**: intact records not delivered byte for byte by the framing, or delivered
  and missing from the decoded tables;
* **bytes unaccounted**: in an RDW file without spanned segments, bytes neither in a delivered
  record nor in a quarantined stretch.

The first few failing inputs of each category are written to ``--out`` (the input as ``.bin``,
what was done to it and the verdict as ``.txt``); ``--replay I`` runs input ``I`` alone and
prints the same. Exit status 1 when anything failed.

Usage::

    PYTHONPATH=src python benchmarks/fuzz_smf_ingest.py [--n 100000] [--seed 14] [--workers 2]
                                                         [--out DIR] [--replay I]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "smf"))

#: Per-input time budget: a fixed part for interpreter and pandas overheads, and a part per KiB.
BUDGET_S = 0.25
BUDGET_S_PER_KIB = 0.002
#: An input still running after this long is stopped (an alarm in the worker) and is a hang.
HARD_LIMIT_S = 60.0
#: Inputs handed to a worker at a time.
CHUNK = 250
#: One input in this many also runs the reader's finalisers (they cost twice the decoding).
FINALISE_EVERY = 10

_POOL = None


class _Overdue(BaseException):
    """Raised by the alarm in a worker; a BaseException so that no ``except Exception`` eats it."""


def _alarm(signum, frame):
    raise _Overdue


@dataclass
class Outcome:
    """One input's result, as the worker hands it back (bytes only when it failed)."""

    index: int
    kind: str
    framing: str
    nbytes: int
    seconds: float
    intact: int
    lost_framing: int = 0
    lost_decode: int = 0
    unaccounted: int = 0
    crash: str | None = None
    hang: bool = False
    file_error: str | None = None
    log: list[str] = field(default_factory=list)
    data: bytes | None = None

    @property
    def failed(self) -> list[str]:
        """The categories this input fails in."""
        out = []
        if self.crash:
            out.append("crash")
        if self.hang:
            out.append("hang")
        if self.lost_framing or self.lost_decode:
            out.append("lost")
        if self.unaccounted:
            out.append("unaccounted")
        return out


def budget_s(nbytes: int) -> float:
    """Time one input may take: proportional to its size, plus a fixed part."""
    return BUDGET_S + BUDGET_S_PER_KIB * nbytes / 1024


def build_input(seed: int, index: int):
    """Input ``index`` of campaign ``seed``: (kind, mutated dump)."""
    import fuzzing
    import numpy as np

    global _POOL
    if _POOL is None:
        _POOL = fuzzing.record_pool()
    kind = fuzzing.KINDS[index % len(fuzzing.KINDS)]
    return kind, fuzzing.random_input(np.random.default_rng([seed, index]), _POOL, kind)


def _timed_verdict(dump, finalise: bool):
    """(verdict or None when stopped by the alarm, seconds)."""
    import fuzzing

    signal.signal(signal.SIGALRM, _alarm)
    t0 = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, HARD_LIMIT_S)
    try:
        v = fuzzing.verdict(dump, finalise=finalise)
    except _Overdue:
        v = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return v, time.perf_counter() - t0


def run_input(seed: int, index: int) -> Outcome:
    """Build input ``index``, run it through kneecap and classify the outcome."""
    kind, dump = build_input(seed, index)
    data = dump.input_bytes()
    size = max(len(data), len(dump.data))
    finalise = index % FINALISE_EVERY == 0
    v, secs = _timed_verdict(dump, finalise)
    hang = v is None
    if not hang and secs > budget_s(size):  # measure again: a busy machine is not a hang
        v, secs = _timed_verdict(dump, finalise)
        hang = v is None or secs > budget_s(size)
    out = Outcome(index, kind, dump.framing + ("+gz" if dump.gz is not None else ""), len(data),
                  secs, 0 if v is None else v.intact, log=list(dump.log), hang=hang)
    if v is not None:
        out.lost_framing, out.lost_decode = v.lost_framing, v.lost_decode
        out.unaccounted = v.unaccounted or 0
        out.crash, out.file_error = v.crash, v.file_error
    if out.failed:
        out.data = data
    return out


def _run_chunk(args: tuple[int, int, int]) -> list[Outcome]:
    seed, lo, hi = args
    return [run_input(seed, i) for i in range(lo, hi)]


def _describe(o: Outcome) -> str:
    lines = [(f"input {o.index} ({o.kind}, {o.framing}, {o.nbytes} bytes, {o.seconds * 1000:.1f} ms): "
             f"{', '.join(o.failed) or 'ok'}"),
             (f"intact records {o.intact}, lost by the framing {o.lost_framing}, lost by the "
             f"decoders {o.lost_decode}, bytes unaccounted {o.unaccounted}"),
             f"mutations: {'; '.join(o.log)}"]
    if o.file_error:
        lines.append(f"file-level SMFDataError: {o.file_error}")
    if o.crash:
        lines.append(o.crash)
    return "\n".join(lines)


def _save(out_dir: Path, o: Outcome, seed: int) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / f"{o.failed[0]}-{o.index}"
    stem.with_suffix(".bin").write_bytes(o.data or b"")
    stem.with_suffix(".txt").write_text(
        _describe(o) + f"\n\nreplay: PYTHONPATH=src python benchmarks/fuzz_smf_ingest.py "
        f"--seed {seed} --replay {o.index}\n", encoding="utf-8")


@dataclass
class Tally:
    """Counts for one mutation kind (or all of them)."""

    inputs: int = 0
    crashes: int = 0
    hangs: int = 0
    lost: int = 0
    lost_inputs: int = 0
    unaccounted: int = 0
    records: int = 0
    seconds: float = 0.0

    def add(self, o: Outcome) -> None:
        self.inputs += 1
        self.crashes += o.crash is not None
        self.hangs += o.hang
        self.lost += o.lost_framing + o.lost_decode
        self.lost_inputs += bool(o.lost_framing or o.lost_decode)
        self.unaccounted += bool(o.unaccounted)
        self.records += o.intact
        self.seconds += o.seconds


def _table(tallies: dict[str, Tally]) -> str:
    head = ("kind", "inputs", "intact recs", "crashes", "hangs", "recs lost", "inputs losing",
            "unaccounted", "ms/input")
    rows = [head]
    for k, t in tallies.items():
        rows.append((k, f"{t.inputs:,}", f"{t.records:,}", str(t.crashes), str(t.hangs),
                     str(t.lost), str(t.lost_inputs), str(t.unaccounted),
                     f"{1000 * t.seconds / max(t.inputs, 1):.1f}"))
    widths = [max(len(r[c]) for r in rows) for c in range(len(head))]
    return "\n".join("  ".join(x.ljust(w) if c == 0 else x.rjust(w)
                               for c, (x, w) in enumerate(zip(r, widths, strict=True)))
                     for r in rows)


def plain_transfers(seed: int, n: int) -> dict[str, int]:
    """How many of ``n`` plain binary transfers per tail kind framing takes for SMF (goal 0).

    ``fuzzing.plain_input``'s ``descriptor`` kind is the floor any framing rule has: every header
    has a descriptor before it, and one whose length is the record's own cannot be told from a
    real one; it is reported, not judged.
    """
    import fuzzing
    import numpy as np

    from kneecap.smf.framing import SMFDataError, find_framing

    pool = fuzzing.record_pool()
    taken = dict.fromkeys(fuzzing.PLAIN_TAILS, 0)
    for i in range(n):
        rng = np.random.default_rng([seed, 1_000_000 + i])
        for tails in fuzzing.PLAIN_TAILS:
            data = fuzzing.plain_input(rng, pool, tails)
            try:
                find_framing(data[:1 << 16], eof=len(data) <= 1 << 16)
            except SMFDataError:
                continue
            taken[tails] += 1
    return taken


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="inputs (default 100,000)")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/kneecap-fuzz"),
                    help="folder for the failing inputs (default /tmp/kneecap-fuzz)")
    ap.add_argument("--keep", type=int, default=5, help="failing inputs kept per category")
    ap.add_argument("--replay", type=int, help="run input I alone and describe it")
    ap.add_argument("--plain", type=int, default=3000,
                    help="plain binary transfers (RDWs stripped) per tail kind that must be refused")
    args = ap.parse_args(argv)
    if args.replay is not None:
        o = run_input(args.seed, args.replay)
        print(_describe(o))
        return 1 if o.failed else 0

    import fuzzing

    t0 = time.perf_counter()
    tasks = [(args.seed, lo, min(lo + CHUNK, args.n)) for lo in range(0, args.n, CHUNK)]
    tallies = {k: Tally() for k in fuzzing.KINDS}
    total = Tally()
    kept: Counter[str] = Counter()
    done = 0
    print(f"fuzzing kneecap's SMF ingest: {args.n:,} inputs, seed {args.seed}, "
          f"{args.workers} worker(s); failing inputs go to {args.out}", flush=True)
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for outcomes in pool.imap_unordered(_run_chunk, tasks):
            for o in outcomes:
                tallies[o.kind].add(o)
                total.add(o)
                for cat in o.failed:
                    if kept[cat] < args.keep:
                        kept[cat] += 1
                        _save(args.out, o, args.seed)
            before, done = done, done + len(outcomes)
            if done * 10 // args.n > before * 10 // args.n:
                el = time.perf_counter() - t0
                print(f"  {done:,} inputs, {el:.0f} s: {total.crashes} crashes, {total.hangs} hangs, "
                      f"{total.lost} records lost, {total.unaccounted} unaccounted", flush=True)
    secs = time.perf_counter() - t0
    tallies["all"] = total
    print()
    print(_table(tallies))
    print(f"\n{total.inputs:,} inputs in {secs:.0f} s ({total.inputs / secs:.0f} inputs/s, "
          f"{args.workers} worker(s)): {total.crashes} crashes / {total.hangs} hangs / "
          f"{total.lost} neighbour records lost (goal 0 / 0 / 0); {total.unaccounted} inputs with "
          f"bytes unaccounted")
    t1 = time.perf_counter()
    plain = plain_transfers(args.seed, args.plain)
    print(f"plain binary transfers taken for SMF dumps, of {args.plain:,} each: records as they are "
          f"{plain['as_is']}, random last bytes {plain['random']} (goal 0 / 0); every record ending in "
          f"bytes that pass for a descriptor {plain['descriptor']} (the floor: reported, not judged); "
          f"{time.perf_counter() - t1:.0f} s")
    bad = total.crashes + total.hangs + total.lost + total.unaccounted + plain["as_is"] + plain["random"]
    if bad:
        print(f"failing inputs written to {args.out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
