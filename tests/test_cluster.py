"""A two-node Ray cluster on this machine (`ray start --head` plus a second `ray start
--address` with its own resources): runs join it, spread over both nodes (PBT's exploits
across them), keep token authentication on, and are refused when they cannot fit."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Barrier

import pytest

from rlsuite.errors import UsageError
from rlsuite.launcher import cluster as launcher_cluster
from rlsuite.launcher.cluster import (
    check_bundles_fit,
    check_resources,
    check_shared_storage,
    ensure_auth_token,
    filesystem_type,
)
from rlsuite.rl.workload import RLWorkload
from rlsuite.serving.command import check_checkpoint_shared
from rlsuite.supervised.workload import SupervisedWorkload
from rlsuite.workload import Workload
from tests.helpers import ROOT, TOKEN_ENV, run_cli
from tests.pbt_checks import check_ppo_exploits
from tests.ray_nodes import two_node_cluster
from tests.supervised_data import write_imagefolder


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, str]]:
    """Two nodes of one CPU each, with a custom resource each."""
    head = ["--resources", '{"head_node": 1}']
    second = ["--resources", '{"second_node": 1}']
    with two_node_cluster(1, 1, head, second) as nodes:
        yield {"address": nodes.address, "dashboard": nodes.dashboard}


def _client(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )


def test_pbt_sweep_spreads_over_both_nodes_and_exploits(
    cluster: dict[str, str], storage: Path
) -> None:
    """pbt_ppo_cartpole.py's smoke sweep: its two trials on the two nodes, and after the
    exploit (a checkpoint restored on the other node) the learner trains with the trial's
    perturbed values (tests/pbt_checks.py; the sweep's only run in CI)."""
    run = run_cli(
        ROOT / "experiments" / "pbt_ppo_cartpole.py",
        "--smoke",
        "--address",
        cluster["address"],
        storage=storage,
        env=TOKEN_ENV,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(run.summary("pbt_ppo_cartpole")["trials"]) == 2
    assert list((storage / "pbt_ppo_cartpole").glob("PPO_*/checkpoint_*"))
    nodes = _client(
        "import json, ray\n"
        "from ray.util.state import list_actors\n"
        f"ray.init(address={cluster['address']!r})\n"
        # The state API needs the address too: without it, it looks for Ray processes on
        # this machine, and other tests' may be running.
        f"actors = list_actors(address={cluster['address']!r}, "
        "filters=[('class_name', '=', 'PPO')], detail=True, limit=100)\n"
        "print(json.dumps(sorted({a.node_id for a in actors})))\n",
        TOKEN_ENV,
    )
    assert nodes.returncode == 0, nodes.stderr[-2000:]
    assert len(json.loads(nodes.stdout.strip().splitlines()[-1])) == 2, (
        "trials ran on one node only"
    )
    check_ppo_exploits(storage / "pbt_ppo_cartpole", storage / "report")


def test_token_authentication_stays_on(cluster: dict[str, str], storage: Path) -> None:
    """A client without the token is turned away before Ray starts (ray.init retried it for
    20 s), and the launcher says how to fix it."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    env.pop("RAY_AUTH_TOKEN", None)
    run = run_cli(
        ROOT / "experiments" / "ppo_cartpole.py",
        "--address",
        cluster["address"],
        storage=storage,
        env=env,
    )
    assert run.returncode == 2
    (line,) = run.stderr.strip().splitlines()
    assert "the cluster refused this client's token" in line, line
    assert "export RAY_AUTH_MODE=token" in line, line


GPU_LEARNER = ("--num-gpus-per-learner", "1")


@pytest.mark.parametrize(
    ("flags", "needles"),
    [
        # Each resource the cluster lacks, named in one line (one run for both, CI time).
        (
            (*("--num-env-runners", "1", "--num-cpus-per-env-runner", "4"), *GPU_LEARNER),
            (
                "one trial needs more than the cluster has: 5 CPU (cluster has 2)",
                "1 GPU (cluster has 0)",
            ),
        ),
        # Two CPUs for the trial's main process: the cluster has two, one on each node, so
        # its placement group could never be placed and the trial waited without an end.
        (
            ("--set", "resources.num_cpus_for_main_process=2"),
            ("one actor of a trial needs 2 CPU on one node", "(the largest: 1 CPU)"),
        ),
    ],
)
def test_a_trial_the_cluster_cannot_hold(
    cluster: dict[str, str], storage: Path, flags: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    experiment = ROOT / "experiments" / "ppo_cartpole.py"
    address = ("--address", cluster["address"])
    run = run_cli(experiment, "--smoke", *address, *flags, storage=storage, env=TOKEN_ENV)
    assert run.returncode == 2, run.stderr[-2000:]
    error = run.stderr.strip().splitlines()[-1]
    assert all(needle in error for needle in needles), error
    assert not storage.exists()


def test_ray_data_reads_need_a_cpu_the_workers_leave_free(
    cluster: dict[str, str], storage: Path, tmp_path: Path
) -> None:
    """An image folder is read by Ray Data in tasks of a CPU beside the Train workers: two
    workers of one CPU on this cluster of two would leave the reads none, and the run would
    wait without an end. Refused once Ray has joined, before any trial."""
    root = write_imagefolder(tmp_path / "images", classes=2, per_class=1)
    sets = [f"data_path={root}", "num_classes=2", "use_gpu=false", "num_workers=2"]
    sets.append("cpus_per_worker=1")
    flags = [arg for value in sets for arg in ("--set", value)]
    address = ("--address", cluster["address"])
    experiment = ROOT / "experiments" / "resnet50_imagenet.py"
    run = run_cli(experiment, *address, *flags, storage=storage, env=TOKEN_ENV)
    assert run.returncode == 2, run.stderr[-2000:]
    error = run.stderr.strip().splitlines()[-1]
    needles = ("read by Ray Data in tasks of 1 CPU", "take 2 of the cluster's 2 CPUs", "add nodes")
    assert all(needle in error for needle in needles), error
    assert not storage.exists()


def test_check_bundles_fit_names_the_actor_and_the_largest_node() -> None:
    nodes = [{"CPU": 8.0, "GPU": 1.0}, {"CPU": 16.0, "GPU": 1.0}]
    check_bundles_fit([{"CPU": 1.0}, {"CPU": 1.0, "GPU": 1.0}, {"CPU": 16.0}], nodes)
    with pytest.raises(UsageError, match=r"needs 1 CPU, 2 GPU on one node.*largest: 16 CPU, 1 GPU"):
        check_bundles_fit([{"CPU": 1.0}, {"CPU": 1.0, "GPU": 2.0}], nodes)


@pytest.mark.parametrize("workload", [RLWorkload(), SupervisedWorkload()], ids=["rl", "supervised"])
def test_check_resources_names_every_missing_resource(workload: Workload) -> None:
    """The fix names the flags that size this kind of trial: a supervised run refuses
    --num-env-runners, which the message once named for every run."""
    flags = workload.scaling_flags
    with pytest.raises(UsageError, match=r"8 CPU \(cluster has 4\), 2 GPU \(cluster has 0\)") as no:
        check_resources({"CPU": 8, "GPU": 2, "memory": 1}, {"CPU": 4, "memory": 10}, flags)
    assert str(no.value).endswith(f"; lower {flags} or add nodes")
    assert ("--num-env-runners" in flags) == isinstance(workload, RLWorkload)
    check_resources({"CPU": 4}, {"CPU": 4}, flags)


def test_filesystem_type_of_a_local_path(tmp_path: Path) -> None:
    assert filesystem_type(tmp_path / "not" / "yet") not in (None, "nfs", "nfs4")


def test_auth_token_is_written_once_and_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs that start at once on a new machine agree on one token: the first to publish
    it wins, the rest read it (Ray's own writer would let a later run overwrite it)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(variable, raising=False)
    token_file = tmp_path / ".ray" / "auth_token"
    start = Barrier(8)

    def start_a_run(_: int) -> str:
        start.wait()
        ensure_auth_token()
        return token_file.read_text()  # the token this run's Ray would start with

    for _ in range(5):  # a lost race shows only now and then: try it a few times
        token_file.unlink(missing_ok=True)
        with ThreadPoolExecutor(8) as pool:
            seen = set(pool.map(start_a_run, range(8)))
        token = token_file.read_text()
        assert seen == {token}
    assert re.fullmatch(r"[0-9a-f]{64}", token), token
    assert [p.name for p in token_file.parent.iterdir()] == ["auth_token"]  # no drafts left
    ensure_auth_token()
    assert token_file.read_text() == token  # an existing token is kept

    token_file.unlink()
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    ensure_auth_token()
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", "from-the-environment")
    ensure_auth_token()
    assert not token_file.exists()  # no file where Ray reads no file


def test_local_disk_is_refused_on_a_cluster_of_several_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Results (the launcher's --storage-path) and a served checkpoint must be on storage
    every host reaches; nodes of one host share its disk. Two hosts are faked: the test
    cluster runs on one machine."""
    nodes = [
        {"NodeManagerAddress": "10.0.0.1", "Alive": True},
        {"NodeManagerAddress": "10.0.0.2", "Alive": True},
    ]
    monkeypatch.setattr(launcher_cluster.ray, "nodes", lambda: nodes)
    monkeypatch.setattr(launcher_cluster, "filesystem_type", lambda path: "ext4")
    local = f"{tmp_path} is on this machine's ext4 disk but the cluster spans 2 hosts"
    with pytest.raises(UsageError, match=re.escape(f"--storage-path {local}; use a file system")):
        check_shared_storage(str(tmp_path))
    with pytest.raises(UsageError, match=re.escape(f"checkpoint {local}, where the replicas")):
        check_checkpoint_shared(tmp_path)

    nodes[1]["Alive"] = False  # a dead node's host is no longer part of the cluster
    check_shared_storage(str(tmp_path))
    check_checkpoint_shared(tmp_path)

    nodes[1]["Alive"] = True
    monkeypatch.setattr(launcher_cluster, "filesystem_type", lambda path: "nfs4")
    check_shared_storage(str(tmp_path))
    check_checkpoint_shared(tmp_path)
