"""A trained single-agent policy restored from an RLlib checkpoint: its RLModule and its
connectors, and its episodes.

The connectors come from the checkpoint's env runner (observation filters, frame
stacking, action unsquashing and clipping), so the policy acts exactly as it did in
training. Policies are keyed by module id; a single-agent run has `default_policy`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import torch
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from rlsuite.errors import UsageError
from rlsuite.evaluation.acting import ConnectedPolicy, EnvStep, EpisodeResult, restore_connectors
from rlsuite.evaluation.damage import restoring
from rlsuite.evaluation.locate import MODULES_DIR


def module_ids(checkpoint: Path) -> list[str]:
    """Ids of the RLModules a checkpoint holds (one directory each)."""
    root = checkpoint / MODULES_DIR
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def load_module(checkpoint: Path, module_id: str = DEFAULT_MODULE_ID) -> RLModule:
    """One RLModule of a checkpoint, in eval mode, on the CPU."""
    with restoring(checkpoint):
        module = RLModule.from_checkpoint(checkpoint / MODULES_DIR / module_id)
    if isinstance(module, torch.nn.Module):
        module.eval()
    return module


@dataclass
class SingleAgentPolicy(ConnectedPolicy):
    """The `default_policy` RLModule with the env runner's connector pipelines."""

    @classmethod
    def from_checkpoint(cls, checkpoint: Path) -> SingleAgentPolicy:
        ids = module_ids(checkpoint)
        if ids != [DEFAULT_MODULE_ID]:
            found = ", ".join(ids) or "none"
            raise UsageError(
                f"{checkpoint}: expected one RLModule '{DEFAULT_MODULE_ID}' (a single-agent run), found {found}; multi-agent evaluation is not supported yet"
            )
        module = load_module(checkpoint)
        with restoring(checkpoint):
            env_to_module, module_to_env = restore_connectors(checkpoint)
        return cls(module, env_to_module, module_to_env)

    @property
    def policy_ids(self) -> list[str]:
        return [DEFAULT_MODULE_ID]

    def check_env(self, env_name: str, env: gym.Env) -> None:
        """Refuse an env whose spaces differ from those the policy was trained on."""
        expected = (
            self.env_to_module.input_observation_space,
            self.env_to_module.input_action_space,
        )
        if expected != (env.observation_space, env.action_space):
            got = f"{describe(env.observation_space)} observations, {describe(env.action_space)} actions"
            trained = f"{describe(expected[0])} observations, {describe(expected[1])} actions"
            raise UsageError(
                f"env {env_name} has {got} but the checkpoint was trained on {trained}; evaluate it on the env it was trained on"
            )

    def new_episode(self, env: gym.Env, seed: int = 0) -> SingleAgentEpisode:
        self.shared_data = {}  # connector state (e.g. RNN states) is per episode
        return SingleAgentEpisode(
            observation_space=env.observation_space, action_space=env.action_space
        )

    def record_reset(self, episode: SingleAgentEpisode, observations: object, infos: dict) -> None:
        episode.add_env_reset(observation=observations, infos=infos)

    def record_step(self, episode: SingleAgentEpisode, step: EnvStep) -> None:
        episode.add_env_step(
            observation=step.observations,
            action=step.actions,
            reward=step.rewards,
            infos=step.infos,
            terminated=step.terminated,
            truncated=step.truncated,
            extra_model_outputs=step.extra_model_outputs,
        )

    def result(self, episode: SingleAgentEpisode) -> EpisodeResult:
        total = 0.0
        for reward in episode.get_rewards():
            total += float(reward)
        return EpisodeResult(returns={pid: total for pid in self.policy_ids}, length=len(episode))


def describe(space: gym.Space | None) -> str:
    """A space in a few characters: `Box(4,)`, `Discrete(2)` (bounds left out)."""
    if isinstance(space, gym.spaces.Box):
        return f"Box{space.shape}"
    return str(space)
