# The single entry point: make run | test | test-long | lint | fmt | typecheck | bench | binary | deb | wheel
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# `make run` installs only what serving needs; the test, lint and build tools (the extras
# test, dev and build of pyproject.toml) come with the targets that use them.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test test-long browser binary deb wheel lint fmt typecheck bench bench-data bench-tools clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,dev,build]'
	touch $(DEV_STAMP)

# `make run` takes no flags of its own: give edge's in ARGS (make run ARGS="--port 9000").
ARGS ?=
run: $(RUN_STAMP)
	$(BIN)/edge serve $(ARGS)

# The everyday suite: every test but those marked `long` (pyproject.toml deselects them).
# At most 8 minutes on two cores (docs/testing.md).
test: $(DEV_STAMP) browser
	$(call suite,test,not long)

# The slow but thorough runs, and only those (`-m long`): schemathesis' coverage phase, the
# property tests with many more examples, the executable's build and tests, the crash test's
# five kills, the browser matrix; later the PostgreSQL suite (docs/testing.md lists them).
# Under 25 minutes on two cores, so that `make test` and this fit CI's 90 (docs/testing.md).
test-long: $(DEV_STAMP) browser
	$(call suite,test-long,long)

# $(call suite,NAME,MARKERS): pytest on TEST_WORKERS pytest-xdist workers (the tests of one
# file may go to either), in a folder of its own on a tmpfs where there is one (SQLite's
# fsyncs and removing thousands of data folders cost nothing there) with 2 GiB free (a
# container's default /dev/shm is 64 MiB), removed afterwards; then the wall time.
# TEST_WORKERS=0 runs in this one process.
TEST_WORKERS ?= auto
TEST_TMP ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] \
	&& [ "$$(df -Pk /dev/shm | awk 'NR==2 {print $$4}')" -ge 2097152 ] \
	&& echo /dev/shm || echo $${TMPDIR:-/tmp})
define suite
	@start=$$(date +%s); tmp=$$(mktemp -d "$(TEST_TMP)/edge-tests.XXXXXX"); \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist load -m "$(2)" --basetemp="$$tmp"; \
	status=$$?; rm -rf "$$tmp"; echo "make $(1): $$(( $$(date +%s) - start )) s wall"; \
	exit $$status
endef

# The page tests drive a real headless Chromium through Selenium and Debian's chromedriver
# (Debian's packages; PyPI has no browser, and the driver path is given to Selenium so
# that nothing tries to download one).
browser:
	@{ command -v chromium >/dev/null || command -v chromium-browser >/dev/null; } \
	  && [ -x /usr/bin/chromedriver ] || { \
	  echo "Installing Debian's chromium and chromium-driver for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; }

# A 1280x800 picture of each console page, as each kind of caller sees it, into
# docs/console/ (tests/browser/screenshots.py; docs/console.md shows them).
.PHONY: screenshots
screenshots: $(DEV_STAMP) browser
	$(BIN)/python -m tests.browser.screenshots docs/console

binary: $(DEV_STAMP)
	PYTHON=$(BIN)/python packaging/build.sh

# The Debian package of dist/edge: dist/edge_<version>_<arch>.deb (packaging/deb/build.sh;
# docs/operating.md). It packages the dist/edge that is there, made by `make binary` when
# missing: run `make binary deb` for one built from the source as it is now.
deb: $(RUN_STAMP) dist/edge
	PYTHON=$(BIN)/python packaging/deb/build.sh

dist/edge:
	$(MAKE) binary

# The project's wheel, dist/edge-<version>-py3-none-any.whl (the server and `edge agent`),
# and the device agent's own, dist/edge_agent-<version>-py3-none-any.whl, which requires
# only paho-mqtt and aiohttp (packaging/agent/build.py; docs/agent.md).
wheel: $(RUN_STAMP)
	$(BIN)/pip wheel --no-deps --quiet -w dist .
	$(BIN)/python packaging/agent/build.py dist

lint: $(DEV_STAMP)
	$(BIN)/ruff check edge edge_agent api storage embedded_broker tests bench
	$(BIN)/ruff format --check edge edge_agent api storage embedded_broker tests bench

fmt: $(DEV_STAMP)
	$(BIN)/ruff format edge edge_agent api storage embedded_broker tests bench
	$(BIN)/ruff check --fix edge edge_agent api storage embedded_broker tests bench

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

# Every benchmark, each figure beside its reference, written to docs/performance.md
# (bench/report.py). bench-quick (or BENCH_QUICK=1) runs small sizes, about ten minutes.
.PHONY: bench-quick soak
bench: binary bench-tools
	$(BIN)/python -m bench.report

bench-quick: $(DEV_STAMP) bench-tools
	BENCH_QUICK=1 $(BIN)/python -m bench.report

# A bounded mixed load (HTTP, sign-ins, files, MQTT devices, a tunnel) on the real server for
# SOAK_SECONDS (default 600); fails on any error or a growing RSS or p99 (bench/soak.py).
SOAK_SECONDS ?= 600
soak: $(DEV_STAMP) bench-tools
	SOAK_SECONDS=$(SOAK_SECONDS) $(BIN)/python -m bench.soak

# The data benchmark alone (10,000 and 1,000,000 entries; several minutes, mostly seeding).
bench-data: $(DEV_STAMP) bench-tools
	$(BIN)/python -m bench.data

# The crash test: `edge serve` SIGKILLed KILLS times at random moments under a write storm and
# started again each time; every acknowledged write must survive (bench/crash.py). `make test`
# runs a short one (tests/faults/test_crash.py).
KILLS ?= 100
.PHONY: crash-test
crash-test: $(DEV_STAMP)
	$(BIN)/python -m bench.crash --kills $(KILLS)

# The load generators and the reference servers: Debian's wrk (a Python client saturates
# before the server does), Mosquitto and nginx (bench/job_downloads.py starts its own on a
# free port). Only the programs are needed: the services the packages start are stopped,
# so that they do not hold ports 1883 and 80.
bench-tools:
	@if ! command -v wrk >/dev/null || ! { command -v mosquitto || [ -x /usr/sbin/mosquitto ]; } >/dev/null \
	  || ! { command -v nginx || [ -x /usr/sbin/nginx ]; } >/dev/null; then \
	  echo "Installing Debian's mosquitto, nginx and wrk for the benchmarks"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq mosquitto nginx wrk >/dev/null; \
	  $$SUDO systemctl disable --now mosquitto nginx >/dev/null 2>&1 || true; \
	fi

clean:
	rm -rf $(VENV) build dist *.egg-info
