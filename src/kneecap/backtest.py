"""``kneecap backtest``: fit on a case's train rows, predict its held-out test rows, answer its questions.

The case contract (public; keep it stable):

* a **case** is a directory with ``measurements.csv`` and ``case.yaml``;
* ``measurements.csv`` has a ``split`` column (``train`` | ``test``) plus any canonical columns of
  ``fct_measurements`` and any extra factor columns;
* ``case.yaml`` has ``name``, ``source``, ``targets`` (columns predicted on test rows) and optional
  ``questions``: ``min_ziip: {clients, think_time_ms, n_gcp, slo_resp_ms, expect}`` or
  ``knee_clients: {n_gcp, n_ziip, think_time_ms, expect_range: [lo, hi]}``;
* instead of a ``split`` column a case may give ``rolling_origin: {order_by, first_train, step}``:
  the rows in ``order_by`` order are split at every origin ``k = first_train, first_train + step,
  ...`` (train on the first ``k``, test on all the rest), each origin a case ``<name>@<k>``
  (:func:`expand_origins`); a forecast is always of later load or later time.

Each target is predicted for every test row from that row's non-target columns. Reading the case is
the only I/O here; :func:`run_case` is pure.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from kneecap import modeling
from kneecap.limits import InputError, load_yaml, read_text
from kneecap.modeling import ModelError, ModelingConfig
from kneecap.modeling.base import column_or, mape_pct, to_jsonable
from kneecap.modeling.select import COST_TARGETS, RESPONSE_TARGETS
from kneecap.modeling.usl import naive_usl_params, usl_tps
from kneecap.schema import NUMERIC_COLUMNS

#: CPU by engine type, APPL% (RMF's CP, IIP, IIP + IIPCP, IIPCP): predicted by the response model's
#: pools (zIIP/GCP dispatch) or, for the eligible share, by the cost regression.
SHARE_TARGETS = ("cpu_gcp_pct", "cpu_ziip_pct", "ziip_eligible_pct", "ziip_eligible_on_gcp_pct")
PREDICTABLE_TARGETS = RESPONSE_TARGETS + COST_TARGETS + SHARE_TARGETS

#: What each target's held-out error is judged against (:func:`goal_kind`); the MAPE goals
#: themselves are ``params.yaml`` ``evaluate``
GOAL_KINDS = ("zero_think_tps", "tps", "open_resp", "resp", "cost")

QUESTION_KINDS = ("min_ziip", "knee_clients")
_QUESTION_FIELDS = {
    "min_ziip": ("clients", "think_time_ms", "n_gcp", "slo_resp_ms", "expect"),
    "knee_clients": ("n_gcp", "n_ziip", "think_time_ms", "expect_range"),
}


class CaseError(ValueError):
    """A malformed case directory (the CLI exits 2 with this message)."""


@dataclass
class Case:
    """One backtest case as :func:`load_case` read it: the case.yaml keys and the checked measurements."""

    name: str
    source: str
    targets: tuple[str, ...]
    questions: list[dict[str, Any]]
    measurements: pd.DataFrame
    path: str = ""
    rolling_origin: dict[str, Any] | None = None


PlannerPolicy = modeling.PlannerPolicy


@dataclass
class CaseResult:
    """What :func:`run_case` found: the models fitted, per-target errors on the test rows and the answers."""

    name: str
    model: str
    targets: dict[str, dict[str, Any]]
    questions: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON-ready values (the ``cases`` entries of ``kneecap backtest --json``)."""
        return to_jsonable({"name": self.name, "model": self.model, "targets": self.targets,
                            "questions": self.questions, "notes": self.notes})


