"""MPE simple_spread stepped as one batch: the same task as mpe2's, in numpy over all envs.

RLlib's `MultiAgentEnvRunner` steps its sub-envs one by one through `SyncVectorMultiAgentEnv`
(the only vectorization it has for multi-agent envs), and each PettingZoo step is an
AEC cycle of Python objects: agent by agent, entity pair by pair. That was 42% of
`ppo_shared_spread.py`'s training time in a cProfile of three iterations (5.9 of 14.1 s).
Here the 128 envs of a runner move together: one array operation per physics term.

Same task, step for step: the dynamics, rewards, observations and resets are mpe2's
`simple_spread_v3` (its `World.step`, `Scenario.reward`/`global_reward`/`observation`,
`SimpleEnv._set_action`) with the same float64 arithmetic in the same order, and each env
draws its reset positions from its own generator seeded as PettingZoo seeds its env.
tests/test_spread_vector.py checks equality with the PettingZoo env over seeded episodes,
so a change in mpe2's simple_spread fails a test instead of changing the task quietly.
VMAS, the torch-vectorized MPE the field uses, ports simple_spread onto its own physics
engine and reward, so its episodes are not mpe2's and results would not compare with the
suite's recorded ones; it would also be one more dependency for one scenario.
Only the default options are batched (discrete actions; any `N`, `local_ratio` and
`max_cycles`); any other option (continuous actions, curriculum, neighbours, early
termination, benchmark data) returns None and RLlib's per-env path runs instead.
The per-env spaces and `possible_agents` are the PettingZoo env's: the registry builds
one (`reference`) and every index of `envs` points at it. Frames for videos come from
PettingZoo's env, which `rlsuite.evaluate` steps; the batch draws none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv

# Options the batch implements; `dynamic_rescaling` and `render_mode` change only
# frames, which the batch does not draw.
BATCHED_OPTIONS = {"N", "local_ratio", "max_cycles", "max_episode_steps"}
RENDER_OPTIONS = {"render_mode", "dynamic_rescaling"}
# mpe2's World and Agent constants for simple_spread.
DT, DAMPING, CONTACT_FORCE, CONTACT_MARGIN = 0.1, 0.25, 1e2, 1e-3
AGENT_SIZE, SENSITIVITY, COMM_DIM = 0.15, 5.0, 2
# Discrete action -> unit force, as SimpleEnv._set_action; 0 is no move.
MOVES = np.array([[0.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [0.0, -1.0], [0.0, 1.0]])


def make_spread_vector(
    num_envs: int, env_config: Mapping[str, Any], reference: Callable[[], MultiAgentEnv]
) -> SpreadVectorEnv | None:
    """The batched env for these options, or None where only PettingZoo's env has them;
    `reference` builds the PettingZoo env that lends its spaces."""
    options = {k: v for k, v in env_config.items() if k not in RENDER_OPTIONS}
    if options.pop("continuous_actions", False) or not set(options) <= BATCHED_OPTIONS:
        return None
    steps = options.get("max_episode_steps", options.get("max_cycles", 25))
    return SpreadVectorEnv(
        num_envs,
        reference(),
        local_ratio=float(options.get("local_ratio", 0.5)),
        max_cycles=int(steps),
    )


class SpreadVectorEnv(VectorMultiAgentEnv):
    """`num_envs` simple_spread envs with RLlib's "next_step" autoreset: the step after an
    episode's last one resets that env and returns zero rewards, as SyncVectorMultiAgentEnv."""

    def __init__(
        self, num_envs: int, reference: MultiAgentEnv, local_ratio: float, max_cycles: int
    ) -> None:
        super().__init__()
        self.num_envs = num_envs
        self.agents: list[Any] = list(reference.possible_agents)
        self._reference = reference
        self.envs = [reference] * num_envs
        self.metadata = dict(reference.metadata, autoreset_mode="next_step")
        self.render_mode = reference.render_mode
        self.single_observation_spaces = {
            a: reference.get_observation_space(a) for a in self.agents
        }
        self.single_action_spaces = {a: reference.get_action_space(a) for a in self.agents}
        # What a remote runner reports in get_spaces() for the local one to build from.
        self.single_observation_space = gym.spaces.Dict(self.single_observation_spaces)
        self.single_action_space = gym.spaces.Dict(self.single_action_spaces)
        self.local_ratio, self.max_cycles = local_ratio, max_cycles
        n = len(self.agents)
        self._pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
        self._others = [[o for o in range(n) if o != i] for i in range(n)]
        self._rngs = [seeding.np_random(None)[0] for _ in range(num_envs)]
        self._pos = np.zeros((num_envs, n, 2))
        self._vel = np.zeros((num_envs, n, 2))
        self._landmarks = np.zeros((num_envs, n, 2))
        self._steps = np.zeros(num_envs, dtype=np.int64)
        self._done = np.zeros(num_envs, dtype=bool)

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None
    ) -> tuple[Any, Any]:
        seeds = _per_env_seeds(seed, self.num_envs)
        for index, env_seed in enumerate(seeds):
            if env_seed is not None:
                self._rngs[index] = seeding.np_random(env_seed)[0]
            self._reset_one(index)
        self._done[:] = False
        return self._observations(), [self._empty_infos() for _ in range(self.num_envs)]

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, Any]:
        """`actions`: one dict of agent actions per env (empty for an env that resets)."""
        resetting = self._done.copy()
        moves = np.zeros((self.num_envs, len(self.agents)), dtype=np.int64)
        for index, env_actions in enumerate(actions):
            if not resetting[index]:
                moves[index] = [env_actions[agent] for agent in self.agents]
        self._world_step(moves, ~resetting)
        rewards = self._rewards()
        self._steps[~resetting] += 1
        for reset_index in np.flatnonzero(resetting):
            self._reset_one(int(reset_index))
            rewards[reset_index] = 0.0
        truncated = self._steps >= self.max_cycles
        self._done = truncated.copy()
        return (
            self._observations(),
            [dict(zip(self.agents, row, strict=True)) for row in rewards.tolist()],
            [self._flags(False) for _ in range(self.num_envs)],
            [self._flags(bool(t)) for t in truncated],
            [self._empty_infos() for _ in range(self.num_envs)],
        )

    def close_extras(self, **kwargs: Any) -> None:
        self._reference.close()

    def _reset_one(self, index: int) -> None:
        n = len(self.agents)
        # PettingZoo's reset_world: uniform(-1, 1, 2) per agent, then per landmark.
        drawn = self._rngs[index].uniform(-1, +1, (2 * n, 2))
        self._pos[index], self._landmarks[index] = drawn[:n], drawn[n:]
        self._vel[index] = 0.0
        self._steps[index] = 0

    def _world_step(self, moves: np.ndarray, stepping: np.ndarray) -> None:
        """mpe2's World.step for the envs that step: action forces, then the soft contact
        force of every agent pair (landmarks do not collide), then integration."""
        force = MOVES[moves] * SENSITIVITY
        for a, b in self._pairs:
            delta = self._pos[:, a] - self._pos[:, b]
            dist = np.sqrt(np.sum(np.square(delta), axis=-1))
            penetration = (
                np.logaddexp(0, -(dist - 2 * AGENT_SIZE) / CONTACT_MARGIN) * CONTACT_MARGIN
            )
            contact = CONTACT_FORCE * delta / dist[:, None] * penetration[:, None]
            force[:, a] = contact + force[:, a]
            force[:, b] = -contact + force[:, b]
        pos = self._pos + self._vel * DT
        vel = self._vel * (1 - DAMPING) + force * DT  # the agents' mass is 1
        self._pos[stepping], self._vel[stepping] = pos[stepping], vel[stepping]

    def _rewards(self) -> np.ndarray:
        """(num_envs, agents): the team's landmark coverage and each agent's collisions,
        mixed by local_ratio, as SimpleEnv._execute_world_step."""
        to_landmarks = self._landmarks[:, :, None] - self._pos[:, None]  # [env, landmark, agent]
        nearest = np.sqrt(np.sum(np.square(to_landmarks), axis=-1)).min(axis=-1)
        team = -nearest.sum(axis=-1)  # numpy sums 3 values in order, as mpe2's loop
        between = self._pos[:, :, None] - self._pos[:, None]
        colliding = np.sqrt(np.sum(np.square(between), axis=-1)) < 2 * AGENT_SIZE
        own = 1.0 - colliding.sum(axis=-1)  # each agent "collides" with itself once
        return team[:, None] * (1 - self.local_ratio) + own * self.local_ratio

    def _observations(self) -> list[dict]:
        """Scenario.observation for every agent: own velocity and position, landmarks and
        the other agents relative to it, and the others' (silent, zero) communication."""
        n = len(self.agents)
        rows = []
        for i in range(n):
            own = self._pos[:, i : i + 1]
            rows.append(
                np.concatenate(
                    [
                        self._vel[:, i],
                        self._pos[:, i],
                        (self._landmarks - own).reshape(self.num_envs, -1),
                        (self._pos[:, self._others[i]] - own).reshape(self.num_envs, -1),
                        np.zeros((self.num_envs, COMM_DIM * (n - 1))),
                    ],
                    axis=-1,
                ).astype(np.float32)
            )
        return [
            dict(zip(self.agents, env_rows, strict=True)) for env_rows in zip(*rows, strict=True)
        ]

    def _flags(self, value: bool) -> dict[Any, bool]:
        return {**dict.fromkeys(self.agents, value), "__all__": value}

    def _empty_infos(self) -> dict[Any, dict]:
        return {agent: {} for agent in self.agents}


def _per_env_seeds(seed: int | Sequence[int | None] | None, num_envs: int) -> list[int | None]:
    """SyncVectorMultiAgentEnv's seeding: an int seeds env i with seed + i."""
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, int):
        return [seed + i for i in range(num_envs)]
    if len(seed) != num_envs:
        raise ValueError(f"{len(seed)} seeds for {num_envs} envs")
    return list(seed)
