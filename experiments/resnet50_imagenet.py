"""ResNet-50 on ImageNet (ILSVRC-2012) from a class-per-folder directory through Ray Data.

The data is `data/imagenet/train/<wnid>/*.JPEG` and `data/imagenet/val/<wnid>/*.JPEG`
(the validation images sorted into class folders, as torchvision's ImageFolder expects),
or `--set data_path=DIR`; nothing is downloaded. Ray Data decodes and augments the images
in parallel tasks (random-resized 224 crops and flips; validation: resize 256, centre
crop 224) and shards them across the Train workers. Each worker is one GPU with bf16
autocast and channels-last layout.

Default: 8 GPU workers, global batch 1024, lr 0.4 (0.1 per 256 images, Goyal et al. 2017),
5 warm-up epochs, cosine decay, label smoothing 0.1, 90 epochs.
Expected: about 76-77% top-1 validation accuracy (torchvision's ResNet-50 V1 weights:
76.13% with the step schedule; Goyal et al. report 76.3% at batch 8192). Not measured
here: it needs 8 GPUs and ImageNet (docs/benchmarks.md).

The 64-GPU set-up of Goyal et al. is one line on a Ray cluster with 64 GPUs:
  python -m rlsuite.run experiments/resnet50_imagenet.py --address auto \
      --storage-path /mnt/results/rlsuite --set num_workers=64 --set batch_size=8192 --set lr=3.2
(`--set num_workers=64` alone keeps the global batch of 1024: 16 images per GPU;
/mnt/results: a file system every node mounts, docs/clusters.md.)
"""

from rlsuite import Experiment, metrics
from rlsuite.supervised import SupervisedConfig

EPOCHS = 90

config = SupervisedConfig(
    model="resnet50",
    dataset="imagefolder",
    data_path="data/imagenet",
    num_classes=1000,
    image_size=224,
    epochs=EPOCHS,
    batch_size=1024,  # global: 128 images per GPU on 8 workers
    lr=0.4,  # linear scaling rule: 0.1 x batch / 256 (Goyal et al. 2017)
    warmup_epochs=5,  # Goyal et al.'s gradual warm-up for large batches
    lr_schedule="cosine",
    momentum=0.9,
    weight_decay=1e-4,  # torchvision's reference recipe
    label_smoothing=0.1,
    num_workers=8,
    use_gpu=True,
    cpus_per_worker=4,  # Ray Data's decoding tasks use the node's other CPUs
    precision="bf16",
    channels_last=True,
)

experiment = Experiment(
    config=config,
    stop={metrics.EPOCH: EPOCHS},
    metric=metrics.VALIDATION_ACCURACY,
    checkpoint_every=1,
    keep_checkpoints=3,
)
