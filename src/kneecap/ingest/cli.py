"""``kneecap ingest`` and the ``decode_smf`` stage: SMF dumps and RMF XML into decoded Parquet.

Files, directories (recursively) or globs. XML documents go to the RMF Postprocessor reader,
everything else to the SMF reader; documentation files that travel with data (``*.md``, ``*.txt``,
``*.json``, licences) are skipped and listed (:mod:`kneecap.ingest.sniff`). Re-ingesting a file
adds no rows (content hash, :mod:`kneecap.ingest.manifest`).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from kneecap.ingest.manifest import HashAhead, sha256_file
from kneecap.ingest.refusals import expected_refusal
from kneecap.ingest.sniff import expand_paths, is_documentation, sort_inputs, total_bytes

if TYPE_CHECKING:
    from kneecap.ingest.smf import IngestSummary

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
               read_ok: list[Path] | None = None, engine: str = "local",
               spark_master: str | None = None) -> int:
    """Ingest, print the summary, and return the exit status.

    Exit 1 if a file could not be read (unless ``allow_failed``), 2 for a code page that is not
    EBCDIC (checked before anything is decoded or written; the inputs' SHA-256 starts first).
    ``read_ok`` collects the input files that decoded (newly or before). ``engine`` ``spark``
    decodes the SMF dumps on Spark (:func:`kneecap.spark_jobs.ingest_paths`, on ``spark_master``),
    one task per dump; anything else decodes them here (the RMF XML reports, small, are read here
    either way).
    """
    files = expand_paths(paths)
    skipped_docs, xml, smf = sort_inputs(files)
    hashes = HashAhead(smf) if smf and engine != "spark" else None
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
    if engine == "spark" and smf:
        # imported only here: pyspark starts a JVM, and a local ingest must not need it installed
        from kneecap import spark_jobs

        summary = spark_jobs.ingest_paths(smf, out_dir, codepage=codepage, master=spark_master)
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
    # bundled samples that exist to be refused (kneecap.ingest.refusals) are not failures
    intended = {id(r): refusal for r in results if r.status == "failed"
                and (refusal := expected_refusal(r.path, r.sha256)) is not None}
    for r in results:
        if id(r) in intended:
            print(f"ingest: refused  {r.path} as intended: {intended[id(r)].why}")
            continue
        detail = ", ".join(f"{k} {v}" for k, v in sorted(r.rows.items())) or "-"
        line = f"ingest: {r.status:8} {r.path} ({r.bytes / 1e6:.2f} MB; {detail}"
        if r.quarantined:
            line += f"; {r.quarantined} quarantined"
        if r.duplicates:
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
                       len(intended), len(failed), summary_target or out_dir))
    return 1 if failed and not allow_failed else 0


def summary_line(ingested: int, skipped: int, refused_as_intended: int, failed: int, target: str) -> str:
    """The ingest's last line: what came in, what was there already, what was refused, and where.

    Bundled samples refused as intended are counted apart; "failed" appears only when something failed.

    Examples
    --------
    >>> summary_line(3, 0, 3, 0, "data/interim/smf")
    'ingest: 3 ingested, 0 already ingested, 3 bundled samples refused as intended -> data/interim/smf'
    >>> summary_line(1, 2, 0, 1, "out")
    'ingest: 1 ingested, 2 already ingested, 1 failed -> out'
    """
    parts = [f"{ingested} ingested", f"{skipped} already ingested"]
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
    if not dvc_yaml.is_file():
        return []
    import yaml

    spec = yaml.safe_load(dvc_yaml.read_text(encoding="utf-8")) or {}
    found = []
    for stage in (spec.get("stages") or {}).values():
        for out in stage.get("outs") or []:
            name = next(iter(out)) if isinstance(out, dict) else out
            found.append((dvc_yaml.parent / str(name)).resolve())
    return found


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


def bring_into(paths: list[str], into: str, *, codepage: str = "cp037", quiet: bool = False) -> int:
    """Check each input decodes, then copy the readable ones into ``into``.

    ``into`` is the input area the pipeline reads, so ``make run`` / ``dvc repro`` models them; a
    file already there with the same bytes is not copied again, and a different file of the same
    name is refused, not overwritten.

    Returns 0 when every file came in, 1 when some could not be read (named; the rest still copied).
    """
    decoded: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="kneecap-ingest-") as scratch:
        status = run_ingest(paths, out_dir=scratch, codepage=codepage, quiet=quiet, allow_failed=True,
                            summary_target="a scratch folder (checked, then dropped)", read_ok=decoded)
        if status == 2:
            return 2
    readable = {p.resolve() for p in decoded}
    inputs = expand_paths(paths)
    files = [f for f in inputs if f.resolve() in readable]
    files, twins = distinct_contents(files, Path(into))
    for f, twin in twins.items():
        print(f"ingest: skipped  {f}: the same bytes as {twin} (SHA-256), not copied again")
    target = Path(into)
    target.mkdir(parents=True, exist_ok=True)
    copied, same, refused = 0, 0, 0
    for f in files:
        dest = target / f.name
        if dest.exists():
            if sha256_file(dest) == sha256_file(f):
                same += 1
                continue
            print(f"ingest: refused  {f}: {dest} exists with other contents (rename one of them)", file=sys.stderr)
            refused += 1
            continue
        shutil.copy2(f, dest)
        copied += 1
    print(f"ingest: {copied} file(s) copied into {target}, {same} already there"
          + (f", {refused} refused" if refused else "")
          + "; `make run` (or `dvc repro`) decodes and models them")
    unreadable = [f for f in inputs if f.resolve() not in readable and not is_documentation(f)
                  and expected_refusal(f, sha256_file(f)) is None]
    return 1 if refused or unreadable else 0
