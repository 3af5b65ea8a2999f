"""Model artifacts: JSON in, kneecap's own classes out; pickles and unknown classes refused, never run."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap import tracking
from kneecap.modeling import ClosedMVAModel, CostModel, ModelFormatError, OpenMMcModel, USLModel, mmc_resp_ms, serialise

# seed 004, Table 1 (004_30fd347cf9df2afe.txt): 2 GCP + 2 zIIP, Z = 200 ms
SEED004 = pd.DataFrame({
    "clients": [100, 200, 300, 400, 500], "tps": [500, 1000, 1500, 1960, 2420],
    "resp_ms": [1.06, 1.13, 1.38, 3.32, 5.03], "n_gcp": 2, "n_ziip": 2, "think_time_ms": 200.0,
})
# SPEC SDM91 as shipped with R usl (data/specsdm91)
SPECSDM91 = pd.DataFrame({"clients": [1, 18, 36, 72, 108, 144, 216],
                          "tps": [64.9, 995.9, 1652.4, 1853.2, 1828.9, 1775.0, 1702.2]})
# seed 001 "MQ Console vs REST API": CPU ms per request at 1000/2000/3000 queues
MQ = pd.DataFrame({"n_queues": [1000, 2000, 3000] * 3,
                   "config": ["console"] * 3 + ["rest_filtered"] * 3 + ["rest_all"] * 3,
                   "cpu_ms_per_tran": [99, 169, 243, 93, 169, 246, 195, 370, 561]})
_TPS = np.array([200.0, 600.0, 1000.0, 1400.0, 1700.0, 1900.0])
# M/M/4 with S = 2 ms plus a 1 ms delay, perturbed so the bootstrap has residuals to resample
MMC = pd.DataFrame({"tps": _TPS, "resp_ms": [(1.0 + mmc_resp_ms(x, 2.0, 4)) * (1 + 0.02 * (-1) ** i)
                                             for i, x in enumerate(_TPS)]})


def _closed():
    res = ClosedMVAModel(n_boot=12, seed=3).fit(SEED004)
    frame = pd.DataFrame({"clients": [100, 500, 800], "n_gcp": 2, "n_ziip": [2, 2, 3], "think_time_ms": 200.0})
    return res, frame, ("delay_ms", "cpu_ms_per_tran", "ziip_eligible_fraction")


def _usl():
    return USLModel().fit(SPECSDM91), pd.DataFrame({"clients": [1, 50, 96, 400]}), ("params", "cov", "s2")


def _open():
    return OpenMMcModel(n_boot=15).fit(MMC), pd.DataFrame({"tps": [100.0, 1500.0, 1950.0]}), (
        "n_servers", "service_ms", "delay_ms", "boot_params", "residuals")


def _cost():
    frame = pd.DataFrame({"n_queues": [1500, 2500, 2000], "config": ["console", "rest_all", "rest_filtered"]})
    return CostModel().fit(MQ), frame, ("params",)


def _open_dispatch():
    from kneecap.modeling import OpenDispatchModel
    from tests.modeling.test_open_dispatch import intervals

    res = OpenDispatchModel(n_boot=8, seed=2).fit(intervals(days=5))
    return res, pd.DataFrame({"tps": [300.0, 1500.0, 2500.0], "n_ziip": [2, 2, 3]}), (
        "cpu_ms_per_tran", "delay_ms", "eligible_bursts", "boot_params", "residuals")


FITS = {"closed_mva": _closed, "usl": _usl, "open_mmc": _open, "cost_ols": _cost, "open_dispatch": _open_dispatch}


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh SQLite tracking store in ``tmp_path`` (artifacts under ``tmp_path/mlruns``)."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    tracking.configure(project_dir=tmp_path)
    return tmp_path


def _artifacts(store: Path) -> list[Path]:
    """Artifact folders of the logged models in ``store``, oldest first."""
    return sorted((store / "mlruns" / "models").glob("*/artifacts"), key=lambda p: (p / "MLmodel").stat().st_mtime_ns)


def _assert_same(original, again, frame: pd.DataFrame, attrs: tuple[str, ...]) -> None:
    assert type(again) is type(original)
    for attr in attrs:
        np.testing.assert_array_equal(np.asarray(getattr(again, attr), dtype=float),
                                      np.asarray(getattr(original, attr), dtype=float), err_msg=attr)
    expected = original.predict(frame)
    got = again.predict(frame)
    # bit for bit: the same parameters, draws and residuals give the same numbers
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert np.isfinite(got.iloc[:, 0].to_numpy(dtype=float)).all()


@pytest.mark.parametrize("family", sorted(FITS))
def test_model_dir_round_trip(family: str, tmp_path: Path) -> None:
    original, frame, attrs = FITS[family]()
    path = tracking.save_model_dir(original, tmp_path / "model")
    files = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
    assert not [f for f in files if f.endswith((".pkl", ".pickle", ".cloudpickle"))], files
    doc = json.loads((path / "data" / "results.json").read_text(encoding="utf-8"))
    assert (doc["format"], doc["class"], doc["results"]["family"]) == ("kneecap-results", type(original).__name__,
                                                                       family)
    _assert_same(original, tracking.load_results(path), frame, attrs)


@pytest.mark.parametrize("family", sorted(FITS))
def test_registered_round_trip(family: str, store: Path) -> None:
    original, frame, attrs = FITS[family]()
    name = tracking.model_name("demo", family)
    logged = tracking.log_model(original, name=name, params={}, metrics={})
    assert logged.version == "1"
    tracking.promote(name)
    _assert_same(original, tracking.load_champion(name), frame, attrs)
    # what plain mlflow.pyfunc.load_model calls (loader_module: kneecap.tracking): no pickle either
    pyfunc = tracking._load_pyfunc(str(_artifacts(store)[0] / "data" / "results.json"))
    pd.testing.assert_frame_equal(pyfunc.predict(frame), original.predict(frame), check_exact=True)


def test_closed_round_trip_numbers() -> None:
    original, frame, _ = _closed()
    again = serialise.loads(serialise.dumps(original))
    # seed 004 measured 5.03 ms at 500 clients with 2 + 2 engines; the fit is within 10 %
    np.testing.assert_allclose(again.predict(frame)["resp_ms"].iloc[1], 5.03, rtol=0.10)
    k1 = original.knee(n_gcp=2, n_ziip=2, think_time_ms=200.0)
    k2 = again.knee(n_gcp=2, n_ziip=2, think_time_ms=200.0)
    assert k1 == k2
    assert 300 < k2.load < 500


class _TouchOnLoad:
    """A pickle payload: unpickling it creates ``path`` (stands in for arbitrary code)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def _payload(path: Path) -> bytes:
    return pickle.dumps(_TouchOnLoad(path), protocol=pickle.HIGHEST_PROTOCOL)


