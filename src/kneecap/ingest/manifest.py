"""The ingest folder's manifest and lock, an input's identity (SHA-256) and its result.

Beside the tables (:mod:`kneecap.ingest.store`) an ingest folder holds::

    _manifest.jsonl                       one JSON line per ingested input
    .ingest.lock                          held while an input is being ingested

Idempotence: an input whose content SHA-256 is already in the manifest is skipped (it adds no
rows); the same dump under another name is recognised too. The manifest line is appended last,
after the input's tables and keys have their final names, so an interrupted ingest leaves nothing
that looks ingested; a manifest whose last line was torn by a crash is read without it
(:func:`parse_manifest`) and cut back to its last complete line before the next append
(:func:`append_manifest`).

Concurrency: every input is ingested while holding an exclusive ``flock`` on ``.ingest.lock``
(:func:`locked`), so two processes ingesting into one folder take turns per input; the second one
to reach an input sees it in the manifest and skips it. SMF and RMF ingests share the folder, the
manifest and the lock.

The lock cannot outlive its holder: an ``flock`` belongs to the open file, which the kernel
closes when the process dies however it dies (``kill -9`` included), so a dead ingest's lock is
free for the next one at once; no marker file is checked for existence. A process forked while
the lock is held (the SMF framing process) would hold the open file too and keep the lock for as
long as it lives, so the lock's descriptor is closed in every forked child (``os.register_at_fork``)
and opened close-on-exec for programs started from the holder. An ingest that has to wait for a
live holder says so, with the holder's pid where ``/proc/locks`` tells it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import logging
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kneecap.forks import release_held_signals, signals_held_over_fork

__all__ = ["LOCK", "MANIFEST", "FileResult", "HashAhead", "append_manifest", "committed_sizes",
           "drop_ingest_times", "flock_holders", "keep_from_children", "lock_holders", "locked", "manifest_entry",
           "parse_manifest", "read_manifest", "release_to_children", "sha256_file", "without_ingest_times"]

MANIFEST = "_manifest.jsonl"
LOCK = ".ingest.lock"

log = logging.getLogger(__name__)

#: Descriptors of the locks this process holds (:func:`locked`, :func:`keep_from_children`), closed in a forked child.
_HELD: set[int] = set()


def keep_from_children(fd: int) -> None:
    """Close ``fd`` in every child forked from now on (a lock's descriptor only this process may hold)."""
    _HELD.add(fd)


def release_to_children(fd: int) -> None:
    """Undo :func:`keep_from_children` (before ``fd`` is closed)."""
    _HELD.discard(fd)


def _close_held_locks_in_child() -> None:
    # a forked child shares the parent's open lock file: left open, it would keep the lock after
    # the parent released it or died. Closing the child's copy leaves the parent's lock as it is.
    for fd in _HELD:
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD.clear()


os.register_at_fork(after_in_child=_close_held_locks_in_child)


@dataclass
class FileResult:
    """Outcome for one input file."""

    path: str
    sha256: str
    status: str  # "ingested" | "skipped" (already ingested) | "duplicate" (RMF: its intervals stored) | "failed"
    bytes: int = 0
    records: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    quarantined: int = 0
    orphan_segments: int = 0
    duplicates: int = 0
    framing: str | None = None
    error: str | None = None
    #: What was quarantined and why, where the input's reader gives reasons per item (RMF intervals)
    quarantine_reasons: list[str] = field(default_factory=list)
    #: RMF: the input already holding (most of) the report's intervals found stored; ``duplicates``
    #: counts those intervals (SMF: records already stored)
    duplicate_of: str | None = None


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes (the manifest's identity of an input).

    ``hashlib.file_digest`` reads into one reused buffer: 0.14 s for the 208 MB bench dump against
    0.15-0.17 s reading a new 1 MiB bytes object at a time.
    """
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def parse_manifest(text: str, *, path: str = MANIFEST) -> dict[str, dict[str, Any]]:
    r"""Manifest entries by SHA-256 from the text of ``_manifest.jsonl``.

    A last line that is not complete JSON is an append a crash interrupted: it is ignored (that
    input was not committed). A damaged line before the last is an error naming the line.

    Examples
    --------
    >>> sorted(parse_manifest('{"sha256": "a"}\n{"sha256": "b"}\n{"sha2'))
    ['a', 'b']
    """
    done: dict[str, dict[str, Any]] = {}
    lines = text.split("\n")
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            done[entry["sha256"]] = entry
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            if i == len(lines):  # torn last line: no newline was written after it
                break
            raise ValueError(f"{path}: line {i}: damaged manifest entry ({exc}); remove the "
                             "line and ingest its file again") from None
    return done


def read_manifest(out_dir: Path) -> dict[str, dict[str, Any]]:
    """Committed inputs of an ingest folder by SHA-256 (see :func:`parse_manifest`).

    Read it under :func:`locked` when the answer decides whether to ingest.
    """
    m = out_dir / MANIFEST
    if not m.exists():
        return {}
    return parse_manifest(m.read_text(encoding="utf-8", errors="replace"), path=str(m))


def append_manifest(out_dir: Path, entry: dict[str, Any]) -> None:
    """Append one line, first cutting a torn last line (caller holds :func:`locked`).

    Shared by SMF and RMF ingest: one manifest per folder, one writer at a time. The line is the
    input's commit: it is flushed to disk before this returns, and written only after the input's
    files have their final names (:mod:`kneecap.ingest.store`).
    """
    m = out_dir / MANIFEST
    new = not m.exists()
    with m.open("a+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size:
            fh.seek(max(0, size - 65536))
            tail = fh.read()
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                keep = size - len(tail) + cut + 1 if cut >= 0 else (0 if size <= 65536 else size)
                fh.truncate(keep)
        fh.seek(0, os.SEEK_END)
        fh.write((json.dumps(entry) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
    if new:  # the folder's entry of the new manifest, flushed too: the commit must survive a crash
        fd = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def flock_holders(proc_locks: str, device: int, inode: int) -> list[int]:
    r"""Pids holding an ``flock`` on the file (``device``, ``inode``), from the text of ``/proc/locks``.

    A line reads ``1: FLOCK  ADVISORY  WRITE 9794 fe:00:2148943 0 EOF``: kind, pid, then the
    file as major:minor:inode, the device numbers in hex. Only for telling a waiting user who
    holds the lock; lines of other shapes are skipped.

    Examples
    --------
    >>> flock_holders("1: FLOCK  ADVISORY  WRITE 9794 fe:00:2148943 0 EOF\n"
    ...               "2: POSIX  ADVISORY  WRITE 9793 fe:00:2148943 0 EOF\n", os.makedev(0xfe, 0), 2148943)
    [9794]
    """
    pids = []
    for line in proc_locks.splitlines():
        parts = line.split()
        if len(parts) < 6 or parts[1] != "FLOCK" or parts[2] == "->":
            continue
        try:
            major, minor, ino = parts[5].split(":")
            same = (int(ino) == inode and int(major, 16) == os.major(device)
                    and int(minor, 16) == os.minor(device))
            if same:
                pids.append(int(parts[4]))
        except ValueError:
            continue
    return pids


def lock_holders(fd: int) -> list[int]:
    """Pids other than this one holding an ``flock`` on what ``fd`` has open (empty without ``/proc/locks``)."""
    st = os.fstat(fd)
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return []
    return [pid for pid in flock_holders(text, st.st_dev, st.st_ino) if pid != os.getpid()]


@contextlib.contextmanager
def locked(out_dir: Path) -> Iterator[None]:
    """Hold the folder's exclusive ingest lock (released by the OS if the process dies).

    Every writer of an ingest folder (SMF and RMF alike) takes it around read-manifest, write
    outputs, append-manifest, so concurrent ingests take turns per input. The descriptor is not
    inherited: it is close-on-exec, and closed in any child forked while it is held (see the
    module docstring), so only this process's exit or this block's end releases the lock.
    """
    owner = os.getpid()
    fd = os.open(out_dir / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holders = lock_holders(fd)
            log.warning("ingest: waiting for %s, held by another ingest%s", out_dir / LOCK,
                        f" (pid {', '.join(map(str, holders))})" if holders else "")
            fcntl.flock(fd, fcntl.LOCK_EX)
        _HELD.add(fd)
        try:
            yield
        finally:
            _HELD.discard(fd)
            if os.getpid() == owner:  # a forked child that got here closed its copy already
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        if os.getpid() == owner:
            os.close(fd)


def committed_sizes(done: dict[str, dict[str, Any]]) -> set[int] | None:
    """Byte sizes of the committed inputs ``done``, or None when an entry does not say.

    An input of another size cannot be committed, so its hash need not be known before decoding.

    Examples
    --------
    >>> committed_sizes({"a": {"bytes": 10}, "b": {"bytes": 20}}) == {10, 20}
    True
    >>> committed_sizes({"a": {"sha256": "a"}}) is None
    True
    """
    sizes = set()
    for entry in done.values():
        if not isinstance(entry.get("bytes"), int):
            return None
        sizes.add(entry["bytes"])
    return sizes


class HashAhead:
    """SHA-256 of input files, computed in their order from the moment it is made, beside this thread.

    An ingest needs every input's hash (the manifest's identity of it) but not before it commits
    the input, unless a committed input has the same size. Started before the decoders are
    imported, the hashing uses the second CPU while one start-up runs (about 0.13 s of CPU),
    then hashes each input while the one before it, or the input itself, is decoded.

    The hashing runs in a forked process where this is the process's only thread (``kneecap
    ingest``), else in a thread. In a thread it needed the GIL between every two chunks while the
    start-up's imports held it: 13-18 ms of the hash's 66 ms of CPU were done when the framing
    process started, the rest then competed with framing and decoding for the two CPUs. A forked
    process (small at that point: nothing but the command line's modules is loaded) hashes beside
    the imports and sends each result back through a pipe, which a thread here reads; it ends
    when this process does (:func:`_hash_in_child`).

    Parameters
    ----------
    paths : iterable of path
        The inputs, in the order they will be asked for.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "a").write_bytes(b"abc")
    3
    >>> ahead = HashAhead([d / "a"])
    >>> ahead.result(d / "a")()[:16]
    'ba7816bf8f01cfea'
    """

    def __init__(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        self._order = [Path(p) for p in paths]
        self._known = {p.resolve() for p in self._order}
        self._done: dict[Path, tuple[bool, Any]] = {}
        self._stop = False
        self._cond = threading.Condition()
        self._pid: int | None = None
        self._pipe = -1
        if self._order and _may_fork():
            self._fork()
        self._thread = threading.Thread(target=self._run if self._pid is None else self._receive,
                                        name="kneecap-sha256", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for p in self._order:
            if self._stop:
                return
            self._hand_over(p, _hashed(p))

    def _hand_over(self, p: Path, got: tuple[bool, Any]) -> None:
        with self._cond:
            self._done[p.resolve()] = got
            self._cond.notify_all()

    def _fork(self) -> None:
        """Start the hashing process (:func:`_hash_in_child`), reading its results from a pipe."""
        read_end, write_end = os.pipe()
        parent = os.getpid()
        with signals_held_over_fork():
            pid = os.fork()
        if pid == 0:  # the hashing process: never returns
            os.close(read_end)
            _hash_in_child(self._order, write_end, parent)
        os.close(write_end)
        self._pid, self._pipe = pid, read_end

    def _receive(self) -> None:
        """The thread that hands over the hashing process's results, in order."""
        pid = self._pid
        assert pid is not None  # set with the pipe, before this thread starts
        pending = list(self._order)
        try:
            with os.fdopen(self._pipe, "rb") as pipe:
                while pending:
                    head = pipe.read(4)
                    if len(head) < 4:
                        break
                    self._hand_over(pending.pop(0), pickle.loads(pipe.read(int.from_bytes(head, "big"))))
        finally:
            for p in pending:  # the process ended early (killed): hashed here instead, on demand
                self._hand_over(p, _hashed(p) if not self._stop else (False, RuntimeError("hashing stopped")))
            os.waitpid(pid, 0)

    def result(self, path: str | os.PathLike[str]) -> Callable[[], str]:
        """A function that waits for ``path``'s hex digest (computed here if it was not listed)."""
        key = Path(path).resolve()
        if key not in self._known:
            return lambda: sha256_file(Path(path))

        def wait() -> str:
            with self._cond:
                self._cond.wait_for(lambda: key in self._done)
                ok, value = self._done[key]
            if not ok:
                raise value
            return value

        return wait

    def close(self) -> None:
        """Hash no further input after the one under way (an ingest that stopped early)."""
        self._stop = True
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)  # its results are not wanted; the reader thread reaps it
            except ProcessLookupError:
                pass


