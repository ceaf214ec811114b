"""`SupervisedConfig`: every setting of one supervised run (what `Experiment.config` holds).

A frozen dataclass of plain values: Tune's param space is its fields (`dataclasses.asdict`),
search spaces and PBT mutations name fields directly (`lr`, `momentum`, `batch_size`),
and `--set lr=0.1` edits a field, typed against its current value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class SupervisedConfig:
    """A model trained on a data set by the shared Ray Train loop (`rlsuite.supervised.loop`)."""

    # --- what is trained on what
    model: str = "resnet18"
    """Model registry name (`rlsuite.supervised.registry.MODELS`): resnet18, resnet50, bert."""
    dataset: str = "synthetic_images"
    """Data set registry name (`registry.DATASETS`): cifar10, imagefolder, synthetic_images,
    sst2, mnli, synthetic_text."""
    data_path: str | None = None
    """Local directory of the data set (CIFAR-10 python batches, ImageFolder root with
    train/ and val/, GLUE task folder). Nothing is ever downloaded."""
    model_path: str | None = None
    """Local pretrained directory (`from_pretrained`) for text models; None builds the model
    from a config of `model_size`."""
    num_classes: int = 10
    """Output classes; checked against the data where the data says (ImageFolder folders)."""
    model_size: Literal["tiny", "base"] = "base"
    """Size of config-built text models (BERT tiny: 2 layers of 128; base: 12 of 768)."""
    cifar_stem: bool = False
    """ResNet with a 3x3 stride-1 first convolution and no max-pool, for 32x32 images."""
    image_size: int = 224
    """Side of the (square) images the model sees; training crops and synthetic images."""
    max_seq_length: int = 128
    """Tokens per text example after truncation and padding."""

    # --- optimisation
    epochs: int = 90
    """Passes over the training set; also the horizon of the learning-rate schedule."""
    batch_size: int = 256
    """Global batch size: split evenly over `num_workers` (each gets batch_size // num_workers)."""
    grad_accum_steps: int = 1
    """Micro-batches whose gradients add up before each optimizer step."""
    optimizer: Literal["sgd", "adamw"] = "sgd"
    lr: float = 0.1
    """Peak learning rate (after warm-up)."""
    momentum: float = 0.9
    """SGD momentum (Nesterov off); for AdamW, beta1."""
    weight_decay: float = 5e-4
    lr_schedule: Literal["constant", "cosine", "linear"] = "cosine"
    """Decay after warm-up: constant, cosine to zero, or linear to zero over `epochs`."""
    warmup_epochs: float = 0.0
    """Epochs of linear warm-up from lr/100 to `lr` (fractions allowed)."""
    label_smoothing: float = 0.0

    # --- speed and scale
    num_workers: int = 1
    """Ray Train workers (data-parallel DDP processes); the minimum of an elastic run."""
    max_workers: int | None = None
    """Elastic training (Ray Train V2's `ScalingConfig(num_workers=(min, max))`): the run
    starts with what is free, at least `num_workers`, grows to this many as nodes join,
    and when a node leaves it shrinks and continues from its last checkpoint. The global
    `batch_size` stays the same whatever the count (each worker takes
    batch_size // workers), so the learning rate needs no rescaling. None: fixed size."""
    use_gpu: bool = False
    """One GPU per Train worker."""
    cpus_per_worker: float = 1.0
    """CPUs reserved per Train worker (data loading threads run inside them)."""
    precision: Literal["bf16", "fp32"] = "bf16"
    """bf16 autocast on GPU workers; CPU workers always compute in fp32."""
    channels_last: bool = True
    """NHWC memory format for CNNs (tensor-core friendly); ignored for text models."""
    compile: bool = False
    """`torch.compile` the model (slow start, faster steps on GPU)."""
    loader_workers: int = 2
    """DataLoader worker processes per Train worker for torch data sets (0: load inline)."""
    seed: int = 0

    # --- synthetic data (smoke runs, tests, benchmarks)
    synthetic_train_size: int = 50_000
    synthetic_val_size: int = 10_000

    def replace(self, **changes: Any) -> SupervisedConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Flat field values: Tune's param space."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> SupervisedConfig:
        """The config from a Tune trial's config (extra keys Tune adds are ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})

    @property
    def per_worker_batch_size(self) -> int:
        return max(1, self.batch_size // self.num_workers)


def field_names() -> list[str]:
    return [f.name for f in dataclasses.fields(SupervisedConfig)]