def load_case(path: str | Path) -> Case:
    """Read and check one case directory; every problem raises :class:`CaseError` naming the file."""
    path = Path(path)
    yaml_path, csv_path = path / "case.yaml", path / "measurements.csv"
    for p in (yaml_path, csv_path):
        if not p.is_file():
            raise CaseError(f"{path}: missing {p.name} (a case is a directory with case.yaml and measurements.csv)")
    try:
        spec = load_yaml(read_text(yaml_path), str(yaml_path)) or {}
    except InputError as exc:
        raise CaseError(str(exc)) from None
    if not isinstance(spec, dict):
        raise CaseError(f"{yaml_path}: expected a mapping with name, source, targets")
    for key in ("name", "source", "targets"):
        if key not in spec:
            raise CaseError(f"{yaml_path}: missing key '{key}'")
    targets = spec["targets"]
    if isinstance(targets, str):
        targets = [targets]
    if not targets or not all(isinstance(t, str) for t in targets):
        raise CaseError(f"{yaml_path}: targets must be a list of column names")
    try:
        frame = pd.read_csv(csv_path)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise CaseError(f"{csv_path}: cannot be read as CSV: {exc}") from exc
    rolling = _rolling_origin(spec.get("rolling_origin"), frame, yaml_path, csv_path)
    if rolling is None:
        _check_split(frame, csv_path)
    for target in targets:
        # a target no model can predict is an error of that case when it runs, not of the file
        if target not in frame.columns:
            raise CaseError(f"{yaml_path}: target {target!r} is not a column of measurements.csv")
    for column in frame.columns:
        if column in NUMERIC_COLUMNS:
            values = pd.to_numeric(frame[column], errors="coerce")
            bad = values.isna() & frame[column].notna()
            if bad.any():
                line = int(np.nonzero(bad.to_numpy())[0][0]) + 2
                raise CaseError(f"{csv_path}:{line}: {column}: {frame[column][bad].iloc[0]!r} is not a number")
            frame[column] = values
    questions = spec.get("questions") or []
    if not isinstance(questions, list):
        raise CaseError(f"{yaml_path}: questions must be a list")
    parsed = []
    for i, q in enumerate(questions):
        if not isinstance(q, dict) or len(q) != 1 or next(iter(q)) not in QUESTION_KINDS:
            raise CaseError(f"{yaml_path}: questions[{i}] must be one of {', '.join(QUESTION_KINDS)}")
        kind, body = next(iter(q.items()))
        where = f"{yaml_path}: questions[{i}] ({kind})"
        if not isinstance(body, dict):
            raise CaseError(f"{where} must be a mapping of {', '.join(_QUESTION_FIELDS[kind])}, got {body!r}")
        missing = [f for f in _QUESTION_FIELDS[kind] if f not in body]
        if missing:
            raise CaseError(f"{where} lacks {', '.join(missing)}")
        problem = _question_problem(kind, body)
        if problem:
            raise CaseError(f"{where}: {problem}")
        parsed.append({"kind": kind, **body})
    return Case(str(spec["name"]), str(spec["source"]), tuple(targets), parsed, frame, str(path), rolling)


def _check_split(frame: pd.DataFrame, csv_path: Path) -> None:
    if "split" not in frame.columns:
        raise CaseError(f"{csv_path}: missing column 'split' (train | test), or give rolling_origin in case.yaml")
    bad = ~frame["split"].isin(["train", "test"])
    if bad.any():
        line = int(np.nonzero(bad.to_numpy())[0][0]) + 2
        raise CaseError(f"{csv_path}:{line}: split: {frame['split'][bad].iloc[0]!r} is not train or test")
    for split in ("train", "test"):
        if not (frame["split"] == split).any():
            raise CaseError(f"{csv_path}: no {split} rows")


