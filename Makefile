# The README's commands. `make run` and `make test` each set up .venv from the pinned lock first.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8501
# `make mlflow-server`: the tracking server (MLFLOW_HOST 0.0.0.0 to serve other machines), its
# PostgreSQL cluster's port (listens on 127.0.0.1 only) and folder, where artifacts are written
MLFLOW_HOST ?= 127.0.0.1
MLFLOW_PORT ?= 5000
MLFLOW_WORKERS ?= 1
MLFLOW_PG_PORT ?= 5433
MLFLOW_SERVER_DIR ?= .mlflow-server
MLFLOW_ARTIFACTS ?= $(MLFLOW_SERVER_DIR)/artifacts
# more `mlflow server` options, e.g. MLFLOW_SERVER_OPTS="--allowed-hosts mlflow.example.com:5000"
MLFLOW_SERVER_OPTS ?=
# `make mlflow-ui`: MLflow's UI on the local store
MLFLOW_UI_PORT ?= 5000
export MLFLOW_DISABLE_TELEMETRY := true
export DVC_NO_ANALYTICS := 1
export GX_ANALYTICS_ENABLED := False
export PYTHONUNBUFFERED := 1
# DVC stage commands call `python`: make it the venv's.
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: run setup pipeline promote serve test test-fast test-kernels test-nojit explore bench fuzz docs clean mlflow-server mlflow-server-stop mlflow-ui

run: setup pipeline promote serve

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@command -v $(PY) >/dev/null || { echo "kneecap needs $(PY) on PATH"; exit 1; }
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@echo "[setup] installing pinned dependencies into $(VENV) (requirements.lock)"
	@time ( $(BIN)/python -m pip install -q --upgrade "pip>=24" && \
	  $(BIN)/python -m pip install -q -c requirements.lock -r requirements.lock && \
	  $(BIN)/python -m pip install -q --no-deps -e . )
	@touch $(STAMP)

# Builds the warehouse, validates it, fits and registers the models (DVC skips what is up to date).
# `kneecap repro` is `dvc repro` holding the input areas (data/raw ...): a `kneecap ingest` meanwhile
# waits and lands after it, so the run never records a file it did not decode (docs/pipeline.md).
pipeline: setup
	@echo "[pipeline] dvc repro (kneecap repro)"
	@time $(BIN)/kneecap repro

# Sets the `champion` alias on the newest version of every registered model that has none yet.
promote: setup
	@$(BIN)/kneecap promote --if-missing

serve: setup
	@echo "[serve] kneecap desk on http://$(HOST):$(PORT)"
	@$(BIN)/streamlit run app/streamlit_app.py --server.address $(HOST) --server.port $(PORT) \
	  --server.headless true --browser.gatherUsageStats false

# An MLflow tracking server on a PostgreSQL cluster in $(MLFLOW_SERVER_DIR) (initialised by the first
# start), serving the artifacts under $(MLFLOW_ARTIFACTS); runs in the background until
# `make mlflow-server-stop`. Point kneecap at it with MLFLOW_TRACKING_URI (docs/cluster.md).
mlflow-server: setup
	@scripts/mlflow-server start --dir $(MLFLOW_SERVER_DIR) --artifacts $(MLFLOW_ARTIFACTS) \
	  --host $(MLFLOW_HOST) --port $(MLFLOW_PORT) --pg-port $(MLFLOW_PG_PORT) --workers $(MLFLOW_WORKERS) \
	  --mlflow $(BIN)/mlflow -- $(MLFLOW_SERVER_OPTS)

mlflow-server-stop:
	@scripts/mlflow-server stop --dir $(MLFLOW_SERVER_DIR)

# MLflow's own UI on the local store (runs, their plots and datasets, the registry); Ctrl-C stops it
mlflow-ui: setup
	@$(BIN)/mlflow ui --backend-store-uri sqlite:///$(CURDIR)/mlflow.db --host $(HOST) --port $(MLFLOW_UI_PORT)

