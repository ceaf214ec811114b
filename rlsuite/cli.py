"""Command-line flags of `python -m rlsuite.run`, parsed and checked before Ray starts."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class Parser(argparse.ArgumentParser):
    """argparse that reports bad input as one line on stderr, exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_float(text: str) -> float:
    value = non_negative_float(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def build_parser() -> Parser:
    parser = Parser(
        prog="python -m rlsuite.run",
        description="Run one experiment file through Ray Tune on an embedded local Ray "
        "or a cluster. Results, TensorBoard logs and checkpoints go to "
        "STORAGE_PATH/NAME/.",
    )
    parser.add_argument(
        "experiment_file",
        help="path of a file in experiments/, e.g. experiments/ppo_cartpole.py",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="shrink the experiment to a CPU run of seconds (two tiny iterations, at most two trials)",
    )
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="set an RLlib config value, e.g. --set training.lr=1e-4 or --set environment.env=atari/breakout (repeatable; values are Python literals checked against the current type)",
    )
    parser.add_argument(
        "--stop",
        dest="stops",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="replace the stop criteria, e.g. --stop training_iteration=20 or --stop episode_return_mean=450 (repeatable)",
    )
    parser.add_argument(
        "--num-samples",
        type=positive_int,
        help="trials to sample from the experiment's search space (population size under PBT)",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        help="seed for envs, exploration and network initialisation",
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        help="run the same config as N trials seeded SEED..SEED+N-1 (SEED from --seed, default 0), for results over seeds",
    )
    parser.add_argument(
        "--name",
        help="results folder name under the storage path (default: the experiment file's name)",
    )
    parser.add_argument(
        "--storage-path",
        default="./results",
        help="where results go (default ./results; a shared file system on a cluster)",
    )
    parser.add_argument(
        "--address",
        help="join a running Ray cluster ('auto' or ray://HOST:PORT) instead of starting a local one",
    )
    parser.add_argument(
        "--max-concurrent-trials",
        type=positive_int,
        help="trials running at once (default: as many as the resources allow)",
    )
    parser.add_argument(
        "--num-env-runners",
        type=non_negative_int,
        help="env runners (rollout actors); 0 samples in the trainer's process",
    )
    parser.add_argument(
        "--num-envs-per-env-runner",
        type=positive_int,
        help="vectorised envs stepped by each env runner",
    )
    parser.add_argument(
        "--num-learners",
        type=non_negative_int,
        help="learner actors; 0 trains in the trainer's process",
    )
    parser.add_argument(
        "--num-gpus-per-learner",
        type=non_negative_float,
        help="GPUs for each learner (or for the local learner when --num-learners 0)",
    )
    parser.add_argument(
        "--num-cpus-per-env-runner",
        type=positive_float,
        help="CPUs reserved for each env runner",
    )
    parser.add_argument(
        "--num-cpus-per-learner",
        type=positive_float,
        help="CPUs reserved for each learner",
    )
    parser.add_argument(
        "--checkpoint-every",
        type=positive_int,
        help="training iterations between checkpoints (one more is written at the end)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted run STORAGE_PATH/NAME from its last checkpoints",
    )
    parser.add_argument(
        "--as-test",
        action="store_true",
        help="exit 1 unless a trial reached the experiment's stop return (for CI learning tests)",
    )
    return parser