def test_payload_is_live(tmp_path: Path) -> None:
    # the control: this payload does run code when unpickled, so the refusals below mean something
    target = tmp_path / "control"
    pickle.loads(_payload(target))
    assert target.exists()


_LEGACY_MLMODEL = """\
flavors:
  python_function:
    artifacts:
      results:
        path: artifacts/results.json
    cloudpickle_version: 3.1.2
    loader_module: mlflow.pyfunc.model
    python_model: python_model.pkl
    python_version: 3.11.7
mlflow_version: 3.17.2
"""


def _register_one(store: Path, name: str = "kneecap-demo-response") -> Path:
    original, _, _ = _usl()
    tracking.log_model(original, name=name, params={}, metrics={})
    tracking.promote(name)
    return _artifacts(store)[-1]


def test_legacy_pickled_champion_is_refused_not_run(store: Path) -> None:
    artifacts = _register_one(store)
    target = store / "pwned"
    (artifacts / "MLmodel").write_text(_LEGACY_MLMODEL, encoding="utf-8")
    (artifacts / "python_model.pkl").write_bytes(_payload(target))
    with pytest.raises(ModelFormatError, match=r"older kneecap as a cloudpickle.*make pipeline promote"):
        tracking.load_champion("kneecap-demo-response")
    assert not target.exists()
    assert tracking.is_legacy("kneecap-demo-response", 1)
    assert not target.exists()


