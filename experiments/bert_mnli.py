"""BERT-base fine-tuned on GLUE MNLI (does a premise entail, contradict or leave open a
hypothesis: 3 classes over sentence pairs), with ASHA over learning rate, batch size and
epochs.

Data: GLUE's MNLI folder (`train.tsv`, `dev_matched.tsv`; columns read by header name,
labels entailment/neutral/contradiction) at `data/glue/MNLI`, or `--set data_path=DIR`.
Weights: a local pretrained directory written by `save_pretrained` at
`models/bert-base-uncased`, or `--set model_path=DIR`; `--set model_path=None` trains
BERT-base from scratch with a WordPiece vocabulary learnt from MNLI's training pairs (far
below the figures here). Nothing is downloaded. Each trial wants a GPU:
`--set use_gpu=true` (393k pairs; the time per epoch is not measured here).

Expected: about 84% matched-dev accuracy for the best trial: BERT-base reaches 84.6% on
MNLI-m's test set (Devlin et al. 2019, Table 1) and 83.9% on dev_matched in Hugging Face's
run_glue example (bert-base-cased, 3 epochs, lr 2e-5, batch 32). ASHA runs 8 samples of
the paper's fine-tuning grid: lr {5e-5, 3e-5, 2e-5}, batch {16, 32}, epochs {2, 3, 4}.
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
    dataset="mnli",
    data_path="data/glue/MNLI",
    num_classes=3,
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
    # One rung per epoch: MNLI epochs are long, so weak trials stop after the first.
    scheduler=ASHA(max_t=MAX_EPOCHS, grace_period=1, reduction_factor=2),
    num_samples=8,  # of the grid's 18 points
    metric=metrics.VALIDATION_ACCURACY,
    checkpoint_every=1,
)
