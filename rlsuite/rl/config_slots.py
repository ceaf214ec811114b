"""Where a `--set` value goes in an RLlib config (`rlsuite.rl.overrides`): the builder
parameter or dataclass field, what it holds now, whether None may replace it, and the
classes its annotation names."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import numbers
import types
import typing
from collections.abc import Callable, Iterator
from typing import Any

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig


@dataclasses.dataclass(frozen=True)
class Slot:
    """Where a value goes: what is there now, whether None may go there, and the classes
    its annotation names. `open`: it takes more than those classes tell (`Any`, a name
    only type checkers see); an env's own dict keys are open with no classes."""

    current: Any
    none_ok: bool
    classes: tuple[type, ...] = ()
    open: bool = True

    def names(self, value: Any) -> bool:
        """Whether the annotation names `value`'s class: a bool is an int to isinstance,
        never to RLlib, and NaN (from rlsuite.launch) no float: it passes every check."""
        if (isinstance(value, bool) and bool not in self.classes) or is_nan(value):
            return False
        return bool(self.classes) and isinstance(value, self.classes)

    def accepts(self, value: Any) -> bool:
        return self.open or self.names(value)


def builder_methods(config: AlgorithmConfig, group: str) -> Iterator[Callable[..., Any]]:
    """Builder method `group` on the config's class and each base that defines it, most
    derived first (PPOConfig.training takes PPO's own settings and forwards the rest to
    AlgorithmConfig.training through **kwargs)."""
    for cls in type(config).__mro__:
        method = cls.__dict__.get(group)
        if method is not None:
            yield method


def params(config: AlgorithmConfig, group: str) -> list[str]:
    names: dict[str, None] = {}
    for method in builder_methods(config, group):
        for name, p in inspect.signature(method).parameters.items():
            keyword = p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
            if keyword and name[0] != "_" and name != "self":
                names[name] = None
    return list(names)


def builder_slot(config: AlgorithmConfig, group: str, key: str) -> Slot:
    current = current_value(config, key)
    none_ok = current is None or default_value(type(config), key) is None
    for method in builder_methods(config, group):
        parameter = inspect.signature(method).parameters.get(key)
        if parameter is not None:
            classes, open_ = classes_of(parameter.annotation, getattr(method, "__globals__", {}))
            return Slot(current, none_ok, classes, open_)
    return Slot(current, none_ok)


def current_value(config: AlgorithmConfig, key: str) -> Any:
    """What the config holds for `key`: for a setting RLlib keeps behind a property
    (`learner_class`, `rl_module_spec`, `is_atari`), the stored value, whose None means
    "the algorithm's default", not the default the property works out from it."""
    if isinstance(getattr(type(config), key, None), property) and hasattr(config, f"_{key}"):
        return getattr(config, f"_{key}")
    if key == "model_config":
        return config._model_config
    try:
        return getattr(config, key, None)
    except ValueError:  # a deprecated setting: the builder names its successor
        return None


@functools.cache
def default_value(cls: type[AlgorithmConfig], key: str) -> Any:
    """RLlib's default of `key` for config class `cls` (`...` where it cannot tell)."""
    try:
        return current_value(cls(), key)
    except Exception:  # a class that takes arguments, a property that fails on defaults
        return ...


def classes_of(annotation: Any, namespace: dict[str, Any]) -> tuple[tuple[type, ...], bool]:
    """The classes `annotation` names (`List[int]` as list, Optional's None left out),
    and whether it is open (Any, a Literal, a name only type checkers import)."""
    if annotation is inspect.Parameter.empty:
        return (), True
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    classes: list[type] = []
    open_ = False
    for option in typing.get_args(annotation) if union else (annotation,):
        if isinstance(option, typing.ForwardRef):  # RLlib's "AlgorithmConfig"
            option = namespace.get(option.__forward_arg__, option)
        origin = typing.get_origin(option) or option
        if origin is typing.Any or not isinstance(origin, type):
            open_ = True
        elif origin is not type(None):
            classes.append(origin)
    return tuple(classes), open_


def field_slot(obj: Any, field: dataclasses.Field[Any]) -> Slot:
    current = getattr(obj, field.name)
    factory = field.default_factory
    default = field.default if factory is dataclasses.MISSING else factory()  # MISSING: not None
    try:
        hint = typing.get_type_hints(type(obj)).get(field.name, inspect.Parameter.empty)
    except Exception:  # a name only type checkers import: the field is open
        hint = inspect.Parameter.empty
    return Slot(current, current is None or default is None, *classes_of(hint, {}))


def is_nan(value: Any) -> bool:
    return isinstance(value, numbers.Real) and value != value