def test_pickle_as_results_is_refused_not_run(store: Path) -> None:
    artifacts = _register_one(store)
    target = store / "pwned"
    (artifacts / "data" / "results.json").write_bytes(_payload(target))
    with pytest.raises(ModelFormatError, match="is a Python pickle.*never unpickles"):
        tracking.load_champion("kneecap-demo-response")
    assert not target.exists()


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_pickle_in_model_dir_is_refused_not_run(tmp_path: Path, protocol: int) -> None:
    path = tracking.save_model_dir(_usl()[0], tmp_path / "model")
    target = tmp_path / "pwned"
    (path / "data" / "results.json").write_bytes(pickle.dumps(_TouchOnLoad(target), protocol=protocol))
    with pytest.raises(ModelFormatError, match="pickle|not a kneecap JSON model"):
        tracking.load_results(path)
    assert not target.exists()


def test_legacy_model_dir_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old"
    (path / "artifacts").mkdir(parents=True)
    (path / "MLmodel").write_text(_LEGACY_MLMODEL, encoding="utf-8")
    (path / "python_model.pkl").write_bytes(_payload(tmp_path / "pwned"))
    with pytest.raises(ModelFormatError, match="cloudpickle.*dvc repro"):
        tracking.load_results(path)
    assert not (tmp_path / "pwned").exists()


def _rewrite(path: Path, edit) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")


@pytest.mark.parametrize(("edit", "match"), [
    (lambda d: d.update({"class": "posix.system"}), "unknown results class 'posix.system'"),
    (lambda d: d["results"].update({"family": "subprocess"}), "does not match family 'subprocess'"),
    (lambda d: d["results"].update({"__reduce__": "os.system"}), r"unknown field\(s\) __reduce__"),
    (lambda d: d["results"].pop("cov"), r"missing field\(s\) cov"),
    (lambda d: d.update({"format_version": 99}), "format version 99"),
    (lambda d: d.update({"format": "pickle"}), "not a kneecap results document"),
])
def test_unknown_class_or_field_is_refused(tmp_path: Path, edit, match: str) -> None:
    path = tracking.save_model_dir(_usl()[0], tmp_path / "model")
    _rewrite(path / "data" / "results.json", edit)
    with pytest.raises(ModelFormatError, match=match):
        tracking.load_results(path)


def test_foreign_loader_module_is_refused(tmp_path: Path) -> None:
    path = tracking.save_model_dir(_usl()[0], tmp_path / "model")
    text = (path / "MLmodel").read_text(encoding="utf-8")
    (path / "MLmodel").write_text(text.replace("loader_module: kneecap.tracking", "loader_module: os"),
                                  encoding="utf-8")
    with pytest.raises(ModelFormatError, match="not a kneecap model \\(loader 'os'\\)"):
        tracking.load_results(path)


def test_promote_if_missing_replaces_a_legacy_champion(store: Path) -> None:
    name = "kneecap-demo-response"
    old = _register_one(store, name)
    (old / "MLmodel").write_text(_LEGACY_MLMODEL, encoding="utf-8")
    (old / "python_model.pkl").write_bytes(_payload(store / "pwned"))
    tracking.log_model(_usl()[0], name=name, params={}, metrics={})  # version 2, JSON
    assert tracking.champion_version(name) == "1"
    assert tracking.promote_missing() == [(name, "2")]
    assert tracking.champion_version(name) == "2"
    assert tracking.load_champion(name).params.shape == (3,)
    assert tracking.promote_missing() == []
    assert not (store / "pwned").exists()


