"""The ``kneecap`` command: ingest evidence, check tables, backtest, forecast, report, manage models.

Heavy imports happen inside each sub-command so ``kneecap --help`` stays fast.

Exit codes: 0 everything asked was done (a scenario past saturation is answered as saturated); 1 some
of it failed (a scenario without an answer, a file that could not be read, a table with problems),
each failure named on stderr; 2 the request itself
was wrong (a missing file, a bad option, an unknown model or version, a tracking server that does not
answer); 130 interrupted; 143 terminated (SIGTERM, ``kneecap ingest``: it unwinds as on Ctrl-C, so
what it was writing is removed and its framing process stopped). A user's mistake gets a one-line
message naming what was wrong, never a traceback.

The global options (``-q``, ``-v``, ``--tracking-uri``) are taken before the command or after it.
A model is named as ``kneecap models`` lists it (``ZCONRPT-response``); the registered name
(``kneecap-ZCONRPT-response``) is taken too.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

log = logging.getLogger("kneecap")


def _validation_config(params_path: str):
    """The gate's tunables from ``params.yaml`` (its defaults when the file does not exist)."""
    from kneecap import config

    if not Path(params_path).exists():
        return config.ValidationConfig()
    return config.load_params(params_path).validate


def _sql_root(args: argparse.Namespace, command: str) -> Path | None:
    sql = Path(args.sql)
    if not (sql / "marts").is_dir():
        print(f"{command}: {sql}: not the pipeline's SQL folder (run from the project, or give --sql)",
              file=sys.stderr)
        return None
    return sql


def _setup_fill(args: argparse.Namespace) -> dict[str, float]:
    """The setup options given (``--n-gcp`` ...) as ``{column: value}``, for the rows that do not say."""
    from kneecap.tables import SETUP_OPTIONS

    return {column: getattr(args, column) for column in SETUP_OPTIONS if getattr(args, column) is not None}


def _cmd_check(args: argparse.Namespace) -> int:
    """Each table against the one contract, then all of them at once against the gate's rules.

    The setup options fill the cells the rows leave empty, as ``add-table`` fills them, so a table
    checked with the options ``add-table`` will get is held to the rules it will be held to there.
    """
    sql = _sql_root(args, "check")
    if sql is None:
        return 2
    try:
        cfg = _validation_config(args.params)
    except (ValueError, OSError) as exc:
        print(f"check: {args.params}: {exc}", file=sys.stderr)
        return 2
    from kneecap.check_command import check_tables

    return check_tables(args.paths, reference=Path(args.reference), fill=_setup_fill(args), sql_root=sql,
                        config=cfg)


def _cmd_add_table(args: argparse.Namespace) -> int:
    from kneecap import tables, warehouse

    sql = _sql_root(args, "add-table")
    if sql is None:
        return 2
    from kneecap.limits import InputError, regular_file

    try:
        regular_file(args.path)
    except FileNotFoundError:
        print(f"add-table: {args.path}: no such file", file=sys.stderr)
        return 2
    except (InputError, OSError) as exc:
        print(f"add-table: {exc}", file=sys.stderr)
        return 2
    fill = _setup_fill(args)
    try:
        cfg = _validation_config(args.params)
        added = tables.add_table(args.path, args.reference, title=args.source, sql_root=sql, config=cfg,
                                 source_id=args.id, section=args.section, locator=args.locator,
                                 units=args.units, fill=fill, notes=args.notes, replace=args.replace)
    except warehouse.ReferenceDataError as exc:
        print(f"{exc}\nadd-table: nothing written", file=sys.stderr)
        return 1
    except (tables.TableError, ValueError, OSError) as exc:
        print(f"add-table: {exc}", file=sys.stderr)
        return 2
    frame = added.frame
    for workload, rows in frame.groupby("workload", sort=True):
        load = "clients" if rows["clients"].notna().any() else "tps"
        engines = ", ".join(f"{c} {'/'.join(f'{v:g}' for v in sorted(rows[c].dropna().unique()))}"
                            for c in ("n_gcp", "n_ziip", "think_time_ms") if rows[c].notna().any())
        print(f"add-table: {workload}: {len(rows)} points, {load} {rows[load].min():g}-{rows[load].max():g}"
              + (f"; {engines}" if engines else "; engine counts not given (--n-gcp, --n-ziip)"))
    verb = "replaced" if added.replaced else "wrote"
    print(f"add-table: {verb} {added.path} ({len(frame)} rows) and its row in "
          f"{Path(args.reference) / 'sources.csv'} (source {added.source_row['title']!r})")
    if not added.check.ok:
        bad = added.check.problems["point_id"].nunique()
        print(f"add-table: {bad} of {len(frame)} rows break the gate's rules; they are kept in the table, and "
              "the pipeline sets them aside in quarantine_measurements and publishes the others:", file=sys.stderr)
        for line in added.check.lines(added.path):
            print(f"  {line}", file=sys.stderr)
    print("add-table: next `make pipeline promote` (fits and registers its models), then `make serve` "
          "or `kneecap forecast`")
    return 0


