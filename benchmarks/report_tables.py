"""Tables of the docs generated from the benches' own output files, never pasted.

An MkDocs hook (``hooks:`` in mkdocs.yml): a page's ``{{ name }}`` marker is replaced by the table
:data:`TABLES` renders for ``name`` from the file a bench (or the pipeline's evaluate stage) wrote.
A file not written yet renders as a note saying which command writes it, so the build still
passes and the page says what is missing instead of showing stale numbers.

``python benchmarks/report_tables.py`` prints every table, as the docs show them.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
# the hook runs inside mkdocs, which has no PYTHONPATH=src of its own: this checkout's kneecap, imported
# now, while it is first on the path (plugins may change sys.path later)
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))
from kneecap import backtest, config  # noqa: E402

BACKTEST_JSON = ROOT / "reports" / "metrics" / "backtest.json"
RESULTS = ROOT / "benchmarks" / "results"
DISPATCH_GRID_CSV = RESULTS / "dispatch_grid.csv"
DISPATCH_BACKGROUND_CSV = RESULTS / "dispatch_background.csv"
DISPATCH_CURVES_CSV = RESULTS / "dispatch_curves.csv"
SMF_CLASS_CSV = RESULTS / "smf_class.csv"
#: the simulated LPARs of ``bench_smf_class.py --variant`` the docs compare, default (``pool``) first
SMF_CLASS_VARIANTS = ("pool", "burst", "burst_k1", "pool_4g3z")
SCALE_CSV = RESULTS / "scale.csv"
INPUT_MEMORY_CSV = RESULTS / "input_memory.csv"
KILL_INGEST_CSV = RESULTS / "kill_ingest.csv"
#: the phases of a kill ``kill_ingest.py`` tells apart, in the order an ingest goes through them
KILL_PHASES = ("start-up", "decoding", "writing/committing", "copying")
# a marker alone on its line; its indent (a table inside a list item) is given to every line of the table
MARKER = re.compile(r"^( *)\{\{\s*([a-z_]+)\s*\}\}[ ]*$", re.MULTILINE)


def _shown(path: Path) -> str:
    """``path`` relative to the checkout where it is inside it (as the docs name files)."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _missing(path: Path, command: str) -> str:
    return (f"!!! note \"Not measured yet\"\n    `{_shown(path)}` has not been written: "
            f"`{command}` writes it, and the next `make docs` shows its table here.\n")


def _bench_table(path: Path, rows: Callable[[pd.DataFrame], list[str]], command: str) -> str:
    """The table ``rows`` makes of the CSV a bench's ``--save`` wrote, and where it came from."""
    if not path.exists():
        return _missing(path, "make bench")
    return ("\n".join(rows(pd.read_csv(path)))
            + f"\n\nGenerated from `{_shown(path)}` (`{command}`, run by `make bench`).\n")


def backtest_table(path: Path = BACKTEST_JSON, params: Path = ROOT / "params.yaml") -> str:
    """The backtest error table of ``kneecap backtest``, from the evaluate stage's JSON."""
    if not path.exists():
        return _missing(path, "make pipeline")
    results = [backtest.CaseResult(**case) for case in json.loads(path.read_text(encoding="utf-8"))["cases"]]
    goal_pct = config.load_params(params).evaluate.goal_pct
    return (f"Generated from `{_shown(path)}` (the `evaluate` stage of `make pipeline`; the JSON "
            "keeps a combination's members in name order):\n\n"
            f"```\n{backtest.format_table(results, goal_pct)}\n```\n")


def _error_row(label: str, rows: pd.DataFrame) -> str:
    err = rows["err_pct"].abs()
    return (f"| {label} | {len(rows)} | {err.mean():.1f} % | {err.median():.1f} % | {err.max():.1f} % "
            f"| {int((err <= 10).sum())} | {int((err <= 25).sum())} |")