def test_a_run_carries_signature_example_dataset_and_plots(store: Path) -> None:
    import yaml
    from mlflow.tracking import MlflowClient

    from kneecap import plots

    original, frame, _ = _closed()
    table = pd.DataFrame({"load": [1.0, 100.0, 500.0], "model_resp_ms": [0.9, 1.0, 5.0],
                          "model_resp_ms_lo": [0.8, np.nan, 4.0], "model_resp_ms_hi": [1.0, np.nan, 6.0],
                          "measured_resp_ms": [np.nan, 1.06, 5.03], "residual_pct": [np.nan, 6.0, 0.6]})
    logged = tracking.log_model(
        original, name=tracking.model_name("demo", "closed_mva"), params={}, metrics={},
        input_example=frame.assign(note=np.nan), dataset=(SEED004, "demo fct_measurements", "data/processed"),
        figures={"fit": plots.fit_figure(table, title="demo"), "residuals": plots.residual_figure(table, title="demo")})
    mlmodel = yaml.safe_load((_artifacts(store)[0] / "MLmodel").read_text(encoding="utf-8"))
    inputs = [c["name"] for c in json.loads(mlmodel["signature"]["inputs"])]
    outputs = [c["name"] for c in json.loads(mlmodel["signature"]["outputs"])]
    assert inputs == ["clients", "n_gcp", "n_ziip", "think_time_ms"]  # the all-NaN column left out
    assert {"resp_ms", "resp_ms_lo", "resp_ms_hi", "tps", "ziip_eligible_pct"} <= set(outputs)
    assert "input_example" in mlmodel["saved_input_example_info"]["artifact_path"]
    client = MlflowClient()
    run = client.get_run(logged.run_id)
    assert [d.dataset.name for d in run.inputs.dataset_inputs] == ["demo fct_measurements"]
    assert [t.value for d in run.inputs.dataset_inputs for t in d.tags
            if t.key == "mlflow.data.context"] == ["training"]
    artifacts = {a.path for a in client.list_artifacts(logged.run_id, "plots")}
    assert artifacts == {"plots/fit.png", "plots/residuals.png"}
    # the example is what the model predicts from: the registered model still loads and predicts
    tracking.promote(tracking.model_name("demo", "closed_mva"))
    assert np.isfinite(
        tracking.load_champion(tracking.model_name("demo", "closed_mva")).predict(frame)["resp_ms"]).all()


def test_a_model_is_promoted_by_the_name_it_is_listed_under_or_its_registered_name(store: Path) -> None:
    name = tracking.model_name("demo", "response")
    for _ in range(2):
        tracking.log_model(_usl()[0], name=name, params={}, metrics={})
    assert tracking.listed_name(name) == "demo-response"
    assert tracking.promote("demo-response", "1") == "1"  # as `kneecap models` lists it
    assert tracking.champion_version(name) == "1"
    assert tracking.promote(name) == "2"  # the registered name still works
    assert tracking.champion_version(name) == "2"
    with pytest.raises(LookupError, match=r"^demo-cost: no registered model of that name; registered: demo-response$"):
        tracking.promote("demo-cost")
    with pytest.raises(LookupError, match=r"^demo-response: no version 9; versions: 1, 2$"):
        tracking.promote(name, "9")


