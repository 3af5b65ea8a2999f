"""MLflow in one module: tracking store, logging runs, the registry and loading by alias.

The only kneecap module that imports mlflow. Default store: a SQLite file inside the project
(``sqlite:///<project>/mlflow.db``, artifacts in ``<project>/mlruns``); ``MLFLOW_TRACKING_URI``
points it at a server instead. A model is a kneecap results object stored as a JSON document
(:mod:`kneecap.modeling.serialise`: fitted parameters, bootstrap draws, residuals) inside an MLflow
pyfunc model directory whose loader is this module, registered as ``kneecap-<workload>-<kind>`` and
loaded by alias (``champion``). Loading reads the MLmodel YAML and the JSON and rebuilds the object
with kneecap's own classes; it never unpickles and never runs code from the store. Promotion is an
explicit command, never a side effect of training.

Names: the registry holds ``kneecap-<workload>-<kind>``; kneecap lists and prints a model as
``<workload>-<kind>`` (:func:`listed_name`) and takes either form (:func:`resolve_name`).

An HTTP tracking server is probed when kneecap is pointed at it (:func:`configure`): one that does
not answer within :data:`PROBE_TIMEOUT_S` seconds is a :class:`TrackingUnreachable` naming the URI,
not minutes of MLflow's retries. MLflow's own retries are bounded too (:data:`HTTP_DEFAULTS`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
#: MLflow's HTTP retry policy where the user has not set one. MLflow's own (7 retries, backoff
#: factor 2, 120 s per request) waits about four minutes on a server that went away; these give up
#: in about ten seconds (1 + 2 + 4 s of backoff). Each stays overridable by its environment variable.
HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "3", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
                 "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}
for _variable, _value in HTTP_DEFAULTS.items():
    os.environ.setdefault(_variable, _value)

import mlflow  # noqa: E402
import mlflow.artifacts  # noqa: E402
import mlflow.exceptions  # noqa: E402
import pandas as pd  # noqa: E402
import yaml  # noqa: E402
from mlflow.data.pandas_dataset import from_pandas as dataset_from_pandas  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

EXPERIMENT = "kneecap"
CHAMPION = "champion"
MODEL_PREFIX = "kneecap-"
_RESULTS_FILE = "results.json"
_DATA_PATH = f"data/{_RESULTS_FILE}"  # where mlflow.pyfunc puts ``data_path``
_MLMODEL = "MLmodel"
_MAX_MLMODEL_BYTES = 1024 * 1024
_LOADER_MODULE = "kneecap.tracking"
_FORMAT_KEY = "kneecap_format"


def default_tracking_uri(project_dir: str | os.PathLike[str] = ".") -> str:
    """``MLFLOW_TRACKING_URI`` if set, else a SQLite store in ``project_dir``."""
    env = os.environ.get("MLFLOW_TRACKING_URI")
    if env:
        return env
    return f"sqlite:///{Path(project_dir).resolve() / 'mlflow.db'}"


#: Seconds an HTTP tracking server has to answer :func:`probe` before it counts as unreachable.
PROBE_TIMEOUT_S = 5.0


class TrackingUnreachable(ConnectionError):
    """The tracking server at a URI did not answer; the message is one line naming the URI and what to do."""


def unreachable_message(uri: str, reason: object) -> str:
    """The one line a user reads when the tracking server at ``uri`` does not answer.

    Examples
    --------
    >>> print(unreachable_message("http://127.0.0.1:1", "Connection refused"))
    tracking server http://127.0.0.1:1 did not answer (Connection refused): start it (`make mlflow-server`), \
or fix --tracking-uri / MLFLOW_TRACKING_URI (unset, kneecap uses the local store ./mlflow.db)
    """
    return (f"tracking server {uri} did not answer ({reason}): start it (`make mlflow-server`), or fix "
            "--tracking-uri / MLFLOW_TRACKING_URI (unset, kneecap uses the local store ./mlflow.db)")


def probe(uri: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Raise :class:`TrackingUnreachable` if the HTTP(S) server at ``uri`` does not answer in ``timeout`` s.

    Any HTTP answer counts as reachable (a proxy asking for credentials is a server there, and
    MLflow's own calls then say what is wrong), and so does a TLS handshake kneecap's plain client
    cannot verify (MLflow may be told to trust it). Other URIs (a SQLite file, ``databricks``) are
    not probed.
    """
    if not uri.startswith(("http://", "https://")):
        return
    import ssl
    import urllib.error
    import urllib.request

    try:
        urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=timeout).close()  # noqa: S310 - http(s) only
    except urllib.error.HTTPError:
        return
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, ssl.SSLError):
            return
        if isinstance(reason, OSError) and reason.strerror:
            reason = reason.strerror
        raise TrackingUnreachable(unreachable_message(uri, reason)) from exc


def registry_error(exc: BaseException) -> str | None:
    """One line for a failure of the tracking server kneecap is pointed at, or None if ``exc`` is not one.

    :class:`TrackingUnreachable` says itself; an MLflow error (a server that went away after
    MLflow's bounded retries, or a URI that is not an MLflow server) gives its first line after
    the URI, so the CLI prints one line and not MLflow's traceback.
    """
    if isinstance(exc, TrackingUnreachable):
        return str(exc)
    if isinstance(exc, mlflow.exceptions.MlflowException):
        first = (exc.message.strip().splitlines() or [type(exc).__name__])[0]
        return f"tracking server {mlflow.get_tracking_uri()}: {first}"
    return None


def configure(tracking_uri: str | None = None, project_dir: str | os.PathLike[str] = ".") -> str:
    """Point mlflow at the store (and the registry at the same place); returns the URI.

    Raises :class:`TrackingUnreachable` when ``tracking_uri`` (or ``MLFLOW_TRACKING_URI``) is an
    HTTP server that does not answer (:func:`probe`).
    """
    uri = tracking_uri or default_tracking_uri(project_dir)
    probe(uri)
    mlflow.set_tracking_uri(uri)
    mlflow.set_registry_uri(uri)
    if uri.startswith("sqlite:") and mlflow.get_experiment_by_name(EXPERIMENT) is None:
        artifacts = (Path(project_dir).resolve() / "mlruns").as_uri()
        mlflow.create_experiment(EXPERIMENT, artifact_location=artifacts)
    mlflow.set_experiment(EXPERIMENT)
    return uri


def model_name(workload: str, kind: str) -> str:
    """Registered-model name of one workload's model of one kind (``response`` or ``cost``)."""
    return f"{MODEL_PREFIX}{workload}-{kind}"


def listed_name(name: str) -> str:
    """A registered model's name as kneecap lists and prints it: ``<workload>-<kind>``.

    Examples
    --------
    >>> listed_name("kneecap-ZCONRPT-response")
    'ZCONRPT-response'
    """
    return name.removeprefix(MODEL_PREFIX)


_ERROR_METRICS = (("metric.loo_mape_pct", "leave-one-out"), ("metric.train_mape_resp_ms", "fit, response"),
                  ("metric.train_mape_tps", "fit, tps"))


def models_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The registry (:func:`registered_models`) as a planner reads it: one narrow row per version.

    ``kneecap models`` prints it (``--wide`` prints the registry frame itself); the names are the ones
    kneecap shows (:func:`listed_name`), the error the first of the registered errors there is.
    """
    def error(row) -> str:
        for column, what in _ERROR_METRICS:
            value = row.get(column)
            if value is not None and pd.notna(value):
                return f"{value:.1f} % ({what})"
        return "-"

    return pd.DataFrame({
        "model": frame["name"].map(listed_name),
        "version": frame["version"],
        "champion": frame["aliases"].str.contains("champion", na=False).map({True: "*", False: ""}),
        "family": frame.get("family", pd.Series("", index=frame.index)).fillna("-"),
        "created": pd.to_datetime(frame["created_at"]).dt.strftime("%Y-%m-%d %H:%M"),
        "error": [error(row) for row in frame.to_dict("records")],
        "note": frame.get("note", pd.Series("", index=frame.index)).fillna(""),
    })


def resolve_name(name: str, registered: Iterable[str]) -> str | None:
    """The registered name ``name`` stands for, as listed (``ZCONRPT-response``) or in full; None if neither.

    Examples
    --------
    >>> registered = {"kneecap-ZCONRPT-response"}
    >>> resolve_name("ZCONRPT-response", registered), resolve_name("kneecap-ZCONRPT-response", registered)
    ('kneecap-ZCONRPT-response', 'kneecap-ZCONRPT-response')
    >>> resolve_name("ZCONRPT-cost", registered) is None
    True
    """
    known = set(registered)
    return next((c for c in (f"{MODEL_PREFIX}{name}", name) if c in known), None)


class PyfuncModel:
    """What plain ``mlflow.pyfunc.load_model`` returns for a kneecap model (via :func:`_load_pyfunc`).

    ``predict`` takes a frame of scenario rows and returns the results' prediction frame.
    """

    def __init__(self, results: Any) -> None:
        self.results = results

    def predict(self, model_input: pd.DataFrame, params: Any = None) -> pd.DataFrame:
        """The results' prediction frame for the scenario rows (``params`` is ignored)."""
        return self.results.predict(model_input)


