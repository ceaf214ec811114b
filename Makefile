.PHONY: install lint format type test test-fast smoke bench

install:
	pip install -e '.[test]'

lint:
	ruff check .
	ruff format --check .

format:
	ruff format .
	ruff check --fix .

type:
	mypy

test:  ## everything that runs on a CPU, learning tests included (about 15 minutes)
	pytest -m "not gpu"

test-fast:  ## skips the slow learning tests
	pytest

smoke:
	for f in experiments/*.py; do python -m rlsuite.run $$f --smoke || exit 1; done

bench:
	python scripts/bench_overhead.py
