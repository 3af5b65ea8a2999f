"""Record layouts declared as data: one :class:`Field` per IBM field, one :class:`Layout` per record section.

This is the Stingray-Reader idea: the mapping is a table, the decoder is generic.

A layout is declared once - name, offset, length, format, IBM field name - and compiled to

* a precompiled big-endian :class:`struct.Struct` for decoding one section (``unpack``), and
* a numpy structured dtype for decoding the same section in many records at once
  (``gather`` + ``columns``), which is how the repeated sections of 70.1/72.3 reach disk speed.

Offsets are relative to the start of the section; for the header layout the section starts at
the RDW, so offsets equal IBM's (IBM counts the RDW as offset 0).

Formats
-------
====== ======================================= ============================== ================
fmt    meaning                                 ``unpack`` value               ``columns`` dtype
====== ======================================= ============================== ================
u      unsigned big-endian binary, 1/2/4/8     int                            uint64 / int64
i      signed big-endian binary, 2/4/8         int                            int64
ebcdic EBCDIC text (trailing blanks dropped)   str                            object (str)
packed packed decimal (signed)                 int                            object (int)
hfp    8-byte IBM hexadecimal floating point   float                          float64
stck   8-byte TOD-clock value or duration      int (raw TOD units)            uint64
raw    bytes kept as they are                  bytes                          ``S<n>``
====== ======================================= ============================== ================

Public API (stable)
-------------------
``Field(name, offset, length, fmt, ibm, doc="")``
``Layout(name, fields, *, source)`` with ``size``, ``struct``, ``dtype``,
``unpack(buf, offset=0, *, codepage="cp037") -> dict``,
``gather(u8, positions) -> structured ndarray`` (raw values),
``columns(raw, *, codepage="cp037", names=None) -> dict[str, ndarray]`` (converted),
``field(name) -> Field``, ``require(buf_len, offset, *, what) -> None`` (bounds check raising
:class:`~kneecap.smf.framing.SMFDataError`).

Examples
--------
>>> demo = Layout("demo", [Field("n", 0, 2, "u", "DEMON"), Field("name", 4, 4, "ebcdic", "DEMONM")],
...               source="illustration")
>>> demo.unpack(bytes.fromhex("0007 0000 c3d7 4040"))
{'n': 7, 'name': 'CP'}
>>> u8 = np.frombuffer(bytes.fromhex("0007 0000 c3d7 4040" "0009 0000 c9c9 d740"), np.uint8)
>>> cols = demo.columns(demo.gather(u8, np.array([0, 8])))
>>> cols["n"].tolist(), cols["name"].tolist()
([7, 9], ['CP', 'IIP'])
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kneecap.smf.codecs import ebcdic, ebcdic_array, hfp, hfp_array, packed
from kneecap.smf.framing import SMFDataError

__all__ = ["Field", "Layout", "FORMATS"]

FORMATS = ("u", "i", "ebcdic", "packed", "hfp", "stck", "raw")

_STRUCT_INT = {1: "B", 2: "H", 4: "I", 8: "Q"}
_STRUCT_SINT = {1: "b", 2: "h", 4: "i", 8: "q"}


@dataclass(frozen=True)
class Field:
    """One field of an IBM record mapping.

    Parameters
    ----------
    name : str
        Column name (snake case, unit in the name where there is one).
    offset : int
        Offset from the start of the section (IBM's decimal offset).
    length : int
        Length in bytes.
    fmt : str
        One of :data:`FORMATS`.
    ibm : str
        IBM field name, e.g. ``"R723CCPU"``.
    doc : str
        IBM's description, short.
    """

    name: str
    offset: int
    length: int
    fmt: str
    ibm: str
    doc: str = ""

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise ValueError(f"{self.ibm}: unknown format {self.fmt!r}")
        if self.fmt in ("u", "i") and self.length not in _STRUCT_INT:
            # 3-byte binaries exist (SMF70SER); declare them as raw
            raise ValueError(f"{self.ibm}: binary fields must be 1, 2, 4 or 8 bytes")
        if self.fmt in ("hfp", "stck") and self.length != 8:
            raise ValueError(f"{self.ibm}: {self.fmt} fields are 8 bytes")

    @property
    def end(self) -> int:
        """Offset just past the field."""
        return self.offset + self.length


class Layout:
    """A section mapping: fields in offset order, compiled for struct and numpy decoding.

    Parameters
    ----------
    name : str
        Section name (e.g. ``"SMF72 service/report class period data section"``).
    fields : iterable of Field
        Non-overlapping fields.
    source : str
        Citation of the IBM manual section the offsets come from.
    """

    def __init__(self, name: str, fields: Iterable[Field], *, source: str) -> None:
        self.name = name
        self.source = source
        self.fields: tuple[Field, ...] = tuple(sorted(fields, key=lambda f: f.offset))
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"{name}: duplicate field names")
        pos = 0
        fmt = [">"]
        for f in self.fields:
            if f.offset < pos:
                raise ValueError(f"{name}: field {f.ibm} overlaps the previous field")
            if f.offset > pos:
                fmt.append(f"{f.offset - pos}x")
            if f.fmt == "u":
                fmt.append(_STRUCT_INT[f.length])
            elif f.fmt == "i":
                fmt.append(_STRUCT_SINT[f.length])
            elif f.fmt in ("hfp", "stck"):
                fmt.append("Q")
            else:
                fmt.append(f"{f.length}s")
            pos = f.end
        #: Bytes a section must have for every declared field to be present.
        self.size = pos
        self.struct = struct.Struct("".join(fmt))
        self._by_name = {f.name: f for f in self.fields}
        self._names = tuple(names)
        # fields whose raw struct value needs converting: unpack touches only these
        self._convert = tuple(f for f in self.fields if f.fmt in ("ebcdic", "hfp", "packed"))
        self.dtype = np.dtype(
            {
                "names": names,
                "formats": [self._np_format(f) for f in self.fields],
                "offsets": [f.offset for f in self.fields],
                "itemsize": max(self.size, 1),
            }
        )
        self._cols = np.arange(self.size, dtype=np.int64)

    @staticmethod
    def _np_format(f: Field) -> str:
        if f.fmt == "u":
            return f">u{f.length}"
        if f.fmt == "i":
            return f">i{f.length}"
        if f.fmt in ("hfp", "stck"):
            return ">u8"
        return f"S{f.length}"

    def __repr__(self) -> str:
        return f"Layout({self.name!r}, {len(self.fields)} fields, size={self.size})"

    def field(self, name: str) -> Field:
        """The field called ``name``."""
        return self._by_name[name]

    def require(self, buf_len: int, offset: int, *, what: str | None = None) -> None:
        """Raise :class:`SMFDataError` unless ``size`` bytes from ``offset`` fit in the record."""
        if offset < 0 or offset + self.size > buf_len:
            raise SMFDataError(
                f"{what or self.name} at offset {offset} needs {self.size} bytes but the record "
                f"is {buf_len} bytes long",
                offset=offset,
            )

    def unpack(
        self, buf: bytes | memoryview, offset: int = 0, *, codepage: str = "cp037"
    ) -> dict[str, Any]:
        """Decode one section starting at ``buf[offset]`` into a dict of Python values."""
        self.require(len(buf), offset)
        out: dict[str, Any] = dict(zip(self._names, self.struct.unpack_from(buf, offset),
                                       strict=True))
        for f in self._convert:
            v = out[f.name]
            if f.fmt == "ebcdic":
                out[f.name] = ebcdic(v, codepage)
            elif f.fmt == "hfp":
                out[f.name] = hfp(v.to_bytes(8, "big"))
            else:
                try:
                    out[f.name] = packed(v)
                except SMFDataError as exc:
                    raise SMFDataError(f"{f.ibm}: {exc.reason}", offset=offset + f.offset) from None
        return out

    def gather(self, u8: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Copy the section at each of ``positions`` out of the byte array ``u8``.

        Returns a structured array of raw (unconverted, big-endian) values. The caller must have
        checked that every ``position + size`` lies inside its record; positions past the end
        of ``u8`` are clipped (never an IndexError) so invalid rows can be gathered and masked.
        """
        positions = np.asarray(positions, dtype=np.int64)
        if positions.size == 0:
            return np.zeros(0, dtype=self.dtype)
        if u8.size >= self.size:
            # row copies out of a sliding-window view: a memcpy per section, no index matrix
            win = np.lib.stride_tricks.sliding_window_view(u8, self.size)
            block = win[np.clip(positions, 0, u8.size - self.size)]
        else:
            block = np.take(u8, positions[:, None] + self._cols[None, :], mode="clip")
        return np.ascontiguousarray(block).view(self.dtype).reshape(positions.size)

    def columns(
        self,
        raw: np.ndarray,
        *,
        codepage: str = "cp037",
        names: Sequence[str] | None = None,
    ) -> dict[str, np.ndarray]:
        """Convert gathered raw values to native columns (see the format table above)."""
        out: dict[str, np.ndarray] = {}
        for f in self.fields:
            if names is not None and f.name not in names:
                continue
            v = raw[f.name]
            if f.fmt == "u":
                out[f.name] = v.astype(np.uint64 if f.length == 8 else np.int64)
            elif f.fmt == "i":
                out[f.name] = v.astype(np.int64)
            elif f.fmt == "hfp":
                out[f.name] = hfp_array(v)
            elif f.fmt == "stck":
                out[f.name] = v.astype(np.uint64)
            elif f.fmt == "ebcdic":
                out[f.name] = ebcdic_array(v, codepage)
            elif f.fmt == "packed":
                out[f.name] = np.array(
                    [packed(x.ljust(f.length, b"\x00")) for x in v.tolist()], dtype=object
                )
            else:
                out[f.name] = v
        return out
