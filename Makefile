# Two entry points, each doing all set-up itself on a fresh machine:
#   make demo   build the site (calculators in the browser, GPU comparison) and serve it on 127.0.0.1
#   make test   every test, plus ruff and mypy (installs Chromium with apt-get when root and missing)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
NPM_STAMP := node_modules/.installed

.PHONY: demo test setup lint site chromium registry-check

$(BIN)/infermeter: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench,site,e2e]'
	touch $@

setup: $(BIN)/infermeter

# Pyodide and uPlot, pinned by package-lock.json, vendored into the built site.
$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

chromium:
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

site: setup $(NPM_STAMP)
	NO_MKDOCS_2_WARNING=1 INFERMETER_SITE_URL=http://127.0.0.1:$(PORT)/ $(BIN)/mkdocs build --strict --quiet

demo: site
	@echo "infermeter site: http://127.0.0.1:$(PORT)/  (built in build/site; Ctrl-C stops the server)"
	@$(BIN)/python -m http.server --bind 127.0.0.1 $(PORT) --directory build/site >/dev/null

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
