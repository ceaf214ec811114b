"""`--set group.key[.sub]=VALUE`: typed edits of an RLlib `AlgorithmConfig`.

`group` is one of AlgorithmConfig's builder methods (`training`, `env_runners`, ...) and
`key` one of its parameters, so `--set training.lr=1e-4` is `config.training(lr=1e-4)`.
Deeper segments edit a dict (`environment.env_config.frameskip=2`) or the model config
(`rl_module.model_config.fcnet_hiddens=[64,64]`). Values are Python literals (from
`rlsuite.launch`, any Python object), checked against the value they replace and against
the builder's (or the model config field's) annotation. None only replaces where RLlib's
own default is None: elsewhere RLlib fails on it in the trial, or in the builder.
"""

from __future__ import annotations

import dataclasses
import difflib
import numbers
from collections.abc import Sequence
from typing import Any

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from rlsuite.errors import UsageError
from rlsuite.flags import parse_assignment, parse_literal
from rlsuite.rl.config_slots import (
    Slot,
    builder_slot,
    field_slot,
    is_nan,
    params,
)

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

PLAIN = (bool, int, float, str)
LITERAL = (*PLAIN, list, tuple, dict)


def apply_sets(config: AlgorithmConfig, assignments: Sequence[str]) -> AlgorithmConfig:
    """A copy of `config` with every `PATH=VALUE` applied, in order."""
    config = config.copy(copy_frozen=False)
    for text in assignments:
        path, raw = parse_assignment(text)
        apply_set(config, path, parse_literal(raw))
    return config


def apply_set(config: AlgorithmConfig, path: str, value: Any) -> None:
    group, key, rest = _split(config, path)
    slot = builder_slot(config, group, key)
    if rest:
        value = _nested(slot, rest, value, path, f"{group}.{key}")
    # The builder's annotation names what RLlib also takes besides the default's type:
    # num_gpus_per_env_runner=0 that runners share as 0.05, rollout_fragment_length=3.
    elif key in SCHEDULABLE or type(value) not in PLAIN or not slot.names(value):
        value = coerce(value, slot, path)
    try:
        getattr(config, group)(**{key: value})
    # RLlib's own checks of the value (some are asserts), in one line.
    except (ValueError, TypeError, AttributeError, AssertionError) as error:
        raise UsageError(f"--set {path}: {str(error).splitlines()[0]}") from None


def coerce(value: Any, slot: Slot, path: str) -> Any:
    """`value` as the type of what it replaces (or one its annotation names), or UsageError."""
    if value is None and slot.none_ok:
        return None
    if path.rsplit(".", 1)[-1] in SCHEDULABLE:
        return _float_or_schedule(value, slot.current, path)
    ok = False
    if value is not None and not is_nan(value):
        if slot.current is None:
            # A number or string setting: RLlib's builder and the suite's range checks
            # judge it (a seed that is no whole number is refused there, naming the bound).
            ok = slot.accepts(value) or any(kind in PLAIN for kind in slot.classes)
        else:
            ok, value = _as_type_of(slot.current, value, slot)
    if not ok:
        got = "not None" if value is None else f"got {value!r}"
        raise UsageError(f"--set {path}: expects {_expected(slot)}, {got}")
    return value


def _as_type_of(current: Any, value: Any, slot: Slot) -> tuple[bool, Any]:
    if slot.names(value):
        return True, value
    if isinstance(current, bool):
        return isinstance(value, bool), value
    if isinstance(current, int):
        return (True, int(value)) if _is_whole(value) else (False, value)
    if isinstance(current, float):
        return (True, float(value)) if _is_number(value) else (False, value)
    if isinstance(current, str):
        if isinstance(value, LITERAL):
            return True, str(value)  # the command line's text, read as a literal
        return slot.accepts(value), value
    if isinstance(current, list | tuple | dict):
        kinds = dict if isinstance(current, dict) else (list, tuple)
        return isinstance(value, kinds), value
    # An object (a class, a callable, a model config): another of its kind or what the
    # annotation names; a string only where RLlib takes one.
    return isinstance(value, type(current)) or slot.accepts(value), value


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
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not is_nan(value)


def _is_whole(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _expected(slot: Slot) -> str:
    kinds = slot.classes or ((type(slot.current),) if slot.current is not None else ())
    names = " or ".join(_type_name(kind) for kind in kinds) or "a value"
    return f"{names} like {slot.current!r}" if isinstance(slot.current, LITERAL) else names


def _split(config: AlgorithmConfig, path: str) -> tuple[str, str, list[str]]:
    parts = path.split(".")
    if len(parts) < 2:
        owners = [g for g in GROUPS if parts[0] in params(config, g)]
        hint = f"did you mean {owners[0]}.{parts[0]}?" if owners else "use GROUP.KEY"
        raise UsageError(f"--set {path}: not a config path; {hint}")
    group, key, *rest = parts
    if group not in GROUPS:
        raise UsageError(f"--set {path}: unknown group '{group}'; {_suggest(group, GROUPS)}")
    settings = params(config, group)
    if key not in settings:
        owners = [g for g in GROUPS if key in params(config, g)]
        hint = f"did you mean {owners[0]}.{key}?" if owners else _suggest(key, settings)
        raise UsageError(f"--set {path}: '{group}' has no setting '{key}'; {hint}")
    return group, key, rest


def _nested(slot: Slot, rest: list[str], value: Any, path: str, prefix: str) -> Any:
    """What `slot` holds with the item at `rest` set to `value`, as a new dict or
    dataclass; a dict setting that is None by default (evaluation_config) starts empty."""
    head, *tail = rest
    current = slot.current
    if isinstance(current, dict) and not current and prefix == "rl_module.model_config":
        current = DefaultModelConfig()
    if current is None and (dict in slot.classes or (not slot.classes and slot.open)):
        current = {}
    if dataclasses.is_dataclass(current) and not isinstance(current, type):
        fields = {f.name: f for f in dataclasses.fields(current)}
        if head not in fields:
            raise UsageError(f"--set {path}: no field '{head}'; {_suggest(head, list(fields))}")
        inner = field_slot(current, fields[head])
    elif isinstance(current, dict):
        inner = Slot(current.get(head), none_ok=True)  # an env's own keys: untyped
    elif current is None:
        raise UsageError(
            f"--set {path}: {prefix} is None and takes {_expected(slot)}, not a dict; "
            f"set it whole: --set {prefix}=VALUE"
        )
    else:
        raise UsageError(
            f"--set {path}: '{head}' is inside {_type_name(type(current))}, not a dict"
        )
    here = f"{prefix}.{head}"
    new = _nested(inner, tail, value, path, here) if tail else coerce(value, inner, path)
    if isinstance(current, dict):
        return {**current, head: new}
    return dataclasses.replace(current, **{head: new})


def _suggest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.5)
    if close:
        return f"did you mean {', '.join(close)}?"
    return f"choose one of {', '.join(sorted(choices)[:12])}"


def _type_name(kind: type) -> str:
    article = "an" if kind.__name__[0] in "aeiouAEIOU" else "a"
    return {bool: "a bool", int: "an int", float: "a float", str: "a string"}.get(
        kind, f"{article} {kind.__name__}"
    )
