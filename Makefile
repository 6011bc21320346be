PY ?= python3
BIN := .venv/bin

.PHONY: demo test lint bench

$(BIN)/compoworld: pyproject.toml
	$(PY) -m venv .venv
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,ray,train]'
	touch $@

demo: $(BIN)/compoworld
	$(BIN)/compoworld tasks generate --n 100 --out runs/tasks.jsonl
	$(BIN)/compoworld tasks check runs/tasks.jsonl
	$(BIN)/compoworld tasks show runs/tasks.jsonl

test: $(BIN)/compoworld
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n auto

lint: $(BIN)/compoworld
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports  # the layers: pyproject.toml's import contracts

bench: $(BIN)/compoworld
	$(BIN)/python benchmarks/core.py
	$(BIN)/python benchmarks/build.py
	$(BIN)/python benchmarks/taskgen.py