def dispatch_grid_rows(table: pd.DataFrame) -> list[str]:
    """The zIIP/GCP model's error against the simulated grid, by kind of point (total busy <= 85 %)."""
    busy85 = table[table["busy_pct"] <= 85.0]
    helped = busy85[(busy85["honor"] == "YES") & (busy85["n_ziip"] > 0)]
    return [
        "| points (total busy <= 85 % unless said) | n | mean | median | worst | within 10 % | within 25 % |",
        "|---|---|---|---|---|---|---|",
        _error_row("all", busy85),
        _error_row("all, total busy <= 95 %", table[table["busy_pct"] <= 95.0]),
        _error_row("closed, honor NO (exact MVA)", busy85[(busy85["load"] == "closed") & (busy85["honor"] == "NO")]),
        _error_row("open, honor NO (Erlang C)", busy85[(busy85["load"] == "open") & (busy85["honor"] == "NO")]),
        _error_row("honor YES, zIIPs, simulated spill < 5 %", helped[helped["sim_spill_pct"] < 5.0]),
        _error_row("honor YES, zIIPs, spill >= 5 %", helped[helped["sim_spill_pct"] >= 5.0]),
        _error_row("no zIIP", busy85[busy85["n_ziip"] == 0]),
    ]


def dispatch_grid_table(path: Path = DISPATCH_GRID_CSV) -> str:
    """The grid table of ``bench_dispatch.py --full``, from the CSV its ``--save`` wrote."""
    return _bench_table(path, dispatch_grid_rows, "bench_dispatch.py --full --save")


def _finite_error_row(label: str, err: pd.Series) -> str:
    # a point the model calls saturated has an infinite error: counted, out of the mean and worst
    finite = err[np.isfinite(err)]
    return (f"| {label} | {len(err)} | {finite.mean():.1f} % | {finite.median():.1f} % | {finite.max():.1f} % "
            f"| {int((err <= 10).sum())} | {int((err <= 25).sum())} |")


def dispatch_background_rows(table: pd.DataFrame) -> list[str]:
    """The model beside other classes' work against the kept simulation, by the busiest pool and kind of load."""
    err = table["err_pct"].abs()
    busiest = table[["gcp_busy_pct", "ziip_busy_pct"]].max(axis=1)
    saturated = int(np.isinf(err).sum())
    return [
        "| points | n | mean | median | worst | within 10 % | within 25 % |",
        "|---|---|---|---|---|---|---|",
        _finite_error_row("busiest pool <= 85 %", err[busiest <= 85.0]),
        _finite_error_row(f"all ({saturated} point(s) the model calls saturated)", err),
        _finite_error_row("open", err[table["load"] == "open"]),
        _finite_error_row("closed", err[table["load"] == "closed"]),
    ]


def dispatch_background_table(path: Path = DISPATCH_BACKGROUND_CSV) -> str:
    """The table of ``bench_dispatch_background.py``, from the CSV its ``--save`` wrote."""
    return _bench_table(path, dispatch_background_rows, "bench_dispatch_background.py --sim-from "
                        "benchmarks/reference/dispatch_background_sim.csv --save")


def monotone_bound_pct(sim_resp_ms: np.ndarray) -> float:
    """Least worst relative error (%) any non-decreasing curve has against a simulated curve in load order."""
    upper = np.maximum.accumulate(sim_resp_ms)
    lower = np.minimum.accumulate(sim_resp_ms[::-1])[::-1]
    return 100.0 * (float(np.sqrt(upper / lower).max()) - 1.0)


def dispatch_curves_rows(table: pd.DataFrame) -> list[str]:
    """Per LPAR along its load curve: the model's mean and worst (signed) error, and the monotone bound."""
    rows = ["| LPAR (f) | mean | worst | monotone bound |", "|---|---|---|---|"]
    for (n_gcp, n_ziip, f), part in table.groupby(["n_gcp", "n_ziip", "f"], sort=False):
        part = part.sort_values("share")
        err = part["err_pct"].to_numpy()
        worst = err[np.argmax(np.abs(err))]
        rows.append(f"| {n_gcp} + {n_ziip} ({f:g}) | {np.abs(err).mean():.1f} % | {worst:+.1f} % "
                    f"| {monotone_bound_pct(part['sim_resp_ms'].to_numpy()):.1f} % |")
    err = table["err_pct"].abs()
    rows.append(f"| all {len(table)} loads | {err.mean():.2f} % | {err.max():.1f} % | |")
    return rows


