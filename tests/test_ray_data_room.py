"""Ray Data's reads run in tasks of a CPU beside the Train workers: where a trial's workers
take every CPU the reads never start, and the run waits without an end. On this machine
that is refused before Ray starts (the end-to-end refusal is in test_supervised_files.py);
a joined cluster's CPUs (`--address`), and how they split over its nodes, are known once
Ray has joined it, so `init_ray` asks the workload then (end to end on two nodes:
test_cluster.py). No Ray here: made-up nodes, and a stand-in for Ray in `init_ray`."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest
from ray import tune

from rlsuite.errors import UsageError
from rlsuite.experiment import PBT, Experiment
from rlsuite.launcher import cluster, ray_session
from rlsuite.supervised import SupervisedConfig, room, validate
from rlsuite.supervised.registry import dataset_entry
from rlsuite.supervised.workload import SupervisedWorkload

CLUSTER = {"CPU": 8.0, "memory": 1e10}
NODES = [CLUSTER]


def _check(
    config: SupervisedConfig,
    search: dict[str, Any] | None = None,
    nodes: list[dict[str, float]] = NODES,
) -> None:
    experiment = Experiment(config=config, stop={}, search=search or {})
    SupervisedWorkload().check_cluster(experiment, nodes)


def test_workers_that_take_every_cpu_of_the_cluster_are_refused() -> None:
    config = SupervisedConfig(dataset="imagefolder", num_workers=4, cpus_per_worker=2)
    with pytest.raises(UsageError) as refused:
        _check(config)
    message = str(refused.value)
    assert "imagefolder is read by Ray Data in tasks of 1 CPU" in message
    assert "4 worker(s) of 2 CPU take 8 of the cluster's 8 CPUs" in message
    assert "--set cpus_per_worker=1.75, or fewer workers) or add nodes" in message
    assert "--address" not in message, "already on a cluster"


def test_an_elastic_run_counts_at_the_max_workers_it_grows_to() -> None:
    with pytest.raises(UsageError, match="8 worker\\(s\\) of 1 CPU take 8 of the cluster's 8 CPUs"):
        _check(SupervisedConfig(dataset="imagefolder", num_workers=1, max_workers=8))


def test_workers_that_leave_one_cpu_free_pass() -> None:
    _check(SupervisedConfig(dataset="imagefolder", num_workers=7))
    _check(SupervisedConfig(dataset="imagefolder", num_workers=2, cpus_per_worker=3.5))


def test_a_data_set_the_workers_read_themselves_takes_every_cpu() -> None:
    config = SupervisedConfig(num_workers=8)
    assert not dataset_entry(config.dataset).ray_data, config.dataset
    _check(config)


def test_a_sweep_is_refused_by_its_largest_trial() -> None:
    """Every trial of a sweep must leave the reads a CPU: 4 workers of 2 CPUs is one."""
    config = SupervisedConfig(dataset="imagefolder", num_workers=1)
    search = {"max_workers": tune.choice([2, 4]), "cpus_per_worker": tune.grid_search([1, 2])}
    with pytest.raises(UsageError) as refused:
        _check(config, search)
    message = str(refused.value)
    assert message.startswith("search at its largest (max_workers=4, cpus_per_worker=2): ")
    assert "4 worker(s) of 2 CPU take 8 of the cluster's 8 CPUs" in message
    assert "lower max_workers, cpus_per_worker there" in message
    assert "--set" not in message, "the search would replace a --set of its keys"
    _check(config, {**search, "cpus_per_worker": tune.grid_search([1, 1.5])})


def test_pbt_mutations_count_as_the_sweep() -> None:
    """An exploit can move a trial to any of PBT's values, so its largest must fit too."""
    config = SupervisedConfig(dataset="imagefolder", num_workers=2, cpus_per_worker=2)
    pbt = PBT(hyperparam_mutations={"num_workers": [2, 4], "lr": [0.1]})
    experiment = Experiment(config=config, stop={}, scheduler=pbt)
    with pytest.raises(UsageError) as refused:
        SupervisedWorkload().check_cluster(experiment, NODES)
    message = str(refused.value)
    assert message.startswith("PBT at its largest (num_workers=4): ")
    assert "4 worker(s) of 2 CPU take 8 of the cluster's 8 CPUs" in message
    assert "lower num_workers there" in message
    search = {"cpus_per_worker": tune.choice([1, 2])}
    both = Experiment(config=config, stop={}, scheduler=pbt, search=search)
    with pytest.raises(UsageError, match=r"^search and PBT at its largest"):
        SupervisedWorkload().check_cluster(both, NODES)
    pbt = PBT(hyperparam_mutations={"num_workers": [1, 3]})
    SupervisedWorkload().check_cluster(Experiment(config=config, stop={}, scheduler=pbt), NODES)


