"""DVC stage `decode_smf`: decode every SMF dump and RMF XML report under data/raw to Parquet.

Usage: decode_smf.py --raw DIR --out DIR [--params params.yaml]
Files that cannot be read (e.g. a DDS error reply) are reported and skipped; the stage succeeds
so the rest of the evidence still flows; bundled samples listed as refused by design
(kneecap.ingest.refusals) are counted apart from failures. The output folder is rebuilt from
scratch each run, and is the same bytes for the same inputs (no ingest times in its manifest). The
SMF dumps are decoded here, or on Spark (one task per dump) when params.yaml's `warehouse.engine`
or KNEECAP_ENGINE says spark.

The stage decodes a snapshot: the files under --raw when it starts (listed under the input areas'
lock, kneecap.ingest.inputlock), each recorded with its SHA-256 in the output's manifest. If --raw
is not the same at the end (a file ingested meanwhile), it exits 3 naming what changed, so DVC
records no hash of inputs it did not decode; `kneecap repro` (`make pipeline`) makes an ingest wait
for the whole run instead.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
from pathlib import Path

from kneecap import config
from kneecap.ingest.cli import run_ingest
from kneecap.ingest.inputlock import changes, fingerprint, hold_areas
from kneecap.ingest.manifest import drop_ingest_times


def main(argv: list[str] | None = None) -> int:
    """Run the stage; 0 even when some files cannot be read (they are reported), 1 when ``--raw`` holds no input.

    2 for bad params, 3 when ``--raw`` changed while it was decoded.
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
    raw = Path(args.raw)
    areas = [raw] if raw.is_dir() else []
    with hold_areas(areas, who="decode_smf"):  # an ingest's copies are all in, or none
        before = fingerprint(raw) if areas else {}
    # the snapshot's files by name, as the folder expands to them: the manifest is the same bytes
    inputs = [str(raw / name) for name in before] or [args.raw]
    decoder = None
    if settings.engine == "spark":
        # imported only here: pyspark starts a JVM, and a local decode must not need it installed
        from kneecap import spark_jobs

        decoder = functools.partial(spark_jobs.ingest_paths, master=settings.spark_master)
    status = run_ingest(inputs, out_dir=str(out), quiet=True, allow_failed=True, smf_decoder=decoder)
    with hold_areas(areas, who="decode_smf"):
        changed = changes(before, fingerprint(raw) if areas else {})
    if changed:
        # DVC hashes --raw after this exits: succeeding would record files nobody decoded
        print(f"decode_smf: {args.raw} changed while it was decoded ({', '.join(changed[:10])}"
              f"{f' and {len(changed) - 10} more' if len(changed) > 10 else ''}); nothing recorded, "
              "run the pipeline again (`make pipeline` makes an ingest wait for the run)", file=sys.stderr)
        return 3
    # the same inputs give the same bytes (dvc.lock's hash of this output holds on every clone):
    # the manifest's ingest times are the one thing that would differ
    drop_ingest_times(out)
    return status


if __name__ == "__main__":
    sys.exit(main())