def _load_pyfunc(data_path: str) -> PyfuncModel:
    """The pyfunc flavor's loader (``loader_module: kneecap.tracking``): JSON in, results out."""
    return PyfuncModel(_serialise().loads(Path(data_path).read_bytes(), source=str(data_path)))


def _serialise() -> Any:
    # imported when a model is saved or loaded: kneecap.modeling pulls in statsmodels and numba
    # (seconds), which `kneecap models` and `kneecap promote NAME` never need
    from kneecap.modeling import serialise

    return serialise


def _format_error(message: str) -> Exception:
    return _serialise().ModelFormatError(message)


@dataclass(frozen=True)
class LoggedModel:
    """A model logged by :func:`log_model`: registered name, version (empty when not registered) and run id."""

    name: str
    version: str
    run_id: str


def _model_kwargs(results: Any, tmp: str) -> dict[str, Any]:
    """The mlflow pyfunc arguments of a kneecap model: the results document as data, kneecap as its loader.

    ``loader_module`` (not ``python_model``) keeps mlflow from cloudpickling anything: the model
    directory holds MLmodel, ``data/results.json`` and environment files, nothing executable.
    """
    path = Path(tmp) / _RESULTS_FILE
    path.write_text(_serialise().dumps(results), encoding="utf-8")
    return {
        "loader_module": _LOADER_MODULE,
        "data_path": str(path),
        # listing requirements skips mlflow's slow inference of the environment
        "pip_requirements": ["kneecap"],
        "metadata": {_FORMAT_KEY: _serialise().FORMAT_VERSION, "kneecap_class": type(results).__name__},
    }


def log_model(
    results: Any,
    *,
    name: str,
    params: Mapping[str, Any],
    metrics: Mapping[str, float],
    tables: Mapping[str, pd.DataFrame] | None = None,
    tags: Mapping[str, str] | None = None,
    register: bool = True,
    input_example: pd.DataFrame | None = None,
    dataset: tuple[pd.DataFrame, str, str] | None = None,
    figures: Mapping[str, Any] | None = None,
) -> LoggedModel:
    """Log one fitted model as a run and register it under ``name``.

    The run carries ``params``, ``metrics``, ``tables`` (JSON tables), ``figures`` (matplotlib
    figures, as PNG under ``plots/``), and ``dataset`` ``(frame, name, source)`` as the run's
    training input (``mlflow.data``). With ``input_example`` the model gets it and a signature
    inferred from the model's own prediction on it; a model that cannot predict the example is
    logged without them rather than not at all.
    """
    with tempfile.TemporaryDirectory() as tmp:
        kwargs = _model_kwargs(results, tmp)  # a results object that cannot be stored fails before the run
        kwargs.update(_signature_kwargs(results, input_example))
        with mlflow.start_run(run_name=name) as run, _quiet_pyfunc():
            mlflow.set_tags({"kneecap.model": name, **(tags or {})})
            mlflow.log_params({k: str(v)[:500] for k, v in params.items()})
            mlflow.log_metrics({k: float(v) for k, v in metrics.items() if v is not None and v == v})
            for table_name, frame in (tables or {}).items():
                mlflow.log_table(frame.reset_index(drop=True), artifact_file=f"{table_name}.json")
            if dataset is not None:
                frame, dataset_name, source = dataset
                with warnings.catch_warnings():
                    # a local path may name several source kinds; mlflow picks the local one, as meant
                    warnings.simplefilter("ignore", UserWarning)
                    # mlflow.data.from_pandas is this function, registered at import time out of mypy's sight
                    data = dataset_from_pandas(frame.reset_index(drop=True), source=source, name=dataset_name)
                mlflow.log_input(data, context="training")
            for figure_name, figure in (figures or {}).items():
                mlflow.log_figure(figure, f"plots/{figure_name}.png")
            info = mlflow.pyfunc.log_model(name="model", registered_model_name=name if register else None, **kwargs)
    version = str(info.registered_model_version) if register else ""
    return LoggedModel(name=name, version=version, run_id=run.info.run_id)


