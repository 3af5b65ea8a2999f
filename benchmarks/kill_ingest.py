"""Kill campaign: real ``kneecap ingest`` runs killed with SIGKILL or SIGTERM at random moments (#35).

Six ingests, of several sizes and both modes: decoding into a store (``--out``) and bringing files
into the pipeline's input area (``--into``, the default mode: checked in a scratch folder, then
copied), each of one dump or of a mix (RDW, VBS, gzip dumps and an RMF XML report). Every ingest
is first run clean, twice: its time and the store (or input area) it leaves are the reference.
Then, per kill, the ingest starts afresh on an empty store; after a seeded random delay within
its clean time it gets SIGKILL or SIGTERM; the phase it was in is noted (framing process alive:
decoding; none yet and nothing on disk: start-up; in ``--into`` mode, the scratch folder gone:
copying; otherwise writing and committing), and what the killed run left (uncommitted files,
temporary files, scratch folders, inputs already committed). Then, with the same command, the
next ingest runs. A kill is a **failure** when

* a process of the killed ingest is still alive 3 s after it (``orphan``; it is then killed);
* the next ingest does not exit 0 within 3x the slower clean time plus 3 s (``slow``/``failed``);
* the store does not equal the clean one: the same committed Parquet and key files byte for byte,
  the same rows per table and the same manifest apart from ingest times, nothing else in it
  (``store differs``); in ``--into`` mode, the input area's files and bytes (hidden ones included);
* a scratch folder or a tagged process is left after the next ingest (``left over``).

Processes are found by a tag in their environment, which forked children inherit wherever they
are re-parented (``tests/smf/killing.py``). The plan (which ingest, signal and delay) is the same
for a seed on every machine; the moment a delay lands in depends on the machine's speed.

Usage::

    PYTHONPATH=src python benchmarks/kill_ingest.py [--kills 240] [--seed 35] [--save CSV]
"""

from __future__ import annotations

import argparse
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "smf"))

import killing  # noqa: E402 - tests/smf/killing.py, on the path just above

RMF_SAMPLE = ROOT / "data" / "raw" / "rmf-samples" / "rmfpp-cpu-small-RPRT-20220412.xml"
#: The next ingest's bound: this many times the slower clean run, plus a start-up allowance.
SLACK, SLACK_S = 3.0, 3.0
#: Seconds a killed ingest's processes get to end before one left alive is an orphan.
ORPHAN_S = 3.0
SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM}


@dataclass
class Config:
    """One ingest the campaign kills: its mode and inputs."""

    name: str
    mode: str  # "out" or "into"
    inputs: list[Path]
    clean_s: float = 0.0
    slowest_s: float = 0.0
    reference: object = None


@dataclass
class Kill:
    """One kill and what followed it."""

    index: int
    config: str
    mode: str
    signal: str
    delay_s: float
    phase: str
    rc: int
    committed_before: int
    left_uncommitted: int
    left_tmp: int
    left_scratch: int
    orphans: int
    next_s: float
    next_rc: int
    store_equal: bool
    left_after: int
    outcome: str


def make_inputs(folder: Path, seed: int) -> dict[str, list[Path]]:
    """The campaign's input files, seeded: one LPAR-day (11.5 MB), four (46 MB), and a mix of three
    one-day dumps (RDW, VBS, gzip) and a small RMF Postprocessor XML report."""
    folder.mkdir(parents=True, exist_ok=True)
    one = folder / "one_day.smf"
    four = folder / "four_days.smf"
    mix = folder / "mix"
    mix.mkdir(exist_ok=True)
    killing.write_dump(one, 1, seed=seed)
    killing.write_dump(four, 4, seed=seed + 1)
    killing.write_dump(mix / "a_one_day.smf", 1, seed=seed + 2)
    killing.write_dump(mix / "b_one_day_vbs.smf", 1, seed=seed + 3, framing="vbs")
    killing.write_dump(mix / "c_one_day.smf.gz", 1, seed=seed + 4, gzipped=True)
    shutil.copy(RMF_SAMPLE, mix / "d_report.xml")
    return {"one day": [one], "four days": [four], "mix": sorted(mix.iterdir())}


def command(cfg: Config, work: Path) -> list[str]:
    target = {"out": work / "store"} if cfg.mode == "out" else {"into": work / "raw"}
    return killing.ingest_command(cfg.inputs, **target)


def state(cfg: Config, work: Path) -> object:
    """What the ingest left: the store's committed state, or the input area's files."""
    if cfg.mode == "out":
        return killing.store_state(work / "store")
    return killing.folder_state(work / "raw")


