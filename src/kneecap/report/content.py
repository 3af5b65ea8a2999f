"""What a capacity report says, gathered from the answers kneecap already gives.

Every number here comes from a function the CLI's ``kneecap forecast`` and the desk call: the
answer of one scenario (:func:`kneecap.forecasting.forecast_scenarios`: knee, growth dates, zIIP
plan, warnings), the response curve (:func:`kneecap.forecasting.response_curve`), the sentences
(:func:`kneecap.modeling.knee.knee_sentence`, :func:`~kneecap.forecasting.reach_sentence`,
:func:`~kneecap.forecasting.band_sentence`), and the registry's and the marts' own rows. Nothing
is fitted or solved again for the report, and nothing here draws or renders (that is
:mod:`kneecap.report.figures` and :mod:`kneecap.report.render`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import yaml

import kneecap
from kneecap import forecast_text, forecasting, goal_answers, goal_curves, measured_fit, tracking
from kneecap.modeling import ModelError
from kneecap.modeling.class_periods import merge_periods
from kneecap.modeling.engines import ENGINE_KEYS, on_engines
from kneecap.modeling.knee import Knee, knee_sentence
from kneecap.report.words import metric_label

#: Registered metrics the report shows as the model's errors: how far the fit is from its own
#: points, and how its band held on points it did not see.
ERROR_METRIC_WORDS = ("mape", "coverage", "calibration")
#: The name the report gives its one scenario (the forecast row's ``scenario``).
SCENARIO_NAME = "report"


class ReportRequestError(ModelError):
    """A report that cannot be asked of these models: no response champion, no knee, a load out of range."""


@dataclass(frozen=True)
class ReportContent:
    """Everything one capacity report says, as values and sentences (the template's input).

    Attributes are plain values, sentences and frames; :mod:`kneecap.report.render` draws the
    figures from ``curve``, ``points``, ``pi`` and ``goal_curve`` and writes the HTML.
    """

    workload: str
    load: str  #: ``clients`` or ``tps``
    question: dict[str, Any]
    row: dict[str, Any]  #: the forecast's answer, as ``kneecap forecast`` writes it
    knee: dict[str, Any]
    growth: dict[str, Any]
    plan: dict[str, Any]
    model: dict[str, Any]
    data: dict[str, Any]
    caveats: list[str]
    versions: dict[str, Any]
    curve: pd.DataFrame
    points: pd.DataFrame
    same_config: pd.Series
    pi: pd.DataFrame = field(default_factory=pd.DataFrame)
    pi_summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: the forecast's percentiles, PI and PI date (:func:`kneecap.forecast_text.goal_sentences`)
    goal_forecast: list[str] = field(default_factory=list)
    #: a single-period WLM class's response time goal (:func:`kneecap.goal_curves.response_goal`), or None
    goal: tuple[str, float, float] | None = None
    #: the percentiles and PI along ``curve`` (:func:`kneecap.goal_curves.goal_curve`; empty: no distribution)
    goal_curve: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: per RMF interval: load, measured PI, bucket percentiles (:func:`kneecap.goal_curves.measured_goal_points`)
    goal_points: pd.DataFrame = field(default_factory=pd.DataFrame)


def goal_words(row: Mapping[str, Any]) -> str:
    """A WLM goal as a planner says it, from a ``fct_performance_index`` row.

    Examples
    --------
    >>> goal_words({"goal_type": "percentile", "goal_percentile": 90, "goal_resp_ms": 5.0})
    '90 % within 5 ms'
    >>> goal_words({"goal_type": "average", "goal_resp_ms": 12.0})
    'average response 12 ms'
    >>> goal_words({"goal_type": "velocity", "goal_velocity_pct": 40})
    'execution velocity 40 %'
    """
    kind = row.get("goal_type")
    if kind == "percentile":
        return f"{row['goal_percentile']:g} % within {row['goal_resp_ms']:g} ms"
    if kind == "average":
        return f"average response {row['goal_resp_ms']:g} ms"
    if kind == "velocity":
        return f"execution velocity {row['goal_velocity_pct']:g} %"
    return str(kind)


def performance_index_summary(pi: pd.DataFrame, sysplex_pi: pd.DataFrame | None = None) -> pd.DataFrame:
    """The measured PI per system and service class period: its goal, and how often it was missed.

    ``pi``: rows of the ``fct_performance_index`` mart (each system's own PI, ``scope`` "local").
    ``sysplex_pi``: rows of ``fct_sysplex_performance_index``; a sysplex period measured on more
    than one system adds a row of its sysplex PI (``scope`` "sysplex", ``system_id`` the sysplex
    and the most systems it was measured on), below its systems' rows. One row per system (or
    sysplex) and period: goal in words (:func:`goal_words`), importance, intervals with a PI, the
    median and largest PI, and the intervals (count and %) whose PI was above 1 (the goal missed).
    """
    cols = ["system_id", "scope", "period", "goal", "importance", "intervals", "pi_median", "pi_max", "missed",
            "missed_pct", "first_interval_start", "last_interval_start"]
    if pi.empty:
        return pd.DataFrame(columns=cols)
    out = [{"system_id": system, "scope": "local", **_pi_counts(g)}
           for (system, _), g in pi.groupby(["system_id", "period"], sort=True)]
    if sysplex_pi is not None and not sysplex_pi.empty:
        for (plex, _), g in sysplex_pi.groupby(["sysplex", "period"], sort=True):
            most = int(g["n_systems"].max())
            if most > 1:  # on one system the sysplex PI is that system's own
                out.append({"system_id": f"{plex} ({most} systems)", "scope": "sysplex", **_pi_counts(g)})
    return pd.DataFrame(out, columns=cols)


def class_performance_index(marts: Mapping[str, pd.DataFrame], workload: str,
                            systems: set[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A WLM class's measured PI: its rows of ``fct_performance_index`` and ``fct_sysplex_performance_index``.

    The local rows with a PI, on ``systems`` where given (the systems the class's model was fitted
    on); the sysplex rows of those rows' sysplexes. Empty frames where the marts have none (marts
    published before the sysplex PI existed have no ``fct_sysplex_performance_index``).
    """
    pi = marts.get("fct_performance_index", pd.DataFrame())
    if not pi.empty:
        pi = pi[(pi["class_name"] == workload) & (pi["system_id"].isin(systems) if systems else True)]
        pi = pi.dropna(subset=["performance_index"]).reset_index(drop=True)
    plex_pi = marts.get("fct_sysplex_performance_index", pd.DataFrame())
    if not plex_pi.empty:
        plex_pi = plex_pi[(plex_pi["class_name"] == workload)
                          & plex_pi["sysplex"].isin(set(pi["sysplex"]) if not pi.empty else set())]
        plex_pi = plex_pi.reset_index(drop=True)
    return pi, plex_pi


def _pi_counts(g: pd.DataFrame) -> dict[str, Any]:
    """One system's (or sysplex's) rows of a period, counted for :func:`performance_index_summary`."""
    measured = g["performance_index"].dropna()
    missed = int((measured > 1.0).sum())
    return {"period": int(g["period"].iloc[0]), "goal": goal_words(g.iloc[0]), "importance": g["importance"].iloc[0],
            "intervals": len(measured), "pi_median": float(measured.median()) if len(measured) else math.nan,
            "pi_max": float(measured.max()) if len(measured) else math.nan, "missed": missed,
            "missed_pct": 100.0 * missed / len(measured) if len(measured) else math.nan,
            "first_interval_start": g["interval_start_at"].min(), "last_interval_start": g["interval_start_at"].max()}


def lock_versions(lock_text: str | None) -> dict[str, str | None]:
    r"""The ``dvc.lock`` a report's data came from: the file's SHA-256 and the marts' recorded hash.

    ``dvc_lock_sha256``: the first 16 hex digits of the file's SHA-256; ``data_md5``: the md5 DVC
    recorded for ``data/processed`` (the published marts). None where there is no lock, or it
    does not name the marts.

    Examples
    --------
    >>> lock_versions(None)
    {'dvc_lock_sha256': None, 'data_md5': None}
    >>> lock = "stages:\n  validate:\n    outs:\n    - path: data/processed\n      md5: ab12.dir\n"
    >>> lock_versions(lock)["data_md5"]
    'ab12.dir'
    """
    out: dict[str, str | None] = {"dvc_lock_sha256": None, "data_md5": None}
    if not lock_text:
        return out
    out["dvc_lock_sha256"] = hashlib.sha256(lock_text.encode("utf-8")).hexdigest()[:16]
    try:
        stages = (yaml.safe_load(lock_text) or {}).get("stages", {})
    except yaml.YAMLError:
        return out
    for stage in stages.values() if isinstance(stages, dict) else ():
        for item in (stage or {}).get("outs", []) or []:
            if isinstance(item, dict) and item.get("path") == "data/processed" and item.get("md5"):
                out["data_md5"] = str(item["md5"])
    return out


def _finite(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan


#: Scenario keys a report's question may set besides the load and SLO, by the load's unit.
#: The engines' kind too (:data:`kneecap.modeling.engines.ENGINE_KEYS`): the answer names them.
CONFIGURATION_KEYS = {"clients": ("n_gcp", "n_ziip", "think_time_ms", *ENGINE_KEYS),
                      "tps": ("n_gcp", "n_ziip", "bg_load_factor", *ENGINE_KEYS)}


def _configuration(asked: Mapping[str, float | None], unit: str) -> dict[str, float]:
    """The scenario keys of ``asked`` (None dropped); one the model's load unit does not take is a wrong question."""
    given = {key: value for key, value in asked.items() if value is not None}
    wrong = sorted(set(given) - set(CONFIGURATION_KEYS[unit]))
    if wrong:
        raise ReportRequestError(f"{', '.join(wrong)} cannot be set for a model whose load is {unit} "
                                 f"(it takes {', '.join(CONFIGURATION_KEYS[unit])})")
    return {key: float(value) for key, value in given.items()}


def _trained_range(results: Any) -> tuple[str, tuple[float, float]]:
    """The load unit a champion answers in (its ``load_unit``) and the load range it was fitted on.

    A closed fit keeps the range as ``train_ranges[unit]``, a WLM class's as ``<unit>_min`` and
    ``<unit>_max``.
    """
    unit = getattr(results, "load_unit", None)
    ranges = getattr(results, "train_ranges", None) or {}
    given = ranges.get(unit)
    pair = list(given) if isinstance(given, (list, tuple)) else [ranges.get(f"{unit}_min"), ranges.get(f"{unit}_max")]
    bounds = [_finite(x) for x in pair]
    if unit is None or len(bounds) != 2 or not all(math.isfinite(x) for x in bounds):
        family = getattr(results, "family", type(results).__name__)
        raise ReportRequestError(f"the report needs a model with a knee and its trained load range (a closed "
                                 f"workload's or a WLM class's); the champion is a {family} model")
    return str(unit), (bounds[0], bounds[1])


def champion_rows(registry: pd.DataFrame, workload: str) -> pd.DataFrame:
    """The registry rows (:func:`kneecap.tracking.registered_models`) of ``workload``'s champions, one per kind."""
    if registry.empty:
        return registry
    rows = [tracking.champion_row(registry, workload, kind) for kind in tracking.MODEL_KINDS]
    return pd.DataFrame([row for row in rows if row is not None]).reset_index(drop=True)


def _errors(champions: pd.DataFrame) -> list[dict[str, Any]]:
    """The champions' registered error metrics, labelled: ``model``, ``measure``, ``value``."""
    out = []
    for record in champions.to_dict("records"):
        for column, value in record.items():
            name = str(column)[len("metric."):]
            if str(column).startswith("metric.") and any(w in name for w in ERROR_METRIC_WORDS) and value == value:
                out.append({"model": tracking.listed_name(str(record["name"])), "metric": name,
                            "measure": metric_label(name), "value": forecasting.sig3(value)})
    return out


def _measured_points(marts: Mapping[str, pd.DataFrame], workload: str, unit: str) -> pd.DataFrame:
    """The workload's rows of ``fct_measurements`` with a load in ``unit`` and a response."""
    fct = marts.get("fct_measurements", pd.DataFrame())
    if fct.empty or not {"workload", unit, "resp_ms"} <= set(fct):
        return pd.DataFrame(columns=["workload", unit, "resp_ms"])
    # a multi-period class is one stream: the class's intervals, its periods merged as its fit merges them
    rows = merge_periods(fct[fct["workload"] == workload])
    return rows[rows[unit].notna() & rows["resp_ms"].notna()].reset_index(drop=True)


def _same_configuration(points: pd.DataFrame, n_gcp: int, n_ziip: int) -> pd.Series:
    """Which points were measured on ``n_gcp`` GCPs + ``n_ziip`` zIIPs (a point that does not say counts)."""
    same = pd.Series(True, index=points.index)
    for column, value in (("n_gcp", n_gcp), ("n_ziip", n_ziip)):
        if column in points:
            same &= points[column].isna() | (points[column] == value)
    return same


def _data(workload: str, marts: Mapping[str, pd.DataFrame], points: pd.DataFrame) -> dict[str, Any]:
    """The data the model stands on: the workload's row in ``dim_workloads``, its sources, its intervals."""
    dims = marts.get("dim_workloads", pd.DataFrame())
    mine = dims[dims["workload"] == workload] if not dims.empty else dims
    ids = [s for s in str(mine["source_ids"].iloc[0]).split(",") if s] if len(mine) else []
    sources = marts.get("dim_sources", pd.DataFrame())
    cited = sources[sources["source_id"].isin(ids)] if not sources.empty else sources
    keep = [c for c in ("source_id", "title", "section", "table_or_figure", "source_file", "units", "n_points")
            if c in cited]
    return {"kind": str(mine["workload_kind"].iloc[0]) if len(mine) and "workload_kind" in mine else None,
            "n_points": len(points), "source_ids": ids, "sources": cited[keep].to_dict("records"),
            "intervals": measured_fit.provenance(points).to_dict("records")}


def _drawn_to(base: float, asked: float) -> float:
    """How far the response chart's load axis goes: ``base``, or on to the load asked when that is near.

    A load asked far beyond (a saturated what-if at 20x the knee) would squeeze the curve into the
    first pixels; the text says that answer, the chart keeps to where the curve bends.

    Examples
    --------
    >>> _drawn_to(100.0, 150.0), _drawn_to(100.0, 1000.0), _drawn_to(100.0, 50.0)
    (165.0, 100.0, 100.0)
    """
    return max(base, asked * 1.1) if asked * 1.1 <= 2 * base else base


def _growth_words(row: Mapping[str, Any]) -> dict[str, Any]:
    """When growth reaches the knee (and the SLO's load), in the sentences ``kneecap forecast`` prints.

    ``summary`` (the growth model, or why there is none), ``sentences`` (``knee``, ``slo``:
    :func:`kneecap.forecasting.reach_sentence`), ``peak`` (the last daily peak) and ``range`` (the
    knee's crossing dates by :data:`kneecap.forecasting.DATE_SUFFIXES`); empty for a workload with
    no history.
    """
    dates = {}
    if "date_knee_earliest" in row or row.get("knee_already"):
        dates = {"knee": forecasting.reach_sentence(row, "knee", "knee")}
        if "date_slo_earliest" in row or row.get("slo_already"):
            label = f"The load at the SLO ({row.get('slo_tps', math.nan):.4g} tps)"
            dates["slo"] = forecasting.reach_sentence(row, "slo", label)
    return {"summary": row.get("growth"), "sentences": dates,
            "peak": (f"daily peak {row['peak_tps_last']:.4g} tps on {row['peak_date_last']}"
                     if "peak_tps_last" in row else None),
            "range": {s: row[f"date_knee{s}"] for s in forecasting.DATE_SUFFIXES if row.get(f"date_knee{s}")}}


def report_content(models: forecasting.WorkloadModels, *, registry: pd.DataFrame,
                   marts: Mapping[str, pd.DataFrame], policy: forecasting.Policy,
                   growth: forecasting.GrowthPolicy | None = None, load: float | None = None,
                   slo_resp_ms: float | None = None, configuration: Mapping[str, float] | None = None,
                   generation: str | None = None, lock_text: str | None = None,
                   written_at: pd.Timestamp | None = None) -> ReportContent:
    """Gather one workload's capacity report: one forecast scenario, its curve, data, PI and versions.

    Parameters
    ----------
    models : WorkloadModels
        The workload's champions (a response model with a knee is needed).
    registry : DataFrame
        :func:`kneecap.tracking.registered_models`: the champions' versions, runs and metrics.
    marts : mapping
        The published marts (:func:`kneecap.warehouse.read_snapshot`): ``fct_measurements``,
        ``dim_workloads``, ``dim_sources`` and, where published, ``fct_performance_index``,
        ``fct_sysplex_performance_index`` and ``fct_rt_buckets`` (a WLM class's measured
        percentiles).
    policy, growth
        The planner policy and growth policy from ``params.yaml``, as ``kneecap forecast`` uses them.
    load : float, optional
        The load the question is asked at (clients, or tps for a WLM class); default the largest
        load the champion was fitted on.
    slo_resp_ms : float, optional
        The response-time SLO: the zIIP plan is made for it.
    configuration : mapping, optional
        The machine the question is asked on, as scenario keys (:data:`CONFIGURATION_KEYS`:
        ``n_gcp``, ``n_ziip``, ``think_time_ms`` for a closed workload, ``bg_load_factor`` for a WLM
        class, and the engines' ``gcp_speed``, ``ziip_speed``, ``ziip_mt``, ``ziip_mt_capacity``,
        which the answer's configuration names); a key left out or None keeps the champion's own
        (the desk passes its sliders and engine inputs).
    generation, lock_text
        The marts' generation and the text of ``dvc.lock``, recorded with kneecap's version.
    written_at : Timestamp, optional
        When the report is written (default now, UTC).

    Raises
    ------
    ReportRequestError
        No response champion, one without a knee, or a load or SLO out of range.
    ModelError
        A question the forecast cannot answer (its message is the forecast row's error).
    """
    workload = models.workload
    results = models.response
    if results is None:
        raise ReportRequestError(f"{workload}: no response model champion; the report needs one (a cost model "
                                 "alone gives no knee)")
    try:
        unit, trained = _trained_range(results)
    except ReportRequestError as exc:
        raise ReportRequestError(f"{workload}: {exc}") from exc
    asked = float(load) if load is not None else trained[1]
    scenario: dict[str, Any] = {"workload": workload, "name": SCENARIO_NAME, unit: asked}
    if slo_resp_ms is not None:
        scenario["slo_resp_ms"] = float(slo_resp_ms)
    try:
        scenario.update(_configuration(configuration or {}, unit))
    except ReportRequestError as exc:
        raise ReportRequestError(f"{workload}: {exc}") from exc
    try:  # a load, SLO or engine count out of range is a wrong question, not a failed answer
        forecasting.check_scenario(scenario, SCENARIO_NAME)
    except ModelError as exc:
        problem = str(exc).split(": ", 1)[-1]  # without the scenario's name: the report asks one
        raise ReportRequestError(f"{workload}: {problem} (--load / --slo-ms / --n-gcp / --n-ziip ...)") from exc
    table = forecasting.forecast_scenarios([scenario], lambda _: models, policy, growth=growth)
    row = {k: v for k, v in table.iloc[0].to_dict().items()
           if not (isinstance(v, float) and math.isnan(v)) and v is not None}
    if row.get("status") == forecasting.FAILED:
        raise ModelError(str(row.get("error")))
    # the answer in the words `kneecap forecast` prints it
    said = forecasting.answer_summary(table).iloc[0].to_dict()

    points = _measured_points(marts, workload, unit)
    k = float(policy.knee_k)
    mid, lo, hi = (_finite(row.get(f"knee_{unit}{end}")) for end in ("", "_lo", "_hi"))
    if not math.isfinite(mid):
        raise ReportRequestError(f"{workload}: the champion ({getattr(results, 'family', '?')}) gives no knee")
    n_gcp, n_ziip = int(row["n_gcp"]), int(row["n_ziip"])
    engines = {key: scenario[key] for key in ENGINE_KEYS if key in scenario}  # the curve on the engines asked
    drawn = on_engines(results, **engines) if engines else results
    # the forecast's knee as the one Knee estimate, for the one knee sentence (nothing solved again)
    saturation = _finite(row.get("saturation_clients" if unit == "clients" else "max_tps"))
    estimate = Knee(load_unit=unit, k=k, load=mid, load_lo=lo, load_hi=hi, saturation=saturation,
                    saturation_lo=math.nan, saturation_hi=math.nan, max_tps=_finite(row.get("max_tps")),
                    unloaded_resp_ms=_finite(row.get("unloaded_resp_ms")))
    sentence = knee_sentence(estimate, None if unit == "clients" else trained[1])
    if unit == "clients":
        # as far as the desk's Knee page draws by default: past the trained load and the knee's band
        top = _drawn_to(max(trained[1] * 1.3, hi * 1.1 if math.isfinite(hi) else 0.0), asked)
        curve = forecasting.response_curve(drawn, n_gcp=n_gcp, n_ziip=n_ziip,
                                           think_time_ms=float(row["think_time_ms"]), max_load=top)
    else:
        # as the desk draws a class: up to where a pool it needs is full (no response beyond)
        top = _drawn_to(saturation if math.isfinite(saturation) else trained[1] * 1.3, asked)
        curve = forecasting.response_curve(drawn, n_gcp=n_gcp, n_ziip=n_ziip, max_load=top,
                                           bg_load_factor=scenario.get("bg_load_factor"))
    knee: dict[str, Any] = {
        "mid": mid, "lo": lo, "hi": hi, "k": k, "sentence": sentence, "configuration": said["configuration"],
        "words": said["knee (95 % band)"],
        "band": forecasting.band_sentence(curve, unit, unit, mid) if math.isfinite(mid) else None}
    same = _same_configuration(points, n_gcp, n_ziip)

    plan = {key: row.get(key) for key in ("slo_resp_ms", "recommended_n_ziip", "recommended_n_gcp", "slo_margin_ms",
                                           "recommendation", "binding_rule", "binding_sentence")}
    plan["words"] = said["plan"]

    # beyond EXTRAPOLATION_WARN_X the warnings say it (as `kneecap forecast` prints it once)
    extrapolation = (row.get("extrapolation") if _finite(row.get("extrapolation_x")) <= forecasting.EXTRAPOLATION_WARN_X
                     else None)

    champions = champion_rows(registry, workload)
    summary = getattr(results, "summary", None)
    model = {"family": getattr(results, "family", type(results).__name__),
             "summary": summary() if callable(summary) else "",
             "calibration": row.get("band_calibration"), "structures": row.get("structures"),
             "errors": _errors(champions), "cost_family": getattr(models.cost, "family", None)}

    pi, plex_pi = class_performance_index(
        marts, workload, set(points["system_id"].dropna()) if "system_id" in points else set())
    goals = performance_index_summary(pi, plex_pi)
    # the class's percentiles and PI along the curve drawn, on the engines asked, as the forecast's row maps its load
    goal = goal_curves.response_goal(drawn) if unit == "tps" else None
    shape_curve = goal_curves.goal_curve(drawn, curve) if unit == "tps" else pd.DataFrame()
    goal_points = (goal_curves.measured_goal_points(points, marts.get("fct_performance_index", pd.DataFrame()),
                                                    marts.get("fct_rt_buckets", pd.DataFrame()),
                                                    goal_answers.period_goals(drawn))
                   if not shape_curve.empty else pd.DataFrame())
    question = {"workload": workload, "load": asked, "unit": unit, "slo_resp_ms": slo_resp_ms,
                "load_given": load is not None, "configuration": knee["configuration"], "trained": trained,
                "goals": [f"{g['system_id']} period {g['period']}: {g['goal']}" for g in goals.to_dict("records")
                          if g["scope"] == "local"],
                "response": said["response (95 % band)"], "load_words": said["load"], "status": said["status"],
                "extrapolation": extrapolation}
    versions = {"kneecap": kneecap.__version__, "generation": generation, **lock_versions(lock_text),
                "written_at": (written_at or pd.Timestamp.now(tz="UTC")).strftime("%Y-%m-%d %H:%M UTC"),
                "models": [{"name": tracking.listed_name(str(r["name"])), "version": int(r["version"]),
                            "run_id": r.get("run_id"), "created_at": str(r.get("created_at", ""))[:19],
                            "family": r.get("family")}
                           for r in champions.to_dict("records")]}
    return ReportContent(workload=workload, load=unit, question=question, row=row, knee=knee, growth=_growth_words(row),
                         plan=plan, model=model, data=_data(workload, marts, points),
                         caveats=forecast_text.caution_sentences(row),
                         versions=versions, curve=curve, points=points, same_config=same, pi=pi, pi_summary=goals,
                         goal_forecast=forecast_text.goal_sentences(row), goal=goal, goal_curve=shape_curve,
                         goal_points=goal_points)
