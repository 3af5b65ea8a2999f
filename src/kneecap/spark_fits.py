"""Per-workload fits distributed with Spark, running kneecap's own fitting code on the executors.

:func:`train_workloads` is :func:`kneecap.training.train_workloads` with each workload's fits in
a Spark task (``groupBy("workload").applyInPandas``), calling
:func:`kneecap.training.train_workload`; the fitted models return to the driver (pickled), which
logs and registers them in MLflow exactly as for a local run (the ``train`` stage does that part,
unchanged). The decode on Spark is :mod:`kneecap.spark_jobs`.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import SparkSession

from kneecap import spark_engine, training
from kneecap.config import Params

#: The position of each row in ``fct_measurements``, carried through Spark so a workload's rows reach
#: its fit in the order the local path gives them (a bootstrap draws rows by position).
ROW = "_kneecap_row"


def _text_for_null(table: pa.Table) -> pa.Table:
    """An all-null column (Arrow's null type, Spark's VOID, which its pandas UDFs refuse) typed as text."""
    for i, f in enumerate(table.schema):
        if pa.types.is_null(f.type):
            table = table.set_column(i, pa.field(f.name, pa.string()), table.column(i).cast(pa.string()))
    return table


def train_workloads(fct: pd.DataFrame, workloads: pd.DataFrame, params: Params, *,
                    spark: SparkSession | None = None, master: str | None = None) -> list[training.TrainedModel]:
    """:func:`kneecap.training.train_workloads` with each workload fitted in a Spark task.

    Each task gets its workload's rows of ``fct`` in their order and with their pandas types
    (:func:`kneecap.training.workload_rows`) and runs :func:`kneecap.training.train_workload`, so
    the fits are the local path's; the models come back pickled, in workload order.

    Parameters
    ----------
    fct, workloads, params
        As for :func:`kneecap.training.train_workloads`.
    spark
        A running session to use; None uses the active one, else starts one on ``master``.
    master
        Spark master URL when this starts the session (:func:`kneecap.spark_engine.session`).
    """
    names = sorted(workloads["workload"].unique())
    rows = fct.assign(**{ROW: np.arange(len(fct))})
    rows = rows[rows["workload"].isin(names)]
    columns, dtypes = list(fct.columns), {c: fct[c].dtype for c in fct.columns}

    def fit(group: pd.DataFrame) -> pd.DataFrame:
        rows = training.workload_rows(group, columns, dtypes, order=ROW)
        workload = str(rows["workload"].iloc[0])
        models = list(training.train_workload(workload, rows, params))
        # object, not pandas' Arrow-backed text: pyspark's return conversion takes plain arrays only
        return pd.DataFrame({"workload": pd.Series([workload] * len(models), dtype=object),
                             "position": pd.Series(range(len(models)), dtype="int32"),
                             "model": pd.Series([pickle.dumps(m) for m in models], dtype=object)})

    with spark_engine.session_for(spark, master, "kneecap-train") as session:
        frame = session.createDataFrame(_text_for_null(spark_engine.arrow_input(rows)))
        # one task per workload: as many partitions as workloads (the default would be the
        # shuffle setting, which on a cluster may be far more or fewer)
        fitted: pd.DataFrame = (frame.repartition(max(1, len(names)), "workload").groupBy("workload")
                  .applyInPandas(fit, "workload string, position int, model binary")
                                .toPandas())
    fitted = fitted.assign(order=fitted["workload"].map({w: i for i, w in enumerate(names)}))
    fitted = fitted.sort_values(["order", "position"], kind="stable")
    # unpickled here only: the blobs are this job's own executors' output
    return [pickle.loads(blob) for blob in fitted["model"]]
