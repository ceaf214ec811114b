"""A team trained as one RLlib agent (MADDPG, MASAC: `rlsuite.multiagent.maddpg`) and its
episodes.

Its checkpoint holds one RLModule, `default_policy`, with one actor per policy inside,
and its env (`JointEnv`) is single-agent to RLlib: the team plays as a single-agent
policy does. Its episodes end in a multi-agent result, per policy, per agent and of the
team, read from the per-agent rewards the joint env keeps in its observations, so the
returns table is the one multi-agent runs print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import gymnasium as gym
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from rlsuite import envs
from rlsuite.errors import UsageError
from rlsuite.evaluation.multiagent import MultiAgentEpisodeResult
from rlsuite.evaluation.policy import SingleAgentPolicy
from rlsuite.multiagent.maddpg import MADDPGTorchRLModule
from rlsuite.multiagent.maddpg.joint_env import JOINT_PREFIX, JointSpec, joint
from rlsuite.multiagent.maddpg.returns import joint_returns


def is_joint(policy: SingleAgentPolicy) -> bool:
    """Whether the policy is a team's (MADDPG's or MASAC's module, MASAC's a subclass)."""
    return isinstance(policy.module, MADDPGTorchRLModule)


@dataclass
class JointPolicy(SingleAgentPolicy):
    """MADDPG's or MASAC's module with the env runner's connectors."""

    agents: tuple[str, ...] = field(default=(), init=False)
    """The agents of the episode being played, in the env's order."""

    @classmethod
    def of(cls, policy: SingleAgentPolicy) -> JointPolicy:
        return cls(policy.module, policy.env_to_module, policy.module_to_env)

    def export_refusal(self) -> str:
        # One RLModule, but a team's: its actors act on the joint env's Dict observations.
        team = ", ".join(cast(Any, self.module).policy_ids)
        return f"holds a MADDPG/MASAC team (its policies {team} in one RLModule, acting on the joint env's Dict observations); only single-agent policies export so far; evaluate it without --export"

    def check_env(self, env_name: str, env: gym.Env) -> None:
        if _spec(env) is None and isinstance(env, MultiAgentEnv):
            raise UsageError(
                f"env {env_name}: the checkpoint's team was trained as one agent on its "
                f"joint env; pass --env {JOINT_PREFIX}{env_name}"
            )
        super().check_env(env_name, env)
        if _spec(env) is None:
            raise UsageError(
                f"env {env_name} has the spaces of the team's joint env but is not one; "
                "evaluate it on the env it was trained on"
            )

    def new_episode(self, env: gym.Env, seed: int = 0) -> SingleAgentEpisode:
        spec = _spec(env)
        assert spec is not None, "check_env refuses other envs"
        self.agents = spec.agents
        return super().new_episode(env, seed)

    def result(self, episode: SingleAgentEpisode) -> MultiAgentEpisodeResult:
        module: Any = self.module
        returns = joint_returns([episode], self.agents, module.agent_policies)
        return MultiAgentEpisodeResult(
            returns=returns.policies,
            length=len(episode),
            agent_returns=returns.agents,
            # The env's own reward, the agents' sum: the team return as RLlib logs it.
            team_return=float(episode.get_return()),
        )


def register_joint_name(env: str | type) -> None:
    """Register a `joint/<env>` name with Tune as the experiment file's `joint()` did, so
    that a checkpoint without its experiment file builds its env from the name alone."""
    if isinstance(env, str) and env.startswith(JOINT_PREFIX):
        inner = env.removeprefix(JOINT_PREFIX)
        try:
            envs.creator(inner)
        except envs.UnknownEnvError as error:
            raise UsageError(f"--env {env}: {error}") from None
        joint(inner)


def _spec(env: gym.Env) -> JointSpec | None:
    spec = getattr(env.unwrapped, "spec_joint", None)
    return spec if isinstance(spec, JointSpec) else None
