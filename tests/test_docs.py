"""The docs: `mkdocs build --strict` passes offline, the API pages come from the docstrings, the
generated tables come from the benches' own output files, and the README stays short with its two
commands."""

from __future__ import annotations

import html
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]


def _report_tables():
    spec = importlib.util.spec_from_file_location("report_tables", REPO / "benchmarks" / "report_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--site-dir", str(out)],
                            cwd=REPO, capture_output=True, text=True, timeout=600,
                            env={"PATH": str(Path(sys.executable).parent), "NO_MKDOCS_2_WARNING": "1",
                                 "HOME": str(out)})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
    return out


@pytest.mark.slow
def test_mkdocs_build_strict_writes_every_page(site: Path) -> None:
    for page in ("index", "own-data", "cli", "desk", "report", "results", "bands", "backtests", "benchmarks", "models",
                 "smf", "pipeline", "cluster", "factors", "layout"):
        assert (site / f"{page}.html").is_file(), page
    # no marker of benchmarks/report_tables.py left unrendered
    for page in site.rglob("*.html"):
        assert "{{" not in page.read_text(encoding="utf-8"), page


@pytest.mark.slow
def test_api_pages_are_the_docstrings(site: Path) -> None:
    from kneecap import forecasting, growth

    page = (site / "reference" / "forecasting.html").read_text(encoding="utf-8")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    # each module's own summary line, as mkdocstrings rendered it from the source
    for module in (forecasting, growth):
        summary = module.__doc__.strip().splitlines()[0].split("`")[0].strip()[:40]
        assert summary and summary in text, summary


@pytest.mark.slow
def test_the_backtest_table_is_the_evaluate_stage_output(site: Path) -> None:
    html = (site / "backtests.html").read_text(encoding="utf-8")
    cases = json.loads((REPO / "reports" / "metrics" / "backtest.json").read_text(encoding="utf-8"))["cases"]
    for case in cases:
        for target, scored in case["targets"].items():
            if scored["mape"] is not None:
                row = re.search(rf"{re.escape(case['name'])}\s+\S+\s+{target}\s+\d+\s+([\d.]+)", html)
                assert row, (case["name"], target)
                assert float(row.group(1)) == pytest.approx(scored["mape"], abs=0.005)


def test_dispatch_grid_rows_count_and_average_the_saved_errors() -> None:
    table = pd.DataFrame({
        "busy_pct": [50.0, 80.0, 90.0, 60.0],
        "load": ["closed", "open", "open", "open"],
        "honor": ["NO", "NO", "NO", "YES"],
        "n_ziip": [1, 2, 2, 0],
        "sim_spill_pct": [0.0, 0.0, 0.0, 100.0],
        "err_pct": [-2.0, 12.0, 30.0, 4.0],
    })
    rows = _report_tables().dispatch_grid_rows(table)
    by_label = {row.split(" | ")[0].lstrip("| "): row for row in rows[2:]}
    # three points at <= 85 % busy: |errors| 2, 12, 4 -> mean 6.0, median 4.0, worst 12.0, 2 within 10 %
    assert by_label["all"] == "| all | 3 | 6.0 % | 4.0 % | 12.0 % | 2 | 3 |"
    assert by_label["all, total busy <= 95 %"] == "| all, total busy <= 95 % | 4 | 12.0 % | 8.0 % | 30.0 % | 2 | 3 |"
    assert by_label["closed, honor NO (exact MVA)"].startswith("| closed, honor NO (exact MVA) | 1 | 2.0 %")
    assert by_label["no zIIP"] == "| no zIIP | 1 | 4.0 % | 4.0 % | 4.0 % | 1 | 1 |"


