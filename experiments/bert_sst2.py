"""BERT-base fine-tuned on GLUE SST-2 (sentiment of movie-review sentences, 2 classes), with
ASHA over learning rate, batch size and epochs.

Data: GLUE's SST-2 folder (`train.tsv`, `dev.tsv`) at `data/glue/SST-2`, or
`--set data_path=DIR`. Weights: a local pretrained directory written by `save_pretrained`
(config, weights, tokenizer) at `models/bert-base-uncased`, or `--set model_path=DIR`;
`--set model_path=None` trains BERT-base from scratch with a WordPiece vocabulary learnt
from SST-2's training sentences (far below the figures here: nothing is pretrained).
Nothing is downloaded. Each trial wants a GPU: `--set use_gpu=true`.

Expected: about 93% validation (dev) accuracy for the best trial: BERT-base reaches 93.5%
on SST-2's test set (Devlin et al. 2019, Table 1) and 92.3% dev accuracy in Hugging
Face's run_glue example (bert-base-cased, 3 epochs, lr 2e-5, batch 32). ASHA runs 8 samples
of the paper's fine-tuning grid: lr {5e-5, 3e-5, 2e-5}, batch {16, 32}, epochs {2, 3, 4}.
Not measured here: it needs a GPU machine, the pretrained weights and the GLUE data
(docs/benchmarks.md).
"""

from ray import tune

from rlsuite import ASHA, Experiment, metrics
from rlsuite.supervised import SupervisedConfig

MAX_EPOCHS = 4

config = SupervisedConfig(
    model="bert",
    model_path="models/bert-base-uncased",
    dataset="sst2",
    data_path="data/glue/SST-2",
    num_classes=2,
    max_seq_length=128,  # the paper's fine-tuning length
    epochs=3,
    batch_size=32,
    optimizer="adamw",
    lr=2e-5,
    momentum=0.9,  # AdamW's beta1
    weight_decay=0.01,  # BERT's
    lr_schedule="linear",  # BERT's: linear decay to zero after warm-up
    warmup_epochs=0.3,  # ~10% of the steps, as in BERT and run_glue's recipes
    loader_workers=0,  # examples are tokenized up front: batching them is a cheap gather
)

experiment = Experiment(
    config=config,
    stop={metrics.EPOCH: MAX_EPOCHS},
    search={
        "lr": tune.choice([2e-5, 3e-5, 5e-5]),
        "batch_size": tune.choice([16, 32]),
        "epochs": tune.choice([2, 3, MAX_EPOCHS]),
    },
    scheduler=ASHA(max_t=MAX_EPOCHS, grace_period=1, reduction_factor=2),
    num_samples=8,  # of the grid's 18 points
    metric=metrics.VALIDATION_ACCURACY,
    checkpoint_every=1,
)
