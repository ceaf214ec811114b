"""The fast Atari path: ale-py's C++ `AtariVectorEnv` with the standard wrappers' semantics.

`AtariVectorEnv` steps every game of an env runner in C++ threads and does the
preprocessing there too (frame skip 4 with max-pooling, 84x84 grey, no-op starts, FIRE on
reset, frame stack, reward clipping). RLlib builds it through Gymnasium's vector entry
point: `config.env_runners(gym_env_vectorize_mode="vector_entry_point")` calls the
registry's creator with `num_envs`, which lands here.

What the module sees is what `envs/atari.py` produces: float32 [84, 84, 4] in [0, 1]
(or uint8 in [0, 255] with env_config `frame_dtype="uint8"`), oldest frame first. So
checkpoints, evaluation and export work the same for both paths.
Two differences remain, both ALE's: FIRE on reset is one frame (RLlib's FireResetEnv
steps FIRE then RIGHT), and `max_episode_steps` counts the no-op frames of the start.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv, VectorObservationWrapper

from rlsuite.envs.atari import (
    DEFAULT_STICKY_ACTIONS,
    FRAME_STACK,
    MAX_EPISODE_FRAMES,
    NOOP_MAX,
    SCREEN_SIZE,
    frame_dtype,
)

FRAME_SKIP = 4
# One C++ stepping thread per env runner: RLlib reserves one CPU per runner, and its
# forward pass, not stepping, is the runner's bottleneck (env_config "num_threads").
DEFAULT_THREADS = 1


def make_atari_vector(
    game: str, num_envs: int, config: dict[str, Any], max_episode_steps: int | None = None
) -> VectorEnv:
    """`num_envs` copies of `game` in one `AtariVectorEnv`, observations as `make_atari`'s.

    `config` keys: `repeat_action_probability`, `full_action_space`, `noop_max`,
    `frame_dtype` and `num_threads` (C++ stepping threads).
    """
    from ale_py.vector_env import AtariVectorEnv

    scale = frame_dtype(config) == "float32"
    frames = MAX_EPISODE_FRAMES
    if max_episode_steps is not None:
        frames = min(frames, int(max_episode_steps) * FRAME_SKIP)
    env = AtariVectorEnv(
        game,
        num_envs,
        num_threads=int(config.get("num_threads", DEFAULT_THREADS)),
        max_num_frames_per_episode=frames,
        repeat_action_probability=config.get("repeat_action_probability", DEFAULT_STICKY_ACTIONS),
        full_action_space=config.get("full_action_space", False),
        img_height=SCREEN_SIZE,
        img_width=SCREEN_SIZE,
        grayscale=True,
        stack_num=FRAME_STACK,
        frameskip=FRAME_SKIP,
        maxpool=True,
        noop_max=int(config.get("noop_max", NOOP_MAX)),
        episodic_life=False,  # a lost life does not end the episode, as in envs/atari.py
        reward_clipping=True,  # sign(), as gym's ClipReward(-1, 1) on integer scores
        use_fire_reset=True,
    )
    return FramesLast(env, scale)


class FramesLast(VectorObservationWrapper):
    """uint8 [N, 4, 84, 84] stacks to [N, 84, 84, 4], oldest frame first, with the first
    frames of an episode padded by its reset frame: float32 in [0, 1] if `scale`, else
    uint8 as ALE makes them.

    ALE pads a new episode's stack with black frames; gym's `FrameStackObservation`
    (the standard path) repeats the reset frame, so the padding is filled here. Envs
    reset on the step after they end (Gymnasium's next-step autoreset, what RLlib's
    env runner expects).
    """

    def __init__(self, env: VectorEnv, scale: bool = True) -> None:
        super().__init__(env)
        stack, height, width = env.single_observation_space.shape  # type: ignore[misc]
        shape = (height, width, stack)
        self.single_observation_space = (
            gym.spaces.Box(0.0, 1.0, shape, np.float32)
            if scale
            else gym.spaces.Box(0, 255, shape, np.uint8)
        )
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )
        self._stack = stack
        self._scale = scale
        # Frames each env has seen since its reset, capped at the stack size.
        self._frames = np.zeros(self.num_envs, dtype=np.int64)
        self._ended = np.zeros(self.num_envs, dtype=bool)

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> Any:
        self._frames[:] = 0
        self._ended[:] = False
        return super().reset(seed=seed, options=options)

    def step(self, actions: Any) -> Any:
        self._frames[self._ended] = 0  # these envs return their reset frame this step
        step: tuple[Any, np.ndarray, np.ndarray, np.ndarray, Any] = super().step(actions)
        observations, rewards, terminations, truncations, infos = step
        self._ended = np.logical_or(terminations, truncations)
        # ALE returns int32 rewards; the standard path's ClipReward returns floats.
        return observations, rewards.astype(np.float32), terminations, truncations, infos

    def observations(self, observations: np.ndarray) -> np.ndarray:  # type: ignore[override]
        frames_last = np.moveaxis(observations, 1, -1)
        if self._scale:
            # One pass writes the scaled copy, bit for bit AtariPreprocessing(scale_obs=True).
            frames = np.divide(frames_last, np.float32(255), dtype=np.float32)
        else:
            frames = np.ascontiguousarray(frames_last)
        self._frames = np.minimum(self._frames + 1, self._stack)
        for env_index in np.flatnonzero(self._frames < self._stack):
            first = self._stack - self._frames[env_index]  # the oldest real frame's slot
            frames[env_index, ..., :first] = frames[env_index, ..., first : first + 1]
        return frames
