"""Requests/s and p50/p99 latency of `rlsuite.serve` at concurrency 1, 8 and 64 on
localhost, batched against unbatched, with in-process inference as the ceiling.

PATH: a results directory (or trial or checkpoint) of a policy, sent one observation per
request, or of an image classifier (ResNet), sent one PNG per request; default: a
--smoke CartPole run trained first.

python scripts/bench_serve.py [PATH] [--concurrency 1 8 64] [--requests N]
    [--max-seconds S] [--max-batch-size N] [--batch-wait-ms MS] [--proxy serve|haproxy]
    [--client asyncio|threads] [--rounds N] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.common import bench_parser, emit
from benchmarks.serve_client import LOADS
from rlsuite.flags import non_negative_float, positive_float, positive_int


def main() -> int:
    parser = bench_parser("bench_serve.py", __doc__)
    parser.add_argument("path", nargs="?", type=Path, help="results directory to serve")
    parser.add_argument("--concurrency", type=positive_int, nargs="+", default=[1, 8, 64])
    parser.add_argument(
        "--requests", type=positive_int, default=2000, help="per concurrency and mode"
    )
    parser.add_argument(
        "--max-seconds", type=positive_float, default=30.0, help="per concurrency and mode"
    )
    parser.add_argument("--max-batch-size", type=positive_int, default=32)
    parser.add_argument("--batch-wait-ms", type=non_negative_float, default=2.0)
    parser.add_argument(
        "--proxy", choices=("serve", "haproxy"), default="serve", help="rlsuite.serve's --proxy"
    )
    parser.add_argument(
        "--client",
        choices=tuple(LOADS),
        default="asyncio",
        help="the load generator (benchmarks/serve_client.py): asyncio, light on the CPU the server shares; threads, the first client",
    )
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=1,
        help="rounds, each starting every server in turn: medians with their spread (default 1)",
    )
    args = parser.parse_args()
    if args.path is not None and not args.path.is_dir():
        parser.error(f"{args.path}: no such directory; give a results directory")
    # Imported after parsing: bad input fails at once, not after Ray and torch load.
    from benchmarks.serve import measure
    from benchmarks.serve_payloads import NotBenchmarked

    try:
        result = measure(
            args.path,
            args.concurrency,
            args.requests,
            args.max_seconds,
            args.max_batch_size,
            args.batch_wait_ms,
            args.proxy,
            args.client,
            args.rounds,
        )
    except NotBenchmarked as error:
        print(f"bench_serve.py: {error}", file=sys.stderr)
        return 2
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
