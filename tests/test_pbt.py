"""PBT exploits happen, and the learner trains with the perturbed values afterwards: the
suite's check of that (`rlsuite.rl.pbt_check`) on built algorithms, and MADDPG's smoke sweep
(slow), which joins one Ray for this file (conftest's `ray_cluster`). PPO's smoke sweep is
checked on a two-node cluster in test_cluster.py."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
from ray.train import Checkpoint
from ray.train._internal.session import _TrainingResult

from rlsuite.errors import PerturbationIgnoredError
from rlsuite.multiagent import shared
from rlsuite.multiagent.maddpg import MADDPGConfig, agent_policies, joint
from rlsuite.multiagent.qmix import QMIXConfig, grouped
from rlsuite.pbt import EXPLOITED_CHECKPOINT, _KeepsExploitedCheckpoint
from rlsuite.rl import pbt_check as pbt
from tests.helpers import ROOT, local_ray, run_cli
from tests.pbt_checks import smoke_trials_results
from tests.ray_nodes import RayCluster


def _smoke_sweep(name: str, storage: Path, ray_cluster: RayCluster) -> list[list[dict]]:
    """`name`'s smoke PBT on the file's Ray: each trial's results."""
    run = run_cli(
        ROOT / "experiments" / f"{name}.py",
        "--smoke",
        *("--address", ray_cluster.address),
        storage=storage,
        env=ray_cluster.env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return smoke_trials_results(storage / name)


# PPO's exploits (pbt_ppo_cartpole.py's smoke sweep: learner values and report) are checked
# on test_cluster.py's two-node sweep of the same file, tests/pbt_checks.py: one sweep, CI time.


@pytest.mark.slow  # CI time: in CI test_check_reads_maddpgs_actor_and_critic_optimizers
# checks the check's read of both optimizers and test_cluster.py's PPO sweep an exploit end to end.
def test_maddpg_pbt_exploit_applies_the_perturbed_learning_rates(
    storage: Path, ray_cluster: RayCluster
) -> None:
    """After an exploit MADDPG's actor and critic optimizers train with the trial's new
    `actor_lr` and `critic_lr`, not the restored optimizers' learning rates."""
    exploits = 0
    for rows in _smoke_sweep("pbt_maddpg_spread", storage, ray_cluster):
        for before, after in itertools.pairwise(rows):
            if after["config"]["critic_lr"] != before["config"]["critic_lr"]:
                exploits += 1
            for learner in after["learners"].values():
                if "qf_learning_rate" not in learner:
                    continue  # RLlib's all-modules entry
                assert learner["qf_learning_rate"] == pytest.approx(after["config"]["critic_lr"])
                assert learner["policy_learning_rate"] == pytest.approx(after["config"]["actor_lr"])
    assert exploits >= 1, "no PBT exploit happened"


@pytest.fixture(scope="module")
def algorithm():
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=0)
        .training(
            lr=1e-3,
            entropy_coeff=0.01,
            clip_param=0.2,
            train_batch_size_per_learner=64,
            minibatch_size=32,
        )
    )
    with local_ray():
        algo = config.build_algo()
        yield algo
        algo.stop()


def test_check_passes_when_the_learner_follows_its_config(algorithm) -> None:
    pbt.check_learner_follows_config(algorithm=algorithm)


def test_check_fails_loudly_when_the_learner_ignores_a_perturbation(algorithm) -> None:
    learner = algorithm.learner_group._learner
    optimizer = learner.get_optimizers_for_module(DEFAULT_MODULE_ID)[0][1]
    optimizer.param_groups[0]["lr"] = 5e-4  # what a checkpoint restore used to leave behind
    try:
        with pytest.raises(PerturbationIgnoredError, match=r"lr=0.0005 \(config 0.001\)"):
            pbt.check_learner_follows_config(algorithm=algorithm)
    finally:
        optimizer.param_groups[0]["lr"] = 1e-3


def test_with_check_keeps_the_experiments_own_callbacks() -> None:
    def own(**_: object) -> None:
        pass

    config = PPOConfig().callbacks(on_train_result=own)
    checked = pbt.with_check(config)
    assert checked.callbacks_on_train_result == [own, pbt.check_learner_follows_config]
    assert config.callbacks_on_train_result is own


