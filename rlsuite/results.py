"""Reading what Tune left in a results directory: trial folders, result lines, keys.

The one place that knows Tune's files (`params.json`, `result.json`, `error.txt`) and the suite's
`/`-separated metric keys, for evaluation, reports, self-play and the benchmarks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ERROR_FILE = "error.txt"
"""What Tune writes into a trial's folder when the trial fails: its traceback."""

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
"""The memory address in a default repr ("<function f at 0x7f...>"), as params.json keeps
a function such as RLlib's default policy_mapping_fn: each process that writes the file
(a trial resumed, seeds run apart) gives the same object another address."""


def trial_dirs(experiment_dir: Path) -> list[Path]:
    """Trial directories of an experiment: those with Tune's params.json."""
    return sorted(p for p in experiment_dir.iterdir() if (p / "params.json").exists())


def read_results(path: Path) -> list[dict[str, Any]]:
    """Tune's result.json: one JSON result per line; a line cut short by a crash, or
    otherwise damaged (nested past Python's recursion limit), is skipped."""
    if not path.exists():
        return []
    results = []
    for line in path.read_text().splitlines():
        try:
            results.append(json.loads(line))
        except (json.JSONDecodeError, RecursionError):
            continue
    return results


def lookup(result: Mapping[str, Any], key: str) -> Any:
    """A `/`-separated metric key (`env_runners/episode_return_mean`) in a nested result,
    or as one flat key (supervised results hold "validation/accuracy"); None where it is
    missing."""
    if key in result:
        return result[key]
    value: Any = result
    for part in key.split("/"):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file; None when it is missing, unreadable, not UTF-8 (damaged) or
    not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # ValueError: bad JSON and bytes that are not UTF-8
        return None
    return data if isinstance(data, dict) else None
