"""The baselines of `scripts/bench.py`: what a user writes with RLlib alone.

Each is RLlib's default config for the task, with only the settings that issue 6 names as
RLlib's default path (for Atari: `wrap_atari_for_new_api_stack`, one env runner with 8
envs, 2,000-sample batches, 2 epochs). They run in a fresh process as a plain RLlib
script: `ray.init()` with Ray's defaults, `config.build_algo()`, `algo.train()` in a loop.
Nothing from rlsuite's launcher, registry or CPU defaults is used.

Run as `python -m benchmarks.baselines CASE ENV_STEPS TARGET|none OUT smoke|full [rlsuite]`
with scripts/ on PYTHONPATH (`throughput.run_baseline` does).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

PONG = "rllib-default-pong"


def ppo_atari() -> AlgorithmConfig:
    from ray.rllib.algorithms.ppo import PPOConfig

    return (
        PPOConfig()
        .environment(PONG, clip_rewards=True)
        .env_runners(num_env_runners=1, num_envs_per_env_runner=8)
        .training(train_batch_size_per_learner=2000, num_epochs=2)
    )


def dqn_atari() -> AlgorithmConfig:
    from ray.rllib.algorithms.dqn import DQNConfig

    return DQNConfig().environment(PONG, clip_rewards=True)


def ppo_cartpole() -> AlgorithmConfig:
    from ray.rllib.algorithms.ppo import PPOConfig

    return PPOConfig().environment("CartPole-v1")


def sac_pendulum() -> AlgorithmConfig:
    from ray.rllib.algorithms.sac import SACConfig

    return SACConfig().environment("Pendulum-v1")


BASELINES: dict[str, Callable[[], AlgorithmConfig]] = {
    "ppo_atari": ppo_atari,
    "ppo_atari_same_settings": ppo_atari,
    "dqn_atari": dqn_atari,
    "ppo_cartpole": ppo_cartpole,
    "sac_pendulum": sac_pendulum,
}


def register_pong() -> None:
    """Pong as RLlib's Atari examples build it, with the suite's 84x84 and 4-frame stack
    so that both sides feed the same observation to their networks."""
    import gymnasium as gym
    from ray.tune.registry import register_env

    def create(config: dict[str, Any]) -> gym.Env:
        import ale_py  # in the env runner's process: registers the ALE/ ids there
        from ray.rllib.env.wrappers.atari_wrappers import wrap_atari_for_new_api_stack

        gym.register_envs(ale_py)
        env = gym.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0, **config)
        return wrap_atari_for_new_api_stack(env, dim=84, framestack=4)

    register_env(PONG, create)


def with_rlsuite_machinery(config: AlgorithmConfig) -> AlgorithmConfig:
    """The baseline's algorithm settings and network as the suite runs them: its Pong
    (the fast path, same frames but scaled to [0, 1]) in the trial's own process."""
    config = config.copy(copy_frozen=False)
    config.environment("atari/pong")
    config.env_runners(num_env_runners=0, gym_env_vectorize_mode="vector_entry_point")
    return config


def train_with_rlsuite(
    case: str, env_steps: int, target_return: float | None, storage: str, smoke: bool
) -> None:
    """The baseline's config through rlsuite's launcher (`rlsuite.launch`: Tune, one torch
    thread per process); results go to `storage/case/<trial>/result.json`."""
    import rlsuite
    from rlsuite import metrics

    stop = {metrics.ENV_STEPS_SAMPLED_LIFETIME: float(env_steps)}
    if target_return is not None:
        stop[metrics.EPISODE_RETURN_MEAN] = target_return
    experiment = rlsuite.Experiment(config=with_rlsuite_machinery(BASELINES[case]()), stop=stop)
    run = rlsuite.launch(experiment, name=case, storage_path=storage, smoke=smoke)
    if run.failed:
        sys.exit(f"{case}: the trial failed: {run.summaries[0].error}")


def train(case: str, env_steps: int, target_return: float | None, out: str, smoke: bool) -> None:
    """Train the baseline of `case` until `env_steps` or `target_return`; every result
    goes to `out` as one JSON line, like Tune's result.json."""
    import ray

    from rlsuite.launcher.smoke import ITERATIONS
    from rlsuite.rl.smoke import smoke_config

    config = BASELINES[case]()
    if smoke:  # the same shrinking as `rlsuite.run --smoke`, for the benchmark's own test
        config = smoke_config(config)
    # What `ray.init()` does on a machine without a `ray start` cluster, which it would join.
    ray.init(address="local")
    register_pong()
    algo = config.build_algo()
    with open(out, "w") as rows:
        for iteration in range(1, sys.maxsize):
            result = algo.train()
            rows.write(json.dumps(result, default=_plain) + "\n")
            rows.flush()
            if _done(result, env_steps, target_return):
                break
            if smoke and iteration >= ITERATIONS:
                break
    algo.stop()
    ray.shutdown()


def _done(result: dict[str, Any], env_steps: int, target: float | None) -> bool:
    """The suite's side stops on the same two criteria through Tune's `stop`."""
    from rlsuite import metrics
    from rlsuite.results import lookup

    steps = lookup(result, metrics.ENV_STEPS_SAMPLED_LIFETIME) or 0
    episode_return = lookup(result, metrics.EPISODE_RETURN_MEAN)
    reached = target is not None and episode_return is not None and episode_return >= target
    return steps >= env_steps or reached


def _plain(value: Any) -> Any:
    """JSON for what train() returns besides dicts and numbers (numpy scalars, sets)."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)


if __name__ == "__main__":
    run = train_with_rlsuite if sys.argv[6:] == ["rlsuite"] else train
    run(
        sys.argv[1],
        int(sys.argv[2]),
        None if sys.argv[3] == "none" else float(sys.argv[3]),
        sys.argv[4],
        sys.argv[5] == "smoke",
    )
