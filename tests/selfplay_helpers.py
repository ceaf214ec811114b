"""Self-play test helpers: the Connect Four experiment's seats and league, a smoke-sized
self-play Algorithm, and the check that env runners act with a module's learner weights."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from tests.helpers import ROOT, local_ray

EXPERIMENT = ROOT / "experiments" / "selfplay_connect4.py"
SEATS = ("player_0", "player_1")
LEAGUE = ("heuristic",)  # the experiment's fixed pool member


@contextlib.contextmanager
def selfplay_algorithm(config: Any, remote_env_runners: int = 0) -> Iterator[Any]:
    """A smoke-sized self-play Algorithm of `config`, everything in this process unless
    `remote_env_runners`, on a local Ray. Its callback logs win rates but never snapshots
    (no win rate exceeds 1): the tests add snapshots themselves."""
    from rlsuite import envs
    from rlsuite.multiagent.selfplay import selfplay_callback
    from rlsuite.rl.smoke import smoke_config

    config = smoke_config(config)
    config.env_runners(num_env_runners=remote_env_runners)
    config.callbacks(selfplay_callback(win_rate_threshold=1.0, evaluation_interval=0))
    envs.register(config.env)
    with local_ray():
        algorithm = config.build_algo()
        try:
            yield algorithm
        finally:
            algorithm.stop()


def assert_runners_act_with(algorithm: Any, module_id: str, weights: dict[str, Any]) -> None:
    """Every env runner's copy of `module_id` acts with `weights` (a module's learner
    weights): each of its inference-only tensors equals the one of the same name."""
    import torch

    states = algorithm.env_runner_group.foreach_env_runner(
        lambda runner: runner.module[module_id].get_state(inference_only=True),
        local_env_runner=True,
    )
    assert states
    for state in states:
        assert any(name.startswith("pi.") for name in state), sorted(state)  # the policy's
        for name, tensor in state.items():
            assert torch.equal(torch.as_tensor(tensor), torch.as_tensor(weights[name])), name
