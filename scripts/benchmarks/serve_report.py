"""bench_serve's report: each load's line, then per concurrency the medians over rounds
with their spread, and batched over unbatched as a ratio of medians, withheld where a
side's rounds differ by more than 25% (issue 21's rule, benchmarks/common.py)."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from benchmarks.common import (
    WITHHELD,
    load_line,
    ratio_of_medians,
    rounds_title,
    spread_note,
)

if TYPE_CHECKING:
    from benchmarks.serve import Load, ServeBenchResult

FLOOR = "serve floor"
"""Serve's HTTP path with no model (benchmarks/serve_floor.py): what batching cannot beat."""


def rates(loads: list[Load], mode: str, concurrency: int) -> list[float]:
    """`mode`'s requests/s at `concurrency`, one per round."""
    return [x.requests_per_s for x in loads if x.mode == mode and x.concurrency == concurrency]


def speedup(loads: list[Load], concurrency: int, over: str = "unbatched") -> float | None:
    batched, other = rates(loads, "batched", concurrency), rates(loads, over, concurrency)
    if not batched or not other or not statistics.median(other):
        return None
    return ratio_of_medians(batched, other)


def report(result: ServeBenchResult) -> str:
    loads = result.loads
    lines = [
        f"checkpoint {result.checkpoint} ({result.kind}), --proxy {result.proxy}, --client {result.client}, batched: --max-batch-size {result.max_batch_size}; {rounds_title(result.rounds)}",
        f"{'round':>5} {'mode':<11} {'conc':>5} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'answered':>9} {'failed':>7} {'client CPU ms/req':>18}",
    ]
    for load in loads:
        lines.append(
            f"{load.round:>5} {load.mode:<11} {load.concurrency:>5} {load.requests_per_s:>9.1f} {load.p50_ms:>8.1f} {load.p99_ms:>8.1f} {load.requests:>9} {load.failed:>7} {load.client_cpu_ms:>18.3f}"
        )
        if load.failures:
            kinds = ", ".join(f"{n} {what}" for what, n in sorted(load.failures.items()))
            lines.append(f"  failed: {kinds}")
    modes = list(dict.fromkeys(load.mode for load in loads))
    for concurrency in sorted({load.concurrency for load in loads}):
        for mode in modes:
            at = [x for x in loads if x.mode == mode and x.concurrency == concurrency]
            if result.rounds > 1 and at:
                lines.append(f"concurrency {concurrency}, {mode}: {_medians(at)}")
        if rates(loads, "batched", concurrency) and rates(loads, "unbatched", concurrency):
            ratio, of_floor = speedup(loads, concurrency), speedup(loads, concurrency, FLOOR)
            floor = "" if of_floor is None else f", {of_floor:.0%} of the serve floor's requests/s"
            times = f"{ratio:.2f}x unbatched" if ratio is not None else f"/ unbatched: {WITHHELD}"
            lines.append(f"concurrency {concurrency}: batched {times}{floor}")
    lines.append(
        f"ceiling (in-process model): {result.ceiling_single_per_s:.0f} calls/s of 1 input, {result.ceiling_batch_obs_per_s:.0f} inputs/s in calls of {result.batch}"
    )
    lines.append(load_line(result.machine_before, result.machine_after))
    return "\n".join(lines)


def _medians(loads: list[Load]) -> str:
    rps = [x.requests_per_s for x in loads]
    p50, p99 = [x.p50_ms for x in loads], [x.p99_ms for x in loads]
    return (
        f"{statistics.median(rps):.1f} req/s{spread_note(rps, lambda v: f'{v:.1f}')}, "
        f"p50 {statistics.median(p50):.1f} ms{spread_note(p50, lambda v: f'{v:.1f}')}, "
        f"p99 {statistics.median(p99):.1f} ms{spread_note(p99, lambda v: f'{v:.1f}')}"
    )
