"""Every experiment file runs with --smoke: a new experiment is tested without a new test."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.rl_module.rl_module import RLModule
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import envs
from rlsuite import metrics
from rlsuite.loader import load_experiment
from tests.conftest import EXPERIMENTS, run_cli

TENSORBOARD_PREFIX = "ray/tune/"


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_smoke_run_trains_checkpoints_and_logs(path: Path, storage: Path) -> None:
    run = run_cli(path, "--smoke", storage=storage)
    assert run.returncode == 0, run.stderr[-3000:]
    trials = run.summary(path.stem)["trials"]
    assert trials and all(t["status"] == "OK" for t in trials)
    for trial in trials:
        trial_dir = storage / path.stem / trial["trial"]
        progress = pd.read_csv(trial_dir / "progress.csv")
        assert list(progress[metrics.TRAINING_ITERATION]) == [1, 2]
        steps = progress[metrics.ENV_STEPS_SAMPLED_LIFETIME]
        assert steps.iloc[0] > 0 and steps.iloc[1] > steps.iloc[0]
        assert trial["checkpoint"] and Path(trial["checkpoint"]).is_dir()
        _assert_module_restores(Path(trial["checkpoint"]), path)
        tags = _tensorboard_scalars(trial_dir)
        assert TENSORBOARD_PREFIX + metrics.EPISODE_RETURN_MEAN in tags
        assert TENSORBOARD_PREFIX + metrics.ENV_STEPS_SAMPLED_LIFETIME in tags


def _assert_module_restores(checkpoint: Path, experiment_file: Path) -> None:
    """The trained RLModule loads with RLlib's own API and acts on a real observation."""
    import torch

    module_dir = checkpoint / "learner_group" / "learner" / "rl_module" / DEFAULT_MODULE_ID
    module = RLModule.from_checkpoint(module_dir)
    env = envs.make(load_experiment(experiment_file).config.env)
    observation, _ = env.reset(seed=0)
    batch = {"obs": torch.as_tensor(observation[None], dtype=torch.float32)}
    output = module.forward_inference(batch)
    assert output, "the restored module produced no output"
    env.close()


def _tensorboard_scalars(trial_dir: Path) -> set[str]:
    events = list(trial_dir.glob("events.out.tfevents.*"))
    assert events, f"no TensorBoard event file in {trial_dir}"
    accumulator = EventAccumulator(str(events[0]))
    accumulator.Reload()
    return set(accumulator.Tags()["scalars"])
