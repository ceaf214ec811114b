.PHONY: install lint format type test test-slow smoke bench

install:
	pip install uv && uv pip install -e '.[test]'

lint:
	ruff check .
	ruff format --check .

format:
	ruff format .
	ruff check --fix .

type:
	mypy

test:  ## what CI runs: everything but the slow learning tests and GPU tests (about 20 minutes on 2 vCPUs)
	pytest

test-slow:  ## learning tests and exhaustive env checks (tens of minutes)
	pytest -m slow

smoke:
	for f in experiments/*.py; do python -m rlsuite.run $$f --smoke || exit 1; done

bench:  ## lists the benchmarks and their commands: each takes minutes and wants a quiet machine
	cd scripts && python -m benchmarks
