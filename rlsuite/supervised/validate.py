"""Checks of a supervised experiment before Ray starts (UsageError, one line, if wrong)."""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from rlsuite import metrics
from rlsuite.domains import candidates, mutation_domains
from rlsuite.errors import UsageError
from rlsuite.experiment import PB2, PBT, Experiment
from rlsuite.flags import MAX_SEED
from rlsuite.supervised import registry
from rlsuite.supervised.config import SupervisedConfig, field_names
from rlsuite.supervised.room import check_room_for_reads

# Settings that must be at least 1 (counts and sizes) or above 0.
AT_LEAST_ONE = (
    "epochs",
    "batch_size",
    "grad_accum_steps",
    "num_workers",
    "image_size",
    "max_seq_length",
    "synthetic_train_size",
    "synthetic_val_size",
)
ABOVE_ZERO = ("lr", "cpus_per_worker")
NOT_NEGATIVE = ("momentum", "weight_decay", "warmup_epochs", "label_smoothing", "loader_workers")
# Result keys a supervised trial reports, to rank and stop by.
RESULT_KEYS = (*metrics.SUPERVISED_METRICS, metrics.TRAINING_ITERATION, metrics.TIME_TOTAL_S)


def check_experiment(experiment: Experiment, address: str | None) -> None:
    config = experiment.config
    assert isinstance(config, SupervisedConfig)
    check_config(config)
    _check_keys("search", experiment.search)
    scheduler = experiment.scheduler
    if isinstance(scheduler, PBT):
        _check_keys("PBT hyperparam_mutations", scheduler.hyperparam_mutations)
        _check_scaling_mutations(scheduler)
    if isinstance(scheduler, PB2):
        _check_keys("PB2 hyperparam_bounds", scheduler.hyperparam_bounds)
    for key in [experiment.metric, *experiment.stop]:
        if key not in RESULT_KEYS:
            raise UsageError(
                f"'{key}' is not a supervised result; use one of {', '.join(RESULT_KEYS)} "
                "(rlsuite.metrics.VALIDATION_ACCURACY, ...)"
            )
    for key in (metrics.TRAIN_LOSS, metrics.VALIDATION_LOSS):
        if key in experiment.stop:
            # Tune stops a trial once a result reaches the value from below (>=).
            raise UsageError(
                f"stop {metrics.short_name(key)}: Tune stops a trial once the result is at or above the value, so "
                "a loss stop would end it when its loss rises to the value, not when it falls "
                "to it; stop on validation_accuracy, epoch or time_total_s"
            )
    check_gpus(config, address)
    _check_values("search", config, experiment.search, address)
    _check_values(type(scheduler).__name__, config, mutation_domains(scheduler), address)
    registry.check_data(config)
    check_room_for_reads(config, address)  # after the data's own problems, which come first


SCALING_KEYS = ("num_workers", "max_workers", "cpus_per_worker", "use_gpu")


def _check_scaling_mutations(scheduler: PBT) -> None:
    """Tune's PBT explores a range (a Tune domain) by scaling the value by 0.8 or 1.2 at
    each exploit, without a bound, so a trial's workers could outgrow any cluster; a list
    of values keeps it to them."""
    for key, value in scheduler.hyperparam_mutations.items():
        if key in SCALING_KEYS and not isinstance(value, list | tuple):
            raise UsageError(
                f"PBT hyperparam_mutations {key}: PBT scales a range's values by 0.8 or 1.2 "
                f"at each exploit, without a bound, so the workers could outgrow the cluster; "
                f"give {key} a list of values"
            )


def _check_values(
    where: str, config: SupervisedConfig, space: Mapping[str, Any], address: str | None
) -> None:
    """Every value a searched or explored key can take makes a config that runs: Tune
    draws them inside the trials, where a bad one fails its trial, or trains something
    else without a word (an optimizer name that is not one)."""
    for key, domain in space.items():
        for value in candidates(domain):
            try:
                trial = config.replace(**{key: value})
                check_config(trial)
                check_gpus(trial, address)
                check_room_for_reads(trial, address)
            except UsageError as error:
                reason = str(error).split("; fix it with --set")[0]  # the fix is the search's
                raise UsageError(f"{where} {key}={value!r}: {reason}; change it there") from None


