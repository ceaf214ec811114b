"""How large a supervised trial is: its elastic range of Train workers, what one trial
reserves, how many run side by side, and a trial too large for this machine, refused in one
line that names a supervised run's own flags."""

from __future__ import annotations

from pathlib import Path

import pytest
from ray import tune

from rlsuite.experiment import Experiment
from rlsuite.supervised import SupervisedConfig
from rlsuite.supervised.trainable import scaling_config
from rlsuite.supervised.workload import SupervisedWorkload
from tests.helpers import ROOT, assert_rejected, run_main


@pytest.mark.parametrize(
    ("sets", "needles"),
    [
        (("max_workers=1", "num_workers=2"), ("max_workers 1 is below num_workers 2",)),
        (("num_workers=0",), ("num_workers must be at least 1",)),
    ],
)
def test_bad_elastic_range(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    sets: tuple[str, ...],
    needles: tuple[str, ...],
) -> None:
    storage = tmp_path / "results"
    flags = [arg for assignment in sets for arg in ("--set", assignment)]
    code = run_main(ROOT / "experiments" / "resnet_cifar10.py", "--smoke", *flags, storage=storage)
    assert_rejected(capsys, code, storage, *needles)


def test_elastic_range_reaches_ray_train() -> None:

    elastic = scaling_config(SupervisedConfig(num_workers=1, max_workers=4))
    assert elastic.num_workers == (1, 4)
    assert scaling_config(SupervisedConfig(num_workers=2)).num_workers == 2


def test_supervised_trial_process_holds_no_cpu_an_elastic_run_could_count() -> None:
    """Train's elastic policy (Ray 2.60) sizes a worker group by each node's total CPUs:
    a trial process holding even 0.01 CPU made an elastic run with max_workers=2 on a
    2-CPU node ask for a group of 2 that could never be placed, and wait for ever."""

    workload = SupervisedWorkload()
    experiment = Experiment(config=SupervisedConfig(num_workers=1, max_workers=2), stop={})
    request = workload.trainable(experiment)._resources  # what tune.with_resources set
    assert all(bundle.get("CPU", 0) == 0 for bundle in request.bundles), request.bundles
    assert workload.trial_resources(experiment)["CPU"] == 1, "the Train workers' only"


def test_elastic_trials_run_side_by_side_only_as_many_as_fit_at_their_largest() -> None:

    workload, cluster = SupervisedWorkload(), {"CPU": 8.0, "memory": 1e10}

    def concurrent(config: SupervisedConfig) -> int | None:
        return workload.max_concurrent_trials(Experiment(config=config, stop={}), cluster)

    assert concurrent(SupervisedConfig(num_workers=2)) == 4
    assert concurrent(SupervisedConfig(num_workers=1, max_workers=4)) == 2
    assert concurrent(SupervisedConfig(num_workers=2, max_workers=2, cpus_per_worker=2)) == 2
    searched = {"max_workers": tune.choice([2, 4]), "cpus_per_worker": tune.grid_search([1, 2])}
    sweep = Experiment(config=SupervisedConfig(num_workers=1), stop={}, search=searched)
    assert workload.max_concurrent_trials(sweep, cluster) == 1, "4 workers of 2 CPUs each"
    # Ray Data reads in tasks of a CPU beside the workers: a sweep leaves one CPU free.
    assert concurrent(SupervisedConfig(num_workers=2, dataset="imagefolder")) == 3


def test_supervised_trial_that_cannot_fit_this_machine_names_its_own_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fix names the flags that size a supervised trial, not --num-env-runners (which
    a supervised run refuses): 64 Train workers of a CPU each."""
    storage = tmp_path / "results"
    experiment = ROOT / "experiments" / "resnet_cifar10.py"
    sets = ("--set", "use_gpu=false", "--set", "dataset=synthetic_images")
    code = run_main(experiment, "--num-learners", "64", *sets, storage=storage)
    needles = ("one trial needs 64 CPUs", "lower --num-learners, --num-cpus-per-learner")
    assert "--num-env-runners" not in assert_rejected(capsys, code, storage, *needles)
