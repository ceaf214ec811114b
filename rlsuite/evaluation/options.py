"""`EvaluateOptions`: what `python -m rlsuite.evaluate` takes, as one frozen dataclass.

The flags of the command line have these names, and Python code evaluates with
`rlsuite.evaluation.command.evaluate(EvaluateOptions(path=...))` through the same checks.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EvaluateOptions:
    path: Path
    """An experiment results directory, a trial directory or a checkpoint directory."""
    trial: str | None = None
    """Trial directory name or id in an experiment directory (default: the best one)."""
    checkpoint: str | None = None
    """Checkpoint of the trial, e.g. checkpoint_000003 (default: its latest)."""
    episodes: int = 10
    """Episodes to play; 0 with `export` only exports."""
    explore: bool = False
    """Sample actions from the policy's distribution instead of taking greedy ones."""
    seed: int = 0
    """Episode i resets the env with seed `seed + i`."""
    env: str | None = None
    """Registry env name to play on (default: the env the trial trained on)."""
    video: Path | None = None
    """Record the first `video_episodes` episodes to this MP4 file."""
    video_episodes: int = 1
    export: tuple[str, str] | None = None
    """(format, directory): write the inference network as onnx or torchscript."""
    policies: tuple[str, ...] = ()
    """`ID=PATH` each: play policy ID with its weights from the checkpoint PATH stands for
    (cross-play, `rlsuite.evaluation.crossplay`)."""
    dataset: str | None = None
    """Supervised checkpoints: the data set to score on (default: the trial's)."""
    data_path: str | None = None
    """Supervised checkpoints: that data set's directory (default: the trial's)."""
    batch_size: int | None = None
    """Supervised checkpoints: examples per forward pass (default: the trial's)."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> EvaluateOptions:
        """The options of a parsed `python -m rlsuite.evaluate` command line."""
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in vars(args).items() if k in names}
        known["path"] = Path(known["path"])
        if known.get("export") is not None:
            known["export"] = tuple(known["export"])
        known["policies"] = tuple(known.get("policies") or ())
        return cls(**known)
