"""`python -m rlsuite.evaluate` behind its flags: find the checkpoint, then evaluate it
as an RL policy (`rl`) or a supervised classifier (`supervised`).

Bad input raises UsageError, one line for the user. A damaged checkpoint names its
damaged file and the trial's newest intact checkpoint before it (`damage`).
"""

from __future__ import annotations

from rlsuite.errors import UsageError
from rlsuite.evaluation import rl, supervised
from rlsuite.evaluation.damage import (
    DamagedCheckpointError,
    check_intact,
    earlier_intact,
    restoring,
)
from rlsuite.evaluation.locate import Target, is_checkpoint, is_supervised_checkpoint, locate
from rlsuite.evaluation.options import EvaluateOptions

RL_ONLY_FLAGS = {
    "video": "--video",
    "export": "--export",
    "env": "--env",
    "explore": "--explore",
    "policies": "--policy",
}
SUPERVISED_ONLY_FLAGS = {
    "dataset": "--dataset",
    "data_path": "--data-path",
    "batch_size": "--batch-size",
}


def evaluate(options: EvaluateOptions) -> None:
    """Evaluate the checkpoint `options.path` stands for and print the results."""
    if options.episodes == 0 and options.export is None:  # would print a checkpoint, no more
        raise UsageError("--episodes 0 plays nothing: it goes with --export, or play 1 or more")
    target = locate(options.path, options.trial, options.checkpoint)
    try:
        # RLlib falls back to default classes on some damaged files and fails only
        # later, while playing: damage is looked for whenever the evaluation fails.
        with restoring(target.checkpoint):
            _evaluate(target, options)
    except DamagedCheckpointError as error:
        raise UsageError(f"{error}{_earlier_hint(error, target, options)}") from None


def _evaluate(target: Target, options: EvaluateOptions) -> None:
    check_intact(target.checkpoint)
    if is_supervised_checkpoint(target.checkpoint):
        _refuse(options, RL_ONLY_FLAGS, "they play RL policies; a classifier is scored on data")
        supervised.evaluate(target, options.dataset, options.data_path, options.batch_size)
        return
    _refuse(options, SUPERVISED_ONLY_FLAGS, "they choose the data of supervised checkpoints")
    rl.run(rl.prepare(options, target), options)


def _earlier_hint(error: DamagedCheckpointError, target: Target, options: EvaluateOptions) -> str:
    """Where to go instead of a damaged checkpoint: the trial's newest intact one before it."""
    earlier = earlier_intact(error.checkpoint)
    if earlier is None:
        return f"; no earlier checkpoint of trial {target.trial} is intact" if target.trial else ""
    how = (
        f"evaluate {earlier}" if is_checkpoint(options.path) else f"add --checkpoint {earlier.name}"
    )
    return f"; the trial's previous checkpoint {earlier.name} is intact: {how}"


def _refuse(options: EvaluateOptions, flags: dict[str, str], why: str) -> None:
    given = [
        flag for name, flag in flags.items() if getattr(options, name) not in (None, False, ())
    ]
    if given:
        verb, pronoun = ("does", "it") if len(given) == 1 else ("do", "them")
        raise UsageError(
            f"{', '.join(given)} {verb} not apply to this checkpoint: {why}; drop {pronoun}"
        )
