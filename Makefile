# Tiddly — the two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 1
# Parallel test workers (pytest-xdist); each gets its own test database.
TEST_WORKERS ?= 2

.PHONY: run test lint format bench install migrate superuser token

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

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install
	$(BIN)/python bench/run.py $(BENCH_ARGS)