def check_config(config: SupervisedConfig) -> None:
    hints = typing.get_type_hints(SupervisedConfig)
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        _check_type(field.name, value, hints[field.name])
        if isinstance(value, float) and not math.isfinite(value):  # 1e999 parses as inf
            raise UsageError(f"{field.name} must be a finite number, got {value}")
    for name in AT_LEAST_ONE:
        if getattr(config, name) < 1:
            raise UsageError(f"{name} must be at least 1, got {getattr(config, name)}")
    for name in ABOVE_ZERO:
        if getattr(config, name) <= 0:
            raise UsageError(f"{name} must be more than 0, got {getattr(config, name)}")
    for name in NOT_NEGATIVE:
        if getattr(config, name) < 0:
            raise UsageError(f"{name} must be 0 or more, got {getattr(config, name)}")
    # torch refuses these inside the trial: AdamW's beta1 (momentum here) below 1, label
    # smoothing up to 1. SGD takes momentum 1 or more, whose steps never decay.
    if config.momentum >= 1:
        raise UsageError(f"momentum must be below 1, got {config.momentum}")
    if config.label_smoothing > 1:
        raise UsageError(f"label_smoothing must be 1 or less, got {config.label_smoothing}")
    if not 0 <= config.seed <= MAX_SEED:  # Ray Data's shuffle and torch refuse others
        raise UsageError(f"seed must be a whole number from 0 to {MAX_SEED:,}, got {config.seed}")
    if config.num_classes < 2:
        raise UsageError(f"num_classes must be at least 2, got {config.num_classes}")
    if config.max_workers is not None and config.max_workers < config.num_workers:
        raise UsageError(
            f"max_workers {config.max_workers} is below num_workers {config.num_workers} (the "
            "elastic minimum); set max_workers to at least num_workers, or None for a fixed size"
        )
    most = config.max_workers or config.num_workers
    if config.batch_size < most:
        raise UsageError(
            f"batch_size {config.batch_size} is global, split over up to {most} workers; "
            f"set batch_size to at least {most}"
        )


def check_gpus(config: SupervisedConfig, address: str | None) -> None:
    """Without a cluster, every Train worker's GPU must exist on this machine."""
    if address or not config.use_gpu:
        return
    import torch

    available = torch.cuda.device_count()
    if config.num_workers > available:
        raise UsageError(
            f"use_gpu with {config.num_workers} worker(s) needs {config.num_workers} GPU(s) but "
            f"this machine has {available}; --set use_gpu=false, lower num_workers, or join a "
            "GPU cluster with --address"
        )


def _check_keys(what: str, keys: Iterable[str]) -> None:
    for key in keys:
        if key not in field_names():
            raise UsageError(
                f"{what}: '{key}' is not a SupervisedConfig field; use fields like lr, momentum, batch_size"
            )


def _check_type(name: str, value: Any, hint: Any) -> None:
    """`value` fits the field's annotation (bool, int, float, str, Literal, X | None)."""
    options = typing.get_args(hint) if typing.get_origin(hint) is not Literal else (hint,)
    options = options or (hint,)
    for option in options:
        if option is type(None) and value is None:
            return
        if typing.get_origin(option) is Literal and value in typing.get_args(option):
            return
        if option is float and isinstance(value, int | float) and not isinstance(value, bool):
            return
        if option in (int, str, bool) and type(value) is option:
            return
    choices = [a for o in options if typing.get_origin(o) is Literal for a in typing.get_args(o)]
    expected = f"one of {', '.join(map(str, choices))}" if choices else _names(options)
    raise UsageError(f"{name} must be {expected}, got {value!r}; fix it with --set {name}=...")


def _names(options: tuple[Any, ...]) -> str:
    names = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}
    return " or ".join(names.get(o, "none" if o is type(None) else str(o)) for o in options)
