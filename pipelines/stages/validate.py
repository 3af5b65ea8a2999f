"""DVC stage `validate`: run the expectation suites; publish the marts only if every one passes.

Usage: validate.py --marts DIR --out DIR --report FILE --params FILE
A failing row stops the pipeline with a message naming table, row and rule, and the marts
already in --out stay as they were.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kneecap import config, warehouse
from kneecap.validation import validate_tables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--marts", required=True, help="candidate marts from build_marts")
    parser.add_argument("--out", required=True, help="published marts (data/processed)")
    parser.add_argument("--report", required=True, help="validation results JSON")
    parser.add_argument("--params", required=True, help="params.yaml")
    args = parser.parse_args(argv)
    params = config.load_params(args.params)
    tables = warehouse.read_parquet_dir(args.marts)
    report = validate_tables(tables, params.validate)
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    for table in report.tables:
        status = "ok" if table.success else f"{len(table.failures)} failed"
        print(f"validate: {table.table}: {table.n_rows} rows, {table.n_expectations} expectations, {status}")
    if not report.success:
        for failure in report.failures:
            print(f"validate: {failure}", file=sys.stderr)
        print(f"validate: nothing published; {args.out} is unchanged", file=sys.stderr)
        return 1
    warehouse.write_tables(tables, args.out)
    print(f"validate: published {len(tables)} marts to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
