"""What an input is: the files a name stands for, and which reader each goes to.

``kneecap ingest`` takes files, directories (recursively) or globs (:func:`expand_paths`). XML
documents go to the RMF Postprocessor reader, everything else to the SMF reader (RDW, RECFM=U or
VBS, each optionally gzip: :mod:`kneecap.smf.framing` tells those apart itself); documentation
files that travel with data (``*.md``, ``*.txt``, ``*.json``, licences) are not evidence and are
skipped (:func:`sort_inputs`).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from kneecap.limits import regular_file

__all__ = ["NOT_EVIDENCE", "Inputs", "expand_paths", "is_documentation", "is_gzip", "is_xml", "looks_like_xml",
           "sort_inputs", "total_bytes"]

#: Suffixes of files that travel with data but are not evidence.
NOT_EVIDENCE = frozenset({".md", ".txt", ".json", ".rst", ".html", ".pdf", ".csv"})


class Inputs(NamedTuple):
    """Input files by the reader they go to, each in the order given."""

    documentation: list[Path]
    rmf_xml: list[Path]
    smf: list[Path]


def expand_paths(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files named by ``paths``: files, directories (recursively, hidden files skipped), globs.

    Only regular files are taken: inside a directory or a glob other kinds are passed over, and a
    device or FIFO named itself raises :class:`kneecap.limits.InputError`. Raises FileNotFoundError for
    a name that matches nothing.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[Path] = []
    for p in paths:
        s = os.fspath(p)
        path = Path(s)
        if path.is_dir():
            out.extend(sorted(
                f for f in path.rglob("*")
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(path).parts)
            ))
        elif path.is_file():
            out.append(path)
        elif path.exists():
            regular_file(path)  # raises InputError: a device or FIFO would be read without end
        elif glob.has_magic(s):
            hits = sorted(Path(h) for h in glob.glob(s, recursive=True) if Path(h).is_file())
            if not hits:
                raise FileNotFoundError(f"no files match {s!r}")
            out.extend(hits)
        else:
            raise FileNotFoundError(f"no such file or directory: {s!r}")
    seen: set[Path] = set()
    unique = []
    for f in out:
        r = f.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(f)
    return unique


def is_documentation(path: Path) -> bool:
    """Whether ``path`` is a file that travels with data but is not evidence (READMEs, licences, notes).

    Examples
    --------
    >>> is_documentation(Path("README.md")), is_documentation(Path("LICENSE")), is_documentation(Path("a.smf"))
    (True, True, False)
    """
    return path.suffix.lower() in NOT_EVIDENCE or path.name.upper().startswith("LICENSE")


#: How an XML document can start: a byte-order mark, or ``<?`` / ``<d`` in UTF-16 without one. A
#: re-saved report in UTF-16 is still a report, and goes to the XML reader, whose parser refuses a
#: document type declaration in any encoding (issue 35).
_XML_STARTS = (b"<?xml", b"<ddsml", b"\xef\xbb\xbf<", b"\xff\xfe<\x00", b"\xfe\xff\x00<",
               b"<\x00?\x00", b"\x00<\x00?", b"<\x00d\x00", b"\x00<\x00d")


def looks_like_xml(head: bytes) -> bool:
    r"""Whether the first bytes of a file are those of an XML document, in UTF-8 or UTF-16.

    Examples
    --------
    >>> looks_like_xml(b"<?xml version='1.0'?><ddsml/>"), looks_like_xml("<?xml?>".encode("utf-16"))
    (True, True)
    >>> looks_like_xml(b"\x00\x20\x00\x00\x1e\x46")
    False
    """
    return head.lstrip().startswith(_XML_STARTS)


def is_xml(path: Path) -> bool:
    """Whether ``path`` is an XML document (an RMF Postprocessor or DDS report): by name, else by its first bytes."""
    if path.suffix.lower() == ".xml":
        return True
    with path.open("rb") as fh:
        head = fh.read(64)
    return looks_like_xml(head)


def is_gzip(path: Path) -> bool:
    """Whether ``path`` starts with gzip's magic bytes (its decoded size is unknown until read)."""
    with path.open("rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def sort_inputs(files: Iterable[Path]) -> Inputs:
    """``files`` by the reader they go to; only files that are not documentation are opened (to sniff XML)."""
    files = list(files)
    documentation = [f for f in files if is_documentation(f)]
    rest = [f for f in files if f not in documentation]
    rmf_xml = [f for f in rest if is_xml(f)]
    return Inputs(documentation, rmf_xml, [f for f in rest if f not in rmf_xml])


def total_bytes(files: list[Path]) -> int | None:
    """Bytes the decoders will read: the files' sizes, or None when one is gzip (read decompressed)."""
    total = 0
    for f in files:
        if is_gzip(f):
            return None
        total += f.stat().st_size
    return total
