# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine with
# Python 3.11+, Java 17 (for the Spark tests) and make: the first call creates .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/bloomskip demo

test: $(STAMP)
	$(PY) -m pytest

test-fast: $(STAMP)
	$(PY) -m pytest -m "not spark and not slow"

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench

bench: $(STAMP)
	$(PY) bench/sbbf.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .ruff_cache .hypothesis bench/.build
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
