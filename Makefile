# Engram — `make help` lists the targets.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help install run check format test test-unit test-integration test-e2e proto clean

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml sdk/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]" -e sdk/python
	@touch $(STAMP)

install: $(STAMP) ## Create .venv and install Engram (and its Python SDK, sdk/python) with its development tools

run: $(STAMP) ## Start the whole stack (embedded PostgreSQL + NATS unless ENGRAM_DATABASE_URL/ENGRAM_NATS_URL are set)
	$(BIN)/engram up

test: check ## `make check`, then the whole suite (unit, integration, e2e) against real servers
	$(BIN)/pytest -q

test-unit: $(STAMP) ## Unit tests only (no servers)
	$(BIN)/pytest -q tests/unit

test-integration: $(STAMP) ## Integration tests (real PostgreSQL, NATS and embedding model)
	$(BIN)/pytest -q tests/integration

test-e2e: $(STAMP) ## End-to-end tests (the stack as `engram up` starts it)
	$(BIN)/pytest -q tests/e2e

proto: $(STAMP) ## Regenerate engram/v1 from proto/engram/v1
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=. --grpc_python_out=. --pyi_out=. proto/engram/v1/*.proto

check: $(STAMP) ## Formatting, lint, strict types and the layer contracts (`make test` runs it first)
	$(BIN)/ruff format --check engram services tests bench sdk examples
	$(BIN)/ruff check engram services tests bench sdk examples
	$(BIN)/mypy engram services sdk/python/src examples
	$(BIN)/lint-imports

format: $(STAMP) ## Reformat the code and apply ruff's safe fixes
	$(BIN)/ruff format engram services tests bench sdk examples
	$(BIN)/ruff check --fix engram services tests bench sdk examples

clean: ## Remove the virtualenv and caches (not your data in .engram)
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache *.egg-info
