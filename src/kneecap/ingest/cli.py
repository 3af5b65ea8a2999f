"""``kneecap ingest`` and the ``decode_smf`` stage: SMF dumps and RMF XML into decoded Parquet.

Files, directories (recursively) or globs. XML documents go to the RMF Postprocessor reader,
everything else to the SMF reader; documentation files that travel with data (``*.md``, ``*.txt``,
``*.json``, licences) are skipped and listed (:mod:`kneecap.ingest.sniff`). Re-ingesting a file
adds no rows (content hash, :mod:`kneecap.ingest.manifest`).

A killed ingest leaves nothing the next one trips on. Bringing files into the input area, each is
first decoded into a scratch folder (:func:`scratch_folder`: locked while its run lives, so the
next run removes those of dead runs) and then copied all or nothing (:func:`copy_new`: written
unnamed or under a hidden name, flushed, then linked under its name), so the pipeline never finds
a partial copy and the re-run does not refuse one as a different file of the same name.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kneecap.ingest.inputlock import areas_of, dvc_spec, hold_areas, stage_paths
from kneecap.ingest.manifest import HashAhead, keep_from_children, release_to_children, sha256_file
from kneecap.ingest.refusals import expected_refusal
from kneecap.ingest.sniff import expand_paths, is_documentation, sort_inputs, total_bytes

if TYPE_CHECKING:
    from kneecap.ingest.smf import IngestSummary


class SmfDecoder(Protocol):
    """Decodes SMF dumps into a decoded-tables folder somewhere else than this process.

    :func:`kneecap.spark_jobs.ingest_paths` is one: passed in by the caller that chose Spark, so
    that this module, and the ``decode_smf`` stage when it runs locally, need no Spark.
    """

    def __call__(self, paths: list[Path], out_dir: str, *, codepage: str) -> IngestSummary:
        """Decode ``paths`` into ``out_dir`` as :func:`kneecap.ingest.smf.ingest_paths` does, and say what came in."""
        ...


# The decoders (kneecap.ingest.smf, kneecap.smf.codecs: numpy and the SMF readers, about 0.15 s)
# are imported inside the functions, after the inputs' SHA-256 has started on the other CPU.


class _Progress:
    """A progress bar on stderr (rich): records, bytes and throughput.

    Shown when stderr is a terminal and ``quiet`` is off; nothing otherwise, so logs and pipes get
    no control characters. ``total_bytes`` (None for gzip input, whose decompressed size is unknown
    until read) sizes the bar.
    """

    def __init__(self, quiet: bool, total_bytes: int | None = None) -> None:
        self.bar, self.task, self.records = None, None, 0
        if quiet or not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TransferSpeedColumn,
        )

        self.bar = Progress(TextColumn("ingest"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                            TextColumn("{task.fields[records]:,} records"), TimeElapsedColumn(),
                            transient=True, console=Console(stderr=True))
        self.bar.start()
        self.task = self.bar.add_task("ingest", total=total_bytes, records=0)

    def __call__(self, records: int, nbytes: int) -> None:
        self.records += records
        if self.bar is not None and self.task is not None:  # both are set together, or neither
            self.bar.update(self.task, advance=nbytes, records=self.records)

    def done(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def codepage_error(codepage: str) -> str | None:
    """Why ``codepage`` cannot decode SMF text fields, or None if it can.

    Examples
    --------
    >>> codepage_error("cp1047") is None
    True
    >>> codepage_error("utf-8")
    "--codepage 'utf-8' is not an EBCDIC code page kneecap decodes; use one of cp037, cp500, cp1047"
    """
    from kneecap.smf.codecs import CODEPAGES, ebcdic

    try:
        ebcdic(b"\xc1", codepage)
    except ValueError:
        return (f"--codepage {codepage!r} is not an EBCDIC code page kneecap decodes; "
                f"use one of {', '.join(CODEPAGES)}")
    return None


def run_ingest(paths: list[str], *, out_dir: str, codepage: str = "cp037", quiet: bool = False,
               allow_failed: bool = False, summary_target: str | None = None,
               read_ok: list[Path] | None = None, smf_decoder: SmfDecoder | None = None,
               duplicate: list[Path] | None = None) -> int:
    """Ingest, print the summary, and return the exit status.

    Exit 1 if a file could not be read (unless ``allow_failed``), 2 for a code page that is not
    EBCDIC (checked before anything is decoded or written; the inputs' SHA-256 starts first).
    ``read_ok`` collects the input files that decoded (newly or before), ``duplicate`` the RMF reports among them
    whose intervals were all stored already (:mod:`kneecap.ingest.rmf`). ``smf_decoder``, when
    given, decodes the SMF dumps instead of this process (``kneecap ingest --engine spark`` and the
    ``decode_smf`` stage pass :func:`kneecap.spark_jobs.ingest_paths` on their master, one Spark
    task per dump); the RMF XML reports, small, are read here either way.
    """
    files = expand_paths(paths)
    skipped_docs, xml, smf = sort_inputs(files)
    hashes = HashAhead(smf) if smf and smf_decoder is None else None
    bad_codepage = codepage_error(codepage)
    if bad_codepage:
        if hashes is not None:
            hashes.close()  # nothing will be ingested: stop after the input under way
        print(f"ingest: {bad_codepage}", file=sys.stderr)
        return 2
    if not files:
        print(f"ingest: nothing matches {' '.join(paths)}", file=sys.stderr)
        return 1
    from kneecap.ingest.smf import format_counts, ingest_paths

    summary: IngestSummary | None
    if smf_decoder is not None and smf:
        summary = smf_decoder(smf, out_dir, codepage=codepage)
    else:
        progress = _Progress(quiet, total_bytes(smf))
        try:
            summary = (ingest_paths(smf, out_dir, codepage=codepage, progress=progress, hashes=hashes)
                       if smf else None)
        finally:
            progress.done()
    xml_results: list = []
    if xml:
        # imported only for XML: the RMF reader builds DataFrames, and pandas is 0.35 s of start-up an SMF-only
        # ingest need not pay
        from kneecap.ingest.rmf import ingest_xml

        xml_results, _ = ingest_xml(xml, out_dir)
    results = (summary.files if summary else []) + xml_results
    if read_ok is not None:
        read_ok.extend(Path(r.path) for r in results if r.status != "failed")
    if duplicate is not None:
        duplicate.extend(Path(r.path) for r in results if r.status == "duplicate")
    # bundled samples that exist to be refused (kneecap.ingest.refusals) are not failures
    intended = {id(r): refusal for r in results if r.status == "failed"
                and (refusal := expected_refusal(r.path, r.sha256)) is not None}
    for r in results:
        if id(r) in intended:
            print(f"ingest: refused  {r.path} as intended: {intended[id(r)].why}")
            continue
        if r.status == "duplicate":
            print(f"ingest: {r.path}: its {r.duplicates} intervals are already stored from {r.duplicate_of}: skipped")
            continue
        detail = ", ".join(f"{k} {v}" for k, v in sorted(r.rows.items())) or "-"
        line = f"ingest: {r.status:8} {r.path} ({r.bytes / 1e6:.2f} MB; {detail}"
        if r.quarantined:
            line += f"; {r.quarantined} quarantined"
        if r.duplicates and r.duplicate_of is not None:  # RMF: by interval
            line += f"; {r.duplicates} intervals already stored from {r.duplicate_of}, left out"
        elif r.duplicates:
            line += f"; {r.duplicates} records already stored, skipped"
        line += ")"
        print(line if r.status != "failed" else f"ingest: failed   {r.path}: {r.error}",
              file=sys.stderr if r.status == "failed" else sys.stdout)
        for reason in r.quarantine_reasons[:50]:
            print(f"ingest:   quarantined {reason}")
        if len(r.quarantine_reasons) > 50:
            print(f"ingest:   ... and {len(r.quarantine_reasons) - 50} more")
    if summary is not None:
        counted = summary.record_counts
        if counted:
            print("ingest: records by type/subtype:")
            print(format_counts(counted))
        if summary.unknown:
            print("ingest: records of types without a decoder (counted, not decoded): "
                  + ", ".join(f"{t}.{s}: {n}" for (t, s), n in sorted(summary.unknown.items(), key=str)))
        if summary.quarantined:
            print(f"ingest: {len(summary.quarantine)} records quarantined:")
            print(summary.quarantine.to_string(index=False, max_rows=50))
        print(f"ingest: SMF {summary.mb:.2f} MB at {summary.mb_per_s:.1f} MB/s")
    for f in skipped_docs:
        print(f"ingest: skipped  {f} (documentation, not evidence)")
    failed = [r for r in results if r.status == "failed" and id(r) not in intended]
    print(summary_line(sum(r.status == "ingested" for r in results), sum(r.status == "skipped" for r in results),
                       len(intended), len(failed), summary_target or out_dir,
                       duplicates=sum(r.status == "duplicate" for r in results)))
    return 1 if failed and not allow_failed else 0


def summary_line(ingested: int, skipped: int, refused_as_intended: int, failed: int, target: str, *,
                 duplicates: int = 0) -> str:
    """The ingest's last line: what came in, what was there already, what was refused, and where.

    Bundled samples refused as intended are counted apart; "failed" appears only when something failed;
    RMF reports whose intervals were all stored already (``duplicates``) only when there were some.

    Examples
    --------
    >>> summary_line(3, 0, 3, 0, "data/interim/smf")
    'ingest: 3 ingested, 0 already ingested, 3 bundled samples refused as intended -> data/interim/smf'
    >>> summary_line(1, 2, 0, 1, "out")
    'ingest: 1 ingested, 2 already ingested, 1 failed -> out'
    >>> summary_line(1, 0, 0, 0, "out", duplicates=1)
    'ingest: 1 ingested, 0 already ingested, 1 duplicate report skipped, 0 failed -> out'
    """
    parts = [f"{ingested} ingested", f"{skipped} already ingested"]
    if duplicates:
        parts.append(f"{duplicates} duplicate report{'s' if duplicates != 1 else ''} skipped")
    if refused_as_intended:
        parts.append(f"{refused_as_intended} bundled sample{'s' if refused_as_intended != 1 else ''} "
                     "refused as intended")
    if failed or not refused_as_intended:
        parts.append(f"{failed} failed")
    return f"ingest: {', '.join(parts)} -> {target}"


def stage_outputs(dvc_yaml: Path) -> list[Path]:
    """Folders and files the DVC pipeline in ``dvc_yaml`` writes (every stage's ``outs``), resolved.

    Empty when there is no such file. A stage rebuilds them, so nothing else may write there.
    """
    return [(dvc_yaml.parent / name).resolve() for name in stage_paths(dvc_spec(dvc_yaml), "outs")]


def inside_stage_output(target: Path, dvc_yaml: Path) -> Path | None:
    """The stage output ``target`` lies in (or is), or None."""
    target = target.resolve()
    for out in stage_outputs(dvc_yaml):
        if target == out or out in target.parents:
            return out
    return None


def distinct_contents(files: list[Path], into: Path) -> tuple[list[Path], dict[Path, Path]]:
    """``files`` less those whose bytes another of them, or a file of another name in ``into``, has.

    The same dump under three names would otherwise be copied three times and decoded three times
    (its records are stored once, by their keys, but each copy costs the whole decode). Only files
    of equal size are hashed. A file of the same name in ``into`` is left to the copy, which skips
    it when its bytes are the same and refuses it otherwise.

    Returns
    -------
    files : list of Path
        The first file of each content, in the order given.
    twins : dict
        Each file left out -> the file (given earlier, or in ``into``) with its bytes.
    """
    sizes: dict[int, list[Path]] = {}
    for f in files:
        sizes.setdefault(f.stat().st_size, []).append(f)
    names = {f.name for f in files}
    if into.is_dir():
        for f in sorted(into.iterdir()):
            if (not f.name.startswith(".") and f.name not in names and f.is_file()
                    and f.stat().st_size in sizes):
                sizes[f.stat().st_size].insert(0, f)  # a file already there comes first: it stays
    first: dict[str, Path] = {}
    twins: dict[Path, Path] = {}
    for group in sizes.values():
        if len(group) < 2:
            continue
        for f in group:
            digest = sha256_file(f)
            if digest in first and first[digest].resolve() != f.resolve():
                twins[f] = first[digest]
            else:
                first.setdefault(digest, f)
    return [f for f in files if f not in twins], twins


#: Name prefix of a run's scratch folder in the temporary directory.
SCRATCH_PREFIX = "kneecap-ingest-"


def _lock_folder(folder: Path) -> int | None:
    """An ``flock``-ed descriptor of ``folder`` if no live process holds one, else None."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def remove_dead_scratch(base: Path) -> list[Path]:
    """Remove this user's scratch folders in ``base`` that no live run holds; returns them.

    A run holds an ``flock`` on its folder from its creation to its removal (:func:`scratch_folder`),
    which the kernel releases when the run dies, however it dies: a folder that can be locked is a
    dead run's (or one from before folders were locked).
    """
    removed = []
    for folder in sorted(base.glob(f"{SCRATCH_PREFIX}*")):
        try:
            if not folder.is_dir() or folder.is_symlink() or folder.stat().st_uid != os.getuid():
                continue
            fd = _lock_folder(folder)
        except OSError:  # gone meanwhile, or not ours to open
            continue
        if fd is None:
            continue
        try:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def scratch_folder(base: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """A folder for one run, in ``base`` (default the temporary directory), removed when the block ends.

    It is locked while the run lives, so that the next run removes it if this one is killed
    (SIGKILL runs no cleanup); the scratch folders of dead runs are removed first. A sweep by
    another run can take a new folder's lock between its creation and this run's ``flock``, and
    remove it: then another folder is made.
    """
    where = Path(base) if base is not None else Path(tempfile.gettempdir())
    remove_dead_scratch(where)
    while True:
        folder = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=where))
        fd = _lock_folder(folder)
        if fd is None:
            continue  # a sweep holds it and removes it: make another
        try:
            if folder.stat().st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # removed by a sweep before the lock was taken: make another
    keep_from_children(fd)  # a forked child must not keep it locked after this run died
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        release_to_children(fd)
        os.close(fd)


#: A copy :func:`copy_new` is writing under a hidden name (where unnamed files are not supported).
_PART = re.compile(r"\..+\.(?P<pid>\d+)\.[0-9a-f]{8}\.part")


#: What ``copy_file_range`` answers where the system cannot copy between these two files in the kernel.
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP}


