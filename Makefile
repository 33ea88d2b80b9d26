# Tiddly — the two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 1
# Parallel test workers (pytest-xdist); each gets its own test database.
TEST_WORKERS ?= 2
# PostgreSQL for `make test-postgres` / `make check` (a scratch database, created and dropped).
PG_URL ?= postgres://postgres@127.0.0.1:5432
PG_DB ?= tiddly_check

.PHONY: run test lint format bench bench-search install migrate superuser token \
	check test-sqlite test-postgres fuzz inspector mcp-sdk2 browser-deps browser-test

$(BIN)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

install: $(BIN)/.installed

migrate: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v0

run: migrate
	@$(BIN)/python manage.py tiddly_welcome --host $(HOST) --port $(PORT)
	$(BIN)/python -m uvicorn tiddly.asgi:application --host $(HOST) --port $(PORT) --workers $(WORKERS)

test: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy tiddly content prompts mcp_bridge
	$(BIN)/lint-imports

test-sqlite: install
	env -u DATABASE_URL $(MAKE) --no-print-directory test

test-postgres: install
	psql "$(PG_URL)/postgres" -v ON_ERROR_STOP=1 -qc 'DROP DATABASE IF EXISTS $(PG_DB)' -c 'CREATE DATABASE $(PG_DB)'
	DATABASE_URL="$(PG_URL)/$(PG_DB)" $(MAKE) --no-print-directory test; status=$$?; \
	  psql "$(PG_URL)/postgres" -qc 'DROP DATABASE IF EXISTS $(PG_DB)' >/dev/null; exit $$status

# Schemathesis against a live server on a fresh database (see .ci/fuzz for its knobs).
fuzz: install
	.ci/fuzz

# The MCP Inspector CLI (pinned, cached in .ci/.npm-inspector/) against a live server (SPEC §7).
inspector: install
	.ci/inspector

# Today's official MCP SDK (mcp 2.x, pinned, in its own venv .ci/.venv-mcp-sdk2/) against a live
# server: initialize, tools/list, create/edit/get, prompts/list (SPEC §7).
mcp-sdk2: install
	.ci/mcp-sdk2

browser-deps:
	.ci/browser-deps

# The admin in headless Chromium; not part of `make test` (testpaths leave browser_tests/ out).
browser-test: install browser-deps
	$(BIN)/python -m pytest browser_tests $(PYTEST_ARGS)

# Everything CI runs (.ci/run): the habit before you stop.
check: lint test-sqlite test-postgres fuzz inspector mcp-sdk2 browser-test
	@echo "== make check passed =="

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The HTTP rows (bench/run.py), then finding by meaning (bench/search_meaning.py, in-process).
bench: install
	$(BIN)/python bench/run.py $(BENCH_ARGS)
	$(BIN)/python bench/search_meaning.py $(BENCH_SEARCH_ARGS)

bench-search: install
	$(BIN)/python bench/search_meaning.py $(BENCH_SEARCH_ARGS)
