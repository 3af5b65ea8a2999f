"""SMF decode distributed with Spark, running kneecap's own decoders on the executors.

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

The fits on Spark are :mod:`kneecap.spark_fits`, apart so that the decode (the ``decode_smf``
stage) does not depend on the models. These modules and :mod:`kneecap.spark_engine` are the only
kneecap modules that import pyspark (``.importlinter``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pyspark.sql import SparkSession

from kneecap import spark_engine
from kneecap.ingest import manifest, sniff, store
from kneecap.ingest import spark as tasks
from kneecap.ingest.manifest import FileResult
from kneecap.ingest.smf import CountRow, IngestSummary, summarise

T = TypeVar("T")
R = TypeVar("R")

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
    with spark_engine.session_for(spark, master, "kneecap-decode") as session, manifest.locked(out):
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
