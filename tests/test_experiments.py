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
        config = load_experiment(path).config
        if config.is_multi_agent:  # team return above, and one return per policy
            for module_id in config.policies:
                assert TENSORBOARD_PREFIX + metrics.policy_return_mean(module_id) in tags


def _assert_module_restores(checkpoint: Path, experiment_file: Path) -> None:
    """Every trained RLModule loads with RLlib's own API and acts on a real observation:
    `default_policy` on the env's observation, or in a multi-agent run each module on
    the observations of the agents its experiment maps to it."""
    config = load_experiment(experiment_file).config
    modules_dir = checkpoint / "learner_group" / "learner" / "rl_module"
    env = envs.make(config.env)
    observations, _ = env.reset(seed=0)
    if not config.is_multi_agent:
        observations = {DEFAULT_MODULE_ID: observations}
    by_module: dict[str, list] = {}
    for agent, observation in observations.items():
        module_id = config.policy_mapping_fn(agent, None) if config.is_multi_agent else agent
        by_module.setdefault(module_id, []).append(observation)
    saved = {path.name for path in modules_dir.iterdir() if path.is_dir()}
    assert saved == set(config.policies), f"checkpoint holds {saved}, config {set(config.policies)}"
    assert set(by_module) <= saved
    for module_id, batch in by_module.items():
        _assert_acts(RLModule.from_checkpoint(modules_dir / module_id), batch)
    env.close()


def _assert_acts(module: RLModule, observations: list) -> None:
    import numpy as np
    import torch

    batch = {"obs": torch.as_tensor(np.stack(observations), dtype=torch.float32)}
    output = module.forward_inference(batch)
    assert output, "the restored module produced no output"


def _tensorboard_scalars(trial_dir: Path) -> set[str]:
    events = list(trial_dir.glob("events.out.tfevents.*"))
    assert events, f"no TensorBoard event file in {trial_dir}"
    accumulator = EventAccumulator(str(events[0]))
    accumulator.Reload()
    return set(accumulator.Tags()["scalars"])
