"""The reference data kneecap ships, apart from tables a user adds beside it (``kneecap add-table``).

``data/reference/MANIFEST`` lists the bundled files; the tests that check the bundled data or train
on it read these, so a project where the README's own-data steps were followed stays green.
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pandas as pd

from kneecap import warehouse

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
RAW = REFERENCE.parent / "raw"
#: what kneecap ships under data/raw (the RMF samples and the folder's README); a user's dumps go
#: to data/raw/ingested (kneecap ingest) or beside these, and stay out of the tests
BUNDLED_RAW = ("README.md", "rmf-samples")


def read_bundled() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The bundled measurement tables and their ``sources.csv`` rows (:func:`kneecap.warehouse.read_reference_dir`)."""
    return warehouse.read_reference_dir(REFERENCE, only=warehouse.bundled_tables(REFERENCE))


def bundled_reference(target: Path) -> Path:
    """A copy of the files of data/reference its MANIFEST lists, as kneecap ships them.

    A table the user added to the project (``kneecap add-table``) is left out, and so is its row in
    ``sources.csv``; the bundled rows are copied byte for byte.
    """
    target.mkdir(parents=True)
    bundled = set(warehouse.bundled_tables(REFERENCE))
    for name in (*warehouse.read_manifest(REFERENCE), warehouse.MANIFEST_NAME):
        shutil.copy2(REFERENCE / name, target / name)
    lines = (REFERENCE / "sources.csv").read_bytes().decode("utf-8").splitlines(keepends=True)
    # one record a line (no cell spans lines), so a row is dropped by dropping its line
    records = list(csv.reader(io.StringIO("".join(lines), newline="")))
    assert len(records) == len(lines), "sources.csv has a cell spanning lines"
    kept = [line for i, (line, record) in enumerate(zip(lines, records)) if i == 0 or record[0] in bundled]
    (target / "sources.csv").write_bytes("".join(kept).encode("utf-8"))
    return target


def bundled_raw(target: Path) -> Path:
    """A copy of data/raw as kneecap ships it (:data:`BUNDLED_RAW`), without the SMF a user added."""
    target.mkdir(parents=True)
    for name in BUNDLED_RAW:
        src = RAW / name
        if src.is_dir():
            shutil.copytree(src, target / name)
        else:
            shutil.copy2(src, target / name)
    return target
