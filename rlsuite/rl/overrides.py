"""`--set group.key[.sub]=VALUE`: typed edits of an RLlib `AlgorithmConfig`.

`group` is one of AlgorithmConfig's builder methods (`training`, `env_runners`, ...) and
`key` one of its parameters, so `--set training.lr=1e-4` is `config.training(lr=1e-4)`.
Deeper segments edit a dict (`environment.env_config.frameskip=2`) or the model config
(`rl_module.model_config.fcnet_hiddens=[64,64]`). Values are Python literals, checked
against the type of the value they replace.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import typing
from collections.abc import Iterator, Mapping
from typing import Any

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite.errors import UsageError
from rlsuite.flags import parse_assignment, parse_literal

GROUPS = (
    "environment",
    "env_runners",
    "learners",
    "training",
    "evaluation",
    "rl_module",
    "debugging",
    "fault_tolerance",
    "resources",
    "reporting",
    "checkpointing",
    "framework",
    "multi_agent",
)

SCHEDULABLE = ("lr", "entropy_coeff")
"""Settings RLlib takes as a float or a schedule `[[timestep, value], ...]`
(`ray.rllib.utils.schedules.scheduler.Scheduler`): either form replaces the other."""


def apply_sets(config: AlgorithmConfig, assignments: list[str]) -> AlgorithmConfig:
    """A copy of `config` with every `PATH=VALUE` applied, in order."""
    config = config.copy(copy_frozen=False)
    for text in assignments:
        path, raw = parse_assignment(text)
        apply_set(config, path, raw)
    return config


def apply_set(config: AlgorithmConfig, path: str, raw: str) -> None:
    group, key, rest = _split(config, path)
    current = _current(config, key)
    if rest:
        value = _nested(current, rest, raw, path)
    else:
        value = parse_literal(raw)
        # A default of another type than RLlib also takes: num_gpus_per_env_runner=0 that
        # runners share as 0.05, rollout_fragment_length="auto" or 3. The builder's
        # annotation says which types it takes.
        if key in SCHEDULABLE or type(value) not in _annotated_types(config, group, key):
            value = coerce(value, current, path)
    try:
        getattr(config, group)(**{key: value})
    except (ValueError, TypeError) as error:  # RLlib's own check of the value, in one line
        raise UsageError(f"--set {path}: {str(error).splitlines()[0]}") from None


def _annotated_types(config: AlgorithmConfig, group: str, key: str) -> tuple[Any, ...]:
    """The plain types `group`'s builder annotates `key` with (int and str for
    `Union[int, str, None]`), () where it names none."""
    for parameters in _builder_signatures(config, group):
        if key in parameters:
            annotation = parameters[key].annotation
            options = typing.get_args(annotation) or (annotation,)
            return tuple(t for t in options if t in (bool, int, float, str))
    return ()


def _builder_signatures(
    config: AlgorithmConfig, group: str
) -> Iterator[Mapping[str, inspect.Parameter]]:
    """The parameters of builder method `group` on the config's class and each base that
    defines it, most derived first."""
    for cls in type(config).__mro__:
        method = cls.__dict__.get(group)
        if method is not None:
            yield inspect.signature(method).parameters


def coerce(value: Any, current: Any, path: str) -> Any:
    """`value` as the type of `current`, or UsageError; None replaces or is replaced freely."""
    if current is None or value is None:
        return value
    if path.rsplit(".", 1)[-1] in SCHEDULABLE:
        return _float_or_schedule(value, current, path)
    expected = type(current)
    if isinstance(current, bool):
        ok = isinstance(value, bool)
    elif isinstance(current, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(current, float):
        ok = _is_number(value)
        value = float(value) if ok else value
    elif isinstance(current, str):
        ok, value = True, str(value)
    elif isinstance(current, list | tuple):
        ok = isinstance(value, list | tuple)
    elif isinstance(current, dict):
        ok = isinstance(value, dict)
    else:
        ok = True  # objects (classes, callables) cannot be typed on a command line: trust it
    if not ok:
        raise UsageError(
            f"--set {path}: expects {_type_name(expected)} like {current!r}, got {value!r}"
        )
    return value


def _float_or_schedule(value: Any, current: Any, path: str) -> Any:
    if _is_number(value):
        return float(value)
    if isinstance(value, list | tuple) and value:
        pairs = [p for p in value if isinstance(p, list | tuple) and len(p) == 2]
        if len(pairs) == len(value) and all(_is_number(x) for p in pairs for x in p):
            steps = [p[0] for p in pairs]
            if steps[0] == 0 and steps == sorted(steps):
                return [[int(step), float(v)] for step, v in pairs]
    raise UsageError(
        f"--set {path}: expects a float or a schedule [[0, value], [timestep, value], ...] "
        f"(timesteps from 0, increasing) like {current!r}, got {value!r}"
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _split(config: AlgorithmConfig, path: str) -> tuple[str, str, list[str]]:
    parts = path.split(".")
    if len(parts) < 2:
        owners = [g for g in GROUPS if parts[0] in _params(config, g)]
        hint = f"did you mean {owners[0]}.{parts[0]}?" if owners else "use GROUP.KEY"
        raise UsageError(f"--set {path}: not a config path; {hint}")
    group, key, *rest = parts
    if group not in GROUPS:
        raise UsageError(f"--set {path}: unknown group '{group}'; {_suggest(group, GROUPS)}")
    params = _params(config, group)
    if key not in params:
        owners = [g for g in GROUPS if key in _params(config, g)]
        hint = f"did you mean {owners[0]}.{key}?" if owners else _suggest(key, params)
        raise UsageError(f"--set {path}: '{group}' has no setting '{key}'; {hint}")
    return group, key, rest


def _params(config: AlgorithmConfig, group: str) -> list[str]:
    """Keyword parameters of `group` on the config class and its bases (PPOConfig.training
    takes PPO's own and forwards the rest to AlgorithmConfig.training through **kwargs)."""
    names: dict[str, None] = {}
    for parameters in _builder_signatures(config, group):
        for name, p in parameters.items():
            keyword = p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
            if keyword and name[0] != "_" and name != "self":
                names[name] = None
    return list(names)


def _current(config: AlgorithmConfig, key: str) -> Any:
    if key == "model_config":
        return config._model_config
    return getattr(config, key, None)


def _nested(current: Any, rest: list[str], raw: str, path: str) -> Any:
    """`current` with the item at `rest` set to `raw`, as a new dict or dataclass."""
    head, *tail = rest
    if isinstance(current, dict) and not current and path.startswith("rl_module.model_config"):
        current = DefaultModelConfig()
    if dataclasses.is_dataclass(current) and not isinstance(current, type):
        fields = [f.name for f in dataclasses.fields(current)]
        if head not in fields:
            raise UsageError(f"--set {path}: no field '{head}'; {_suggest(head, fields)}")
        old = getattr(current, head)
        new = _nested(old, tail, raw, path) if tail else coerce(parse_literal(raw), old, path)
        return dataclasses.replace(current, **{head: new})
    if isinstance(current, dict):
        old = current.get(head)
        new = _nested(old, tail, raw, path) if tail else coerce(parse_literal(raw), old, path)
        return {**current, head: new}
    raise UsageError(f"--set {path}: '{head}' is inside {_type_name(type(current))}, not a dict")


def _suggest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.5)
    if close:
        return f"did you mean {', '.join(close)}?"
    return f"choose one of {', '.join(sorted(choices)[:12])}"


def _type_name(kind: type) -> str:
    return {bool: "a bool", int: "an int", float: "a float", str: "a string"}.get(
        kind, f"a {kind.__name__}"
    )
