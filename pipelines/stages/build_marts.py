"""DVC stage `build_marts`: reference CSVs (+ decoded SMF/RMF tables) -> SQL -> unvalidated marts.

Usage: build_marts.py --reference DIR --sql DIR --smf DIR --out DIR
Writes candidate marts to --out; only the `validate` stage publishes them to data/processed.
"""

from __future__ import annotations

import argparse
import sys

from kneecap import warehouse
from kneecap.validation.suites import SUITES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference", required=True, help="folder of bundled measurement CSVs")
    parser.add_argument("--sql", required=True, help="pipelines/sql root (staging/intermediate/marts)")
    parser.add_argument("--smf", required=True, help="folder of decoded SMF/RMF Parquet tables")
    parser.add_argument("--out", required=True, help="folder for the candidate marts")
    args = parser.parse_args(argv)
    try:
        measurements, sources = warehouse.read_reference_dir(args.reference)
    except warehouse.ReferenceDataError as exc:
        print(f"build_marts: bad reference data, nothing rebuilt:\n{exc}", file=sys.stderr)
        return 1
    inputs = {
        "reference_measurements": measurements,
        "reference_sources": sources,
        **warehouse.read_decoded_tables(args.smf),
    }
    tables = warehouse.run_sql_files(warehouse.sql_files(args.sql), inputs)
    marts = {name: tables[name] for name in SUITES}
    for path in warehouse.write_tables(marts, args.out):
        print(f"build_marts: wrote {path} ({len(marts[path.stem])} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
