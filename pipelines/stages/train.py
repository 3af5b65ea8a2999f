"""DVC stage `train`: fit every workload's models, log + register them in MLflow, save model dirs.

Usage: train.py --marts DIR --models DIR --metrics FILE --params FILE
Promotion to @champion is a separate, explicit command (`kneecap promote`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kneecap import config, tracking, training, warehouse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--marts", required=True, help="published marts (data/processed)")
    parser.add_argument("--models", required=True, help="folder for MLflow model directories")
    parser.add_argument("--metrics", required=True, help="metrics JSON DVC tracks")
    parser.add_argument("--params", required=True, help="params.yaml")
    args = parser.parse_args(argv)
    params = config.load_params(args.params)
    fct = warehouse.read_table(args.marts, "fct_measurements")
    workloads = warehouse.read_table(args.marts, "dim_workloads")
    trained = training.train_workloads(fct, workloads, params)
    tracking.configure()
    metrics: dict[str, dict[str, float]] = {}
    for model in trained:
        name = tracking.model_name(model.workload, model.kind)
        logged = tracking.log_model(
            model.results, name=name, params=model.params, metrics=model.metrics,
            tables={"competitors": model.competitors},
            tags={"workload": model.workload, "kind": model.kind, "family": model.family},
        )
        tracking.save_model_dir(model.results, Path(args.models) / name)
        metrics[name] = model.metrics
        print(f"train: {name} ({model.family}) registered as version {logged.version}")
        for line in model.headline():
            print(f"train:   {line}")
    Path(args.metrics).parent.mkdir(parents=True, exist_ok=True)
    Path(args.metrics).write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