def dispatch_curves_table(path: Path = DISPATCH_CURVES_CSV) -> str:
    """The table of ``bench_dispatch_curves.py``, from the CSV its ``--save`` wrote."""
    if not path.exists():
        return _missing(path, "make bench")
    table = pd.read_csv(path)
    within = int((table["err_pct"].abs() <= 10).sum())
    return ("\n".join(dispatch_curves_rows(table))
            + f"\n\n{within} of the {len(table)} loads within 10 %. Generated from `{_shown(path)}` "
            "(`bench_dispatch_curves.py --sim-from benchmarks/reference/dispatch_curves_sim.csv --save`, "
            "run by `make bench`).\n")


def _slash(values: pd.Series, fmt: str) -> str:
    return " / ".join(format(v, fmt) for v in values)


def smf_class_rows(table: pd.DataFrame) -> list[str]:
    """Per seed: the class model's peak response error, band, knee and knee date against the simulation."""
    rows = ["| seed | peak response MAPE | daily peaks in the 95 % band | knee tps [interval] (truth) | knee error "
            "| knee date range (truth) | fit |", "|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        rows.append(f"| {r.seed} | {r.peak_mape_pct:.1f} % | {r.peaks_in_band} | {r.knee_tps:,.0f} "
                    f"[{r.knee_lo:,.0f}, {r.knee_hi:,.0f}] ({r.knee_true_tps:,.0f}) | {r.knee_err_pct:+.1f} % "
                    f"| {r.date_band} ({r.date_true}) | {r.fit_s:.1f} s |")
    return rows


def smf_class_table(path: Path = SMF_CLASS_CSV) -> str:
    """The per-seed table of ``bench_smf_class.py`` (default LPAR), from the CSV its ``--save`` wrote."""
    return _bench_table(path, smf_class_rows, "bench_smf_class.py --save")


def smf_class_variants_rows(tables: dict[str, pd.DataFrame]) -> list[str]:
    """One row per simulated LPAR: the per-seed figures side by side (seeds in the order run)."""
    rows = ["| system | seeds | peak response MAPE | daily peaks in the 95 % band | knee error | knee in its interval "
            "| knee date range (truth) |", "|---|---|---|---|---|---|---|"]
    for variant, t in tables.items():
        # seeds with the same range named together: "03-13..03-15 (21, 22), 03-13..03-16 (23, 24)"
        seeds_by_range: dict[str, list[str]] = {}
        for seed, band in zip(t["seed"], t["date_band"], strict=True):
            seeds_by_range.setdefault(re.sub(r"\d{4}-", "", band), []).append(str(seed))
        ranges = ("; ".join(f"{band} on every seed" if len(seeds_by_range) == 1 else f"{band} ({', '.join(seeds)})"
                            for band, seeds in seeds_by_range.items()))
        rows.append(f"| {variant} | {_slash(t['seed'], 'd')} | {_slash(t['peak_mape_pct'], '.1f')} % "
                    f"| {', '.join(p.split('/')[0] for p in t['peaks_in_band'])} of "
                    f"{t['peaks_in_band'].iloc[0].split('/')[1]} | {_slash(t['knee_err_pct'], '+.1f')} % "
                    f"| {int(t['knee_in'].sum())} of {len(t)} | {ranges} ({t['date_true'].iloc[0]}) |")
    return rows


def smf_class_variants_table(folder: Path = RESULTS, prefix: str = "smf_class_",
                             options: str = "--seeds 21 22 23 24") -> str:
    """The LPARs the class model was not built on, from ``<prefix><variant>.csv`` (``--variant V --save``)."""
    paths = {v: folder / f"{prefix}{v}.csv" for v in SMF_CLASS_VARIANTS}
    missing = [p for p in paths.values() if not p.exists()]
    if missing:
        return _missing(missing[0], "make bench")
    return ("\n".join(smf_class_variants_rows({v: pd.read_csv(p) for v, p in paths.items()}))
            + f"\n\nGenerated from `{_shown(folder)}/{prefix}<system>.csv` (`bench_smf_class.py --variant "
            f"<system> {options} --save`, run by `make bench`).\n")


