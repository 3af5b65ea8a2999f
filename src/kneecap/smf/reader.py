"""Decode an SMF dump into tables: the decoder registry and :func:`decode_file`.

The reader streams the file in batches (:class:`~kneecap.smf.framing.RecordStream`), counts
every record by (type, subtype), hands each record to the decoder registered for its
(type, subtype) and collects the rows per table. A decoder that finds bad data raises
:class:`~kneecap.smf.framing.SMFDataError`; the reader catches it *per record*, puts the record in
quarantine (file, record number, byte offset, record type, reason) and carries on, so every
intact record around a damaged one is still delivered. Records whose type has no decoder are
counted (``DecodeResult.counts``, ``decoded = False``), never silently dropped.

Duplicates
----------
A record that arrives twice - the same dump copied twice into one file, a record in two
overlapping dumps, the same dump plain and gzipped - is decoded once. Its content key is a
64-bit digest (SHA-1, which has hardware support on current CPUs) of the record after its RDW
(type, subtype, system, interval, class or CPU sections and every other field: all of them), so
the same record framed with RDWs, in blocks
or as spanned segments has one key. Later copies are counted in ``duplicates`` and skipped
before decoding, so a repeated 70.1 cannot add its engines twice. :class:`RecordKeys` carries the
keys seen so far; :mod:`kneecap.ingest.smf` keeps them across files and runs.

Decoder registry
----------------
``DECODERS: dict[tuple[int, int | None], Decoder]`` maps (record type, subtype) to a decoder;
subtype is ``None`` for record types without subtypes (SMFxFLG x'40' off). A decoder is either

* a **record decoder**: a callable ``decoder(record: bytes, *, codepage: str) ->
  Mapping[str, list[dict]]`` returning rows per table name. ``record`` starts with the RDW, so
  IBM offsets index it directly. Raise ``SMFDataError(reason, offset=<offset in record>)`` for
  bad data; or
* a **batch decoder**: an object with ``decode_batch(u8, starts, lengths, *, codepage,
  system_ids) -> (tables, bad)`` where ``tables`` maps table name -> {column: ndarray} and
  ``bad`` lists ``(index, offset in record, reason)`` (see :class:`kneecap.smf.type72.Type72Subtype3`).

``FINALIZERS: dict[str, tuple[str, Callable[[DataFrame], DataFrame]]]`` maps an output table to
(input table, function): the input table is collected for the whole file, then the function
turns it into the output table (70.1 uses this to combine RMF broken records). Tables without a
finaliser are delivered in chunks as they are decoded. ``COLUMN_FINALIZERS`` holds the same
functions for plain columns (``iter_decode(frames=False)``, what ``kneecap ingest`` uses).

Frames or plain columns
-----------------------
:func:`decode_file` and ``iter_decode`` (by default) deliver pandas DataFrames. With
``iter_decode(frames=False)`` a batch decoder's tables stay plain columns (name -> numpy array)
and a record decoder's rows of a table that ``COLUMN_FINALIZERS`` finalises are delivered as
lists per column, so nothing imports pandas (0.35 s, a fifth of ``kneecap ingest``'s time on
a 200 MB dump); any other record decoder's rows still come as a DataFrame. pandas is imported
only where a frame is built.

Other modules register decoders with :func:`register_decoder`, or by defining module-level
``DECODERS`` (and optionally ``FINALIZERS``) dicts in one of the modules named in
:data:`PLUGIN_MODULES` (``kneecap.smf.type30``, ``kneecap.smf.type123``), which the reader
imports on first use if they exist.

References
----------
IBM, *z/OS MVS System Management Facilities (SMF)*, "Standard and extended SMF record headers".
"""

from __future__ import annotations

