"""DVC stage `train`: fit every workload's models, log + register them in MLflow, save model dirs.

Usage: train.py --marts DIR --models DIR --metrics FILE --params FILE [--plots DIR]
A fit identical to the newest registered version (same fingerprint) registers nothing. A changed
one is registered and, under ``train.promote: if_not_worse``, becomes @champion when its error on
the current measurements is not worse than the champion's (``train.promote_tolerance_pct``);
otherwise it stays a challenger, the reason tagged on the version. A model with no champion yet
is left to `kneecap promote --if-missing` (what `make run` does next). A registered model the
current marts no longer fit (its workload removed, or too few points left) loses its champion and
is marked retired, so no desk page or forecast answers from it; a later fit brings it back. The
fits run here, or one Spark task per workload when params.yaml's `warehouse.engine` (or
KNEECAP_ENGINE) says spark; MLflow logging stays in this process either way.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kneecap import config, tracking, training, warehouse


def main(argv: list[str] | None = None) -> int:
    """Run the stage; 0 (a model the current marts no longer fit is retired, not an error), 2 for bad params."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--marts", required=True, help="published marts (data/processed)")
    parser.add_argument("--models", required=True, help="folder for MLflow model directories")
    parser.add_argument("--metrics", required=True, help="metrics JSON DVC tracks")
    parser.add_argument("--params", required=True, help="params.yaml")
    parser.add_argument("--plots", default=None,
                        help="write each response curve beside its points (fit/) and residuals (residuals/) "
                             "here, as CSV for `dvc plots show`")
    args = parser.parse_args(argv)
    try:
        params = config.load_params(args.params)
    except (OSError, ValueError) as exc:  # one line naming the file and the problem, not a traceback
        print(f"train: {exc}", file=sys.stderr)
        return 2
    # one read: every mart from the same published snapshot
    marts = warehouse.read_snapshot(args.marts).tables
    # the 72.3 response time buckets beside each class interval (where published): the percentiles' calibration
    fct = training.with_rt_buckets(marts["fct_measurements"], marts.get("fct_rt_buckets"),
                                   marts.get("fct_performance_index"))
    workloads = marts["dim_workloads"]
    try:
        settings = config.warehouse_config(params)
    except ValueError as exc:
        print(f"train: {exc}", file=sys.stderr)
        return 2
    if settings.engine == "spark":
        # each workload's fits in a Spark task; the models come back here and are logged below
        # exactly as local fits are (imported only here: a local run must not need pyspark)
        from kneecap import spark_fits

        trained = spark_fits.train_workloads(fct, workloads, params, master=settings.spark_master)
    else:
        trained = training.train_workloads(fct, workloads, params)
    tracking.configure()
    metrics: dict[str, dict[str, float]] = {}
    fitted_names = {tracking.model_name(m.workload, m.kind) for m in trained}
    for name in sorted(tracking.registered_names() - fitted_names):
        if tracking.retired_reason(name) is None:
            was = tracking.retire(name, "the current marts give no fit for this workload and kind")
            print(f"train: {tracking.listed_name(name)} retired: the current marts give it no fit (too few points, "
                  f"or the workload is gone); @champion {'removed from version ' + was if was else 'was not set'}")
    rows_of = {w: fct[fct["workload"] == w].reset_index(drop=True) for w in {m.workload for m in trained}}
    plot_tables = {id(m): training.fit_plot_tables(m, rows_of[m.workload]) for m in trained}
    if args.plots:
        _write_plots(trained, plot_tables, Path(args.plots))
    for model in trained:
        name = tracking.model_name(model.workload, model.kind)
        shown = tracking.listed_name(name)  # as `kneecap models` lists it and `kneecap promote` takes it
        tracking.unretire(name)
        tracking.save_model_dir(model.results, Path(args.models) / name)
        metrics[name] = model.metrics
        fingerprint = tracking.fingerprint(model.results)
        newest = tracking.newest_version(name)
        if newest is not None and newest[1].get(tracking.FINGERPRINT_TAG) == fingerprint:
            print(f"train: {shown} ({model.family}) unchanged: version {newest[0]} is the same fit")
            continue
        rows = rows_of[model.workload]
        logged = tracking.log_model(
            model.results, name=name, params=model.params, metrics=model.metrics,
            tables={"competitors": model.competitors},
            tags={"workload": model.workload, "kind": model.kind, "family": model.family},
            input_example=training.input_example(model, rows),
            dataset=(rows, f"{model.workload} fct_measurements", str(Path(args.marts).resolve() / "fct_measurements")),
            figures=_figures(plot_tables[id(model)]),
        )
        tracking.tag_version(name, logged.version, tracking.FINGERPRINT_TAG, fingerprint)
        print(f"train: {shown} ({model.family}) registered as version {logged.version}")
        for line in model.headline():
            print(f"train:   {line}")
        champion = tracking.champion_version(name)
        if champion is None:
            continue
        rows = fct[fct["workload"] == model.workload].reset_index(drop=True)
        new_error = training.current_error_pct(model.results, rows, model.kind)
        try:
            champion_error = training.current_error_pct(tracking.load_version(name, champion), rows, model.kind)
        except Exception:  # noqa: BLE001 - an unreadable champion (e.g. a pickle) is replaced
            champion_error = float("nan")
        promote, why = training.promotion(new_error, champion_error, policy=params.train.promote,
                                          tolerance_pct=params.train.promote_tolerance_pct)
        if promote:
            tracking.promote(name, logged.version)
            print(f"train: {shown} version {logged.version} is now @champion (was {champion}): {why}")
        else:
            tracking.tag_version(name, logged.version, tracking.CHALLENGER_TAG, why)
            print(f"train: {shown} version {logged.version} stays a challenger, @champion is still {champion}: {why}")
    Path(args.metrics).parent.mkdir(parents=True, exist_ok=True)
    Path(args.metrics).write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def _figures(tables: dict) -> dict:
    from kneecap import plots

    out = {}
    for stem, table in tables.items():
        config = stem.split("__", 1)[1]
        load = "tps" if config == "lpar" else "clients"
        out[f"fit_{config}"] = plots.fit_figure(table, title=stem, load_label=load)
        out[f"residuals_{config}"] = plots.residual_figure(table, title=stem, load_label=load)
    return out


def _write_plots(trained: list[training.TrainedModel], plot_tables: dict, out: Path) -> None:
    for sub in ("fit", "residuals"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for model in trained:
        for stem, table in plot_tables[id(model)].items():
            table.to_csv(out / "fit" / f"{stem}.csv", index=False)
            measured = table[table["measured_resp_ms"].notna()]
            measured[["load", "residual_pct"]].to_csv(out / "residuals" / f"{stem}.csv", index=False)


if __name__ == "__main__":
    sys.exit(main())