def _cmd_promote(args: argparse.Namespace) -> int:
    from kneecap import tracking

    tracking.configure(args.tracking_uri)
    if args.if_missing:
        done = tracking.promote_missing()
        for name, version in done:
            print(f"promote: {tracking.listed_name(name)} version {version} is now @champion")
        if not done:
            print("promote: every registered kneecap model already has a champion or was retired by the last retrain")
        return 0
    if not args.name:
        print("promote: name a registered model, or pass --if-missing", file=sys.stderr)
        return 2
    try:
        version = tracking.promote(args.name, args.version)
    except LookupError as exc:
        print(f"promote: {exc.args[0]}", file=sys.stderr)
        return 2
    name = tracking.resolve_name(args.name, tracking.registered_names()) or args.name
    print(f"promote: {tracking.listed_name(name)} version {version} is now @champion")
    return 0


def _cmd_models(args: argparse.Namespace) -> int:
    from kneecap import tracking

    tracking.configure(args.tracking_uri)
    frame = tracking.registered_models()
    if frame.empty:
        print("no registered kneecap models")
    elif args.wide:
        wide = frame.assign(name=frame["name"].map(tracking.listed_name)).rename(columns={"name": "model"})
        print(wide.to_string(index=False))
    else:
        print(tracking.models_table(frame).to_string(index=False))
    return 0


#: The error each kind of model is judged by, in the order ``kneecap models`` looks for one.
class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is so that it unwinds as on Ctrl-C: cleanups run.

    A KeyboardInterrupt, so that no ``except Exception`` on the way takes it for a failure.
    """


def _terminate(signum: int, frame: object) -> None:
    # a second SIGTERM must not cut the cleanup of the first short (SIGKILL still ends it)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated


def _cmd_ingest(args: argparse.Namespace) -> int:
    # numpy's OpenBLAS starts a worker thread per CPU when numpy is imported (10-20 ms of CPU on
    # the 2-CPU machine, beside the start-up the inputs' hashing process shares that CPU with);
    # decoding calls no linear algebra. Set before the decoders import numpy, unless the user set it.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from kneecap.ingest.cli import bring_into, inside_stage_output, run_ingest
    from kneecap.limits import InputError

    if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread only
        # by default SIGTERM ends the process where it stands: no partial file removed, no
        # scratch folder, the framing process left to the kernel
        signal.signal(signal.SIGTERM, _terminate)
    quiet = args.quiet or not log.isEnabledFor(logging.INFO)
    try:
        if args.out is None:
            return bring_into(args.paths, args.into, codepage=args.codepage, quiet=quiet)
        stage_out = inside_stage_output(Path(args.out), Path("dvc.yaml"))
        if stage_out is not None:
            print(f"ingest: --out {args.out} is inside {stage_out}, which a pipeline stage rebuilds (dvc.yaml); "
                  "decode somewhere else, or drop the files into the input area with `kneecap ingest FILES`",
                  file=sys.stderr)
            return 2
        decoder = None
        if args.engine == "spark":
            # imported only here: pyspark starts a JVM, and a local ingest must not need it installed
            from kneecap import spark_jobs

            decoder = functools.partial(spark_jobs.ingest_paths, master=args.spark_master)
        return run_ingest(args.paths, out_dir=args.out, codepage=args.codepage, quiet=quiet, smf_decoder=decoder)
    except (FileNotFoundError, InputError) as exc:
        print(f"ingest: {exc}", file=sys.stderr)
        return 2


def _cmd_repro(args: argparse.Namespace) -> int:
    """``dvc repro`` holding the input areas' lock, so an ingest meanwhile lands after it (kneecap.ingest.inputlock)."""
    from kneecap.ingest.inputlock import dvc_program, run_holding

    dvc_yaml = Path("dvc.yaml")
    if not dvc_yaml.is_file():
        print("repro: no dvc.yaml here (run it in the project)", file=sys.stderr)
        return 2
    return run_holding([dvc_program(), "repro", *args.dvc_args], dvc_yaml)


