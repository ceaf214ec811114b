"""ResNet-18 on CIFAR-10 with ASHA over learning rate, weight decay and batch size.

The data is CIFAR-10's python version (`cifar-10-batches-py`: data_batch_1..5 and
test_batch) at `data/cifar-10-batches-py`, or `--set data_path=DIR`; nothing is downloaded.
Training follows the standard CIFAR recipe: a 3x3 stem without max-pool, random
4-pixel-padded crops and flips, SGD with momentum 0.9 and a cosine schedule.

Expected: about 93-95% validation accuracy after 200 epochs for the best trial
(kuangliu/pytorch-cifar reports 93.02% for ResNet-18 with lr 0.1, weight decay 5e-4,
batch 128; 95% with the cosine schedule). ASHA stops the weak half of the eight trials
early. Each trial takes one GPU: `--set use_gpu=true` (`--smoke` runs on a CPU).
Not measured here: the accuracy needs a GPU machine and CIFAR-10 (docs/benchmarks.md).
On 2 CPUs the table runs its ResNet-18 at its own values for 3 epochs of 1,024 images
(rows resnet18_synthetic and resnet18_cifar_format, 2026-11-30): validation accuracy IQM
0.197 and 0.166, near chance, as BatchNorm's running statistics lag the weights after 24
steps (docs/supervised.md, "ResNet-18 on two CPUs").
"""

from ray import tune

from rlsuite import ASHA, Experiment, metrics
from rlsuite.supervised import SupervisedConfig

EPOCHS = 200

config = SupervisedConfig(
    model="resnet18",
    cifar_stem=True,  # 32x32 images: a 3x3 stem and no max-pool (as in the CIFAR ResNets)
    dataset="cifar10",
    data_path="data/cifar-10-batches-py",
    num_classes=10,
    image_size=32,
    epochs=EPOCHS,
    batch_size=128,  # kuangliu/pytorch-cifar's value
    optimizer="sgd",
    lr=0.1,
    momentum=0.9,
    weight_decay=5e-4,
    lr_schedule="cosine",
    loader_workers=4,
)

experiment = Experiment(
    config=config,
    stop={metrics.EPOCH: EPOCHS},
    search={
        "lr": tune.loguniform(0.02, 0.4),
        "weight_decay": tune.choice([1e-4, 5e-4, 1e-3]),
        "batch_size": tune.choice([64, 128, 256]),
    },
    scheduler=ASHA(max_t=EPOCHS, grace_period=10, reduction_factor=2),
    num_samples=8,
    metric=metrics.VALIDATION_ACCURACY,
    checkpoint_every=1,
)
