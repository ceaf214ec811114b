"""A process's later `rlsuite.launch` and the Ray an earlier one left up (ray_session.py):
kept where it serves the run, restarted where the suite started it and the run needs other
settings, a Ray the user started kept and checked; the cluster checks run every time.

Before, a second launch took the first one's Ray as it was: one needing more CPUs than it
had waited forever with its trials PENDING, one with another `address` ran on the old
cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlsuite.launcher.ray_session import RaySetup
from tests.helpers import ROOT, run_script

RL = "rlsuite.launcher.warmup.import_rllib"
SUPERVISED = "rlsuite.supervised.worker_setup.pin_ray_address"
LOCAL = RaySetup(address=None, setup_hook=RL, log_to_driver=False, num_cpus=4)


def test_the_suites_ray_serves_a_run_that_asks_for_no_more() -> None:
    assert LOCAL.serves(LOCAL)
    assert LOCAL.serves(RaySetup(None, RL, log_to_driver=False, num_cpus=2))
    cluster = RaySetup("10.0.0.5:6379", RL, log_to_driver=False)
    assert cluster.serves(cluster)


@pytest.mark.parametrize(
    "wanted",
    [
        RaySetup(None, RL, log_to_driver=False, num_cpus=6),
        RaySetup("10.0.0.5:6379", RL, log_to_driver=False),
        RaySetup(None, SUPERVISED, log_to_driver=False, num_cpus=4),
        RaySetup(None, RL, log_to_driver=True, num_cpus=4),
    ],
    ids=["more CPUs", "a cluster", "another setup hook", "verbose"],
)
def test_a_run_that_asks_for_other_settings_is_not_served(wanted: RaySetup) -> None:
    assert not LOCAL.serves(wanted)


SCRIPT = """
import dataclasses, sys
from pathlib import Path
import ray
from rlsuite.errors import UsageError
from rlsuite.launcher import ray_session
from rlsuite.launcher.loader import load_experiment
from rlsuite.launcher.tuner import Launch
from rlsuite.launcher.workloads import workload_for

experiment = load_experiment(Path(sys.argv[1]))
launch = Launch(name="ray_session", storage_path=Path(sys.argv[2]))
workload = workload_for(experiment.config)
ray_session.init_ray(experiment, launch, workload)
first = ray.cluster_resources()["CPU"]
runners = experiment.config.copy(copy_frozen=False).env_runners(num_env_runners=int(first) + 1)
more = dataclasses.replace(experiment, config=runners)
ray_session.init_ray(more, launch, workload)
print("cpus", int(first), int(ray.cluster_resources()["CPU"]), flush=True)
ray_session.shutdown()
ray.init(address="local", num_cpus=1, include_dashboard=False)  # the user's own
for needs, address in ((more, None), (experiment, "127.0.0.1:1")):
    try:
        ray_session.init_ray(needs, dataclasses.replace(launch, address=address), workload)
    except UsageError as error:
        print("refused:", error, flush=True)
print("the user's Ray still up:", ray.is_initialized(), flush=True)
"""


def test_a_later_run_restarts_the_suites_ray_and_checks_the_users(tmp_path: Path) -> None:
    """One process, as a notebook's launches: the suite's Ray restarted with the CPUs a run
    needs; a Ray the user started is checked and never restarted."""
    done = run_script(SCRIPT, ROOT / "experiments" / "ppo_cartpole.py", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    first, second = (int(n) for n in lines[0].split()[1:])
    assert second == first + 2  # the main process and first + 1 env runners
    assert lines[1].startswith("refused: one trial needs more than the cluster has: ")
    assert "(cluster has 1)" in lines[1]
    assert lines[2].startswith("refused: address='127.0.0.1:1': this process is already ")
    assert "call ray.shutdown() first" in lines[2]
    assert lines[3] == "the user's Ray still up: True"


USERS_SMALL_RAY = """
import sys
import ray
import rlsuite
from rlsuite.errors import UsageError
ray.init(address="local", num_cpus=1, include_dashboard=False)  # the user's, smaller
sets = ["dataset=imagefolder", f"data_path={sys.argv[2]}", "num_classes=2", "use_gpu=false"]
try:
    rlsuite.launch(sys.argv[1], overrides=sets, smoke=True, storage_path=sys.argv[3])
except UsageError as error:
    print("refused:", error, flush=True)
print("the user's Ray still up:", ray.is_initialized(), flush=True)
"""


def test_a_users_smaller_ray_is_checked_for_ray_data_reads(tmp_path: Path) -> None:
    """This machine's CPUs leave the read one beside the smoke run's worker of half a
    CPU, the user's 1-CPU Ray does not: the run waited for the read without an end."""
    from tests.supervised_data import write_imagefolder

    images = write_imagefolder(tmp_path / "images", classes=2, per_class=2)
    experiment = ROOT / "experiments" / "resnet50_imagenet.py"
    done = run_script(USERS_SMALL_RAY, experiment, images, tmp_path / "results")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "refused: imagefolder is read by Ray Data in tasks of 1 CPU beside the Train workers, "
        "and 1 worker(s) of 0.5 CPU take 0.5 of the cluster's 1 CPU; add nodes to the cluster"
    ), lines
    assert lines[1] == "the user's Ray still up: True"
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.json"))
