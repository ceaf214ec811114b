"""Runs in every Ray worker process of a run as it starts (Ray's worker_process_setup_hook).

It imports RLlib and torch and keeps torch at one thread per actor. It was written to
import them in idle workers ahead of the trial; on Ray 2.60 each trial actor starts a
process of its own instead (a run's worker logs show it), so the imports happen as the
trial's process starts: `python scripts/bench_overhead.py` shows that second start.
"""


def import_rllib() -> None:
    import ray.rllib.algorithms  # noqa: F401
    import torch

    torch.set_num_threads(1)  # one thread per actor: see launcher.ACTOR_ENV_VARS
