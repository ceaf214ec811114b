"""`python -m rlsuite.evaluate PATH [flags]`: play a trained policy and report its returns, or score a trained classifier on validation data.

PATH is an experiment results directory (the best trial's latest checkpoint by the
experiment's metric, or `--trial` and `--checkpoint`), a trial directory, or a
checkpoint directory. `--video out.mp4` records the first episodes, `--export
onnx|torchscript DIR` writes the inference network and checks it acts like the
RLModule. Supervised checkpoints are scored on the validation split they trained with,
or on `--dataset`/`--data-path`. Exit 2 on bad input, damaged checkpoint files
included.

A thin parser over `rlsuite.evaluation.command.evaluate`, which Python code calls with
an `EvaluateOptions`.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from rlsuite.errors import EnvFailed, UsageError
from rlsuite.evaluation.command import evaluate
from rlsuite.evaluation.options import EvaluateOptions
from rlsuite.flags import Parser, exit_with, non_negative_int, positive_int, quiet_restore_logs
from rlsuite.rl.export import ExportMismatchError
from rlsuite.tracebacks import first_cause

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C
DEFAULTS = EvaluateOptions(path=Path())


def build_parser() -> Parser:
    parser = Parser(prog="python -m rlsuite.evaluate", description=__doc__.split("\n\n")[1])
    parser.add_argument(
        "path",
        help="experiment results directory (results/<name>), trial directory or checkpoint_NNNNNN directory",
    )
    parser.add_argument(
        "--trial",
        help="trial directory name or id in an experiment directory (default: the best by the experiment's metric)",
    )
    parser.add_argument(
        "--checkpoint",
        metavar="NAME",
        help="checkpoint of the trial, e.g. checkpoint_000003 (default: the trial's latest)",
    )
    _add_rl_flags(parser)
    supervised = parser.add_argument_group("supervised checkpoints (ResNet, BERT)")
    supervised.add_argument(
        "--dataset",
        help="data set registry name to score on (default: the one the trial trained on)",
    )
    supervised.add_argument(
        "--data-path",
        help="directory of that data set (default: the trial's); its validation split is scored",
    )
    supervised.add_argument(
        "--batch-size", type=positive_int, help="examples per forward pass (default: the trial's)"
    )
    return parser


def _add_rl_flags(parser: Parser) -> None:
    parser.add_argument(
        "--episodes",
        type=non_negative_int,
        default=DEFAULTS.episodes,
        help="episodes to play (default 10; 0 with --export only exports)",
    )
    parser.add_argument(
        "--explore",
        action=argparse.BooleanOptionalAction,
        default=DEFAULTS.explore,
        help="sample actions from the policy's distribution (default: --no-explore, greedy actions)",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=DEFAULTS.seed,
        help="episode i resets the env with seed SEED+i (default 0)",
    )
    parser.add_argument(
        "--env", help="registry env name to play on (default: the env the trial trained on)"
    )
    parser.add_argument(
        "--video",
        type=Path,
        metavar="OUT.mp4",
        help="record the first episodes to this MP4 file (replaced, once they are recorded, "
        "if it exists)",
    )
    parser.add_argument(
        "--video-episodes",
        type=positive_int,
        default=DEFAULTS.video_episodes,
        help="episodes in the video (default 1)",
    )
    parser.add_argument(
        "--export",
        nargs=2,
        metavar=("FORMAT", "DIR"),
        help="write the inference network as onnx or torchscript into DIR",
    )
    parser.add_argument(
        "--policy",
        dest="policies",
        action="append",
        default=[],
        metavar="ID=PATH",
        help="play policy ID with its weights from another run's checkpoint (cross-play; "
        "repeatable)",
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    quiet_restore_logs()
    try:
        evaluate(EvaluateOptions.from_args(args))
    except UsageError as error:
        print(f"rlsuite.evaluate: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except EnvFailed as error:  # the env's traceback, then what failed in one line
        printed = "".join(traceback.format_exception(error.__cause__ or error))
        print(printed, file=sys.stderr, end="")
        print(f"rlsuite.evaluate: {error}: {first_cause(printed)}", file=sys.stderr)
        return EXIT_FAILED
    except ExportMismatchError as error:  # a failed check, not bad input: exit 1, one line
        print(f"rlsuite.evaluate: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:  # a long evaluation (400 games, a video) stopped by Ctrl-C
        print(
            "rlsuite.evaluate: interrupted before it finished: no returns are printed for "
            "the episodes played so far, and a video in progress is not kept",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return 0


if __name__ == "__main__":
    exit_with(main())
