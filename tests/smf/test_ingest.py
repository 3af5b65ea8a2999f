"""ingest_paths: Parquet per table and input, manifest, idempotence, failures reported."""

import json
import os

import pandas as pd
import pyarrow.parquet as pq
import pytest
import synth

from kneecap.ingest.manifest import MANIFEST
from kneecap.ingest.smf import ingest_paths
from kneecap.ingest.store import table_files


def _dump(tmp_path):
    recs, _ = synth.week_of_intervals(days=0.5)
    recs.append(synth.record_other(99, 1, "SYSA"))
    d = tmp_path / "in"
    d.mkdir()
    a = synth.frame_rdw(recs)
    b = synth.frame_bdw(recs[:10], spanned=True)
    (d / "a.smf").write_bytes(a)
    (d / "b.smf.gz").write_bytes(synth.gz(b))
    return d, recs, len(a) + len(b)


def test_ingest_writes_tables_and_is_idempotent(tmp_path):
    d, recs, nbytes = _dump(tmp_path)
    out = tmp_path / "out"
    calls = []
    s1 = ingest_paths(d, out, progress=lambda n, b: calls.append((n, b)))
    assert [f.status for f in s1.files] == ["ingested", "ingested"]
    # b.smf.gz holds the first ten records of a.smf again: stored once (issue #14 finding 3)
    n72 = sum(r[5] == 72 for r in recs)
    assert s1.rows["smf72_workload"] == n72  # one period per synthetic record
    assert [f.duplicates for f in s1.files] == [0, 10]
    assert sum(n for n, _ in calls) == len(recs) + 10
    assert sum(b for _, b in calls) == nbytes  # uncompressed input bytes, descriptors included
    assert s1.unknown == {(99, 1): 1}
    # partitioned by system and month; b.smf.gz added no 72.3 rows, so every file is a.smf's
    files = table_files(out / "smf72_workload")
    assert files and {f.name for f in files} == {f"{s1.files[0].sha256}.parquet"}
    t = pd.concat(pq.read_table(f).to_pandas() for f in files)
    assert {"class_name", "appl_iip_pct", "interval_start_at"} <= set(t.columns)
    for f in files:
        part = pq.read_table(f).to_pandas()
        month = part["interval_start_at"].dt.strftime("%Y-%m").unique().tolist()
        assert f.parent.relative_to(out / "smf72_workload").as_posix() == \
            f"system={part['system_id'].iloc[0]}/month={month[0]}" and len(month) == 1
        assert part["system_id"].nunique() == 1
    manifest = [json.loads(x) for x in (out / MANIFEST).read_text().splitlines()]
    assert len(manifest) == 2
    # second run: same content (even under a new name) adds nothing
    (d / "copy_of_a.smf").write_bytes((d / "a.smf").read_bytes())
    s2 = ingest_paths([str(d / "*.smf*")], out)
    assert [f.status for f in s2.files] == ["skipped"] * 3
    assert s2.rows == {}
    assert len((out / MANIFEST).read_text().splitlines()) == 2
    total = pd.concat(pd.read_parquet(p) for p in table_files(out / "smf72_workload"))
    assert len(total) == n72


def test_plain_binary_file_fails_with_instructions_others_ingested(tmp_path):
    d, recs, _ = _dump(tmp_path)
    (d / "plain.bin").write_bytes(synth.frame_plain(recs[:5]))
    s = ingest_paths(d, tmp_path / "out")
    failed = s.failed
    assert len(failed) == 1 and failed[0].path.endswith("plain.bin")
    assert "site rdw" in failed[0].error
    assert len(s.ingested) == 2
    assert not list((tmp_path / "out").rglob("*.tmp"))


def test_keys_of_a_failed_input_do_not_hide_its_records_from_the_next(tmp_path, monkeypatch):
    # one key set serves every input of an ingest; an input that fails after decoding must
    # take its keys out of it again, or the same records in a later input would count as stored
    import kneecap.ingest.smf as ingest
    from kneecap.smf.framing import SMFDataError

    recs, _ = synth.week_of_intervals(days=0.25)
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.smf").write_bytes(synth.frame_rdw(recs))
    (d / "b.smf").write_bytes(synth.frame_bdw(recs))
    real = ingest.ingest_one

    def fails_late(path, *args, **kwargs):
        result = real(path, *args, **kwargs)
        if path.name == "a.smf":
            raise SMFDataError("cut short", file=str(path), offset=123)
        return result

    monkeypatch.setattr(ingest, "ingest_one", fails_late)
    s = ingest_paths(d, tmp_path / "out", workers=1)
    assert [f.status for f in s.files] == ["failed", "ingested"]
    assert s.files[1].duplicates == 0
    assert s.rows["smf72_workload"] == sum(r[5] == 72 for r in recs)


def test_ingest_command_starts_hashing_before_the_decoders_are_imported():
    # the inputs' SHA-256 runs on the second CPU while the decoders are imported (about 0.15 s
    # of a 1.1 s ingest of 200 MB): kneecap.ingest.cli itself must not pull numpy in
    import subprocess
    import sys

    code = ("import sys, kneecap.ingest.cli; "
            "print(sorted(m for m in ('numpy', 'pyarrow', 'pandas', 'kneecap.smf.reader') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("forked", [True, False], ids=["hashing process", "hashing thread"])
def test_hash_ahead_hands_over_digests_and_errors(tmp_path, monkeypatch, forked):
    import hashlib

    from kneecap.ingest import manifest
    from kneecap.ingest.manifest import HashAhead

    monkeypatch.setattr(manifest, "_may_fork", lambda: forked)
    a, b, missing = tmp_path / "a", tmp_path / "b", tmp_path / "gone"
    a.write_bytes(b"abc")
    b.write_bytes(b"x" * 3_000_000)
    ahead = HashAhead([a, missing, b])
    assert (ahead._pid is not None) == forked
    assert ahead.result(b)() == hashlib.sha256(b.read_bytes()).hexdigest()  # in order, after a failure
    assert ahead.result(a)() == hashlib.sha256(b"abc").hexdigest()
    try:
        ahead.result(missing)()
    except FileNotFoundError as exc:
        assert "gone" in str(exc)
    else:
        raise AssertionError("a missing input's error must reach the caller")
    other = tmp_path / "other"
    other.write_bytes(b"z")
    assert ahead.result(other)() == hashlib.sha256(b"z").hexdigest()  # not listed: hashed on demand
    ahead._thread.join(timeout=10)
    assert not ahead._thread.is_alive()  # every result handed over, the hashing process reaped
    if forked:
        with pytest.raises(ChildProcessError):
            os.waitpid(ahead._pid, os.WNOHANG)


def test_hash_ahead_stopped_early_ends_its_hashing_process_and_answers_the_rest_with_an_error(tmp_path, monkeypatch):
    from kneecap.ingest import manifest

    monkeypatch.setattr(manifest, "_may_fork", lambda: True)
    files = []
    for i in range(3):
        files.append(tmp_path / f"f{i}")
        files[-1].write_bytes(os.urandom(1 << 20))
    ahead = manifest.HashAhead(files)
    ahead.close()
    ahead._thread.join(timeout=10)
    assert not ahead._thread.is_alive()
    with pytest.raises(ChildProcessError):  # killed and reaped, not left behind
        os.waitpid(ahead._pid, os.WNOHANG)
    for f in files:  # each answered: its digest if it was hashed before the stop, else the stop
        try:
            assert len(ahead.result(f)()) == 64
        except RuntimeError as exc:
            assert "stopped" in str(exc)
