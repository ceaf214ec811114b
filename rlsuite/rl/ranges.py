"""Values RLlib would train on without complaint but that make no sense: refused before Ray
starts, whether they come from the file, `--set` or a search space.

RLlib's `validate()` takes `lr=-1` or `gamma=1.5` and trains until the stop criteria;
a search key that is no config key (`"lrr"`) is added to the trial's config and ignored.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Any, TypeGuard

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

from rlsuite.domains import candidates
from rlsuite.errors import UsageError
from rlsuite.flags import MAX_SEED

UNIT_INTERVAL = ("gamma", "lambda_", "tau")
"""Discounts and averaging rates: fractions in [0, 1]."""
COUNTS = {
    "num_env_runners": 0,
    "num_envs_per_env_runner": 1,
    "num_learners": 0,
    "num_gpus_per_learner": 0,
    "num_cpus_per_env_runner": 0,
    "num_cpus_per_learner": 0,
}
"""Scaling values and their least: the flags that set them refuse smaller ones, and so
must `--set` (RLlib would start Ray and fail in the trial, or, for some, start none)."""
AT_LEAST = {"num_cpus_for_main_process": 0, "evaluation_interval": 0, "minibatch_size": 1}
"""Other counts and their least (RLlib would fail in the trial, or Ray refuse a negative
resource once it runs); None, where RLlib takes it, stays "not set"."""
LAYER_SIZES = ("lstm_cell_size", "max_seq_len")
"""Model config sizes besides the `*_hiddens` lists and `conv_filters`."""
SCHEDULABLE_RATES = ("lr",)
"""Above 0, as a number or along a schedule `[[timestep, value], ...]`. A schedule may end
at 0 (annealing to zero, as CleanRL's PPO does)."""


def check_ranges(config: AlgorithmConfig, where: str = "") -> None:
    """UsageError naming the first value out of its range; `where` says where it came from."""
    framework = getattr(config, "framework_str", "torch")
    if framework != "torch":  # RLlib's validate() takes "jax" and fails building modules
        _refuse(
            f"framework must be 'torch' (the new API stack's RLModules), got {framework!r}", where
        )
    for name in SCHEDULABLE_RATES:
        _check_rate(name, getattr(config, name, None), where)
    for name in UNIT_INTERVAL:
        value = getattr(config, name, None)
        if _is_number(value) and not 0 <= value <= 1:
            _refuse(f"{name} must be in [0, 1], got {value}", where)
    clip = getattr(config, "clip_param", None)
    if _is_number(clip) and clip <= 0:
        _refuse(f"clip_param must be more than 0, got {clip}", where)
    grad_clip = getattr(config, "grad_clip", None)
    if _is_number(grad_clip) and not (math.isfinite(grad_clip) and grad_clip > 0):
        _refuse(f"grad_clip must be more than 0 (None: no clipping), got {grad_clip}", where)
    epochs = getattr(config, "num_epochs", None)
    if _is_number(epochs) and epochs < 1:
        _refuse(f"num_epochs must be at least 1, got {epochs}", where)
    _check_batches(config, where)
    _check_scaling(config, where)
    _check_layers(config, where)


def check_search(config: AlgorithmConfig, search: Mapping[str, Any]) -> None:
    """Every search key is a config key, and every value its domain can give fits the key's
    type and range (checked at a grid's values, a choice's categories, a range's ends)."""
    flat = config.to_dict()
    for key, domain in search.items():
        if key not in flat:
            close = difflib.get_close_matches(key, list(flat), n=2, cutoff=0.6)
            hint = (
                f"did you mean {' or '.join(close)}?" if close else "use flat config keys like lr"
            )
            raise UsageError(f"search: '{key}' is not a key of the RLlib config; {hint}")
        for value in candidates(domain):
            _check_type(key, value, flat[key])
            trial = config.copy(copy_frozen=False)
            trial.update_from_dict({key: value})
            check_ranges(trial, where=f"search {key}={value!r}")


def _check_rate(name: str, value: Any, where: str) -> None:
    if _is_number(value) and not (math.isfinite(value) and value > 0):
        _refuse(f"{name} must be a finite number more than 0, got {value}", where)
    if isinstance(value, list | tuple):
        rates = [pair[1] for pair in value if isinstance(pair, list | tuple) and len(pair) == 2]
        early = rates[:-1] if rates else []
        if any(_is_number(r) and r <= 0 for r in early) or (rates and rates[-1] < 0):
            _refuse(
                f"{name} schedule {value} has a rate <= 0 before its end (only the last "
                "point may be 0)",
                where,
            )


def _check_scaling(config: AlgorithmConfig, where: str) -> None:
    for name, least in {**COUNTS, **AT_LEAST}.items():
        value = getattr(config, name, None)
        if _is_number(value) and not (math.isfinite(value) and value >= least):
            _refuse(f"{name} must be at least {least}, got {value}", where)
    seed = config.seed
    if seed is not None and not (isinstance(seed, int) and 0 <= seed <= MAX_SEED):
        _refuse(f"seed must be a whole number from 0 to {MAX_SEED:,}, got {seed!r}", where)


def _check_layers(config: AlgorithmConfig, where: str) -> None:
    """Layer widths, filter counts and sizes are whole numbers of at least 1: torch fails
    on a negative width deep in the module's build, and a 0 in RLlib's index arithmetic."""
    model = getattr(config, "model_config", None)
    if not isinstance(model, Mapping):
        return
    for key, value in model.items():
        if key.endswith("_hiddens") or key == "conv_filters":
            sizes = _flat(value) if isinstance(value, list | tuple) else []
        elif key in LAYER_SIZES:
            sizes = [value] if value is not None else []
        else:
            continue
        # Strings are conv_filters' paddings ("valid"); RLlib judges other kinds.
        if any(_is_number(size) and not (isinstance(size, int) and size >= 1) for size in sizes):
            _refuse(
                f"rl_module.model_config {key}={value!r}: sizes must be whole numbers of at "
                "least 1",
                where,
            )


def _flat(values: list | tuple) -> list:
    return [
        v
        for value in values
        for v in (_flat(value) if isinstance(value, list | tuple) else [value])
    ]


def _check_batches(config: AlgorithmConfig, where: str) -> None:
    batch = config.train_batch_size_per_learner
    minibatch = getattr(config, "minibatch_size", None)
    if _is_number(minibatch) and _is_number(batch) and minibatch > batch:
        _refuse(
            f"minibatch_size {minibatch} is larger than train_batch_size_per_learner "
            f"{batch}; lower it or raise the train batch",
            where,
        )
    buffer = getattr(config, "replay_buffer_config", None)
    capacity = buffer.get("capacity") if isinstance(buffer, Mapping) else None
    if _is_number(capacity) and _is_number(batch) and capacity < batch:
        _refuse(
            f"the replay buffer holds {capacity} steps, fewer than a train batch of {batch}; "
            "raise replay_buffer_config capacity",
            where,
        )


def _check_type(key: str, value: Any, current: Any) -> None:
    if current is None or value is None:
        return
    if isinstance(current, bool) or isinstance(value, bool):
        ok = isinstance(current, bool) == isinstance(value, bool)
    elif isinstance(current, int | float):
        ok = _is_number(value) or (key in SCHEDULABLE_RATES and isinstance(value, list))
        ok = ok and not (isinstance(current, int) and isinstance(value, float) and key != "lr")
    elif isinstance(current, str):
        ok = isinstance(value, str)
    else:
        ok = True
    if not ok:
        raise UsageError(
            f"search: '{key}' takes values like {current!r} ({type(current).__name__}), "
            f"but its domain gives {value!r}"
        )


def _refuse(message: str, where: str) -> None:
    source = f" ({where})" if where else " (fix it with --set or in the experiment file)"
    raise UsageError(message + source)


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