def _cmd_backtest(args: argparse.Namespace) -> int:
    from kneecap.backtest import run_cli

    return run_cli(args.cases, json_path=args.json, params_path=args.params)


def _load_champions(workload: str):
    from kneecap import forecasting, tracking

    found = tracking.load_champions(workload)
    if not found:
        raise LookupError(f"no champion model registered for workload {workload!r} "
                          f"(see `kneecap models`; train with `dvc repro`, promote with `kneecap promote`)")
    return forecasting.WorkloadModels(workload, found.get("response"), found.get("cost"))


def _read_scenarios(path: str, command: str) -> list[dict] | None:
    """The ``scenarios`` list of a YAML file, or None after printing why it is not one."""
    from kneecap.limits import InputError, load_yaml, read_text

    try:
        spec = load_yaml(read_text(path), path) or {}
    except InputError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return None
    except OSError as exc:
        print(f"{command}: {path}: {exc.strerror or exc}", file=sys.stderr)
        return None
    scenarios = spec.get("scenarios") if isinstance(spec, dict) else None
    if not isinstance(scenarios, list) or not all(isinstance(s, dict) for s in scenarios):
        print(f"{command}: {path}: expected a mapping with a 'scenarios' list of mappings", file=sys.stderr)
        return None
    return scenarios


#: ``kneecap forecast --help``'s epilog: the scenario format, what is printed, the exit codes.
_FORECAST_HELP = """\
scenarios file (YAML), e.g. examples/scenarios.yaml, which has one of every kind:
  scenarios:
    - {workload: zosconnect_cics_diag, name: peak, clients: 500, n_gcp: 2, n_ziip: 2,
       think_time_ms: 200, slo_resp_ms: 2.0}
    - {workload: MYCLASS, name: next_year, tps: 80, slo_resp_ms: 50}
  workload (required; `kneecap models` lists them) and name, then any of:
    clients | tps      the load (a closed workload asked by tps gets the fewest clients giving it;
                       an SMF class takes tps)
    n_gcp, n_ziip, think_time_ms   the configuration (default: the one measured)
    slo_resp_ms        the zIIP planner: the engines that meet this response
    slo                SMF class: a mean, {percentile: 90, resp_ms: 5} or wlm_goal (its WLM goal, PI <= 1;
                       every period's goal of a multi-period class)
    tps: peak, peak_by, peak_pct   SMF class: plan at the forecast peak to peak_by (default the
                       horizon's end) that peak_pct % of the growth paths stay below (params growth)
    current_clients | current_tps, growth_pct_per_year   years until the knee
    bg_load_factor     SMF class: the other classes' load (1 = as at the class's peak)
    cs_workload        a Communications Server name, e.g. CRR30(200B/200B)
    factors            catalogue ids (--factors) or {id, share}: answers with the changed CPU cost
    processor          {from: 3931-701, to: 3931-601, ratio_doubt_pct: 5}: answers on another
                       processor model's engine speeds (--processors), the ratio's doubt in the band
    req_bytes, resp_bytes, n_queues, transport, pooling, release, api, config   cost-model inputs

prints a table of the answers (configuration, load, response and knee with 95 % bands, when the
knee is reached, CPU cost, zIIP plan, status, notes), then writes every column to --out.

status: answered; saturated (the load is past what the configuration carries: no response
number, the saturation load in status_message, the knee and plan still given); failed (error).

exit codes: 0 every scenario answered, saturated ones included; 1 some scenarios failed (each
named on stderr, the others still answered and written); 2 bad request (unreadable scenarios
file, bad --out suffix, bad params, factor or processor catalogue); 130 interrupted.
"""


