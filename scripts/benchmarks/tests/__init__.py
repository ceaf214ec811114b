"""Tests of the benchmark harness: its arithmetic on real result rows, its plain sides on
tiny real objects, and its scripts' command lines. Plain `pytest` runs them (testpaths)."""
