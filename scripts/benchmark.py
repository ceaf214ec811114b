"""The benchmark table, docs/benchmarks.md: every experiment in experiments/ as a row (and
a few rows that run a file at a small stated budget under a name of their own), measured
over seeds (final score IQM with its 95% interval, mean, std, env steps, wall time, env
steps per second, the machine, the versions, the command, a learning curve) or marked
"not measured here"; and `--check`, a regression gate on the fast rows.

Each row runs as `python -m rlsuite.run experiments/FILE.py --seeds N ...` (FILE: the
row's NAME for most rows; a sweep or PBT population: one run per seed) into
results/benchmarks/NAME, after the command that writes its data where it has one, is
scored with rlsuite's report code, and is recorded in docs/benchmarks.json; the page is
written from that JSON and the rows (scripts/benchmarks/table.py). `--only NAME` measures
NAME and keeps every other record. Without `--only`, every row that fits a 2-CPU machine
runs, one after another; `--budget-minutes M` leaves out rows whose estimated minutes
(seeds x the row's estimate) exceed M, printing a line for each. Rows that need more (a
GPU, a cluster, a data set) run only when `--only` names them.

The gate: measuring a fast row (ppo_cartpole, dqn_cartpole, sac_pendulum, mappo_spread)
also records a short run of it at its check stop (`--record-check` records only that).
`--check` runs each fast row at that stop again with the recorded seeds and prints PASS or
FAIL per row: exit 1 when a row's IQM falls outside its recorded 95% interval. A fast row
with no usable record is named, with the command that records it, and left out; exit 2
(before running anything) when no row has one, or when `--only` names one without. CI runs none of this: each row takes
minutes to hours.

python scripts/benchmark.py [--only NAME ...] [--seeds N] [--budget-minutes M]
    [--check | --record-check | --list] [--output docs/benchmarks.md] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.common import ROOT, bench_parser
from benchmarks.table import BY_NAME, DEFAULT_SEEDS, ROWS, Plan, Row, fast_rows, plan
from benchmarks.table_records import Records, missing_check, missing_checks
from benchmarks.table_render import list_lines
from rlsuite.errors import UsageError
from rlsuite.flags import Parser, positive_float, positive_int
from rlsuite.outputs import check_output_file

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def build_parser() -> Parser:
    parser = bench_parser("benchmark.py", __doc__)
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(BY_NAME),
        metavar="NAME",
        help="a row's name (its experiment file's stem, or its own for a row that runs a "
        "file at a stated budget; repeatable; default: every row that fits a 2-CPU machine)",
    )
    parser.add_argument(
        "--seeds", type=positive_int, help=f"seeds per row (default {DEFAULT_SEEDS})"
    )
    parser.add_argument(
        "--budget-minutes",
        type=positive_float,
        metavar="M",
        help="leave out rows whose estimated minutes for all seeds exceed M",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="the regression gate on the fast rows")
    mode.add_argument(
        "--record-check",
        action="store_true",
        help="record only the fast rows' check runs (what --check compares against)",
    )
    mode.add_argument(
        "--list",
        action="store_true",
        help="print the rows (their stops, recorded or estimated minutes) and run nothing",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=ROOT / "docs" / "benchmarks.md",
        help="the page; its records go beside it (.json) and its figures under its stem "
        "(default docs/benchmarks.md)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    rows = _check_flags(parser, args)
    records_path = args.output.with_suffix(".json")
    try:
        if args.list:
            print("\n".join(list_lines(rows, Records.load(records_path))))
            return 0
        check_output_file(args.output, "--output")
        check_output_file(records_path, "--output")
        records = Records.load(records_path)
        if args.check:  # before anything runs
            rows, ungated = _gated_rows(rows, records, named=bool(args.only))
    except UsageError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    # Imported after every check: bad input fails at once, not after RLlib and torch load.
    from benchmarks import table_run

    out = sys.stderr if args.json else sys.stdout  # --json: stdout holds only the JSON
    if args.check:
        for line in ungated:
            print(line, file=out, flush=True)
        outcomes = table_run.check_rows(rows, records, out)
        if args.json:
            print(json.dumps([o.to_json() for o in outcomes], indent=1))
        return 0 if all(o.passed for o in outcomes) else EXIT_FAILED
    seeds = args.seeds or DEFAULT_SEEDS
    chosen = Plan(rows, []) if args.record_check else plan(args.only, seeds, args.budget_minutes)
    for line in chosen.skipped:
        print(line, file=out, flush=True)
    failed = table_run.record_rows(
        chosen.rows, seeds, records, args.output, checks_only=args.record_check, out=out
    )
    if args.json:
        measured = [r.name for r in chosen.rows if r.name not in failed]
        print(json.dumps(_measured_json(records, measured, chosen.skipped, failed), indent=1))
    else:
        print(f"table: {args.output} (records: {records_path})")
    return EXIT_FAILED if failed else 0


def _measured_json(
    records: Records, names: list[str], skipped: list[str], failed: list[str]
) -> dict[str, object]:
    return {
        "rows": {name: records.rows[name].to_json() for name in names if name in records.rows},
        "checks": {
            name: records.checks[name].to_json() for name in names if name in records.checks
        },
        "skipped": skipped,
        "failed": failed,
    }


def _gated_rows(rows: list[Row], records: Records, named: bool) -> tuple[list[Row], list[str]]:
    """The rows `--check` can gate, and a line for each fast row it cannot (no usable record).
    Rows named with `--only` must all have one; UsageError when they do not, or when no row
    has one."""
    usable = [row for row in rows if missing_check(row.name, row.check_stop, records) is None]
    if named or not usable:
        problem = missing_checks([(row.name, row.check_stop) for row in rows], records)
        if problem is not None:
            raise UsageError(problem)
    ungated = [
        f"not gated: {missing_check(row.name, row.check_stop, records)}"
        for row in rows
        if row not in usable
    ]
    return usable, ungated


def _check_flags(parser: Parser, args: argparse.Namespace) -> list[Row]:
    """The rows the flags select; one line and exit 2 for flags that do not go together."""
    if args.output.suffix != ".md":
        parser.error(f"--output {args.output}: give a markdown file name (NAME.md)")
    if not (args.check or args.record_check):
        return [BY_NAME[name] for name in args.only] if args.only else list(ROWS)
    flag = "--check" if args.check else "--record-check"
    fast = fast_rows()
    slow = [name for name in args.only or [] if BY_NAME[name] not in fast]
    if slow:
        names = ", ".join(row.name for row in fast)
        parser.error(f"{flag}: {', '.join(slow)} has no check run (the fast rows: {names})")
    if args.check and (args.seeds or args.budget_minutes is not None):
        parser.error(
            "--check runs each fast row with its recorded seeds, within no budget; drop --seeds and --budget-minutes"
        )
    if args.budget_minutes is not None:
        parser.error(
            "--record-check runs the fast rows' short check runs, within no budget; drop --budget-minutes"
        )
    return [BY_NAME[name] for name in args.only] if args.only else fast


if __name__ == "__main__":
    sys.exit(main())
