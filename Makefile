# Two commands do everything on a fresh machine: `make repro` and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)

.PHONY: setup bytecode sandbox-deps typecheck test test-all repro lint bench-setup bench clean-data

# Idempotent: reuses an existing .venv, reinstalls only when pyproject.toml changed.
setup: $(VENV)/.installed sandbox-deps $(VENV)/include/testlib/testlib.h bytecode

# The project's bytecode, written once here (only what changed): with PYTHONDONTWRITEBYTECODE
# set, every `microcoder` command and every judge process start would compile the sources
# again (~50 ms per command here; judges never write it, they run sandboxed).
bytecode: | $(VENV)/.installed
	@$(VENV)/bin/python -m compileall -q pipeline stages training >/dev/null

$(VENV)/.installed: pyproject.toml
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e '.[dev]'
	@touch $@

# testlib.h for C++ checker programs (pinned, hash-checked; see pipeline/evaluator/verdict/testlib.py).
# Not fatal when offline: such checkers are then judged SE with a clear reason.
$(VENV)/include/testlib/testlib.h: | $(VENV)/.installed
	@$(VENV)/bin/python -c "from microcoder.pipeline.evaluator.verdict.testlib import main; raise SystemExit(main())" || true

# The evaluator's sandbox uses bubblewrap; without it, unshare namespaces where they work (with a
# warning); with neither it refuses to run (SandboxUnavailable: it never judges code unisolated).
# Not fatal here: a machine with working unshare namespaces still judges.
SANDBOX_REFUSAL := the evaluator will refuse to run without bubblewrap or working unshare namespaces; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)
sandbox-deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) >/dev/null \
	      || echo "warning: could not install bubblewrap: $(SANDBOX_REFUSAL)"; \
	  else echo "warning: bubblewrap (bwrap) not found: $(SANDBOX_REFUSAL)"; fi; }

# Imports that do not resolve (ours above all), missing names and calls that do not fit a signature,
# over pipeline/, training/ and stages/ (pyproject.toml [tool.mypy]; docs/DEVELOPING.md).
typecheck: setup
	$(BIN)/mypy

test: setup typecheck
	$(BIN)/python -m pytest -q -m "not gpu" -p no:cacheprovider

# Everything, GPU tests included (they skip without CUDA).
test-all: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider

repro: setup
	@test -d .dvc || $(BIN)/dvc init -q
	$(BIN)/dvc repro

lint: setup
	$(BIN)/ruff check .

# Anchors for bench/: LiveCodeBench's evaluator (no deps: it would pull a conflicting stack) and datatrove.
bench-setup: setup
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python -m pip install -q --no-deps nvidia-livecodebench==26.3

bench: bench-setup
	$(BIN)/python bench/evaluator_vs_lcb.py
	$(BIN)/python bench/dedup_vs_datatrove.py
	$(BIN)/python bench/train_overhead.py

clean-data:
	rm -rf data/raw data/dedup data/validated data/rollouts data/filtered data/curated data/train data/eval models