def test_a_marker_in_a_list_item_keeps_its_indent_and_a_missing_file_says_so(tmp_path: Path) -> None:
    tables = _report_tables()
    text = tables.render("- item\n\n    {{ dispatch_grid_table }}\n\nafter {{ unknown }}\n")
    table_lines = [line for line in text.splitlines() if line.lstrip().startswith("|")]
    assert len(table_lines) == 9 and all(line.startswith("    |") for line in table_lines)
    assert text.endswith("after {{ unknown }}\n")
    assert "`make bench` writes it" in tables.dispatch_grid_table(tables.RESULTS / "none.csv")
    assert "`make pipeline` writes it" in tables.backtest_table(tmp_path / "backtest.json")


def test_readme_is_short_and_keeps_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    assert "make run    # set up .venv" in readme and "make test   # set up .venv" in readme
    assert "make run PORT=8600" in readme
    assert readme.count("**What a band means.**") == 1
    # every docs page the README sends a reader to exists
    for link in re.findall(r"\]\((docs/[^)]+)\)", readme):
        assert (REPO / link).is_file(), link


def test_scale_rows_put_each_engine_beside_its_peak_memory() -> None:
    table = pd.DataFrame([{"days": 10, "mb": 115.3, "records": 78720, "decode_s": 1.1, "decode_rss": 159.0,
                           "sdecode_s": 16.1, "sdecode_rss": 320.0, "duck_s": 1.2, "duck_rss": 424.0,
                           "spark_s": 27.0, "spark_rss": 318.0, "jvm_mb": 1273.0}])
    row = _report_tables().scale_rows(table)[2]
    assert row == ("| 10 | 115.3 | 78,720 | 1.1 s, 159 MB | 16.1 s, 320 MB | 1.2 s, 424 MB "
                   "| 27.0 s, driver 318 MB, JVM 1,273 MB |")


def test_every_bench_of_make_bench_is_listed_with_its_kept_output_or_a_note(tmp_path: Path) -> None:
    tables = _report_tables()
    (tmp_path / "modeling.txt").write_text("# python benchmarks/bench_modeling.py\nwhat-if 1.2 ms\n", encoding="utf-8")
    text = tables.bench_outputs(tmp_path)
    assert "    what-if 1.2 ms" in text  # kept output, folded under its note
    assert text.count("### ") == text.count("??? note") + text.count("Not run here yet")
    assert "Not run here yet: `python benchmarks/bench_scale.py --save benchmarks/results/scale.csv`" in text


def test_variant_rows_name_seeds_that_share_a_knee_date_range_together() -> None:
    seeds = pd.DataFrame({"seed": [21, 22, 23], "peak_mape_pct": [4.81, 1.9, 1.24],
                          "peaks_in_band": ["4/4", "3/4", "4/4"], "knee_err_pct": [0.3, -0.26, 0.31],
                          "knee_in": [True, False, True], "date_true": ["2026-03-14"] * 3,
                          "date_band": ["2026-03-13..2026-03-15", "2026-03-13..2026-03-16", "2026-03-13..2026-03-15"]})
    row = _report_tables().smf_class_variants_rows({"burst": seeds})[2]
    assert row == ("| burst | 21 / 22 / 23 | 4.8 / 1.9 / 1.2 % | 4, 3, 4 of 4 | +0.3 / -0.3 / +0.3 % | 2 of 3 "
                   "| 03-13..03-15 (21, 23); 03-13..03-16 (22) (2026-03-14) |")


def test_input_memory_rows_put_each_label_beside_the_others_and_flag_a_peak_over_the_goal() -> None:
    rows = [{"label": label, "probe": "vbs_chain", "input_mb": 104.8, "rc": 0, "seconds": 1.0, "peak_rss_mb": rss,
             "stopped": stopped, "last_stderr": "", "goal_mb": 500, "met": met}
            for label, rss, stopped, met in (("before", 3018, "stopped at the 3000 MB cap", False),
                                             ("after", 152, float("nan"), True))]
    out = _report_tables().input_memory_rows(pd.DataFrame(rows))
    assert out[0] == "| probe | before | after |"
    assert out[2] == ("| `vbs_chain` | 104.8 MB in: 3,018 MB peak, stopped at the 3000 MB cap, exit 0, "
                      "**over the goal** | 104.8 MB in: 152 MB peak, exit 0, goal met |")
