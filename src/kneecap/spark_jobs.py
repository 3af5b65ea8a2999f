"""SMF decode and per-workload fits distributed with Spark, running kneecap's own code on the executors.

:func:`ingest_paths` is :func:`kneecap.ingest.smf.ingest_paths` on a cluster: the same folder
layout, tables, quarantine, ``_keys`` and manifest, and the same answer to which input stores a
record seen in several. It runs two passes over the inputs, one Spark task per input:

1. :func:`kneecap.ingest.spark.scan_input` hashes each input and lists its records' content keys;
   the driver skips inputs the manifest already holds (or that came earlier in the same run), and
   works out in input order which keys of each input an earlier or committed input already holds
   (:func:`kneecap.ingest.spark.overlaps`);
2. :func:`kneecap.ingest.spark.decode_input` decodes each input with kneecap's decoders, skipping
   exactly those records, and writes its partitioned tables and keys into the folder.

The driver holds the folder's lock for the whole run and appends the manifest lines, in input
order, once every input is written; inputs left unwritten by a failed run have no manifest line
and are decoded again next time, as with the local ingest. The folder must be on storage every
executor reaches (on ``local[N]``: any local folder).

Inputs are distributed whole, not split into byte ranges: an SMF dump has no sync marker, so a
task starting at an arbitrary offset could only guess where the next record begins (the anchor
scan kneecap uses to resynchronise after damage, which the fuzz campaign showed can be fooled
inside 123 records' segments), and a wrong guess would lose or duplicate records; a gzip input
cannot be entered mid-stream at all. z/OS writes SMF as a dump per system and interval, so the
inputs of a large installation are many files, which is the parallelism this uses.

:func:`train_workloads` is :func:`kneecap.training.train_workloads` with each workload's fits in
a Spark task (``groupBy("workload").applyInPandas``), calling
:func:`kneecap.training.train_workload`; the fitted models return to the driver (pickled), which
logs and registers them in MLflow exactly as for a local run (the ``train`` stage does that part,
unchanged).

This module and :mod:`kneecap.spark_engine` are the only kneecap modules that import pyspark
(``.importlinter``).
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import SparkSession

from kneecap import spark_engine, training
from kneecap.config import Params
from kneecap.ingest import manifest, sniff, store
from kneecap.ingest import spark as tasks
from kneecap.ingest.manifest import FileResult
from kneecap.ingest.smf import CountRow, IngestSummary, summarise

T = TypeVar("T")
R = TypeVar("R")

#: The position of each row in ``fct_measurements``, carried through Spark so a workload's rows reach
#: its fit in the order the local path gives them (a bootstrap draws rows by position).
ROW = "_kneecap_row"


@contextmanager
def _session(spark: SparkSession | None, master: str | None, app_name: str) -> Iterator[SparkSession]:
    """The given or active session, else one started on ``master`` and stopped afterwards."""
    running = spark or SparkSession.getActiveSession()
    if running is not None:
        yield running
        return
    started = spark_engine.session(master, app_name=app_name)
    try:
        yield started
    finally:
        started.stop()


def _map(spark: SparkSession, fn: Callable[[T], R], items: Sequence[T], sizes: Sequence[int]) -> list[R]:
    """``[fn(x) for x in items]``, one Spark task per item, largest first; results in ``items``' order.

    Largest first so that a big input does not start last and leave the other cores idle.
    """
    if not items:
        return []
    order = sorted(range(len(items)), key=lambda i: -sizes[i])
    got = (spark.sparkContext.parallelize([items[i] for i in order], len(items))
           .map(fn).collect())
    out: list[Any] = [None] * len(items)
    for i, result in zip(order, got, strict=True):
        out[i] = result
    return out


def _scan(item: tuple[str, frozenset[str]]) -> tasks.InputScan:
    return tasks.scan_input(*item)


def _decode(item: tuple[str, str, str, np.ndarray, str]) -> tuple[FileResult, list[CountRow], list[dict[str, Any]]]:
    return tasks.decode_input(*item)


def ingest_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
                 out_dir: str | os.PathLike[str], *, codepage: str = "cp037",
                 spark: SparkSession | None = None, master: str | None = None) -> IngestSummary:
    """Decode SMF dumps on Spark into ``out_dir``, as :func:`kneecap.ingest.smf.ingest_paths` does locally.

    Parameters
    ----------
    paths, out_dir, codepage
        As for :func:`kneecap.ingest.smf.ingest_paths`; the paths are passed to the executors
        as given, so on a cluster they must name the same files there.
    spark
        A running session to use; None uses the active one, else starts one on ``master``.
    master
        Spark master URL when this starts the session (:func:`kneecap.spark_engine.session`).

    Returns
    -------
    IngestSummary
        The same per-input results, record counts and quarantine the local ingest returns.
    """
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = [str(p) for p in sniff.expand_paths(paths)]
    sizes = [Path(f).stat().st_size for f in files]
    with _session(spark, master, "kneecap-decode") as session, manifest.locked(out):
        done = manifest.read_manifest(out)
        store.remove_leftovers(out, done)  # what an ingest killed before its commit left
        scans = _map(session, _scan, [(f, frozenset(done)) for f in files], sizes)
        results: dict[int, FileResult] = {}
        todo: list[int] = []
        taken = set(done)
        for i, scan in enumerate(scans):
            if scan.error is not None:
                results[i] = FileResult(files[i], scan.sha256, "failed", bytes=scan.bytes, error=scan.error)
            elif scan.sha256 in taken:  # committed before, or the same bytes earlier in this run
                results[i] = FileResult(files[i], scan.sha256, "skipped", bytes=scan.bytes)
            else:
                taken.add(scan.sha256)
                todo.append(i)
        stored = store.stored_keys(out, done)
        decoded: dict[int, tuple[FileResult, list[CountRow], list[dict[str, Any]]]] = {}
        used: dict[int, np.ndarray] = {}
        while True:
            skips = dict(zip(todo, tasks.overlaps(stored, [_keys(scans[i]) for i in todo]), strict=True))
            # an input fails here only if its framing did not fail in the scan, which reads it the
            # same way; should one, the inputs after it are decoded again without its keys
            again = [i for i in todo if i not in used or not np.array_equal(used[i], skips[i])]
            got = _map(session, _decode, [(files[i], scans[i].sha256, str(out), skips[i], codepage)
                                          for i in again], [sizes[i] for i in again])
            for i, outcome in zip(again, got, strict=True):
                decoded[i], used[i] = outcome, skips[i]
            failed = [i for i in todo if decoded[i][0].status == "failed"]
            if not failed:
                break
            for i in failed:
                results[i] = decoded.pop(i)[0]
                todo.remove(i)
        counts, quarantines = [], []
        for i in todo:  # commit in input order, as the local ingest does
            res, c, q = decoded[i]
            manifest.append_manifest(out, manifest.manifest_entry(res, codepage))
            results[i] = res
            counts.append(c)
            quarantines.append(q)
    return summarise([results[i] for i in range(len(files))], counts, quarantines, time.perf_counter() - t0)


def _keys(scan: tasks.InputScan) -> np.ndarray:
    if scan.keys is None:
        raise ValueError(f"{scan.path}: not scanned for record keys")
    return scan.keys


def _text_for_null(table: pa.Table) -> pa.Table:
    """An all-null column (Arrow's null type, Spark's VOID, which its pandas UDFs refuse) typed as text."""
    for i, f in enumerate(table.schema):
        if pa.types.is_null(f.type):
            table = table.set_column(i, pa.field(f.name, pa.string()), table.column(i).cast(pa.string()))
    return table


def train_workloads(fct: pd.DataFrame, workloads: pd.DataFrame, params: Params, *,
                    spark: SparkSession | None = None, master: str | None = None) -> list[training.TrainedModel]:
    """:func:`kneecap.training.train_workloads` with each workload fitted in a Spark task.

    Each task gets its workload's rows of ``fct`` in their order and with their pandas types
    (:func:`kneecap.training.workload_rows`) and runs :func:`kneecap.training.train_workload`, so
    the fits are the local path's; the models come back pickled, in workload order.

    Parameters
    ----------
    fct, workloads, params
        As for :func:`kneecap.training.train_workloads`.
    spark, master
        As for :func:`ingest_paths`.
    """
    names = sorted(workloads["workload"].unique())
    rows = fct.assign(**{ROW: np.arange(len(fct))})
    rows = rows[rows["workload"].isin(names)]
    columns, dtypes = list(fct.columns), {c: fct[c].dtype for c in fct.columns}

    def fit(group: pd.DataFrame) -> pd.DataFrame:
        rows = training.workload_rows(group, columns, dtypes, order=ROW)
        workload = str(rows["workload"].iloc[0])
        models = list(training.train_workload(workload, rows, params))
        # object, not pandas' Arrow-backed text: pyspark's return conversion takes plain arrays only
        return pd.DataFrame({"workload": pd.Series([workload] * len(models), dtype=object),
                             "position": pd.Series(range(len(models)), dtype="int32"),
                             "model": pd.Series([pickle.dumps(m) for m in models], dtype=object)})

    with _session(spark, master, "kneecap-train") as session:
        frame = session.createDataFrame(_text_for_null(spark_engine.arrow_input(rows)))
        # one task per workload: as many partitions as workloads (the default would be the
        # shuffle setting, which on a cluster may be far more or fewer)
        fitted: pd.DataFrame = (frame.repartition(max(1, len(names)), "workload").groupBy("workload")
                  .applyInPandas(fit, "workload string, position int, model binary")
                                .toPandas())
    fitted = fitted.assign(order=fitted["workload"].map({w: i for i, w in enumerate(names)}))
    fitted = fitted.sort_values(["order", "position"], kind="stable")
    # unpickled here only: the blobs are this job's own executors' output
    return [pickle.loads(blob) for blob in fitted["model"]]