def _cmd_forecast(args: argparse.Namespace) -> int:
    from kneecap import config, forecast_text, forecasting, policies, tracking
    from kneecap.csvsafe import neutralise_frame

    scenarios = _read_scenarios(args.scenarios, "forecast")
    if scenarios is None:
        return 2
    if not scenarios:
        print(f"forecast: {args.scenarios}: the 'scenarios' list is empty (examples/scenarios.yaml has one of "
              "every kind)", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.suffix not in (".parquet", ".csv", ".json"):
        print(f"forecast: {out}: output must end in .parquet, .csv or .json", file=sys.stderr)
        return 2
    catalogue = None
    if any(s.get("factors") for s in scenarios):
        from kneecap import factors

        try:
            catalogue = factors.read_catalogue(args.factors)
        except (OSError, factors.FactorError) as exc:
            print(f"forecast: factor catalogue {args.factors}: {exc}", file=sys.stderr)
            return 2
    machines = None
    if any(s.get("processor") is not None for s in scenarios):
        from kneecap import processors

        try:
            machines = processors.read_catalogue(args.processors)
        except processors.ProcessorError as exc:
            print(f"forecast: processor catalogue {args.processors}: {exc}", file=sys.stderr)
            return 2
    try:
        params = config.load_params(args.params)
    except (OSError, ValueError) as exc:
        print(f"forecast: {args.params}: {exc}", file=sys.stderr)
        return 2
    policy = policies.planner_policy(params)
    tracking.configure(args.tracking_uri)
    with _Progress(len(scenarios), "forecast") as step:
        table = forecasting.forecast_scenarios(scenarios, _load_champions, policy, catalogue,
                                               growth=policies.growth_policy(params), machines=machines,
                                               on_row=step)
    from kneecap.cli_msu import with_msu_columns  # the MSU of SMF classes, from the published marts
    table = with_msu_columns(table, scenarios, _load_champions, args.marts,
                             growth_policy=policies.growth_policy(params))
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".parquet":
        table.to_parquet(out, index=False)
    elif out.suffix == ".csv":
        # a scenario's name or workload is the user's text: never a formula in the planner's spreadsheet
        neutralise_frame(table).to_csv(out, index=False)
    else:
        out.write_text(table.to_json(orient="records", indent=2), encoding="utf-8")
    failed = int(table["error"].notna().sum()) if "error" in table else 0
    saturated = int((table["status"] == forecasting.SATURATED).sum()) if "status" in table else 0
    for _, row in table[table["error"].notna()].iterrows() if failed else []:
        print(f"forecast: {row['workload'] or '?'} / {row['scenario']}: {row['error']}", file=sys.stderr)
    # each answer's lines together, its warnings under them
    for i in range(len(table)):
        one = table.iloc[[i]]
        for line in [*forecast_text.class_lines(one), *forecast_text.band_lines(one), *forecast_text.plan_lines(one),
                     *forecast_text.factor_lines(one), *forecast_text.extrapolation_lines(one),
                     *forecast_text.msu_lines(one), *forecast_text.caveat_lines(one)]:
            log.info(line)
        for line in [*forecast_text.saturated_lines(one), *forecast_text.warning_lines(one)]:
            log.warning(line)
    print(forecast_text.summary_text(forecasting.answer_summary(table)))
    counts = "".join(f", {n} {what}" for n, what in ((saturated, "saturated"), (failed, "failed")) if n)
    print(f"forecast: {len(table) - failed - saturated} of {len(table)} scenarios answered{counts} -> {out}")
    return 1 if failed else 0


def _cmd_report(args: argparse.Namespace) -> int:
    from kneecap.report.command import run_cli

    return run_cli(args, load_champions=_load_champions)


class _Progress:
    """A progress bar on stderr (rich) while rows are answered.

    Shown when stderr is a terminal and the log level shows information; otherwise nothing. Used as
    ``with _Progress(n, what) as step``.
    """

    def __init__(self, total: int, what: str) -> None:
        self.total, self.what, self.bar = total, what, None

    def __enter__(self):
        if sys.stderr.isatty() and log.isEnabledFor(logging.INFO) and self.total > 1:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(transient=True, console=Console(stderr=True))
            self.bar.start()
            task = self.bar.add_task(self.what, total=self.total)
            return lambda *_: self.bar.advance(task)
        return lambda *_: None

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def _cmd_simulate(args: argparse.Namespace) -> int:
    import time

    from kneecap import simulation

    scenarios = _read_scenarios(args.scenarios, "simulate")
    if scenarios is None:
        return 2
    if args.out and Path(args.out).suffix != ".csv":
        print(f"simulate: {args.out}: output must end in .csv", file=sys.stderr)
        return 2
    registry_ready = False  # mlflow is imported and configured only if a scenario names a workload

    def workload_defaults(workload: str) -> dict:
        nonlocal registry_ready
        if not registry_ready:
            from kneecap import tracking

            tracking.configure(args.tracking_uri)
            registry_ready = True
        return simulation.response_model_defaults(_load_champions(workload).response, workload)

    last = time.perf_counter()

    def report(row: dict) -> None:
        nonlocal last
        now = time.perf_counter()
        took, last = now - last, now
        if row["error"] is not None:
            print(f"simulate: {row['name']}: error: {row['error']}", file=sys.stderr)
        else:
            print(f"simulate: {row['name']}: tps {row['tps']:.1f}, resp_ms {row['resp_ms']:.3f} "
                  f"[{row['resp_ms_lo']:.3f}, {row['resp_ms_hi']:.3f}], "
                  f"ziip_eligible_on_gcp_share_pct {row['ziip_eligible_on_gcp_share_pct']:.1f} ({took:.1f} s)",
                  file=sys.stderr)

    table = simulation.simulate_specs(scenarios, workload_defaults, on_row=report,
                                      replications=args.replications,
                                      transactions=args.transactions, seed=args.seed)
    from kneecap.csvsafe import neutralise_frame

    table = neutralise_frame(table)  # a scenario's name is the user's text: never a formula in a spreadsheet
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out, index=False)
    else:
        table.to_csv(sys.stdout, index=False)
    return 1 if table["error"].notna().any() else 0


