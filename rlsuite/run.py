"""`python -m rlsuite.run EXPERIMENT_FILE [flags]`: run one experiment through Ray Tune.

Exit codes: 0 done, 1 a trial failed or (`--as-test`) missed its stop return, 2 bad input,
130 interrupted (continue with `--resume`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from ray import tune
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.tune import ResultGrid

from rlsuite import launcher, multiagent, validate
from rlsuite.cli import build_parser
from rlsuite.errors import UsageError
from rlsuite.experiment import Experiment
from rlsuite.launcher import Launch
from rlsuite.loader import load_experiment
from rlsuite.overrides import apply_sets
from rlsuite.progress import best_value, summarize, was_interrupted, write_summary
from rlsuite.smoke import smoke
from rlsuite.supervised import overrides as supervised_overrides
from rlsuite.supervised import validate as supervised_validate
from rlsuite.supervised.config import SupervisedConfig

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        experiment, launch, threshold = prepare(args)
        results = launcher.run(experiment, launch)  # checks cluster resources before trials
    except UsageError as error:
        print(f"rlsuite.run: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    summaries = summarize(results, experiment.metric)
    for summary in summaries:
        print(summary.line())
    write_summary(
        launch.experiment_dir / "summary.json",
        summaries,
        experiment=launch.name,
        metric=experiment.metric,
        mode=experiment.mode,
    )
    print(f"results: {launch.experiment_dir}  (tensorboard --logdir {launch.storage_path})")
    if was_interrupted(results):
        print(f"interrupted: continue with  {_resume_command(args)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if any(s.error for s in summaries):
        return 1
    if threshold is not None:
        return _as_test(results, *threshold)
    return 0


def _resume_command(args: argparse.Namespace) -> str:
    parts = ["python -m rlsuite.run", args.experiment_file, "--resume"]
    if args.name:
        parts += ["--name", args.name]
    if args.storage_path != build_parser().get_default("storage_path"):
        parts += ["--storage-path", args.storage_path]
    return " ".join(parts)


def prepare(
    args: argparse.Namespace,
) -> tuple[Experiment, Launch, tuple[str, float] | None]:
    """The experiment as it will run, where it runs, and the `--as-test` return to reach."""
    path = Path(args.experiment_file)
    experiment = load_experiment(path)
    file_stop = experiment.stop
    if args.smoke:
        experiment = smoke(experiment)
    experiment = apply_flags(experiment, args)
    launch = Launch(
        name=args.name or path.stem,
        storage_path=Path(args.storage_path).expanduser().absolute(),
        address=args.address,
        resume=args.resume,
        max_concurrent_trials=args.max_concurrent_trials,
    )
    if isinstance(experiment.config, SupervisedConfig):
        supervised_validate.check_experiment(experiment, launch.address)
    else:
        validate.check_env(experiment.config)
        validate.check_config(experiment.config)
        multiagent.check_multi_agent(experiment.config)
        validate.check_gpus(experiment.config, launch.address)
    validate.check_checkpoint_cadence(experiment)
    validate.check_stop(experiment.stop)
    validate.check_storage(launch.storage_path)
    if launch.resume:
        validate.check_resumable(launch.experiment_dir)
    threshold = None
    if args.as_test:
        threshold = validate.return_threshold(experiment.stop) or validate.return_threshold(
            file_stop
        )
        if threshold is None:
            raise UsageError(
                "--as-test: the experiment's stop has no return to reach; add one to its `stop`"
            )
    return experiment, launch, threshold


def _absolute_paths(config: SupervisedConfig) -> SupervisedConfig:
    """`data_path` and `model_path` relative to where the command runs: Ray's Train
    workers do not run there, so a relative path would miss (URIs pass unchanged)."""
    changes = {}
    for name in ("data_path", "model_path"):
        value = getattr(config, name)
        if isinstance(value, str) and "://" not in value:
            changes[name] = str(Path(value).expanduser().absolute())
    return config.replace(**changes)


def apply_flags(experiment: Experiment, args: argparse.Namespace) -> Experiment:
    """The experiment with `--set`, scaling, seed, stop and checkpoint flags applied."""
    search = dict(experiment.search)
    if args.seeds:
        first = args.seed or 0
        search["seed"] = tune.grid_search(list(range(first, first + args.seeds)))
    config: AlgorithmConfig | SupervisedConfig
    if isinstance(experiment.config, SupervisedConfig):
        config = supervised_overrides.apply_sets(experiment.config, args.sets)
        config = supervised_overrides.apply_scaling(config, args)
        config = _absolute_paths(config)
        if args.seed is not None and not args.seeds:
            config = config.replace(seed=args.seed)
    else:
        config = _rl_flags(experiment.config, args)
    return dataclasses.replace(
        experiment,
        config=config,
        search=search,
        stop=validate.parse_stops(args.stops) or experiment.stop,
        num_samples=args.num_samples or experiment.num_samples,
        checkpoint_every=args.checkpoint_every or experiment.checkpoint_every,
    )


def _rl_flags(config: AlgorithmConfig, args: argparse.Namespace) -> AlgorithmConfig:
    config = apply_sets(config, args.sets)
    runners = {
        "num_env_runners": args.num_env_runners,
        "num_envs_per_env_runner": args.num_envs_per_env_runner,
        "num_cpus_per_env_runner": args.num_cpus_per_env_runner,
    }
    learners = {
        "num_learners": args.num_learners,
        "num_gpus_per_learner": args.num_gpus_per_learner,
        "num_cpus_per_learner": args.num_cpus_per_learner,
    }
    config.env_runners(**{k: v for k, v in runners.items() if v is not None})
    config.learners(**{k: v for k, v in learners.items() if v is not None})
    if args.seed is not None and not args.seeds:
        config.debugging(seed=args.seed)
    return config


def _as_test(results: ResultGrid, metric: str, threshold: float) -> int:
    values = [best_value(results[i], metric) for i in range(len(results))]
    best = max((v for v in values if v is not None), default=None)
    if best is not None and best >= threshold:
        print(f"as-test: passed, {metric} reached {best:.1f} >= {threshold:g}")
        return 0
    print(f"as-test: failed, {metric} reached {best} < {threshold:g}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