def _may_fork() -> bool:
    """Whether :class:`HashAhead` may hash in a forked process: Linux's fork, and no other thread running.

    A process forked while another thread holds a lock (of the C library, of OpenSSL, of logging)
    can deadlock on it; with one thread there is none.
    """
    return sys.platform.startswith("linux") and threading.active_count() == 1


def _hashed(path: Path, go_on: Callable[[], bool] | None = None) -> tuple[bool, Any]:
    """(True, hex digest) of ``path``, or (False, the exception) for the caller to raise.

    With ``go_on``, it is asked between every two 256 KiB chunks and the hashing stops (an
    unfinished digest, not to be used) when it answers False.
    """
    try:
        if go_on is None:
            return True, sha256_file(path)
        digest = hashlib.sha256()
        buf = bytearray(1 << 18)  # hashlib.file_digest's chunk, which stays in the CPU's cache
        view = memoryview(buf)
        with path.open("rb", buffering=0) as fh:
            while (n := fh.readinto(buf)) and go_on():
                digest.update(view[:n])
        return True, digest.hexdigest()
    except Exception as exc:  # handed to the caller by HashAhead.result()
        return False, exc


def _hash_in_child(paths: list[Path], write_end: int, parent: int) -> None:
    """The hashing process: each input's :func:`_hashed` result, pickled and length-prefixed, into ``write_end``.

    It ends as soon as ``parent`` has: its parent is looked up between every two chunks it hashes
    (a process whose parent died is handed to another), so a killed ingest leaves no process
    hashing a large dump nobody waits for (issue 35).
    """
    status = 0
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler: a terminated helper just ends
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C reaches the whole process group
        release_held_signals()  # held while the parent forked (kneecap.forks)

        def parent_alive() -> bool:
            return os.getppid() == parent

        with os.fdopen(write_end, "wb") as pipe:
            for p in paths:
                got = _hashed(p, parent_alive)
                if not parent_alive():
                    break
                try:
                    data = pickle.dumps(got)
                except Exception:  # an exception that does not pickle: its text then
                    data = pickle.dumps((False, RuntimeError(f"{p}: {got[1]!r}")))
                pipe.write(len(data).to_bytes(4, "big") + data)
                pipe.flush()
    except BaseException:
        status = 1
    finally:
        os._exit(status)  # nothing of the parent's (atexit, buffers) runs here


