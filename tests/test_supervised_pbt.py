"""PBT of a supervised run: after an exploit the optimizer trains with the trial's new
learning rate and momentum, not the donor checkpoint's, and the check fails loudly if not."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
import torch

from rlsuite import metrics
from rlsuite.errors import PerturbationIgnoredError
from rlsuite.supervised import SupervisedConfig, optim
from tests.helpers import ROOT, run_cli

STEPS_PER_EPOCH = 10


def _trained(config: SupervisedConfig, steps: int = 3, steps_per_epoch: int = STEPS_PER_EPOCH):
    model = torch.nn.Linear(4, 2)
    optimizer = optim.build_optimizer(config, model.parameters())
    scheduler = optim.build_scheduler(config, optimizer, steps_per_epoch)
    for _ in range(steps):
        model(torch.randn(8, 4)).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
        scheduler.step()
    return model, optimizer, scheduler


def test_restored_optimizer_takes_the_new_trials_values() -> None:
    donor = SupervisedConfig(lr=0.1, momentum=0.9, weight_decay=5e-4, epochs=4)
    _, donor_optimizer, donor_scheduler = _trained(donor)
    perturbed = donor.replace(lr=0.02, momentum=0.8)
    model, optimizer, scheduler = _trained(perturbed, steps=0)
    optimizer.load_state_dict(donor_optimizer.state_dict())
    scheduler.load_state_dict(donor_scheduler.state_dict())
    step = scheduler.last_epoch
    # What a plain restore leaves: the donor's values, which the check refuses.
    with pytest.raises(PerturbationIgnoredError, match=r"lr=.* \(config .*\).*momentum=0\.9"):
        optim.check_follows_config(perturbed, optimizer, step, STEPS_PER_EPOCH)
    optim.apply_config(perturbed, optimizer, scheduler)
    optim.check_follows_config(perturbed, optimizer, step, STEPS_PER_EPOCH)
    expected = 0.02 * optim.lr_factor(perturbed, step, STEPS_PER_EPOCH)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(expected)
    assert optimizer.param_groups[0]["momentum"] == 0.8
    model(torch.randn(8, 4)).sum().backward()
    optimizer.step()
    scheduler.step()  # the schedule continues from the new peak
    next_lr = 0.02 * optim.lr_factor(perturbed, step + 1, STEPS_PER_EPOCH)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(next_lr)


def test_schedule_warms_up_then_decays() -> None:
    config = SupervisedConfig(epochs=10, warmup_epochs=2, lr_schedule="cosine")
    assert optim.lr_factor(config, 0, STEPS_PER_EPOCH) == pytest.approx(optim.WARMUP_START)
    assert optim.lr_factor(config, 2 * STEPS_PER_EPOCH, STEPS_PER_EPOCH) == pytest.approx(1.0)
    middle = optim.lr_factor(config, 6 * STEPS_PER_EPOCH, STEPS_PER_EPOCH)
    assert middle == pytest.approx(0.5 * (1 + math.cos(math.pi * 0.5)))
    assert optim.lr_factor(config, 10 * STEPS_PER_EPOCH, STEPS_PER_EPOCH) == pytest.approx(0.0)
    linear = config.replace(lr_schedule="linear", warmup_epochs=0.0)
    assert optim.lr_factor(linear, 5 * STEPS_PER_EPOCH, STEPS_PER_EPOCH) == pytest.approx(0.5)


def test_adamw_momentum_is_beta1() -> None:
    config = SupervisedConfig(optimizer="adamw", lr=1e-3, momentum=0.85, weight_decay=0.01)
    _, optimizer, scheduler = _trained(config, steps=1)
    optim.check_follows_config(config, optimizer, scheduler.last_epoch, STEPS_PER_EPOCH)
    optimizer.param_groups[0]["betas"] = (0.9, 0.999)
    with pytest.raises(PerturbationIgnoredError, match=r"momentum=0\.9 \(config 0\.85\)"):
        optim.check_follows_config(config, optimizer, scheduler.last_epoch, STEPS_PER_EPOCH)


@pytest.mark.slow  # three rounds of Train runs (2 minutes on 2 vCPUs): the supervised PBT
# sweep end to end. In CI the loop's own check is tested above, a supervised trial's restore
# from its Tune checkpoint in test_supervised_runs.py, and exploits in test_cluster.py's PBT sweep.
def test_pbt_exploit_trains_with_the_perturbed_values(storage: Path) -> None:
    run = run_cli(
        ROOT / "experiments" / "pbt_resnet_cifar10.py",
        "--smoke",
        "--set",
        "epochs=3",
        "--stop",
        "training_iteration=3",
        storage=storage,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    exploits = 0
    for trial_dir in (storage / "pbt_resnet_cifar10").glob("train_driver_*"):
        rows = [json.loads(line) for line in (trial_dir / "result.json").read_text().splitlines()]
        for row in rows:  # a constant schedule: the optimizer's lr is the trial's lr
            assert row[metrics.TRAIN_LEARNING_RATE] == pytest.approx(row["config"]["lr"])
        for before, after in itertools.pairwise(rows):
            if after["config"]["lr"] != before["config"]["lr"]:
                exploits += 1
                assert after[metrics.EPOCH] <= before[metrics.EPOCH] + 1
        assert rows[-1][metrics.TRAINING_ITERATION] == 3
    assert exploits >= 1, "no PBT exploit happened"


def test_a_restore_resumes_the_schedule_at_the_checkpoints_epoch(tmp_path: Path) -> None:
    """A trial whose epochs take other steps than the checkpoint's (a PBT exploit from a
    trial of another batch size, an elastic restart on fewer workers) goes on at the
    checkpoint's epoch of its schedule, not at the checkpoint's step count."""
    import ray.train

    from rlsuite.supervised import checkpoint, registry
    from rlsuite.supervised.training_state import Run

    config = SupervisedConfig(lr=0.1, epochs=10, warmup_epochs=0.0, lr_schedule="cosine")

    def run(steps_per_epoch: int, steps: int) -> Run:
        model, optimizer, scheduler = _trained(config, steps, steps_per_epoch)
        splits = registry.Splits(train=None, validation=None)
        cpu = torch.device("cpu")
        return Run(config, model, optimizer, scheduler, splits, None, None, steps_per_epoch, cpu)  # type: ignore[arg-type]

    donor = run(steps_per_epoch=4, steps=8)  # 2 epochs of 4 steps
    checkpoint.save(tmp_path, donor, epoch=2)
    halved = run(steps_per_epoch=2, steps=0)  # twice the batch: 2 steps an epoch
    assert checkpoint.restore(ray.train.Checkpoint.from_directory(tmp_path), halved) == 2
    assert halved.scheduler.last_epoch == 4
    expected = 0.1 * optim.lr_factor(config, 2, steps_per_epoch=1)  # epoch 2 of 10
    assert halved.optimizer.param_groups[0]["lr"] == pytest.approx(expected)