def test_a_workloads_champions_are_loaded_and_read_from_the_registry_in_one_place(store: Path) -> None:
    """`kneecap forecast` and the desk load champions and read the registry's frame through these."""
    response, cost = tracking.model_name("demo", "response"), tracking.model_name("demo", "cost")
    tracking.log_model(_usl()[0], name=response, params={}, metrics={"train_mape_tps": 1.5, "knee_tps": 1800.0})
    tracking.promote(response)
    tracking.log_model(_usl()[0], name=cost, params={}, metrics={})  # registered, never promoted
    # the command line says which model wants promoting; the desk shows what is promoted
    with pytest.raises(LookupError, match=r"^demo-cost: no version carries the 'champion' alias"):
        tracking.load_champions("demo")
    found = tracking.load_champions("demo", skip_unpromoted=True)
    assert list(found) == ["response"] and found["response"].params.shape == (3,)
    assert tracking.load_champions("nothing") == {}

    frame = tracking.registered_models()
    assert tracking.is_champion(frame).tolist() == [False, True]  # sorted by name: cost, then response
    assert tracking.champion_workloads(frame, "response") == ["demo"]
    assert tracking.champion_workloads(frame, "cost") == []
    assert tracking.champion_workloads(frame.iloc[0:0], "response") == []
    assert tracking.champion_key(frame, "demo") == f"{response}:1"
    assert tracking.champion_row(frame, "demo", "response")["version"] == 1
    assert tracking.champion_row(frame, "demo", "cost") is None
    metrics = tracking.champion_metrics(frame, "demo", "response")
    assert dict(zip(metrics["metric"], metrics["value"])) == {"knee_tps": 1800.0, "train_mape_tps": 1.5}
    assert tracking.champion_metrics(frame, "demo", "cost").columns.tolist() == ["metric", "value"]
    assert tracking.champion_metrics(frame, "demo", "cost").empty


def test_resolve_name_prefers_the_listed_form_and_knows_only_registered_names() -> None:
    registered = {"kneecap-a-response", "kneecap-kneecap-a-response"}
    assert tracking.resolve_name("a-response", registered) == "kneecap-a-response"
    # a workload whose own name starts with the prefix: the listed form names it
    assert tracking.resolve_name("kneecap-a-response", registered) == "kneecap-kneecap-a-response"
    assert tracking.resolve_name("kneecap-a-response", {"kneecap-a-response"}) == "kneecap-a-response"
    assert tracking.resolve_name("b-response", registered) is None


def _closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_tracking_server_is_one_error_naming_it(tmp_path: Path) -> None:
    uri = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(tracking.TrackingUnreachable) as caught:
        tracking.configure(uri, project_dir=tmp_path)
    message = str(caught.value)
    assert message.startswith(f"tracking server {uri} did not answer (")
    assert "\n" not in message and "MLFLOW_TRACKING_URI" in message
    assert tracking.registry_error(caught.value) == message


def test_any_http_answer_counts_as_a_server_there() -> None:
    import http.server
    import threading

    class NotMLflow(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the handler's API
            self.send_error(404)

        def log_message(self, *args) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), NotMLflow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        tracking.probe(f"http://127.0.0.1:{server.server_port}")  # answered 404: reachable, no error
    finally:
        server.shutdown()
        server.server_close()
    tracking.probe("sqlite:///nowhere/mlflow.db")  # not HTTP: nothing to probe


def test_mlflow_gives_up_on_a_gone_server_in_seconds_unless_told_otherwise() -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in tracking.HTTP_DEFAULTS}
    env["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] = "9"  # the user's own setting wins
    code = ("import os, kneecap.tracking as t; "
            "print(' '.join(os.environ[k] for k in sorted(t.HTTP_DEFAULTS)))")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                            check=True)
    got = dict(zip(sorted(tracking.HTTP_DEFAULTS), result.stdout.split(), strict=True))
    assert got == {**tracking.HTTP_DEFAULTS, "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "9"}
    # kneecap's own: backoff of 1 + 2 + 4 s, not MLflow's minutes
    retries = int(tracking.HTTP_DEFAULTS["MLFLOW_HTTP_REQUEST_MAX_RETRIES"])
    backoff = int(tracking.HTTP_DEFAULTS["MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR"])
    assert sum(backoff * 2 ** i for i in range(retries)) <= 15
