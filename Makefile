# Two entry points, each doing all set-up itself on a fresh machine:
#   make demo   the main job: the calculators on a sample model (later: build and serve the site)
#   make test   every test, plus ruff and mypy
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test setup lint

$(BIN)/infermeter: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $@

setup: $(BIN)/infermeter

demo: setup
	$(BIN)/infermeter calc vram --model llama-3.1-8b-instruct --gpu h100-sxm --max-model-len 32768
	$(BIN)/infermeter calc fit --model llama-3.1-70b-instruct --context 32768 --concurrency 16
	$(BIN)/infermeter calc cost --price-per-hour 2.69 --tokens-per-second 2800

lint: setup
	$(BIN)/ruff check calculators registry bench tests benchmarks
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest
