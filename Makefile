# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine with
# Python 3.11+, Java 17 (for the Spark tests) and make: the first call creates .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint bench bench-spark proto clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

# Point lookups on a generated 20M-row lake, three ways, with Spark (needs Java 17+).
# Smaller: make demo DEMO_ARGS="--rows 2e6 --files 50"; see bloomskip demo --help.
DEMO_ARGS ?=
demo: $(STAMP)
	$(VENV)/bin/bloomskip demo $(DEMO_ARGS)

# Azurite (Microsoft's Azure Storage emulator) for the az:// tests, from the npm registry at
# the version tests/support/azurite/package-lock.json pins; without npm they are skipped.
AZURITE := tests/support/azurite/node_modules/.bin/azurite-blob
$(AZURITE): tests/support/azurite/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix tests/support/azurite --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "npm not found: the Azure (Azurite) tests will be skipped"; fi

test: $(STAMP) $(AZURITE)
	$(PY) -m pytest

test-fast: $(STAMP)
	$(PY) -m pytest -m "not spark and not slow"

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench

bench: $(STAMP)
	$(PY) bench/sbbf.py

# Spark: index build vs a plain scan, lookups three ways (about 5 minutes on 2 cores).
bench-spark: $(STAMP)
	$(PY) bench/spark.py

# ORC's metadata messages: proto/bloomskip/orc/messages.proto (generator input, kept out of
# the package) -> src/bloomskip/orc/messages_pb2.py (checked in; the path under proto/ is the
# module's import path). The protoc of this grpcio-tools (35.1) sets the protobuf floor in
# pyproject.toml.
PROTOC_TOOLS := grpcio-tools==1.85.1
proto: $(STAMP)
	$(PY) -m pip install --quiet '$(PROTOC_TOOLS)'
	$(PY) -m grpc_tools.protoc -I proto --python_out=src proto/bloomskip/orc/messages.proto

clean:
	rm -rf $(VENV) build dist .pytest_cache .ruff_cache .hypothesis bench/.build \
		tests/support/azurite/node_modules
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
