"""Atari games from ale-py with the standard DQN-style preprocessing."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

# Machado et al. (2018) recommend sticky actions (0.25) for evaluation; most published
# Atari baselines (DQN, CleanRL, RLlib's tuned examples) train without them.
DEFAULT_STICKY_ACTIONS = 0.0
FRAME_STACK = 4
SCREEN_SIZE = 84
# 108,000 frames = 30 minutes of play: the usual cap on an Atari episode.
MAX_EPISODE_FRAMES = 108_000
NOOP_MAX = 30  # up to 30 no-ops after a reset vary the start (Mnih et al. 2015)
# env_config "frame_dtype": float32 in [0, 1] (what RLlib's default CNN takes), or uint8 as
# ALE makes them, a quarter of the bytes, for a module that scales (rlsuite.rl.frames).
FRAME_DTYPES = ("float32", "uint8")


def frame_dtype(config: dict[str, Any]) -> str:
    """The env_config's `frame_dtype`, checked."""
    dtype = str(config.get("frame_dtype", "float32"))
    if dtype not in FRAME_DTYPES:
        from rlsuite.envs.registry import EnvConfigError

        raise EnvConfigError(
            f"env_config frame_dtype={dtype!r} is not one of {', '.join(FRAME_DTYPES)}; "
            "uint8 frames need a module that scales them (rlsuite.rl.frames)"
        )
    return dtype


def game_ids() -> dict[str, str]:
    """`pong` -> `ALE/Pong-v5` for every game whose ROM ships with ale-py."""
    import ale_py
    from ale_py import roms

    gym.register_envs(ale_py)
    ids = {}
    for rom in roms.get_all_rom_ids():
        env_id = "ALE/" + "".join(part.capitalize() for part in rom.split("_")) + "-v5"
        if env_id in gym.registry:
            ids[rom] = env_id
    return ids


def make_atari(game: str, config: dict[str, Any]) -> gym.Env:
    """One ALE game: 84x84 grey in [0, 1], frame skip 4, 30 no-op starts, 4 frames stacked
    on the last axis (RLlib's CNN encoders take [H, W, C]), rewards clipped to [-1, 1].

    `config` keys: `repeat_action_probability` (sticky actions), `full_action_space`,
    `noop_max`, `frame_dtype` ("uint8": frames in [0, 255] as ALE makes them).
    A lost life does not end the episode, so returns are whole-game scores.
    """
    from ray.rllib.env.wrappers.atari_wrappers import FireResetEnv

    scale = frame_dtype(config) == "float32"
    env = gym.make(
        game_ids()[game],
        frameskip=1,  # AtariPreprocessing skips frames and max-pools the last two
        repeat_action_probability=config.get("repeat_action_probability", DEFAULT_STICKY_ACTIONS),
        full_action_space=config.get("full_action_space", False),
        max_episode_steps=MAX_EPISODE_FRAMES,
    )
    actions = env.unwrapped.get_action_meanings()  # type: ignore[attr-defined]
    env = gym.wrappers.AtariPreprocessing(
        env,
        # A few games (Backgammon) have no no-op.
        noop_max=int(config.get("noop_max", NOOP_MAX)) if actions[0] == "NOOP" else 0,
        frame_skip=4,
        screen_size=SCREEN_SIZE,
        grayscale_obs=True,
        scale_obs=scale,
    )
    if actions[1:2] == ["FIRE"]:  # RLlib's FireResetEnv presses action 1
        env = FireResetEnv(env)  # games like Breakout wait for FIRE after a reset
    env = gym.wrappers.FrameStackObservation(env, FRAME_STACK)
    env = channels_last(env)
    env = gym.wrappers.ClipReward(env, -1.0, 1.0)  # Atari rewards are integers: this is sign()
    return env


def channels_last(env: gym.Env) -> gym.Env:
    """[C, H, W] frames to [H, W, C]."""
    space = env.observation_space
    assert isinstance(space, gym.spaces.Box)
    new_space = gym.spaces.Box(
        low=np.moveaxis(space.low, 0, -1),
        high=np.moveaxis(space.high, 0, -1),
        dtype=space.dtype,  # type: ignore[arg-type]
    )
    return gym.wrappers.TransformObservation(env, lambda obs: np.moveaxis(obs, 0, -1), new_space)
