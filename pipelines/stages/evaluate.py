"""DVC stage `evaluate`: run the bundled backtest cases and record their errors as metrics.

Usage: evaluate.py --cases DIR --out FILE --params FILE
Writes the `kneecap backtest` JSON plus, per case and target, the MAPE against the goal of its
kind (`kneecap.backtest.goal_kind`) in params.yaml `evaluate`; a target no goal covers gets none.
Missing a goal is reported, not fatal: the numbers are the result.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kneecap import backtest, config, policies
from kneecap.training import modeling_config


def main(argv: list[str] | None = None) -> int:
    """Run the stage; 0 when the metrics are written, 2 for a malformed case or bad params."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", required=True, help="folder of backtest cases")
    parser.add_argument("--out", required=True, help="metrics JSON")
    parser.add_argument("--params", required=True, help="params.yaml")
    args = parser.parse_args(argv)
    try:
        params = config.load_params(args.params)
    except (OSError, ValueError) as exc:  # one line naming the file and the problem, not a traceback
        print(f"evaluate: {exc}", file=sys.stderr)
        return 2
    policy = policies.planner_policy(params)
    try:
        cases = backtest.load_cases([args.cases])
    except backtest.CaseError as exc:
        print(f"evaluate: {exc}", file=sys.stderr)
        return 2
    results = [backtest.run_case(c, modeling_config(params), policy) for c in cases]
    print(backtest.format_table(results, params.evaluate.goal_pct))
    metrics = {}
    for r in results:
        entry = {}
        for target, t in r.targets.items():
            goal = params.evaluate.goal_pct(t.get("goal"))
            entry[f"{target}_mape_pct"] = t["mape"]
            entry[f"{target}_goal_pct"] = goal
            entry[f"{target}_meets_goal"] = backtest.meets_goal(t["mape"], goal)
        entry["questions_ok"] = sum(bool(q["ok"]) for q in r.questions)
        entry["questions"] = len(r.questions)
        metrics[r.name] = entry
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"summary": metrics, "cases": [r.to_dict() for r in results]},
                                         indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
