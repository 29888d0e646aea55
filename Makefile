# Two commands on a fresh machine: `make demo` (tiny end-to-end run) and `make test`. Each installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml setup.py constraints.txt | cksum | cut -d' ' -f1)

.PHONY: install test lint demo bench clean

install: $(STAMP)

$(STAMP): pyproject.toml setup.py constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# CPU torch first, from the exact pin (a looser spec pulls a multi-GB CUDA build).
	$(PIP) install --quiet torch==2.13.0
	# constraints.txt pins every package to versions known to work together (no resolver backtracking).
	$(PIP) install --quiet -c constraints.txt -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

test: install
	$(VENV)/bin/pytest -q

lint: install
	$(VENV)/bin/ruff check gspo_cli tests benchmarks

# The tiny end-to-end run: prepare-data -> train -> eval through the embedded local Ray head (gspo starts it on
# 127.0.0.1 on first use and reuses it; `gspo cluster down` stops it). Each demo is a fresh run folder.
ifndef DEMO_RUN
DEMO_RUN := tiny-demo-$(shell date +%Y%m%d-%H%M%S)
endif
GSPO := $(VENV)/bin/gspo

demo: install
	$(GSPO) prepare-data --preset tiny
	$(GSPO) train --preset tiny --run-name $(DEMO_RUN)
	$(GSPO) eval arith --preset tiny --model $(DEMO_RUN)
	$(GSPO) report $(DEMO_RUN)
	@run="$${GSPO_HOME:-$$HOME/.gspo}/runs/$(DEMO_RUN)"; \
	echo ""; \
	echo "Demo finished. Run folder:  $$run"; \
	echo "  resolved preset:          $$run/config.yaml"; \
	echo "  metrics (verl format):    $$run/metrics.jsonl"; \
	echo "  checkpoints (HF folders): $$(ls -d $$run/checkpoints/global_step_* | tr '\n' ' ')"; \
	echo "  eval results:             $$(ls -d $$run/eval/* 2>/dev/null | tr '\n' ' ')"; \
	echo "  curves + summary:         $$run/report/"; \
	echo "The embedded Ray head on 127.0.0.1 stays up for the next command; stop it with: $(GSPO) cluster down"

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
