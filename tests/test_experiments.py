"""Every RL experiment file runs with --smoke: a new experiment is tested without a new
test (supervised ones: test_experiments_supervised.py). Files whose smoke run repeats
what others' do are `slow` (tests/smoke_matrix.py's SMOKE_COVERED_BY, each with the reason).

The runs join one Ray started for this file (`--address`, conftest's `ray_cluster`)
rather than each starting its own: 15 s instead of 24 s a run on 2 vCPUs. The Ray a run
starts by itself is what every other CLI test runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from rlsuite import envs, metrics
from rlsuite.evaluate import main as evaluate_main
from rlsuite.evaluation.multiagent import MultiAgentPolicy
from rlsuite.launcher.loader import load_experiment
from rlsuite.multiagent.maddpg import MADDPGConfig
from rlsuite.multiagent.policies import SHARED
from rlsuite.multiagent.selfplay import OpponentPool
from rlsuite.results import read_results
from tests.helpers import RL_EXPERIMENTS, TENSORBOARD_PREFIX, smoke_trials, tensorboard_scalars
from tests.ray_nodes import RayCluster
from tests.smoke_matrix import smoke_matrix

# Runs that other tests read too (conftest's session runs): trained once, checked here too.
# `--smoke` samples in the trial's process; `spread_run` and `maddpg_tag_run` add an env
# runner actor so that the remote path (episodes and weights crossing processes) stays in CI.
SHARED_RUNS = {
    "ppo_cartpole": "cartpole_run",
    "maddpg_tag": "maddpg_tag_run",
    "ppo_shared_spread": "spread_run",
}
# Runs read back by `rlsuite.evaluate` here, from a relative path as a user types it, with a
# video: the algorithms no evaluation test trains a run of.
EVALUATED = {"qmix_spread": "QMIX's team module (the three agents as one RLlib agent)"}
# Runs that also make test_overlapped_ppo.py's check through the launcher: overlapped sampling
# reaches the trial and its final checkpoint, on a remote env runner with a sample request
# still in flight when the trial ends (one run of the file for both, CI time).
OVERLAPPED = {"ppo_atari": ("--num-env-runners", "1", "--set", "training.overlap_sampling=True")}


@pytest.mark.parametrize("path", smoke_matrix(RL_EXPERIMENTS), ids=lambda p: p.stem)
def test_smoke_run_trains_checkpoints_and_logs(
    path: Path,
    storage: Path,
    ray_cluster: RayCluster,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if path.stem in SHARED_RUNS:
        experiment_dir: Path = request.getfixturevalue(SHARED_RUNS[path.stem])
        trials = json.loads((experiment_dir / "summary.json").read_text())["trials"]
        assert trials and all(t["status"] == "OK" for t in trials)
    else:
        flags = ("--address", ray_cluster.address, *OVERLAPPED.get(path.stem, ()))
        trials = smoke_trials(path, storage, *flags, env=ray_cluster.env)
        experiment_dir = storage / path.stem
    for trial in trials:
        trial_dir = experiment_dir / trial["trial"]
        progress = pd.read_csv(trial_dir / "progress.csv")
        assert list(progress[metrics.TRAINING_ITERATION]) == [1, 2]
        steps = progress[metrics.ENV_STEPS_SAMPLED_LIFETIME]
        assert steps.iloc[0] > 0 and steps.iloc[1] > steps.iloc[0]
        assert trial["checkpoint"] and Path(trial["checkpoint"]).is_dir()
        if path.stem in OVERLAPPED:
            rows = read_results(Path(trial["checkpoint"]).parent / "result.json")
            assert rows[-1]["config"]["overlap_sampling"] is True
        _assert_module_restores(Path(trial["checkpoint"]), path)
        tags = tensorboard_scalars(trial_dir)
        assert TENSORBOARD_PREFIX + metrics.EPISODE_RETURN_MEAN in tags
        assert TENSORBOARD_PREFIX + metrics.ENV_STEPS_SAMPLED_LIFETIME in tags
        config = load_experiment(path).config
        if config.is_multi_agent:  # team return above, and one return per policy
            for module_id in config.policies:
                assert TENSORBOARD_PREFIX + metrics.policy_return_mean(module_id) in tags
        if isinstance(config, MADDPGConfig):  # a team as one RLlib agent: one return per policy
            for policy in config.agent_policies or [SHARED]:
                assert TENSORBOARD_PREFIX + metrics.policy_return_mean(policy) in tags
        if isinstance(config.policy_mapping_fn, OpponentPool):  # self-play's win rates
            for key in (
                metrics.WIN_RATE,
                metrics.SNAPSHOTS,
                metrics.WIN_RATE_VS_RANDOM,
                metrics.WIN_RATE_VS_HEURISTIC,
                metrics.WIN_RATE_VS_CAREFUL,
                f"{metrics.OPPONENT_SHARES}/heuristic",  # PFSP's draw share of a fixed member
            ):
                assert TENSORBOARD_PREFIX + key in tags, key
            # The summary's best is the win rate's, apart from the return's (0 in every game)
            assert trial["metric"] == metrics.WIN_RATE_VS_HEURISTIC, trial
            assert 0 <= trial["best_metric"] <= 1 and trial["best_episode_return_mean"] == 0, trial
    if path.stem in EVALUATED:
        monkeypatch.chdir(experiment_dir.parent)
        video = Path("evaluated.mp4")
        code = evaluate_main([experiment_dir.name, "--episodes", "2", "--video", str(video)])
        out = capsys.readouterr().out
        assert code == 0, out
        assert "2 episodes" in out and "episode length" in out, out
        assert video.stat().st_size > 0


def _assert_module_restores(checkpoint: Path, experiment_file: Path) -> None:
    """Every trained RLModule loads with RLlib's own API and acts on a real observation:
    `default_policy` on the env's observation; in a multi-agent run the checkpoint's
    modules act through its env runner's connectors (frame stacking, action masks) for
    every agent to move after a reset, mapped by the run's own policy mapping."""
    config = load_experiment(experiment_file).config
    modules_dir = checkpoint / "learner_group" / "learner" / "rl_module"
    saved = {path.name for path in modules_dir.iterdir() if path.is_dir()}
    added = saved - set(config.policies)  # self-play adds snapshots of its learner
    assert set(config.policies) <= saved, f"checkpoint holds {saved}, config {set(config.policies)}"
    if isinstance(config.policy_mapping_fn, OpponentPool):
        assert all(re.fullmatch(rf"{config.policy_mapping_fn.learner}_v\d+", m) for m in added)
    else:
        assert not added, f"checkpoint holds {saved}, config {set(config.policies)}"
    modules = {module_id: RLModule.from_checkpoint(modules_dir / module_id) for module_id in saved}
    env = envs.make(config.env)
    if config.is_multi_agent:
        _assert_multi_agent_acts(checkpoint, env)
    else:
        observation, _ = env.reset(seed=0)
        _assert_acts(modules[DEFAULT_MODULE_ID], [observation])
    env.close()


def _assert_multi_agent_acts(checkpoint: Path, env: Any) -> None:
    policy = MultiAgentPolicy.from_checkpoint(checkpoint)
    episode = policy.new_episode(env, seed=0)
    observations, infos = env.reset(seed=0)
    episode.add_env_reset(observations=observations, infos=infos)
    _, actions, _ = policy.act(episode, explore=False)
    assert set(actions) == set(observations), (actions, list(observations))
    for agent, action in actions.items():
        assert env.get_action_space(agent).contains(
            np.asarray(action, dtype=env.get_action_space(agent).dtype)
        ), (agent, action)


def _assert_acts(module: RLModule, observations: list) -> None:
    if isinstance(observations[0], dict):  # e.g. a board and its action mask
        obs: Any = {
            key: torch.as_tensor(np.stack([o[key] for o in observations]), dtype=torch.float32)
            for key in observations[0]
        }
    else:
        obs = torch.as_tensor(np.stack(observations), dtype=torch.float32)
    output = module.forward_inference({Columns.OBS: obs})
    assert Columns.ACTIONS in output or Columns.ACTION_DIST_INPUTS in output, output
