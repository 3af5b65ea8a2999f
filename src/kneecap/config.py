"""Typed, frozen views of ``params.yaml`` sections (no paths here: they live in dvc.yaml).

Plain sections, one frozen dataclass per section, importing nothing of kneecap's models or
validation: every pipeline stage reads its parameters here, and a stage that only decodes or
builds marts must not depend on the models (dvc.yaml lists what each stage imports). The library
objects are built from the sections where they are used (:func:`kneecap.training.modeling_config`,
:func:`kneecap.policies.planner_policy`, :func:`kneecap.policies.growth_policy`).

A key ``params.yaml`` leaves out takes its default here, written once: the library's classes
and constants read theirs from these sections (the models may import this module, never the
reverse): :class:`~kneecap.modeling.ziip.PlannerPolicy` is :class:`PlannerConfig` plus
``knee_k``, :class:`~kneecap.forecasting.GrowthPolicy` is :class:`GrowthConfig`, and the fits'
defaults (:class:`~kneecap.modeling.select.ModelingConfig`, the model classes) are
:class:`CommonConfig`'s and :class:`TrainConfig`'s. ``tests/test_config.py`` checks them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from kneecap.limits import load_yaml, read_text, short_repr, short_text

T = TypeVar("T")

#: When GCPs help zIIP-eligible work (:data:`kneecap.modeling.dispatch.HELP_RULES` is this tuple):
#: the values ``train.open_help_rules`` and ``train.closed_help_rules`` may list.
HELP_RULES: tuple[str, ...] = ("pool", "burst")
#: How a USL is fitted (:data:`kneecap.modeling.usl.USL_METHODS` is this tuple).
USL_METHODS: tuple[str, ...] = ("nls", "field")


@dataclass(frozen=True)
class CommonConfig:
    """``params.yaml`` ``common``: the random seed and the band level (``alpha``) every stage shares."""

    seed: int = 0
    alpha: float = 0.05


@dataclass(frozen=True)
class ValidationConfig:
    """``params.yaml`` ``validate``: the tunables of the validation gate (:mod:`kneecap.validation`).

    Attributes
    ----------
    littles_law_rel_tol
        Largest accepted relative gap between clients N and X·(R+Z) on closed-workload rows.
    """

    littles_law_rel_tol: float = 0.05


def _hours(value: Any, name: str) -> tuple[int, int] | None:
    """An hours-of-day window ``[first, last)`` from params.yaml, or None; refused unless 0 <= first < last <= 24."""
    if value is None:
        return None
    hours = tuple(value)
    if len(hours) != 2 or not 0 <= hours[0] < hours[1] <= 24:
        raise ValueError(f"{name} must be [first, last) hours with 0 <= first < last <= 24, got {value!r}")
    return int(hours[0]), int(hours[1])


@dataclass(frozen=True)
class TrainConfig:
    """``params.yaml`` ``train``: how models are fitted, which fit is kept, and when a new fit becomes champion."""

    knee_k: float = 3.0
    n_boot: int = 200
    min_points: int = 3
    honor_priority: bool = True
    help_wait_ms: float = 3.2
    help_rule: str = "pool"
    eligible_bursts: int = 4
    gcp_bursts: int = 1
    assumed_ziip_eligible_fraction: float = 0.95
    max_cv_error_pct: float = 5.0
    open_min_transactions: float = 100.0
    open_hours: tuple[int, int] | None = None
    open_help_rules: tuple[str, ...] = HELP_RULES
    open_help_rule_prior: tuple[tuple[str, float], ...] = ()
    closed_help_rules: tuple[str, ...] = HELP_RULES
    closed_eligible_bursts: tuple[int, ...] = (1, 2, 3, 4, 6, 8)
    combine_min_loads: int = 3
    combine_weight_power: float = 2.0
    usl_method: str = "nls"
    promote: str = "if_not_worse"
    promote_tolerance_pct: float = 0.5

    def __post_init__(self) -> None:
        if self.promote not in ("if_not_worse", "never"):
            raise ValueError(f"train.promote must be if_not_worse or never, got {self.promote!r}")
        if not self.promote_tolerance_pct >= 0:
            raise ValueError(f"train.promote_tolerance_pct must be >= 0, got {self.promote_tolerance_pct}")
        object.__setattr__(self, "open_hours", _hours(self.open_hours, "train.open_hours"))
        rules = (self.open_help_rules,) if isinstance(self.open_help_rules, str) else tuple(self.open_help_rules)
        if not rules or any(rule not in HELP_RULES for rule in rules):
            raise ValueError(f"train.open_help_rules must be a non-empty list of "
                             f"{', '.join(HELP_RULES)}, got {self.open_help_rules!r}")
        object.__setattr__(self, "open_help_rules", rules)
        try:
            prior: dict[str, Any] = dict(self.open_help_rule_prior or {})
        except (TypeError, ValueError):
            prior = {"": None}  # not a mapping: refused below
        if any(rule not in HELP_RULES or isinstance(q, bool) or not isinstance(q, (int, float)) or not q > 0
               for rule, q in prior.items()):
            raise ValueError(f"train.open_help_rule_prior must map {' / '.join(HELP_RULES)} to positive numbers, "
                             f"got {self.open_help_rule_prior!r}")
        object.__setattr__(self, "open_help_rule_prior", tuple((rule, float(q)) for rule, q in prior.items()))
        for name in ("closed_help_rules",):
            value = getattr(self, name)
            rules = (value,) if isinstance(value, str) else tuple(value)
            if not rules or any(rule not in HELP_RULES for rule in rules):
                raise ValueError(f"train.{name} must be a non-empty list of "
                                 f"{', '.join(HELP_RULES)}, got {value!r}")
            object.__setattr__(self, name, rules)
        bursts = (self.closed_eligible_bursts,) if isinstance(self.closed_eligible_bursts, int) \
            else tuple(self.closed_eligible_bursts)
        if not bursts or any(not isinstance(b, int) or b < 1 for b in bursts):
            raise ValueError(f"train.closed_eligible_bursts must be a non-empty list of integers >= 1, "
                             f"got {self.closed_eligible_bursts!r}")
        object.__setattr__(self, "closed_eligible_bursts", bursts)
        if not self.open_min_transactions >= 0:
            raise ValueError(f"train.open_min_transactions must be >= 0, got {self.open_min_transactions}")
        if not self.combine_min_loads >= 2:
            raise ValueError(f"train.combine_min_loads must be >= 2, got {self.combine_min_loads}")
        if not self.combine_weight_power >= 0:
            raise ValueError(f"train.combine_weight_power must be >= 0, got {self.combine_weight_power}")
        if self.usl_method not in USL_METHODS:
            raise ValueError(f"train.usl_method must be one of {', '.join(USL_METHODS)}, got {self.usl_method!r}")


@dataclass(frozen=True)
class PlannerConfig:
    """``params.yaml`` ``planner``: the limits and engine costs the zIIP / GCP planner works to."""

    max_ziip_busy_pct: float | None = 80.0
    max_spill_pct: float | None = 10.0
    max_n_ziip: int = 16
    max_added_gcp: int = 0
    ziip_cost: float = 1.0
    gcp_cost: float = 1.0
    conservative: bool = False


@dataclass(frozen=True)
class GrowthConfig:
    """``params.yaml`` ``growth``: the peak per period (day or week) that is forecast, and how far ahead."""

    freq: str = "D"
    stat: str = "max"
    hours: tuple[int, int] | None = None
    horizon: int = 730
    plan_peak_pct: float = 90.0

    def __post_init__(self) -> None:
        if not 0 < float(self.plan_peak_pct) < 100:
            raise ValueError(f"growth.plan_peak_pct must be in (0, 100), got {self.plan_peak_pct}")
        if self.freq not in ("D", "W"):
            raise ValueError(f"growth.freq must be D (daily peaks) or W (weekly), got {self.freq!r}")
        object.__setattr__(self, "hours", _hours(self.hours, "growth.hours"))
        if not 1 <= int(self.horizon) <= 3650:
            raise ValueError(f"growth.horizon must be 1..3650 periods, got {self.horizon}")


@dataclass(frozen=True)
class EvaluateConfig:
    """``params.yaml`` ``evaluate``: the backtest MAPE goals, %, one per :data:`kneecap.backtest.GOAL_KINDS`.

    Closed load tests' response and throughput (issue #10), zero-think throughput forecast past
    the measured concurrency and open cases' response (issue #12), CPU cost and the CPU shares by
    engine type (issue #12). :meth:`goal_pct` maps a kind to its goal.
    """

    mape_goal_resp_pct: float = 25.0
    mape_goal_tps_pct: float = 5.0
    mape_goal_cost_pct: float = 5.0
    mape_goal_zero_think_tps_pct: float = 8.0
    mape_goal_open_resp_pct: float = 35.0

    def goal_pct(self, kind: str | None) -> float | None:
        """The MAPE goal of a goal kind (``zero_think_tps`` -> ``mape_goal_zero_think_tps_pct``), None for None."""
        return None if kind is None else float(getattr(self, f"mape_goal_{kind}_pct"))


#: Engines the pipeline runs on: in process (DuckDB for the SQL of ``build_marts``, the local
#: decode and fits) or Spark (the same SQL files on Spark SQL, :mod:`kneecap.spark_engine`; the
#: decode of ``decode_smf`` and the fits of ``train`` in Spark tasks, :mod:`kneecap.spark_jobs`).
ENGINES: tuple[str, ...] = ("duckdb", "spark")
#: Environment variables that override ``warehouse.engine`` and ``warehouse.spark_master`` for one
#: run, so a cluster job can switch engine without editing the tracked params.yaml.
ENGINE_ENV = "KNEECAP_ENGINE"
SPARK_MASTER_ENV = "KNEECAP_SPARK_MASTER"


@dataclass(frozen=True)
class WarehouseConfig:
    """``params.yaml`` ``warehouse``: the engine that decodes, runs the SQL and fits, and the Spark master it uses."""

    engine: str = "duckdb"
    spark_master: str = "local[*]"

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"warehouse.engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if not isinstance(self.spark_master, str) or not self.spark_master.strip():
            raise ValueError(f"warehouse.spark_master must be a Spark master URL, got {self.spark_master!r}")


@dataclass(frozen=True)
class DeskConfig:
    """``params.yaml`` ``desk``: the workload the desk's pages open on (None: the first one listed)."""

    default_workload: str | None = None

    def __post_init__(self) -> None:
        if self.default_workload is not None and not isinstance(self.default_workload, str):
            raise ValueError(f"desk.default_workload must be a workload name, got {short_repr(self.default_workload)}")

    def opening_choice(self, workloads: Sequence[str]) -> tuple[int, str | None]:
        """Which of ``workloads`` a page opens on: its index, and why it is not the configured one.

        The configured workload where it is listed; else the first, with a sentence saying so
        (None when the configured one is listed, or none is configured).

        Examples
        --------
        >>> DeskConfig("b").opening_choice(["a", "b"])
        (1, None)
        >>> DeskConfig("c").opening_choice(["a", "b"])
        (0, "'c' (params.yaml desk.default_workload) is not listed here: the page opens on 'a'")
        >>> DeskConfig().opening_choice(["a", "b"])
        (0, None)
        """
        wanted = self.default_workload
        if wanted is None or wanted in workloads:
            return (0 if wanted is None else list(workloads).index(wanted)), None
        first = f": the page opens on {workloads[0]!r}" if workloads else ""
        return 0, f"{wanted!r} (params.yaml desk.default_workload) is not listed here{first}"


@dataclass(frozen=True)
class Params:
    """Every section of ``params.yaml``, each a frozen view (:func:`parse_params`)."""

    common: CommonConfig
    validate: ValidationConfig
    train: TrainConfig
    planner: PlannerConfig
    evaluate: EvaluateConfig
    growth: GrowthConfig = GrowthConfig()
    warehouse: WarehouseConfig = WarehouseConfig()
    desk: DeskConfig = DeskConfig()


def _section(cls: type[T], values: dict[str, Any] | None, where: str) -> T:
    if values is not None and not isinstance(values, dict):
        raise ValueError(f"{where}: expected a mapping of parameters, got {type(values).__name__} "
                         f"{short_repr(values)}")
    values = dict(values or {})
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(map(str, set(values) - known))
    if unknown:
        raise ValueError(f"{where}: unknown parameter(s) {', '.join(map(short_repr, unknown))}; known: "
                         f"{sorted(known)}")
    try:
        return cls(**values)
    except TypeError as exc:  # a value of a type the section's checks cannot compare (a list for a number)
        raise ValueError(f"{where}: {short_text(str(exc))}") from None


def parse_params(raw: dict[str, Any], where: str = "params") -> Params:
    """Build :class:`Params` from a parsed ``params.yaml``; unknown keys are errors."""
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected a mapping of sections (common, train, ...), got "
                         f"{type(raw).__name__} {short_repr(raw)}")
    # a misspelt section would otherwise be read as absent, its settings silently the defaults
    unknown = sorted(map(str, set(raw) - {f.name for f in fields(Params)}))
    if unknown:
        raise ValueError(f"{where}: unknown section(s) {', '.join(map(repr, unknown))}; known: "
                         f"{', '.join(f.name for f in fields(Params))}")
    return Params(
        common=_section(CommonConfig, raw.get("common"), f"{where}: common"),
        validate=_section(ValidationConfig, raw.get("validate"), f"{where}: validate"),
        train=_section(TrainConfig, raw.get("train"), f"{where}: train"),
        planner=_section(PlannerConfig, raw.get("planner"), f"{where}: planner"),
        evaluate=_section(EvaluateConfig, raw.get("evaluate"), f"{where}: evaluate"),
        growth=_section(GrowthConfig, raw.get("growth"), f"{where}: growth"),
        warehouse=_section(WarehouseConfig, raw.get("warehouse"), f"{where}: warehouse"),
        desk=_section(DeskConfig, raw.get("desk"), f"{where}: desk"),
    )


