"""Published what-if factors: a cited catalogue of configuration effects, applied to a fitted cost.

``data/reference/factors.csv`` lists configuration choices whose effect a seed document prints
(SMC-Rv2 instead of TCP/IP, an LTPA token, the z/OS Connect communication stub, ...), each with
the value as printed, its unit, where it applies and the sentence or table it comes from.
:func:`read_catalogue` reads and checks it; :func:`adjust_demand` applies a list of factors to a
workload's CPU demand per transaction; :func:`kneecap.forecasting.factor_models` puts that demand
into the fitted response model, so the knee and the zIIP answer are recomputed with it.

Only CPU-cost factors with a printed value can be applied. A factor whose source prints no value
(a chart), or whose effect is on response time, throughput or an unstated metric, is listed with
its citation and refused with the reason when applied.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from kneecap.limits import InputError, regular_file

#: Largest factor catalogue read: the bundled one is 13 KB, a few thousand factors a few MB.
MAX_CATALOGUE_BYTES = 16 << 20

#: The exact header of ``data/reference/factors.csv``.
CATALOGUE_COLUMNS: tuple[str, ...] = (
    "factor_id", "factor", "applies_to", "effect", "value", "base_value", "unit", "qualifier",
    "apply_as", "cpu_on", "status", "source_file", "section", "table_or_figure", "quote", "note",
)
#: What a factor changes. Only ``cpu_cost`` factors are applied to a model.
EFFECTS = ("cpu_cost", "response", "throughput", "unspecified")
#: How a ``cpu_cost`` factor changes the cost it applies to.
APPLY_AS = ("multiply", "add")
#: Where the changed CPU runs: ``gcp`` when the source says general CPs, else ``unstated``.
CPU_ON = ("gcp", "unstated")
#: ``printed``: the value is in the source's text or a text table; ``missing``: only in a chart.
STATUSES = ("printed", "missing")
#: Units a value may carry.
UNITS = ("%", "ms", "ratio", "tps")
#: How the value was printed: exactly, about (``~``), or as a bound (``>``).
QUALIFIERS = ("", "~", ">")

_SOURCE_FILE = re.compile(r"\d{3}_[0-9a-f]{16}\.txt")
_FACTOR_ID = re.compile(r"[a-z][a-z0-9_]*")


class FactorError(ValueError):
    """A factor that cannot be read or applied; the message names the factor and the reason."""


@dataclass(frozen=True)
class Factor:
    """One catalogue row (see ``data/reference/README.md`` for the columns)."""

    factor_id: str
    factor: str
    applies_to: str
    effect: str
    value: float | None
    base_value: float | None
    unit: str
    qualifier: str
    apply_as: str
    cpu_on: str
    status: str
    source_file: str
    section: str
    table_or_figure: str
    quote: str
    note: str

    @property
    def citation(self) -> str:
        """``<seed file>, <section>, <table or figure>: "<quote>"``."""
        return f'{self.source_file}, {self.section}, {self.table_or_figure}: "{self.quote}"'

    @property
    def applicable(self) -> bool:
        """True when :func:`factor_change` can apply it to a CPU cost."""
        return not unapplicable_reason(self)


def unapplicable_reason(factor: Factor) -> str:
    """Why ``factor`` cannot change a CPU cost, or ``""`` when it can."""
    if factor.status != "printed" or factor.value is None:
        return (f"factor {factor.factor_id!r} has no printed value ({factor.table_or_figure}): "
                "nothing is read off charts")
    if factor.effect != "cpu_cost":
        return (f"factor {factor.factor_id!r} changes {factor.effect.replace('_', ' ')}, not CPU cost: "
                "only CPU-cost factors are applied to a fitted model")
    return ""


def _number(cell: str, where: str, column: str, problems: list[str]) -> float | None:
    if cell == "":
        return None
    try:
        value = float(cell)
    except ValueError:
        problems.append(f"{where}: {column}: {cell!r} is not a number")
        return None
    if not math.isfinite(value):
        problems.append(f"{where}: {column}: {cell!r} is not finite")
        return None
    return value


def _check_row(f: Factor, where: str, problems: list[str]) -> None:
    """Consistency rules of one row; appends ``file:line: column: problem`` strings."""
    for column, allowed in (("effect", EFFECTS), ("cpu_on", CPU_ON), ("status", STATUSES),
                            ("unit", UNITS), ("qualifier", QUALIFIERS)):
        if getattr(f, column) not in allowed:
            problems.append(f"{where}: {column}: {getattr(f, column)!r} is not one of {allowed}")
    if not _FACTOR_ID.fullmatch(f.factor_id):
        problems.append(f"{where}: factor_id: {f.factor_id!r} is not snake_case")
    if not _SOURCE_FILE.fullmatch(f.source_file):
        problems.append(f"{where}: source_file: {f.source_file!r} is not a seed file name")
    for column in ("factor", "applies_to", "section", "table_or_figure", "quote"):
        if not getattr(f, column):
            problems.append(f"{where}: {column}: empty (every row cites its source)")
    if f.status == "missing" and (f.value is not None or f.base_value is not None):
        problems.append(f"{where}: value: a 'missing' factor has no value")
    if f.status == "printed" and f.value is None:
        problems.append(f"{where}: value: a 'printed' factor needs its value")
    if f.effect == "cpu_cost" and f.status == "printed":
        if f.apply_as not in APPLY_AS:
            problems.append(f"{where}: apply_as: {f.apply_as!r} is not one of {APPLY_AS}")
        elif f.apply_as == "add" and f.unit != "ms":
            problems.append(f"{where}: unit: an added cost is in ms, not {f.unit!r}")
        elif f.apply_as == "multiply" and f.unit == "ms" and not f.base_value:
            problems.append(f"{where}: base_value: a multiplying factor in ms needs the base it divides")
        elif f.apply_as == "multiply" and f.unit in ("%", "ratio") and f.base_value is not None:
            problems.append(f"{where}: base_value: a {f.unit} factor has no base value")
    elif f.apply_as:
        problems.append(f"{where}: apply_as: only printed CPU-cost factors are applied, leave it empty")


def read_catalogue(path: str | os.PathLike[str]) -> dict[str, Factor]:
    """Read and check a factor catalogue (``data/reference/factors.csv``).

    Returns
    -------
    dict
        ``factor_id`` -> :class:`Factor`, in file order.

    Raises
    ------
    FactorError
        Listing every problem as ``file:line: column: problem``.
    """
    path = Path(path)
    try:
        regular_file(path, MAX_CATALOGUE_BYTES)
    except InputError as exc:
        raise FactorError(str(exc)) from None
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != CATALOGUE_COLUMNS:
            raise FactorError(f"{path}:1: (header): expected exactly {', '.join(CATALOGUE_COLUMNS)}")
        catalogue: dict[str, Factor] = {}
        problems: list[str] = []
        for line, raw in enumerate(reader, start=2):
            if not any(c.strip() for c in raw):
                continue
            where = f"{path}:{line}"
            if len(raw) != len(CATALOGUE_COLUMNS):
                problems.append(f"{where}: (row): {len(raw)} cells, header has {len(CATALOGUE_COLUMNS)}")
                continue
            cells = dict(zip(CATALOGUE_COLUMNS, (c.strip() for c in raw)))
            numbers = {c: _number(cells[c], where, c, problems) for c in ("value", "base_value")}
            # text cells and parsed numbers in one mapping: Factor's own signature checks the names
            fields: dict[str, Any] = {**cells, **numbers}
            factor = Factor(**fields)
            _check_row(factor, where, problems)
            if factor.factor_id in catalogue:
                problems.append(f"{where}: factor_id: {factor.factor_id!r} repeats an earlier row")
            catalogue[factor.factor_id] = factor
    if problems:
        raise FactorError("\n".join(problems))
    return catalogue


def catalogue_frame(catalogue: Mapping[str, Factor]) -> pd.DataFrame:
    """The catalogue as a table, plus ``applicable`` and ``why_not`` (for the desk and reports)."""
    rows = [{**{c: getattr(f, c) for c in CATALOGUE_COLUMNS}, "applicable": f.applicable,
             "why_not": unapplicable_reason(f)} for f in catalogue.values()]
    return pd.DataFrame(rows, columns=[*CATALOGUE_COLUMNS, "applicable", "why_not"])


def multiplier(factor: Factor) -> float:
    r"""The cost multiplier of a ``multiply`` factor.

    Notes
    -----
    .. math:: m = 1 + v/100 \;(\%), \qquad m = v \;(\text{ratio}), \qquad m = v / b \;(\text{ms, with base } b)

    e.g. SMC-Rv2's "~ 51%" server CPU cost reduction is ``value`` -51 %: m = 0.49.
    """
    reason = unapplicable_reason(factor)
    if reason or factor.apply_as != "multiply":
        raise FactorError(reason or f"factor {factor.factor_id!r} adds a cost; it has no multiplier")
    assert factor.value is not None  # unapplicable_reason checked it
    if factor.unit == "%":
        return 1.0 + factor.value / 100.0
    if factor.unit == "ratio":
        return factor.value
    assert factor.base_value is not None
    return factor.value / factor.base_value


def added_ms(factor: Factor) -> float:
    r"""The CPU ms per transaction an ``add`` factor adds (negative: saves).

    Notes
    -----
    .. math:: \Delta = v - b \;(\text{with / without}), \qquad \Delta = v \;(\text{a printed saving})

    e.g. the 8K stub's 0.228 - 0.077 = 0.151 ms; LTPA's -14 ms.
    """
    reason = unapplicable_reason(factor)
    if reason or factor.apply_as != "add":
        raise FactorError(reason or f"factor {factor.factor_id!r} multiplies a cost; it adds nothing")
    assert factor.value is not None
    return factor.value - (factor.base_value or 0.0)


def factor_change(factor: Factor, cost_ms: float, share: float = 1.0) -> float:
    r"""The change in CPU ms per transaction when ``factor`` applies to ``share`` of ``cost_ms``.

    Parameters
    ----------
    factor
        An applicable catalogue factor.
    cost_ms
        The workload's CPU cost per transaction before this factor.
    share
        For a multiplying factor, the fraction of the cost it acts on (SMC-Rv2 changes only the
        network CPU, "a small fraction of the overall application transaction cost"); for an
        adding factor, the fraction of transactions it applies to (those calling the stub).

    Notes
    -----
    .. math:: \Delta = s\, c\, (m - 1) \;(\text{multiply}), \qquad \Delta = s\, \Delta_f \;(\text{add})
    """
    if not 0.0 <= share <= 1.0 or math.isnan(share):
        raise FactorError(f"factor {factor.factor_id!r}: share {share!r} must be between 0 and 1")
    if factor.apply_as == "multiply":
        return share * cost_ms * (multiplier(factor) - 1.0)
    return share * added_ms(factor)


@dataclass(frozen=True)
class Applied:
    """One factor as applied: its id, share, the change in ms per transaction and the citation."""

    factor_id: str
    share: float
    delta_ms: float
    citation: str


@dataclass(frozen=True)
class Adjustment:
    """A CPU demand before and after a list of factors.

    ``eligible_fraction`` is the zIIP-eligible share of the demand; a factor whose CPU the source
    places on general CPs (``cpu_on = gcp``) changes only the non-eligible part, so the share moves.
    """

    demand_ms: float
    eligible_fraction: float
    adjusted_demand_ms: float
    adjusted_eligible_fraction: float
    applied: tuple[Applied, ...]

    @property
    def ratio(self) -> float:
        """Adjusted over unadjusted demand."""
        return self.adjusted_demand_ms / self.demand_ms

    def describe(self) -> str:
        """``id (share s): +x ms; ...`` for a report column."""
        return "; ".join(f"{a.factor_id} (share {a.share:g}): {a.delta_ms:+.4g} ms" for a in self.applied)


def _selection(item: str | Mapping[str, Any], i: int) -> tuple[str, float]:
    """``"id"`` or ``{"id": ..., "share": ...}`` -> (id, share)."""
    if isinstance(item, str):
        return item, 1.0
    if isinstance(item, Mapping):
        unknown = sorted(set(item) - {"id", "share"})
        if unknown or "id" not in item:
            raise FactorError(f"factors[{i}]: expected a factor id or {{id, share}}, got {dict(item)!r}")
        try:
            share = float(item.get("share", 1.0))
        except (TypeError, ValueError):
            raise FactorError(f"factors[{i}]: share {item.get('share')!r} is not a number") from None
        return str(item["id"]), share
    raise FactorError(f"factors[{i}]: expected a factor id or {{id, share}}, got {item!r}")


def adjust_demand(demand_ms: float, eligible_fraction: float,
                  selections: Sequence[str | Mapping[str, Any]],
                  catalogue: Mapping[str, Factor]) -> Adjustment:
    r"""Apply catalogue factors, in order, to a CPU demand per transaction.

    Parameters
    ----------
    demand_ms
        CPU ms per transaction (a closed model's fitted demand or a cost model's prediction).
    eligible_fraction
        zIIP-eligible share of ``demand_ms`` (0 for a cost without an engine split).
    selections
        Factor ids, or mappings ``{id, share}`` (share: see :func:`factor_change`).
    catalogue
        From :func:`read_catalogue`.

    Returns
    -------
    Adjustment

    Raises
    ------
    FactorError
        Unknown id, a factor that cannot be applied (and why), or a result that is not a cost:
        zero or negative, or a GCP-only saving larger than the GCP-only work there is.

    Notes
    -----
    For each factor, :math:`\Delta` from :func:`factor_change` at the current demand, then

    .. math::

        D' = D + \Delta, \qquad
        f' = \begin{cases} f D / D' & \text{CPU on GCPs} \\ f & \text{unstated} \end{cases}

    A factor whose source does not say where its CPU ran scales eligible and non-eligible work
    alike (the eligible share is kept).
    """
    if not math.isfinite(demand_ms) or demand_ms <= 0:
        raise FactorError(f"demand_ms {demand_ms!r} must be a positive CPU ms per transaction")
    if not 0.0 <= eligible_fraction <= 1.0:
        raise FactorError(f"eligible_fraction {eligible_fraction!r} must be between 0 and 1")
    demand, fraction, applied = float(demand_ms), float(eligible_fraction), []
    for i, item in enumerate(selections):
        factor_id, share = _selection(item, i)
        if factor_id not in catalogue:
            raise FactorError(f"factors[{i}]: unknown factor {factor_id!r}; known: {', '.join(catalogue)}")
        factor = catalogue[factor_id]
        delta = factor_change(factor, demand, share)
        new = demand + delta
        if new <= 0:
            raise FactorError(f"factor {factor_id!r} (share {share:g}) changes the cost by {delta:+.4g} ms: "
                              f"{demand:.4g} ms would become {new:.4g} ms, not a cost; lower its share")
        if factor.cpu_on == "gcp":
            gcp_only = demand * (1.0 - fraction)
            if gcp_only + delta < -1e-12:
                raise FactorError(f"factor {factor_id!r} (share {share:g}) removes {-delta:.4g} ms of general-CP "
                                  f"work but the workload has {gcp_only:.4g} ms that is not zIIP-eligible "
                                  f"(eligible share {fraction:.3g}); lower its share")
            fraction = fraction * demand / new
        demand = new
        applied.append(Applied(factor_id, share, delta, factor.citation))
    return Adjustment(float(demand_ms), float(eligible_fraction), demand, min(fraction, 1.0), tuple(applied))


def selected_ids(selections: Iterable[str | Mapping[str, Any]]) -> list[str]:
    """The factor ids of a scenario's ``factors`` list."""
    return [_selection(item, i)[0] for i, item in enumerate(selections)]
