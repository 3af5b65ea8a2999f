"""Decoding one input where it is stored: what :mod:`kneecap.spark_jobs` runs on Spark's executors.

An ingest on many machines keeps the local ingest's semantics (:mod:`kneecap.ingest.smf`) in two
passes. The first, :func:`scan_input` per input, hashes it and lists the content keys of its
records; the driver then finds, in input order, which of an input's keys an earlier input or a
committed one already holds (:func:`overlaps`); the second, :func:`decode_input` per input,
decodes with exactly those keys dropped. Each record is therefore stored by the first input that
has it, as one process reading the inputs in order stores it.

This module does not import pyspark: the functions are plain Python, pickled to the executors by
:mod:`kneecap.spark_jobs`, which holds the lock and writes the manifest on the driver.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kneecap.ingest.manifest import FileResult, sha256_file
from kneecap.ingest.smf import CountRow, ingest_one
from kneecap.ingest.store import write_keys
from kneecap.smf import reader
from kneecap.smf.framing import RecordStream, SMFDataError

__all__ = ["InputScan", "decode_input", "overlaps", "scan_input"]


@dataclass(frozen=True)
class InputScan:
    """What the first pass learned of one input.

    ``keys`` holds the content keys of its records in file order, each once (None when the input
    is already committed, or failed: ``error`` says why).
    """

    path: str
    sha256: str
    bytes: int
    keys: np.ndarray | None = None
    error: str | None = None


def scan_input(path: str | os.PathLike[str], committed: frozenset[str] = frozenset()) -> InputScan:
    """Hash one input and list its records' content keys (no decoding, nothing written).

    An input whose SHA-256 is in ``committed`` is not read further; one that is not an SMF dump
    comes back with the :class:`SMFDataError` message in ``error``.
    """
    path = Path(path)
    sha, size = sha256_file(path), path.stat().st_size
    if sha in committed:
        return InputScan(str(path), sha, size)
    keys = reader.RecordKeys()
    try:
        for batch in RecordStream(path).iter_batches():
            reader.keep_mask(batch, keys)  # the check decoding makes: keys of whole-header records
    except SMFDataError as exc:
        return InputScan(str(path), sha, size, error=str(exc))
    return InputScan(str(path), sha, size, np.asarray(keys.added, dtype=np.int64))


def overlaps(stored: list[np.ndarray], scanned: list[np.ndarray]) -> list[np.ndarray]:
    """Per scanned input, in order, its keys that a stored input or an earlier scanned one holds.

    Those are the records its decode must skip for the folder to hold each record once, as the
    local ingest leaves it. Vectorised: one stable sort of every key, so memory is about 24 bytes
    per key.

    Examples
    --------
    >>> a = np.array([1, 2, 3]); b = np.array([3, 4]); c = np.array([4, 5, 1])
    >>> [o.tolist() for o in overlaps([np.array([2])], [a, b, c])]
    [[2], [3], [1, 4]]
    """
    lengths = [len(k) for k in stored] + [len(k) for k in scanned]
    owner = np.repeat(np.r_[np.full(len(stored), -1), np.arange(len(scanned))], lengths)
    keys = np.concatenate([*stored, *scanned]) if sum(lengths) else np.zeros(0, np.int64)
    order = np.argsort(keys, kind="stable")  # stable: among equal keys, the earlier input first
    sorted_keys, sorted_owner = keys[order], owner[order]
    first = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]] if len(keys) else np.zeros(0, bool)
    first_owner = sorted_owner[np.flatnonzero(first)][np.cumsum(first) - 1]
    later = sorted_owner > first_owner
    return [np.sort(sorted_keys[later & (sorted_owner == i)]) for i in range(len(scanned))]


def decode_input(path: str | os.PathLike[str], sha: str, out_dir: str | os.PathLike[str],
                 skip_keys: np.ndarray, codepage: str = "cp037"
                 ) -> tuple[FileResult, list[CountRow], list[dict[str, Any]]]:
    """Decode one input into the folder's layout, skipping the records ``skip_keys`` names.

    Writes its tables and ``_keys/<sha>.npy`` but no manifest line: the caller commits it (holding
    the folder's lock). On one process, the second framing process is not started: an executor
    runs one input per core.

    Returns
    -------
    tuple
        The :class:`FileResult` (``failed`` with the message for an input that is not an SMF
        dump), its record counts and its quarantine rows (:func:`kneecap.ingest.smf.ingest_one`'s).
    """
    path, out = Path(path), Path(out_dir)
    keys = reader.RecordKeys(skip_keys.tolist())
    try:
        res, counts, q = ingest_one(path, sha, out, codepage, None, keys, workers=1)
    except SMFDataError as exc:
        failed = FileResult(str(path), sha, "failed", bytes=path.stat().st_size, error=str(exc))
        return failed, [], []
    write_keys(out, sha, keys.added)
    return res, counts, q