def warehouse_config(params: Params, environ: Mapping[str, str] | None = None) -> WarehouseConfig:
    """The engine (and Spark master) the ``decode_smf``, ``build_marts`` and ``train`` stages run on.

    It is params.yaml's ``warehouse`` section, each key overridden by its environment variable when that is set.

    Examples
    --------
    >>> warehouse_config(parse_params({}), {}).engine
    'duckdb'
    >>> warehouse_config(parse_params({}), {"KNEECAP_ENGINE": "spark"}).engine
    'spark'
    >>> warehouse_config(parse_params({}), {"KNEECAP_ENGINE": "sparc"})
    Traceback (most recent call last):
    ...
    ValueError: KNEECAP_ENGINE='sparc': warehouse.engine must be one of duckdb, spark, got 'sparc'
    """
    environ = os.environ if environ is None else environ
    chosen = params.warehouse
    engine = environ.get(ENGINE_ENV) or chosen.engine
    master = environ.get(SPARK_MASTER_ENV) or chosen.spark_master
    try:
        return WarehouseConfig(engine=engine, spark_master=master)
    except ValueError as exc:
        named = [f"{k}={environ[k]!r}" for k in (ENGINE_ENV, SPARK_MASTER_ENV) if environ.get(k)]
        raise ValueError(f"{', '.join(named)}: {exc}" if named else str(exc)) from None


def load_params(path: str | os.PathLike[str] = "params.yaml") -> Params:
    """Read and type ``params.yaml``.

    Raises
    ------
    OSError
        The file cannot be read.
    ValueError
        One line naming the file and the problem: not a regular file or too large
        (:func:`kneecap.limits.read_text`), not YAML, a tag the safe loader does not build, aliases
        past :data:`kneecap.limits.MAX_YAML_NODES`, or a section or value :func:`parse_params` refuses.
    """
    path = Path(path)
    return parse_params(load_yaml(read_text(path), str(path)) or {}, where=str(path))
