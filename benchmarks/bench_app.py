"""Benchmark: how long the desk takes to answer a widget change, measured with Streamlit's AppTest.

Each interaction is one ``set_value(...).run()``: the whole page script reruns, as it does in the
browser after a slider moves (network and browser drawing not included). Values are drawn so that
about half are new (cache miss: the model is re-evaluated) and half were seen before (cache hit).
Goal (issue 5): p95 <= 200 ms per page interaction.

The project is built in a temp folder the way ``tests/app`` builds it (marts from the bundled
tables, a SQLite MLflow registry with the seed-004 model as champion), unless ``--project-env``
says to use the environment's ``KNEECAP_MARTS`` / ``MLFLOW_TRACKING_URI`` (e.g. after ``make run``).

Usage: python benchmarks/bench_app.py [--n 20] [--seed 0] [--project-env]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app" / "streamlit_app.py")
GOAL_P95_MS = 200.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def _time(action: Callable[[], object], at) -> float:
    t0 = time.perf_counter()
    action()
    ms = (time.perf_counter() - t0) * 1000.0
    if at.exception:
        raise RuntimeError(f"the page raised: {at.exception[0].value}")
    return ms


def _values(rng: random.Random, choices: list, n: int) -> list[tuple[object, bool]]:
    """n (value, first_visit) pairs: about half revisit an earlier value (a cache hit), half are new."""
    seen: list = []
    out = []
    for _ in range(n):
        if seen and rng.random() < 0.5:
            out.append((rng.choice(seen), False))
        else:
            v = rng.choice([c for c in choices if c not in seen] or choices)
            seen.append(v)
            out.append((v, True))
    return out


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="kneecap-bench-app-") as tmp:
        return run(Path(tmp))


def run(tmp: Path) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20, help="interactions per widget (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--project-env", action="store_true", help="use the environment's marts and registry")
    args = parser.parse_args()
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

    if not args.project_env:
        sys.path.insert(0, str(ROOT))
        from tests.app.conftest import build_project  # noqa: PLC0415 - the same project the AppTests use

        t0 = time.perf_counter()
        os.environ.update(build_project(tmp))
        print(f"project built in {time.perf_counter() - t0:.1f} s (fit, register, promote)")

    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    rng = random.Random(args.seed)
    n = args.n
    t0 = time.perf_counter()
    at = AppTest.from_file(APP, default_timeout=120).run()
    print("first page load (imports, model load from the registry, first curve): "
          f"{(time.perf_counter() - t0) * 1000:.0f} ms")
    if at.exception:
        print(f"the app raised: {at.exception[0].value}")
        return 1

    results: dict[str, list[tuple[float, bool]]] = {}

    def measure(label: str, widget: Callable[[], object], values: list[tuple[object, bool]]) -> None:
        results[label] = [(_time(lambda v=v: widget().set_value(v).run(), at), new) for v, new in values]

    measure("knee: zIIP slider", lambda: at.slider(key="knee_n_ziip"), _values(rng, list(range(1, 9)), n))
    measure("knee: GCP slider", lambda: at.slider(key="knee_n_gcp"), _values(rng, list(range(1, 7)), n))
    measure("knee: think-time slider", lambda: at.slider(key="knee_think"), _values(rng, list(range(0, 1001, 10)), n))
    measure("knee: curve max-load slider", lambda: at.slider(key="knee_max_clients"),
            _values(rng, list(range(300, 3001, 50)), n))
    measure("knee: what-if clients slider", lambda: at.slider(key="knee_clients"), _values(rng, list(range(1, 300)), n))

    at.switch_page("app_pages/planner.py").run()
    measure("planner: target clients", lambda: at.number_input(key="plan_clients"),
            _values(rng, list(range(100, 1001, 25)), n))
    measure("planner: SLO", lambda: at.number_input(key="plan_slo"), _values(rng, [0.5 * i for i in range(2, 21)], n))

    at.switch_page("app_pages/workloads.py").run()
    names = list(at.selectbox(key="wl_workload").options)
    measure("workloads: choose workload", lambda: at.selectbox(key="wl_workload"), _values(rng, names, n))

    at.switch_page("app_pages/models.py").run()
    models = list(at.selectbox(key="promote_name").options)
    measure("models: choose model", lambda: at.selectbox(key="promote_name"), _values(rng, models, n))

    pages = ["app_pages/knee.py", "app_pages/planner.py", "app_pages/workloads.py", "app_pages/models.py",
             "app_pages/data.py"]
    results["switch page"] = [(_time(lambda p=p: at.switch_page(p).run(), at), new)
                              for p, new in _values(rng, pages, n)]

    def row(label: str, times: list[float]) -> str:
        if not times:
            return f"{label:34s}   0"
        p95 = _percentile(times, 95)
        return (f"{label:34s} {len(times):3d} {statistics.median(times):8.1f} {p95:8.1f} {max(times):8.1f}  "
                f"{'ok' if p95 <= GOAL_P95_MS else 'MISSED'}")

    print(f"\n{'interaction':34s} {'n':>3s} {'p50 ms':>8s} {'p95 ms':>8s} {'max ms':>8s}  "
          f"goal p95 <= {GOAL_P95_MS:.0f} ms")
    for label, timed in results.items():
        print(row(label, [t for t, _ in timed]))
    every = [pair for timed in results.values() for pair in timed]
    print(row("all interactions", [t for t, _ in every]))
    print(row("  first visit of a value", [t for t, new in every if new]))
    print(row("  revisit (cached)", [t for t, new in every if not new]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
