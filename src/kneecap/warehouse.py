"""DuckDB warehouse I/O: read the bundled reference CSVs, run SQL files, publish Parquet marts.

This is one of the few kneecap modules allowed to touch files. SQL files never contain paths:
:func:`run_sql_files` binds every input under a logical table name (dbt's ``ref()`` idea), runs
the files in layer order and registers each result under its file stem for the files after it.
Pipeline and app exchange Parquet, never a shared read-write DuckDB file (DuckDB allows one
writer process, and a connection is not thread-safe).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

# the measurement CSV readers live in kneecap.measurement_csv; warehouse keeps their names for its callers
from kneecap.measurement_csv import MAX_CSV_BYTES as MAX_CSV_BYTES
from kneecap.measurement_csv import MAX_FIELD_CHARS as MAX_FIELD_CHARS
from kneecap.measurement_csv import MAX_PROBLEMS_SHOWN as MAX_PROBLEMS_SHOWN
from kneecap.measurement_csv import SOURCES_COLUMNS as SOURCES_COLUMNS
from kneecap.measurement_csv import CellProblem as CellProblem
from kneecap.measurement_csv import ReferenceDataError as ReferenceDataError
from kneecap.measurement_csv import number_problem as number_problem
from kneecap.measurement_csv import read_measurement_csv as read_measurement_csv
from kneecap.measurement_csv import read_sources_csv as read_sources_csv

#: Layer folders under ``pipelines/sql`` in the order they run.
SQL_LAYERS: tuple[str, ...] = ("staging", "intermediate", "marts")

#: Files in ``data/reference`` that are not measurement tables: the citations of the tables, the
#: factor catalogue (:mod:`kneecap.factors`) and seed 002's workload names and printed numbers
#: (:mod:`kneecap.workloads`). Every other CSV there must be a measurement table.
REFERENCE_OTHER_FILES: frozenset[str] = frozenset(
    {"sources.csv", "factors.csv", "seed002_workloads.csv", "seed002_numbers.csv"})
#: The file of the bundled ``data/reference`` that lists what kneecap ships there: a user's own
#: tables (``kneecap add-table``) sit beside the bundled ones and are not in it.
MANIFEST_NAME = "MANIFEST"


def read_manifest(directory: str | os.PathLike[str]) -> tuple[str, ...]:
    """The file names ``directory``'s :data:`MANIFEST_NAME` lists, in its order.

    One name a line; blank lines and ``#`` comments are skipped.

    Raises
    ------
    ReferenceDataError
        No manifest, a name listed twice, or a name that is not a plain file name in ``directory``.
    """
    path = Path(directory) / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ReferenceDataError(f"{path}: no manifest of the bundled files") from exc
    names, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if name in names:
            problems.append(f"{path}:{number}: {name} is listed twice")
        elif Path(name).name != name or not (Path(directory) / name).is_file():
            problems.append(f"{path}:{number}: {name} is not a file of {directory}")
        names.append(name)
    if problems:
        raise ReferenceDataError("\n".join(problems))
    return tuple(names)


def bundled_tables(directory: str | os.PathLike[str]) -> tuple[str, ...]:
    """The ``source_id`` of each measurement table the manifest lists (not the user's own)."""
    return tuple(Path(name).stem for name in read_manifest(directory)
                 if name.endswith(".csv") and name not in REFERENCE_OTHER_FILES)


def read_reference_dir(directory: str | os.PathLike[str], *,
                       only: Collection[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read every measurement CSV in ``directory`` plus its ``sources.csv``.

    The files in :data:`REFERENCE_OTHER_FILES` are not measurement tables and are skipped.

    Parameters
    ----------
    only
        Read just these tables (``source_id``, the file stem) and their ``sources.csv`` rows, e.g.
        :func:`bundled_tables` for the tables kneecap ships; None reads every table in the folder.

    Returns
    -------
    measurements, sources : DataFrame
        ``measurements`` concatenates all tables; ``sources`` has one row per table.

    Raises
    ------
    ReferenceDataError
        Problems of all files at once, and tables missing from ``sources.csv``.
    """
    directory = Path(directory)
    sources = read_sources_csv(directory / "sources.csv")
    if only is not None:
        missing = sorted(set(only) - {p.stem for p in directory.glob("*.csv")})
        if missing:
            raise ReferenceDataError(f"{directory}: no table {', '.join(missing)}")
        sources = sources[sources["source_id"].isin(set(only))].reset_index(drop=True)
    frames, problems = [], []
    for csv_path in sorted(directory.glob("*.csv")):
        if csv_path.name in REFERENCE_OTHER_FILES or (only is not None and csv_path.stem not in only):
            continue
        try:
            frame = read_measurement_csv(csv_path)
        except ReferenceDataError as exc:
            problems.append(str(exc))
            continue
        if csv_path.stem not in set(sources["source_id"]):
            problems.append(f"{csv_path}:1: source_id: table {csv_path.stem!r} has no row in sources.csv")
        bad = frame.loc[frame["source_id"] != csv_path.stem, "source_line"]
        problems += [f"{csv_path}:{line}: source_id: must equal the file stem {csv_path.stem!r}" for line in bad]
        frames.append(frame)
    if problems:
        raise ReferenceDataError("\n".join(problems))
    if not frames:
        raise ReferenceDataError(f"{directory}: no measurement CSVs found")
    return pd.concat(frames, ignore_index=True), sources


def sql_files(sql_root: str | os.PathLike[str]) -> list[Path]:
    """SQL files under ``sql_root`` in run order.

    The order is layer by layer; within a layer a file runs after the files whose tables it reads (e.g.
    ``dim_sources`` after ``fct_measurements``), else alphabetically.
    """
    root = Path(sql_root)
    ordered: list[Path] = []
    for layer in SQL_LAYERS:
        pending = sorted((root / layer).glob("*.sql"))
        reads = {p: {q.stem for q in pending if q != p and re.search(rf"\b{q.stem}\b", _sql_body(p))}
                 for p in pending}
        while pending:
            ready = [p for p in pending if not (reads[p] & {q.stem for q in pending})]
            if not ready:
                raise ValueError(f"{root / layer}: SQL files read each other in a cycle: "
                                 f"{', '.join(p.name for p in pending)}")
            ordered.extend(ready)
            pending = [p for p in pending if p not in ready]
    return ordered


def _sql_body(path: Path) -> str:
    """SQL text without ``--`` comments (header comments name inputs but must not order files)."""
    return "\n".join(line.split("--", 1)[0] for line in path.read_text(encoding="utf-8").splitlines())


def run_sql_files(
    files: Iterable[str | os.PathLike[str]],
    inputs: Mapping[str, pd.DataFrame],
    *,
    params: Mapping[str, object] | None = None,
) -> dict[str, pd.DataFrame]:
    """Run SQL files against named inputs; each file's result becomes the table named by its stem.

    Parameters
    ----------
    files
        SQL files, each a single ``select`` (``$name`` placeholders allowed).
    inputs
        Logical table name -> DataFrame, registered as views before the first file runs.
    params
        Values for the ``$name`` placeholders a file uses (only those it names are passed).

    Returns
    -------
    dict
        Table name -> result, for every file, in run order.
    """
    params = dict(params or {})
    results: dict[str, pd.DataFrame] = {}
    con = duckdb.connect(":memory:")
    try:
        for name, frame in inputs.items():
            con.register(name, frame)
        for file in files:
            file = Path(file)
            sql = file.read_text(encoding="utf-8")
            used = {k: v for k, v in params.items() if f"${k}" in sql}
            try:
                result = con.execute(sql, used).df() if used else con.execute(sql).df()
            except duckdb.Error as exc:
                raise RuntimeError(f"{file}: {exc}") from exc
            results[file.stem] = result
            con.register(file.stem, result)
    finally:
        con.close()
    return results


# --- Publication: snapshots swapped in one step ---------------------------------------------
#
# A published folder (``data/processed``, or the candidate marts in ``data/interim/marts``) holds
#
#     current.json          the pointer: which generation is current, which was before, its tables
#     gen-<16 hex>/         one generation: every table of one publish as <table>.parquet
#     gen-<16 hex>/         the previous generation, kept for readers still reading it
#
# A generation is named by the SHA-256 of its tables' bytes, so publishing the same content again
# lands on the same name and leaves the folder byte for byte as it was: DVC sees no change and does
# not rerun the stages downstream (a counter would change the folder on every run).

#: The pointer file of a published folder; replaced in one ``os.replace``, never edited in place.
MANIFEST = "current.json"
#: Version of the manifest's layout, written into it so a later layout can tell old folders apart.
MANIFEST_FORMAT = 1
#: How often a reader resolves the pointer again when the generation it resolved was removed before
#: it could open the files (it would take two publishes inside that window of microseconds).
READ_ATTEMPTS = 5
_GENERATION = re.compile(r"gen-[0-9a-f]{16}\Z")
_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_STAGING_PREFIX = ".staging-"
_MANIFEST_TMP_PREFIX = f".{MANIFEST}."


@dataclass(frozen=True)
class Snapshot:
    """Every table of one published generation.

    Attributes
    ----------
    generation
        The generation's name (``gen-`` and 16 hex digits of the SHA-256 of its tables), or None
        for a folder of plain ``<table>.parquet`` files written before snapshots existed, or for a
        folder nothing has been published to.
    tables
        Table name -> DataFrame, in name order.
    """

    generation: str | None
    tables: dict[str, pd.DataFrame]


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    """The folder's manifest, or None when there is none (an older plain folder, or an empty one)."""
    path = directory / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        manifest = json.loads(text)
        generation, tables = manifest["generation"], manifest["tables"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a kneecap snapshot manifest ({exc})") from None
    # the names become paths: a manifest must not point outside its folder
    if not (isinstance(generation, str) and _GENERATION.match(generation)) or not all(
            isinstance(t, str) and _TABLE_NAME.match(t) for t in tables):
        raise ValueError(f"{path}: not a kneecap snapshot manifest (bad generation or table name)")
    return manifest


def _resolve(directory: Path) -> tuple[str | None, dict[str, Path]]:
    """The current generation of ``directory`` and the file of each of its tables."""
    manifest = _read_manifest(directory)
    if manifest is None:
        # an older kneecap wrote plain <table>.parquet files; read them as they are
        return None, {p.stem: p for p in sorted(directory.glob("*.parquet"))}
    generation = str(manifest["generation"])
    return generation, {t: directory / generation / f"{t}.parquet" for t in sorted(manifest["tables"])}


def current_generation(directory: str | os.PathLike[str]) -> str | None:
    """The generation ``directory`` currently publishes (None: no snapshot published there yet).

    Cheap (reads one small file): a cache of the marts can be keyed by it.
    """
    manifest = _read_manifest(Path(directory))
    return None if manifest is None else str(manifest["generation"])


def read_snapshot(directory: str | os.PathLike[str], names: Iterable[str] | None = None) -> Snapshot:
    """Every published table of one generation, e.g. ``read_snapshot("data/processed")``.

    Parameters
    ----------
    directory
        A folder written by :func:`write_tables` (or a plain folder of ``<table>.parquet`` files
        written by an older kneecap).
    names
        The tables wanted; all of the generation's tables when None.

    Returns
    -------
    Snapshot
        The tables and the generation they come from. A folder that does not exist or holds nothing
        gives an empty snapshot when ``names`` is None.

    Raises
    ------
    FileNotFoundError
        A table in ``names`` that the current generation does not have.

    Notes
    -----
    The guarantee a reader gets: all tables returned come from one generation, never some from
    one publish and some from another, and a publish running at the same time never makes a read
    fail. The reader resolves the pointer (:data:`MANIFEST`) once and opens every file of that
    generation before reading any; an open file stays readable even if it is removed afterwards
    (POSIX). A generation stays on disk while it is current and through the next publish, so for
    its files to disappear between resolving the pointer and opening them, two publishes would have
    to finish inside that window; should it happen, the reader resolves the pointer again (at most
    :data:`READ_ATTEMPTS` times) and reads the newer generation whole.
    """
    directory = Path(directory)
    wanted = None if names is None else list(names)
    for attempt in range(READ_ATTEMPTS):
        generation, files = _resolve(directory)
        chosen = files if wanted is None else {}
        for name in wanted or ():
            if name not in files:
                raise FileNotFoundError(f"{directory / name}.parquet: no such mart; run `dvc repro` "
                                        "(or `make run`) first")
            chosen[name] = files[name]
        with contextlib.ExitStack() as stack:
            try:
                handles = {name: stack.enter_context(open(path, "rb")) for name, path in chosen.items()}
            except FileNotFoundError:
                # the generation was cleaned up under us: only a newer pointer explains that
                if attempt + 1 == READ_ATTEMPTS or current_generation(directory) == generation:
                    raise
                continue
            return Snapshot(generation, {name: pd.read_parquet(fh) for name, fh in handles.items()})
    raise AssertionError("unreachable: the last attempt returns or raises")


def read_parquet_dir(directory: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Every table of the current generation in ``directory`` as table name -> DataFrame.

    The same as ``read_snapshot(directory).tables``: all tables come from one publish.
    """
    return read_snapshot(directory).tables


def read_table(directory: str | os.PathLike[str], name: str) -> pd.DataFrame:
    """One published mart, e.g. ``read_table("data/processed", "fct_measurements")``.

    Two calls may straddle a publish and return tables of two generations; a reader that needs
    several marts together calls :func:`read_snapshot` once.
    """
    return read_snapshot(directory, [name]).tables[name]


@contextlib.contextmanager
def _publish_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` while publishing into it.

    Publishers take turns (DVC already runs one stage at a time; this covers a test or a second
    checkout writing the same folder), which makes it safe to sweep leftovers of a crashed
    publish. The lock is an ``flock`` on the folder itself, so it adds no file to a DVC output;
    where ``fcntl`` does not exist (Windows) publishers must not overlap.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _fsync(path: Path) -> None:
    """Flush a file or folder to disk, so that a rename naming it survives a power cut."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _generation_name(staging: Path, names: Iterable[str]) -> str:
    """``gen-`` and 16 hex digits of the SHA-256 over every table's name and bytes."""
    digest = hashlib.sha256()
    for name in sorted(names):
        table_digest = hashlib.sha256((staging / f"{name}.parquet").read_bytes()).digest()
        digest.update(name.encode() + b"\0" + table_digest)
    return f"gen-{digest.hexdigest()[:16]}"


def _write_manifest(directory: Path, generation: str, previous: str | None, names: Iterable[str]) -> None:
    """Swap the pointer: write the new manifest beside the old one and ``os.replace`` it in."""
    body = {"format": MANIFEST_FORMAT, "generation": generation, "previous": previous,
            "tables": sorted(names)}
    # not tempfile.mkstemp: its 0600 mode would hide the pointer from a desk run by another user
    tmp = directory / f"{_MANIFEST_TMP_PREFIX}{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(body, indent=2) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, directory / MANIFEST)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync(directory)


def _sweep(directory: Path, keep: set[str], *, legacy: bool) -> None:
    """Remove what no reader can reach.

    That is generations other than ``keep``, leftovers of crashed publishes and, once a snapshot has replaced them
    (``legacy``), an older kneecap's plain files.

    Only names this module writes are touched; anything else in the folder is left alone.
    """
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink() and (
                (_GENERATION.match(entry.name) and entry.name not in keep)
                or entry.name.startswith(_STAGING_PREFIX)):
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.is_file() and (entry.name.startswith(_MANIFEST_TMP_PREFIX)
                                  or (legacy and entry.suffix == ".parquet")):
            entry.unlink(missing_ok=True)


def write_tables(tables: Mapping[str, pd.DataFrame], directory: str | os.PathLike[str]) -> list[Path]:
    """Publish ``tables`` as the new snapshot of ``directory``, all or nothing, in one step.

    Every table is written to a staging folder inside ``directory``; the staging folder becomes
    the generation ``gen-<sha256>`` (named by the tables' bytes), and then the pointer
    :data:`MANIFEST` is replaced in one ``os.replace``. Readers (:func:`read_snapshot`,
    :func:`read_table`, :func:`read_parquet_dir`) see either the old snapshot or the new one, whole.

    Parameters
    ----------
    tables
        Table name -> DataFrame: the whole snapshot. A table of the previous snapshot that is not
        here is not in the new one.
    directory
        The published folder; created if missing.

    Returns
    -------
    list of Path
        The file of each table in the new generation, in the order of ``tables``.

    Raises
    ------
    ValueError
        A table name that is not an identifier (names become file names).

    Notes
    -----
    A failure before the pointer is swapped (a frame that cannot be written, a full disk) leaves
    the previous snapshot current and untouched. Publishing the same content again changes nothing
    on disk. After the swap the folder keeps the new generation and the one it replaced (a reader
    may still be reading it) and removes older ones, so the folder holds at most two generations
    and is stable between publishes (DVC hashes it once the stage has finished). A folder of plain
    ``<table>.parquet`` files from an older kneecap keeps them as the previous snapshot until the
    next publish.
    """
    bad = [name for name in tables if not _TABLE_NAME.match(name)]
    if bad:
        raise ValueError(f"table names must be identifiers (they name files): {', '.join(map(repr, bad))}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with _publish_lock(directory):
        # staging inside the folder, so the rename into place stays on one file system; not
        # tempfile.mkdtemp, whose 0700 mode the generation would keep (the umask applies here)
        staging = directory / f"{_STAGING_PREFIX}{uuid.uuid4().hex}"
        staging.mkdir()
        orphan: Path | None = None  # a generation renamed into place that no pointer names yet
        try:
            for name, frame in tables.items():
                frame.to_parquet(staging / f"{name}.parquet", index=False)
                _fsync(staging / f"{name}.parquet")
            generation = _generation_name(staging, tables)
            before = _read_manifest(directory) or {}
            current = before.get("generation")
            was = before.get("previous")
            previous = was if isinstance(was, str) else None
            if generation != current:
                target = directory / generation
                # a folder of this name is either the previous generation (content A, then B, then A
                # again: complete and maybe being read, so reuse it) or a leftover of an interrupted
                # sweep (maybe partial, so replace it)
                if target.exists() and generation != previous:
                    shutil.rmtree(target)
                if not target.exists():
                    os.rename(staging, target)
                    _fsync(directory)
                    orphan = target
                previous = None if current is None else str(current)
                _write_manifest(directory, generation, previous, tables)
                orphan = None
            # previous None: the snapshot before was an older kneecap's plain files (or nothing),
            # which stay until a generation of ours is the one replaced
            _sweep(directory, {generation} if previous is None else {generation, previous},
                   legacy=previous is not None)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            if orphan is not None:  # the swap failed: leave the folder as it was
                shutil.rmtree(orphan, ignore_errors=True)
    return [directory / generation / f"{name}.parquet" for name in tables]


def read_decoded_tables(directory: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Decoded SMF/RMF tables under ``directory/<table>/`` (system and month partitions), empty ones for the rest.

    Every table the SQL expects is returned, empty (with its declared columns) when nothing of
    that record type has been ingested, so the SQL runs the same with or without SMF data. The
    rows are read in the files' path order (:func:`kneecap.ingest.store.table_files`); the Spark
    engine reads the same folders as a dataset instead (:func:`kneecap.spark_engine.build_marts`).
    """
    from kneecap.ingest.catalogue import DECODED_TABLES
    from kneecap.ingest.store import table_files

    directory = Path(directory)
    tables: dict[str, pd.DataFrame] = {}
    for name, empty in DECODED_TABLES.items():
        files = table_files(directory / name)
        tables[name] = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True) if files else empty()
    return tables


def marts_inputs(measurements: pd.DataFrame, sources: pd.DataFrame,
                 decoded: Mapping[str, pd.DataFrame] | None = None) -> dict[str, pd.DataFrame]:
    """The SQL's inputs by logical table name: the one place that binds them, for either engine.

    The engines are :func:`build_marts` here and :func:`kneecap.spark_engine.build_marts` on Spark.

    Parameters
    ----------
    measurements, sources
        As :func:`read_reference_dir` returns them (a user's table alone will do).
    decoded
        Decoded tables by name (:func:`read_decoded_tables`); any the SQL reads and this leaves
        out are bound empty, with their declared columns.
    """
    from kneecap.ingest.catalogue import DECODED_TABLES

    given = dict(decoded or {})
    return {"reference_measurements": measurements, "reference_sources": sources,
            **{name: given[name] if name in given else empty() for name, empty in DECODED_TABLES.items()},
            **{name: frame for name, frame in given.items() if name not in DECODED_TABLES}}


def build_marts(measurements: pd.DataFrame, sources: pd.DataFrame,
                decoded: Mapping[str, pd.DataFrame] | None = None, *,
                sql_root: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Every table of the pipeline's SQL from the reference tables and decoded SMF/RMF tables, run in DuckDB.

    Used by the ``build_marts`` stage (unless params.yaml chooses Spark), the desk's and
    ``kneecap check``'s validation of a table, and the tests alike.

    Parameters
    ----------
    measurements, sources, decoded
        As for :func:`marts_inputs`.
    sql_root
        The pipeline's SQL folder (``pipelines/sql``).
    """
    return run_sql_files(sql_files(sql_root), marts_inputs(measurements, sources, decoded))