import importlib
import importlib.util
import multiprocessing
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from kneecap.forks import release_held_signals, signals_held_over_fork
from kneecap.smf import type70, type70_capacity, type72
from kneecap.smf.codecs import ebcdic_array
from kneecap.smf.framing import DECODER_FAILURES, RecordBatch, RecordStream, SMFDataError, distinct_ints
from kneecap.smf.header import FLAG_SUBTYPES, HEADER_LEN, HEADER_LEN_SUBTYPES
from kneecap.smf.record_keys import RecordKeys, record_key, record_keys

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COLUMN_FINALIZERS",
    "DECODERS",
    "FINALIZERS",
    "PLUGIN_MODULES",
    "QUARANTINE_COLUMNS",
    "COUNT_COLUMNS",
    "DecodeResult",
    "counts_frame",
    "quarantine_frame",
    "DecodedChunk",
    "RecordKeys",
    "record_key",
    "record_keys",
    "keep_mask",
    "register_decoder",
    "iter_decode",
    "decode_file",
    "default_workers",
    "StreamFacts",
]

Decoder = Any  # a record decoder callable or a batch decoder object (see module docstring)

DECODERS: dict[tuple[int, int | None], Decoder] = {
    (70, 1): type70.Type70Subtype1(),
    (72, 3): type72.Type72Subtype3(),
}
FINALIZERS: dict[str, tuple[str, Callable[[pd.DataFrame], pd.DataFrame]]] = {
    type70.TABLE: (type70.PARTS_TABLE, type70.finalize),
}
#: The finalisers of :data:`FINALIZERS` for plain columns (lists or arrays per column in, arrays out).
COLUMN_FINALIZERS: dict[str, tuple[str, Callable[[Mapping[str, Any]], dict[str, np.ndarray]]]] = {
    type70.TABLE: (type70.PARTS_TABLE, type70.finalize_columns),
}
#: Modules that may add decoders (written separately); imported if present.
PLUGIN_MODULES: tuple[str, ...] = ("kneecap.smf.type30", "kneecap.smf.type123")
_plugins_loaded = False

QUARANTINE_COLUMNS = ("file", "record_no", "offset", "bytes", "record_type", "reason")
COUNT_COLUMNS = ("record_type", "subtype", "records", "decoded")


def register_decoder(
    record_type: int,
    subtype: int | None,
    decoder: Decoder,
    *,
    finalizers: Mapping[str, tuple[str, Callable[[pd.DataFrame], pd.DataFrame]]] | None = None,
) -> None:
    """Register ``decoder`` for (``record_type``, ``subtype``), replacing any earlier one."""
    if not (callable(decoder) or hasattr(decoder, "decode_batch")):
        raise TypeError("decoder must be callable or have a decode_batch method")
    DECODERS[(int(record_type), None if subtype is None else int(subtype))] = decoder
    if finalizers:
        FINALIZERS.update(finalizers)


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for name in PLUGIN_MODULES:
        try:
            if importlib.util.find_spec(name) is None:
                continue
        except ModuleNotFoundError:
            continue
        mod = importlib.import_module(name)
        for key, dec in getattr(mod, "DECODERS", {}).items():
            DECODERS.setdefault(key, dec)
        for key, fin in getattr(mod, "FINALIZERS", {}).items():
            FINALIZERS.setdefault(key, fin)


@dataclass
class DecodedChunk:
    """Rows decoded from one batch: tables and quarantine rows.

    A table is a DataFrame, or with ``iter_decode(frames=False)`` plain columns (see the module docstring).
    """

    tables: dict[str, Any]
    quarantine: list[dict[str, Any]]
    records: int
    nbytes: int


