"""The benchmark harness behind `scripts/bench*.py`: one module per benchmark, each with
`measure(...) -> Result` (`common.Result`: `.report()` and `.to_json()`), and their tests.

Not part of the library: it runs the repository's experiment files and the suite as a
user does, each side in a fresh process. `python -m benchmarks` (run from `scripts/`,
which is what `make bench` does) lists the benchmarks and their commands.
"""