def smf_class_steep_table(folder: Path = RESULTS) -> str:
    """The same LPARs on a steeper week (``--ratio``), from ``smf_class_steep_<variant>.csv``."""
    ratio = _run_all().SMF_CLASS_STEEP_RATIO
    return smf_class_variants_table(folder, "smf_class_steep_", f"--ratio {ratio} --seeds 21 22 23 24")


def smf_class_wide_table(folder: Path = RESULTS) -> str:
    """The same LPARs on the widest week (``--ratio 1.6 --night-share 0.33``), from ``smf_class_wide_<variant>.csv``."""
    run_all = _run_all()
    return smf_class_variants_table(folder, "smf_class_wide_", f"--ratio {run_all.SMF_CLASS_WIDE_RATIO} "
                                    f"--night-share {run_all.SMF_CLASS_WIDE_NIGHT_SHARE} --seeds 21 22 23 24")


def scale_rows(table: pd.DataFrame) -> list[str]:
    """Per size: seconds and peak RSS of decode and marts, locally and on Spark ``local[2]``."""
    rows = ["| LPAR-days | SMF MB | records | decode, local | decode, Spark `local[2]` | marts on DuckDB "
            "| marts on Spark `local[2]` |", "|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        rows.append(f"| {r.days} | {r.mb:,.1f} | {r.records:,} | {r.decode_s:.1f} s, {r.decode_rss:,.0f} MB "
                    f"| {r.sdecode_s:.1f} s, {r.sdecode_rss:,.0f} MB | {r.duck_s:.1f} s, {r.duck_rss:,.0f} MB "
                    f"| {r.spark_s:.1f} s, driver {r.spark_rss:,.0f} MB, JVM {r.jvm_mb:,.0f} MB |")
    return rows


def scale_table(path: Path = SCALE_CSV) -> str:
    """The cost-growth table of ``bench_scale.py``, from the CSV its ``--save`` wrote."""
    return _bench_table(path, scale_rows, "bench_scale.py --save")


def input_memory_rows(table: pd.DataFrame) -> list[str]:
    """Per probe input: the whole process's peak RSS under each label (before the fix, after it, ...) and the goal."""
    labels = list(dict.fromkeys(table["label"]))
    rows = ["| probe | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for probe, got in table.groupby("probe", sort=False):
        cells = []
        for label in labels:
            r = got[got["label"] == label]
            if r.empty:
                cells.append("-")
                continue
            r = r.iloc[0]
            verdict = "goal met" if bool(r["met"]) else "**over the goal**"
            stop = f", {r['stopped']}" if isinstance(r["stopped"], str) and r["stopped"] else ""
            size = f"{r['input_mb']:,.1f} MB" if r["input_mb"] >= 0.1 else "< 0.1 MB"
            cells.append(f"{size} in: {r['peak_rss_mb']:,.0f} MB peak{stop}, exit {r['rc']}, "
                         f"{verdict}")
        rows.append(f"| `{probe}` | " + " | ".join(cells) + " |")
    goal = int(table["goal_mb"].iloc[0])
    rows.append(f"\nGoal: a peak of at most {goal:,} MB for every probe, the process and its children together.")
    return rows


def input_memory_table(path: Path = INPUT_MEMORY_CSV) -> str:
    """The table of ``probe_input_memory.py``, from the CSV its ``--save`` wrote (one column per label)."""
    return _bench_table(path, input_memory_rows, "probe_input_memory.py --save")


def kill_ingest_rows(table: pd.DataFrame) -> list[str]:
    """Per ingest and signal: kills by phase, what the killed runs left, the next ingest's time, failures."""
    kills = table[table["phase"].isin(KILL_PHASES)]
    rows = ["| ingest | clean | signal | kills | " + " | ".join(KILL_PHASES)
            + " | left something for the next | next ingest / clean, worst | failures |",
            "|---|---|---|---|" + "---|" * len(KILL_PHASES) + "---|---|---|"]
    groups = sorted(kills.groupby(["mode", "config", "signal"]), key=lambda g: (g[0][0] != "out", g[0][1:]))
    for (_, ingest, signal), part in groups:
        phases = part["phase"].value_counts()
        left = part[["left_uncommitted", "left_tmp", "left_scratch"]].sum(axis=1) > 0
        rows.append(f"| `{ingest}` | {part['clean_s'].iloc[0]:.2f} s | {signal} | {len(part)} | "
                    + " | ".join(str(int(phases.get(p, 0))) for p in KILL_PHASES)
                    + f" | {int(left.sum())} | {(part['next_s'] / part['clean_s']).max():.1f}x "
                    f"| {int((part['outcome'] != 'ok').sum())} |")
    failures = int((kills["outcome"] != "ok").sum())
    rows.append(f"| all | | {int((kills['signal'] == 'SIGKILL').sum())} SIGKILL, "
                f"{int((kills['signal'] == 'SIGTERM').sum())} SIGTERM | {len(kills)} | "
                + " | ".join(str(int((kills["phase"] == p).sum())) for p in KILL_PHASES)
                + f" | {int((kills[['left_uncommitted', 'left_tmp', 'left_scratch']].sum(axis=1) > 0).sum())} "
                f"| {(kills['next_s'] / kills['clean_s']).max():.1f}x | {failures} |")
    return rows


def kill_ingest_table(path: Path = KILL_INGEST_CSV) -> str:
    """The kill campaign's table (``kill_ingest.py``), from the CSV its ``--save`` wrote."""
    return _bench_table(path, kill_ingest_rows, "kill_ingest.py --save benchmarks/results/kill_ingest.csv")


def _run_all():
    """``run_all.py``, the list of ``make bench``'s benches (loaded by path: this module is also a MkDocs hook)."""
    spec = importlib.util.spec_from_file_location("run_all", Path(__file__).with_name("run_all.py"))
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)
    return run_all


