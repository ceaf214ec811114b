"""What the benchmark table reads from an experiment file without importing it: its stop
criteria and its trial count, from the `experiment = Experiment(...)` call's source.

Importing an experiment file builds RLlib objects (seconds of RLlib and torch); the
table's `--list`, its refusals and its page are written without Ray, so they read the
file's syntax tree instead. Names in `stop` and `num_samples` resolve to the file's own
module-level constants (`MAX_EPOCHS = 4`).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from benchmarks.common import EXPERIMENTS

# The `--stop` short names (rlsuite.metrics.BY_NAME) of metric constants whose own names
# are longer; every other constant's short name is its name in lower case.
SHORT_NAMES = {"ENV_STEPS_SAMPLED_LIFETIME": "env_steps"}


def experiment_path(stem: str) -> Path:
    return EXPERIMENTS / f"{stem}.py"


@cache
def _call(stem: str) -> tuple[dict[str, ast.expr], dict[str, ast.expr]]:
    """The keywords of the file's `experiment = Experiment(...)` call, and its
    module-level constants; ValueError for a file without that call."""
    tree = ast.parse(experiment_path(stem).read_text())
    constants: dict[str, ast.expr] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        if target.id == "experiment" and isinstance(node.value, ast.Call):
            keywords = {k.arg: k.value for k in node.value.keywords if k.arg}
            return keywords, constants
        constants[target.id] = node.value
    raise ValueError(f"{stem}.py has no `experiment = Experiment(...)`")


def stop(stem: str) -> tuple[str, ...]:
    """The file's stop criteria as `--stop` values: ("episode_return_mean=450", ...)."""
    keywords, constants = _call(stem)
    criteria = keywords.get("stop")
    if not isinstance(criteria, ast.Dict):
        raise ValueError(f"{stem}.py: its stop is not a {{metric: value}} literal")
    return tuple(
        f"{_metric_name(key)}={_value(value, constants)}"
        for key, value in zip(criteria.keys, criteria.values, strict=True)
        if key is not None
    )


def num_samples(stem: str) -> int:
    """Trials the file samples (Experiment's default: 1)."""
    keywords, constants = _call(stem)
    count = keywords.get("num_samples")
    return 1 if count is None else int(_value(count, constants))


def _metric_name(key: ast.expr) -> str:
    """`metrics.EPISODE_RETURN_MEAN` -> `episode_return_mean`."""
    name = key.attr if isinstance(key, ast.Attribute) else ast.unparse(key)
    return SHORT_NAMES.get(name, name.lower())


def _value(node: ast.expr, constants: dict[str, ast.expr]) -> int | float:
    if isinstance(node, ast.Name) and node.id in constants:
        node = constants[node.id]
    value = ast.literal_eval(node)
    if not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {ast.unparse(node)}")
    return value
