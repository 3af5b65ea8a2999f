"""``kneecap check``: measurement tables held to the one contract and the gate's rules, before adding them.

What the command prints, table by table and row by row (``path:line: column: problem``), and its
exit status; :func:`kneecap.tables.validate_measurements` decides, this module only reads and says.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from kneecap import tables, warehouse
from kneecap.limits import InputError, regular_file


def check_tables(paths: Sequence[str], *, reference: Path, fill: Mapping[str, float], sql_root: Path,
                 config: Any) -> int:
    """Each table against the one contract, then all of them at once against the gate's rules.

    ``fill``: the setup options (GCPs, zIIPs, think time) filling the cells the rows leave empty, as
    ``add-table`` fills them, so a table checked with the options ``add-table`` will get is held to
    the rules it will be held to there. ``reference``: the project's reference folder (a table in it
    must have its row in ``sources.csv``). Returns the exit status: 0 every table passes, 1 a table
    or row breaks a rule (named on stderr), 2 a wrong request (a missing file, a FIFO, a bad option).
    """
    sources = None
    if (reference / "sources.csv").exists():
        try:
            sources = warehouse.read_sources_csv(reference / "sources.csv")
        except (warehouse.ReferenceDataError, ValueError) as exc:
            print(f"{reference / 'sources.csv'}: {exc}", file=sys.stderr)
            return 1
    # a missing file is a wrong request (exit 2, as for every command), and so is a FIFO or a device
    # (`check /dev/zero` read without end): said for every such name before any table is read
    unreadable = False
    for path in paths:
        try:
            regular_file(path)
        except FileNotFoundError:
            print(f"check: {path}: no such file", file=sys.stderr)
            unreadable = True
        except (InputError, OSError) as exc:
            print(f"check: {exc}", file=sys.stderr)
            unreadable = True
    if unreadable:
        return 2
    status, frames, path_of = 0, [], {}
    for path in paths:
        p = Path(path)
        if p.name == "sources.csv":
            try:
                print(f"{path}: ok, {len(warehouse.read_sources_csv(p))} sources")
            except (warehouse.ReferenceDataError, ValueError, OSError) as exc:
                print(f"{path}: {exc}", file=sys.stderr)
                status = 1
            continue
        if p.name in warehouse.REFERENCE_OTHER_FILES:
            print(f"{path}: not a measurement table (kneecap.warehouse.REFERENCE_OTHER_FILES), skipped")
            continue
        try:
            frame = tables.fill_setup(warehouse.read_measurement_csv(p), fill, p)
        except (warehouse.ReferenceDataError, OSError) as exc:
            print(exc, file=sys.stderr)
            status = 1
            continue
        except tables.TableError as exc:  # an option's value the contract refuses: the request is wrong
            print(f"check: {exc}", file=sys.stderr)
            return 2
        if p.resolve().parent == reference.resolve():  # in the project: the pipeline's own demands
            if sources is None or p.stem not in set(sources["source_id"]):
                print(f"{path}:1: source_id: table {p.stem!r} has no row in sources.csv; "
                      "`kneecap add-table` puts a table in place with its row", file=sys.stderr)
                status = 1
            for line in frame.loc[frame["source_id"] != p.stem, "source_line"]:
                print(f"{path}:{line}: source_id: must equal the file stem {p.stem!r}", file=sys.stderr)
                status = 1
        for line, first in tables.duplicate_rows(frame):
            print(f"{path}:{line}: (row): repeats line {first} exactly; a measurement given twice weighs twice "
                  "in every fit: remove one", file=sys.stderr)
            status = 1
        frames.append(frame.assign(source_id=frame["source_id"].where(frame["source_id"].notna(), p.stem)))
        path_of[str(frames[-1]["source_id"].iloc[0])] = path
    if not frames:
        return status
    # one pass of the gate over every table: great_expectations costs seconds per run, not per table
    result = tables.validate_measurements(pd.concat(frames, ignore_index=True), sources=sources,
                                          sql_root=sql_root, config=config)
    for frame in frames:
        source_id = str(frame["source_id"].iloc[0])
        path = path_of[source_id]
        mine = tables.MeasurementCheck(len(frame), result.n_expectations,
                                       result.problems[result.problems["source_id"] == source_id])
        for line in mine.lines(path):
            print(line, file=sys.stderr)
        given = (" (" + ", ".join(f"{column} {value:g}" for column, value in fill.items())
                 + " where rows do not say)") if fill else ""
        if mine.ok:
            print(f"{path}: ok, {len(frame)} rows{given}")
        else:
            status = 1
            bad = mine.problems["point_id"].nunique()
            rest = "the others" if bad < len(frame) else "nothing of this table"
            print(f"{path}: {bad} of {len(frame)} rows break the gate's rules (above); the pipeline sets "
                  f"them aside in quarantine_measurements and publishes {rest}", file=sys.stderr)
        for hint in tables.setup_hints(frame, mine.problems):
            print(f"{path}: {hint} (as for add-table)", file=sys.stderr)
    table_wide = result.problems[result.problems["source_id"].isna()]
    for row in table_wide.itertuples(index=False):
        print(f"check: {row.column}: {row.problem}", file=sys.stderr)
        status = 1
    return status