@dataclass
class DecodeResult:
    """Everything :func:`decode_file` learned from one file.

    Attributes
    ----------
    tables : dict of str to DataFrame
        ``smf70_cpu``, ``smf70_capacity``, ``smf72_workload`` and any plugin tables (always present for the
        built-in decoders, possibly empty).
    counts : DataFrame
        Records by ``record_type``, ``subtype`` with ``decoded`` (a decoder exists).
    quarantine : DataFrame
        ``file, record_no, offset, record_type, reason``; ``offset`` is the absolute byte offset
        of the problem in the (decompressed) file.
    orphan_segments : int
        VBS segments without their first/last companions.
    duplicates : int
        Records skipped because the same record (content key) was already decoded.
    """

    file: str
    framing: str | None
    compressed: bool
    bytes_read: int
    records: int
    orphan_segments: int
    tables: dict[str, pd.DataFrame]
    counts: pd.DataFrame
    quarantine: pd.DataFrame
    duplicates: int = 0

    def __getitem__(self, table: str) -> pd.DataFrame:
        return self.tables[table]

    @property
    def smf70_cpu(self) -> pd.DataFrame:
        """The ``smf70_cpu`` table."""
        return self.tables[type70.TABLE]

    @property
    def smf72_workload(self) -> pd.DataFrame:
        """The ``smf72_workload`` table."""
        return self.tables[type72.TABLE]

    @property
    def unknown(self) -> dict[tuple[int, int | None], int]:
        """Record counts of (type, subtype) without a decoder."""
        import pandas as pd

        c = self.counts[~self.counts["decoded"]]
        return {
            (int(t), None if pd.isna(s) else int(s)): int(n)
            for t, s, n in zip(c["record_type"], c["subtype"], c["records"], strict=True)
        }


