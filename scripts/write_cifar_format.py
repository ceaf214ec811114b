"""Writes a small data set in CIFAR-10's python format (data_batch_1..5 and test_batch) of
the suite's learnable synthetic images at 32x32: what the benchmark table's
`resnet18_cifar_format` row trains on, written before its runs (why and how:
scripts/benchmarks/cifar_format.py). Nothing is downloaded; the same arguments write the
same bytes.

python scripts/write_cifar_format.py DIR --train-images N --test-images N [--seed S]
"""

import sys

from benchmarks.cifar_format import main

if __name__ == "__main__":
    sys.exit(main())
