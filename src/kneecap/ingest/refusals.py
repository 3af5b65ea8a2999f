"""Bundled samples kneecap is meant to refuse, so a refusal of one is not reported as a failure.

A folder of samples may hold inputs that exist to be refused (an RMF DDS error reply, a report
kind kneecap does not read). Such a folder lists them in :data:`LIST_NAME`, one per line, as
``sha256sum`` writes them followed by why::

    702fdbb7...  rmfpp-cpu-error.xml  DDS error reply (GPM0739E), the reader's error path

``kneecap ingest`` and the ``decode_smf`` stage then count such a file as "refused as intended",
not "failed". The match is on the file's SHA-256 and name, so a user's own file of that name
still fails as it should.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["LIST_NAME", "Refusal", "expected_refusal", "parse_refusals"]

#: The list's file name, in the folder of the files it names (a ``.txt``: documentation, never ingested)
LIST_NAME = "EXPECTED-REFUSALS.txt"


@dataclass(frozen=True)
class Refusal:
    """One listed file: its content's SHA-256, its name and why it is refused."""

    sha256: str
    name: str
    why: str


def parse_refusals(text: str) -> dict[tuple[str, str], Refusal]:
    r"""The refusals of a list's text by ``(sha256, name)``; blank lines and ``#`` comments are skipped.

    Examples
    --------
    >>> list(parse_refusals("# samples\n" + "ab" * 32 + "  err.xml  DDS error reply\n").values())[0].why
    'DDS error reply'
    """
    found = {}
    for line in text.splitlines():
        parts = line.split(maxsplit=2)
        if not parts or parts[0].startswith("#") or len(parts) < 2:
            continue
        sha, name = parts[0].lower(), parts[1]
        found[(sha, name)] = Refusal(sha, name, parts[2].strip() if len(parts) > 2 else "")
    return found


def expected_refusal(path: str | Path, sha256: str) -> Refusal | None:
    """The listed refusal of the file at ``path`` with content ``sha256``, or None (then its failure is one)."""
    path = Path(path)
    listing = path.parent / LIST_NAME
    if not sha256 or not listing.is_file():
        return None
    return parse_refusals(listing.read_text(encoding="utf-8")).get((sha256.lower(), path.name))