class _Counts:
    def __init__(self) -> None:
        self.c: Counter[tuple[int, int]] = Counter()

    def add(self, rty: np.ndarray, sty: np.ndarray) -> None:
        if rty.size == 0:
            return
        key = rty.astype(np.int64) * 100000 + (sty.astype(np.int64) + 1)
        u, n = np.unique(key, return_counts=True)
        for k, m in zip(u.tolist(), n.tolist(), strict=True):
            self.c[(k // 100000, k % 100000 - 1)] += m

    def rows(self) -> list[tuple[int, int | None, int, bool]]:
        """(record_type, subtype or None, records, decoded) by type and subtype, in that order."""
        out = []
        for (t, s), n in sorted(self.c.items()):
            sub = None if s < 0 else s
            out.append((t, sub, n, (t, sub) in DECODERS))
        return out

    def frame(self) -> pd.DataFrame:
        return counts_frame(self.rows())


def counts_frame(rows: Iterable[tuple[int, int | None, int, bool]]) -> pd.DataFrame:
    """(record_type, subtype or None, records, decoded) rows as the record counts frame (:data:`COUNT_COLUMNS`)."""
    import pandas as pd

    df = pd.DataFrame([dict(zip(COUNT_COLUMNS, r, strict=True)) for r in rows], columns=list(COUNT_COLUMNS))
    df["subtype"] = df["subtype"].astype("Int64")
    df["record_type"] = df["record_type"].astype("int64")
    df["records"] = df["records"].astype("int64")
    df["decoded"] = df["decoded"].astype(bool)
    return df


def quarantine_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Quarantine rows (:func:`_quarantine_row`) as a frame of :data:`QUARANTINE_COLUMNS`, integer columns typed."""
    import pandas as pd

    q = pd.DataFrame(rows, columns=list(QUARANTINE_COLUMNS))
    q["record_type"] = q["record_type"].astype("Int64")
    q["record_no"] = q["record_no"].astype("int64")
    q["offset"] = q["offset"].astype("int64")
    q["bytes"] = q["bytes"].astype("int64")
    return q


def _wanted(record_types: Iterable[Any] | None) -> Callable[[int, int | None], bool]:
    if record_types is None:
        return lambda t, s: True
    types: set[int] = set()
    pairs: set[tuple[int, int | None]] = set()
    for x in record_types:
        if isinstance(x, tuple):
            pairs.add((int(x[0]), None if x[1] is None else int(x[1])))
        else:
            types.add(int(x))
    return lambda t, s: t in types or (t, s) in pairs


def _quarantine_row(name: str, record_no: int, offset: int, nbytes: int, rtype: int | None,
                    reason: str) -> dict[str, Any]:
    return {"file": name, "record_no": int(record_no), "offset": int(offset), "bytes": int(nbytes),
            "record_type": None if rtype is None else int(rtype), "reason": reason}


def _header_codes(batch: RecordBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                np.ndarray]:
    """(u8, record type, subtype or -1, too short for the header, too short for SMFxSTY)."""
    u8 = np.frombuffer(batch.buf, dtype=np.uint8)
    starts, lengths = batch.starts, batch.lengths
    short = lengths < HEADER_LEN
    flag = u8[np.minimum(starts + 4, u8.size - 1)]
    rty = u8[np.minimum(starts + 5, u8.size - 1)].astype(np.int64)
    has_sub = (flag & FLAG_SUBTYPES) != 0
    short_sub = has_sub & (lengths < HEADER_LEN_SUBTYPES)
    s22 = np.minimum(starts + 22, u8.size - 2)
    sty = np.where(has_sub & ~short_sub,
                   (u8[s22].astype(np.int64) << 8) | u8[s22 + 1], -1)
    return u8, rty, sty, short, short_sub


def keep_mask(batch: RecordBatch, keys: RecordKeys | None) -> np.ndarray:
    """The records of ``batch`` to decode.

    They are those with a whole SMF header and, with ``keys``, a content key not seen before (``keys`` remembers the
    new ones and counts the duplicates).

    Records are offered to ``keys`` in file order, so of two copies the first is kept.
    """
    if len(batch) == 0:
        return np.zeros(0, dtype=bool)
    _, _, _, short, short_sub = _header_codes(batch)
    return _drop_seen(batch, ~(short | short_sub), keys)


def _drop_seen(batch: RecordBatch, ok: np.ndarray, keys: RecordKeys | None) -> np.ndarray:
    """``ok`` (records with a whole header) less those whose content key ``keys`` has seen."""
    if keys is not None and ok.any():
        idx_ok = np.flatnonzero(ok)
        ok[idx_ok[~keys.keep(batch.buf, batch.starts[idx_ok], batch.lengths[idx_ok])]] = False
    return ok


def _decode_batch(
    batch: RecordBatch,
    name: str,
    counts: _Counts,
    wanted: Callable[[int, int | None], bool],
    codepage: str,
    keys: RecordKeys | None = None,
    keep: np.ndarray | None = None,
    frames: bool = True,
) -> DecodedChunk:
    """Decode one batch.

    ``keep`` (from :func:`keep_mask`, e.g. computed in the framing process) replaces the duplicate check with
    ``keys``; ``frames`` False delivers plain columns (see the module docstring).
    """
    quarantine: list[dict[str, Any]] = []
    for r in batch.bad:
        # a damaged stretch has no trustworthy record type
        quarantine.append(_quarantine_row(name, r.record_no, r.offset, r.size, None, r.error or ""))
    tables: dict[str, list[Any]] = {}
    n = len(batch)
    if n == 0:
        return DecodedChunk({}, quarantine, len(batch.bad), batch.nbytes)
    u8, rty, sty, short, short_sub = _header_codes(batch)
    starts, lengths = batch.starts, batch.lengths
    bad_hdr = short | short_sub
    for i in np.flatnonzero(bad_hdr).tolist():
        why = ("record shorter than the 18-byte SMF header" if short[i]
               else "SMFxFLG says subtypes are used but the record ends before SMFxSTY")
        quarantine.append(_quarantine_row(name, batch.record_no[i], batch.file_offsets[i],
                                          lengths[i], int(rty[i]) if lengths[i] > 5 else None,
                                          why))
    ok = keep.copy() if keep is not None else _drop_seen(batch, ~bad_hdr, keys)
    counts.add(rty[ok], sty[ok])
    key = rty * 100000 + (sty + 1)
    key[~ok] = -1
    for k in distinct_ints(key[ok]).tolist():
        t, s = k // 100000, k % 100000 - 1
        sub = None if s < 0 else s
        dec = DECODERS.get((t, sub))
        if dec is None or not wanted(t, sub):
            continue
        idx = np.flatnonzero(key == k)
        if hasattr(dec, "decode_batch"):
            sids = ebcdic_array(
                np.take(u8, (starts[idx] + 14)[:, None] + np.arange(4), mode="clip")
                .view("S4").reshape(-1), codepage)
            out, bad = dec.decode_batch(u8, starts[idx], lengths[idx], codepage=codepage,
                                        system_ids=sids)
            for j, off, why in bad:
                bad_i = int(idx[j])
                quarantine.append(_quarantine_row(
                    name, batch.record_no[bad_i], batch.file_offsets[bad_i] + off, lengths[bad_i], t,
                    f"type {t}.{sub}: {why}"))
            for tname, cols in out.items():
                if not frames:
                    if cols and len(next(iter(cols.values()))):
                        tables.setdefault(tname, []).append(dict(cols))
                    continue
                import pandas as pd

                df = pd.DataFrame(cols)
                if len(df):
                    tables.setdefault(tname, []).append(df)
        else:
            rows: dict[str, list[dict[str, Any]]] = {}
            for i in idx.tolist():
                s0 = int(starts[i])
                rec = batch.buf[s0 : s0 + int(lengths[i])]
                try:
                    got = dec(rec, codepage=codepage)
                except SMFDataError as exc:
                    off = exc.offset if exc.offset is not None else 0
                    quarantine.append(_quarantine_row(
                        name, batch.record_no[i], batch.file_offsets[i] + off, lengths[i], t,
                        f"type {t}.{sub}: {exc.reason}"))
                    continue
                except DECODER_FAILURES as exc:
                    # a decoder bug on odd data must not lose the rest of the file either
                    quarantine.append(_quarantine_row(
                        name, batch.record_no[i], batch.file_offsets[i], lengths[i], t,
                        f"type {t}.{sub}: decoder failed: {exc!r}"))
                    continue
                for tname, trows in got.items():
                    rows.setdefault(tname, []).extend(trows)
            column_finalised = {src for src, _ in COLUMN_FINALIZERS.values()}
            for tname, trows in rows.items():
                if not trows:
                    continue
                if not frames and tname in column_finalised:
                    tables.setdefault(tname, []).append(_row_lists(trows))
                    continue
                import pandas as pd

                tables.setdefault(tname, []).append(pd.DataFrame(trows))
    merged = {k: (v[0] if len(v) == 1 else concat_tables(v)) for k, v in tables.items()}
    return DecodedChunk(merged, quarantine, n + len(batch.bad), batch.nbytes)


def _row_lists(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """A record decoder's rows as one list per column (the first row's keys; a key a row lacks is None)."""
    return {c: [r.get(c) for r in rows] for c in rows[0]}


def concat_tables(parts: list[Any]) -> Any:
    """Parts of one table, in order, as one: DataFrames concatenated, or plain columns joined column by column.

    Plain columns are numpy arrays (joined with :func:`numpy.concatenate`) or lists (joined as lists); all parts are
    of one kind, as :func:`iter_decode` delivers a table either as frames or as columns.
    """
    if not isinstance(parts[0], Mapping):
        import pandas as pd

        return pd.concat(parts, ignore_index=True)
    out: dict[str, Any] = {}
    for c, first in parts[0].items():
        if isinstance(first, list):
            out[c] = [v for p in parts for v in p[c]]
        else:
            out[c] = np.concatenate([p[c] for p in parts])
    return out


def default_workers() -> int:
    """Processes :func:`iter_decode` uses by default.

    It is 2 where there are two CPUs to run them and ``fork`` to start the second cheaply (it inherits the loaded
    modules and the keys), else 1.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return 2 if cpus >= 2 and "fork" in multiprocessing.get_all_start_methods() else 1


@dataclass
class StreamFacts:
    """What a :class:`RecordStream` run in the framing process learned (its attributes of the same names).

    It is filled in when the input has been read to its end.
    """

    name: str
    framing: str | None = None
    compressed: bool = False
    bytes_read: int = 0
    records: int = 0
    orphan_segments: int = 0


_FACTS = ("framing", "compressed", "bytes_read", "records", "orphan_segments")


#: prctl(2) option: the signal the calling process gets when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """In a forked child: be killed when ``parent`` dies, and end now if it already has.

    On Linux the kernel sends SIGKILL at the parent's death (``prctl(PR_SET_PDEATHSIG)``): a child
    outliving a killed ``kneecap ingest`` would frame the rest of a dump nobody reads. The
    parent may have died before the call, so its pid is checked after it. Elsewhere the closed
    pipe ends the child at its next send instead (:func:`_frame_in_child`).
    """
    if sys.platform.startswith("linux"):
        import ctypes  # here: only a framing process needs it

        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl in this C library: the pipe still ends the child
    if os.getppid() != parent:
        os._exit(0)


def _frame_in_child(conn: Any, source: str | os.PathLike[str], name: str, batch_bytes: int,
                    keys: RecordKeys, parent_end: Any = None, parent: int | None = None) -> None:
    """The framing process: read and frame ``source``, check duplicates, send every batch.

    It first lets go of what it inherited from the parent and does not need: ``parent_end``, the
    pipe's read end (held here, it would keep the pipe open after the parent died, and a send
    would block for ever instead of failing), and the parent's SIGTERM handler (a terminated child
    just ends); the ingest lock's descriptor is closed by the fork itself
    (:mod:`kneecap.ingest.manifest`). Then it ties its life to ``parent``'s (:func:`_die_with_parent`).

    Messages, in file order: ``("batch", starts, lengths, record_no, file_offsets, bad, nbytes,
    keep, file_span, tail)``, followed by the buffer as raw bytes unless ``file_span`` says
    where in the file it is (``tail``: the bytes after that, reassembled spanned records); then
    ``("end", facts, new keys, duplicates)``, or ``("error", reason, file, record_no, offset)``
    for an :class:`SMFDataError`. The pipe
    holds one batch at a time, so this process frames the next batch while the parent decodes
    the last one and never runs further ahead (memory stays bounded).
    """
    if parent_end is not None:
        parent_end.close()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    release_held_signals()  # held while the parent forked (kneecap.forks)
    if parent is not None:
        _die_with_parent(parent)
    added0, dups0 = len(keys.added), keys.duplicates
    try:
        stream = RecordStream(source, name=name, batch_bytes=batch_bytes)
        for b in stream.iter_batches():
            keep = keep_mask(b, keys)
            # an uncompressed file's bytes the parent reads itself (page cache, one copy): a
            # pipe moves 200 MB in 64 KiB turns, which costs as much as framing them
            tail = b.buf[b.file_span[1]:] if b.file_span is not None else None
            conn.send(("batch", b.starts, b.lengths, b.record_no, b.file_offsets, b.bad, b.nbytes,
                       keep, b.file_span, tail))
            if b.file_span is None:
                conn.send_bytes(b.buf)
        conn.send(("end", {k: getattr(stream, k) for k in _FACTS},
                   np.asarray(keys.added[added0:], dtype=np.int64), keys.duplicates - dups0))
    except SMFDataError as exc:
        conn.send(("error", exc.reason, exc.file, exc.record_no, exc.offset))
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the parent has stopped listening (an error there, or Ctrl-C): nothing to tell
    except Exception as exc:  # a bug: say what it was rather than die silently
        conn.send(("crash", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _batches_from_child(source: str | os.PathLike[str], name: str, batch_bytes: int,
                        keys: RecordKeys, facts: StreamFacts
                        ) -> Iterator[tuple[RecordBatch, np.ndarray]]:
    """(batch, keep mask) pairs framed by a forked framing process (:func:`_frame_in_child`)."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_frame_in_child, args=(send, source, name, batch_bytes, keys, recv, os.getpid()),
                       name="kneecap-smf-framing", daemon=True)
    with signals_held_over_fork():
        proc.start()
    send.close()  # the child holds the only write end: its exit ends the pipe
    fh = open(source, "rb")  # noqa: SIM115 - closed below; batches the child read from the file
    try:
        while True:
            try:
                msg = recv.recv()
            except EOFError:
                raise RuntimeError(f"{name}: the SMF framing process ended without a result "
                                   f"(exit code {proc.exitcode})") from None
            if msg[0] == "batch":
                span, tail = msg[8], msg[9]
                if span is None:
                    buf = recv.recv_bytes()
                else:
                    buf = os.pread(fh.fileno(), span[1], span[0])
                    if len(buf) != span[1]:
                        raise SMFDataError("the file got shorter while it was being read",
                                           file=name, offset=span[0] + len(buf))
                    if tail:
                        buf += tail
                yield RecordBatch(buf=buf, starts=msg[1], lengths=msg[2], record_no=msg[3],
                                  file_offsets=msg[4], bad=msg[5], nbytes=msg[6],
                                  file_span=span), msg[7]
            elif msg[0] == "end":
                for k, v in msg[1].items():
                    setattr(facts, k, v)
                keys.absorb(msg[2].tolist(), msg[3])
                return
            elif msg[0] == "error":
                raise SMFDataError(msg[1], file=msg[2], record_no=msg[3], offset=msg[4])
            else:
                raise RuntimeError(f"{name}: the SMF framing process failed: {msg[1]}")
    finally:
        recv.close()
        fh.close()
        if proc.is_alive():
            proc.terminate()  # stopped early (an error here, or the caller closed the iterator)
        proc.join()


