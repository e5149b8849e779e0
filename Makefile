# The two commands of the README: `make run` and `make test`.
# Both create .venv/ from requirements-dev.lock when it is missing or out of date.
#
# pyproject.toml says which packages Gatehouse needs; the lock files pin every package, direct
# or not, with the hashes of its files, for Python 3.11 on linux x86_64:
#   requirements.lock      the runtime packages (the Docker image),
#   requirements-dev.lock  the runtime packages and the `dev` extra (.venv, CI).
# After changing the dependencies in pyproject.toml, run `make lock`: it keeps every pin that
# still fits and resolves only what changed. `make lock UPGRADE=1` takes the newest releases
# that pyproject.toml allows. Commit the lock files with the change; `make test` fails while
# they disagree with pyproject.toml.
#
# The hashes are those of the registry's files, so the install works on any machine that
# reaches the registry. A machine whose pip also reads local indexes or wheel directories
# (find-links) needs nothing more: pip passes over a local file whose index lists a hash that
# the lock does not, and local copies of the registry's files have the registry's hashes.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCK := requirements.lock
DEV_LOCK := requirements-dev.lock
# The LiteLLM proxy that tests/client runs with the Gatehouse guardrail has a virtualenv of
# its own: litellm pins its own gunicorn, rich and others, which must not move the app's locks.
LITELLM_VENV := .venv-litellm
LITELLM_STAMP := $(LITELLM_VENV)/.installed
LITELLM_LOCK := client/requirements-litellm.lock

.PHONY: run check test lint format bench mutants lock lock-check clean

$(STAMP): pyproject.toml $(DEV_LOCK) client/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "Gatehouse needs Python 3.11: set PYTHON=python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r $(DEV_LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m pip install --quiet --no-deps -e client
	@touch $(STAMP)

$(LITELLM_STAMP): $(LITELLM_LOCK) client/pyproject.toml
	@test -x $(LITELLM_VENV)/bin/python || $(PYTHON) -m venv $(LITELLM_VENV)
	$(LITELLM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LITELLM_VENV)/bin/python -m pip install --quiet --require-hashes -r $(LITELLM_LOCK)
	$(LITELLM_VENV)/bin/python -m pip install --quiet --no-deps -e client
	@touch $(LITELLM_STAMP)

UV_COMPILE = $(BIN)/uv pip compile --quiet --generate-hashes --python-version 3.11 \
	--python-platform x86_64-unknown-linux-gnu --custom-compile-command 'make lock' \
	$(if $(UPGRADE),--upgrade)

## Regenerate the lock files from pyproject.toml (`make lock UPGRADE=1` for newer releases).
# The runtime lock is constrained by the dev lock, so that the image runs the versions tested.
# The LiteLLM proxy's lock is resolved on its own, from client/requirements-litellm.in.
lock: $(STAMP)
	$(UV_COMPILE) --extra dev pyproject.toml -o $(DEV_LOCK)
	$(UV_COMPILE) --constraint $(DEV_LOCK) pyproject.toml -o $(LOCK)
	$(UV_COMPILE) client/requirements-litellm.in -o $(LITELLM_LOCK)

# Regenerating the lock files to compare them would need the registry (uv reads the package
# index unless its cache already holds every release), so this compares without it: each
# requirement in pyproject.toml has a pin that satisfies it, and each pin that uv marked
# "via gatehouse (pyproject.toml)" is still asked for. It does not see a changed extra such as
# celery[redis] or a changed requires-python; `make lock` after such a change.
define LOCK_CHECK
import re
import sys
import tomllib

from packaging.requirements import Requirement


def normal(name):
    return re.sub(r"[-_.]+", "-", name).lower()


