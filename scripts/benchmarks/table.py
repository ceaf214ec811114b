"""The benchmark table's rows: one per file in experiments/ (named as the file), a few more
that run a file at a small stated budget under a name of their own, what each measures,
whether it fits a 2-CPU machine, and the `python -m rlsuite.run` commands that measure it.

A row measures its experiment at the file's own stop unless `stop` replaces it (a shorter
budget stated here, where the file's own stop would take far longer than the table's runs). The estimated minutes
per seed only gate `--budget-minutes`: they are guesses from the throughput figures in
docs/ (marked "estimate"), not measurements, and never appear in the table. Nothing here
imports Ray: `--list` and every refusal answer at once.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from benchmarks import experiment_file

STORAGE_PATH = "results/benchmarks"
"""Where the table's runs write their results (`--storage-path`), under the repository."""
DEFAULT_SEEDS = 3
GPU = "needs a GPU machine"
CIFAR = "the CIFAR-10 data set (data/cifar-10-batches-py)"
BERT = "bert-base-uncased weights (models/bert-base-uncased) and the GLUE data"
EXPERIMENTS = "[experiments.md](experiments.md)"
QMIX = "[multiagent.md](multiagent.md#qmix-and-vdn)"


@dataclass(frozen=True)
class Row:
    """One experiment of the table."""

    name: str
    """The row's name: its key in the records and its results folder (`--only NAME`)."""
    minutes: float
    """Estimate of one seed's minutes on 2 CPUs (a whole population for sweeps and PBT):
    it gates `--budget-minutes` and nothing else."""
    stop: tuple[str, ...] = ()
    """`--stop METRIC=VALUE` values replacing the file's stop; () measures the file's own."""
    sets: tuple[str, ...] = ()
    """`--set PATH=VALUE` edits of the experiment for the measurement."""
    experiment: str = ""
    """The experiment file's stem (experiments/<experiment>.py); empty: the row's name.
    A row under another name runs that file at a budget of its own."""
    num_samples: int | None = None
    """`--num-samples`: trials per seed in place of the file's; None keeps the file's."""
    flags: tuple[str, ...] = ()
    """Other `python -m rlsuite.run` flags of the measurement (`--no-search`: the file's
    own values, not its search's)."""
    prepare: tuple[str, ...] = ()
    """A command (its arguments after `python`) that writes the row's data before its runs,
    shown before them in its command line; () for none."""
    needs: str = ""
    """Why the row does not fit a 2-CPU machine; empty when it does."""
    check_stop: tuple[str, ...] = ()
    """The `--check` gate's short run (`--stop` values) for the fast rows; () for the rest."""
    written_up_in: str = ""
    """For a row not measured here: where other runs of its experiment (one seed, a
    shorter budget) are written up. A pointer only: the table shows no figure it did not
    measure."""
    changed_since: str = ""
    """For a measured row whose experiment file changed after the recorded measurement:
    what changed, and where the changed file is measured. The page marks the row's figures
    as the earlier file's until the row is measured again (then clear this)."""

    @property
    def stem(self) -> str:
        return self.experiment or self.name

    @property
    def cpu_ok(self) -> bool:
        """Fits a 2-CPU machine in a reasonable time."""
        return not self.needs

    @property
    def population(self) -> bool:
        """The file runs several trials (a sweep, PBT): one seed is a whole population, so
        each seed is its own run and its score is that population's best trial."""
        return (self.num_samples or experiment_file.num_samples(self.stem)) > 1

    def measured_stop(self) -> tuple[str, ...]:
        """What the row measures: its `stop`, or the file's own stop."""
        return self.stop or experiment_file.stop(self.stem)


# resnet_cifar10.py's ResNet-18 on 2 CPUs: 3 epochs of 1,024 training images (8 steps of the
# file's batch of 128) and 512 validation images, at 32x32.
RESNET18_EPOCHS = 3
RESNET18_TRAIN_IMAGES = 1024
RESNET18_VALIDATION_IMAGES = 512
CIFAR_FORMAT_DATA = f"{STORAGE_PATH}/data/cifar_format"  # written before the row's runs


