"""On a CUDA GPU: a supervised run trains on its Ray Train worker's GPU (DDP over two
when there are two), the bf16 PPO Learner runs its CNN in bf16 there, an Atari smoke
run places its learner on the GPU, and the suite's own MADDPG and MASAC learners update
their centralized critics and actors there.

pyproject's addopts deselect the `gpu` marker; on a machine with a GPU run
`pytest -m gpu -n 0 tests/test_gpu.py`. Without CUDA every test here skips.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import ray.train
import torch
from ray.rllib.core import DEFAULT_MODULE_ID

from rlsuite import metrics
from rlsuite.envs import registry
from rlsuite.launcher.loader import load_experiment
from rlsuite.rl.mixed_precision import Bf16PPOTorchLearner
from rlsuite.rl.smoke import smoke_config
from rlsuite.supervised.checkpoint import MODEL_FILE, load_model
from tests.helpers import ROOT, local_ray, run_cli

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

CIFAR = ROOT / "experiments" / "resnet_cifar10.py"
ATARI = ROOT / "experiments" / "ppo_atari.py"
CENTRALIZED = [ROOT / "experiments" / name for name in ("maddpg_tag.py", "masac_multiwalker.py")]


def supervised_gpu_run(storage: Path, *flags: str) -> None:
    """`--smoke` of the CIFAR-10 ResNet with a GPU per Ray Train worker: two epochs, and
    weights that were trained on the GPU (its checkpoint's tensors were saved from CUDA)
    restore and classify."""
    gpu = ("--num-gpus-per-learner", "1", "--num-samples", "1")  # one trial: one GPU
    run = run_cli(CIFAR, "--smoke", *gpu, *flags, storage=storage)
    assert run.returncode == 0, run.stderr[-3000:]
    (trial,) = run.summary(CIFAR.stem)["trials"]
    assert trial["status"] == "OK"
    progress = pd.read_csv(storage / CIFAR.stem / trial["trial"] / "progress.csv")
    assert list(progress[metrics.EPOCH]) == [1, 2]
    assert progress[metrics.TRAIN_LOSS].notna().all()
    weights = torch.load(Path(trial["checkpoint"]) / MODEL_FILE, map_location=None)
    assert {tensor.device.type for tensor in weights.values()} == {"cuda"}
    model, config = load_model(ray.train.Checkpoint.from_directory(trial["checkpoint"]))
    assert config.use_gpu
    with torch.no_grad():
        logits = model(torch.rand(2, 3, config.image_size, config.image_size))
    assert logits.shape == (2, config.num_classes)


def test_supervised_run_trains_on_the_gpu(storage: Path) -> None:
    supervised_gpu_run(storage)


def test_served_classifier_runs_on_the_replicas_gpu(storage: Path, tmp_path: Path) -> None:
    """`rlsuite.serve --num-gpus 1`: the replica's model is on its GPU and answers as the
    model restored on the CPU (to float tolerance)."""
    from tests.test_serve_supervised import check_image_classifier

    supervised_gpu_run(storage)
    # cuDNN's convolutions run in TF32 by default (PyTorch's `allow_tf32`), 10 bits of mantissa:
    # on an H200 a served probability differed from the CPU's by 1.1e-4 (2026-11-28).
    check_image_classifier(storage / CIFAR.stem, tmp_path, "--num-gpus", "1", atol=1e-3)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="DDP over GPUs needs two")
def test_supervised_run_trains_ddp_over_two_gpus(storage: Path) -> None:
    supervised_gpu_run(storage, "--num-learners", "2")


def test_bf16_learner_runs_its_cnn_in_bf16_on_the_gpu() -> None:
    config = smoke_config(load_experiment(ATARI).config)
    assert config.learner_class is Bf16PPOTorchLearner
    config.learners(num_learners=0, num_gpus_per_learner=1)  # the local Learner on cuda:0
    registry.register(config.env)
    conv_dtypes: list[torch.dtype] = []
    with local_ray():
        algo = config.build_algo()
        try:
            learner = algo.learner_group._learner
            assert learner.autocast_device == "cuda"
            assert learner.bf16 == torch.cuda.is_bf16_supported()
            module = learner.module[DEFAULT_MODULE_ID]
            conv = next(m for m in module.modules() if isinstance(m, torch.nn.Conv2d))
            conv.register_forward_hook(lambda _m, _i, out: conv_dtypes.append(out.dtype))
            result = algo.train()
            assert all(p.dtype == torch.float32 and p.is_cuda for p in module.parameters())
        finally:
            algo.stop()
    expected = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    assert expected in conv_dtypes
    losses = result["learners"][DEFAULT_MODULE_ID]
    assert torch.isfinite(torch.tensor(float(losses["total_loss"])))


def test_atari_smoke_run_with_a_gpu_learner(storage: Path) -> None:
    """Tune places the trial, whose local Learner takes the GPU, and checks it exists."""
    run = run_cli(ATARI, "--smoke", "--num-gpus-per-learner", "1", storage=storage)
    assert run.returncode == 0, run.stderr[-3000:]
    trials = run.summary(ATARI.stem)["trials"]
    assert trials and all(t["status"] == "OK" and t["checkpoint"] for t in trials)


@pytest.mark.parametrize("experiment", CENTRALIZED, ids=lambda path: path.stem)
def test_centralized_critic_learner_updates_on_the_gpu(experiment: Path) -> None:
    """The learner written here (not RLlib's): its replay batches, target networks and
    optimizers all follow the module to cuda:0, and an update changes its weights."""
    config = smoke_config(load_experiment(experiment).config)
    config.learners(num_learners=0, num_gpus_per_learner=1)  # the local Learner on cuda:0
    registry.register(config.env)
    with local_ray():
        algo = config.build_algo()
        try:
            module = algo.learner_group._learner.module[DEFAULT_MODULE_ID]  # the joint team
            before = [p.detach().clone() for p in module.parameters()]
            for _ in range(20):  # smoke learning starts after one batch of env steps
                algo.train()
                if any(
                    not torch.equal(a, p) for a, p in zip(before, module.parameters(), strict=True)
                ):
                    break
            else:
                pytest.fail("20 iterations and no weight moved")
            assert all(p.is_cuda for p in module.parameters())
            assert all(torch.isfinite(p).all() for p in module.parameters())
        finally:
            algo.stop()
