"""An input's tables reach the disk before their names do, flushed together rather than one commit each."""

import os
import threading
import time

import numpy as np

from kneecap.ingest import store


def _logged(monkeypatch, delay: float = 0.0) -> list[tuple[str, str]]:
    """Record every ``os.fsync`` (by path) and ``os.replace`` in order; each fsync takes ``delay`` s."""
    events: list[tuple[str, str]] = []
    in_flight = [0]
    lock = threading.Lock()
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        with lock:
            in_flight[0] += 1
            events.append(("in flight", str(in_flight[0])))
        time.sleep(delay)
        real_fsync(fd)
        with lock:
            in_flight[0] -= 1
            events.append(("fsync", path))

    def replace(src, dst) -> None:
        real_replace(src, dst)
        with lock:
            events.append(("replace", f"{src} -> {dst}"))

    monkeypatch.setattr(store.os, "fsync", fsync)
    monkeypatch.setattr(store.os, "replace", replace)
    return events


def test_fsync_many_flushes_every_file_then_every_folder_at_once(tmp_path, monkeypatch):
    files, folders = [], []
    for i in range(8):
        folder = tmp_path / f"d{i}"
        folder.mkdir()
        (folder / "f").write_bytes(b"x" * 100)
        files.append(folder / "f")
        folders.append(folder)
    events = _logged(monkeypatch, delay=0.2)
    store.fsync_many(files, folders)
    flushed = [path for kind, path in events if kind == "fsync"]
    assert sorted(flushed[:8]) == sorted(str(f) for f in files)  # the bytes first ...
    assert sorted(flushed[8:]) == sorted(str(d) for d in folders)  # ... then the names
    # together, not one commit after another: several flushes wait on the disk at once (counted, not
    # timed: a shared machine's clock says nothing here)
    assert max(int(n) for kind, n in events if kind == "in flight") >= 2


def test_a_table_is_flushed_before_its_files_are_named_and_its_folders_after(tmp_path, monkeypatch):
    writer = store.TableWriter(tmp_path, "smf72_workload")
    days = np.array(["2025-03-03", "2025-03-04", "2025-03-05"], dtype="datetime64[D]")
    writer.write({"system_id": ["SYSA"] * 3, "interval_start": days.astype("datetime64[us]"),
                  "value": np.arange(3, dtype=np.float64)})
    events = _logged(monkeypatch)
    writer.close("a" * 64)
    renames = [e for e in events if e[0] == "replace"]
    assert len(renames) == len(writer.closed) >= 1
    first_rename = events.index(renames[0])
    flushed_before = {path for kind, path in events[:first_rename] if kind == "fsync"}
    assert flushed_before == {str(tmp) for tmp, _, _ in writer.closed}
    flushed_after = {path for kind, path in events[events.index(renames[-1]):] if kind == "fsync"}
    assert flushed_after == {str(tmp_path / "smf72_workload" / part) for _, part, _ in writer.closed}
    assert all(f.name.startswith("a" * 64) for f in (tmp_path / "smf72_workload").rglob("*.parquet"))


def test_an_inputs_tables_are_flushed_in_one_round_then_named_then_their_folders_flushed(tmp_path, monkeypatch):
    days = np.array(["2025-03-03", "2025-04-04"], dtype="datetime64[D]").astype("datetime64[us]")
    writers = []
    for table in ("smf72_workload", "smf30_interval"):
        writer = store.TableWriter(tmp_path, table)
        writer.write({"system_id": ["SYSA"] * 2, "interval_start_at": days, "value": np.arange(2, dtype=np.float64)})
        writers.append(writer)
    events = _logged(monkeypatch)
    store.close_writers(writers, "b" * 64)
    kinds = [kind for kind, _ in events if kind != "in flight"]
    temporaries = {str(tmp) for w in writers for tmp, _, _ in w.closed}
    folders = {str(w.dir / part) for w in writers for _, part, _ in w.closed}
    assert len(temporaries) == len(folders) == 4  # two tables, two months each
    # every file of both tables on disk before any is named, every name before any folder is flushed
    assert kinds == ["fsync"] * 4 + ["replace"] * 4 + ["fsync"] * 4
    assert {path for kind, path in events[:kinds.index("replace") + 4] if kind == "fsync"} == temporaries
    assert {path for kind, path in events[-8:] if kind == "fsync"} == folders