def manifest_entry(res: FileResult, codepage: str | None) -> dict[str, Any]:
    """The manifest line of an ingested input, the same whichever engine decoded it.

    ``codepage`` None for an RMF Postprocessor XML report: its line has no code page, and a
    duplicate count (intervals already stored from another file, left out) only when there were
    some (reports are not deduplicated by record key but by interval, :mod:`kneecap.ingest.rmf`).
    """
    smf = codepage is not None
    return {
        "sha256": res.sha256, "path": res.path, "bytes": res.bytes, "records": res.records,
        "rows": res.rows, "quarantined": res.quarantined, "orphan_segments": res.orphan_segments,
        **({"duplicates": res.duplicates} if smf or res.duplicates else {}), "framing": res.framing,
        **({"codepage": codepage} if smf else {}),
        "ingested_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def without_ingest_times(text: str) -> str:
    r"""The manifest's text with each entry's ``ingested_at`` left out, every other byte as it was.

    The one thing in an ingest folder that is not a function of its inputs is when they were
    ingested; without it, the same inputs decode to the same bytes on any machine, at any time.

    Examples
    --------
    >>> without_ingest_times('{"sha256": "a", "ingested_at": "2026-11-28T20:45:43+00:00"}\n')
    '{"sha256": "a"}\n'
    """
    lines = []
    for line in text.splitlines():
        entry = json.loads(line)
        entry.pop("ingested_at", None)
        lines.append(json.dumps(entry) + "\n")
    return "".join(lines)


def drop_ingest_times(out_dir: Path) -> None:
    """Rewrite ``out_dir``'s manifest :func:`without_ingest_times` (the ``decode_smf`` stage's output, DVC-hashed)."""
    path = Path(out_dir) / MANIFEST
    if path.exists():
        path.write_text(without_ingest_times(path.read_text(encoding="utf-8")), encoding="utf-8")
