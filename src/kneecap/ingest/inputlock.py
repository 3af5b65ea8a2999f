"""The input areas' lock: a pipeline run and ``kneecap ingest`` take turns on the files the pipeline reads.

DVC hashes a stage's dependencies after its command exits, so a file copied into ``data/raw``
while ``dvc repro`` runs would be in the hash ``dvc.lock`` records but not in what the decode stage
read, and ``dvc status`` would call the stale model up to date. Three things prevent it:

- ``kneecap repro`` (what ``make pipeline`` runs) holds an ``flock`` on every input area of
  ``dvc.yaml`` (:func:`input_areas`: a folder some stage depends on and no stage writes) for the
  whole ``dvc repro``, DVC's own hashing included (:func:`hold_areas`);
- ``kneecap ingest`` takes the same lock on the input areas its target lies in (:func:`areas_of`)
  while it copies, so during a run it waits, says who holds the lock, and lands after the run:
  the next ``dvc status`` sees a changed ``data/raw``;
- the decode stage, run by ``dvc repro`` directly, reads a snapshot of its input area taken under
  the lock and compares the area with it again, under the lock, at its end (:func:`fingerprint`):
  a file that arrived meanwhile fails the stage, so DVC records no hash for it.

The lock is an ``flock`` on the folder itself: it adds no file that DVC would hash, and the kernel
releases it when its holder dies, however it dies. ``kneecap repro`` passes its descriptors to
``dvc`` (so the lock lasts as long as ``dvc`` does, even if ``kneecap repro`` is killed) and names
itself in ``KNEECAP_INPUT_LOCK_PID``, which DVC hands on to the stage commands: a stage that finds
the lock held by that process is inside the run and does not wait for it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kneecap.ingest.manifest import lock_holders
from kneecap.ingest.sniff import expand_paths

__all__ = ["HOLDER_ENV", "areas_of", "changes", "dvc_program", "dvc_spec", "fingerprint", "hold_areas", "input_areas",
           "input_areas_of_spec", "project_of", "run_holding", "stage_paths"]

#: Set by ``kneecap repro`` to its pid for the processes of its run (the DVC stages)
HOLDER_ENV = "KNEECAP_INPUT_LOCK_PID"


def stage_paths(spec: dict[str, Any], key: str) -> list[str]:
    """The paths every stage of a parsed ``dvc.yaml`` lists under ``key`` (``deps`` or ``outs``).

    Examples
    --------
    >>> stage_paths({"stages": {"a": {"outs": ["x", {"y": {"persist": True}}]}}}, "outs")
    ['x', 'y']
    """
    found = []
    for stage in (spec.get("stages") or {}).values():
        for item in stage.get(key) or []:
            found.append(str(next(iter(item)) if isinstance(item, dict) else item))
    return found


def input_areas_of_spec(spec: dict[str, Any]) -> list[str]:
    """The input areas of a parsed ``dvc.yaml``: dependencies that no stage writes, nor lie in an output.

    A run must hold them all (any of them can be where a user drops a file); an output is the
    stages' own business, and its writers lock it themselves (``kneecap.warehouse``). Sorted, so
    every process takes the locks in one order.

    Examples
    --------
    >>> input_areas_of_spec({"stages": {"d": {"deps": ["data/raw", "src/x.py"], "outs": ["data/i"]},
    ...                                 "m": {"deps": ["data/i", "data/i/sub"]}}})
    ['data/raw', 'src/x.py']
    """
    outs = [Path(o) for o in stage_paths(spec, "outs")]
    deps = {Path(d) for d in stage_paths(spec, "deps")}
    return sorted(str(d) for d in deps if not any(d == o or o in d.parents for o in outs))


def dvc_spec(dvc_yaml: Path) -> dict[str, Any]:
    """``dvc_yaml`` parsed (empty when there is no such file)."""
    if not dvc_yaml.is_file():
        return {}
    import yaml

    # libyaml's safe loader where PyYAML has it: the same document, 0.5 ms against 5 ms for
    # dvc.yaml, which every `kneecap ingest` in a project reads before it starts
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(dvc_yaml.read_text(encoding="utf-8"), Loader=loader) or {}  # noqa: S506 - a safe loader


def input_areas(dvc_yaml: Path) -> list[Path]:
    """The input areas of ``dvc_yaml`` that are folders on disk, resolved (empty without the file)."""
    root = dvc_yaml.parent
    return [p for p in ((root / a).resolve() for a in input_areas_of_spec(dvc_spec(dvc_yaml))) if p.is_dir()]


def project_of(target: Path) -> Path | None:
    """The ``dvc.yaml`` of the project ``target`` lies in: the nearest one in it or a folder above it."""
    target = target.resolve()
    for folder in (target, *target.parents):
        if (folder / "dvc.yaml").is_file():
            return folder / "dvc.yaml"
    return None


def areas_of(target: Path, dvc_yaml: Path | None = None) -> list[Path]:
    """The input areas that ``target`` lies in (or is); ``[target]`` when none.

    ``dvc_yaml`` defaults to the project's around ``target`` (:func:`project_of`), so an ingest run
    from another folder with ``--into /…/project/data/raw/x`` takes the lock a run of that project
    holds. Where no pipeline reads ``target``, its own folder is the lock, so two ingests into it
    still take turns.
    """
    target = target.resolve()
    dvc_yaml = dvc_yaml if dvc_yaml is not None else project_of(target)
    inside = [a for a in input_areas(dvc_yaml) if a == target or a in target.parents] if dvc_yaml else []
    return inside or [target]


def _describe(pid: int) -> str:
    """``pid 123 (kneecap repro)``: the pid and, where ``/proc`` tells it, its command line."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return f"pid {pid}"
    words = [Path(argv[0].decode(errors="replace")).name] + [a.decode(errors="replace") for a in argv[1:3] if a]
    # `python -m ...` or a script's interpreter says less than the program it runs
    if words[0].startswith("python") and len(words) > 1:
        words = [Path(words[1]).name] + words[2:]
    return f"pid {pid} ({' '.join(words)})"