def _copy_data(fin: Any, fd: int) -> None:
    """The rest of the open file ``fin`` into the empty file ``fd``.

    In the kernel (``copy_file_range``) where it can: the bytes do not pass through this process
    (a 92 MB dump: 0.05-0.08 s, 0.024 s of CPU, against 0.10-0.14 s and 0.031 s read and written
    1 MiB at a time). Where it cannot, as before.
    """
    first = True
    try:
        while os.copy_file_range(fin.fileno(), fd, 1 << 30):
            first = False
        return
    except OSError as exc:
        if not first or exc.errno not in _NO_KERNEL_COPY:
            raise
    with open(fd, "wb", closefd=False) as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)


def _copy_bytes(src: Path, fd: int) -> None:
    """``src``'s bytes, mode and times into the open file ``fd``, flushed to disk."""
    with src.open("rb") as fin:
        _copy_data(fin, fd)
    st = src.stat()
    os.fchmod(fd, st.st_mode & 0o777)
    os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.fsync(fd)


def _link_unnamed(src: Path, dest: Path) -> bool | None:
    """:func:`copy_new` through an unnamed file; None where the system does not offer one."""
    try:
        fd = os.open(dest.parent, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    except (AttributeError, OSError):  # not Linux, or a file system without O_TMPFILE
        return None
    try:
        _copy_bytes(src, fd)
        try:
            os.link(f"/proc/self/fd/{fd}", dest)
        except FileExistsError:
            return False
        except OSError:  # no /proc to link the unnamed file through
            return None
        return True
    finally:
        os.close(fd)


def _link_named(src: Path, dest: Path) -> bool:
    """:func:`copy_new` through a hidden ``.part`` file, removed whatever happens (but a kill)."""
    part = dest.parent / f".{dest.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part"
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            _copy_bytes(src, fd)
        finally:
            os.close(fd)
        os.link(part, dest)
    except FileExistsError:
        return False
    finally:
        part.unlink(missing_ok=True)
    return True


def copy_new(src: Path, dest: Path) -> bool:
    """Copy ``src`` to ``dest`` all or nothing; False (nothing written) when ``dest`` exists.

    The bytes go to an unnamed file in ``dest``'s folder (``O_TMPFILE``), are flushed, and the file
    is linked as ``dest``: a kill during the copy leaves no file at all (the kernel frees an
    unnamed one), and a link never replaces a file that appeared meanwhile. Where unnamed files are
    not supported, a hidden ``.<name>.<pid>.<random>.part`` takes their place (removed by
    :func:`remove_dead_parts` if its run dies). The folder is flushed after the link.
    """
    linked = _link_unnamed(src, dest)
    if linked is None:
        linked = _link_named(src, dest)
    if linked:
        from kneecap.ingest.store import fsync_dir  # numpy with it: not at this module's import

        fsync_dir(dest.parent)
    return linked


def remove_dead_parts(folder: Path) -> list[Path]:
    """Remove hidden partial copies (:func:`copy_new`'s fallback) in ``folder`` whose process is gone."""
    removed = []
    for f in sorted(folder.glob(".*.part")):
        m = _PART.fullmatch(f.name)
        if m is None:
            continue
        try:
            os.kill(int(m.group("pid")), 0)
            continue  # its copier is alive
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # alive, another user's
        f.unlink(missing_ok=True)
        removed.append(f)
    return removed


def stored_reports(into: Path, scratch: Path) -> None:
    """Ingest the RMF XML reports already in the input area ``into`` into ``scratch``, silently.

    Their intervals are then what a report brought in is compared with (the pipeline decodes every
    file of the input area into one store, where a second copy of a report would be a duplicate).
    """
    if not into.is_dir():
        return
    from kneecap.ingest.rmf import ingest_xml

    existing = sort_inputs(expand_paths([str(into)])).rmf_xml
    if existing:
        ingest_xml(existing, scratch)


def bring_into(paths: list[str], into: str, *, codepage: str = "cp037", quiet: bool = False) -> int:
    """Check each input decodes, then copy the readable ones into ``into``.

    ``into`` is the input area the pipeline reads, so ``make run`` / ``dvc repro`` models them; a
    file already there with the same bytes is not copied again, and a different file of the same
    name is refused, not overwritten. The copies are made holding the input areas of the project
    ``into`` lies in (:func:`kneecap.ingest.inputlock.areas_of`), so while ``kneecap repro`` runs
    they wait and land after it. An RMF report whose intervals are all in a report already
    there (the same report saved again: CRLF, UTF-16) is named and not copied
    (:func:`stored_reports`, :mod:`kneecap.ingest.rmf`).

    Returns 0 when every file came in, 1 when some could not be read (named; the rest still copied).
    """
    decoded: list[Path] = []
    twins_by_interval: list[Path] = []
    with scratch_folder() as scratch:
        if sort_inputs(expand_paths(paths)).rmf_xml:
            # the reports already in the input area first: one saved again (other bytes, the same
            # intervals, kneecap.ingest.rmf) is then found a duplicate and not copied in beside them
            stored_reports(Path(into), scratch)
        status = run_ingest(paths, out_dir=str(scratch), codepage=codepage, quiet=quiet, allow_failed=True,
                            summary_target="a scratch folder (checked, then dropped)", read_ok=decoded,
                            duplicate=twins_by_interval)
        if status == 2:
            return 2
    readable = {p.resolve() for p in decoded}
    left_out = {p.resolve() for p in twins_by_interval}
    inputs = expand_paths(paths)
    files = [f for f in inputs if f.resolve() in readable and f.resolve() not in left_out]
    files, twins = distinct_contents(files, Path(into))
    for f, twin in twins.items():
        print(f"ingest: skipped  {f}: the same bytes as {twin} (SHA-256), not copied again")
    target = Path(into)
    target.mkdir(parents=True, exist_ok=True)
    copied, same, refused = 0, 0, 0
    # a pipeline run holds the input areas for its whole `dvc repro` (kneecap.ingest.inputlock):
    # the copies wait for it, so its decode and the hash DVC records agree, and they land after it
    with hold_areas(areas_of(target), who="ingest"):
        remove_dead_parts(target)
        for f in files:
            dest = target / f.name
            if not dest.exists() and copy_new(f, dest):
                copied += 1
                continue
            if sha256_file(dest) == sha256_file(f):
                same += 1
                continue
            print(f"ingest: refused  {f}: {dest} exists with other contents (rename one of them)", file=sys.stderr)
            refused += 1
    print(f"ingest: {copied} file(s) copied into {target}, {same} already there"
          + (f", {refused} refused" if refused else "")
          + (f", {len(left_out)} duplicate report(s) left out" if left_out else "")
          + "; `make run` (or `dvc repro`) decodes and models them")
    unreadable = [f for f in inputs if f.resolve() not in readable and not is_documentation(f)
                  and expected_refusal(f, sha256_file(f)) is None]
    return 1 if refused or unreadable else 0
