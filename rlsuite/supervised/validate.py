"""Checks of a supervised experiment before Ray starts (UsageError, one line, if wrong)."""

from __future__ import annotations

import dataclasses
import math
import os
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


READ_CPUS = 1
"""CPUs a Ray Data read or map task takes (Ray Data's default), beside the Train workers."""


def check_room_for_reads(config: SupervisedConfig, address: str | None) -> None:
    """Ray Data's reads beside the Train workers on this machine, before Ray starts; a
    cluster's CPUs are known only once Ray has joined it (the workload's `check_cluster`)."""
    if not address:
        check_reads_fit(config, os.cpu_count() or 1, "this machine's")


def check_reads_fit(
    config: SupervisedConfig,
    cpus: float,
    where: Literal["this machine's", "the cluster's"],
    searched: Mapping[str, Any] | None = None,
    sweep: str = "search",
) -> None:
    """A Ray Data set is read in tasks of a CPU each beside the Train workers: where the
    workers reserve every one of the `cpus` the read never starts, and the run waits
    without an end (2 workers of 1 CPU on 2 CPUs did, 2026-11-30). An elastic run counts
    at `max_workers`, which it grows to. `searched`: the scaling keys `sweep` (the search,
    PBT's mutations) sets, at their largest, which `config` holds, for a fix that names
    them (no --set can change them)."""
    if not registry.dataset_entry(config.dataset).ray_data:
        return
    workers = config.max_workers or config.num_workers
    if cpus - workers * config.cpus_per_worker >= READ_CPUS:
        return
    fits = (cpus - READ_CPUS) / workers
    prefix = ""
    if where == "this machine's":
        # One CPU in all: no worker leaves the read one, whatever it is set to.
        free = f"leave one free (--set cpus_per_worker={fits:g}) or " if fits > 0 else ""
        fix = f"{free}join a cluster with --address"
    elif searched:
        values = ", ".join(f"{key}={_short(value)}" for key, value in searched.items())
        prefix = f"{sweep} at its largest ({values}): "
        fix = f"leave one free (lower {', '.join(searched)} there) or add nodes to the cluster"
    elif fits > 0:
        fix = (
            f"leave one free (--set cpus_per_worker={fits:g}, or fewer workers) or add nodes "
            "to the cluster"
        )
    else:  # a cluster of one CPU: no worker leaves one free
        fix = "add nodes to the cluster"
    raise UsageError(
        f"{prefix}{config.dataset} is read by Ray Data in tasks of {READ_CPUS} CPU beside the "
        f"Train workers, and {workers} worker(s) of {config.cpus_per_worker:g} CPU take "
        f"all {cpus:g} of {where}; {fix}"
    )


def check_a_node_keeps_a_cpu(config: SupervisedConfig, nodes: list[dict[str, float]]) -> None:
    """Ray Data's read task takes a whole CPU of one node. Workers of part CPUs can leave
    the cluster that much in all but only part of one on each node (2 nodes of 2 CPUs, 2
    workers of 1.5: 1 CPU free in all, 0.5 a node), and the read waits without an end.
    Refused only where every placement of the workers leaves each node short: the most a
    node `m` can keep free is with the other nodes as full as they can be."""
    if not registry.dataset_entry(config.dataset).ray_data:
        return
    workers, each = config.max_workers or config.num_workers, config.cpus_per_worker
    room = [_workers_held(node, config) for node in nodes]
    if sum(room) < workers:
        return  # the workers cannot all be placed: the trial's own checks say so
    for node, held in zip(nodes, room, strict=True):
        on_it = max(0, workers - (sum(room) - held))
        if node.get("CPU", 0.0) - on_it * each + 1e-9 >= READ_CPUS:
            return
    sizes = ", ".join(f"{node.get('CPU', 0.0):g}" for node in nodes)
    raise UsageError(
        f"{config.dataset} is read by Ray Data in tasks of {READ_CPUS} CPU on one node, and "
        f"however {workers} worker(s) of {each:g} CPU are placed on the cluster's nodes "
        f"({sizes} CPUs), none keeps a whole CPU free; give each worker whole CPUs "
        "(cpus_per_worker), use fewer workers, or add nodes to the cluster"
    )


def _workers_held(node: dict[str, float], config: SupervisedConfig) -> int:
    """How many of `config`'s Train workers `node` can hold."""
    held = math.floor(node.get("CPU", 0.0) / config.cpus_per_worker + 1e-9)
    if config.use_gpu:
        held = min(held, math.floor(node.get("GPU", 0.0) + 1e-9))
    return held


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


def _short(value: Any) -> str:
    """A float as a message shows it: a range's end below its bound, 1.9999999999999998, as 2."""
    return f"{value:g}" if isinstance(value, float) else repr(value)
