# Two commands do everything on a fresh machine; both create .venv and install what they need.
#   make demo   — a throw-away vault: init, capture the sample logs in examples/, stats, search, distill, show
#   make test   — the whole test suite
#   make docs   — the documentation site (docs/, mkdocs.yml) built into site/
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test docs bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,mcp,embed,docs,fast]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	$(BIN)/python -m pytest

docs: $(STAMP)
	$(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python bench/capture.py
	$(BIN)/python bench/redact.py

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache
