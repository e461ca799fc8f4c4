# attnlens — `make run` starts the app, `make test` runs every check. Both set up .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp
TORCH := torch==2.13.0
PORT ?= 8501

.PHONY: install run test lint typecheck unit browser-deps service-deps bench gpu-check models clean

install: $(STAMP)

# torch is pinned and installed on its own first: any other request may pull a multi-GB CUDA build.
# Python compiles a module's bytecode when it first imports it and keeps it beside the source,
# unless PYTHONDONTWRITEBYTECODE is set (as on our CI machine): then every process of `make test`
# (the test workers, each server and command they start) compiled torch, streamlit and the rest
# again, 4 min of CPU. The targets here let Python keep what it compiles, so a module is compiled
# once, by the first process that imports it: about 5,000 of the 15,000 files installed, where
# compiling every one of them took 40 s of CPU. The install imports the largest packages once, so
# that the test workers do not each compile them side by side as they start.
unexport PYTHONDONTWRITEBYTECODE
PIP := $(BIN)/python -m pip install --quiet --no-compile
WARM := import torch, transformers, streamlit, plotly.graph_objects, pandas, safetensors
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) $(TORCH)
	$(PIP) -e '.[all,dev]' $(TORCH)
	$(BIN)/python -c '$(WARM)'
	touch $(STAMP)

run: install
	$(BIN)/attnlens serve --port $(PORT)

SOURCES := attnlens record model analysis viz app tests bench

lint: install
	$(BIN)/ruff check $(SOURCES)
	$(BIN)/ruff format --check $(SOURCES)

# mypy reads the folders as the package they install as (attnlens.*, see pyproject.toml's
# package-dir): it checks them through a tree of links, .typecheck/attnlens/{record,model,…}.
# Niced: from a fresh clone it takes about a minute of CPU beside the tests, which wait on
# browsers and servers a third of the time; it takes those moments rather than theirs.
typecheck: install
	rm -rf .typecheck && mkdir -p .typecheck/attnlens
	ln -s ../../attnlens/__init__.py .typecheck/attnlens/__init__.py
	for d in record model analysis viz app; do ln -s ../../$$d .typecheck/attnlens/$$d; done
	ln -s ../bench .typecheck/bench && ln -s ../tests .typecheck/tests
	cd .typecheck && nice -n 15 ../$(BIN)/mypy --config-file ../pyproject.toml \
	  --cache-dir ../.mypy_cache -p attnlens -p bench

browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi; }

# The Redis class store is tested against a real redis-server (tests start it themselves), and the
# SQLite one is read and backed up by Debian's sqlite3 shell while a server writes to it.
service-deps:
	@missing=""; for tool in redis-server sqlite3; do \
	  command -v $$tool >/dev/null 2>&1 || missing="$$missing $$tool"; done; \
	[ -z "$$missing" ] || { \
	  echo "installing Debian's$$missing for the class-store tests"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq $$missing >/dev/null; fi; }

# One worker more than there are cores, a test file per worker at a time (a file's fixtures,
# servers and browser stay together); each test still uses one torch thread (tests/conftest.py).
# The tests leave the cores idle a third of their run, waiting on browsers and servers: on two
# cores (a warm checkout) pytest took 388 s with three workers, 423 s with two (with one 15 s
# test more). Files are handed out in the order tests/conftest.py gives (slow ones first), not
# xdist's own (most tests first), which left one-test files of 40-70 s to the end.
WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
unit: install
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder --durations=25

# The checks side by side: the tests leave the cores idle about 40% of their run (browsers and
# servers waiting on each other), time the cold type check (about a minute) and ruff fill.
# Any of them failing fails `make test`, once all three have finished.
test: install browser-deps service-deps
	$(MAKE) --no-print-directory -j3 --output-sync=line lint typecheck unit

bench: install
	$(BIN)/python -m bench

# On a machine with CUDA: the tests that need it and the long-input bench at real widths on the
# GPU, one table, within 8 minutes (keep its output in docs/speed.md). Without CUDA it says so
# and succeeds.
gpu-check: install
	$(BIN)/python -m bench.gpu_check

# every recipe of model/training/recipes.py, each into its bundled folder. One thread: the sums
# of a matrix product depend on how many threads share it (and on the device: CPU, as the
# bundled weights were made).
models: install
	for recipe in $$($(BIN)/attnlens train --list); do \
	  rm -rf model/bundled/$$recipe/snapshots; \
	  OMP_NUM_THREADS=1 $(BIN)/attnlens train $$recipe --device cpu --out model/bundled/$$recipe || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .typecheck
