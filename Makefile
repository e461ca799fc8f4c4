# attnlens — `make run` starts the app, `make test` runs every check. Both set up .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp
TORCH := torch==2.13.0
PORT ?= 8501

.PHONY: install run test lint typecheck unit browser-deps bench models clean

install: $(STAMP)

# torch is pinned and installed on its own first: any other request may pull a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e '.[dev]' $(TORCH)
	touch $(STAMP)

run: install
	$(BIN)/attnlens serve --port $(PORT)

lint: install
	$(BIN)/ruff check model viz app tests bench
	$(BIN)/ruff format --check model viz app tests bench

typecheck: install
	$(BIN)/mypy model viz app bench

browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi; }

unit: install
	$(BIN)/python -m pytest

test: install browser-deps lint typecheck unit

bench: install
	$(BIN)/python -m bench

models: install
	$(BIN)/attnlens train reverse --out model/bundled/reverse
	$(BIN)/attnlens train sort --out model/bundled/sort
	$(BIN)/attnlens train dates --out model/bundled/dates
	$(BIN)/attnlens train translate --out model/bundled/translate
	$(BIN)/attnlens train lm --out model/bundled/lm

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
