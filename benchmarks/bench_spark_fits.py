"""Benchmark: the train stage's fits on the bundled data, in process and one workload per Spark task.

Builds the marts from the bundled reference tables (DuckDB), then times, each in its own process
from start to exit, :func:`kneecap.training.train_workloads` (the default path) and
:func:`kneecap.spark_fits.train_workloads` on ``local[2]`` (session start included), and checks
that both fitted the same models (the fitted JSON document's SHA-256, per model). MLflow logging,
which both paths do the same way in the stage's process, is not timed.

Usage: PYTHONPATH=src python benchmarks/bench_spark_fits.py [--runs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _child(engine: str) -> None:
    from kneecap import config, tracking, training, warehouse

    measurements, sources = warehouse.read_reference_dir(ROOT / "data" / "reference")
    marts = warehouse.build_marts(measurements, sources, sql_root=ROOT / "pipelines" / "sql")
    params = config.load_params(ROOT / "params.yaml")
    t0 = time.perf_counter()
    if engine == "spark":
        from kneecap import spark_fits

        models = spark_fits.train_workloads(marts["fct_measurements"], marts["dim_workloads"], params,
                                            master="local[2]")
    else:
        models = training.train_workloads(marts["fct_measurements"], marts["dim_workloads"], params)
    fit_s = time.perf_counter() - t0
    print(json.dumps({"fit_s": fit_s, "models": [[m.workload, m.kind, tracking.fingerprint(m.results)]
                                                 for m in models]}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--child", choices=("local", "spark"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child)
        return 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
           "MLFLOW_DISABLE_TELEMETRY": "true"}
    got: dict[str, list] = {}
    for run in range(args.runs):
        for engine in ("local", "spark"):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, __file__, "--child", engine], env=env, cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout
            wall = time.perf_counter() - t0
            result = json.loads(out.splitlines()[-1])
            got.setdefault(engine, []).append(result["models"])
            print(f"run {run + 1} {engine:5s}: fits {result['fit_s']:6.1f} s, process {wall:6.1f} s, "
                  f"{len(result['models'])} models", flush=True)
    same = all(m == got["local"][0] for runs in got.values() for m in runs)
    print(f"same models on both paths: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
