# The two commands of the README's quick start. Each sets up first (idempotent).
VENV ?= .venv

.PHONY: setup repro test smoke docs lint format
setup:
	bash scripts/setup.sh

## Reproduce every registered paper at the default profile; ends with reports/index.html.
repro: setup
	$(VENV)/bin/paperline repro

## The test suite (what CI runs).
test: setup
	$(VENV)/bin/python -m pytest -q -n 2 --durations=30  # two workers, one per core, by file (tests/conftest.py); the 30 slowest tests at the end

## Every paper at the smoke profile (about a minute each).
smoke: setup
	$(VENV)/bin/dvc exp run -S profile=smoke

## The documentation site from the READMEs (site/index.html); `.venv/bin/mkdocs serve` to browse it live.
docs: setup
	$(VENV)/bin/mkdocs build --strict

## Lint and format in place (either name): ruff's safe fixes, then its formatter; tests/test_style.py checks both.
lint format: setup
	$(VENV)/bin/ruff check --fix . && $(VENV)/bin/ruff format .