@pytest.mark.parametrize(
    ("workers", "each", "nodes"),
    [
        (2, 1.5, [2.0, 2.0]),  # 1 CPU free in all, half of one on each node
        (3, 2.5, [3.0, 3.0, 3.0]),  # one a node, half a CPU left on each
        (2, 1.0, [1.5, 1.5]),  # fractional nodes (a Ray started with num_cpus=1.5)
    ],
)
def test_a_cpu_free_in_all_but_split_over_nodes_is_refused(
    workers: int, each: float, nodes: list[float]
) -> None:
    config = SupervisedConfig(dataset="imagefolder", num_workers=workers, cpus_per_worker=each)
    with pytest.raises(UsageError) as refused:
        _check(config, nodes=[{"CPU": cpus} for cpus in nodes])
    message = str(refused.value)
    sizes = ", ".join(f"{cpus:g}" for cpus in nodes)
    assert (
        f"however {workers} worker(s) of {each:g} CPU are placed on the cluster's nodes ({sizes} CPUs)"
        in message
    )
    assert message.endswith(
        "give each worker whole CPUs (cpus_per_worker), use fewer workers, or add nodes to the cluster"
    )


@pytest.mark.parametrize(
    ("workers", "each", "nodes", "gpus"),
    [
        (2, 1.5, [2.0, 4.0], None),  # both on the 4-CPU node, the 2-CPU node free
        (2, 1.0, [2.0, 2.0], None),  # whole CPUs: one node keeps one
        (1, 1.5, [2.0, 2.0], None),  # the other node is free
        (2, 1.5, [4.0, 2.0], [1.0, 1.0]),  # one GPU a node: one worker on each, 2.5 free
    ],
)
def test_a_node_that_can_keep_a_whole_cpu_passes(
    workers: int, each: float, nodes: list[float], gpus: list[float] | None
) -> None:
    config = SupervisedConfig(
        dataset="imagefolder", num_workers=workers, cpus_per_worker=each, use_gpu=bool(gpus)
    )
    _check(
        config,
        nodes=[
            {"CPU": c, "GPU": g} for c, g in zip(nodes, gpus or [0.0] * len(nodes), strict=True)
        ],
    )


def test_workers_that_no_placement_holds_are_refused() -> None:
    """5 workers of 1.2 CPU: 6 of the 8 CPUs in all, but a node of 2 holds one."""
    config = SupervisedConfig(num_workers=5, cpus_per_worker=1.2)
    with pytest.raises(UsageError) as refused:
        _check(config, nodes=[{"CPU": 2.0}] * 4)
    assert str(refused.value) == (
        "5 Train worker(s) of 1.2 CPU do not fit on the cluster's nodes (2, 2, 2, 2 CPUs), "
        "which hold 4; lower num_workers or cpus_per_worker, or add nodes to the cluster"
    )


def test_an_elastic_run_counts_at_the_size_the_nodes_let_it_grow_to() -> None:
    """Ray Train's elastic policy grows to what the nodes hold, up to max_workers: 4 of
    the 5 here, which leave each node 0.8 CPU (3.2 in all); 2 GPUs hold 2 of 8."""
    config = SupervisedConfig(
        dataset="imagefolder", num_workers=1, max_workers=5, cpus_per_worker=1.2
    )
    with pytest.raises(UsageError, match=r"however 4 worker\(s\) of 1\.2 CPU are placed"):
        _check(config, nodes=[{"CPU": 2.0}] * 4)
    gpus = SupervisedConfig(dataset="imagefolder", num_workers=1, max_workers=8, use_gpu=True)
    _check(gpus, nodes=[{"CPU": 8.0, "GPU": 2.0}])


