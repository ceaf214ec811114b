"""`python -m rlsuite.run EXPERIMENT_FILE [flags]`: run one experiment through Ray Tune.

A thin parser over `rlsuite.launch` (rlsuite/launcher/api.py). Exit codes: 0 done, 1 a
trial failed, the env raised while it was built, or (`--as-test`) the run missed its stop
return; 2 bad input, 130 interrupted, 143 stopped by SIGTERM (both: continue with
`--resume`).
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import traceback

from rlsuite.errors import EnvFailed, UsageError
from rlsuite.flags import (
    Parser,
    exit_with,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
)
from rlsuite.launcher import run_dirs
from rlsuite.launcher.api import run_prepared
from rlsuite.launcher.prepare import load_and_prepare
from rlsuite.launcher.shutdown import EXIT_TERMINATED, SHUTDOWN
from rlsuite.options import DEFAULT_STORAGE_PATH, RunOptions
from rlsuite.tracebacks import first_cause

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    resume = _resume_command(sys.argv[1:] if argv is None else argv)
    started: list[bool] = []

    def start() -> None:
        started.append(True)
        if not args.verbose:
            print(f"logs: {prepared.launch.logs_dir}/ (Ray's own output; --verbose shows it here)")

    try:
        prepared = load_and_prepare(args.experiment_file, RunOptions.from_args(args))
        SHUTDOWN.resume_hint = resume
        run = run_prepared(prepared, on_start=start)  # checks cluster resources before trials
    except UsageError as error:
        print(f"rlsuite.run: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except EnvFailed as error:  # before Ray: the env's traceback, then one line naming it
        printed = "".join(traceback.format_exception(error.__cause__ or error))
        print(printed, file=sys.stderr, end="")
        print(f"rlsuite.run: {error}: {first_cause(printed)}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as interrupt:  # before the suite's handling, or a third
        _end_on_next_interrupt()
        if not started:
            print("interrupted before the run started: nothing written", file=sys.stderr)
        elif isinstance(interrupt, run_dirs.InterruptedBeforeStart):  # while Ray started
            aside = f"; {interrupt}" if str(interrupt) else ""  # a run --overwrite moved
            print(
                "interrupted before the first trial started: nothing to resume; run the "
                f"same command again{aside}",
                file=sys.stderr,
            )
        else:  # a Ctrl-C while Tune stopped the trials
            print(
                "interrupted: the trials stopped without a last checkpoint; continue from "
                f"their last ones with  {resume}",
                file=sys.stderr,
            )
        return EXIT_INTERRUPTED
    for summary in run.summaries:
        print(summary.line())
    storage = prepared.launch.storage_path
    print(f"results: {run.experiment_dir}  (tensorboard --logdir {storage})")
    if run.interrupted:
        _end_on_next_interrupt()
        cause = "stopped by SIGTERM" if run.terminated else "interrupted"
        print(f"{cause}: continue with  {resume}", file=sys.stderr)
        return EXIT_TERMINATED if run.terminated else EXIT_INTERRUPTED
    if run.failed:
        return EXIT_FAILED
    if run.as_test_line:
        print(run.as_test_line, file=sys.stdout if run.passed else sys.stderr)
        return 0 if run.passed else EXIT_FAILED
    return 0


def _end_on_next_interrupt() -> None:
    """One more Ctrl-C while Ray shuts down (at exit) ends the process quietly rather
    than with Ray's traceback from inside its clean-up: the run's files are written."""
    signal.signal(signal.SIGINT, lambda *_: os._exit(EXIT_INTERRUPTED))


def _resume_command(argv: list[str]) -> str:
    """The command that started the run, plus --resume (less --overwrite): the flags that
    shape the trials (--seeds, --num-samples, --set) must be the same for Tune to resume."""
    kept = [arg for arg in argv if arg != "--overwrite"]
    return shlex.join(
        ["python", "-m", "rlsuite.run", *kept, *([] if "--resume" in kept else ["--resume"])]
    )


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
        help="replace the stop criteria, e.g. --stop training_iteration=20 (repeatable; the "
        "first met stops); a target alone, e.g. --stop episode_return_mean=450, keeps the "
        "file's budget of env steps, iterations, time or epochs beside it",
    )
    parser.add_argument(
        "--num-samples",
        type=positive_int,
        help="trials to sample from the experiment's search space (population size under PBT)",
    )
    parser.add_argument(
        "--no-search",
        action="store_true",
        help="run the experiment file's own config values: drop its search space and "
        "searcher; one trial (one per seed with --seeds) unless --num-samples says more",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        help="seed for envs, exploration, network initialisation and the experiment's searcher",
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
        default=DEFAULT_STORAGE_PATH,
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
        "--max-failures",
        type=non_negative_int,
        help="restart a failed trial from its last checkpoint up to N times, and crashed env "
        "runners too (default: the experiment's max_failures, 0 = fail loudly)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted run STORAGE_PATH/NAME from its last checkpoints",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="when STORAGE_PATH/NAME already holds a run, move it aside (to NAME.replaced-TIME) "
        "and start afresh; without it a second run into the same folder is refused",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "--verbose",
        action="store_true",
        help="show Ray's own output too (it always goes to STORAGE_PATH/NAME/logs/)",
    )
    output.add_argument(
        "--quiet", action="store_true", help="print only the summary, nothing per iteration"
    )
    parser.add_argument(
        "--as-test",
        action="store_true",
        help="exit 1 unless a trial reached the experiment's stop return (for CI learning tests)",
    )
    tracking = parser.add_argument_group("tracking (docs/tracking.md)")
    tracking.add_argument(
        "--mlflow",
        metavar="URI",
        help="log each trial as an MLflow run: a tracking server (http://HOST:PORT) or a "
        "database store (sqlite:///mlflow.db; a file store needs MLFLOW_ALLOW_FILE_STORE=true)",
    )
    tracking.add_argument(
        "--mlflow-experiment",
        metavar="NAME",
        help="MLflow experiment of the runs (default: the run's name)",
    )
    tracking.add_argument(
        "--wandb",
        metavar="PROJECT",
        help="log each trial as a Weights & Biases run in PROJECT, grouped by the run's name "
        "(WANDB_MODE=offline: no network)",
    )
    return parser


if __name__ == "__main__":
    exit_with(main())
