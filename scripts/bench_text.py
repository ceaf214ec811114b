"""BERT samples/s at sequence 128: the suite's Ray Train loop against a plain PyTorch
loop, in alternating rounds of one run.

python scripts/bench_text.py [--size tiny|base] [--seq-length L] [--batch-size B]
    [--samples N] [--rounds R] [--threads T] [--gpu] [--json]
"""

from __future__ import annotations

import sys

from benchmarks.common import bench_parser, emit
from rlsuite.flags import positive_int


def main() -> int:
    parser = bench_parser("bench_text.py", __doc__)
    parser.add_argument("--size", choices=["tiny", "base"], default="tiny")
    parser.add_argument("--seq-length", type=positive_int, default=128)
    parser.add_argument("--batch-size", type=positive_int, default=32)
    parser.add_argument(
        "--samples", type=positive_int, default=512, help="training sentences per epoch"
    )
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument(
        "--threads", type=positive_int, default=1, help="torch threads of both loops"
    )
    parser.add_argument("--gpu", action="store_true", help="one GPU, bf16 autocast, on both sides")
    args = parser.parse_args()
    # Imported after parsing: bad input fails at once, not after torch and BERT load.
    from benchmarks.text import measure

    result = measure(
        args.size,
        args.seq_length,
        args.batch_size,
        args.samples,
        args.rounds,
        args.threads,
        args.gpu,
    )
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
