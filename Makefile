# The single entry point: make run | test | lint | fmt | typecheck | bench
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test browser binary lint fmt typecheck bench bench-data wrk clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/edge serve

test: $(STAMP) browser
	$(BIN)/python -m pytest -q

# The page tests drive a real headless Chromium (Debian's package; PyPI has none).
browser:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || { \
	  echo "Installing Debian's chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

binary: $(STAMP)
	PYTHON=$(BIN)/python packaging/build.sh

lint: $(STAMP)
	$(BIN)/ruff check edge api storage embedded_broker tests bench
	$(BIN)/ruff format --check edge api storage embedded_broker tests bench

fmt: $(STAMP)
	$(BIN)/ruff format edge api storage embedded_broker tests bench
	$(BIN)/ruff check --fix edge api storage embedded_broker tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

bench: binary wrk
	$(BIN)/python -m bench.http_requests
	$(BIN)/python -m bench.executable
	$(BIN)/python -m bench.data

# The data benchmark alone (10,000 and 1,000,000 entries; several minutes, mostly seeding).
bench-data: $(STAMP) wrk
	$(BIN)/python -m bench.data

# wrk, the native load generator of the benchmarks (Debian's package).
wrk:
	@command -v wrk >/dev/null || { \
	  echo "Installing Debian's wrk for the benchmarks"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq wrk >/dev/null; }

clean:
	rm -rf $(VENV) build dist *.egg-info
