"""`--seeds N` runs one config as N trials with seeds 0..N-1; a seed reaches the replay buffer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ray.rllib.algorithms.dqn import DQNConfig

from rlsuite.experiment import Experiment
from rlsuite.rl.workload import RLWorkload
from tests.helpers import local_ray


def test_seeds_run_as_separate_trials(cartpole_seeds_run: Path) -> None:
    """conftest's `ppo_cartpole.py --smoke --seeds 2` run."""
    trials = json.loads((cartpole_seeds_run / "summary.json").read_text())["trials"]
    assert len(trials) == 2 and all(t["status"] == "OK" for t in trials)
    seeds = {
        json.loads((cartpole_seeds_run / t["trial"] / "params.json").read_text())["seed"]
        for t in trials
    }
    assert seeds == {0, 1}


def _buffer_draws(seed: int | None, on_init: list[Any]) -> list[int]:
    """What the replay buffer of a DQN built from the RL workload's param space (as Tune
    builds a trial's Algorithm) draws first, with `seed` set as `--seeds` sets it (inside a
    running Ray)."""
    config = DQNConfig().environment("CartPole-v1").env_runners(num_env_runners=0)
    config.callbacks(on_algorithm_init=on_init)
    experiment = Experiment(config=config, stop={"training_iteration": 1})
    workload = RLWorkload()
    param_space = {**workload.param_space(experiment), "seed": seed}
    algorithm = workload.trainable(experiment)(config=param_space)
    try:
        return list(algorithm.local_replay_buffer.rng.integers(1_000_000, size=8))
    finally:
        algorithm.stop()


def test_seed_reaches_the_replay_buffer_after_the_users_callbacks() -> None:
    """RLlib 2.60 builds replay buffers unseeded: two `--seed 0` off-policy runs sampled
    different batches (maddpg_tag --smoke: iteration-1 returns -90.0 and -5.7)."""
    called: list[str] = []
    with local_ray():  # one Ray for the three builds: each start took ~10 s of CI
        first = _buffer_draws(0, [lambda algorithm, **_: called.append("own")])
        again, other = _buffer_draws(0, []), _buffer_draws(1, [])
    assert called == ["own"]  # the user's on_algorithm_init still runs
    assert again == first
    assert other != first
