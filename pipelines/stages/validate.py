"""DVC stage `validate`: run the expectation suites; publish the marts that pass.

Usage: validate.py --marts DIR --out DIR --report FILE --params FILE [--docs DIR]
A measured point (a row of fct_measurements) that breaks a rule is quarantined, named with its
table, row, rule and value, and written to ``quarantine_measurements`` beside the marts; the other
points and workloads are published. A failure no quarantine mends (a table's columns, a rule of
another table) stops the pipeline and the marts already in --out stay as they were.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import pandas as pd

from kneecap import config, warehouse
from kneecap.validation import quarantine, validate_tables


def main(argv: list[str] | None = None) -> int:
    """Run the stage; 0 when the marts are published, 1 when a failure stops publishing, 2 for bad params."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--marts", required=True, help="candidate marts from build_marts")
    parser.add_argument("--out", required=True, help="published marts (data/processed)")
    parser.add_argument("--report", required=True, help="validation results JSON")
    parser.add_argument("--params", required=True, help="params.yaml")
    parser.add_argument("--docs", default=None, help="write GX Data Docs (index.html) here, replacing the folder")
    args = parser.parse_args(argv)
    try:
        params = config.load_params(args.params)
    except (OSError, ValueError) as exc:  # one line naming the file and the problem, not a traceback
        print(f"validate: {exc}", file=sys.stderr)
        return 2
    tables = warehouse.read_parquet_dir(args.marts)
    if args.docs is not None and Path(args.docs).exists():
        # this run's Data Docs only (not a DVC output, so DVC does not clear them; dvc.yaml says why)
        shutil.rmtree(args.docs)
    report = validate_tables(tables, params.validate, docs_dir=args.docs)
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)

    duplicates = tables.get("fct_rmf_duplicates")
    # RMF rows of one key that reached the SQL more than once: one was kept each (stg_rmf_*), counted here
    dropped = int(duplicates["rows_dropped"].sum()) if duplicates is not None and len(duplicates) else 0

    def write_report(published: bool, quarantined_rows: int = 0) -> None:
        body = {**report.to_dict(), "published": published, "quarantined_rows": quarantined_rows,
                "rmf_duplicate_rows_dropped": dropped}
        Path(args.report).write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    for table in report.tables:
        status = "ok" if table.success else f"{len(table.failures)} failed"
        print(f"validate: {table.table}: {table.n_rows} rows, {table.n_expectations} expectations, {status}")
    if dropped and duplicates is not None:
        print(f"validate: {len(duplicates)} RMF interval(s) of a table reached the pipeline more than once (a report "
              f"stored twice); {dropped} duplicate row(s) left out, one row kept per key: see fct_rmf_duplicates",
              file=sys.stderr)
    clean, quarantined, blocking = quarantine(tables, report)
    if blocking:
        write_report(False)
        for failure in blocking:
            print(f"validate: {failure}", file=sys.stderr)
        print(f"validate: nothing published; {args.out} is unchanged", file=sys.stderr)
        return 1
    if len(quarantined):
        again = validate_tables(clean, params.validate)
        if not again.success:  # a rule the set-aside rows did not explain: publish nothing
            write_report(False)
            for failure in again.failures:
                print(f"validate: {failure}", file=sys.stderr)
            print(f"validate: nothing published; {args.out} is unchanged", file=sys.stderr)
            return 1
        for failure in report.failures:
            print(f"validate: quarantined: {failure}", file=sys.stderr)
        lost = sorted(set(tables["dim_workloads"]["workload"]) - set(clean["dim_workloads"]["workload"]))
        print(f"validate: {quarantined[['source_id', 'workload', 'point_id']].drop_duplicates().shape[0]} "
              f"measured point(s) quarantined to quarantine_measurements"
              + (f"; workloads left with no point: {', '.join(lost)}" if lost else ""), file=sys.stderr)
    write_report(True, len(quarantined))
    warehouse.write_tables({**clean, "quarantine_measurements": quarantined.astype({"value": "string"})
                            if len(quarantined) else pd.DataFrame(columns=quarantined.columns, dtype="string")},
                           args.out)
    print(f"validate: published {len(clean)} marts to {args.out}"
          + (f" ({len(clean['fct_measurements'])} points kept)" if len(quarantined) else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
