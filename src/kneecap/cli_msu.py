"""The ``msu_*`` columns of ``kneecap forecast``: each SMF class scenario priced from the published marts.

``kneecap forecast --marts data/processed`` (the default) reads ``fct_measurements`` and
``fct_msu_intervals`` once (:func:`kneecap.warehouse.read_snapshot`) and adds, to the row of every
scenario answered by a WLM class's model (:func:`kneecap.measured_fit.is_class_model`), the columns of
:data:`kneecap.msu_answer.MSU_COLUMNS` (:func:`kneecap.msu_answer.class_msu_answer`): the same numbers
the desk's MSU cost page shows. Marts without ``fct_msu_intervals`` (published before it existed, or
none at all) leave the table as it is.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from kneecap import msu_answer, warehouse
from kneecap.measured_fit import is_class_model

__all__ = ["with_msu_columns"]


def with_msu_columns(table: pd.DataFrame, scenarios: Sequence[Mapping[str, Any]], load: Callable[[str], Any],
                     marts: str | os.PathLike[str], *, growth_policy: Any = None) -> pd.DataFrame:
    """``table`` (one row per scenario, in order) with the ``msu_*`` columns on its SMF class rows.

    ``load`` is the champion loader of ``kneecap forecast`` (workload -> models with ``response``).
    """
    if table.empty or "knee_tps" not in table or not table["knee_tps"].notna().any():
        return table  # no WLM class answered
    try:
        snap = warehouse.read_snapshot(marts, ["fct_measurements", "fct_msu_intervals"]).tables
    except (FileNotFoundError, OSError):
        return table
    done: dict[tuple[Any, ...], dict[str, Any]] = {}
    models: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for i, scenario in enumerate(scenarios):
        row = table.iloc[i]
        if isinstance(row.get("error"), str) and row.get("error"):
            rows.append({})
            continue
        workload = str(row["workload"])
        if workload not in models:
            models[workload] = load(workload).response
        model = models[workload]
        if not is_class_model(model):
            rows.append({})
            continue
        key = (workload, scenario.get("n_gcp"), scenario.get("n_ziip"))
        if key not in done:
            done[key] = msu_answer.class_msu_answer(workload, snap["fct_measurements"], snap["fct_msu_intervals"],
                                                    model, scenario, growth_policy=growth_policy)
        rows.append(done[key])
    extra = pd.DataFrame(rows, index=table.index, columns=list(msu_answer.MSU_COLUMNS))
    return pd.concat([table, extra], axis=1)
