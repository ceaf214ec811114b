"""`--smoke` for supervised configs: synthetic data, a tiny run on one CPU worker."""

from __future__ import annotations

from rlsuite.supervised import registry
from rlsuite.supervised.config import SupervisedConfig

EPOCHS = 2
BATCH = 16
TRAIN_SIZE = 64
VAL_SIZE = 32
IMAGE_SIDE = 16
SEQ_LENGTH = 32
# Half a CPU per worker, so that the two trials of a smoke sweep run at once on 2 CPUs
# (their start-up, not their compute, is most of a smoke run).
SMOKE_WORKER_CPUS = 0.5


def smoke_config(config: SupervisedConfig) -> SupervisedConfig:
    """The same model on its task's synthetic data set, two tiny epochs on one CPU worker.

    Unknown dataset names are left for validation to report."""
    synthetic = registry.DATASETS.get(config.dataset)
    return config.replace(
        dataset=synthetic.synthetic if synthetic else config.dataset,
        data_path=None,
        model_path=None,  # a pretrained base model is no smoke test: a config-built tiny one
        model_size="tiny",
        image_size=min(config.image_size, IMAGE_SIDE),
        max_seq_length=min(config.max_seq_length, SEQ_LENGTH),
        epochs=EPOCHS,
        batch_size=BATCH,
        grad_accum_steps=1,
        warmup_epochs=min(config.warmup_epochs, 1.0),
        num_workers=1,
        max_workers=None,
        use_gpu=False,
        cpus_per_worker=SMOKE_WORKER_CPUS,
        compile=False,
        loader_workers=0,
        synthetic_train_size=TRAIN_SIZE,
        synthetic_val_size=VAL_SIZE,
    )
