"""BERT samples/s at sequence 128 through the suite's Ray Train loop and a plain PyTorch
loop, in one run: `python scripts/bench_text.py [--size tiny|base] [--gpu] [--rounds N] [--json]`."""

import argparse
import json

from rlsuite.bench_text import as_dict, run_bench

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--size", choices=["tiny", "base"], default="tiny")
parser.add_argument("--seq-length", type=int, default=128)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--samples", type=int, default=512, help="training sentences per epoch")
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--threads", type=int, default=1, help="torch threads of both loops")
parser.add_argument("--gpu", action="store_true", help="one GPU, bf16 autocast, on both sides")
parser.add_argument("--json", action="store_true", help="print the figures as JSON")
args = parser.parse_args()
result = run_bench(
    args.size, args.seq_length, args.batch_size, args.samples, args.rounds, args.threads, args.gpu
)
print(json.dumps(as_dict(result)) if args.json else result.line())
