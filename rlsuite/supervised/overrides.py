"""`--set FIELD=VALUE` and the scaling flags for a `SupervisedConfig`.

Supervised settings are flat (`--set lr=0.1`, `--set data_path=/data/cifar-10-batches-py`);
values are Python literals read as the field's annotated type and checked against it. The RL scaling
flags map onto Ray Train's: a Train worker is the supervised learner, so
`--num-learners N` is `num_workers=N`, `--num-gpus-per-learner 1` is `use_gpu=True` and
`--num-cpus-per-learner C` is `cpus_per_worker=C`.
"""

from __future__ import annotations

import difflib
import typing
from typing import Any, Literal

from rlsuite.errors import UsageError
from rlsuite.flags import parse_assignment, parse_literal
from rlsuite.options import RunOptions
from rlsuite.supervised.config import SupervisedConfig, field_names

RL_ONLY_FLAGS = ("num_env_runners", "num_envs_per_env_runner", "num_cpus_per_env_runner")


def apply_sets(config: SupervisedConfig, assignments: list[str]) -> SupervisedConfig:
    """`config` with every `FIELD=VALUE` applied, in order."""
    for text in assignments:
        path, raw = parse_assignment(text, "--set")
        if path not in field_names():
            raise UsageError(f"--set {path}: not a supervised setting; {_suggest(path)}")
        config = config.replace(**{path: typed(path, raw)})
    return config


def typed(name: str, raw: str) -> Any:
    """`raw` as the field's annotated type: whole numbers become floats for float fields,
    any text a string for string fields; wrong types are left for `validate.check_config`
    to name."""
    value = parse_literal(raw)
    hint = typing.get_type_hints(SupervisedConfig)[name]
    options = () if typing.get_origin(hint) is Literal else typing.get_args(hint) or (hint,)
    if float in options and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if str in options and value is not None and not isinstance(value, str):
        return raw
    return value


def apply_scaling(config: SupervisedConfig, args: RunOptions) -> SupervisedConfig:
    """The RL scaling flags as Ray Train's: workers, GPU per worker, CPUs per worker."""
    for flag in RL_ONLY_FLAGS:
        if getattr(args, flag, None) is not None:
            raise UsageError(
                f"--{flag.replace('_', '-')}: a supervised experiment has no env runners; "
                "scale it with --num-learners (Ray Train workers)"
            )
    if args.num_learners is not None:
        if args.num_learners < 1:
            raise UsageError("--num-learners 0: a supervised run needs at least 1 Ray Train worker")
        config = config.replace(num_workers=args.num_learners)
    if args.num_gpus_per_learner is not None:
        if args.num_gpus_per_learner not in (0, 1):
            raise UsageError(
                f"--num-gpus-per-learner {args.num_gpus_per_learner:g}: a Ray Train worker "
                "uses 0 or 1 GPU; add workers with --num-learners instead"
            )
        config = config.replace(use_gpu=args.num_gpus_per_learner == 1)
    if args.num_cpus_per_learner is not None:
        config = config.replace(cpus_per_worker=args.num_cpus_per_learner)
    return config


def _suggest(path: str) -> str:
    leaf = path.rsplit(".", 1)[-1]
    if leaf != path and leaf in field_names():
        return f"did you mean {leaf}? (supervised settings are flat: --set {leaf}=...)"
    close = difflib.get_close_matches(path, field_names(), n=3, cutoff=0.5)
    if close:
        return f"did you mean {', '.join(close)}?"
    return f"choose one of {', '.join(field_names())}"
