"""Run the suites and turn GX results into failures that name table, row and rule."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import great_expectations as gx
import pandas as pd
from great_expectations.data_context.types.base import ProgressBarsConfig

from kneecap import schema
from kneecap.config import ValidationConfig
from kneecap.validation import suites
from kneecap.validation.checks import add_check_columns


@dataclass(frozen=True)
class Failure:
    """One failed expectation on one table, with the rows that broke it."""

    table: str
    rule: str
    column: str | None
    rows: tuple[str, ...]
    values: tuple[object, ...]
    #: positions of the failing rows in the table; empty for a rule about the whole table
    positions: tuple[int, ...] = ()

    def __str__(self) -> str:
        where = f" column {self.column}" if self.column else ""
        rows = ", ".join(self.rows[:10]) + (" ..." if len(self.rows) > 10 else "")
        shown = ", ".join(map(str, self.values[:10]))
        return f"{self.table}: rule {self.rule}{where} failed at rows [{rows}] values [{shown}]"


@dataclass(frozen=True)
class TableReport:
    """One table's verdict: rows checked, rules it was held to and the failures."""

    table: str
    n_rows: int
    n_expectations: int
    failures: tuple[Failure, ...]

    @property
    def success(self) -> bool:
        """True when no rule failed on the table."""
        return not self.failures


@dataclass(frozen=True)
class ValidationReport:
    """The verdict on every table validated in one run."""

    tables: tuple[TableReport, ...] = field(default_factory=tuple)

    @property
    def success(self) -> bool:
        """True when every table passed."""
        return all(t.success for t in self.tables)

    @property
    def failures(self) -> list[Failure]:
        """Every table's failures, in table order."""
        return [f for t in self.tables for f in t.failures]

    def to_dict(self) -> dict[str, object]:
        """The report as JSON-ready values (the validate stage's report file)."""
        return {
            "success": self.success,
            "tables": [
                {
                    "table": t.table,
                    "n_rows": t.n_rows,
                    "n_expectations": t.n_expectations,
                    "success": t.success,
                    "failures": [
                        {"rule": f.rule, "column": f.column, "rows": list(f.rows),
                         "values": [str(v) for v in f.values]}
                        for f in t.failures
                    ],
                }
                for t in self.tables
            ],
        }


def _row_label(frame: pd.DataFrame, index: object) -> str:
    row = frame.loc[index]
    keys = [k for k in schema.KEY_COLUMNS if k in frame.columns]
    if not keys:
        keys = [c for c in ("workload", "source_id") if c in frame.columns]
    return "/".join(str(row[k]) for k in keys) if keys else str(index)


def _context() -> gx.data_context.AbstractDataContext:
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context


_DOCS_SITE = "kneecap"


def _add_docs_site(context: gx.data_context.AbstractDataContext, docs_dir: str | os.PathLike[str]) -> None:
    """GX's static Data Docs site in ``docs_dir`` (``index.html``: every suite and every run)."""
    context.add_data_docs_site(site_name=_DOCS_SITE, site_config={
        "class_name": "SiteBuilder",
        "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                          "base_directory": str(Path(docs_dir).resolve())},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    })


def validate_tables(
    tables: Mapping[str, pd.DataFrame], config: ValidationConfig = ValidationConfig(),
    *, docs_dir: str | os.PathLike[str] | None = None,
) -> ValidationReport:
    """Validate every table that has a suite; tables without one are reported as such.

    With ``docs_dir`` each table is validated by a GX Checkpoint whose ``UpdateDataDocsAction``
    renders the suites and results as GX's Data Docs there (open ``docs_dir/index.html``), the
    report GX users know; the returned report is the same either way.
    """
    context = _context()
    if docs_dir is not None:
        _add_docs_site(context, docs_dir)
    source = context.data_sources.add_pandas("kneecap")
    reports = []
    for name, frame in tables.items():
        builder = suites.SUITES.get(name)
        if builder is None:
            raise KeyError(f"{name}: no validation suite; add one to kneecap.validation.suites")
        checked = add_check_columns(frame) if name == "fct_measurements" else frame
        checked = checked.reset_index(drop=True)
        suite = context.suites.add(builder(config))
        batch = source.add_dataframe_asset(name).add_batch_definition_whole_dataframe("all")
        definition = context.validation_definitions.add(
            gx.ValidationDefinition(name=f"validate_{name}", data=batch, suite=suite)
        )
        if docs_dir is None:
            result = definition.run(batch_parameters={"dataframe": checked}, result_format="COMPLETE")
        else:
            checkpoint = context.checkpoints.add(gx.Checkpoint(
                name=f"gate_{name}", validation_definitions=[definition], result_format="COMPLETE",
                actions=[gx.checkpoint.UpdateDataDocsAction(name="data_docs", site_names=[_DOCS_SITE])]))
            result = next(iter(checkpoint.run(batch_parameters={"dataframe": checked}).run_results.values()))
        failures = []
        for res in result.results:
            if res.success:
                continue
            cfg = res.expectation_config
            assert cfg is not None  # a suite's run reports the expectation behind each result
            indexes = res.result.get("unexpected_index_list") or []
            values = res.result.get("unexpected_list") or [res.result.get("observed_value")]
            failures.append(
                Failure(
                    table=name,
                    rule=cfg.type,
                    column=cfg.kwargs.get("column") or ",".join(cfg.kwargs.get("column_list", [])),
                    rows=tuple(_row_label(checked, i) for i in indexes if i in checked.index),
                    values=tuple(values),
                    positions=tuple(int(i) for i in indexes if i in checked.index),
                )
            )
        reports.append(TableReport(name, len(frame), len(suite.expectations), tuple(failures)))
    return ValidationReport(tuple(reports))


#: Tables whose failing rows can be set aside: one row is one measured point, and the others
#: still stand without it. A failure of any other table, or of a rule about a whole table
#: (its columns), stops the publish.
ROW_TABLES = ("fct_measurements",)


def quarantine(tables: Mapping[str, pd.DataFrame], report: ValidationReport
               ) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, list[Failure]]:
    """Set aside the rows that broke a row rule: ``(clean tables, quarantined rows, blocking failures)``.

    Quarantined rows keep their key columns plus ``rule``, ``column`` and ``value`` (one line per
    rule a row broke). ``dim_workloads`` keeps only workloads that still have a measured point.
    ``blocking`` lists failures no quarantine can mend (a table's columns, another table's rows):
    when it is not empty nothing should be published.
    """
    blocking = [f for f in report.failures if f.table not in ROW_TABLES or not f.positions]
    clean = {name: frame.reset_index(drop=True) for name, frame in tables.items()}
    lines = []
    bad: set[int] = set()
    for failure in report.failures:
        if failure.table not in ROW_TABLES or not failure.positions:
            continue
        frame = clean[failure.table]
        for pos, value in zip(failure.positions, list(failure.values) + [None] * len(failure.positions)):
            bad.add(pos)
            keys = {k: frame.iloc[pos][k] for k in schema.KEY_COLUMNS if k in frame.columns}
            lines.append({**keys, "rule": failure.rule, "column": failure.column, "value": str(value)})
    if bad:
        fct = clean["fct_measurements"]
        clean["fct_measurements"] = fct.drop(index=sorted(bad)).reset_index(drop=True)
        if "dim_workloads" in clean:
            dims = clean["dim_workloads"]
            kept = dims["workload"].isin(clean["fct_measurements"]["workload"])
            clean["dim_workloads"] = dims[kept].reset_index(drop=True)
    columns = [*schema.KEY_COLUMNS, "rule", "column", "value"]
    return clean, pd.DataFrame(lines, columns=columns), blocking
