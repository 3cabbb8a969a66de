# The two commands a newcomer needs are `make demo` and `make test`; both install what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: lock check-lock images image-tools tools install demo test test-fast test-slow check lint typecheck imports proto-lint proto-breaking check-gen generate proto-baseline pytest bench soak clean schema

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,demo]'
	touch $(STAMP)

install: $(STAMP)

## demo: run the whole system on embedded defaults (Ctrl-C stops everything it started)
demo: install
	$(BIN)/fleet demo

## test: every check CI runs, then the whole test suite (both lanes, in parallel: tests/README.md)
test: install check pytest

## test-fast: the edit loop's lane: every test not marked slow (no tool from outside PyPI needed)
test-fast: install
	scripts/test -m "not slow"

## test-slow: the slow lane: the tests that take long or need real tools (Prometheus, helm, Chromium)
test-slow: install tools
	scripts/test -m slow

check: lint typecheck imports proto-lint proto-breaking check-gen check-lock

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

imports: install
	$(BIN)/lint-imports

proto-lint: install
	$(BIN)/buf lint
	$(BIN)/buf format --diff --exit-code proto

## proto-breaking: FILE-level breaking changes against the released contract (proto/baseline.binpb)
proto-breaking: install
	$(BIN)/buf breaking --against proto/baseline.binpb

## proto-baseline: deliberately accept the current contract as the released one
proto-baseline: install
	$(BIN)/buf build -o proto/baseline.binpb

## generate: regenerate gen/ from proto/ (offline)
generate: install
	$(BIN)/buf generate

## schema: regenerate db/schema.sql, the whole schema in one file, from the migrations
schema: install
	$(BIN)/python -m db.schema_dump

## lock: resolve the images' locks again: deploy/images.lock (every wheel, with hashes, by uv) and
## deploy/images/debian.lock (the Debian packages, by apt's index); commit both
lock: install
	. scripts/lock-flags && $(BIN)/uv pip compile --quiet "$${LOCK_FLAGS[@]}" -o deploy/images.lock pyproject.toml
	$(BIN)/python -m deploy.images --lock

## check-lock: fail when deploy/images.lock is not what pyproject.toml resolves to (needs the package index)
check-lock: install
	scripts/check-lock

## images: every deployable's OCI image under build/images, from Debian's packages and the locked wheels
## (no container registry; docs/development.md); two builds of one commit give the same digests
images: install image-tools
	scripts/build-images --sizes docs/operations.md

## check-gen: fail when gen/ is not exactly what the protos produce
check-gen: install
	scripts/check-gen

pytest: install tools
	scripts/test

image-tools:
	scripts/install-image-tools

## tools: test tools that come from outside PyPI (helm for the chart tests, Chromium for the page tests,
## Prometheus for the monitoring tests, apt's index and faketime for the image tests); best effort
tools: image-tools
	scripts/fetch-helm
	scripts/install-browser
	scripts/install-prometheus

## bench: the benchmark table of bench/ (not part of make test); tools: dcim_pages needs Chromium
bench: install tools
	$(BIN)/python -m bench

## soak: the whole system under load and faults for 10 minutes, then its checks (not part of make test)
soak: install
	$(BIN)/python -m soak

clean:
	rm -rf $(VENV) .fleet .mypy_cache .ruff_cache .pytest_cache build