def equal(cfg: Config, got: object) -> bool:
    if cfg.mode == "out":
        return got.same_commit(cfg.reference) and not got.other  # type: ignore[attr-defined]
    return got == cfg.reference


def fresh(work: Path) -> Path:
    if work.exists():
        shutil.rmtree(work)
    (work / "tmp").mkdir(parents=True)
    return work


def run_clean(cfg: Config, work: Path) -> None:
    """Two clean runs: the reference state and times (the slower bounds the runs after a kill)."""
    times = []
    for _ in range(2):
        fresh(work)
        tag = uuid.uuid4().hex
        t0 = time.monotonic()
        subprocess.run(command(cfg, work), env=killing.ingest_env(tag, work / "tmp"), cwd=work, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        times.append(time.monotonic() - t0)
        got = state(cfg, work)
        if cfg.reference is not None and not equal(cfg, got):
            raise SystemExit(f"{cfg.name}: two clean ingests differ; the campaign cannot judge")
        cfg.reference = got
    cfg.clean_s, cfg.slowest_s = statistics.median(times), max(times)


def phase_now(proc: subprocess.Popen, cfg: Config, work: Path, scratch_seen: bool) -> str:
    """The phase the ingest is in, from what can be seen of it (its children, its files)."""
    if killing.children(proc.pid):
        return "decoding"
    on_disk = (work / "store").exists() or (work / "raw").exists()
    if not on_disk and not scratch_seen:
        return "start-up"
    if cfg.mode == "into" and scratch_seen and not killing.scratch_left(work / "tmp"):
        return "copying"
    return "writing/committing"


def leftovers(cfg: Config, work: Path) -> tuple[int, int, int, int]:
    """What a killed run left: committed inputs, uncommitted final-named files, temporary files, scratch folders."""
    scratch = killing.scratch_left(work / "tmp")
    stores = [work / "store"] if cfg.mode == "out" else [work / "tmp" / s for s in scratch]
    committed = uncommitted = tmp = 0
    for store in stores:
        st = killing.store_state(store)
        committed += len(st.manifest)
        tmp += sum(Path(o).name.endswith((".tmp", ".part")) for o in st.other)
        uncommitted += sum(not Path(o).name.endswith((".tmp", ".part")) for o in st.other)
    if cfg.mode == "into":
        hidden = [f for f in killing.folder_state(work / "raw") if Path(f).name.startswith(".")]
        tmp += len(hidden)
    return committed, uncommitted, tmp, len(scratch)


def one_kill(i: int, cfg: Config, sig: str, delay: float, work: Path) -> Kill:
    fresh(work)
    tag = uuid.uuid4().hex
    env = killing.ingest_env(tag, work / "tmp")
    cmd = command(cfg, work)
    proc = killing.start_ingest(cmd, env, work)
    t0 = time.monotonic()
    scratch_seen = False
    phase = "start-up"
    while time.monotonic() - t0 < delay and proc.poll() is None:
        scratch_seen = scratch_seen or bool(killing.scratch_left(work / "tmp"))
        phase = phase_now(proc, cfg, work, scratch_seen)
        time.sleep(0.002)
    if proc.poll() is not None:
        phase = "ended before the signal"
    else:
        proc.send_signal(SIGNALS[sig])
    rc = proc.wait(60)
    orphans = killing.wait_gone(tag, ORPHAN_S)
    killing.kill_all(orphans)
    committed, uncommitted, tmp, scratch = leftovers(cfg, work)
    bound = SLACK * cfg.slowest_s + SLACK_S
    t1 = time.monotonic()
    try:
        done = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=bound)
        next_rc = done.returncode
    except subprocess.TimeoutExpired:
        next_rc = -1
    next_s = time.monotonic() - t1
    left = killing.tagged_processes(tag)
    killing.kill_all(left)
    same = equal(cfg, state(cfg, work))
    left_after = len(left) + len(killing.scratch_left(work / "tmp"))
    if orphans:
        outcome = "orphan"
    elif next_rc == -1:
        outcome = "slow"
    elif next_rc != 0:
        outcome = "failed"
    elif not same:
        outcome = "store differs"
    elif left_after:
        outcome = "left over"
    else:
        outcome = "ok"
    return Kill(i, cfg.name, cfg.mode, sig, round(delay, 3), phase, rc, committed, uncommitted, tmp, scratch,
                len(orphans), round(next_s, 3), next_rc, same, left_after, outcome)


