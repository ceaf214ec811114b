"""How saturated a MADDPG or MASAC team's actors are (scripts/actor_saturation.py).

A Gumbel-softmax actor whose logits run far apart puts all its probability on one action:
its gradient vanishes and its exploration stops. A tanh actor whose raw outputs run far
past +-3 sits at its action bounds alike. On simple_tag every hunter actor trained without
`actor_output_reg` ended so (docs/multiagent.md, "saturated hunters"); these statistics
are how that was found and how a run is checked for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from rlsuite.multiagent.maddpg.joint_env import OBS

SATURATED_PROBABILITY = 0.99
SATURATED_OUTPUT = 3.0  # tanh(3) = 0.995: the action is at its bound


def random_play_observations(env: Any, states: int, seed: int) -> np.ndarray:
    """(states, n_agents, obs_dim): a joint env's observations under uniformly random
    actions, resetting whenever an episode ends."""
    env.action_space.seed(seed)
    observation, _ = env.reset(seed=seed)
    seen = []
    for _ in range(states):
        seen.append(np.asarray(observation[OBS], dtype=np.float32))
        observation, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            observation, _ = env.reset()
    return np.stack(seen)


def actor_saturation(module: Any, observations: np.ndarray) -> dict[str, dict[str, float]]:
    """Per policy, over its agents' rows of `observations`. Discrete actions: the share of
    states whose top action takes more than 0.99 of the probability, the mean top
    probability, the median gap between the two largest logits, how many actions are ever
    the greedy one. Continuous: the share of tanh's inputs beyond +-3 (MASAC: its means,
    not its log stds), their median size."""
    with torch.no_grad():
        outputs = module.action_part(
            module.actor_outputs(module.actors, torch.as_tensor(observations))
        )
    stats: dict[str, dict[str, float]] = {}
    for policy in module.policy_ids:
        rows = [i for i, p in enumerate(module.agent_policies) if p == policy]
        out = outputs[:, rows].reshape(-1, outputs.shape[-1])
        stats[policy] = _discrete(out) if module.discrete else _continuous(out)
    return stats


def _discrete(logits: torch.Tensor) -> dict[str, float]:
    top = torch.softmax(logits, dim=-1).max(dim=-1).values
    two = logits.topk(2, dim=-1).values
    return {
        "share_top_above_0.99": float((top > SATURATED_PROBABILITY).float().mean()),
        "mean_top_probability": float(top.mean()),
        "median_top2_logit_gap": float((two[:, 0] - two[:, 1]).median()),
        "greedy_actions_used": float(logits.argmax(dim=-1).unique().numel()),
        "actions": float(logits.shape[-1]),
    }


def _continuous(raw: torch.Tensor) -> dict[str, float]:
    return {
        "share_beyond_3": float((raw.abs() > SATURATED_OUTPUT).float().mean()),
        "median_abs_output": float(raw.abs().median()),
    }
