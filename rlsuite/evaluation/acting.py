"""One decision of a restored policy, the way RLlib's env runners make it.

The env-to-module connectors turn the episode into a batch, the RLModule's forward pass
gives the action distribution's inputs (`forward_exploration` samples from it,
`forward_inference` takes the greedy action), and the module-to-env connectors turn them
into actions for the env. Single- and multi-agent policies share this and the episode
loop (`rollout.play_episode`); they differ in their episodes: how one starts, records a
step and ends in a result (`policy.SingleAgentPolicy`, `multiagent.MultiAgentPolicy`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import torch
from ray.rllib.connectors.connector_pipeline_v2 import ConnectorPipelineV2
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from rlsuite.evaluation.locate import ENV_TO_MODULE_DIR, MODULE_TO_ENV_DIR


@dataclass(frozen=True)
class EpisodeResult:
    """One episode: its return per policy (module id) and its length in env steps."""

    returns: dict[str, float]
    length: int


class EnvStep(NamedTuple):
    """What one env step adds to an episode: the policy's actions and extra model
    outputs, then the env's answer (in the env's own single- or multi-agent shape)."""

    actions: Any
    extra_model_outputs: Any
    observations: Any
    rewards: Any
    terminated: Any
    truncated: Any
    infos: Any


def restore_connectors(checkpoint: Path) -> tuple[ConnectorPipelineV2, ConnectorPipelineV2]:
    """The env runner's env-to-module and module-to-env pipelines of an Algorithm checkpoint."""
    return (
        ConnectorPipelineV2.from_checkpoint(checkpoint / ENV_TO_MODULE_DIR),
        ConnectorPipelineV2.from_checkpoint(checkpoint / MODULE_TO_ENV_DIR),
    )


@dataclass
class ConnectedPolicy(ABC):
    """RLModule(s) between the env runner's two connector pipelines."""

    module: RLModule
    env_to_module: ConnectorPipelineV2
    module_to_env: ConnectorPipelineV2
    shared_data: dict[str, Any] = field(default_factory=dict, init=False)
    """Connector state (e.g. RNN states) of the episode being played."""

    @torch.no_grad()
    def act(self, episode: Any, explore: bool) -> tuple[Any, Any, dict[str, Any]]:
        """(actions for the episode, actions for the env, the other module-to-env columns)
        at the episode's last observation."""
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
        actions = to_env.pop(Columns.ACTIONS)[0]
        actions_for_env = to_env.pop(Columns.ACTIONS_FOR_ENV, [actions])[0]
        return actions, actions_for_env, {column: values[0] for column, values in to_env.items()}

    def export_refusal(self) -> str | None:
        """Why `--export` cannot write this policy (after "--export: CHECKPOINT "), or None
        when only the module's own checks (`rlsuite.rl.export.check_exportable`) remain."""
        return None

    @property
    @abstractmethod
    def policy_ids(self) -> list[str]:
        """Module ids of the policies, sorted."""

    @abstractmethod
    def check_env(self, env_name: str, env: Any) -> None:
        """Refuse (UsageError) an env unlike the one the policy was trained on."""

    @abstractmethod
    def new_episode(self, env: Any, seed: int = 0) -> Any:
        """An empty episode of `env`; resets the connector state."""

    @abstractmethod
    def record_reset(self, episode: Any, observations: Any, infos: Any) -> None:
        """Add the env's reset to the episode."""

    @abstractmethod
    def record_step(self, episode: Any, step: EnvStep) -> None:
        """Add one env step to the episode."""

    @abstractmethod
    def result(self, episode: Any) -> EpisodeResult:
        """The finished episode's returns and length."""
