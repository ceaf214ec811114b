"""ResNet-18 images/s: the suite's Ray Train loop (a full `rlsuite.run`) against a plain
PyTorch loop, in alternating rounds of one run.

python scripts/bench_train.py [--images N] [--batch-size B] [--epochs E] [--rounds R]
    [--gpu] [--json]
"""

from __future__ import annotations

import sys

from benchmarks.common import bench_parser, emit
from rlsuite.flags import positive_int


def main() -> int:
    parser = bench_parser("bench_train.py", __doc__)
    parser.add_argument(
        "--images", type=positive_int, default=2048, help="training images per epoch"
    )
    parser.add_argument("--batch-size", type=positive_int, default=128)
    parser.add_argument("--epochs", type=positive_int, default=3, help="the last epoch is timed")
    parser.add_argument(
        "--rounds", type=positive_int, default=3, help="alternating rounds; medians reported"
    )
    parser.add_argument("--gpu", action="store_true", help="one GPU, bf16 autocast")
    args = parser.parse_args()
    # Imported after parsing: bad input fails at once, not after torch loads.
    from benchmarks.train import measure

    result = measure(args.images, args.batch_size, args.epochs, gpu=args.gpu, rounds=args.rounds)
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