def iter_decode(
    source: str | os.PathLike[str] | IO[bytes],
    *,
    codepage: str = "cp037",
    record_types: Iterable[Any] | None = None,
    batch_bytes: int = 8 << 20,
    name: str | None = None,
    stream_out: dict[str, Any] | None = None,
    keys: RecordKeys | None = None,
    workers: int = 1,
    frames: bool = True,
) -> Iterator[DecodedChunk]:
    """Decode ``source`` batch by batch (memory bounded by ``batch_bytes``).

    Yields :class:`DecodedChunk` objects. Tables that have a finaliser are yielded in their
    *input* form (e.g. ``smf70_cpu_parts``); :func:`decode_file` and
    :mod:`kneecap.ingest.smf` apply the finalisers. ``stream_out`` (a dict), if given, receives
    ``stream`` (the :class:`RecordStream`, or with two workers a :class:`StreamFacts` filled in
    at the end), ``counts`` and ``keys`` for statistics. ``keys`` (default: a fresh
    :class:`RecordKeys`) skips records whose content key was seen before.

    With ``workers=2`` and ``source`` a path, a forked process reads, frames and checks
    duplicates (the order-dependent part) one batch ahead while this one decodes: the same
    chunks, in the same order, on two CPUs. Anything else (a file object, no ``fork``, a
    daemonic process) decodes in this process. ``frames`` False delivers plain columns instead of
    DataFrames (see the module docstring).
    """
    _load_plugins()
    counts = _Counts()
    keys = RecordKeys() if keys is None else keys
    wanted = _wanted(record_types)
    # the file a forked process frames, or None to frame here (a path only; a daemonic process,
    # e.g. a multiprocessing.Pool worker, may not start one of its own)
    framed_apart = (source if isinstance(source, (str, os.PathLike)) and workers >= 2
                    and "fork" in multiprocessing.get_all_start_methods()
                    and not multiprocessing.current_process().daemon else None)
    stream_out = {} if stream_out is None else stream_out
    stream_out["counts"] = counts
    stream_out["keys"] = keys
    if framed_apart is not None:
        facts = stream_out["stream"] = StreamFacts(name if name is not None else os.fspath(framed_apart))
        for batch, keep in _batches_from_child(framed_apart, facts.name, batch_bytes, keys, facts):
            yield _decode_batch(batch, facts.name, counts, wanted, codepage, keep=keep, frames=frames)
        return
    stream = stream_out["stream"] = RecordStream(source, name=name, batch_bytes=batch_bytes)
    for batch in stream.iter_batches():
        yield _decode_batch(batch, stream.name, counts, wanted, codepage, keys, frames=frames)


