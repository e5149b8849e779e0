# The two commands of the README: `make run` and `make test`.
# Both create .venv/ from pyproject.toml when it is missing or out of date.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Gatehouse needs Python 3.11: set PYTHON=python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

## Serve the app on http://127.0.0.1:8000 with a Celery worker and beat, seeding demo data on first run.
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo_setup
	$(BIN)/honcho start -f Procfile

## The whole suite: lint, migrations in sync, then pytest (PostgreSQL and Redis when reachable).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/python -m pytest

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python -m bench.ingest
	$(BIN)/python -m bench.queue
	$(BIN)/python -m bench.simulation
	$(BIN)/python -m bench.learning

clean:
	rm -rf $(VENV) var/
