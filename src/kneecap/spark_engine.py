"""Spark SQL engine for the pipeline's SQL: the DuckDB files, transpiled at run time.

The SQL under ``pipelines/sql`` is written once, in DuckDB's dialect, in a subset that sqlglot
translates to Spark SQL and Spark can plan (no ``UNION BY NAME``, no ``SELECT * REPLACE``, no
literal text inside a ``strftime`` format, no ordered ``string_agg`` beside another distinct
aggregate: docs/cluster.md); this module translates each file as it runs it, so
there is no second copy of any query. :func:`build_marts` takes the inputs
:func:`kneecap.warehouse.build_marts` takes, binds them the same way
(:func:`kneecap.warehouse.marts_inputs`), registers them as Spark temp views and returns the same
tables as pandas frames, typed as DuckDB's, which the ``build_marts`` stage publishes as Parquet
exactly as it does DuckDB's. Given the decoded tables' folder instead of frames
(``decoded_dir``), Spark reads the partitioned Parquet dataset the ingest wrote
(:mod:`kneecap.ingest.store`) itself, on its executors: the driver never holds the decoded rows.

This is the only kneecap module that imports sqlglot, and with :mod:`kneecap.spark_jobs` (the
decode) and :mod:`kneecap.spark_fits` (the fits) the only ones that import pyspark
(``.importlinter``); both are the ``spark`` extra of ``pyproject.toml`` and need a Java 17+ runtime.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import sqlglot
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from kneecap import warehouse
from kneecap.ingest.catalogue import DECODED_TABLES
from kneecap.ingest.store import table_files

#: Session settings every run needs, whatever the master.
SESSION_CONF: dict[str, str] = {
    # DuckDB's TIMESTAMP is wall-clock time with no zone: sqlglot writes it as TIMESTAMP_NTZ, and
    # naive pandas timestamps must arrive as TIMESTAMP_NTZ too, never shifted by a JVM time zone
    "spark.sql.timestampType": "TIMESTAMP_NTZ",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.showConsoleProgress": "false",
}
#: Extra settings for a ``local[...]`` master, where the marts are kilobytes to megabytes: Spark's
#: default of 200 shuffle partitions would spend most of a run scheduling empty tasks, and a run is
#: over before the JVM's optimising compiler pays off, so the JVM stops at its quick C1 tier (on
#: the bundled data a first build took 12-14 s with it, 28-31 s without). No web UI.
LOCAL_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.driver.memory": "1g",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}


def transpile(sql: str, *, where: str = "SQL") -> str:
    """One DuckDB ``select`` as Spark SQL.

    Raises
    ------
    ValueError
        When the text is not exactly one statement or uses DuckDB syntax sqlglot cannot write in
        Spark's dialect (``where`` names the file); such a file must be rewritten in the shared
        subset rather than copied.

    Examples
    --------
    >>> transpile("select cast(x as varchar) as y from t")
    'SELECT CAST(x AS STRING) AS y FROM t'
    """
    try:
        statements = sqlglot.transpile(sql, read="duckdb", write="spark",
                                       unsupported_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.SqlglotError as exc:
        raise ValueError(f"{where}: cannot translate to Spark SQL: {exc}") from exc
    if len(statements) != 1:
        raise ValueError(f"{where}: a pipeline SQL file holds one select, found {len(statements)} statements")
    return statements[0]


def arrow_input(frame: pd.DataFrame) -> pa.Table:
    """A pandas input as the Arrow table Spark reads, typed as DuckDB types the frame.

    NaN in a float column is null (DuckDB reads it so) and a column of nothing but None is of the null type
    (DuckDB's NULL, Spark's VOID: it takes the type of whatever it meets).
    """
    return pa.Table.from_pandas(frame, preserve_index=False)


def session(master: str | None = None, *, app_name: str = "kneecap-marts") -> SparkSession:
    """A Spark session for the marts (the running one if there is one, with this module's settings).

    Parameters
    ----------
    master
        Spark master URL (``local[2]``, ``spark://host:7077``, ``yarn``, ...); None leaves it to
        Spark's own configuration (``spark-submit --master``, ``spark-defaults.conf``), else
        ``local[*]``.
    """
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    local = bool(master and master.startswith("local"))
    conf = {**SESSION_CONF, **(LOCAL_CONF if local else {})}
    if local and not os.environ.get("PYSPARK_PYTHON"):
        # Python tasks (kneecap.spark_jobs) run on this machine: in this interpreter, which has
        # kneecap and its dependencies, not whatever `python3` is first on PATH. pyspark reads
        # only the variable (at the context's start), not the spark.pyspark.python setting
        os.environ["PYSPARK_PYTHON"] = sys.executable
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


#: pandas' nullable dtypes, which DuckDB's ``.df()`` gives integer and boolean columns with nulls.
_NULLABLE: dict[pa.DataType, Any] = {
    pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
    pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype(),
}


@contextmanager
def session_for(spark: SparkSession | None, master: str | None, app_name: str) -> Iterator[SparkSession]:
    """The given or active session, else one started on ``master`` (:func:`session`) and stopped afterwards."""
    running = spark or SparkSession.getActiveSession()
    if running is not None:
        yield running
        return
    started = session(master, app_name=app_name)
    try:
        yield started
    finally:
        started.stop()


def arrow_result(table: pa.Table) -> pd.DataFrame:
    """A result as pandas, typed as DuckDB's ``.df()`` types it.

    So typed, the stage publishes the same Parquet from either engine.

    Arrow's own conversion differs from DuckDB's in two places: an integer or boolean column with
    nulls (Arrow: float64 or object; DuckDB: pandas' nullable ``Int32``, ``Int64``, ``boolean``),
    and a text column with no text in it, no rows or all null (Arrow: the string dtype; DuckDB:
    object holding None, which Parquet stores with the null type). Timestamps without zone are
    naive datetimes in both.

    Examples
    --------
    >>> table = pa.table({"n": pa.array([1, None], pa.int32()), "s": pa.array([None, None], pa.string())})
    >>> arrow_result(table).dtypes.tolist()
    [Int32Dtype(), dtype('O')]
    """
    frame = table.to_pandas()
    for name, column in zip(table.column_names, table.columns):
        if pa.types.is_string(column.type) and column.null_count == len(column):  # an empty one too
            frame[name] = pd.Series([None] * len(column), index=frame.index, dtype=object)
        elif column.null_count and column.type in _NULLABLE:
            frame[name] = table.select([name]).to_pandas(types_mapper=_NULLABLE.get)[name]
    return frame


#: Columns Spark would add to a decoded table from its partition folders (``system=``, ``month=``, or
#: ``date=`` in a folder an older kneecap wrote by day); the tables carry ``system_id`` and their
#: timestamps themselves, so none are wanted (:func:`read_decoded` reads the files without them).
PARTITION_COLUMNS = ("system", "month", "date")


def read_decoded(spark: SparkSession, directory: str | os.PathLike[str]) -> dict[str, DataFrame]:
    """The decoded tables ``directory`` holds, read by Spark as partitioned Parquet datasets.

    Only tables with committed files are returned, and only those files are read
    (:func:`kneecap.ingest.store.table_files`: a listing, no rows are read on the driver; a file a
    killed ingest renamed before its manifest line is not read); the caller binds the others
    empty. Every input's files of a table share one schema (the ingest writes text columns as text
    even when empty), which Spark takes from one file.

    The files are read without partition discovery (no ``basePath``: each file's folder is its own
    base), so a table folder holding month partitions beside the day partitions of an older kneecap
    (``month=`` and ``date=`` under one ``system=``) reads whole, where discovery would refuse the two
    partition column names.
    """
    out = {}
    for name in DECODED_TABLES:
        folder = Path(directory) / name
        files = table_files(folder)
        if files:
            frame = spark.read.parquet(*map(str, files))
            out[name] = frame.select(*[c for c in frame.columns if c not in PARTITION_COLUMNS])
    return out


def run_sql_files(files: Iterable[str | os.PathLike[str]], inputs: Mapping[str, pd.DataFrame], *,
                  spark: SparkSession, decoded_dir: str | os.PathLike[str] | None = None,
                  keep: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
    """:func:`kneecap.warehouse.run_sql_files` on Spark.

    Each file, transpiled, becomes the temp view named by its stem for the files after it. With
    ``decoded_dir``, the decoded tables found there (:func:`read_decoded`) replace the inputs of
    the same names.

    The views live in a session of their own (``spark.newSession()``: same cluster, separate
    temp views), so two builds in one application do not see each other's tables. Each result is
    cached: the later files and the conversion to pandas read it without recomputing its chain.

    Returns
    -------
    dict
        Table name -> result as pandas, for every file (or only those named in ``keep``: the
        others, staging tables as large as the decoded input, then never reach the driver), in
        run order.
    """
    wanted = None if keep is None else set(keep)
    own = spark.newSession()
    read = read_decoded(own, decoded_dir) if decoded_dir is not None else {}
    for name, frame in inputs.items():
        if name not in read:
            own.createDataFrame(arrow_input(frame)).createOrReplaceTempView(name)
    for name, dataset in read.items():
        dataset.createOrReplaceTempView(name)
    results: dict[str, DataFrame] = {}
    try:
        for file in files:
            file = Path(file)
            sql = transpile(file.read_text(encoding="utf-8"), where=str(file))
            try:
                result = own.sql(sql).cache()
            except (PySparkException, Py4JJavaError) as exc:  # a planner failure is the JVM's own
                raise RuntimeError(f"{file}: {exc}") from exc
            result.createOrReplaceTempView(file.stem)
            results[file.stem] = result
        return {name: arrow_result(result.toArrow()) for name, result in results.items()
                if wanted is None or name in wanted}
    finally:
        for result in results.values():
            result.unpersist()


def build_marts(measurements: pd.DataFrame, sources: pd.DataFrame,
                decoded: Mapping[str, pd.DataFrame] | None = None, *,
                sql_root: str | os.PathLike[str], decoded_dir: str | os.PathLike[str] | None = None,
                keep: Iterable[str] | None = None, spark: SparkSession | None = None,
                master: str | None = None) -> dict[str, pd.DataFrame]:
    """:func:`kneecap.warehouse.build_marts` on Spark SQL: the same inputs, files and tables.

    Parameters
    ----------
    measurements, sources, decoded, sql_root
        As for :func:`kneecap.warehouse.build_marts`.
    decoded_dir
        The decoded tables' folder (``data/interim/smf``), read by Spark itself
        (:func:`read_decoded`) instead of ``decoded`` frames; what the ``build_marts`` stage
        passes, so no decoded row passes through the driver.
    keep
        The tables to return (the stage: the marts); None returns every table.
    spark
        A running session to use (and leave running); None uses the process's active session,
        else starts one on ``master`` and stops it when the tables are built.
    master
        Spark master URL when this starts the session (see :func:`session`).
    """
    inputs = warehouse.marts_inputs(measurements, sources, decoded)
    files = warehouse.sql_files(sql_root)
    spark = spark or SparkSession.getActiveSession()
    if spark is not None:
        return run_sql_files(files, inputs, spark=spark, decoded_dir=decoded_dir, keep=keep)
    started = session(master)
    try:
        return run_sql_files(files, inputs, spark=started, decoded_dir=decoded_dir, keep=keep)
    finally:
        started.stop()