def _empty_table(tname: str) -> pd.DataFrame:
    import pandas as pd

    if tname == type72.TABLE:
        return pd.DataFrame({c: pd.Series(dtype="float64") for c in type72.COLUMNS})
    if tname == type70.TABLE:
        return type70.finalize(pd.DataFrame())
    if tname == type70_capacity.TABLE:
        return pd.DataFrame(type70_capacity.empty_columns())
    return pd.DataFrame()


def decode_file(
    path: str | os.PathLike[str] | IO[bytes],
    *,
    codepage: str = "cp037",
    record_types: Iterable[Any] | None = None,
    batch_bytes: int = 8 << 20,
    workers: int = 1,
) -> DecodeResult:
    """Decode an SMF dump to DataFrames.

    Parameters
    ----------
    path : path or binary file object
        RDW- or BDW-framed dump, optionally gzip-compressed (auto-detected).
    codepage : str
        EBCDIC code page of the text fields: ``cp037`` (default), ``cp1047`` or ``cp500``.
    record_types : iterable, optional
        Decode only these record types (ints) or (type, subtype) pairs; everything is still
        counted.
    batch_bytes : int
        Input bytes per batch.
    workers : int
        2 to frame in a second process while this one decodes (see :func:`iter_decode`).

    Returns
    -------
    DecodeResult
        A record that occurs twice in the file is decoded once (``duplicates`` counts the
        copies skipped).

    Raises
    ------
    SMFDataError
        Only when the file as a whole is unusable (empty, or no record/block descriptor words -
        the message explains how to re-transfer it). Damage inside a usable file goes to
        ``DecodeResult.quarantine``.
    """
    import pandas as pd

    side: dict[str, Any] = {}
    parts: dict[str, list[pd.DataFrame]] = {}
    quarantine: list[dict[str, Any]] = []
    for chunk in iter_decode(path, codepage=codepage, record_types=record_types,
                             batch_bytes=batch_bytes, stream_out=side, workers=workers):
        quarantine.extend(chunk.quarantine)
        for tname, df in chunk.tables.items():
            parts.setdefault(tname, []).append(df)
    stream: RecordStream | StreamFacts = side["stream"]
    tables: dict[str, pd.DataFrame] = {}
    for tname, dfs in parts.items():
        tables[tname] = dfs[0] if len(dfs) == 1 else pd.concat(dfs, ignore_index=True)
    for out_name, (in_name, fn) in FINALIZERS.items():
        if in_name in tables:
            tables[out_name] = fn(tables.pop(in_name))
    for tname in (type70.TABLE, type70_capacity.TABLE, type72.TABLE):
        tables.setdefault(tname, _empty_table(tname))
    q = quarantine_frame(quarantine)
    return DecodeResult(
        file=stream.name,
        framing=stream.framing,
        compressed=stream.compressed,
        bytes_read=stream.bytes_read,
        records=stream.records,
        orphan_segments=stream.orphan_segments,
        tables=tables,
        counts=side["counts"].frame(),
        quarantine=q.sort_values("record_no", kind="stable").reset_index(drop=True),
        duplicates=side["keys"].duplicates,
    )
