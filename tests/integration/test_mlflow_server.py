"""The tracking server `make mlflow-server` starts: PostgreSQL store, artifacts served over HTTP.

Starts a real PostgreSQL cluster and a real `mlflow server` with the make target's own script
(`scripts/mlflow-server`) in a temp folder on free ports, runs the train stage on two bundled
tables with ``MLFLOW_TRACKING_URI=http://...``, promotes with the `kneecap promote` command in a
process of its own, and reads the champions back over HTTP with kneecap's loader. The servers
are stopped and the folder removed whatever happens; their logs are kept in
test-artifacts/mlflow_server/.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kneecap import tracking, warehouse
from tests.bundled import read_bundled
from tests.stages import load_stage

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "mlflow-server"
LOGS = REPO / "test-artifacts" / "mlflow_server"
BIN = Path(sys.executable).parent
# two bundled workloads whose fits take well under a second: (kind, family) of each one's model
WORKLOADS = {"mq_queue_inquiry": ("cost", "cost_ols"),  # seed 001: CPU ms per MQ request vs queues
             "legstar_lsfileae": ("response", "factor_ols")}  # seed 003: 12 transport configurations
HAS_POSTGRES = bool(shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb"))

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not HAS_POSTGRES,
                                 reason="no PostgreSQL binaries (Debian: apt-get install -y postgresql)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=180)


@pytest.fixture
def server():
    """The make target's script on free ports in a fresh folder; yields (url, pg_port, folder)."""
    # not pytest's tmp_path: under root PostgreSQL runs as `postgres`, which cannot enter
    # /tmp/pytest-of-root (mode 0700); a 0755 folder of our own it can
    base = Path(tempfile.mkdtemp(prefix="kneecap-mlflow-server-"))
    base.chmod(0o755)
    state = base / "state"
    port, pg_port = _free_port(), _free_port()
    try:
        started = _script("start", "--dir", str(state), "--artifacts", str(base / "artifacts"),
                          "--host", "127.0.0.1", "--port", str(port), "--pg-port", str(pg_port),
                          "--workers", "1", "--timeout", "90", "--mlflow", str(BIN / "mlflow"))
        assert started.returncode == 0, f"start failed:\n{started.stdout}\n{started.stderr}"
        assert f"export MLFLOW_TRACKING_URI=http://127.0.0.1:{port}" in started.stdout
        yield f"http://127.0.0.1:{port}", pg_port, base
    finally:
        stopped = _script("stop", "--dir", str(state))
        LOGS.mkdir(parents=True, exist_ok=True)
        for log in ("mlflow.log", "postgres.log", "initdb.log"):
            if (state / log).exists():
                shutil.copy(state / log, LOGS / log)
        shutil.rmtree(base, ignore_errors=True)
        assert stopped.returncode == 0, stopped.stderr
    # nothing of ours is left listening
    for p in (port, pg_port):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", p)) != 0, f"port {p} still answers after stop"


def _marts(root: Path) -> Path:
    """The two workloads' marts, built from the bundled reference tables by the pipeline's SQL."""
    measurements, sources = read_bundled()
    tables = warehouse.build_marts(measurements, sources, sql_root=REPO / "pipelines" / "sql")
    one = {k: tables[k][tables[k]["workload"].isin(list(WORKLOADS))]
           for k in ("fct_measurements", "dim_workloads")}
    marts = root / "marts"
    warehouse.write_tables(one, marts)
    return marts


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def test_train_promote_and_load_the_champions_over_http(server, tmp_path, monkeypatch, capsys):
    url, pg_port, base = server
    marts = _marts(tmp_path)
    params = tmp_path / "params.yaml"
    params.write_text((REPO / "params.yaml").read_text(encoding="utf-8").replace("n_boot: 200", "n_boot: 8"),
                      encoding="utf-8")
    # the client runs in an empty folder: everything it stores must go to the server
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    models = tmp_path / "models"
    names = {w: tracking.model_name(w, kind) for w, (kind, _) in WORKLOADS.items()}

    # the train stage DVC runs, in this process as in tests/pipelines (its imports are paid already)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
    monkeypatch.chdir(client_dir)
    assert load_stage("train").main(["--marts", str(marts), "--models", str(models),
                                     "--metrics", str(tmp_path / "train.json"), "--params", str(params)]) == 0
    out = capsys.readouterr().out
    for workload, (_, family) in WORKLOADS.items():
        assert f"train: {tracking.listed_name(names[workload])} ({family}) registered as version 1" in out

    promote = subprocess.run([str(BIN / "kneecap"), "promote", "--if-missing"], cwd=client_dir,
                             env={**os.environ, "MLFLOW_TRACKING_URI": url},
                             capture_output=True, text=True, timeout=120)
    assert promote.returncode == 0, promote.stderr
    for name in names.values():
        assert f"promote: {tracking.listed_name(name)} version 1 is now @champion" in promote.stdout

    # the registry answers over plain REST ...
    for name in names.values():
        query = urllib.parse.urlencode({"name": name, "alias": tracking.CHAMPION})
        alias = _get_json(f"{url}/api/2.0/mlflow/registered-models/alias?{query}")
        assert alias["model_version"]["version"] == "1"
    # ... and keeps it in PostgreSQL
    import psycopg

    with psycopg.connect(host="127.0.0.1", port=pg_port, user="mlflow", dbname="mlflow",
                         passfile=str(base / "state" / "pgpass")) as conn:
        rows = conn.execute("select name, version from registered_model_aliases where alias = %s "
                            "order by name", (tracking.CHAMPION,)).fetchall()
    assert rows == sorted((name, 1) for name in names.values())

    # kneecap's loader reads each champion through the server: the same fit the stage saved locally
    fct = warehouse.read_table(marts, "fct_measurements")
    for workload, name in names.items():
        champion = tracking.load_champion(name)
        trained = tracking.load_results(models / name)
        assert type(champion) is type(trained)
        assert tracking.fingerprint(champion) == tracking.fingerprint(trained)
        rows = fct[fct["workload"] == workload].reset_index(drop=True)
        pd.testing.assert_frame_equal(champion.predict(rows), trained.predict(rows))
    # and it is the fit of the bundled table: seed 001 (001_1c09812f39c46e11.txt, Console vs REST API
    # table) measured 93-561 CPU ms per request; the cost model's fit is within 3 % at every point
    cost = fct[fct["workload"] == "mq_queue_inquiry"].reset_index(drop=True)
    fitted = tracking.load_champion(names["mq_queue_inquiry"]).predict(cost)["cpu_ms_per_tran"]
    np.testing.assert_allclose(fitted, cost["cpu_ms_per_tran"], rtol=0.03)

    # the artifacts went through the server into its destination, none into the client's folder
    stored = list((base / "artifacts").rglob("results.json"))
    assert len(stored) == len(names), "model artifacts missing under the server's --artifacts-destination"
    assert sorted(p.name for p in client_dir.iterdir()) == []
