# Tiddly — the two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
# HOST=0.0.0.0 listens on every interface; the names people use to reach it then go in
# DJANGO_ALLOWED_HOSTS (tiddly_welcome prints the line). Debug pages stay off unless DJANGO_DEBUG=1.
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 1
# Parallel test workers (pytest-xdist); each gets its own test database.
TEST_WORKERS ?= 2
# PostgreSQL for `make test-postgres` / `make check` (a scratch database, created and dropped).
PG_URL ?= postgres://postgres@127.0.0.1:5432
PG_DB ?= tiddly_check

.PHONY: run test lint format bench bench-outbound bench-search install migrate superuser token \
	check test-sqlite test-postgres fuzz inspector conformance mcp-sdk2 readme-examples \
	browser-deps browser-test

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

# The MCP Inspector CLI (pinned, cached in .ci/.npm-inspector/) against a live server: tools,
# errors and resources on both servers (SPEC §7, §17.3).
inspector: install
	.ci/inspector

# The official MCP conformance suite (pinned, cached in .ci/.npm-conformance/): the server
# scenarios that apply (initialize, ping, tools-list, resources-list, prompts-list) on both servers.
conformance: install
	.ci/conformance

# Today's official MCP SDK (mcp 2.x, pinned, in its own venv .ci/.venv-mcp-sdk2/) against a live
# server: initialize, tools/list, create/edit/get, prompts/list (SPEC §7).
mcp-sdk2: install
	.ci/mcp-sdk2

# The README's ```sh examples, run in order against a fresh server (.ci/readme_examples.py).
readme-examples: install
	.ci/readme-examples

browser-deps:
	.ci/browser-deps

# The admin in headless Chromium; not part of `make test` (testpaths leave browser_tests/ out).
browser-test: install browser-deps
	$(BIN)/python -m pytest browser_tests $(PYTEST_ARGS)

# Everything CI runs (.ci/run): the habit before you stop.
check: lint test-sqlite test-postgres fuzz inspector conformance mcp-sdk2 readme-examples browser-test
	@echo "== make check passed =="

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The HTTP rows (bench/run.py), then finding by meaning (bench/search_meaning.py: in-process, then
# over HTTP with the web process's RSS; `--reuse` keeps its corpus for the next run).
BENCH_SEARCH_ARGS ?= --http
bench: install
	$(BIN)/python bench/run.py $(BENCH_ARGS)
	$(BIN)/python bench/search_meaning.py $(BENCH_SEARCH_ARGS)

bench-search: install
	$(BIN)/python bench/search_meaning.py $(BENCH_SEARCH_ARGS)

# Only the rows of page capture, the change feed and webhooks (issues 19, 21; bench/rows_outbound.py),
# e.g. `make bench-outbound BENCH_ARGS="--database-url postgres://postgres@127.0.0.1:5432"`.
OUTBOUND_ROWS = capture_100_pages,extract_1mb_html,bookmark_create_capture,changes_feed_10k,write_webhooks_5,webhook_deliveries_1k
bench-outbound: install
	$(BIN)/python bench/run.py --only $(OUTBOUND_ROWS) $(BENCH_ARGS)