def table(kills: list[Kill], configs: list[Config]) -> str:
    """The campaign's printed table: kills by ingest and signal, phase and outcome."""
    phases = ["start-up", "decoding", "writing/committing", "copying"]
    lines = [f"{'ingest':<18} {'clean s':>7} {'signal':<7} {'kills':>5} "
             + " ".join(f"{p:>18}" for p in phases) + f" {'left partial':>12} {'next/clean max':>14} {'failures':>8}"]
    for cfg in configs:
        for sig in SIGNALS:
            ks = [k for k in kills if k.config == cfg.name and k.signal == sig and k.phase in phases]
            if not ks:
                continue
            by_phase = Counter(k.phase for k in ks)
            partial = sum(k.left_uncommitted + k.left_tmp + k.left_scratch > 0 for k in ks)
            worst = max(k.next_s for k in ks) / cfg.clean_s
            lines.append(f"{cfg.name:<18} {cfg.clean_s:>7.2f} {sig:<7} {len(ks):>5} "
                         + " ".join(f"{by_phase.get(p, 0):>18}" for p in phases)
                         + f" {partial:>12} {worst:>13.1f}x {sum(k.outcome != 'ok' for k in ks):>8}")
    real = [k for k in kills if k.phase in phases]
    outcomes = Counter(k.outcome for k in real)
    lines.append("")
    by_signal = ", ".join(f"{n} {s}" for s, n in sorted(Counter(k.signal for k in real).items()))
    lines.append(f"{len(real)} kills ({by_signal}); {len(kills) - len(real)} signals came after the ingest had "
                 "ended (not counted)")
    lines.append("outcomes: " + ", ".join(f"{o} {n}" for o, n in sorted(outcomes.items())))
    lines.append("what the killed runs left for the next: "
                 f"uncommitted final-named files in {sum(k.left_uncommitted > 0 for k in real)}, "
                 f"temporary files in {sum(k.left_tmp > 0 for k in real)}, "
                 f"a scratch folder in {sum(k.left_scratch > 0 for k in real)}, "
                 f"some inputs committed in {sum(k.committed_before > 0 for k in real)}")
    rcs = Counter((k.signal, k.rc) for k in real)
    lines.append("exit status of the killed ingest: "
                 + ", ".join(f"{s} {rc}: {n}" for (s, rc), n in sorted(rcs.items())))
    ratios = [k.next_s / next(c.clean_s for c in configs if c.name == k.config) for k in real]
    if ratios:
        lines.append(f"next ingest / clean time: median {statistics.median(ratios):.2f}x, max {max(ratios):.2f}x "
                     f"(bound {SLACK:g}x the slower clean run + {SLACK_S:g} s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=240, help="kills to make (signals after an ingest ended not counted)")
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--save", type=Path, help="write one row per kill to this CSV")
    ap.add_argument("--work", type=Path, help="folder for inputs and stores (default: a temporary one)")
    args = ap.parse_args(argv)
    base = args.work or Path(tempfile.mkdtemp(prefix="kneecap-kill-"))
    t_start = time.monotonic()
    inputs = make_inputs(base / "inputs", args.seed)
    configs = [Config(f"--{mode} {name}", mode, files) for mode in ("out", "into") for name, files in inputs.items()]
    work = base / "run"
    for cfg in configs:
        run_clean(cfg, work)
        print(f"clean {cfg.name}: {cfg.clean_s:.2f} s (slower {cfg.slowest_s:.2f} s)", flush=True)
    rng = random.Random(args.seed)
    kills: list[Kill] = []
    i = 0
    while sum(k.phase != "ended before the signal" for k in kills) < args.kills:
        cfg = configs[rng.randrange(len(configs))]
        sig = rng.choice(sorted(SIGNALS))
        delay = rng.uniform(0.0, cfg.clean_s)
        k = one_kill(i, cfg, sig, delay, work)
        kills.append(k)
        if k.outcome != "ok":
            print(f"kill {i}: {cfg.name} {sig} after {delay:.2f} s ({k.phase}): {k.outcome}", flush=True)
        i += 1
        if i % 40 == 0:
            print(f"... {i} signals, {time.monotonic() - t_start:.0f} s", flush=True)
    print()
    print(f"kill campaign, seed {args.seed}: {time.monotonic() - t_start:.0f} s")
    print(table(kills, configs))
    if args.save:
        import pandas as pd

        args.save.parent.mkdir(parents=True, exist_ok=True)
        frame = pd.DataFrame([asdict(k) for k in kills])
        frame["clean_s"] = frame["config"].map({c.name: c.clean_s for c in configs})
        frame.to_csv(args.save, index=False)
    if args.work is None:
        shutil.rmtree(base, ignore_errors=True)
    return int(any(k.outcome != "ok" for k in kills if k.phase != "ended before the signal"))


if __name__ == "__main__":
    sys.exit(main())
