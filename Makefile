# Everything a fresh machine needs is done here: virtualenv, pinned requirements, browser for the
# UI tests, migrations. `make run` needs no external service; `make test` needs PostgreSQL and Redis.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
TEST_SETTINGS := DJANGO_SETTINGS_MODULE=config.settings_test

.PHONY: venv browser run test lint format clean bench

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

# Headless Chromium drives the pages a person clicks (sign-in, consent, admin) in the tests.
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
		echo "Installing Debian's chromium and chromium-driver for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; \
	fi

# Embedded defaults (SQLite in var/, a filesystem broker in var/broker) unless DATABASE_URL /
# REDIS_URL are set. `rundev` supervises runserver, a Celery worker and beat; Ctrl-C stops all three.
# The local demo may send webhooks to receivers on this machine (production allows none by default).
RUN_ENV := DEBUG=$${DEBUG:-1} WEBHOOK_ALLOWED_CIDRS=$${WEBHOOK_ALLOWED_CIDRS-127.0.0.0/8,::1/128}
RUN_ADDRESS ?= 127.0.0.1:8000

run: venv
	mkdir -p var/broker var/broker-processed
	$(RUN_ENV) $(BIN)/python manage.py migrate --noinput
	$(RUN_ENV) $(BIN)/python manage.py seed_demo --base-url http://$(RUN_ADDRESS)
	$(RUN_ENV) exec $(BIN)/python manage.py rundev $(RUN_ADDRESS)

test: venv browser
	$(TEST_SETTINGS) $(BIN)/python -m pytest
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	# Model/migration drift needs no server: compare against an in-memory database.
	$(TEST_SETTINGS) DATABASE_URL=sqlite://:memory: $(BIN)/python manage.py makemigrations --check --dry-run

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache

# The API side by side with its framework floors (docs/benchmarks.md): wipes and seeds DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/sched_bench; its name must contain "bench"), serves it
# with gunicorn, loads it with wrk from a separate process, rewrites docs/benchmarks.md and its chart.
# About 10 minutes on 2 cores; needs PostgreSQL and Redis (REDIS_URL, default db 7).
bench: venv
	@command -v wrk >/dev/null || { echo "Installing Debian's wrk"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }
	$(BIN)/python -m pip install --quiet -r benchmarks/requirements.txt
	$(BIN)/python -m benchmarks.run

.PHONY: bench-webhooks
# Webhook delivery: commit-to-first-attempt latency and deliveries/s of one worker vs a no-op task.
# Needs PostgreSQL and Redis (DATABASE_URL / REDIS_URL); creates and drops its own database. About a
# minute. BENCH_POOL / BENCH_CONCURRENCY / BENCH_DB_REUSE_MAX try other worker set-ups (docs/webhooks.md).
bench-webhooks: venv
	$(TEST_SETTINGS) $(BIN)/python -m benchmarks.webhooks

.PHONY: bench-slots
# CPU of one GET /slots at the input limits (API_LIMITS: availability rows, days) next to a typical
# schedule, in-process: no server, no database. Seconds. Prints numbers; it is not a test.
bench-slots: venv
	$(BIN)/python -m benchmarks.slots

.PHONY: fuzz
# The schemathesis test of `make test` with more generated requests per operation and mode
# (FUZZ_EXAMPLES, default here 100; `make test` uses 6). Needs PostgreSQL and Redis like `make test`.
# Derandomized: the same requests on every run with the same document.
FUZZ_EXAMPLES ?= 100
fuzz: venv
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(TEST_SETTINGS) $(BIN)/python -m pytest -p no:cacheprovider -q core/tests/test_fuzz_openapi.py
