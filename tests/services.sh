#!/usr/bin/env bash
# Starts what the test suite needs when it is not running: PostgreSQL 15 (installed but stopped on
# these machines), Redis (installed from Debian if missing) and Debian's Chromium for the admin
# browser tests (and wrk, make bench-api's load generator). Creates the `blackjack` role and the
# databases the tests and benchmarks use. Idempotent; needs root.
set -euo pipefail

need_apt=()
command -v redis-server >/dev/null || need_apt+=(redis-server)
command -v chromium >/dev/null || need_apt+=(chromium)
command -v wrk >/dev/null || need_apt+=(wrk)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  pg_ctlcluster 15 main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
psql_su() { su postgres -c "psql -v ON_ERROR_STOP=1 -qtAc \"$1\""; }
if [ "$(psql_su "SELECT 1 FROM pg_roles WHERE rolname='blackjack'")" != "1" ]; then
  psql_su "CREATE ROLE blackjack LOGIN SUPERUSER PASSWORD 'blackjack'"
fi
for db in blackjack blackjack_bench; do
  if [ "$(psql_su "SELECT 1 FROM pg_database WHERE datname='$db'")" != "1" ]; then
    psql_su "CREATE DATABASE $db OWNER blackjack"
  fi
done

if ! redis-cli -p 6379 ping >/dev/null 2>&1; then
  redis-server --port 6379 --daemonize yes --save '' --appendonly no >/dev/null
  for _ in $(seq 1 30); do redis-cli -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
echo "services: PostgreSQL and Redis are up"
