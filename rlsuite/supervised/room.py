"""Room on the machine or the cluster for a supervised run's Train workers and, beside
them, Ray Data's reads: a read task takes a whole CPU of one node, and where the workers
leave none (in all, or on every node) the run waits without an end. Checked before Ray
starts on this machine, and once Ray is up on a cluster or on a Ray the user started
(`SupervisedWorkload.check_cluster`)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any, Literal

from rlsuite.errors import UsageError
from rlsuite.supervised import registry
from rlsuite.supervised.config import SupervisedConfig

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
        f"{workers * config.cpus_per_worker:g} of {where} {cpus:g} CPU{'' if cpus == 1 else 's'}; {fix}"
    )


def workers_placed(config: SupervisedConfig, nodes: list[dict[str, float]]) -> SupervisedConfig:
    """`config` at the size it runs at on `nodes`: an elastic run grows to as many workers
    as the nodes hold, up to `max_workers` (Ray Train's elastic scaling policy)."""
    if config.max_workers is None:
        return config
    room = sum(_workers_held(node, config) for node in nodes)
    grown = max(config.num_workers, min(config.max_workers, room))
    return config.replace(num_workers=grown, max_workers=None)


def check_workers_placed(config: SupervisedConfig, nodes: list[dict[str, float]]) -> None:
    """A run's workers (an elastic run's minimum) must fit on the nodes one by one: the
    totals can suffice where each node holds fewer (5 workers of 1.2 CPU on 4 nodes of 2),
    and Train would wait for the rest without an end."""
    room = sum(_workers_held(node, config) for node in nodes)
    if room >= config.num_workers:
        return
    each = f"{config.cpus_per_worker:g} CPU" + (" and 1 GPU" if config.use_gpu else "")
    raise UsageError(
        f"{config.num_workers} Train worker(s) of {each} do not fit on the cluster's nodes "
        f"({_sizes(nodes)} CPUs), which hold {room}; lower num_workers or cpus_per_worker, "
        "or add nodes to the cluster"
    )


def check_a_node_keeps_a_cpu(config: SupervisedConfig, nodes: list[dict[str, float]]) -> None:
    """Ray Data's read task takes a whole CPU of one node. Workers of part CPUs can leave
    the cluster that much in all but only part of one on each node (2 nodes of 2 CPUs, 2
    workers of 1.5: 1 CPU free in all, 0.5 a node), and the read waits without an end.
    Refused only where every placement of the workers leaves each node short: the most a
    node can keep free is with the other nodes as full as they can be. `config` as
    `workers_placed` gives it, after `check_workers_placed`."""
    if not registry.dataset_entry(config.dataset).ray_data:
        return
    workers, each = config.num_workers, config.cpus_per_worker
    room = [_workers_held(node, config) for node in nodes]
    for node, held in zip(nodes, room, strict=True):
        on_it = max(0, workers - (sum(room) - held))
        if node.get("CPU", 0.0) - on_it * each + 1e-9 >= READ_CPUS:
            return
    raise UsageError(
        f"{config.dataset} is read by Ray Data in tasks of {READ_CPUS} CPU on one node, and "
        f"however {workers} worker(s) of {each:g} CPU are placed on the cluster's nodes "
        f"({_sizes(nodes)} CPUs), none keeps a whole CPU free; give each worker whole CPUs "
        "(cpus_per_worker), use fewer workers, or add nodes to the cluster"
    )


def _workers_held(node: dict[str, float], config: SupervisedConfig) -> int:
    """How many of `config`'s Train workers `node` can hold."""
    held = math.floor(node.get("CPU", 0.0) / config.cpus_per_worker + 1e-9)
    if config.use_gpu:
        held = min(held, math.floor(node.get("GPU", 0.0) + 1e-9))
    return held


def _sizes(nodes: list[dict[str, float]]) -> str:
    return ", ".join(f"{node.get('CPU', 0.0):g}" for node in nodes)


def _short(value: Any) -> str:
    """A float as a message shows it: a range's end below its bound, 1.9999999999999998, as 2."""
    return f"{value:g}" if isinstance(value, float) else repr(value)
