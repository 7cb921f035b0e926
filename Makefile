# The two commands of README.md: `make run` and `make test`. Both set up everything they need.
SHELL := /bin/bash
PY_SYS ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROFILE ?= tiny
RUN_ID ?=
ARGS ?=

.PHONY: run test lab docs setup system-deps bench clean-runs

$(PY):
	@command -v $(PY_SYS) >/dev/null || { echo "Python 3.11 is required (set PY_SYS=/path/to/python3.11)"; exit 1; }
	$(PY_SYS) -m venv $(VENV)

# torch first, pinned, so that no other package can pull a CUDA build of it. The reference IFEval / IFBench checkers
# go in without their declared dependencies (requirements-checkers.txt says why); their NLTK data is then fetched
# once into the project's folder (a warning, not a failure, where NLTK's server cannot be reached).
$(STAMP): $(PY) pyproject.toml requirements-checkers.txt
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev]"
	$(PY) -m pip install -q --no-deps -r requirements-checkers.txt
	-$(PY) -m recipe.rewards.nltk_data
	@touch $(STAMP)

# bubblewrap isolates model-written code (recipe/sandbox); g++ compiles C++ submissions and the sandbox's helper;
# git serves the loopback Hub used by the tests; chromium (Debian's) is the browser of the JupyterLab test
# (Playwright drives /usr/bin/chromium; no browser build is downloaded).
system-deps:
	@missing=""; command -v bwrap >/dev/null || missing="$$missing bubblewrap"; command -v g++ >/dev/null || missing="$$missing g++"; command -v git >/dev/null || missing="$$missing git"; [ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && apt-get install -y -qq $$missing >/dev/null) || echo "WARNING: could not install$$missing; the sandbox refuses to run and the browser test skips without them"; \
	  else echo "WARNING: missing$$missing; install with your package manager (e.g. sudo apt-get install$$missing) or the sandbox refuses to run and the browser test skips"; fi; \
	fi

setup: $(STAMP) system-deps

run: setup
	$(VENV)/bin/recipe run --profile $(PROFILE) $(if $(RUN_ID),--run-id $(RUN_ID)) $(ARGS)

test: setup
	$(PY) -m pytest -q -n 2 --timeout=900 -p random_order --random-order-bucket=global tests

# Saving a notebook writes the commit format (recipe/pipeline/lab_hooks.py): open, run, save leaves git clean.
# Jupyter refuses to start as root without --allow-root; containers and many cluster nodes run as root.
lab: setup
	@if [ "$$(id -u)" = 0 ]; then echo "make lab: running as root, so passing --allow-root to jupyter lab"; root=--allow-root; else root=; fi; \
	$(VENV)/bin/jupyter lab $$root --ContentsManager.pre_save_hook=recipe.pipeline.lab_hooks.strip_outputs notebooks/

# The tiny cascade through the notebooks, each executed notebook rendered to HTML with its plots (build/docs/).
docs: setup
	$(PY) -m recipe.pipeline.docs_build --run-id docs-tiny --out build/docs

bench: setup
	$(PY) -m pip install -q -e ".[bench]"
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean-runs:
	rm -rf runs/
