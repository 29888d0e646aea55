# Two commands on a fresh machine: `make demo` (tiny end-to-end run) and `make test`. Each installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install test lint demo bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# CPU torch first, from the exact pin (a looser spec pulls a multi-GB CUDA build).
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

test: install
	$(VENV)/bin/pytest -q

lint: install
	$(VENV)/bin/ruff check gspo_cli tests benchmarks

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
