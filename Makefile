# Two entry points, each doing all set-up itself on a fresh machine:
#   make demo   build the site (calculators in the browser, GPU comparison) and serve it on 127.0.0.1
#   make test   every test, plus ruff and mypy (installs Chromium with apt-get when root and missing)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
# The address the built site is served at (mkdocs.yml's site_url); the Pages workflow sets it.
SITE_URL ?= http://127.0.0.1:$(PORT)/
NPM_STAMP := node_modules/.installed

.PHONY: demo test setup lint site chromium registry-check port-check

# Two install levels in one venv: `make demo` needs only what building the site needs (mkdocs,
# pydantic: about 30 MB); `make test` adds the benchmark client, dev tools and the CPU engine
# (torch, transformers: about 1.6 GB).
SITE_STAMP := $(VENV)/.installed-site
ALL_STAMP := $(VENV)/.installed-all

$(BIN)/python:
	@echo "==> creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip

$(SITE_STAMP): pyproject.toml | $(BIN)/python
	@echo "==> installing what building the site needs: pip install -e '.[site]'"
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[site]'
	touch $@

$(ALL_STAMP): pyproject.toml | $(BIN)/python
	@echo "==> installing everything the tests need: pip install -e '.[dev,bench,site,e2e]' (about 1.6 GB)"
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev,bench,site,e2e]'
	touch $(SITE_STAMP) $@

$(BIN)/infermeter: $(ALL_STAMP)

setup: $(BIN)/infermeter

# Pyodide and uPlot, pinned by package-lock.json, vendored into the built site.
$(NPM_STAMP): package.json package-lock.json
	@echo "==> installing Pyodide and uPlot from npm (package-lock.json)"
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

chromium:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

site: $(SITE_STAMP) $(NPM_STAMP)
	@echo "==> building the site from the registry: mkdocs build (into build/site)"
	NO_MKDOCS_2_WARNING=1 INFERMETER_SITE_URL=$(SITE_URL) $(BIN)/mkdocs build --strict --quiet

# The port is checked before the build (so a taken port fails fast) and bound before the address
# is printed; the server logs nothing per request.
demo: port-check site
	@$(BIN)/python site/hooks/serve.py --port $(PORT) --directory build/site

port-check:
	@$(PYTHON) site/hooks/serve.py --check --port $(PORT)

lint: setup
	$(BIN)/ruff check calculators registry bench tests benchmarks site
	$(BIN)/mypy
	MYPYPATH=site/hooks $(BIN)/mypy --strict site/hooks/*.py

# The registry checks a pull request's CI runs too (.github/workflows/registry.yml).
registry-check: setup
	$(BIN)/infermeter registry schemas --check
	$(BIN)/infermeter registry validate

test: lint registry-check $(NPM_STAMP) chromium
	$(BIN)/python -m pytest
