# The two commands: `make run` (set up and run the platform) and `make test` (set up and run the tests).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
TEST_DATABASE_URL ?= postgres://blackjack:blackjack@127.0.0.1:5432/blackjack
BENCH_DATABASE_URL ?= postgres://blackjack:blackjack@127.0.0.1:5432/blackjack_bench
# make bench-smoke drops and creates this database every time.
BENCH_SMOKE_DATABASE_URL ?= postgres://blackjack:blackjack@127.0.0.1:5432/blackjack_bench_smoke
# Redis databases of the broker, the result backend and the cache: give a run numbers of its own
# when another runs on the same machine (e.g. TEST_BROKER_URL=redis://127.0.0.1:6379/11).
TEST_BROKER_URL   ?= redis://127.0.0.1:6379/0
TEST_RESULT_URL   ?= redis://127.0.0.1:6379/1
TEST_CACHE_URL    ?= redis://127.0.0.1:6379/2
# The port bench-api's gunicorn listens on.
BENCH_API_PORT    ?= 8765
# The environment the tests and benchmarks run in: PostgreSQL, Redis, production-like settings.
TEST_ENV := DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) \
            CELERY_RESULT_BACKEND=$(TEST_RESULT_URL) CACHE_URL=$(TEST_CACHE_URL) \
            SECRET_KEY=test-only-secret-key DEBUG=false SECURE_SSL_REDIRECT=false
# The zero-setup default (what `make run` uses with no environment): SQLite, tasks in-process.
SQLITE_ENV := env -u DATABASE_URL -u CELERY_BROKER_URL -u CELERY_RESULT_BACKEND -u CACHE_URL ENV_FILE=/dev/null \
              SECRET_KEY=test-only-secret-key DEBUG=false SECURE_SSL_REDIRECT=false
PYTEST := $(VENV)/bin/pytest --ds=config.settings -p no:cacheprovider

BENCHES := bench-ledger bench-engine bench-wagering bench-settlement bench-admin bench-api bench-run bench-rtp \
           bench-wallet
.PHONY: install install-test run test services bench-smoke $(BENCHES)

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements.txt
	touch $@

# The test and benchmark tools, on top of the runtime.
$(VENV)/.installed-test: $(VENV)/.installed requirements-test.txt
	$(VENV)/bin/pip install -q -r requirements-test.txt
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

.env:
	printf 'DEBUG=true\nSECRET_KEY=%s\n' "$$($(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))')" > .env

# make run: a short simulated session (`manage.py run_tables`), the demo users (new passwords), then
# the server on PORT. make serve: the server on what is there (no simulation, passwords kept). With
# both, the reference operator wallet (the seamless demo operator east's) runs beside the server on
# WALLET_SANDBOX_PORT, its books in memory, until the server stops; with CELERY_BROKER_URL set, 2
# worker processes and beat too. Without a broker no beat runs (README: "What the default setup
# does not run").
PORT ?= 8000
WALLET_SANDBOX_PORT ?= 8100
RUN_ARGS ?= --rounds 25 --boundless-players 50
# The shell lines that start the background processes and stop them on exit (make run and make serve).
# The wallet's log is emptied before the wallet starts (an earlier run's "operator wallet on" line
# is not taken for this one's), and the wallet must have said it listens and still be running:
# otherwise (e.g. its port is in use) make run/serve stop with its log and exit status 1.
WALLET_DEAD = { cat wallet-sandbox.log; echo "make: the reference operator wallet did not start on port \
$(WALLET_SANDBOX_PORT) (its log above): is the port in use? Choose another: WALLET_SANDBOX_PORT=..." >&2; exit 1; }
START_BACKGROUND = \
	: > wallet-sandbox.log; \
	$(PY) -m operator_wallet --port $(WALLET_SANDBOX_PORT) --secret sandbox-secret > wallet-sandbox.log 2>&1 & wallet=$$!; \
	if [ -n "$$CELERY_BROKER_URL" ]; then \
	  $(VENV)/bin/celery -A config worker -l warning -c 2 -n run@%h & worker=$$!; \
	  $(VENV)/bin/celery -A config beat -l warning --pidfile= & beat=$$!; \
	fi; \
	trap 'kill -TERM $$wallet $$worker $$beat 2>/dev/null; wait $$wallet $$worker $$beat 2>/dev/null' EXIT INT TERM; \
	until grep -q "operator wallet on" wallet-sandbox.log; do kill -0 $$wallet 2>/dev/null || $(WALLET_DEAD); sleep 0.1; done; \
	kill -0 $$wallet 2>/dev/null || $(WALLET_DEAD)
.PHONY: serve
run: install .env
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v 0
	@set -e; $(START_BACKGROUND); \
	$(PY) manage.py run_tables --operator north,south,east --wallet-url http://127.0.0.1:$(WALLET_SANDBOX_PORT) $(RUN_ARGS); \
	$(PY) manage.py create_demo_users --url http://127.0.0.1:$(PORT); \
	$(PY) manage.py runserver 127.0.0.1:$(PORT)

serve: install .env
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v 0
	@set -e; $(START_BACKGROUND); \
	echo "serving what is there on http://127.0.0.1:$(PORT)/admin/ (the logins of the last make run; new ones: $(PY) manage.py create_demo_users --url http://127.0.0.1:$(PORT))"; \
	$(PY) manage.py runserver 127.0.0.1:$(PORT)

services:
	bash tests/services.sh

# make test: what a reviewer checks (lint and import order, migrations in step with the models),
# then the suite on the production stack (PostgreSQL, Redis, real workers, Chromium; the import
# contract is tests/test_architecture.py), then on the zero-setup default (SQLite, in-process tasks;
# tests marked postgresql are skipped there), then every benchmark once at a tiny size (bench-smoke).
test: install-test services
	$(VENV)/bin/ruff check --no-cache .
	$(TEST_ENV) $(PY) manage.py makemigrations --check --dry-run
	$(TEST_ENV) $(PYTEST) tests
	$(SQLITE_ENV) $(PYTEST) -m "not postgresql" tests
	$(MAKE) --no-print-directory bench-smoke

# Benchmarks use their own database, blackjack_bench (created by tests/services.sh).
$(BENCHES): bench-%: install-test services
	$(TEST_ENV) DATABASE_URL=$(BENCH_DATABASE_URL) BENCH_API_PORT=$(BENCH_API_PORT) $(PY) -m tests.bench.$*

# make bench-smoke: every benchmark at a tiny size (BENCH_SMOKE=1, tests/bench/common.py) on a
# database created afresh, as on a new machine: fails on any error, never on a timing or a ratio.
bench-smoke: install-test services
	psql -qX -v ON_ERROR_STOP=1 "$(dir $(BENCH_SMOKE_DATABASE_URL))postgres" \
	  -c 'DROP DATABASE IF EXISTS "$(notdir $(BENCH_SMOKE_DATABASE_URL))" WITH (FORCE)' \
	  -c 'CREATE DATABASE "$(notdir $(BENCH_SMOKE_DATABASE_URL))"'
	@set -e; for bench in $(BENCHES:bench-%=%); do \
	  echo "== bench-$$bench (smoke)"; \
	  $(TEST_ENV) DATABASE_URL=$(BENCH_SMOKE_DATABASE_URL) BENCH_API_PORT=$(BENCH_API_PORT) BENCH_SMOKE=1 \
	    $(PY) -m tests.bench.$$bench; \
	done

# make wallet-sandbox: the reference operator wallet (docs/wallet-api.md) in the foreground; Ctrl-C stops it.
# More options (a state file, faults): make wallet-sandbox WALLET_SANDBOX_ARGS="--state wallet.journal --drop-rate 0.1"
WALLET_SANDBOX_ARGS ?=
.PHONY: wallet-sandbox
wallet-sandbox: install
	@echo "reference operator wallet: http://127.0.0.1:8100 (secret: sandbox-secret; admin: /_admin/state)"
	$(PY) -m operator_wallet --port 8100 --secret sandbox-secret $(WALLET_SANDBOX_ARGS)