def _run_holder() -> int | None:
    """The pid of the ``kneecap repro`` this process runs under (``KNEECAP_INPUT_LOCK_PID``), if any."""
    try:
        return int(os.environ.get(HOLDER_ENV, ""))
    except ValueError:
        return None


@contextlib.contextmanager
def hold_areas(areas: Iterable[Path], *, who: str, inheritable: bool = False) -> Iterator[list[int]]:
    """Hold an exclusive ``flock`` on each folder of ``areas`` (in sorted order); yields the descriptors.

    A folder held by another process is waited for, after one line on stderr naming the folder,
    the holder (pid and command, from ``/proc``) and ``who`` waits. A folder held by the
    ``kneecap repro`` this process runs under (:data:`HOLDER_ENV` among its holders) is the run's
    own lock, held on this process's behalf: it is not waited for (waiting would never end).
    ``inheritable`` descriptors survive into programs this process starts with ``pass_fds``.
    """
    fds: list[int] = []
    run = _run_holder()
    try:
        for area in sorted(set(areas)):
            fd = os.open(area, os.O_RDONLY | os.O_DIRECTORY | (0 if inheritable else os.O_CLOEXEC))
            fds.append(fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                continue
            except BlockingIOError:
                pass
            holders = lock_holders(fd)
            if run is not None and run in holders:
                continue  # the run this process is a stage of holds it for us
            said = ", ".join(_describe(p) for p in holders) or "another process"
            print(f"{who}: waiting for {area}: {said} holds it (a pipeline run or an ingest); "
                  "this goes on when it is done", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield fds
    finally:
        for fd in fds:
            os.close(fd)  # closing releases the lock (unless a child still has the descriptor)


def fingerprint(area: Path) -> dict[str, tuple[int, int, int]]:
    """What the decode stage reads under ``area``: each file's relative path -> (size, mtime ns, inode).

    The files are those the ingest expands a folder to (hidden ones skipped). A copy comes in by a
    link of a finished file (``kneecap.ingest.cli.copy_new``), so a new or replaced file changes
    its entry; no byte need be read twice.
    """
    out = {}
    for f in expand_paths([area]):
        try:
            st = f.stat()
        except FileNotFoundError:
            continue  # removed while listed: absent, as the next look will see it
        out[str(f.relative_to(area))] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def changes(before: dict[str, tuple[int, int, int]], after: dict[str, tuple[int, int, int]]) -> list[str]:
    """What differs between two :func:`fingerprint` s, one ``added x`` / ``removed x`` / ``changed x`` each.

    Examples
    --------
    >>> changes({"a": (1, 1, 1), "b": (2, 2, 2)}, {"a": (1, 1, 1), "b": (2, 3, 2), "c": (1, 1, 9)})
    ['changed b', 'added c']
    """
    out = [f"removed {k}" for k in before if k not in after]
    out += [f"changed {k}" for k in before if k in after and before[k] != after[k]]
    out += [f"added {k}" for k in after if k not in before]
    return out


def dvc_program() -> str:
    """``dvc`` beside this Python (the project's virtualenv), else the one on ``PATH``."""
    beside = Path(sys.executable).with_name("dvc")
    return str(beside) if beside.exists() else "dvc"


def run_holding(cmd: list[str], dvc_yaml: Path, *, who: str = "repro") -> int:
    """Run ``cmd`` (``dvc repro ...``) holding the input areas of ``dvc_yaml``; its exit status (2: no such program).

    The descriptors go to ``cmd`` too, so the lock lasts until it exits (DVC hashes the
    dependencies and writes ``dvc.lock`` before that) even if this process is killed first. Ctrl-C
    reaches ``cmd`` from the terminal and SIGTERM is passed on to it; either way this process waits
    for it, so it never releases the lock while DVC still works.
    """
    import signal
    import subprocess

    with hold_areas(input_areas(dvc_yaml), who=who, inheritable=True) as fds:
        env = {**os.environ, HOLDER_ENV: str(os.getpid())}
        try:
            proc = subprocess.Popen(cmd, pass_fds=fds, env=env)
        except FileNotFoundError:
            print(f"{who}: {cmd[0]} not found (DVC is installed with kneecap's dependencies: `make setup`)",
                  file=sys.stderr)
            return 2
        previous_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
        previous_term = signal.signal(signal.SIGTERM, lambda *_: proc.send_signal(signal.SIGTERM))
        try:
            return proc.wait()
        finally:
            signal.signal(signal.SIGINT, previous_int)
            signal.signal(signal.SIGTERM, previous_term)
