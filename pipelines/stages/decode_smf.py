"""DVC stage `decode_smf`: decode every SMF dump and RMF XML report under data/raw to Parquet.

Usage: decode_smf.py --raw DIR --out DIR [--params params.yaml]
Files that cannot be read (e.g. a DDS error reply) are reported and skipped; the stage succeeds
so the rest of the evidence still flows; bundled samples listed as refused by design
(kneecap.ingest.refusals) are counted apart from failures. The output folder is rebuilt from
scratch each run, and is the same bytes for the same inputs (no ingest times in its manifest). The
SMF dumps are decoded here, or on Spark (one task per dump) when params.yaml's `warehouse.engine`
or KNEECAP_ENGINE says spark.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from kneecap import config
from kneecap.ingest.cli import run_ingest
from kneecap.ingest.manifest import drop_ingest_times


def main(argv: list[str] | None = None) -> int:
    """Run the stage; 0 even when some files cannot be read (they are reported), 1 when ``--raw`` holds no input.

    2 for bad params.
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--raw", required=True, help="immutable inputs (SMF dumps, RMF XML)")
    parser.add_argument("--out", required=True, help="decoded tables folder")
    parser.add_argument("--params", default="params.yaml", help="params.yaml (its `warehouse` section)")
    args = parser.parse_args(argv)
    try:
        settings = config.warehouse_config(config.load_params(args.params))
    except ValueError as exc:
        print(f"decode_smf: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    status = run_ingest([args.raw], out_dir=str(out), quiet=True, allow_failed=True, engine=settings.engine,
                        spark_master=settings.spark_master)
    # the same inputs give the same bytes (dvc.lock's hash of this output holds on every clone):
    # the manifest's ingest times are the one thing that would differ
    drop_ingest_times(out)
    return status


if __name__ == "__main__":
    sys.exit(main())
