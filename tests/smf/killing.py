"""Kill a real ``kneecap ingest`` and judge what it left: processes, temporary folders, the store.

Shared by the kill tests (``test_kill.py``) and the campaign (``benchmarks/kill_ingest.py``).

* :func:`write_dump`: an SMF dump of whole LPAR-days of distinct records (72.3, 70.1 with 48
  logical processors, SMF 30), written with ``synth`` (independent of kneecap's decoders), seeded.
* :func:`start_ingest`: ``kneecap ingest`` as a child process carrying a tag in its environment,
  which every process it forks inherits: :func:`tagged_processes` finds them by it, wherever they
  were re-parented when it died.
* :func:`store_state` and :func:`folder_state`: what an ingest folder commits (every committed
  Parquet and key file by path with its SHA-256 and rows, the manifest without its ingest times)
  and what it holds besides (files that are not committed: a dead run's leftovers), and the same
  for an input area (``--into``), so that a store after a kill and a re-run can be compared with a
  clean one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import synth

ROOT = Path(__file__).resolve().parents[2]
#: The environment variable :func:`start_ingest` tags its processes with.
TAG = "KNEECAP_KILL_TAG"


def day_records(day: dt.datetime, variant: int) -> list[bytes]:
    """One LPAR-day: 96 fifteen-minute intervals of forty 72.3, two 70.1 and forty SMF 30 records.

    ``variant`` goes into the 72.3 service classes' figures, so dumps of different variants share
    no record (the reader stores a record seen before only once).
    """
    k = synth.Coefficients()
    own = synth.Partition("LPAR1", 1, [synth.LogicalCPU("CP" if i < 8 else "IIP", 900, 300 + 7 * i, 590 - 7 * i)
                                       for i in range(16)])
    others = [synth.Partition(f"LPAR{n}", n, [synth.LogicalCPU("CP", 900, 200 + 5 * i) for i in range(16)])
              for n in (2, 3)]
    spaces = [synth.AddressSpace(f"ZCON{i:03d}", 40.0 + i, 0.5 + 0.01 * i, 60.0, 0.02 * i, job_id=f"STC{10000 + i:05d}")
              for i in range(40)]
    recs = []
    for i in range(96):
        t0 = day + dt.timedelta(minutes=15 * i)
        for c in range(40):
            periods = [synth.Period(period=j + 1, ended=1000 + 37 * c + j + 7 * variant, resp_ms=5.0 + c,
                                    tcb_s=10.0 + c, srb_s=0.5, ziip_s=4.0 + j, ziip_on_cp_s=0.2, cpu_using=100,
                                    cpu_delay=10, ziip_using=50, ziip_delay=3, total_using=150, total_delay=20)
                       for j in range(1 + c % 3)]
            recs.append(synth.record_72_3("SYSA", "PLEX1", t0, 900.0, f"SC{c:03d}", "WKL1", periods, k,
                                          report_class=c >= 30))
        recs.extend(synth.record_70_1("SYSA", "PLEX1", t0, 900.0, [own, *others], 1) for _ in range(2))
        recs.extend(synth.record_30("SYSA", "PLEX1", t0, 900.0, a) for a in spaces)
    return recs


def write_dump(path: Path, days: int, *, seed: int, framing: str = "rdw", gzipped: bool = False) -> int:
    """Write ``days`` LPAR-days (about 11.5 MB each as RDW) from a seeded start date; returns the bytes written.

    The seed picks the start day and the variant, so two seeds give dumps of different records.
    """
    rng = random.Random(seed)
    start = dt.datetime(2025, 1, 1) + dt.timedelta(days=rng.randrange(0, 300))
    variant = rng.randrange(1, 1000)
    recs = [r for d in range(days) for r in day_records(start + dt.timedelta(days=d), variant)]
    data = synth.frame_bdw(recs, spanned=True) if framing == "vbs" else synth.frame_rdw(recs)
    path.write_bytes(synth.gz(data) if gzipped else data)
    return path.stat().st_size


def ingest_command(paths: list[Path], *, out: Path | None = None, into: Path | None = None) -> list[str]:
    """``kneecap -q ingest PATHS`` with ``--out`` (decode into a store) or ``--into`` (bring into an input area)."""
    cmd = [sys.executable, "-m", "kneecap.cli", "-q", "ingest", *map(str, paths)]
    if out is not None:
        cmd += ["--out", str(out)]
    if into is not None:
        cmd += ["--into", str(into)]
    return cmd


def kneecap_src() -> Path:
    """The folder of the ``kneecap`` package this process imports (the code under test)."""
    import kneecap

    return Path(kneecap.__file__).resolve().parents[1]


def ingest_env(tag: str, tmpdir: Path, src: Path | None = None) -> dict[str, str]:
    """The environment of a tagged ingest: the kneecap under test (or ``src``'s), its own temporary directory."""
    return {**os.environ, "PYTHONPATH": str(src or kneecap_src()), TAG: tag, "TMPDIR": str(tmpdir)}


def start_ingest(cmd: list[str], env: dict[str, str], cwd: Path, stderr: Path | None = None) -> subprocess.Popen:
    """Start one ingest, its standard output discarded, its standard error written to ``stderr`` if given.

    A file, not a pipe: a process the ingest forked holds the pipe's write end too, and reading the
    pipe would wait for that process, the one a failure leaves alive.
    """
    with open(stderr if stderr is not None else os.devnull, "wb") as err:
        return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # state, ppid, ...: after the command's name


def children(pid: int) -> list[int]:
    """Live children of ``pid`` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None and int(st[1]) == pid and st[0] not in "ZX":
                out.append(int(entry))
    return out


def tagged_processes(tag: str) -> list[int]:
    """Live (not zombie) processes whose environment holds ``TAG=tag``, wherever they are parented."""
    needle = f"{TAG}={tag}".encode() + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        st = _stat(int(entry))
        if needle in env and st is not None and st[0] not in "ZX":
            found.append(int(entry))
    return found


def wait_gone(tag: str, seconds: float) -> list[int]:
    """Wait up to ``seconds`` for the tagged processes to end; those still alive after it."""
    deadline = time.monotonic() + seconds
    while True:
        alive = tagged_processes(tag)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.02)


def kill_all(pids: list[int]) -> None:
    """SIGKILL the given processes (the campaign's own, left by a failure), ignoring those gone."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class StoreState:
    """What an ingest folder commits, and what else it holds."""

    committed: dict[str, str] = field(default_factory=dict)  # relative path -> SHA-256 of the bytes
    rows: dict[str, int] = field(default_factory=dict)  # table -> committed rows
    manifest: list[dict] = field(default_factory=list)  # entries without their ingest time
    other: list[str] = field(default_factory=list)  # files neither committed nor the manifest and lock

    def same_commit(self, other: StoreState) -> bool:
        return (self.committed, self.rows, self.manifest) == (other.committed, other.rows, other.manifest)


def store_state(out: Path) -> StoreState:
    """The committed content of an ingest folder (:class:`StoreState`), judged from its manifest.

    A Parquet or key file is committed when its name is ``<sha256>[-<n>].parquet`` or
    ``<sha256>.npy`` (no folder of its path hidden) and its SHA-256 has a manifest line; the
    judgement does not use kneecap's own readers, which are under test.
    """
    import pyarrow.parquet as pq

    state = StoreState()
    if not out.is_dir():
        return state
    manifest = out / "_manifest.jsonl"
    if manifest.exists():
        for line in manifest.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            entry.pop("ingested_at", None)
            state.manifest.append(entry)
    shas = {e["sha256"] for e in state.manifest}
    for f in sorted(out.rglob("*")):
        if not f.is_file():
            continue
        rel = f.relative_to(out)
        m = re.fullmatch(r"([0-9a-f]{64})(?:-\d+)?\.(parquet|npy)", f.name)
        hidden = any(part.startswith(".") for part in rel.parts)
        if m and not hidden and m.group(1) in shas and (m.group(2) == "parquet") != (rel.parts[0] == "_keys"):
            state.committed[rel.as_posix()] = sha256(f)
            if m.group(2) == "parquet":
                state.rows[rel.parts[0]] = state.rows.get(rel.parts[0], 0) + pq.ParquetFile(f).metadata.num_rows
        elif rel.as_posix() not in ("_manifest.jsonl", ".ingest.lock"):
            state.other.append(rel.as_posix())
    return state


def folder_state(folder: Path) -> dict[str, str]:
    """Every file in an input area, hidden ones included, by relative path with its SHA-256."""
    if not folder.is_dir():
        return {}
    return {f.relative_to(folder).as_posix(): sha256(f) for f in sorted(folder.rglob("*")) if f.is_file()}


def scratch_left(tmpdir: Path) -> list[str]:
    """Scratch folders of ``kneecap ingest`` in a temporary directory."""
    return sorted(p.name for p in tmpdir.glob("kneecap-ingest-*")) if tmpdir.is_dir() else []