def build_parser() -> argparse.ArgumentParser:
    """The ``kneecap`` argument parser: global flags and one subcommand per task, each with its handler."""
    parser = argparse.ArgumentParser(
        prog="kneecap",
        description="Capacity planning for z/OS middleware: knees, zIIPs and CPU cost per transaction.",
        epilog="Exit codes: 0 done, 1 some items failed (named on stderr), 2 bad request (a missing file, a bad "
               "option, an unknown model, a tracking server that does not answer), 130 interrupted. "
               "-v, -q and --tracking-uri go before or after the command.",
    )
    parser.add_argument("--version", action=_VersionAction)
    _loudness_options(parser, False)
    _tracking_option(parser, None)
    # the same options after the command; SUPPRESS leaves the value given before it unless repeated after
    loud_after = argparse.ArgumentParser(add_help=False)
    _loudness_options(loud_after, argparse.SUPPRESS)
    registry_after = argparse.ArgumentParser(add_help=False)
    _tracking_option(registry_after, argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    project = argparse.ArgumentParser(add_help=False)
    project.add_argument("--reference", default="data/reference",
                         help="the project's measurement tables and sources.csv (default data/reference)")
    project.add_argument("--sql", default="pipelines/sql", help="the pipeline's SQL (default pipelines/sql)")
    project.add_argument("--params", default="params.yaml",
                         help="params.yaml for the gate's tolerances (default ./params.yaml; its defaults if absent)")

    check = sub.add_parser("check", parents=[project, loud_after],
                           help="check measurement tables against the table contract and the gate's rules")
    check.add_argument("paths", nargs="+", metavar="CSV", help="measurement tables to check")
    # the setup add-table takes, for the rules that need it (Little's law needs the think time)
    check.add_argument("--n-gcp", type=float, default=None, help="GCPs, for rows that do not say (as add-table)")
    check.add_argument("--n-ziip", type=float, default=None, help="zIIPs, for rows that do not say (as add-table)")
    check.add_argument("--think-time-ms", type=float, default=None,
                       help="think time in ms, for rows that do not say (as add-table)")
    check.add_argument("--req-bytes", type=float, default=None, help="request size in bytes, for rows that do not say")
    check.add_argument("--resp-bytes", type=float, default=None,
                       help="response size in bytes, for rows that do not say")
    check.set_defaults(func=_cmd_check)

    add = sub.add_parser("add-table", parents=[project, loud_after],
                         help="put a measurement table in the project with its citation (data/reference)")
    add.add_argument("path", metavar="CSV", help="the table: workload and clients or tps, other columns optional")
    add.add_argument("--source", required=True,
                     help="where the numbers come from (report title, or 'in-house load test, LPAR SYSA, 2026-11')")
    add.add_argument("--id", default=None, help="the table's name in the project (default: the file's stem)")
    add.add_argument("--section", default="", help="section of the source")
    add.add_argument("--locator", default="", help="table or figure in the source (default 'whole file')")
    add.add_argument("--units", default="", help="units of the columns (default: kneecap's, as the names say)")
    add.add_argument("--notes", default="", help="notes for sources.csv")
    add.add_argument("--n-gcp", type=float, default=None, help="GCPs, for rows that do not say")
    add.add_argument("--n-ziip", type=float, default=None, help="zIIPs, for rows that do not say")
    add.add_argument("--think-time-ms", type=float, default=None, help="think time in ms, for rows that do not say")
    add.add_argument("--req-bytes", type=float, default=None, help="request size in bytes, for rows that do not say")
    add.add_argument("--resp-bytes", type=float, default=None, help="response size in bytes, for rows that do not say")
    add.add_argument("--replace", action="store_true", help="replace a table of the same name in the project")
    add.set_defaults(func=_cmd_add_table)

    ingest = sub.add_parser("ingest", parents=[loud_after],
                            help="bring SMF dumps / RMF XML into the project (checked, then copied where the "
                                 "pipeline reads them), or decode them into a folder")
    ingest.add_argument("paths", nargs="+", help="files, directories or globs")
    ingest.add_argument("--into", default="data/raw/ingested",
                        help="input area the pipeline reads (default data/raw/ingested): readable files are "
                             "copied here for `make run` / `dvc repro`")
    ingest.add_argument("--out", default=None,
                        help="instead: decode into this folder as Parquet tables (never a pipeline stage's output)")
    ingest.add_argument("--codepage", default="cp037", help="EBCDIC code page (cp037, cp1047, cp500)")
    ingest.add_argument("--engine", choices=("local", "spark"), default="local",
                        help="with --out: decode here (local, the default) or on Spark, one task per dump")
    ingest.add_argument("--spark-master", default="local[*]",
                        help="Spark master URL for --engine spark (local[N], spark://HOST:7077, yarn, ...)")
    ingest.set_defaults(func=_cmd_ingest)
    repro = sub.add_parser("repro", help="run the pipeline (`dvc repro`) while holding the input areas, so a file "
                                         "ingested meanwhile waits and lands after it (`make pipeline` runs this)")
    repro.add_argument("dvc_args", nargs=argparse.REMAINDER, metavar="DVC_ARGS",
                       help="passed on to `dvc repro` (a stage name, --force, ...)")
    repro.set_defaults(func=_cmd_repro)

    backtest = sub.add_parser("backtest", parents=[loud_after],
                              help="fit on train rows, predict held-out rows of case dirs")
    backtest.add_argument("cases", nargs="+", metavar="CASE_DIR",
                          help="case folders (measurements.csv + case.yaml), or a folder of them")
    backtest.add_argument("--json", help="write the results as JSON here")
    backtest.add_argument("--params", default=None,
                          help="params.yaml for fit knobs and planner policy (default: ./params.yaml if present)")
    backtest.set_defaults(func=_cmd_backtest)

    forecast = sub.add_parser("forecast", parents=[loud_after, registry_after],
                              help="evaluate champion models over a scenarios file")
    forecast.add_argument("--scenarios", required=True, help="scenarios YAML")
    forecast.add_argument("--out", required=True, help="output .parquet, .csv or .json")
    forecast.add_argument("--params", default="params.yaml", help="planner policy, knee rule and growth settings")
    forecast.add_argument("--marts", default="data/processed", help="published marts: msu_* columns of SMF classes")
    forecast.add_argument("--factors", default="data/reference/factors.csv",
                          help="factor catalogue for scenarios with `factors` (default: the bundled one)")
    forecast.add_argument("--processors", default="data/reference/processor_capacity.yaml",
                          help="processor capacity catalogue for scenarios with `processor` (default: the bundled one)")
    forecast.set_defaults(func=_cmd_forecast)
    forecast.formatter_class = argparse.RawDescriptionHelpFormatter
    forecast.description = ("Answer each scenario with the champion models: a table of the answers, "
                            "every column to --out.")
    forecast.epilog = _FORECAST_HELP

    report = sub.add_parser("report", parents=[loud_after, registry_after],
                            help="write one workload's capacity report: one self-contained HTML file")
    report.add_argument("--workload", required=True, help="the workload or WLM class (`kneecap models` lists them)")
    report.add_argument("--out", required=True, help="the report, .html (or .pdf, printed by chromium)")
    report.add_argument("--load", type=float, default=None,
                        help="the load the question is asked at: clients, or tps for a WLM class (default: the "
                             "largest load the model was fitted on)")
    report.add_argument("--slo-ms", type=float, default=None,
                        help="response-time SLO in ms: the report gives the zIIP plan that meets it")
    for flag, kind, what in (("--n-gcp", int, "GCPs"), ("--n-ziip", int, "zIIPs"), ("--think-time-ms", float,
                             "think time in ms (a closed workload)"), ("--other-load", float,
                             "the other classes' load factor (a WLM class; 1: as measured)"),
                            ("--gcp-speed", float, "a GCP's speed (relative to --ziip-speed, default 1)"),
                            ("--ziip-speed", float, "a zIIP's speed"), ("--ziip-mt", int, "zIIP MT mode (1 or 2)"),
                            ("--ziip-mt-capacity", float, "MT-2 capacity factor per zIIP core (SMF 72.3 MCFS/1024)")):
        report.add_argument(flag, type=kind, default=None, help=f"{what} the question is asked on (default: the "
                            "model's own)")
    report.add_argument("--params", default="params.yaml", help="planner policy, knee rule and growth settings")
    report.add_argument("--marts", default="data/processed", help="the published marts (default data/processed)")
    report.add_argument("--lock", default="dvc.lock", help="dvc.lock, whose hash the report records (if present)")
    report.set_defaults(func=_cmd_report)
    report.description = ("The question, the data used, the fitted model and its held-out errors, the knee with its "
                          "band, when growth reaches it, the Performance Index, the zIIP plan, the charts, the "
                          "caveats and the versions, in one HTML file that opens without a network.")
    report.epilog = ("exit codes: 0 written; 1 the forecast could not answer (named on stderr); 2 bad request "
                     "(no champion for the workload, no published marts, a bad option or params file).")

    simulate = sub.add_parser("simulate", parents=[loud_after, registry_after],
                              help="simulate an LPAR's GCP and zIIP dispatching per scenario")
    simulate.add_argument("--scenarios", required=True, help="scenarios YAML")
    simulate.add_argument("--out", default=None, help="output .csv (default: print the CSV)")
    simulate.add_argument("--replications", type=int, default=5, help="independent runs behind each 95 %% interval")
    simulate.add_argument("--transactions", type=int, default=20000,
                          help="per replication, warm-up included")
    simulate.add_argument("--seed", type=int, default=0, help="the same seed gives the same table")
    simulate.set_defaults(func=_cmd_simulate)

    promote = sub.add_parser("promote", parents=[loud_after, registry_after],
                             help="set the champion alias of a registered model")
    promote.add_argument("name", nargs="?",
                         help="the model as `kneecap models` lists it (ZCONRPT-response; kneecap-ZCONRPT-response too)")
    promote.add_argument("--version", default=None, help="version to promote (default: the newest)")
    promote.add_argument("--if-missing", action="store_true",
                         help="promote the newest version of every model without a champion")
    promote.set_defaults(func=_cmd_promote)

    models = sub.add_parser("models", parents=[loud_after, registry_after],
                            help="list registered models and their aliases")
    models.add_argument("--wide", action="store_true", help="every column: run id and all logged metrics")
    models.set_defaults(func=_cmd_models)
    return parser


#: The commands that read or write the model registry (the ones that take --tracking-uri).
REGISTRY_COMMANDS = ("forecast", "report", "simulate", "promote", "models")


def _loudness_options(parser: argparse.ArgumentParser, default) -> None:
    loud = parser.add_mutually_exclusive_group()
    loud.add_argument("-v", "--verbose", action="store_true", default=default,
                      help="also log kneecap's debug messages (stderr)")
    loud.add_argument("-q", "--quiet", action="store_true", default=default,
                      help="only results and errors: no progress bars or per-item information lines")


def _tracking_option(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument("--tracking-uri", default=default,
                        help="MLflow tracking/registry URI for forecast, report, simulate, promote and models "
                             "(default: $MLFLOW_TRACKING_URI or the local store ./mlflow.db); a server that does not "
                             "answer in seconds is an error (exit 2)")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line parsed, global options taken before or after the command.

    Exits 2 with argparse's usage line when -v and -q are both given (one on each side of the
    command), or --tracking-uri is given to a command that does not use the registry.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbose and args.quiet:
        parser.error("-q/--quiet and -v/--verbose exclude each other")
    if args.tracking_uri is not None and args.command not in REGISTRY_COMMANDS:
        parser.error(f"--tracking-uri: `{args.command}` does not use the model registry "
                     f"(only {', '.join(REGISTRY_COMMANDS)} do)")
    return args


class _VersionAction(argparse.Action):
    """``--version``: print ``kneecap <version>`` and exit, the version looked up only then.

    argparse's own ``version`` action takes the text when the parser is built, i.e. on every
    command; reading the installed version imports ``importlib.metadata`` (about 15 ms of the
    start-up of ``kneecap ingest``, before its framing process can start).
    """

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str = "show program's version number and exit") -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"{parser.prog} {_version()}")  # on stdout, as argparse prints a version
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kneecap")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``kneecap`` command and return its exit code.

    Exit codes: 0 done, 1 some items failed, 2 bad request, 130 interrupted.
    """
    return _run_command(parse_args(argv))


#: Commands whose process ends without the interpreter's teardown (:func:`run`).
QUICK_EXIT_COMMANDS = frozenset({"ingest"})


def run() -> NoReturn:
    """The ``kneecap`` console command: :func:`main` on ``sys.argv``, then the end of the process.

    When ``kneecap ingest`` returns, every file it wrote is closed, fsynced and committed (the
    manifest line last) and its child processes are reaped; what the interpreter's shutdown does
    after that is unload modules and free memory the kernel takes back anyway, about 30 ms of a
    0.5 s ingest of 92 MB, most of it pyarrow's C++ runtime. So after an ingest the Python exit
    handlers run (logging, multiprocessing, weakref finalizers such as temporary folders), the
    standard streams are flushed and the process ends with :func:`os._exit`. Every other command,
    and an ingest that raised, exits as usual.
    """
    args = parse_args(None)
    code = _run_command(args)
    if args.command not in QUICK_EXIT_COMMANDS:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream has nothing to flush
            stream.flush()
    os._exit(code)


def _run_command(args: argparse.Namespace) -> int:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO)
    try:
        return int(args.func(args) or 0)
    except Terminated:
        print(f"{args.command}: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print(f"{args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        # kneecap.tracking is imported only by the commands that use the registry (mlflow takes seconds)
        tracking = sys.modules.get("kneecap.tracking")
        message = tracking.registry_error(exc) if tracking is not None else None
        if message is None:
            raise
        print(f"{args.command}: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    run()
