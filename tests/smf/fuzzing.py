"""Mutated SMF dumps with a ground truth, and the verdict of kneecap's ingest path on them.

Shared by the property tests (``test_fuzz.py``, hypothesis) and the long campaign
(``benchmarks/fuzz_smf_ingest.py``, ``make fuzz``). A :class:`Dump` is built from known records
(written by ``synth`` and the builders of the type 30 / 123 tests), framed the ways a dump
arrives on Linux (RDW, RDW with VBS segments, BDW blocks, BDW blocks with spanned segments). Every
mutation goes through one of five primitives (:meth:`Dump.flip`, :meth:`Dump.overwrite`,
:meth:`Dump.insert`, :meth:`Dump.delete`, :meth:`Dump.truncate`) that keep track of which
records' bytes it touched, so the records it left *intact* are known exactly. gzip variants are
judged against what ``zlib`` itself can still decompress (:func:`gunzip_prefix`).

:func:`verdict` runs the input through the functions ``kneecap ingest`` uses - the framing
(:class:`~kneecap.smf.framing.RecordStream`), the decoders batch by batch
(:func:`~kneecap.smf.reader.iter_decode`) and the reader's finalisers - and reports

* a **crash**: any exception but :class:`~kneecap.smf.framing.SMFDataError`;
* **records lost**: intact records the framing did not deliver byte for byte (``lost_framing``),
  or delivered but whose decoded rows are missing (``lost_decode``); an ``SMFDataError`` for the
  whole file loses every intact record;
* **bytes unaccounted**: in an RDW file without spanned segments every byte must be in a delivered
  record or a quarantined stretch.

Touch rules (what "intact" means)
---------------------------------
A record's *pieces* are its descriptor + data segments in the file; its *span* runs from its first
piece to its last. Overwriting or flipping a byte touches the record whose piece holds it (a block
descriptor between the segments of a spanned record belongs to no record: kneecap keeps the record
across a damaged BDW). Inserting or deleting bytes touches the record whose span they fall inside
(a spanned record cannot be joined across bytes that were added or removed between its
segments). Cutting the file touches every record that does not end before the cut.
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import itertools
import traceback
import zlib
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import synth

from kneecap.smf import type30, type70, type72, type123
from kneecap.smf.framing import RecordStream, SMFDataError
from kneecap.smf.reader import FINALIZERS, iter_decode

START = dt.datetime(2025, 3, 3)
FRAMINGS = ("rdw", "rdw_seg", "bdw", "vbs")
#: The smallest batch the stream allows: inputs over about 330 KB then cross batch boundaries.
BATCH_BYTES = 65536


# ------------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Rec:
    """A known record and how its decoded rows are recognised.

    ``token`` is (table, column, value): every decoded row of this record, and only its rows,
    carry ``value`` in ``column`` (None for a record type kneecap only counts).
    """

    data: bytes
    token: tuple[str, str, object] | None


def _record_72(n: int) -> Rec:
    t0 = START + dt.timedelta(minutes=15 * (n % 96))
    name = f"K{n:05d}"
    periods = [synth.Period(period=j + 1, ended=100 + n, tcb_s=1.0 + j) for j in range(1 + n % 3)]
    return Rec(synth.record_72_3("SYSA", "PLEX1", t0, 900.0, name, "W", periods),
               (type72.TABLE, "class_name", name))


def _record_70(n: int) -> Rec:
    t0 = START + dt.timedelta(minutes=15 * n)
    cpus = [synth.LogicalCPU("CP" if i % 2 == 0 else "IIP", 900, 100 + i, 700)
            for i in range(2 + n % 6)]
    own = synth.Partition("LPAR1", 1, cpus)
    other = synth.Partition("LPAR2", 2, [synth.LogicalCPU("CP", 900, 300)])
    return Rec(synth.record_70_1("SYSA", "PLEX1", t0, 900.0, [own, other], 1),
               (type70.TABLE, "interval_start_at", t0))


def _record_30(n: int) -> Rec:
    from test_type30 import build30

    job = f"J{n:07d}"
    return Rec(build30(job=job, subtype=2 + n % 2, cpt=1000 + n), (type30.TABLE, "job_name", job))


def _record_123(n: int) -> Rec:
    from test_type123 import build123, request

    ids = [1000 * n + j for j in range(1 + n % 3)]
    rec = build123([request(req_id=i, elapsed_us=1000 + i % 997) for i in ids])
    return Rec(rec, (type123.TABLE, "request_id", f"{ids[0]:016X}"))


def _record_other(n: int) -> Rec:
    return Rec(synth.record_other(99, 1 + n % 5, "SYSA", n=40 + 8 * (n % 50)), None)


def record_pool(n: int = 600) -> list[Rec]:
    """``n`` distinct records: 72.3, 70.1, 30, 123 and a type kneecap only counts, in turn."""
    makers = (_record_72, _record_72, _record_70, _record_30, _record_123, _record_other)
    return [makers[i % len(makers)](i) for i in range(n)]


# ------------------------------------------------------------------------------- framing


def _segments_of(data: bytes, blocked: bool) -> tuple[list[list[tuple[int, int]]], list[tuple[int, int]]]:
    """Pieces of every logical record in a well-formed dump, and its blocks (start, end).

    A complete segment is a record; a first segment opens one that middle and last segments
    extend. A first segment while one is open, or a middle/last one with none open, is left
    out (the records built by :func:`frame` never do that; a duplicated block can).
    """
    recs: list[list[tuple[int, int]]] = []
    blocks: list[tuple[int, int]] = []
    open_: list[tuple[int, int]] | None = None
    p = 0
    while p < len(data):
        if blocked:
            end = p + int.from_bytes(data[p:p + 2], "big")
            blocks.append((p, end))
            q = p + 4
        else:
            end, q = len(data), p
        while q < end:
            n = int.from_bytes(data[q:q + 2], "big")
            code = data[q + 2] & 3
            piece = (q, q + n)
            if code == 0:
                recs.append([piece])
                open_ = None
            elif code == 1:
                open_ = [piece]
            elif open_ is not None:
                open_.append(piece)
                if code == 2:
                    recs.append(open_)
                    open_ = None
            q += n
        p = end
    return recs, blocks


def frame(records: list[bytes], framing: str, blksize: int) -> bytes:
    """``records`` framed as ``framing`` (see :data:`FRAMINGS`) with ``synth``'s writers."""
    if framing == "rdw":
        return synth.frame_rdw(records)
    if framing == "rdw_seg":
        return synth.frame_rdw_segments(records, max_seg=max(blksize // 4, 64))
    return synth.frame_bdw(records, blksize=blksize, spanned=framing == "vbs")


@dataclass
class Placed:
    """A record in the (mutated) input: its pieces there and whether a mutation touched it."""

    rec: Rec
    pieces: list[list[int]]
    touched: bool = False

    @property
    def span(self) -> tuple[int, int]:
        return self.pieces[0][0], self.pieces[-1][1]


@dataclass
class Dump:
    """A dump under mutation: its bytes, where every record sits, and what was done to it."""

    data: bytearray
    placed: list[Placed]
    framing: str
    blocks: list[tuple[int, int]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    gz: bytes | None = None  # the gzip form, when the input is compressed
    # RDW files whose every record is a single piece: there every byte must be accounted for
    accountable: bool = True

    @classmethod
    def build(cls, recs: list[Rec], framing: str, blksize: int = 27998) -> Dump:
        data = frame([r.data for r in recs], framing, blksize)
        pieces, blocks = _segments_of(data, framing in ("bdw", "vbs"))
        assert len(pieces) == len(recs)
        placed = [Placed(r, [list(x) for x in ps]) for r, ps in zip(recs, pieces, strict=True)]
        return cls(bytearray(data), placed, framing, blocks,
                   accountable=framing == "rdw" or (framing == "rdw_seg"
                                                    and all(len(p.pieces) == 1 for p in placed)))

    # -- the five primitives: every mutation is made of these -----------------------------
    def flip(self, pos: int, bit: int) -> None:
        """Flip bit ``bit`` (0 = most significant) of byte ``pos``."""
        pos %= len(self.data)
        self.data[pos] ^= 0x80 >> (bit % 8)
        self._touch_pieces(pos, pos + 1)
        self.log.append(f"flip {pos}.{bit % 8}")

    def overwrite(self, pos: int, chunk: bytes) -> None:
        """Overwrite the bytes from ``pos`` with ``chunk`` (clipped at the end of the input)."""
        pos %= len(self.data)
        chunk = chunk[: len(self.data) - pos]
        self.data[pos:pos + len(chunk)] = chunk
        self._touch_pieces(pos, pos + len(chunk))
        self.log.append(f"overwrite {pos}+{len(chunk)}")

    def insert(self, pos: int, chunk: bytes) -> None:
        """Insert ``chunk`` before byte ``pos`` (``pos == len`` appends)."""
        pos %= len(self.data) + 1
        L = len(chunk)
        self.data[pos:pos] = chunk
        for pl in self.placed:
            s, e = pl.span
            if s < pos < e:
                pl.touched = True
            for pc in pl.pieces:
                if pc[0] >= pos:
                    pc[0] += L
                    pc[1] += L
                elif pc[1] > pos:
                    pc[1] += L
        self.blocks = []  # block positions no longer hold
        self.log.append(f"insert {pos}+{L}")

    def delete(self, pos: int, n: int) -> None:
        """Delete ``n`` bytes from ``pos`` (at least one byte is always left)."""
        pos %= len(self.data)
        end = min(pos + max(n, 1), len(self.data))
        if end - pos >= len(self.data):
            end -= 1
        L = end - pos
        del self.data[pos:end]
        for pl in self.placed:
            s, e = pl.span
            if s < end and pos < e:
                pl.touched = True
            for pc in pl.pieces:
                if pc[0] >= end:
                    pc[0] -= L
                    pc[1] -= L
        self.blocks = []
        self.log.append(f"delete {pos}+{L}")

    def truncate(self, pos: int) -> None:
        """Cut the input before byte ``pos`` (at least one byte is left)."""
        pos = 1 + pos % len(self.data)
        del self.data[pos:]
        for pl in self.placed:
            if pl.span[1] > pos:
                pl.touched = True
        # a block cut short is no block: duplicating one that ran past the cut inserted the rest
        # of the file somewhere else and placed its records where they are not
        self.blocks = [(s, e) for s, e in self.blocks if e <= pos]
        self.log.append(f"truncate {pos}")

    def _touch_pieces(self, a: int, b: int) -> None:
        for pl in self.placed:
            if not pl.touched and any(s < b and a < e for s, e in pl.pieces):
                pl.touched = True

    # -- structure-aware mutations (made of the primitives) ---------------------------------
    def duplicate_record(self, i: int, at: int) -> None:
        """Insert a copy of record ``i``'s pieces at the start of record ``at`` (a record boundary).

        The copy is a record of its own (intact, to be delivered once more by the framing).
        """
        src = self.placed[i % len(self.placed)]
        if src.touched:
            return
        chunk = b"".join(bytes(self.data[s:e]) for s, e in src.pieces)
        dst = self.placed[at % len(self.placed)]
        pos = dst.span[0] if not dst.touched else len(self.data)
        self.insert(pos, chunk)
        self.placed.append(Placed(src.rec, _pieces_in(chunk, pos)))
        self.log.append(f"duplicate record at {pos}")

    def duplicate_block(self, k: int) -> None:
        """Insert a copy of block ``k`` right after it (a tape block read twice).

        The complete records in the copy are records of their own; the copy's pieces of spanned
        records are not records (and a spanned record running across the copy is touched).
        """
        if not self.blocks:
            return
        s, e = self.blocks[k % len(self.blocks)]
        chunk = bytes(self.data[s:e])
        self.insert(e, chunk)
        q = 4
        while q + 4 <= len(chunk):
            n = int.from_bytes(chunk[q:q + 2], "big")
            if n < 4:  # a descriptor an earlier mutation damaged
                break
            if chunk[q + 2] & 3 == 0:
                body = chunk[q:q + n]
                rec = next((pl.rec for pl in self.placed if pl.rec.data == body), None)
                if rec is not None:
                    self.placed.append(Placed(rec, [[e + q, e + q + n]]))
            q += n
        self.log.append(f"duplicate block at {s}")

    def concat(self, other: Dump) -> None:
        """Append another dump (its records become records of this one)."""
        base = len(self.data)
        self.data += other.data
        for pl in other.placed:
            self.placed.append(Placed(pl.rec, [[s + base, e + base] for s, e in pl.pieces],
                                      pl.touched))
        self.blocks = [*self.blocks, *[(s + base, e + base) for s, e in other.blocks]]
        self.accountable = self.accountable and other.accountable
        self.log.append(f"concat {other.framing} {len(other.data)} bytes")

    def descriptor_positions(self) -> list[int]:
        """Byte positions of every BDW, RDW/SDW and SMF header byte (offsets 0-23 of a record)."""
        out = [p for s, _ in self.blocks for p in range(s, s + 4)]
        for pl in self.placed:
            for k, (s, e) in enumerate(pl.pieces):
                out.extend(range(s, min(e, s + (24 if k == 0 else 4))))
        return out

    # -- gzip --------------------------------------------------------------------------------
    def compress(self, members: int = 1, level: int = 6) -> None:
        """gzip the input, split into ``members`` concatenated gzip members."""
        data = bytes(self.data)
        cuts = np.linspace(0, len(data), members + 1).astype(int)
        self.gz = b"".join(gzip.compress(data[a:b], compresslevel=level, mtime=0)
                           for a, b in itertools.pairwise(cuts))
        self.log.append(f"gzip {members} member(s) level {level}")

    def gz_cut(self, pos: int) -> None:
        assert self.gz is not None
        pos = 1 + pos % len(self.gz)
        self.gz = self.gz[:pos]
        self.log.append(f"gzip cut at {pos}")

    def gz_flip(self, pos: int, bit: int) -> None:
        assert self.gz is not None
        b = bytearray(self.gz)
        b[pos % len(b)] ^= 0x80 >> (bit % 8)
        self.gz = bytes(b)
        self.log.append(f"gzip flip {pos % len(b)}.{bit % 8}")

    # -- what goes in, and what must come out ----------------------------------------------
    def input_bytes(self) -> bytes:
        return self.gz if self.gz is not None else bytes(self.data)

    def intact(self) -> list[Placed]:
        """The records the mutations left intact (for gzip: also inside what zlib recovers)."""
        keep = [pl for pl in self.placed if not pl.touched]
        if self.gz is None:
            return keep
        plain = gunzip_prefix(self.gz)
        same = _common_prefix(plain, bytes(self.data))
        return [pl for pl in keep if pl.span[1] <= same]


def _pieces_in(chunk: bytes, pos: int) -> list[list[int]]:
    """Pieces of the descriptor-chained segments in ``chunk``, placed at ``pos``."""
    pieces, q = [], 0
    while q < len(chunk):
        n = max(int.from_bytes(chunk[q:q + 2], "big"), 4)
        pieces.append([pos + q, pos + q + n])
        q += n
    return pieces


def _common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    x = np.frombuffer(a[:n], np.uint8) != np.frombuffer(b[:n], np.uint8)
    return int(np.argmax(x))


def gunzip_prefix(gz: bytes) -> bytes:
    """Everything ``zlib`` decompresses from ``gz`` (concatenated members) before damage or a cut.

    Input is fed in small pieces, and a piece that raises is fed again byte by byte from a copy
    of the decompressor, so the output right up to the damage is kept.
    """
    out: list[bytes] = []
    rest = gz
    while rest:
        d = zlib.decompressobj(31)
        for k in range(0, len(rest), 256):
            piece = rest[k:k + 256]
            before = d.copy()
            try:
                out.append(d.decompress(piece))
            except zlib.error:
                d = before
                for j in range(len(piece)):
                    try:
                        out.append(d.decompress(piece[j:j + 1]))
                    except zlib.error:
                        return b"".join(out)
                    if d.eof:
                        break
                return b"".join(out)
            if d.eof:
                break
        if not d.eof:
            break
        rest = d.unused_data
    return b"".join(out)


# ------------------------------------------------------------------------------- verdict


@dataclass
class Verdict:
    """What kneecap made of one input, judged against the dump's ground truth."""

    intact: int = 0
    lost_framing: int = 0
    lost_decode: int = 0
    crash: str | None = None
    file_error: str | None = None
    unaccounted: int | None = None  # bytes neither delivered nor quarantined (RDW files only)

    @property
    def lost(self) -> int:
        return self.lost_framing + self.lost_decode

    @property
    def ok(self) -> bool:
        return self.crash is None and self.lost == 0 and not self.unaccounted


def _frame_pass(data: bytes, batch_bytes: int) -> tuple[Counter, int, int, bool, str | None]:
    """Delivered records (by content), bytes delivered in place, bytes quarantined, whether any
    record was joined from segments (or segments were dropped), and the framing detected."""
    got: Counter[bytes] = Counter()
    in_place = bad = 0
    joined = False
    stream = RecordStream(io.BytesIO(data), batch_bytes=batch_bytes)
    for batch in stream.iter_batches():
        for i in range(len(batch)):
            r = batch.record(i)
            got[r.data] += 1
            if data[r.offset:r.offset + len(r.data)] == r.data:
                in_place += len(r.data)
            else:
                joined = True
        bad += sum(r.size for r in batch.bad)
    return got, in_place, bad, joined or stream.orphan_segments > 0, stream.framing


def _decode_pass(data: bytes, batch_bytes: int, finalise: bool) -> dict[str, pd.DataFrame]:
    """Tables as ``kneecap ingest`` decodes them: :func:`~kneecap.smf.reader.iter_decode` batch by
    batch, then (with ``finalise``) the reader's finalisers, e.g. the one combining 70.1 records.

    The 70.1 rows are judged in their input form (one row per record and CPU type), so a
    finaliser is run only to see that it does not raise (it costs about twice the decoding).
    """
    parts: dict[str, list[pd.DataFrame]] = {}
    for chunk in iter_decode(io.BytesIO(data), batch_bytes=batch_bytes):
        for tname, df in chunk.tables.items():
            parts.setdefault(tname, []).append(df)
    tables = {t: dfs[0] if len(dfs) == 1 else pd.concat(dfs, ignore_index=True)
              for t, dfs in parts.items()}
    if finalise:
        for (src, fn) in FINALIZERS.values():
            if src in tables:
                fn(tables[src])
    return tables


#: Where each decoded record type leaves its token (see :class:`Rec`).
TOKEN_TABLES = {type72.TABLE: type72.TABLE, type70.TABLE: type70.PARTS_TABLE,
                type30.TABLE: type30.TABLE, type123.TABLE: type123.TABLE}


def _tokens(tables: dict[str, pd.DataFrame]) -> set[tuple[str, str, object]]:
    out: set[tuple[str, str, object]] = set()
    for tname, col in ((type72.TABLE, "class_name"), (type70.TABLE, "interval_start_at"),
                       (type30.TABLE, "job_name"), (type123.TABLE, "request_id")):
        df = tables.get(TOKEN_TABLES[tname])
        if df is not None and len(df) and col in df:
            vals = df[col].tolist()
            if col == "interval_start_at":
                vals = [v.to_pydatetime() if hasattr(v, "to_pydatetime") else v for v in vals]
            out.update((tname, col, v) for v in vals)
    return out


def verdict(dump: Dump, batch_bytes: int = BATCH_BYTES, *, finalise: bool = True) -> Verdict:
    """Run ``dump``'s input through kneecap's framing and decoders and judge the outcome."""
    data = dump.input_bytes()
    intact = dump.intact()
    v = Verdict(intact=len(intact))
    try:
        got, in_place, bad, joined, framing = _frame_pass(data, batch_bytes)
        tables = _decode_pass(data, batch_bytes, finalise)
    except SMFDataError as exc:
        v.file_error = str(exc)
        v.lost_framing = len(intact)
        return v
    except Exception as exc:  # noqa: BLE001 - the point: anything else is a crash
        v.crash = "".join(traceback.format_exception(exc))
        return v
    need = Counter(pl.rec.data for pl in intact)
    delivered = {r for r, n in need.items() if got[r] >= n}
    v.lost_framing = sum(n - min(n, got[r]) for r, n in need.items())
    tokens = _tokens(tables)
    v.lost_decode = len({pl.rec.token for pl in intact
                         if pl.rec.data in delivered and pl.rec.token is not None
                         and pl.rec.token not in tokens})
    if dump.gz is None and dump.accountable and framing == "rdw" and not joined:
        v.unaccounted = len(data) - in_place - bad
    return v


# ------------------------------------------------------------------------------- random inputs

#: Mutation kinds of the campaign, each made of the primitives above.
KINDS = ("bit_flips", "descriptor_flips", "byte_inserts", "byte_deletes", "truncation",
         "duplicates", "zeroed_spans", "garbage_runs", "spliced_fragments", "concatenation",
         "gzip_cut", "gzip_damage", "mixed")
_BYTE_KINDS = KINDS[:9]


def random_dump(rng: np.random.Generator, pool: list[Rec], *, large: bool = False) -> Dump:
    """A clean dump of distinct records from ``pool`` in a random framing and block size."""
    framing = FRAMINGS[int(rng.choice(4, p=[0.35, 0.1, 0.3, 0.25]))]
    n = int(rng.integers(250, 330)) if large else int(rng.integers(3, 31))
    idx = rng.choice(len(pool), size=min(n, len(pool)), replace=False)
    recs = [pool[int(i)] for i in idx]
    longest = max(len(r.data) for r in recs)
    if framing == "bdw":
        blksize = int(rng.integers(longest + 4, 32761))
    else:
        blksize = int(rng.choice([int(rng.integers(200, 4000)), int(rng.integers(4000, 32761))]))
    return Dump.build(recs, framing, blksize)


def _span_len(rng: np.random.Generator, most: int) -> int:
    """A length from 1 to ``most``, short ones far more often (log-uniform)."""
    return max(1, int(np.exp(rng.uniform(0, np.log(max(most, 2))))))


def _mutate(rng: np.random.Generator, d: Dump, kind: str) -> None:
    """Apply 1-4 mutations of ``kind`` (one of the byte-level kinds) to ``d``."""
    n = len(d.data)
    for _ in range(int(rng.integers(1, 5)) if kind != "truncation" else 1):
        n = len(d.data)
        at = int(rng.integers(0, n))
        if kind == "bit_flips":
            d.flip(at, int(rng.integers(0, 8)))
        elif kind == "descriptor_flips":
            pos = d.descriptor_positions()
            d.flip(pos[int(rng.integers(0, len(pos)))] if pos else at, int(rng.integers(0, 8)))
        elif kind == "byte_inserts":
            if rng.random() < 0.3 and d.placed:  # right at a record boundary
                at = d.placed[int(rng.integers(0, len(d.placed)))].span[0]
            d.insert(at, rng.bytes(_span_len(rng, 16)))
        elif kind == "byte_deletes":
            d.delete(at, _span_len(rng, 64))
        elif kind == "truncation":
            d.truncate(at)
        elif kind == "duplicates":
            if d.blocks and rng.random() < 0.6:
                d.duplicate_block(int(rng.integers(0, len(d.blocks))))
            else:
                d.duplicate_record(int(rng.integers(0, 1 << 30)), int(rng.integers(0, 1 << 30)))
        elif kind == "zeroed_spans":
            zeros = bytes(_span_len(rng, 1 << 16))
            (d.insert if rng.random() < 0.5 else d.overwrite)(at, zeros)
        elif kind == "garbage_runs":
            junk = rng.bytes(_span_len(rng, 8192))
            (d.insert if rng.random() < 0.5 else d.overwrite)(at, junk)
        elif kind == "spliced_fragments":  # bytes of the dump itself: real-looking headers
            a = int(rng.integers(0, n))
            frag = bytes(d.data[a:a + _span_len(rng, 4096)])
            (d.insert if rng.random() < 0.7 else d.overwrite)(at, frag)
        else:
            raise ValueError(kind)


def random_input(rng: np.random.Generator, pool: list[Rec], kind: str) -> Dump:
    """One mutated input of ``kind`` (see :data:`KINDS`); 2 % are large enough for several batches."""
    d = random_dump(rng, pool, large=rng.random() < 0.02)
    if kind in _BYTE_KINDS:
        _mutate(rng, d, kind)
    elif kind == "concatenation":
        for _ in range(int(rng.integers(1, 3))):
            # dumps transferred the same way (one framing per file is what kneecap reads: in a
            # file mixing RDW and BDW framing the records next to the block descriptors are lost),
            # sometimes with the same records again, every one of them a duplicate
            recs = [pl.rec for pl in (d if rng.random() < 0.3 else random_dump(rng, pool)).placed]
            other = Dump.build(recs, d.framing, max(27998, max(len(r.data) for r in recs) + 8))
            d.concat(other)
    elif kind in ("gzip_cut", "gzip_damage"):
        if rng.random() < 0.3:
            _mutate(rng, d, str(rng.choice(_BYTE_KINDS)))
        d.compress(members=int(rng.integers(1, 4)), level=int(rng.integers(1, 10)))
        if kind == "gzip_cut":
            d.gz_cut(int(rng.integers(0, len(d.gz))))
        else:
            for _ in range(int(rng.integers(1, 4))):
                d.gz_flip(int(rng.integers(0, len(d.gz))), int(rng.integers(0, 8)))
    elif kind == "mixed":
        for k in rng.choice(_BYTE_KINDS, size=int(rng.integers(2, 5))):
            if len(d.data) > 1:
                _mutate(rng, d, str(k))
        if rng.random() < 0.3:
            d.compress(members=int(rng.integers(1, 3)))
            if rng.random() < 0.5:
                d.gz_cut(int(rng.integers(0, len(d.gz))))
    else:
        raise ValueError(kind)
    return d


#: How the records' last four bytes are left in a plain binary transfer (:func:`plain_input`).
PLAIN_TAILS = ("as_is", "random", "descriptor")


def plain_input(rng: np.random.Generator, pool: list[Rec], tails: str) -> bytes:
    """A plain binary transfer (RDWs stripped) of 1-30 records from ``pool``, often cut or with junk.

    In such a file the four bytes before a record's flag byte are the previous record's last four,
    and framing must not take them for a descriptor it can trust. ``tails``: ``as_is`` leaves the
    records alone (the pool's end in zero bytes, which pass for no descriptor), ``random`` gives
    each 1-8 random last bytes, ``descriptor`` makes every last four bytes ``LL LL 00 00`` with a
    random length 18-32760: a descriptor before every header, the worst case, where a length that
    happens to equal the record's own is indistinguishable from a real descriptor.
    """
    k = int(rng.integers(1, 31))
    recs = [pool[int(j)].data for j in rng.choice(len(pool), size=min(k, len(pool)), replace=False)]
    if tails == "random":
        recs = [r[:-(t := int(rng.integers(1, 9)))] + rng.integers(0, 256, t, dtype=np.uint8).tobytes()
                for r in recs]
    elif tails == "descriptor":
        recs = [r[:-4] + int(rng.integers(18, 32761)).to_bytes(2, "big") + bytes(2) for r in recs]
    elif tails != "as_is":
        raise ValueError(tails)
    data = synth.frame_plain(recs)
    if rng.random() < 0.5:
        data = data[:int(rng.integers(1, len(data) + 1))]
    if rng.random() < 0.3:
        at = int(rng.integers(0, len(data)))
        data = data[:at] + rng.integers(0, 256, int(rng.integers(1, 20)), dtype=np.uint8).tobytes() + data[at:]
    return data