# --dist loadscope: a module's tests run on one worker, so its module-scoped project (a dvc repro,
# a trained registry) is built once; xdist_group marks are not honoured under pytest 9 (the group
# suffix never reaches the node ids), which spread such modules over both workers and built each twice.
#
# One thread per worker (numba's prange kernels, OpenBLAS): two workers fill the two cores, and a
# kernel's second thread then spins against the other worker. A train stage beside a busy core took
# 30.7-36.0 s with two threads and 18.9-22.9 s with one (2026-11-29); results do not depend on it.
TEST_THREADS = NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
test: setup
	@$(TEST_THREADS) $(BIN)/python -m pytest -n 2 --dist loadscope
	@$(MAKE) --no-print-directory test-kernels

# The dispatch model's compiled kernels run as plain Python (NUMBA_DISABLE_JIT=1) on small solves
# and direct calls that reach every statement of them, which the test checks line by line
# (tests/modeling/test_dispatch_nojit.py; skipped in the compiled run above): a kernel line no
# solve reaches, or one that only works compiled, fails `make test`. 31 tests, 4-6 s in pytest,
# 7-11 s of wall time (4.7-5.1 s of CPU) on 2 cores at load 3-6; the traced run executes all
# 910 statements of the compiled functions in the package's 8 kernel modules.
test-kernels: setup
	@NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/modeling/test_dispatch_nojit.py

test-fast: setup
	@$(TEST_THREADS) $(BIN)/python -m pytest -n 2 -m "not slow and not e2e"

# The dispatch model's tests with its compiled kernels run as plain Python (NUMBA_DISABLE_JIT=1),
# so a coverage run or a debugger sees inside them. Slow (about 3 min of CPU, 11 min on a machine
# at load 8, most of it test_dispatch.py's closed solves), so not part of `make test`, which runs
# `test-kernels` instead.
test-nojit: setup
	@NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -n 2 -p no:cacheprovider tests/modeling/test_dispatch.py \
	  tests/modeling/test_background.py tests/modeling/test_pool_rule.py tests/modeling/test_help_cycle.py

explore: setup
	@KNEECAP_HYPOTHESIS=explore $(BIN)/python -m pytest -n 2 -m "not slow and not e2e" -p no:cacheprovider tests/modeling tests/test_factors.py tests/smf

bench: setup
	@$(BIN)/python benchmarks/run_all.py

# 100,000 mutated SMF dumps through the ingest path, then 5,000 mutated RMF XML reports through
# the RMF reader (seeded, the same inputs on every machine): crashes / hangs / intact records or
# intervals lost, goal 0 / 0 / 0; failing inputs go to /tmp/kneecap-fuzz and /tmp/kneecap-fuzz-rmf.
# FUZZ_OPTS="--n 20000 --seed 3" (SMF) and FUZZ_RMF_OPTS="--n 1000" for other runs. Both always
# run; the target fails when either found something.
FUZZ_OPTS ?=
FUZZ_RMF_OPTS ?=
fuzz: setup
	@PYTHONPATH=src $(BIN)/python benchmarks/fuzz_smf_ingest.py --workers 2 $(FUZZ_OPTS); smf=$$?; \
	  PYTHONPATH=src $(BIN)/python benchmarks/fuzz_rmf_xml.py --workers 2 $(FUZZ_RMF_OPTS); rmf=$$?; \
	  test $$smf -eq 0 && test $$rmf -eq 0

# docs/ into site/ (MkDocs Material; the API pages from the docstrings, the Backtests and Benchmarks
# tables from the benches' own output files, benchmarks/report_tables.py); --strict: a warning fails
docs: setup
	@$(BIN)/mkdocs build --strict --site-dir site
	@echo "[docs] open site/index.html"

clean:
	rm -rf data/processed/* data/interim/* models/* reports/metrics reports/validation