project = tomllib.load(open("pyproject.toml", "rb"))["project"]
runtime = [Requirement(line) for line in project["dependencies"]]
dev = runtime + [Requirement(line) for line in project["optional-dependencies"]["dev"]]
for lock, wanted in ((sys.argv[1], runtime), (sys.argv[2], dev)):
    pins, direct = {}, set()
    for entry in re.split(r"\n(?=\S)", open(lock).read()):
        pin = re.match(r"([a-z0-9][a-z0-9._-]*)==([^\s\\]+)", entry)
        if pin:
            pins[pin[1]] = pin[2]
            if "gatehouse (pyproject.toml)" in entry:
                direct.add(pin[1])
    for req in wanted:
        version = pins.get(normal(req.name))
        if version is None:
            sys.exit(f"{lock} has no pin for {req} (pyproject.toml): run make lock")
        if not req.specifier.contains(version, prereleases=True):
            sys.exit(f"{lock} pins {req.name}=={version}, outside {req} (pyproject.toml): run make lock")
    for name in direct - {normal(req.name) for req in wanted}:
        sys.exit(f"{lock} pins {name}, which pyproject.toml no longer asks for: run make lock")
endef
export LOCK_CHECK

lock-check: $(STAMP)
	@$(BIN)/python -c "$$LOCK_CHECK" $(LOCK) $(DEV_LOCK)

PORT ?= 8000

## Serve the app on http://127.0.0.1:$(PORT) (make run PORT=8080) with a Celery worker and beat, seeding demo data on first run.
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo_setup --port $(PORT)
	GATEHOUSE_PORT=$(PORT) $(BIN)/honcho start -f Procfile -p $(PORT)

# Test processes (pytest-xdist): one per core. Tests that share Redis, or start servers,
# browsers or workers (marked serial by tests/conftest.py), run afterwards, one after another.
TEST_PROCESSES ?= auto
PYTEST := $(BIN)/python -m pytest -n $(TEST_PROCESSES)

## The fast tier: lint, migrations in sync, and every test not marked slow (about 3 min on two cores).
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(PYTEST) -m "not slow"

## The whole suite, every tier: lock files in sync, lint, migrations in sync, then pytest (PostgreSQL and Redis when reachable).
test: $(STAMP) $(LITELLM_STAMP) lock-check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(PYTEST) -m "not serial"
	$(BIN)/python -m pytest -p no:xdist -m serial

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python -m bench.ingest
	$(BIN)/python -m bench.queue
	$(BIN)/python -m bench.simulation
	$(BIN)/python -m bench.learning

# The mutants tested: every one of the files that [tool.mutmut] mutates, but of
# learning/cycles.py only _start and cycles_resume (the rest of it is older and not covered
# here). Each pattern also matches its functions' names, by which mutmut picks the tests of
# its clean run. `mutmut results` leaves out the other mutants of cycles.py: not checked.
# The scoring path's property tests draw this many examples a test in a mutation run, where
# the suite draws 150: each surviving mutant runs them all, and they were most of its time.
MUTANTS_FUZZ_EXAMPLES := 25
MUTANTS := 'gating.scoring.*' 'gating.scorers.*' 'gating.outbox.*' 'gating.users.*' 'gating.api.strict.*' \
	'learning.cycles.x__start*' 'learning.cycles.x_cycles_resume*' \
	'learning.statistics.certify.*' 'learning.statistics.weights.*' \
	'learning.statistics.agreement.*' 'learning.statistics.importance.*' \
	'learning.statistics.drift.*' 'learning.statistics.tiers.*' \
	'learning.statistics.thresholds.*' 'learning.statistics.labels.*' \
	'learning.statistics.sampling.*' 'learning.statistics.forecast.*' \
	'learning.statistics.gold.*' 'gating.rounds.*'

## Mutation testing (docs/reliability.md): the figures, then each mutant tested that was not killed.
mutants: $(STAMP)
	rm -rf mutants
	GATEHOUSE_FUZZ_EXAMPLES=$(MUTANTS_FUZZ_EXAMPLES) $(BIN)/mutmut run $(MUTANTS)
	$(BIN)/mutmut results | grep -v '^ *learning\.cycles\..*: not checked$$' || true

clean:
	rm -rf $(VENV) $(LITELLM_VENV) var/