def bench_outputs(folder: Path = RESULTS) -> str:
    """Every bench of ``make bench`` with the standard output its last run kept (``results/<name>.txt``)."""
    parts = []
    for name, title, cmd in _run_all().BENCHES:
        kept = folder / f"{name}.txt"
        parts.append(f"### {title}\n")
        if kept.exists():
            # folded: some benches print hundreds of rows
            output = _indented(f"```\n{kept.read_text(encoding='utf-8').rstrip()}\n```", "    ")
            parts.append(f"??? note \"{_shown(kept)}\"\n{output}\n")
        else:
            parts.append(f"Not run here yet: `python benchmarks/{' '.join(cmd)}` (or `make bench`) keeps its "
                         f"output in `{_shown(kept)}`.\n")
    return "\n".join(parts)


TABLES: dict[str, Callable[[], str]] = {
    "backtest_table": backtest_table,
    "dispatch_grid_table": dispatch_grid_table,
    "dispatch_background_table": dispatch_background_table,
    "dispatch_curves_table": dispatch_curves_table,
    "smf_class_table": smf_class_table,
    "smf_class_variants_table": smf_class_variants_table,
    "smf_class_steep_table": smf_class_steep_table,
    "smf_class_wide_table": smf_class_wide_table,
    "scale_table": scale_table,
    "input_memory_table": input_memory_table,
    "kill_ingest_table": kill_ingest_table,
    "bench_outputs": bench_outputs,
}


def _indented(text: str, indent: str) -> str:
    return "\n".join(indent + line if line else line for line in text.rstrip("\n").split("\n"))


def render(markdown: str) -> str:
    """``markdown`` with every ``{{ name }}`` line of :data:`TABLES` replaced by its table."""
    def table(match: re.Match[str]) -> str:
        indent, name = match.groups()
        return _indented(TABLES[name](), indent) if name in TABLES else match.group(0)

    return MARKER.sub(table, markdown)


def on_page_markdown(markdown: str, **_: object) -> str:
    """MkDocs hook: the page's markers rendered (pages without one are returned unchanged)."""
    return render(markdown) if MARKER.search(markdown) else markdown


if __name__ == "__main__":
    for name, table in TABLES.items():
        print(f"##### {name}\n{table()}")
