"""Population Based Training of ResNet-18 on CIFAR-10 over learning rate and momentum.

Four trials train `resnet_cifar10.py`'s model and data with a constant learning rate that
PBT schedules instead (Jaderberg et al. 2017): every 5 epochs the worst quarter copies a
best trial's checkpoint (weights, optimizer state, epoch) and continues with its learning
rate and momentum perturbed. After every restore the loop puts the trial's new values into
the optimizer and checks them each epoch; a trial whose optimizer disagrees with its config
fails (`PerturbationIgnoredError`). Checkpoints are written every 5 epochs, on the
perturbation cadence, so exploits copy fresh weights.

Expected: the best trial reaches about 93% validation accuracy in 100 epochs, on par with
the best of `resnet_cifar10.py`'s ASHA sweep at a quarter of its trials (the PBT paper's
claim for its image models; not yet verified here). Four GPUs: `--set use_gpu=true`.
"""

from ray import tune

from rlsuite import PBT, Experiment, metrics
from rlsuite.supervised import SupervisedConfig

EPOCHS = 100
INTERVAL = 5  # epochs between exploits, and between checkpoints

config = SupervisedConfig(
    model="resnet18",
    cifar_stem=True,
    dataset="cifar10",
    data_path="data/cifar-10-batches-py",
    num_classes=10,
    image_size=32,
    epochs=EPOCHS,
    batch_size=128,
    optimizer="sgd",
    lr=0.1,
    momentum=0.9,
    weight_decay=5e-4,
    lr_schedule="constant",  # PBT is the schedule
    loader_workers=4,
)

experiment = Experiment(
    config=config,
    stop={metrics.EPOCH: EPOCHS},
    search={"lr": tune.loguniform(0.01, 0.3)},
    scheduler=PBT(
        hyperparam_mutations={
            "lr": tune.loguniform(0.001, 0.3),
            "momentum": [0.8, 0.9, 0.95, 0.99],
        },
        perturbation_interval=INTERVAL,
    ),
    num_samples=4,
    metric=metrics.VALIDATION_ACCURACY,
    checkpoint_every=INTERVAL,
)
