"""`python -m benchmarks` from scripts/ (`make bench`): the benchmarks and their commands."""

from benchmarks.catalog import report

print(report())
