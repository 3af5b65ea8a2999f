"""Benchmark: desk interaction latency measured with Streamlit's AppTest (goal: p95 <= 200 ms).

Builds a small published project in a temp dir (marts from the bundled tables, a SQLite registry with
seed 004 champions), opens the Knee & what-if page, then times 24 interactions a planner makes:
moving the zIIP, GCP, think-time and what-if-clients sliders (first visits and revisits of a
setting), and SLO changes on the zIIP planner. Each time is one full script rerun.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import build_project

    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(build_project(Path(tmp)))
        at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=300)
        t0 = time.perf_counter()
        at.run()
        first = (time.perf_counter() - t0) * 1000
        moves = ([("knee_n_ziip", v) for v in (3, 4, 2, 3, 4, 2)] + [("knee_n_gcp", v) for v in (3, 2, 3, 2)]
                 + [("knee_think", v) for v in (100, 200, 100, 200)] + [("knee_clients", v) for v in (300, 400, 500, 300)])
        times: list[tuple[str, float]] = []
        for key, value in moves:
            t0 = time.perf_counter()
            at.slider(key=key).set_value(value).run()
            times.append((f"{key}={value}", (time.perf_counter() - t0) * 1000))
            assert not at.exception, at.exception
        at.switch_page("app_pages/planner.py").run()
        for slo in (2.0, 1.5, 3.0, 2.0, 1.5, 3.0):
            t0 = time.perf_counter()
            at.number_input(key="plan_slo").set_value(slo).run()
            times.append((f"plan_slo={slo}", (time.perf_counter() - t0) * 1000))
            assert not at.exception, at.exception
    values = sorted(t for _, t in times)
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    print(f"first page load (models from the registry, cold caches): {first:8.0f} ms")
    for name, t in times:
        print(f"  {name:22} {t:8.1f} ms")
    print(f"interactions: n = {len(values)}, median {statistics.median(values):.0f} ms, p95 {p95:.0f} ms "
          f"(goal <= 200 ms: {'met' if p95 <= 200 else 'MISSED'})")


if __name__ == "__main__":
    main()
