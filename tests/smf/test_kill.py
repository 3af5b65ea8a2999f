"""A killed ingest leaves nothing the next one trips on (issue #35, items 1 and 3).

Real ``kneecap ingest`` processes are killed (SIGKILL, SIGTERM) while their framing process runs;
then no process of theirs is left, the next ingest finishes in its normal time, and the store equals
a clean ingest of the same input. The commit point is checked in-process: files renamed without
their manifest line are not read and are redone by the next ingest.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest
from killing import (
    children,
    folder_state,
    ingest_command,
    ingest_env,
    kill_all,
    kneecap_src,
    scratch_left,
    start_ingest,
    store_state,
    tagged_processes,
    wait_gone,
    write_dump,
)

import kneecap.ingest.smf as smf_ingest
from kneecap.ingest import cli as ingest_cli
from kneecap.ingest.manifest import LOCK, locked, read_manifest
from kneecap.ingest.store import table_files
from kneecap.warehouse import read_decoded_tables

#: The next ingest after a kill may take this many times a clean one's time (plus a start-up allowance).
SLACK = 3.0


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    """Three LPAR-days, 35 MB: four 8 MiB batches, so the framing process is still sending when killed."""
    path = tmp_path_factory.mktemp("kill_dump") / "three_days.smf"
    write_dump(path, 3, seed=35)
    return path


@pytest.fixture(scope="module")
def clean(dump, tmp_path_factory):
    """A clean ``--out`` ingest of the dump: its store's state and its time."""
    base = tmp_path_factory.mktemp("kill_clean")
    (base / "tmp").mkdir()
    t0 = time.monotonic()
    subprocess.run(ingest_command([dump], out=base / "store"), env=ingest_env("clean", base / "tmp"), cwd=base,
                   check=True, capture_output=True, timeout=120)
    return store_state(base / "store"), time.monotonic() - t0


