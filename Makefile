# The single entry point: make run | test | lint | fmt | typecheck | bench
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test browser binary lint fmt typecheck bench clean

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

bench: binary
	$(BIN)/python -m bench.http_requests
	$(BIN)/python -m bench.executable
	$(BIN)/python -m bench.files

clean:
	rm -rf $(VENV) build dist *.egg-info
