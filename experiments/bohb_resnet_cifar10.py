"""BOHB over a CIFAR-10 ResNet-18's learning rate, weight decay and batch size, with epochs
as Hyperband's budget.

What the searcher is for: BOHB (Falkner et al. 2018) runs Hyperband's brackets (many
configs for a few epochs, the best third promoted to three times as many, up to 81 epochs)
and picks each new config from a kernel-density model of the results so far instead of at
random. The launcher pairs it with Tune's `HyperBandForBOHB` over the stop's epoch budget;
a paused trial resumes from its checkpoint (written every epoch). Model and data as
`resnet_cifar10.py` (CIFAR-10's python version at `data/cifar-10-batches-py`).

Budget: 48 trials, four at a time, at most 81 epochs each (rungs at 1, 3, 9, 27 and 81
epochs). Trials at a low rung are compared mid-way through their cosine schedule. Result
not yet measured here; the bar is `resnet_cifar10.py`'s 93-95% validation accuracy
(kuangliu/pytorch-cifar). Four GPUs: `--set use_gpu=true`.
"""

from ray import tune

from rlsuite import BOHB, Experiment, metrics
from rlsuite.supervised import SupervisedConfig

EPOCHS = 81  # 3**4: Hyperband's rungs fall on whole epochs with reduction factor 3

config = SupervisedConfig(
    model="resnet18",
    cifar_stem=True,  # 32x32 images: a 3x3 stem and no max-pool (as in the CIFAR ResNets)
    dataset="cifar10",
    data_path="data/cifar-10-batches-py",
    num_classes=10,
    image_size=32,
    epochs=EPOCHS,
    batch_size=128,  # searched; kuangliu/pytorch-cifar's value
    optimizer="sgd",
    lr=0.1,  # searched
    momentum=0.9,
    weight_decay=5e-4,  # searched
    lr_schedule="cosine",
    loader_workers=4,
)

experiment = Experiment(
    config=config,
    stop={metrics.EPOCH: EPOCHS},  # BOHB's budget
    search={
        "lr": tune.loguniform(0.02, 0.4),
        "weight_decay": tune.loguniform(1e-5, 1e-3),
        "batch_size": tune.choice([64, 128, 256]),
    },
    searcher=BOHB(
        max_concurrent=4,  # one trial per GPU
        points_to_evaluate=[{"lr": 0.1, "weight_decay": 5e-4, "batch_size": 128}],
        seed=0,
    ),
    num_samples=48,
    metric=metrics.VALIDATION_ACCURACY,
    checkpoint_every=1,  # Hyperband pauses trials at its rungs: resume from the last epoch
)
