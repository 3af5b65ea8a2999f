"""DVC stage `build_marts`: reference CSVs (+ decoded SMF/RMF tables) -> SQL -> unvalidated marts.

Usage: build_marts.py --reference DIR --sql DIR --smf DIR --out DIR [--params params.yaml]
Runs the SQL on the engine params.yaml's `warehouse` section names (DuckDB unless it or
KNEECAP_ENGINE says spark). Writes candidate marts to --out; only the `validate` stage publishes
them to data/processed.
"""

from __future__ import annotations

import argparse
import sys
import time

from kneecap import config, warehouse
from kneecap.validation.suites import SUITES


def main(argv: list[str] | None = None) -> int:
    """Run the stage; 0 when the candidate marts are written, 2 for bad params, 1 for bad reference data."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference", required=True, help="folder of bundled measurement CSVs")
    parser.add_argument("--sql", required=True, help="pipelines/sql root (staging/intermediate/marts)")
    parser.add_argument("--smf", required=True, help="folder of decoded SMF/RMF Parquet tables")
    parser.add_argument("--out", required=True, help="folder for the candidate marts")
    parser.add_argument("--params", default="params.yaml", help="params.yaml (its `warehouse` section)")
    args = parser.parse_args(argv)
    try:
        settings = config.warehouse_config(config.load_params(args.params))
    except ValueError as exc:
        print(f"build_marts: {exc}", file=sys.stderr)
        return 2
    try:
        measurements, sources = warehouse.read_reference_dir(args.reference)
    except warehouse.ReferenceDataError as exc:
        print(f"build_marts: bad reference data, nothing rebuilt:\n{exc}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    if settings.engine == "spark":
        # imported only here: pyspark starts a JVM, and a DuckDB run must not need it installed
        from kneecap import spark_engine

        # Spark reads the decoded Parquet dataset itself: no decoded row passes through this process
        tables = spark_engine.build_marts(measurements, sources, sql_root=args.sql, decoded_dir=args.smf,
                                          keep=SUITES, master=settings.spark_master)
        engine = f"spark ({settings.spark_master})"
    else:
        tables = warehouse.build_marts(measurements, sources, warehouse.read_decoded_tables(args.smf),
                                       sql_root=args.sql)
        engine = "duckdb"
    print(f"build_marts: ran {args.sql} on {engine} in {time.perf_counter() - started:.1f} s")
    marts = {name: tables[name] for name in SUITES}
    for path in warehouse.write_tables(marts, args.out):
        print(f"build_marts: wrote {path} ({len(marts[path.stem])} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