def resnet18_on_two_cpus(name: str, *data: str, prepare: tuple[str, ...] = ()) -> Row:
    """resnet_cifar10.py's ResNet-18 on the `data` `--set`s: one trial a seed at the file's
    own lr, weight decay and batch (its sweep of 8 needs a GPU), RESNET18_EPOCHS epochs.
    Measured 2026-11-30: 7.9 samples/s a trial, two side by side; 901-933 s wall for 3
    seeds."""
    return Row(
        name,
        experiment="resnet_cifar10",
        minutes=5,
        stop=(f"epoch={RESNET18_EPOCHS}",),
        sets=(*data, f"epochs={RESNET18_EPOCHS}"),
        num_samples=1,
        flags=("--no-search",),
        prepare=prepare,
    )


ROWS: tuple[Row, ...] = (
    # Estimates from the env steps/s measured here (docs/performance.md, multiagent.md).
    # 10M steps at APPO's measured 354-432 env steps/s on 2 CPUs: 6-8 hours a seed.
    Row("appo_atari", minutes=480, needs=f"{GPU} (10M Atari steps)"),
    Row("bert_mnli", minutes=3000, needs=f"{GPU}, {BERT}"),
    Row("bert_sst2", minutes=600, needs=f"{GPU}, {BERT}"),
    Row("bohb_resnet_cifar10", minutes=6000, needs=f"four GPUs and {CIFAR}"),
    Row("dqn_atari", minutes=3000, needs=f"{GPU} (3M Atari steps)"),
    Row("dqn_cartpole", minutes=15, check_stop=("env_steps=64000",)),
    Row("hyperopt_bert_sst2", minutes=900, needs=f"{GPU}, {BERT}"),
    # IMPALA's throughput is not measured here; at APPO's rate (padded CNN) 10M steps are
    # 6-8 hours.
    Row("impala_atari", minutes=480, needs=f"{GPU} (10M Atari steps)"),
    # At ppo_shared_spread's 2M steps (issue 19's bar): the same task and budget, shared
    # against independent policies; the file's own 3M stop stays for users.
    Row("ippo_spread", minutes=30, stop=("env_steps=2000000",)),
    # measured: 40-58 min of training a seed to 1M steps (398 env steps/s), 106 min wall for 3
    Row("maddpg_spread", minutes=50, written_up_in=f"120k steps: {EXPERIMENTS}"),
    # 31-33 min of training a seed to 1M steps with replay from arrays (the slow tag test).
    Row(
        "maddpg_tag",
        minutes=35,
        written_up_in=f"1M steps, seed 0, against DDPG hunters: {EXPERIMENTS}",
    ),
    Row("mappo_spread", minutes=80, check_stop=("env_steps=64000",)),
    # A stated budget, as sac_multiwalker's: the file's 10k steps before learning and 2k of
    # learning (305 s wall for 3 seeds, 2026-11-30). Its 200k take 65-75 min a seed on 2
    # CPUs: docs/multiagent.md#masac-learns-on-multiwalker.
    Row("masac_multiwalker", minutes=2, stop=("env_steps=12000",)),
    # 24 trials of 100k env steps at 2,917-4,390 env steps/s (ppo_cartpole's old settings, 2026-11-24, which are optuna's), and each start.
    Row("optuna_ppo_cartpole", minutes=20),
    Row("pb2_ppo_cartpole", minutes=15),
    Row("pbt_appo_atari", minutes=6000, needs="needs a cluster: 8 trials of 9 CPUs and a GPU"),
    # measured 2026-11-29: 29-35 min wall a seed (4 trials of 500k steps side by side); the
    # file's 1M would double it. At 500k maddpg_spread has most of its gain.
    Row("pbt_maddpg_spread", minutes=35, stop=("env_steps=500000",)),
    Row("pbt_ppo_atari", minutes=6000, needs="needs a cluster: 8 trials of 9 CPUs and a GPU"),
    Row("pbt_ppo_cartpole", minutes=15),
    # measured 2026-11-29: 33-37 min wall a seed (4 trials of 500k steps, two at a time)
    Row("pbt_qmix_spread", minutes=40),
    Row("pbt_resnet_cifar10", minutes=6000, needs=f"four GPUs and {CIFAR}"),
    # 10M steps at the 455 env steps/s measured to 1M (unpadded CNN): 6 hours a seed.
    Row(
        "ppo_atari",
        minutes=370,
        needs=f"{GPU} (10M Atari steps)",
        written_up_in="1M steps on 2 vCPUs, seeds 0 and 1, unpadded and padded CNN: "
        "[performance.md](performance.md#pong-the-nature-cnn-unpadded); 1.35M on an H200 "
        "with the padded CNN, seed 0: [performance.md](performance.md"
        "#on-an-h200-does-it-learn-at-scale-pong-at-the-experiments-own-settings); 793k on an "
        "H200 with sampling overlapped, seed 0: [performance.md](performance.md"
        "#on-an-h200-2026-11-30-ppo-with-sampling-overlapped-10000-env-stepss-met)",
    ),
    # check at 8k: mid-climb (100-250 on seeds 0-1 on 2026-11-28); by 64k every seed is at 500
    Row("ppo_cartpole", minutes=1, check_stop=("env_steps=8000",)),
    # A stated budget, 6 iterations of 1,024 env steps (150 s each on 2026-11-29): its
    # 200k would take over 4.6 hours a seed on 2 CPUs. Does PPO start to carry the ball?
    Row("ppo_pistonball", minutes=16, stop=("env_steps=6144",)),
    Row("ppo_shared_spread", minutes=30),  # measured: 29-30 min a seed to 2M steps
    # measured: 20-25 min of training a seed to 1M steps (834 env steps/s), 46 min wall for 3
    Row("ppo_tag", minutes=20, written_up_in=f"1M steps, seed 0, against MADDPG: {EXPERIMENTS}"),
    # 100k steps at the 315 env steps/s measured to 500k (53 min wall for 3 seeds there)
    Row("qmix_spread", minutes=6, written_up_in=f"50k steps and 500k: {QMIX}"),
    # The synthetic set: a pattern per class plus noise (another task per seed), read as is.
    resnet18_on_two_cpus(
        "resnet18_synthetic",
        "dataset=synthetic_images",
        f"synthetic_train_size={RESNET18_TRAIN_IMAGES}",
        f"synthetic_val_size={RESNET18_VALIDATION_IMAGES}",
    ),
    # Files in CIFAR-10's python format that the row writes first: the synthetic task's
    # images (seed 0 for every seed) as uint8, read by the cifar10 loader with its crops,
    # flips and normalisation. Nothing is downloaded.
    resnet18_on_two_cpus(
        "resnet18_cifar_format",
        "dataset=cifar10",
        f"data_path={CIFAR_FORMAT_DATA}",
        prepare=(
            "scripts/write_cifar_format.py",
            CIFAR_FORMAT_DATA,
            *("--train-images", str(RESNET18_TRAIN_IMAGES)),
            *("--test-images", str(RESNET18_VALIDATION_IMAGES)),
        ),
    ),
    Row("resnet50_imagenet", minutes=6000, needs="needs 8 GPUs and ImageNet (class folders)"),
    Row("resnet_cifar10", minutes=6000, needs=f"{GPU} and {CIFAR}"),
    Row("sac_halfcheetah", minutes=1500, needs=f"{GPU} (1M MuJoCo SAC steps)"),
    # The same stated budget as masac_multiwalker's, so the two compare the critic's input
    # alone (936 s wall for 3 seeds, 2026-11-30). Its 200k would take about 6 hours a seed
    # on 2 CPUs (9.5 env steps/s once learning starts).
    Row("sac_multiwalker", minutes=6, stop=("env_steps=12000",)),
    Row("sac_pendulum", minutes=15, check_stop=("env_steps=10000",)),
    # measured with the landing-square head (2026-11-29): 4.0-6.3 min of training a seed, which
    # stopped at 40k-60k steps (160 env steps/s), 16 min wall for 3. The file before it ran
    # 18-19 min a seed (to 500k or 0.9 at 441 env steps/s), 50 min wall.
    Row("selfplay_connect4", minutes=6),
    # The file's 500k: 9-10 min a seed at the 900-1,000 env steps/s of 2026-11-28's evening,
    # 25-30 at the 290-350 measured to 300k on 2026-11-27.
    Row("vdn_spread", minutes=30, written_up_in=f"50k steps: {QMIX}; 100k: {EXPERIMENTS}"),
)
BY_NAME = {row.name: row for row in ROWS}


