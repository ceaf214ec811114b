"""`python -m rlsuite.report RESULTS_DIR [RESULTS_DIR ...]`: markdown report with figures.

Each results directory is one config and its trials are seeds of it (`--seeds N` on
the launcher); several directories are configs to compare. Writes report.md,
learning_curves.png, final_scores.png (and pbt_<name>.png for PBT runs; for a sweep,
whose trials differ in more than their seed, sweep_<name>.png with the best metric after
each finished trial and a table of the trials ranked by it; for a multi-agent run with two
policies or more, policies_<name>.png and a table of each policy's return). Exit 2 on bad
input: missing, damaged or foreign results directories, an output that cannot be written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rlsuite.errors import UsageError
from rlsuite.flags import Parser, exit_with, positive_float
from rlsuite.outputs import check_output_dir
from rlsuite.reporting import markdown, runs

EXIT_BAD_INPUT = 2


def build_parser() -> Parser:
    parser = Parser(prog="python -m rlsuite.report", description=__doc__.split("\n\n")[1])
    parser.add_argument(
        "results",
        nargs="+",
        type=Path,
        help="results directories (results/<name>) written by rlsuite.run",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("report"),
        help="directory for report.md and the PNGs (default ./report)",
    )
    parser.add_argument(
        "--final-env-steps",
        type=positive_float,
        metavar="N",
        help="final scores over the iterations that end within each trial's last N env "
        "steps, to compare configs whose iterations sample different numbers of steps at "
        f"equal env steps (default: each trial's last {runs.FINAL_WINDOW} reported values)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        check_output_dir(args.output, "--output")
        _check_distinct(args.results)
        configs = [runs.load(path) for path in args.results]
        _check_comparable(configs)
        if args.final_env_steps is not None:
            _check_env_steps(configs)
    except UsageError as error:
        print(f"rlsuite.report: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    window = runs.FinalWindow(env_steps=args.final_env_steps)
    path, figures = markdown.write(configs, args.output, window)
    print(f"report: {path} ({', '.join(figure.name for figure in figures)})")
    return 0


def _check_distinct(paths: list[Path]) -> None:
    seen: dict[Path, Path] = {}
    for path in paths:
        first = seen.setdefault(path.resolve(), path)
        if first is not path:
            also = "" if str(first) == str(path) else f" (as {first})"
            raise UsageError(f"{path} is given twice{also}; name each results directory once")


def _check_comparable(configs: list[runs.Config]) -> None:
    labels = [c.label for c in configs]
    if len(set(labels)) < len(labels):
        raise UsageError(
            f"two results directories have the same name ({', '.join(labels)}); give each run its own --name"
        )
    metrics = {c.metric for c in configs}
    if len(metrics) > 1:
        raise UsageError(
            f"the results use different metrics ({', '.join(sorted(metrics))}); report runs of one metric together"
        )


def _check_env_steps(configs: list[runs.Config]) -> None:
    """A window in env steps needs runs that count them (RL, not Ray Train's epochs)."""
    for config in configs:
        if runs.progress([config]).key != runs.ENV_STEPS.key:
            raise UsageError(
                f"--final-env-steps: {config.path} reports no env steps (supervised runs "
                "count epochs); drop the flag to score each trial's last "
                f"{runs.FINAL_WINDOW} reported values"
            )


if __name__ == "__main__":
    exit_with(main())
