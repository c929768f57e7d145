"""Shared test fixtures. The suite runs on PostgreSQL and Redis (see `make test`)."""