def fast_rows() -> list[Row]:
    """The rows `--check` runs."""
    return [row for row in ROWS if row.check_stop]


@dataclass(frozen=True)
class Commands:
    """The `python -m rlsuite.run` processes that measure a row, and the one shell line
    that shows them."""

    argvs: list[list[str]]
    """Each process's arguments after `python` (one process; one per seed for populations)."""
    line: str
    prepare: list[str] | None = None
    """The process that writes the row's data first (arguments after `python`), if any."""

    @property
    def names(self) -> list[str]:
        """The results folders under STORAGE_PATH, one per process."""
        return [argv[argv.index("--name") + 1] for argv in self.argvs]


def commands(row: Row, seeds: int, check: bool = False) -> Commands:
    """The commands of a row's measurement (`check`: of its `--check` run)."""
    stop = row.check_stop if check else row.stop
    name = f"{row.name}-check" if check else row.name
    samples = [] if row.num_samples is None else ["--num-samples", str(row.num_samples)]
    flags = [*_pairs("--stop", stop), *_pairs("--set", row.sets), *samples, *row.flags]
    head = ["-m", "rlsuite.run", f"experiments/{row.stem}.py"]
    tail = ["--storage-path", STORAGE_PATH, "--overwrite"]
    prepare = list(row.prepare) or None  # first on the line too: it alone reproduces the row
    first = f"{shlex.join(['python', *prepare])} && " if prepare else ""
    if not row.population:
        argv = [*head, "--seeds", str(seeds), *flags, "--name", name, *tail]
        return Commands([argv], first + shlex.join(["python", *argv]), prepare)
    argvs = [
        [*head, "--seed", str(seed), *flags, "--name", f"{name}-seed{seed}", *tail]
        for seed in range(seeds)
    ]
    # One line for the reader: the same commands as a loop over the seeds.
    shown = shlex.join(["python", *head, "--seed", "SEED", *flags])
    shown += f" --name {name}-seedSEED {shlex.join(tail)}"
    loop = " ".join(str(seed) for seed in range(seeds))
    line = f"{first}for s in {loop}; do {shown.replace('SEED', '$s')}; done"
    return Commands(argvs, line, prepare)


def _pairs(flag: str, values: Iterable[str]) -> list[str]:
    return [part for value in values for part in (flag, value)]


@dataclass(frozen=True)
class Plan:
    """Which rows a run measures, and a line for each it leaves out."""

    rows: list[Row]
    skipped: list[str]


def plan(names: list[str] | None, seeds: int, budget_minutes: float | None) -> Plan:
    """The rows `names` (default: every row that fits a 2-CPU machine) within the budget.
    A row named with `--only` runs even where it needs more than 2 CPUs: on a GPU machine
    that is how it gets measured."""
    rows, skipped = [], []
    for row in [BY_NAME[name] for name in names] if names else list(ROWS):
        if not names and not row.cpu_ok:
            skipped.append(f"skipped {row.name}: {row.needs} (--only {row.name} runs it)")
        elif budget_minutes is not None and row.minutes * seeds > budget_minutes:
            skipped.append(
                f"skipped {row.name}: about {row.minutes * seeds:,.0f} min for {seeds} seeds "
                f"(an estimate) is over --budget-minutes {budget_minutes:g}"
            )
        else:
            rows.append(row)
    return Plan(rows, skipped)