def _rolling_origin(spec: Any, frame: pd.DataFrame, yaml_path: Path, csv_path: Path) -> dict[str, Any] | None:
    """The checked ``rolling_origin`` mapping of a case, or None when the case has a split column."""
    if spec is None:
        return None
    where = f"{yaml_path}: rolling_origin"
    if not isinstance(spec, dict) or set(spec) - {"order_by", "first_train", "step"} or "order_by" not in spec:
        raise CaseError(f"{where} must be a mapping of order_by, first_train and optional step, got {spec!r}")
    if "split" in frame.columns:
        raise CaseError(f"{csv_path}: has a split column and {yaml_path.name} gives rolling_origin: keep one")
    order_by = spec["order_by"]
    if order_by not in frame.columns:
        raise CaseError(f"{where}: order_by {order_by!r} is not a column of {csv_path.name}")
    first, step = spec.get("first_train"), spec.get("step", 1)
    for name, value in (("first_train", first), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CaseError(f"{where}: {name} must be a whole number >= 1, got {value!r}")
    first, step = cast(int, first), cast(int, step)  # checked just above
    if not 2 <= first < len(frame):
        raise CaseError(f"{where}: first_train must leave at least 2 training rows and 1 test row "
                        f"of the {len(frame)}, got {first}")
    return {"order_by": str(order_by), "first_train": first, "step": step}


def expand_origins(case: Case) -> list[Case]:
    """The case itself, or one case per rolling origin (``<name>@<k>``: train on the first ``k`` rows).

    Rows are ordered by ``order_by`` (stable, so ties keep the file's order); every origin tests
    on all the rows after it, so the horizon shrinks as the origin rolls forward (Tashman, L. J.
    (2000), "Out-of-sample tests of forecasting accuracy", *Int. J. Forecasting* 16).
    """
    if case.rolling_origin is None:
        return [case]
    spec = case.rolling_origin
    column = case.measurements[spec["order_by"]]
    key = pd.to_datetime(column, utc=True) if column.dtype == object else column
    ordered = case.measurements.iloc[np.argsort(key.to_numpy(), kind="stable")].reset_index(drop=True)
    out = []
    for k in range(spec["first_train"], len(ordered), spec["step"]):
        frame = ordered.assign(split=np.where(np.arange(len(ordered)) < k, "train", "test"))
        out.append(replace(case, name=f"{case.name}@{k}", measurements=frame, rolling_origin=None))
    return out


def _question_problem(kind: str, body: dict[str, Any]) -> str | None:
    """What is wrong with a question's fields (all present), or None.

    Examples
    --------
    >>> _question_problem("knee_clients", {"n_gcp": 2, "n_ziip": 2, "think_time_ms": 200,
    ...                                    "expect_range": [300, 500]}) is None
    True
    >>> _question_problem("min_ziip", {"clients": "lots", "think_time_ms": 0, "n_gcp": 1,
    ...                                "slo_resp_ms": 1, "expect": 1})
    "clients must be a number, got 'lots'"
    """
    unknown = sorted(set(body) - set(_QUESTION_FIELDS[kind]))
    if unknown:
        return f"unknown field(s) {', '.join(map(str, unknown))}; known: {', '.join(_QUESTION_FIELDS[kind])}"
    for name in _QUESTION_FIELDS[kind]:
        value = body[name]
        if name == "expect_range":
            ok = (isinstance(value, list) and len(value) == 2 and all(_finite(v) for v in value)
                  and value[0] <= value[1])
            if not ok:
                return f"expect_range must be [lo, hi], got {value!r}"
        elif name == "expect":
            if not (_finite(value) and float(value).is_integer() and value >= 0):
                return f"expect must be a whole number of zIIPs, got {value!r}"
        elif not _finite(value) or value < 0:
            return f"{name} must be a number, got {value!r}"
    return None


def _load_column(train: pd.DataFrame) -> str | None:
    """The load a case's rows are measured at: clients for closed tests, tps for open ones."""
    for column in ("clients", "tps"):
        if column in train and np.isfinite(pd.to_numeric(train[column], errors="coerce")).any():
            return column
    return None


def _extrapolation_x(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """Each held-out row's load over the largest training load, as ``kneecap forecast`` reports it.

    Above 1 is beyond the trained range; NaN where the case has no load column.
    """
    column = _load_column(train)
    if column is None or column not in test:
        return np.full(len(test), np.nan)
    top = float(pd.to_numeric(train[column], errors="coerce").max())
    return pd.to_numeric(test[column], errors="coerce").to_numpy(dtype=float) / top


def _rows(actual: np.ndarray, pred: pd.DataFrame, target: str,
          extrapolation_x: np.ndarray | None = None) -> list[dict[str, Any]]:
    """Per held-out row: actual, prediction and band, and how far beyond the trained load it lies.

    Where the model says the load is past what it can carry, the row says so: ``saturated``,
    ``flags: ["beyond_capacity"]`` and the model's capacity with its band. Its prediction is
    ``inf`` and its band ``[lo, inf)`` (``lo`` from the draws that still carry the load), or
    ``[inf, inf]`` when none does; the row stays in the table and in the band count.
    """
    out = []
    for i in range(len(actual)):
        row = {"actual": actual[i], "predicted": pred[target].iloc[i],
               "lo": pred.get(f"{target}_lo", pred[target]).iloc[i],
               "hi": pred.get(f"{target}_hi", pred[target]).iloc[i]}
        if extrapolation_x is not None and math.isfinite(extrapolation_x[i]):
            row["extrapolation_x"] = float(extrapolation_x[i])
        if "saturated" in pred.columns and bool(pred["saturated"].iloc[i]):
            row["saturated"] = True
            row["flags"] = ["beyond_capacity"]
            for key in ("capacity_tps", "capacity_tps_lo", "capacity_tps_hi"):
                if key in pred.columns:
                    row[key] = pred[key].iloc[i]
        out.append(row)
    return out


def run_case(case: Case, config: ModelingConfig, policy: PlannerPolicy) -> CaseResult:
    """Fit on the train rows, predict every target on the test rows, answer the questions."""
    train = case.measurements[case.measurements["split"] == "train"].reset_index(drop=True)
    test = case.measurements[case.measurements["split"] == "test"].reset_index(drop=True)
    wanted_response = [t for t in case.targets if t in RESPONSE_TARGETS + SHARE_TARGETS]
    wanted_cost = [t for t in case.targets if t in COST_TARGETS + ("ziip_eligible_pct",)]
    models: list[str] = []
    notes: list[str] = []
    targets: dict[str, dict[str, Any]] = {}
    response = None
    if wanted_response or case.questions:
        try:
            choice = modeling.choose_response_model(train, config)
            response = choice.results
            models.append(getattr(response, "label", choice.family))
        except ModelError as exc:
            notes.append(f"response model: {exc}")
    cost = None
    if wanted_cost and modeling.has_cost_data(train):
        try:
            cost = modeling.choose_cost_model(train, config).results
            models.append(f"{cost.family}:{cost.design.form}")
        except ModelError as exc:
            notes.append(f"cost model: {exc}")
    for target in case.targets:
        # CPU columns come from the cost regression where it was fitted (measured CPU per
        # transaction), otherwise from the response model's pools
        order = (cost, response) if target in COST_TARGETS + ("ziip_eligible_pct",) else (response, cost)
        model: Any = next((m for m in order if m is not None and target in m.targets), None)
        actual = test[target].to_numpy(dtype=float)
        goal = goal_kind(target, train)
        if model is None:
            fitted = " and ".join(f"{m.family}" for m in (response, cost) if m is not None) or "no model"
            error = (f"{target}: no model fitted to this case predicts it ({fitted}; predictable: "
                     f"{', '.join(PREDICTABLE_TARGETS)})")
            notes.append(error)
            targets[target] = {"mape": None, "error": error, "goal": goal,
                               "rows": [{"actual": a, "predicted": None, "lo": None, "hi": None} for a in actual],
                               **_naive(target, train, test)}
            continue
        # a row's targets are what we predict: hide them from the model
        inputs = test.drop(columns=[t for t in case.targets if t in test.columns])
        if (model is cost and "tps" not in inputs.columns and response is not None
                and "tps" in response.targets):
            # CPU % at a load is cost per transaction x throughput: with the throughput held out,
            # the response model's predicted throughput is what a planner would multiply by
            try:
                inputs = inputs.assign(tps=response.predict(inputs)["tps"].to_numpy())
            except ModelError as exc:
                notes.append(f"{target}: throughput for the cost model: {exc}")
        try:
            pred = model.predict(inputs).reset_index(drop=True)
        except ModelError as exc:
            notes.append(f"{target}: {exc}")
            targets[target] = {"mape": None, "goal": goal, "rows": []}
            continue
        # a row beyond the fitted capacity has no finite prediction to take a percentage of: it is
        # out of the MAPE (counted beside it), in the band count with its one-sided band
        mape = mape_pct(actual, pred[target].to_numpy())
        rows = _rows(actual, pred, target, _extrapolation_x(train, test))
        targets[target] = {"mape": mape if math.isfinite(mape) else None, "goal": goal, "rows": rows}
        beyond = sum(1 for row in rows if row.get("saturated"))
        if beyond:
            targets[target]["n_beyond_capacity"] = beyond
        flags = list(getattr(model, "flags", ()))
        if flags:
            targets[target]["flags"] = flags
            notes.append(f"{target}: {', '.join(flags)}: {model.summary()}")
        targets[target].update(_naive(target, train, test))
        members = model.member_errors(inputs, actual, target)
        if members is not None:
            targets[target]["members"] = members
    answers = [_answer(q, response, policy) for q in case.questions]
    return CaseResult(case.name, "+".join(models) or "none", targets, answers, notes)


def _zero_think_curve(train: pd.DataFrame) -> bool:
    """Throughput against concurrency with no think time: the curves the USL is fitted to."""
    clients = column_or(train, "clients", np.nan)
    think = column_or(train, "think_time_ms", 0.0)
    return bool(np.isfinite(clients).all() and len(np.unique(clients)) >= 3 and np.all(think == 0))


def goal_kind(target: str, train: pd.DataFrame) -> str | None:
    """Which of :data:`GOAL_KINDS` a target's held-out MAPE is judged against, None where none is set.

    ``zero_think_tps``: throughput of a zero-think curve (:func:`_zero_think_curve`), forecast
    beyond the concurrency it was measured at (issue #12: 8 %); ``tps``: any other throughput
    (issue #10: 5 %); ``open_resp``: response of an open case, whose load is its arrival rate
    (no ``clients``; issue #12: 35 %); ``resp``: response of a closed load test (issue #10: 25 %);
    ``cost``: CPU per transaction, CPU busy and the CPU shares by engine type (issue #12: 5 %).
    """
    if target == "tps":
        return "zero_think_tps" if _zero_think_curve(train) else "tps"
    if target == "resp_ms":
        return "open_resp" if _load_column(train) == "tps" else "resp"
    if target in COST_TARGETS + SHARE_TARGETS:
        return "cost"
    return None


def meets_goal(mape: float | None, goal_pct: float | None) -> bool | None:
    """Whether a held-out MAPE is within its goal: None without a goal, False without a MAPE."""
    return None if goal_pct is None else mape is not None and mape <= goal_pct


def _naive(target: str, train: pd.DataFrame, test: pd.DataFrame) -> dict[str, Any]:
    """The baseline a model must beat on the same split, and its held-out MAPE.

    Zero-think throughput curves: a plain ``curve_fit`` of the USL
    (:func:`~kneecap.modeling.usl.naive_usl_params`; ``naive_mape`` None when it does not converge).
    Every other target: the mean of the training rows, predicted flat (what "next month looks like
    this month" gives).
    """
    actual = test[target].to_numpy(dtype=float)
    if target == "tps" and _zero_think_curve(train):
        params = naive_usl_params(train["clients"].to_numpy(dtype=float), train["tps"].to_numpy(dtype=float))
        mape = (None if params is None
                else mape_pct(actual, usl_tps(test["clients"].to_numpy(dtype=float), *params)))
        return {"naive": "usl_curve_fit", "naive_mape": mape}
    known = train[target].to_numpy(dtype=float)
    known = known[np.isfinite(known)]
    if not len(known):
        return {"naive": "train_mean", "naive_mape": None}
    return {"naive": "train_mean", "naive_mape": mape_pct(actual, np.full(len(actual), known.mean()))}


def _answer(q: dict[str, Any], response: Any, policy: PlannerPolicy) -> dict[str, Any]:
    kind = q["kind"]
    # a case's questions are checked when it is read (every kind has its expect or expect_range)
    expect: Any = q["expect"] if "expect" in q else q["expect_range"]
    if response is None or not (response.pools and response.load_unit == "clients"):
        return {"kind": kind, "expect": expect, "answer": None, "ok": False,
                "detail": "needs a closed-workload model (clients varying in the train rows)"}
    if kind == "min_ziip":
        plan = modeling.plan_ziip(response, clients=float(q["clients"]), think_time_ms=float(q["think_time_ms"]),
                                  n_gcp=int(q["n_gcp"]), slo_resp_ms=float(q["slo_resp_ms"]),
                                  policy=replace(policy, max_added_gcp=0))
        return {"kind": kind, "expect": expect, "answer": plan.n_ziip, "ok": plan.n_ziip == int(expect),
                "detail": plan.reason}
    knee = response.knee(n_gcp=int(q["n_gcp"]), n_ziip=int(q["n_ziip"]),
                         think_time_ms=float(q["think_time_ms"]), k=policy.knee_k)
    lo, hi = (float(v) for v in expect)
    answer = knee.load
    return {"kind": kind, "expect": [lo, hi], "answer": answer,
            "ok": bool(math.isfinite(answer) and lo <= answer <= hi),
            "detail": (f"response exceeds {policy.knee_k:g}x unloaded at {knee.load:.0f} clients "
                       f"[{knee.load_lo:.0f}, {knee.load_hi:.0f}]; saturation N* = "
                       f"{knee.saturation:.0f} [{knee.saturation_lo:.0f}, {knee.saturation_hi:.0f}]")}


def _pct(value: Any) -> str:
    return f"{value:.2f}" if _finite(value) else "-"


def _bound(value: Any) -> bool:
    """A band end: a number, infinite allowed (a band open above), not NaN or missing."""
    return (not isinstance(value, bool) and isinstance(value, (int, float)) and not math.isnan(value))


def _finite(value: Any) -> bool:
    return (not isinstance(value, bool) and value is not None and isinstance(value, (int, float))
            and math.isfinite(value))


def format_table(results: list[CaseResult],
                 goal_pct: Callable[[str | None], float | None] | None = None) -> str:
    """The human-readable error table (also rendered into docs/backtests.md).

    With ``goal_pct`` (a goal kind of :func:`goal_kind` to its MAPE goal, as
    :meth:`kneecap.config.EvaluateConfig.goal_pct`) each row shows its goal and whether it is met.
    """
    # the model column is as wide as its longest label (a combination names every member)
    mw = max([28] + [len(r.model) for r in results])
    goal_head = f"  {'goal %':>6} {'met':>3}" if goal_pct else ""
    lines = [f"{'case':34} {'model':{mw}} {'target':24} {'n':>3} {'MAPE %':>8}{goal_head}  {'in band':>7}"
             f"  {'naive %':>8}  {'x trained':>9}"]
    inside_all = banded_all = 0
    # coverage within and beyond the trained load: a band is the fit's uncertainty, and whether it
    # still holds where the model extrapolates is what a planner asking about next year needs
    by_range = {"within": [0, 0], "beyond": [0, 0]}
    for r in results:
        for target, t in r.targets.items():
            rows = t["rows"]
            # a band may be open above (a load beyond the fitted capacity: [lo, inf)), never NaN
            banded = [row for row in rows if row["predicted"] is not None and _bound(row["lo"]) and _bound(row["hi"])]
            inside = sum(1 for row in banded if row["lo"] <= row["actual"] <= row["hi"])
            mape = "-" if t["mape"] is None else f"{t['mape']:8.2f}"
            # an exactly determined fit has no residual variance and so no interval
            band = f"{inside:>3}/{len(banded):<3}" if banded else "no band"
            inside_all, banded_all = inside_all + inside, banded_all + len(banded)
            for row in banded:
                x = row.get("extrapolation_x")
                if x is not None:
                    tally = by_range["beyond" if x > 1 + 1e-9 else "within"]
                    tally[0] += int(row["lo"] <= row["actual"] <= row["hi"])
                    tally[1] += 1
            naive = t.get("naive_mape")
            naive = "-" if naive is None else f"{naive:8.2f}"
            xs = [row["extrapolation_x"] for row in rows if row.get("extrapolation_x") is not None]
            reach = f"{min(xs):.2f}-{max(xs):.2f}" if xs else "-"
            goal = goal_pct(t.get("goal")) if goal_pct else None
            met = {None: "-", True: "yes", False: "no"}[meets_goal(t["mape"], goal)]
            goal_cells = f"  {'-' if goal is None else f'{goal:6.1f}':>6} {met:>3}" if goal_pct else ""
            lines.append(f"{r.name:34} {r.model:{mw}} {target:24} {len(rows):>3} {mape:>8}{goal_cells}  {band:7}"
                         f"  {naive:>8}  {reach:>9}")
            members = t.get("members")
            if members:
                ms = members.values()
                lines.append(f"{r.name:34} note: {target}: weights {' / '.join(members)} "
                             + " / ".join(f"{m['weight']:.2f}" for m in ms)
                             + "; rolling-origin MAPE on train "
                             + " / ".join(_pct(m["rolling_origin_mape"]) for m in ms)
                             + "; each alone held out " + " / ".join(_pct(m["mape"]) for m in ms))
            saturated = [row for row in rows if row.get("saturated")]
            if saturated:
                cap, lo, hi = (saturated[0].get(k) for k in ("capacity_tps", "capacity_tps_lo", "capacity_tps_hi"))
                inside = sum(1 for row in saturated if _bound(row["lo"]) and row["lo"] <= row["actual"] <= row["hi"])
                lines.append(f"{r.name:34} note: {target}: {len(saturated)} held-out row(s) beyond the fitted "
                             "capacity (beyond_capacity: predicted saturated; out of the MAPE, "
                             f"in the band count, {inside} inside)"
                             + (f"; capacity {cap:.4g} tps" if _finite(cap) else "")
                             + (f" [{lo:.4g}, {hi:.4g}]" if _finite(lo) and _finite(hi) else ""))
        for q in r.questions:
            answer = "-" if q["answer"] is None else (f"{q['answer']:.0f}" if isinstance(q["answer"], float)
                                                      else str(q["answer"]))
            lines.append(f"{r.name:34} {'question ' + q['kind']:{mw}} expect {q['expect']!s:>17} -> {answer:>5} "
                         f"{'ok' if q['ok'] else 'MISSED'}")
        for note in r.notes:
            lines.append(f"{r.name:34} note: {note}")
    if goal_pct:
        lines.append("goal %: the MAPE goal for what the row predicts (params.yaml evaluate); met: MAPE within it")
    lines.append("naive: a plain curve_fit of the USL for zero-think throughput, else the training rows' mean")
    lines.append("x trained: the held-out rows' load over the largest training load (above 1: extrapolated)")
    if any(row.get("saturated") for r in results for t in r.targets.values() for row in t["rows"]):
        lines.append("beyond_capacity: a load the model says it cannot carry (prediction inf, band [lo, inf)); "
                     "out of the MAPE, in the band count")
    if banded_all:
        lines.append(f"held-out rows inside their 95 % band: {inside_all} of {banded_all} "
                     f"({100.0 * inside_all / banded_all:.0f} %)")
        for where, (inside, n) in by_range.items():
            if n:
                lines.append(f"  {where} the trained load: {inside} of {n} ({100.0 * inside / n:.0f} %)")
    return "\n".join(lines)


#: The columns of :func:`summary_table`.
SUMMARY_COLUMNS = ["case", "model", "target", "mape_pct", "goal_pct", "meets_goal", "questions_ok"]


def summary_table(report: dict[str, Any] | None) -> pd.DataFrame:
    """The evaluate stage's backtest report (``reports/metrics/backtest.json``) as one row per case and target.

    Each row: the case, its model family, the target, the held-out MAPE, the goal and whether it is
    met, and ``questions_ok`` as ``'answered/asked'``; read from the report's ``summary``
    (``<target>_mape_pct``, ``<target>_goal_pct``, ``<target>_meets_goal``) and ``cases``. Empty
    (:data:`SUMMARY_COLUMNS`) for no report.
    """
    report = report or {}
    models = {c.get("name"): c.get("model") for c in report.get("cases", [])}
    rows = []
    for case, entry in report.get("summary", {}).items():
        for target in sorted({k.rsplit("_mape_pct", 1)[0] for k in entry if k.endswith("_mape_pct")}):
            rows.append({"case": case, "model": models.get(case), "target": target,
                         "mape_pct": entry.get(f"{target}_mape_pct"), "goal_pct": entry.get(f"{target}_goal_pct"),
                         "meets_goal": entry.get(f"{target}_meets_goal"),
                         "questions_ok": f"{entry.get('questions_ok', 0)}/{entry.get('questions', 0)}"})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def load_cases(paths: list[str]) -> list[Case]:
    """Every case under ``paths`` (:func:`expand_case_dirs`), rolling-origin cases expanded."""
    return [origin for p in expand_case_dirs(paths) for origin in expand_origins(load_case(p))]


def run_cases(paths: list[str], config: ModelingConfig, policy: PlannerPolicy) -> list[CaseResult]:
    """Read every case under ``paths`` and run each one (:func:`load_cases`, :func:`run_case`)."""
    return [run_case(c, config, policy) for c in load_cases(paths)]


def expand_case_dirs(paths: list[str]) -> list[str]:
    """Case directories from arguments: a case itself, or a folder of cases."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if (path / "case.yaml").exists() or not path.is_dir():
            out.append(str(path))
        else:
            found = sorted(str(c.parent) for c in path.glob("*/case.yaml"))
            out.extend(found or [str(path)])
    return out


def run_cli(case_paths: list[str], *, json_path: str | None = None, params_path: str | None = None) -> int:
    """What ``kneecap backtest`` does: exit 2 on a malformed case, else 0 whatever the errors."""
    from kneecap.config import EvaluateConfig, load_params
    from kneecap.policies import planner_policy
    from kneecap.training import modeling_config

    if params_path is None and Path("params.yaml").exists():
        params_path = "params.yaml"
    try:
        params = load_params(params_path) if params_path else None
    except (OSError, ValueError) as exc:  # a tagged or malformed params.yaml: one line, exit 2
        print(f"kneecap backtest: {exc}", file=sys.stderr)
        return 2
    config = modeling_config(params) if params else ModelingConfig()
    policy = planner_policy(params) if params else PlannerPolicy()
    try:
        cases = load_cases(case_paths)
    except CaseError as exc:
        print(f"kneecap backtest: {exc}", file=sys.stderr)
        return 2
    results = [run_case(c, config, policy) for c in cases]
    print(format_table(results, (params.evaluate if params else EvaluateConfig()).goal_pct))
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps({"cases": [r.to_dict() for r in results]}, indent=2) + "\n",
                                   encoding="utf-8")
    return 0
