"""HyperOpt's TPE over BERT-base's fine-tuning learning rate on GLUE SST-2.

What the searcher is for: BERT's fine-tuning result depends most on its learning rate
(Devlin et al. 2019 grid: 2e-5 to 5e-5), and each trial is expensive: TPE places the
later trials near the best rates found, where a grid or random search spends them evenly.
The first trial runs the paper's and run_glue's 2e-5; three more are random before TPE
models the results. Data and weights as `bert_sst2.py` (`data/glue/SST-2`,
`models/bert-base-uncased`; nothing is downloaded).

Budget: 12 trials, two at a time, 3 epochs each (batch 32). Result not yet measured here;
the bar is `bert_sst2.py`'s ~93% dev accuracy (BERT paper 93.5% on test, run_glue 92.3%
dev). Each trial wants a GPU: `--set use_gpu=true`.
"""

from ray import tune

from rlsuite import Experiment, HyperOpt, metrics
from rlsuite.supervised import SupervisedConfig

EPOCHS = 3  # the paper's middle choice and run_glue's default

config = SupervisedConfig(
    model="bert",
    model_path="models/bert-base-uncased",
    dataset="sst2",
    data_path="data/glue/SST-2",
    num_classes=2,
    max_seq_length=128,  # the paper's fine-tuning length
    epochs=EPOCHS,
    batch_size=32,
    optimizer="adamw",
    lr=2e-5,  # searched
    momentum=0.9,  # AdamW's beta1
    weight_decay=0.01,  # BERT's
    lr_schedule="linear",  # BERT's: linear decay to zero after warm-up
    warmup_epochs=0.3,  # ~10% of the steps, as in BERT and run_glue's recipes
    loader_workers=0,  # examples are tokenized up front: batching them is a cheap gather
)

experiment = Experiment(
    config=config,
    stop={metrics.EPOCH: EPOCHS},
    search={"lr": tune.loguniform(1e-5, 1e-4)},
    searcher=HyperOpt(
        max_concurrent=2,
        points_to_evaluate=[{"lr": 2e-5}],
        random_starts=4,  # of 12 trials (Tune's default of 20 would leave TPE none)
        seed=0,
    ),
    num_samples=12,
    metric=metrics.VALIDATION_ACCURACY,
    checkpoint_every=1,
)
