"""Shared fixtures: a small, hand-made reference folder in the bundled format."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from hypothesis import settings

from kneecap import schema
from kneecap.warehouse import SOURCES_COLUMNS

REPO = Path(__file__).resolve().parents[1]

# `make test` must give the same verdict on every machine, so property tests draw a fixed sequence of
# examples; `make explore` (KNEECAP_HYPOTHESIS=explore) draws fresh random examples to hunt for new ones.
settings.register_profile("repro", derandomize=True, database=None)
settings.register_profile("explore", max_examples=1000)
settings.load_profile(os.environ.get("KNEECAP_HYPOTHESIS", "repro"))


@pytest.fixture(scope="session")
def app_project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The desk's test project (``tests/app/conftest.build_project``), built once per worker: the desk's
    pages, the capacity reports, ``kneecap`` on the command line and the browser read the same marts and
    registry; the env vars that point them at it."""
    from tests.app.conftest import build_project  # mlflow and the models: only where a test asks for it

    return build_project(tmp_path_factory.mktemp("app_project"))


def write_reference_csv(path: Path, rows: list[dict[str, object]]) -> Path:
    """Write rows in the exact reference header; missing cells stay empty."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=schema.REFERENCE_CSV_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    return path


def closed_rows(source_id: str = "demo_closed") -> list[dict[str, object]]:
    """Five closed-workload points that satisfy Little's law: N = X (R + Z) exactly."""
    rows = []
    for clients, resp_ms in [(10, 1.0), (20, 1.2), (30, 1.5), (40, 2.5), (50, 4.0)]:
        tps = clients / ((resp_ms + 200.0) / 1000.0)
        rows.append(
            {
                "source_id": source_id, "workload": "demo", "point_id": f"c{clients}",
                "clients": clients, "think_time_ms": 200, "tps": round(tps, 6),
                "resp_ms": resp_ms, "n_gcp": 2, "n_ziip": 2, "cpu_gcp_pct": 10 + clients,
                "cpu_ziip_pct": 2 * clients, "source_file": "004_30fd347cf9df2afe.txt",
                "source_locator": "hand-made test table",
            }
        )
    return rows


@pytest.fixture
def reference_dir(tmp_path: Path) -> Path:
    ref = tmp_path / "reference"
    ref.mkdir()
    write_reference_csv(ref / "demo_closed.csv", closed_rows())
    with (ref / "sources.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=SOURCES_COLUMNS)
        writer.writeheader()
        writer.writerow(
            {"source_id": "demo_closed", "source_file": "004_30fd347cf9df2afe.txt",
             "title": "test", "section": "n/a", "table_or_figure": "test table",
             "units": "tps: 1/s; resp_ms: ms", "n_gcp": 2, "n_ziip": 2, "think_time_ms": 200,
             "workload_kind": "closed"}
        )
    return ref
