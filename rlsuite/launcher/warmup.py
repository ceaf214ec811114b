"""Runs in every Ray worker process of a run as it starts (Ray's worker_process_setup_hook).

Ray starts idle workers while the driver is still building the Tuner; importing RLlib
and torch there, rather than after Tune has placed the trial on the worker, takes the
imports off the path to the first training iteration.
"""


def import_rllib() -> None:
    import ray.rllib.algorithms  # noqa: F401
    import torch

    torch.set_num_threads(1)  # one thread per actor: see launcher.ACTOR_ENV_VARS