def _signature_kwargs(results: Any, example: pd.DataFrame | None) -> dict[str, Any]:
    """``signature`` and ``input_example`` for pyfunc, from the model's own prediction on ``example``."""
    if example is None or example.empty:
        return {}
    from mlflow.models import infer_signature

    # the example is stored as JSON, where NaN is not a value: columns with a gap are left out
    example = example.dropna(axis=1, how="any").reset_index(drop=True)
    try:
        output = results.predict(example)
    except Exception:  # noqa: BLE001 - any model error: log the model without a signature
        return {}
    return {"signature": infer_signature(example, output), "input_example": example}


@contextlib.contextmanager
def _quiet_pyfunc() -> Iterator[None]:
    # mlflow's advice about missing signatures and input examples is noise in every train log
    logger = logging.getLogger("mlflow.pyfunc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def save_model_dir(results: Any, path: str | os.PathLike[str]) -> Path:
    """Write a fitted model as an MLflow model directory (the train stage's ``models/`` output).

    The same fit writes the same bytes: the MLmodel file carries no write time or random id
    (:func:`without_write_stamps`).
    """
    import shutil

    path = Path(path)
    if path.exists():
        shutil.rmtree(path)
    with tempfile.TemporaryDirectory() as tmp, _quiet_pyfunc():
        mlflow.pyfunc.save_model(path=str(path), **_model_kwargs(results, tmp))
    mlmodel = path / _MLMODEL
    mlmodel.write_text(without_write_stamps(mlmodel.read_text(encoding="utf-8")), encoding="utf-8")
    return path


#: MLmodel keys that say when and under which random id a directory was written, not what it holds
_WRITE_STAMPS = ("model_uuid:", "utc_time_created:")


def without_write_stamps(mlmodel: str) -> str:
    r"""An MLmodel file's text without its write time and random id.

    The train stage's ``models/`` output is then the same bytes for the same fit, so the hash
    dvc.lock records holds on every clone; MLflow fills both in when it loads the model.

    Examples
    --------
    >>> without_write_stamps("flavors: {}\nmodel_uuid: 970f36e7\nutc_time_created: '2026-11-28'\n")
    'flavors: {}\n'
    """
    return "".join(line for line in mlmodel.splitlines(keepends=True) if not line.startswith(_WRITE_STAMPS))


def _legacy_message(source: str) -> str:
    return (f"{source} was saved by an older kneecap as a cloudpickle (python_model.pkl). kneecap does not "
            "load pickled models, because unpickling runs whatever code the file names. Re-register the "
            "models in the JSON format: `make pipeline promote` (or `dvc repro` then "
            "`kneecap promote --if-missing`).")


def _check_mlmodel(text: bytes, source: str) -> None:
    """Refuse an MLmodel file that is not a kneecap JSON model (a pickled one above all)."""
    if len(text) > _MAX_MLMODEL_BYTES:
        raise _format_error(f"{source}: MLmodel file of {len(text)} bytes is not a kneecap model's")
    try:
        meta = yaml.safe_load(text.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise _format_error(f"{source}: unreadable MLmodel file ({exc})") from exc
    flavors = meta.get("flavors") if isinstance(meta, dict) else None
    pyfunc = flavors.get("python_function") if isinstance(flavors, dict) else None
    if not isinstance(pyfunc, dict):
        raise _format_error(f"{source}: not an MLflow python_function model")
    if "python_model" in pyfunc or "cloudpickle_version" in pyfunc:
        raise _format_error(_legacy_message(source))
    metadata = meta.get("metadata") if isinstance(meta.get("metadata"), dict) else {}
    if pyfunc.get("loader_module") != _LOADER_MODULE or _FORMAT_KEY not in metadata:
        raise _format_error(f"{source}: not a kneecap model (loader {pyfunc.get('loader_module')!r}); "
                            "kneecap loads only the JSON models its own train stage registers")


def _read_model(fetch: Callable[[str], bytes], source: str) -> Any:
    """Check the MLmodel file, then rebuild the results from ``data/results.json`` (fixed path)."""
    _check_mlmodel(fetch(_MLMODEL), source)
    return _serialise().loads(fetch(_DATA_PATH), source=f"{source}: {_DATA_PATH}")


def _fetch_local(root: Path, source: str) -> Callable[[str], bytes]:
    def fetch(rel: str) -> bytes:
        path = root / rel
        if not path.is_file():
            if rel == _DATA_PATH and (root / "python_model.pkl").exists():
                raise _format_error(_legacy_message(source))
            raise _format_error(f"{source}: no {rel} (not a kneecap model directory)")
        return path.read_bytes()

    return fetch


def _fetch_remote(uri: str, source: str) -> Callable[[str], bytes]:
    def fetch(rel: str) -> bytes:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                local = mlflow.artifacts.download_artifacts(artifact_uri=f"{uri.rstrip('/')}/{rel}", dst_path=tmp)
            except mlflow.exceptions.MlflowException as exc:
                raise _format_error(f"{source}: cannot read {rel} ({exc.message})") from exc
            return Path(local).read_bytes()

    return fetch


def load_results(uri: str | os.PathLike[str]) -> Any:
    """Load a kneecap results object from a model directory or an MLflow model URI.

    Reads two files and executes neither: ``MLmodel`` (YAML, checked to be a kneecap JSON model)
    and ``data/results.json``, rebuilt by :func:`kneecap.modeling.serialise.loads` with kneecap's
    own classes. A pickled model (older kneecap) or anything else is a
    :class:`kneecap.modeling.ModelFormatError`.
    """
    text = str(uri)
    local = Path(text[len("file://"):]) if text.startswith("file://") else Path(text)
    if local.is_dir():
        return _read_model(_fetch_local(local, text), text)
    return _read_model(_fetch_remote(text, text), text)


def load_champion(name: str) -> Any:
    """The results object registered as ``name`` with the ``champion`` alias."""
    version = champion_version(name)
    if version is None:
        raise LookupError(f"{listed_name(name)}: no version carries the {CHAMPION!r} alias (see `kneecap promote`)")
    uri = f"models:/{name}/{version}"
    source = f"{name} version {version} (@{CHAMPION})"
    return _read_model(_fetch_remote(uri, source), source)


#: The models kneecap registers per workload (:func:`model_name`): its response curve and its CPU cost.
MODEL_KINDS = ("response", "cost")


def load_champions(workload: str, *, skip_unpromoted: bool = False) -> dict[str, Any]:
    """The champion of each of the workload's registered models: ``{kind: results}``.

    Kinds are :data:`MODEL_KINDS`; a kind nothing is registered under is left out. A kind
    registered with no champion (never promoted, or retired by a retrain) raises LookupError
    naming it and ``kneecap promote`` (:func:`load_champion`), or with ``skip_unpromoted`` is left
    out: the command line says why an answer is missing, the desk shows what is promoted.
    """
    names = registered_names()
    found = {}
    for kind in MODEL_KINDS:
        name = model_name(workload, kind)
        if name not in names or (skip_unpromoted and champion_version(name) is None):
            continue
        found[kind] = load_champion(name)
    return found


def is_legacy(name: str, version: str | int) -> bool:
    """Whether version ``version`` of ``name`` is a pickled model from an older kneecap."""
    try:
        text = _fetch_remote(f"models:/{name}/{version}", name)(_MLMODEL)
        _check_mlmodel(text, name)
    except _serialise().ModelFormatError as exc:
        return "cloudpickle" in str(exc)
    return False


def registered_models() -> pd.DataFrame:
    """One row per registered kneecap model version: name, version, aliases, run and metrics."""
    client = MlflowClient()
    rows = []
    for model in client.search_registered_models():
        if not model.name.startswith(MODEL_PREFIX):
            continue
        aliases_by_version: dict[str, list[str]] = {}
        for alias, version in (model.aliases or {}).items():
            aliases_by_version.setdefault(str(version), []).append(alias)
        for mv in client.search_model_versions(f"name='{model.name}'"):
            run = client.get_run(mv.run_id) if mv.run_id else None
            rows.append(
                {
                    "name": model.name,
                    "version": int(mv.version),
                    "aliases": ",".join(sorted(aliases_by_version.get(str(mv.version), []))),
                    "run_id": mv.run_id,
                    "created_at": pd.to_datetime(mv.creation_timestamp, unit="ms"),
                    "family": (run.data.params.get("family")
                               or (f"cost_ols:{run.data.params['form']}" if "form" in run.data.params else None)
                               if run else None),
                    "note": ((mv.tags or {}).get(CHALLENGER_TAG) or (model.tags or {}).get(RETIRED_TAG)),
                    **({f"metric.{k}": v for k, v in run.data.metrics.items()} if run else {}),
                }
            )
    columns = ["name", "version", "aliases", "run_id", "created_at", "family", "note"]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    return frame.sort_values(["name", "version"]).reset_index(drop=True)


# Reading the registry's frame (:func:`registered_models`): which versions are champions, and theirs
# is the row a caller wants. Pure functions of the frame, so a caller that caches it asks MLflow once.

def is_champion(frame: pd.DataFrame) -> pd.Series:
    """Per row of :func:`registered_models`, whether that version carries the champion alias."""
    return frame["aliases"].str.contains(CHAMPION, na=False)


def champion_workloads(frame: pd.DataFrame, kind: str) -> list[str]:
    """Workloads with a champion of ``kind`` (``response`` or ``cost``) in ``frame``, sorted.

    Examples
    --------
    >>> frame = pd.DataFrame({"name": ["kneecap-A-response", "kneecap-B-response", "kneecap-A-cost"],
    ...                       "aliases": ["champion", "", "champion"]})
    >>> champion_workloads(frame, "response"), champion_workloads(frame, "cost")
    (['A'], ['A'])
    """
    if frame.empty:
        return []
    suffix = f"-{kind}"
    return sorted(n[len(MODEL_PREFIX):-len(suffix)] for n in frame.loc[is_champion(frame), "name"]
                  if n.endswith(suffix))


def champion_key(frame: pd.DataFrame, workload: str) -> str:
    """The workload's champions in ``frame`` as ``name:version,...``: it changes when a champion does."""
    rows = frame[frame["name"].str.startswith(f"{MODEL_PREFIX}{workload}-") & is_champion(frame)]
    return ",".join(f"{n}:{v}" for n, v in zip(rows["name"], rows["version"]))


def champion_row(frame: pd.DataFrame, workload: str, kind: str) -> pd.Series | None:
    """The row of ``frame`` of the workload's champion of ``kind`` (version, run, metrics), or None."""
    rows = frame[(frame["name"] == model_name(workload, kind)) & is_champion(frame)]
    return None if rows.empty else rows.iloc[0]


def champion_metrics(frame: pd.DataFrame, workload: str, kind: str) -> pd.DataFrame:
    """The metrics logged with the champion's run (training fit, cross-validation, knee), ``metric`` and ``value``.

    Empty when there is no champion of ``kind``; a metric the run did not log is left out.
    """
    row = champion_row(frame, workload, kind)
    if row is None:
        return pd.DataFrame(columns=["metric", "value"])
    metrics = row[[c for c in row.index if c.startswith("metric.")]].dropna()
    return pd.DataFrame({"metric": [c[len("metric."):] for c in metrics.index], "value": metrics.to_numpy(float)})


def load_run_table(run_id: str, artifact_file: str) -> pd.DataFrame:
    """A table logged with ``mlflow.log_table`` in a run (empty frame if the run has none)."""
    try:
        return mlflow.load_table(artifact_file, run_ids=[run_id])
    except Exception:  # noqa: BLE001 - mlflow raises several types for a missing artifact
        return pd.DataFrame()


def registered_names() -> set[str]:
    """Names of every registered kneecap model."""
    return {m.name for m in MlflowClient().search_registered_models() if m.name.startswith(MODEL_PREFIX)}


def fingerprint(results: Any) -> str:
    """SHA-256 of the model's stored JSON document.

    The same data, params and code give the same fit (every random stream is seeded), so an
    unchanged fingerprint means an unchanged model.
    """
    import hashlib

    return hashlib.sha256(_serialise().dumps(results).encode("utf-8")).hexdigest()


FINGERPRINT_TAG = "kneecap.fingerprint"
CHALLENGER_TAG = "kneecap.challenger_reason"
#: Registered-model tag: the current marts give this model no fit, so it has no champion and
#: `promote --if-missing` leaves it alone until a retrain fits it again (or `kneecap promote`).
RETIRED_TAG = "kneecap.retired"


def retire(name: str, reason: str) -> str | None:
    """Take the champion alias off ``name`` and mark it retired; the version that was champion."""
    client = MlflowClient()
    version = champion_version(name)
    if version is not None:
        client.delete_registered_model_alias(name, CHAMPION)
    client.set_registered_model_tag(name, RETIRED_TAG, reason)
    return version


def retired_reason(name: str) -> str | None:
    """Why ``name`` is retired, or None (also for a name nothing is registered under)."""
    try:
        model = MlflowClient().get_registered_model(name)
    except mlflow.exceptions.MlflowException as exc:
        if exc.error_code == "RESOURCE_DOES_NOT_EXIST":
            return None
        raise
    return (model.tags or {}).get(RETIRED_TAG)


def unretire(name: str) -> None:
    """Take the retired mark off ``name``, if it has one (a fit of it exists again)."""
    if retired_reason(name) is not None:
        MlflowClient().delete_registered_model_tag(name, RETIRED_TAG)


def newest_version(name: str) -> tuple[str, dict[str, str]] | None:
    """``(version, tags)`` of the newest registered version of ``name``, or None."""
    versions = MlflowClient().search_model_versions(f"name='{name}'")
    if not versions:
        return None
    newest = max(versions, key=lambda v: int(v.version))
    return str(newest.version), dict(newest.tags or {})


def tag_version(name: str, version: str | int, key: str, value: str) -> None:
    """Set tag ``key`` to ``value`` on one registered version of ``name``."""
    MlflowClient().set_model_version_tag(name, str(version), key, value)


def load_version(name: str, version: str | int) -> Any:
    """The results object of one registered version."""
    source = f"{name} version {version}"
    return _read_model(_fetch_remote(f"models:/{name}/{version}", source), source)


def champion_version(name: str) -> str | None:
    """Version number carrying the champion alias, or None."""
    aliases = MlflowClient().get_registered_model(name).aliases or {}
    version = aliases.get(CHAMPION)
    return str(version) if version is not None else None


def promote(name: str, version: str | int | None = None) -> str:
    """Set the champion alias of ``name`` to ``version`` (default: the newest version).

    ``name`` as listed (``ZCONRPT-response``) or registered (``kneecap-ZCONRPT-response``).
    """
    client = MlflowClient()
    known = registered_names()
    registered = resolve_name(name, known)
    versions = (sorted(int(v.version) for v in client.search_model_versions(f"name='{registered}'"))
                if registered else [])
    if registered is None or not versions:
        listed = ", ".join(sorted(map(listed_name, known)))
        raise LookupError(f"{name}: no registered model of that name"
                          + (f"; registered: {listed}" if known else "; nothing is registered yet"))
    name = registered
    if version is None:
        version = versions[-1]
    elif not str(version).isdigit() or int(version) not in versions:
        raise LookupError(f"{listed_name(name)}: no version {version}; versions: {', '.join(map(str, versions))}")
    client.set_registered_model_alias(name, CHAMPION, str(version))
    unretire(name)  # promoting by hand is the user's word that the model stands
    return str(version)


def promote_missing() -> list[tuple[str, str]]:
    """Promote the newest version of every kneecap model that has no usable champion.

    That is a model with no champion yet, or whose champion is a pickled model from an older
    kneecap (which kneecap no longer loads).
    """
    client = MlflowClient()
    done = []
    for model in client.search_registered_models():
        if not model.name.startswith(MODEL_PREFIX):
            continue
        current = (model.aliases or {}).get(CHAMPION)
        if current is None:
            if (model.tags or {}).get(RETIRED_TAG) is None:
                done.append((model.name, promote(model.name)))
        elif is_legacy(model.name, current):
            newer = sorted((int(v.version) for v in client.search_model_versions(f"name='{model.name}'")
                            if int(v.version) > int(current)), reverse=True)
            fresh = next((v for v in newer if not is_legacy(model.name, v)), None)
            if fresh is not None:
                done.append((model.name, promote(model.name, fresh)))
    return done
