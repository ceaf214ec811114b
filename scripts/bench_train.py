"""Ray Train loop vs plain PyTorch: `python scripts/bench_train.py [--images N] [--batch-size B]
[--epochs E] [--rounds R] [--gpu] [--json]`."""

import argparse

from rlsuite.bench_train import measure

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--images", type=int, default=2048, help="training images per epoch")
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--epochs", type=int, default=3, help="the last epoch is timed")
parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; medians reported")
parser.add_argument("--gpu", action="store_true", help="one GPU, bf16 autocast")
parser.add_argument("--json", action="store_true", help="print the figures as JSON")
args = parser.parse_args()
result = measure(args.images, args.batch_size, args.epochs, gpu=args.gpu, rounds=args.rounds)
print(result.to_json() if args.json else result.report())