def test_check_reads_maddpgs_actor_and_critic_optimizers() -> None:
    """SAC-family configs have no `lr`: the check reads `actor_lr` and `critic_lr` from
    the optimizers they drive (RLlib's SAC names them policy and qf; so does MADDPG)."""
    env, env_config = "mpe/simple_spread", {"continuous_actions": True}
    config = (
        MADDPGConfig()
        .environment(**joint(env, env_config))
        .env_runners(num_env_runners=0)
        .training(
            agent_policies=agent_policies(env, shared(env, env_config), env_config),
            actor_lr=1e-3,
            critic_lr=2e-3,
        )
    )
    with local_ray():
        algorithm = config.build_algo()
        try:
            pbt.check_learner_follows_config(algorithm=algorithm)
            learner = algorithm.learner_group._learner
            [(module_id, _)] = learner.module.items()
            optimizers = dict(learner.get_optimizers_for_module(module_id))
            optimizers["policy"].param_groups[0]["lr"] = 5e-4
            with pytest.raises(PerturbationIgnoredError, match=r"actor_lr=0.0005 \(config 0.001\)"):
                pbt.check_learner_follows_config(algorithm=algorithm)
        finally:
            algorithm.stop()


def test_check_reads_the_env_runners_epsilon_schedule() -> None:
    """DQN-family exploration (here QMIX's) is built from the config's `epsilon` in the env
    runners' modules: a module left with another schedule fails the check."""
    config = (
        QMIXConfig()
        .environment(**grouped("mpe/simple_spread"))
        .env_runners(num_env_runners=0)
        .training(epsilon=[(0, 1.0), (1_000, 0.1)])
    )
    with local_ray():
        algorithm = config.build_algo()
        try:
            pbt.check_learner_follows_config(algorithm=algorithm)
            (module_id, epsilon), *_ = pbt.runner_epsilons(algorithm.env_runner).items()
            assert epsilon == [[0, 1.0], [1_000, 0.1]]
            module = algorithm.env_runner.module
            if isinstance(module, MultiRLModule):
                module = module[module_id]
            module.model_config["epsilon"] = [(0, 1.0), (1_000, 0.05)]  # a donor's schedule
            donor, config_value = (
                r"\[\[0, 1.0\], \[1000, 0.05\]\]",
                r"\[\[0, 1.0\], \[1000, 0.1\]\]",
            )
            with pytest.raises(
                PerturbationIgnoredError, match=rf"epsilon={donor} \(config {config_value}\)"
            ):
                pbt.check_learner_follows_config(algorithm=algorithm)
        finally:
            algorithm.stop()


def test_an_exploiting_trial_keeps_a_copy_the_donor_cannot_delete(tmp_path: Path) -> None:
    """The trial restores from a copy in its own directory: the donor's checkpoint
    retention may delete the original before the trial starts again."""

    class Base:
        def _exploit(self, tune_controller: object, trial: object, trial_to_clone: object) -> None:
            manager = trial.run_metadata.checkpoint_manager  # type: ignore[attr-defined]
            donor = trial_to_clone.checkpoint_dir  # type: ignore[attr-defined]
            manager._latest_checkpoint_result = _TrainingResult(
                Checkpoint.from_directory(donor), {"score": 1.0}
            )  # what Tune's PBT does: point at the donor's checkpoint

    class Scheduler(_KeepsExploitedCheckpoint, Base):
        pass

    def donor_with(weights: str) -> SimpleNamespace:
        checkpoint_dir = tmp_path / f"donor_{weights}" / "checkpoint_000004"
        checkpoint_dir.mkdir(parents=True)
        (checkpoint_dir / "weights").write_text(weights)
        return SimpleNamespace(checkpoint_dir=str(checkpoint_dir))

    manager = SimpleNamespace(_latest_checkpoint_result=None)
    trial_dir = tmp_path / "exploiting_trial"
    trial_dir.mkdir()
    trial = SimpleNamespace(
        run_metadata=SimpleNamespace(checkpoint_manager=manager),
        storage=SimpleNamespace(trial_fs_path=str(trial_dir)),
    )
    for weights in ("first", "second"):  # a second exploit replaces the first copy
        donor = donor_with(weights)
        Scheduler()._exploit(None, trial, donor)
        shutil.rmtree(donor.checkpoint_dir)  # the donor's retention deletes its original
        restored = manager._latest_checkpoint_result
        assert Path(restored.checkpoint.path) == trial_dir / EXPLOITED_CHECKPOINT
        assert (Path(restored.checkpoint.path) / "weights").read_text() == weights
        assert restored.metrics == {"score": 1.0}
