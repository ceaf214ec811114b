"""A trained policy restored from an RLlib checkpoint: its RLModules and its connectors.

The connectors come from the checkpoint's env runner (observation filters, frame
stacking, action unsquashing and clipping), so the policy acts exactly as it did in
training. Policies are keyed by module id; a single-agent run has `default_policy`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.connectors.connector_pipeline_v2 import ConnectorPipelineV2
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from rlsuite.errors import UsageError

MODULES_DIR = Path("learner_group/learner/rl_module")
ENV_TO_MODULE_DIR = Path("env_runner/env_to_module_connector")
MODULE_TO_ENV_DIR = Path("env_runner/module_to_env_connector")


def module_ids(checkpoint: Path) -> list[str]:
    """Ids of the RLModules a checkpoint holds (one directory each)."""
    root = checkpoint / MODULES_DIR
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def load_module(checkpoint: Path, module_id: str = DEFAULT_MODULE_ID) -> RLModule:
    """One RLModule of a checkpoint, in eval mode, on the CPU."""
    module = RLModule.from_checkpoint(checkpoint / MODULES_DIR / module_id)
    if isinstance(module, torch.nn.Module):
        module.eval()
    return module


@dataclass
class SingleAgentPolicy:
    """The `default_policy` RLModule with the env runner's connector pipelines."""

    module: RLModule
    env_to_module: ConnectorPipelineV2
    module_to_env: ConnectorPipelineV2
    shared_data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_checkpoint(cls, checkpoint: Path) -> SingleAgentPolicy:
        ids = module_ids(checkpoint)
        if ids != [DEFAULT_MODULE_ID]:
            found = ", ".join(ids) or "none"
            raise UsageError(
                f"{checkpoint}: expected one RLModule '{DEFAULT_MODULE_ID}' (a single-agent run), found {found}; multi-agent evaluation is not supported yet"
            )
        return cls(
            module=load_module(checkpoint),
            env_to_module=ConnectorPipelineV2.from_checkpoint(checkpoint / ENV_TO_MODULE_DIR),
            module_to_env=ConnectorPipelineV2.from_checkpoint(checkpoint / MODULE_TO_ENV_DIR),
        )

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

    def new_episode(self, env: gym.Env) -> SingleAgentEpisode:
        self.shared_data = {}  # connector state (e.g. RNN states) is per episode
        return SingleAgentEpisode(
            observation_space=env.observation_space, action_space=env.action_space
        )

    @torch.no_grad()
    def act(self, episode: SingleAgentEpisode, explore: bool) -> tuple[Any, Any, dict[str, Any]]:
        """(action for the episode, action for the env, extra model outputs) at the last obs."""
        common: dict[str, Any] = {
            "rl_module": self.module,
            "episodes": [episode],
            "explore": explore,
            "shared_data": self.shared_data,
        }
        batch = self.env_to_module(batch={}, **common)
        output = (
            self.module.forward_exploration(batch)
            if explore
            else self.module.forward_inference(batch)
        )
        to_env = self.module_to_env(batch=output, **common)
        # The connectors listify for a vector env of one: take element 0.
        actions = to_env.pop(Columns.ACTIONS)
        actions_for_env = to_env.pop(Columns.ACTIONS_FOR_ENV, actions)
        return actions[0], actions_for_env[0], {k: v[0] for k, v in to_env.items()}


def describe(space: gym.Space | None) -> str:
    """A space in a few characters: `Box(4,)`, `Discrete(2)` (bounds left out)."""
    if isinstance(space, gym.spaces.Box):
        return f"Box{space.shape}"
    return str(space)