def test_pbt_explores_scaling_keys_from_a_list_only() -> None:
    """Tune's PBT scales a range's values by 0.8 or 1.2 at every exploit, without bound."""
    pbt = PBT(hyperparam_mutations={"cpus_per_worker": tune.uniform(1, 2)})
    experiment = Experiment(config=SupervisedConfig(), stop={}, scheduler=pbt)
    with pytest.raises(UsageError) as refused:
        validate.check_experiment(experiment, None)
    assert str(refused.value).startswith("PBT hyperparam_mutations cpus_per_worker: PBT scales")
    assert str(refused.value).endswith("give cpus_per_worker a list of values")


def test_a_sweep_s_largest_is_what_it_can_draw() -> None:
    """`randint`'s upper bound is never drawn: 7 workers at most leave one CPU free."""
    _check(SupervisedConfig(dataset="imagefolder"), {"num_workers": tune.randint(1, 8)})
    with pytest.raises(UsageError, match="num_workers=8"):
        _check(SupervisedConfig(dataset="imagefolder"), {"num_workers": tune.randint(1, 9)})


class _Recording:
    """A workload that records what `init_ray` asks of the joined cluster."""

    worker_setup_hook = "rlsuite.supervised.worker_setup.pin_ray_address"
    scaling_flags = "--num-learners"

    def __init__(self) -> None:
        self.checked: list[list[dict[str, float]]] = []

    def trial_resources(self, experiment: Experiment) -> dict[str, float]:
        return {"CPU": 1.0}

    def trial_bundles(self, experiment: Experiment) -> list[dict[str, float]]:
        return [{"CPU": 1.0}]

    def check_cluster(self, experiment: Experiment, nodes: list[dict[str, float]]) -> None:
        self.checked.append(nodes)


@pytest.mark.parametrize(
    ("address", "users_ray", "checked"),
    [("10.0.0.5:6379", False, [NODES]), (None, False, []), (None, True, [NODES])],
)
def test_init_ray_asks_the_workload_once_it_has_joined_a_cluster(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    address: str | None,
    users_ray: bool,
    checked: list[list[dict[str, float]]],
) -> None:
    """Joined with --address, or on a Ray the user started (`ray.init(num_cpus=2)` may
    give fewer CPUs than the machine has): its resources go to the workload's check. On
    the suite's own local Ray the workload's `check` saw this machine's before Ray started,
    so it is not asked."""
    ray = types.SimpleNamespace(is_initialized=lambda: users_ray, cluster_resources=lambda: CLUSTER)
    monkeypatch.setattr(ray_session, "ray", ray)
    monkeypatch.setattr(ray_session, "_ours", lambda: None)
    monkeypatch.setattr(ray_session, "_start", lambda wanted: None)
    monkeypatch.setattr(cluster, "alive_nodes", lambda: [CLUSTER])
    monkeypatch.setattr(cluster, "check_shared_storage", lambda path: None)
    workload = _Recording()
    # The fields init_ray reads (the launcher's Launch imports RLlib, for nothing here).
    launch = types.SimpleNamespace(address=address, verbose=False, storage_path=tmp_path)
    experiment = Experiment(config=SupervisedConfig(), stop={})
    ray_session.init_ray(experiment, launch, workload)  # type: ignore[arg-type]
    assert workload.checked == checked


def test_a_machine_of_one_cpu_has_none_for_ray_data_beside_a_worker() -> None:
    """No setting of the workers leaves the read a CPU on a 1-CPU machine: the fix is a
    cluster, not `--set num_workers=1`, which the message once gave and which still waits."""
    config = SupervisedConfig(dataset="imagefolder", num_workers=1)
    with pytest.raises(UsageError) as refused:
        room.check_reads_fit(config, 1, "this machine's")
    assert str(refused.value).endswith(
        "take 1 of this machine's 1 CPU; join a cluster with --address"
    )
