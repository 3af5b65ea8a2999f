"""MLflow in one module: tracking store, logging runs, the registry and loading by alias.

The only kneecap module that imports mlflow. Default store: a SQLite file inside the project
(``sqlite:///<project>/mlflow.db``, artifacts in ``<project>/mlruns``); ``MLFLOW_TRACKING_URI``
points it at a server instead. Models are kneecap results objects serialised to JSON
(``results.to_dict()``) inside an MLflow pyfunc model, registered as ``kneecap-<workload>-<kind>``
and loaded by alias (``models:/<name>@champion``). Promotion is an explicit command, never a side
effect of training.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")

import mlflow  # noqa: E402
import pandas as pd  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

EXPERIMENT = "kneecap"
CHAMPION = "champion"
MODEL_PREFIX = "kneecap-"
_RESULTS_FILE = "results.json"


def default_tracking_uri(project_dir: str | os.PathLike[str] = ".") -> str:
    """``MLFLOW_TRACKING_URI`` if set, else a SQLite store in ``project_dir``."""
    env = os.environ.get("MLFLOW_TRACKING_URI")
    if env:
        return env
    return f"sqlite:///{Path(project_dir).resolve() / 'mlflow.db'}"


def configure(tracking_uri: str | None = None, project_dir: str | os.PathLike[str] = ".") -> str:
    """Point mlflow at the store (and the registry at the same place); returns the URI."""
    uri = tracking_uri or default_tracking_uri(project_dir)
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


class KneecapModel(mlflow.pyfunc.PythonModel):
    """MLflow pyfunc wrapper around a kneecap results object stored as JSON.

    ``predict`` takes a frame of scenario rows and returns the results' prediction frame, so
    the registered model also serves plain MLflow consumers.
    """

    def load_context(self, context: Any) -> None:
        from kneecap.modeling import results_from_dict

        with open(context.artifacts["results"], encoding="utf-8") as fh:
            self.results = results_from_dict(json.load(fh))

    def predict(self, context: Any, model_input: pd.DataFrame, params: Any = None) -> pd.DataFrame:
        return self.results.predict(model_input)


@dataclass(frozen=True)
class LoggedModel:
    name: str
    version: str
    run_id: str


def log_model(
    results: Any,
    *,
    name: str,
    params: Mapping[str, Any],
    metrics: Mapping[str, float],
    tables: Mapping[str, pd.DataFrame] | None = None,
    tags: Mapping[str, str] | None = None,
    register: bool = True,
) -> LoggedModel:
    """Log one fitted model as a run (params, metrics, tables) and register it under ``name``."""
    with mlflow.start_run(run_name=name) as run, _quiet_pyfunc():
        mlflow.set_tags({"kneecap.model": name, **(tags or {})})
        mlflow.log_params({k: str(v)[:500] for k, v in params.items()})
        mlflow.log_metrics({k: float(v) for k, v in metrics.items() if v is not None and v == v})
        for table_name, frame in (tables or {}).items():
            mlflow.log_table(frame.reset_index(drop=True), artifact_file=f"{table_name}.json")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / _RESULTS_FILE
            path.write_text(json.dumps(results.to_dict()), encoding="utf-8")
            info = mlflow.pyfunc.log_model(
                name="model",
                python_model=KneecapModel(),
                artifacts={"results": str(path)},
                # listing requirements skips mlflow's slow inference of the environment
                pip_requirements=["kneecap"],
                registered_model_name=name if register else None,
            )
    version = str(info.registered_model_version) if register else ""
    return LoggedModel(name=name, version=version, run_id=run.info.run_id)


@contextlib.contextmanager
def _quiet_pyfunc() -> Iterator[None]:
    # The model object is kneecap's own small wrapper around JSON results; mlflow's advice about
    # pickled python_model objects and missing signatures is noise in every train log.
    logger = logging.getLogger("mlflow.pyfunc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def save_model_dir(results: Any, path: str | os.PathLike[str]) -> Path:
    """Write a fitted model as an MLflow model directory (the train stage's ``models/`` output)."""
    import shutil

    path = Path(path)
    if path.exists():
        shutil.rmtree(path)
    with tempfile.TemporaryDirectory() as tmp, _quiet_pyfunc():
        results_path = Path(tmp) / _RESULTS_FILE
        results_path.write_text(json.dumps(results.to_dict()), encoding="utf-8")
        mlflow.pyfunc.save_model(
            path=str(path),
            python_model=KneecapModel(),
            artifacts={"results": str(results_path)},
            pip_requirements=["kneecap"],
        )
    return path


def load_results(uri: str) -> Any:
    """Load a kneecap results object from any MLflow model URI (``models:/name@champion``, a dir)."""
    model = mlflow.pyfunc.load_model(uri)
    return model.unwrap_python_model().results


def load_champion(name: str) -> Any:
    """The results object registered as ``name`` with the ``champion`` alias."""
    return load_results(f"models:/{name}@{CHAMPION}")


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
                    **({f"metric.{k}": v for k, v in run.data.metrics.items()} if run else {}),
                }
            )
    columns = ["name", "version", "aliases", "run_id", "created_at"]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    return frame.sort_values(["name", "version"]).reset_index(drop=True)


def load_run_table(run_id: str, artifact_file: str) -> pd.DataFrame:
    """A table logged with ``mlflow.log_table`` in a run (empty frame if the run has none)."""
    try:
        return mlflow.load_table(artifact_file, run_ids=[run_id])
    except Exception:  # noqa: BLE001 - mlflow raises several types for a missing artifact
        return pd.DataFrame()


def registered_names() -> set[str]:
    """Names of every registered kneecap model."""
    return {m.name for m in MlflowClient().search_registered_models() if m.name.startswith(MODEL_PREFIX)}


def champion_version(name: str) -> str | None:
    """Version number carrying the champion alias, or None."""
    aliases = MlflowClient().get_registered_model(name).aliases or {}
    version = aliases.get(CHAMPION)
    return str(version) if version is not None else None


def promote(name: str, version: str | int | None = None) -> str:
    """Set the champion alias of ``name`` to ``version`` (default: the newest version)."""
    client = MlflowClient()
    if version is None:
        versions = client.search_model_versions(f"name='{name}'")
        if not versions:
            raise LookupError(f"{name}: no registered versions to promote")
        version = max(int(v.version) for v in versions)
    client.set_registered_model_alias(name, CHAMPION, str(version))
    return str(version)


def promote_missing() -> list[tuple[str, str]]:
    """Promote the newest version of every kneecap model that has no champion yet."""
    done = []
    for model in MlflowClient().search_registered_models():
        if model.name.startswith(MODEL_PREFIX) and CHAMPION not in (model.aliases or {}):
            done.append((model.name, promote(model.name)))
    return done