def _kill_while_framing(proc: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` once the ingest has forked its framing process; wait for the ingest to end."""
    deadline = time.monotonic() + 30
    while not children(proc.pid):
        assert proc.poll() is None, "the ingest ended before its framing process was seen"
        assert time.monotonic() < deadline, "no framing process within 30 s"
        time.sleep(0.005)
    proc.send_signal(sig)
    proc.wait(timeout=30)


def _next_ingest(cmd, env, cwd, bound_s: float) -> float:
    t0 = time.monotonic()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=bound_s)
    took = time.monotonic() - t0
    assert done.returncode == 0, done.stderr
    return took


def test_sigkill_leaves_no_framing_process_and_the_next_ingest_finishes(dump, clean, tmp_path):
    """The issue's hang: the framing child outlived a SIGKILL, holding the lock; the next ingest waited for ever."""
    reference, clean_s = clean
    tag = uuid.uuid4().hex
    (tmp_path / "tmp").mkdir()
    env = ingest_env(tag, tmp_path / "tmp")
    cmd = ingest_command([dump], out=tmp_path / "store")
    try:
        proc = start_ingest(cmd, env, tmp_path)
        _kill_while_framing(proc, signal.SIGKILL)
        assert proc.returncode == -signal.SIGKILL
        assert wait_gone(tag, 5.0) == [], "a process of the killed ingest is still alive"
        bound = SLACK * clean_s + 5.0
        took = _next_ingest(cmd, env, tmp_path, bound)
    finally:
        kill_all(tagged_processes(tag))
    after = store_state(tmp_path / "store")
    assert after.same_commit(reference), "the store differs from a clean ingest of the same input"
    assert after.other == [], f"left in the store: {after.other}"
    assert took < bound
    assert tagged_processes(tag) == []


def test_sigterm_aborts_cleanly_and_leaves_no_scratch_folder(dump, tmp_path):
    """Bringing a dump into the input area: SIGTERM during its check leaves no process, scratch folder or copy."""
    tag = uuid.uuid4().hex
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = ingest_env(tag, tmp)
    into = tmp_path / "raw"
    cmd = ingest_command([dump], into=into)
    try:
        proc = start_ingest(cmd, env, tmp_path, stderr=tmp_path / "stderr")
        _kill_while_framing(proc, signal.SIGTERM)
        stderr = (tmp_path / "stderr").read_text()
        assert proc.returncode == 128 + signal.SIGTERM, stderr
        assert "ingest: terminated" in stderr
        assert wait_gone(tag, 5.0) == [], "a process of the terminated ingest is still alive"
        assert scratch_left(tmp) == [], "the terminated ingest left its scratch folder"
        assert folder_state(into) == {}
        _next_ingest(cmd, env, tmp_path, 120)
    finally:
        kill_all(tagged_processes(tag))
    assert folder_state(into) == {dump.name: ingest_cli.sha256_file(dump)}
    assert scratch_left(tmp) == []


def test_a_lock_holder_killed_with_a_forked_child_leaves_the_lock_free(tmp_path):
    """The lock's descriptor is not the child's to keep: the holder's death frees it at once."""
    tag = uuid.uuid4().hex
    script = textwrap.dedent(f"""
        import os, signal, sys, time
        from pathlib import Path
        from kneecap.ingest.manifest import locked
        with locked(Path({str(tmp_path)!r})):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    env = ingest_env(tag, tmp_path)
    try:
        done = subprocess.run([sys.executable, "-c", script], env=env, timeout=30)
        assert done.returncode == -signal.SIGKILL
        assert len(tagged_processes(tag)) == 1, "the forked child should still be alive for this test"
        fd = os.open(tmp_path / LOCK, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: the child keeps the lock
        finally:
            os.close(fd)
    finally:
        kill_all(tagged_processes(tag))


def _small_dump(path: Path) -> Path:
    import synth

    recs, _ = synth.week_of_intervals(days=0.5)
    path.write_bytes(synth.frame_rdw(recs))
    return path


def test_files_renamed_before_the_manifest_line_are_not_read_and_are_redone(tmp_path, monkeypatch):
    """A kill between the renames and the manifest line: final-named files of an uncommitted input."""
    dump = _small_dump(tmp_path / "a.smf")
    smf_ingest.ingest_paths([dump], tmp_path / "clean")
    reference = store_state(tmp_path / "clean")

    out = tmp_path / "store"

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # where the process dies: after every rename, before the commit

    monkeypatch.setattr(smf_ingest, "append_manifest", killed)
    with pytest.raises(KeyboardInterrupt):
        smf_ingest.ingest_paths([dump], out)
    monkeypatch.undo()
    renamed = [f for f in (out / "smf72_workload").rglob("*.parquet") if not f.name.startswith(".")]
    assert renamed, "the simulated kill should leave final-named files"
    assert read_manifest(out) == {}
    assert table_files(out / "smf72_workload") == []
    assert len(read_decoded_tables(out)["smf72_workload"]) == 0
    # a writer's temporary files, as a kill in the middle of a write leaves them
    part = renamed[0].parent
    (part / f".smf72_workload.{2**22 + 1}.deadbeef.parquet.tmp").write_bytes(b"PAR1")
    (out / "_keys").mkdir(exist_ok=True)
    (out / "_keys" / f"{'e' * 64}.{2**22 + 1}.deadbeef.tmp").write_bytes(b"\x93NUMPY")

    (again,) = smf_ingest.ingest_paths([dump], out).files
    assert again.status == "ingested"
    after = store_state(out)
    assert after.same_commit(reference)
    assert after.other == [], f"left in the store: {after.other}"
    assert len(table_files(out / "smf72_workload")) == len(table_files(tmp_path / "clean" / "smf72_workload"))


def test_a_copy_that_fails_midway_leaves_no_file(tmp_path, monkeypatch):
    src = tmp_path / "in.smf"
    src.write_bytes(os.urandom(3 << 20))
    into = tmp_path / "raw"
    into.mkdir()

    def half_then_die(fin, fd):
        os.write(fd, fin.read(1 << 20))
        raise OSError("killed")

    monkeypatch.setattr(ingest_cli, "_copy_data", half_then_die)
    with pytest.raises(OSError, match="killed"):
        ingest_cli.copy_new(src, into / src.name)
    assert list(into.iterdir()) == []
    monkeypatch.undo()
    assert ingest_cli.copy_new(src, into / src.name)
    assert (into / src.name).read_bytes() == src.read_bytes()
    assert (into / src.name).stat().st_mtime_ns == src.stat().st_mtime_ns
    assert not ingest_cli.copy_new(src, into / src.name), "an existing file is never replaced"
    assert sorted(p.name for p in into.iterdir()) == [src.name]


def test_the_hidden_copy_where_unnamed_files_are_not_offered(tmp_path, monkeypatch):
    src = tmp_path / "in.smf"
    src.write_bytes(b"x" * 4096)
    into = tmp_path / "raw"
    into.mkdir()
    monkeypatch.setattr(ingest_cli, "_link_unnamed", lambda s, d: None)
    assert ingest_cli.copy_new(src, into / "in.smf")
    assert not ingest_cli.copy_new(src, into / "in.smf")
    assert sorted(p.name for p in into.iterdir()) == ["in.smf"]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    left = into / f".b.smf.{int(dead.stdout)}.0123abcd.part"
    live = into / f".c.smf.{os.getpid()}.0123abcd.part"
    left.write_bytes(b"partial")
    live.write_bytes(b"under way")
    assert ingest_cli.remove_dead_parts(into) == [left]
    assert live.exists()


def _hold_scratch(base: Path, then: str) -> subprocess.Popen:
    script = textwrap.dedent(f"""
        import os, signal, sys, time
        from kneecap.ingest.cli import scratch_folder
        with scratch_folder({str(base)!r}) as folder:
            (folder / "decoded.parquet").write_bytes(b"x")
            print(folder, flush=True)
            {then}
    """)
    return subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(kneecap_src())},
                            stdout=subprocess.PIPE, text=True)


def test_scratch_folders_of_dead_runs_are_removed_by_the_next(tmp_path):
    dead = _hold_scratch(tmp_path, "os.kill(os.getpid(), signal.SIGKILL)")
    dead_folder = Path(dead.stdout.readline().strip())
    assert dead.wait(30) == -signal.SIGKILL and dead_folder.is_dir()
    live = _hold_scratch(tmp_path, "time.sleep(60)")
    try:
        live_folder = Path(live.stdout.readline().strip())
        with ingest_cli.scratch_folder(tmp_path) as mine:
            assert not dead_folder.exists(), "a dead run's scratch folder was kept"
            assert live_folder.is_dir(), "a live run's scratch folder was removed"
            assert mine.is_dir()
        assert not mine.exists()
    finally:
        live.kill()
        live.wait()


def test_a_waiting_ingest_names_the_holder_and_takes_the_lock_when_it_dies(tmp_path, caplog):
    """A live holder is waited for, and named; its death (SIGKILL) hands the lock over at once."""
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, os, time
        fd = os.open({str(tmp_path / LOCK)!r}, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        got = []

        def take() -> None:
            with locked(tmp_path):
                got.append(time.monotonic())

        caplog.set_level("WARNING", logger="kneecap.ingest.manifest")
        waiter = threading.Thread(target=take)
        waiter.start()
        time.sleep(0.3)
        assert got == [], "the lock was taken while a live process held it"
        killed_at = time.monotonic()
        holder.kill()
        waiter.join(10)
        assert got and got[0] - killed_at < 5.0
        assert f"held by another ingest (pid {holder.pid})" in caplog.text
    finally:
        holder.kill()
        holder.wait()


def test_the_copy_is_made_in_the_kernel_or_else_through_this_process_with_the_same_bytes(tmp_path, monkeypatch):
    import errno

    src = tmp_path / "in.smf"
    src.write_bytes(os.urandom(3 << 20))
    for name, refusal in (("kernel.smf", None), ("read_write.smf", errno.EXDEV)):
        into = tmp_path / name.split(".")[0]
        into.mkdir()
        if refusal is not None:  # a system that cannot copy between these files in the kernel
            def no_kernel_copy(*args, refusal=refusal):
                raise OSError(refusal, os.strerror(refusal))

            monkeypatch.setattr(ingest_cli.os, "copy_file_range", no_kernel_copy)
        assert ingest_cli.copy_new(src, into / name)
        assert (into / name).read_bytes() == src.read_bytes()
    monkeypatch.undo()

    def fails_after_a_part(fin_fd, fd, count):  # a real error midway is raised, not papered over by a second copy
        if os.fstat(fd).st_size:
            raise OSError(errno.EIO, "I/O error")
        return os.write(fd, os.read(fin_fd, 1 << 20))

    monkeypatch.setattr(ingest_cli.os, "copy_file_range", fails_after_a_part)
    with pytest.raises(OSError, match="I/O error"):
        ingest_cli.copy_new(src, tmp_path / "kernel" / "again.smf")
    assert not (tmp_path / "kernel" / "again.smf").exists()
