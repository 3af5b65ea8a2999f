"""``kneecap report``: the command's checks and messages around :func:`kneecap.report.capacity_report`."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def run_cli(args: argparse.Namespace, *, load_champions: Callable[[str], Any]) -> int:
    """What ``kneecap report`` does: the report of ``args.workload`` written to ``args.out``.

    ``load_champions`` gives the workload's champion models (the CLI's registry loader) or raises
    :class:`LookupError` naming what is missing. Exit codes: 0 written, 1 the forecast could not
    answer, 2 a wrong request (output not ``.html``, no marts, no champion, a load or SLO out of
    range), each with one line on stderr.
    """
    out = Path(args.out)
    if out.suffix.lower() not in (".html", ".htm", ".pdf"):
        print(f"report: {out}: output must end in .html or .pdf", file=sys.stderr)
        return 2
    browser = None
    if out.suffix.lower() == ".pdf":
        browser = pdf_browser()
        if browser is None:
            print(f"report: {out}: a PDF is printed by chromium, which is not on PATH (Debian: apt-get install "
                  "chromium; or set KNEECAP_CHROMIUM); write .html instead", file=sys.stderr)
            return 2
    from kneecap import config, policies, tracking, warehouse

    try:
        params = config.load_params(args.params)
    except (OSError, ValueError) as exc:
        print(f"report: {args.params}: {exc}", file=sys.stderr)
        return 2
    try:
        snapshot = warehouse.read_snapshot(args.marts)
    except (OSError, ValueError) as exc:
        print(f"report: {args.marts}: {exc}", file=sys.stderr)
        return 2
    if "fct_measurements" not in snapshot.tables:
        print(f"report: {args.marts}: no published marts (run `make run`, or name the folder with --marts)",
              file=sys.stderr)
        return 2
    lock = Path(args.lock)
    lock_text = lock.read_text(encoding="utf-8") if lock.is_file() else None
    tracking.configure(args.tracking_uri)
    try:
        models = load_champions(args.workload)
    except LookupError as exc:
        print(f"report: {exc.args[0]}", file=sys.stderr)
        return 2
    from kneecap.modeling import ModelError
    from kneecap.modeling.engines import ENGINE_KEYS
    from kneecap.report import capacity_report
    from kneecap.report.content import ReportRequestError

    try:
        html = capacity_report(models, registry=tracking.registered_models(), marts=snapshot.tables,
                               policy=policies.planner_policy(params), growth=policies.growth_policy(params),
                               load=args.load, slo_resp_ms=args.slo_ms, generation=snapshot.generation,
                               configuration={"n_gcp": args.n_gcp, "n_ziip": args.n_ziip,
                                              "think_time_ms": args.think_time_ms, "bg_load_factor": args.other_load,
                                              **{key: getattr(args, key) for key in ENGINE_KEYS}},
                               lock_text=lock_text)
    except ReportRequestError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    except ModelError as exc:
        print(f"report: {args.workload}: not answered: {exc}", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    if browser is not None:
        try:
            print_pdf(html, out, browser)
        except (OSError, subprocess.SubprocessError) as exc:
            print(f"report: {out}: chromium did not print the PDF: {exc}", file=sys.stderr)
            return 1
        print(f"report: {args.workload} -> {out} ({out.stat().st_size / 1e6:.1f} MB, printed by {browser})")
        return 0
    out.write_text(html, encoding="utf-8")
    print(f"report: {args.workload} -> {out} ({len(html.encode('utf-8')) / 1e6:.1f} MB, one file, opens offline)")
    return 0


def pdf_browser() -> str | None:
    """The chromium that prints a report to PDF: ``$KNEECAP_CHROMIUM``, else ``chromium`` on PATH."""
    return os.environ.get("KNEECAP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def print_pdf(html: str, out: Path, browser: str, *, timeout_s: float = 120.0) -> None:
    """Print the report ``html`` to ``out`` with headless chromium, as its print view lays it out.

    The page's scripts (the inlined plotly.js drawing the charts) run before printing
    (``--virtual-time-budget``); the HTML is written next to ``out`` and removed after, so nothing
    is fetched. The PDF is written to a temporary name and renamed: a failed print leaves no file.
    """
    with tempfile.TemporaryDirectory(prefix=".kneecap-report-", dir=out.parent) as scratch:
        page, pdf = Path(scratch) / "report.html", Path(scratch) / "report.pdf"
        page.write_text(html, encoding="utf-8")
        command = [browser, "--headless", "--disable-gpu", "--no-pdf-header-footer", "--virtual-time-budget=20000",
                   f"--user-data-dir={scratch}/profile", f"--print-to-pdf={pdf}", page.as_uri()]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.insert(1, "--no-sandbox")  # chromium refuses root without it; the page is our own file
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
        if done.returncode != 0 or not pdf.is_file() or pdf.stat().st_size == 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise subprocess.SubprocessError(f"exit {done.returncode}: {last}")
        os.replace(pdf, out)
