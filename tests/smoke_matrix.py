"""Which experiment files' smoke runs CI makes (test_experiments.py and
test_experiments_supervised.py), and which are `slow` because other runs cover them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

# Experiment files whose smoke run repeats only what CI's smoke runs of other files (and
# the named tests) already run: their own smoke runs are `slow` (CI time, issue 23), and
# CI still puts them through every check before Ray, RLlib's config validation included
# (test_smoke.py). A new experiment file is in CI's smoke matrix unless listed here.
SMOKE_COVERED_BY = {
    "impala_atari": "appo_atari: APPOConfig subclasses IMPALAConfig, same Atari env path",
    "pbt_appo_atari": "appo_atari's APPO and pbt_ppo_cartpole's PBT with the suite's check",
    "pbt_ppo_atari": "ppo_atari's PPO on Atari and pbt_ppo_cartpole's PBT",
    "dqn_atari": "dqn_cartpole's DQN and ppo_atari's Atari env path",
    "vdn_spread": "qmix_spread's QMIXConfig; the VDN mixer in test_qmix.py",
    "pbt_qmix_spread": (
        "qmix_spread's QMIX run (evaluated from its results) and test_cluster.py's PBT exploits; "
        "the PBT check's read of QMIX's epsilon schedule in test_pbt.py"
    ),
    "ippo_spread": "ppo_shared_spread's PPO on simple_spread; independent() in test_policies.py",
    "ppo_tag": "ppo_shared_spread's PPO on MPE; PPO with by_type() on simple_tag in test_policies.py",
    "sac_multiwalker": (
        "sac_pendulum's SAC and masac_multiwalker's multiwalker env; independent() on "
        "multiwalker in test_policies.py"
    ),
    "sac_halfcheetah": "sac_pendulum's SAC; mujoco/halfcheetah's checks in test_envs.py",
    "resnet50_imagenet": "resnet_cifar10's loop; ImageFolder in test_supervised_runs.py",
    "bert_mnli": "bert_sst2's text loop; MNLI's sentence pairs in test_supervised_text.py",
    "hyperopt_bert_sst2": "bert_sst2's text loop; HyperOpt's suggestions in test_search.py",
    "bohb_resnet_cifar10": (
        "resnet_cifar10's loop; BOHB's suggestions and its HyperBand pairing in "
        "test_search.py, a searcher's sweep end to end (killed, resumed) there too"
    ),
    "maddpg_spread": (
        "maddpg_tag's MADDPG run (conftest's, discrete actions) and masac_multiwalker's "
        "continuous joint actions; MADDPG's continuous actors (greedy and exploring actions "
        "in the Box) and its learner on continuous simple_spread in test_maddpg.py"
    ),
    "pbt_ppo_cartpole": (
        "test_cluster.py, which runs its smoke on two nodes and checks its exploits"
    ),
    "pbt_maddpg_spread": "test_pbt.py (slow), which runs its smoke and checks its exploits",
    "optuna_ppo_cartpole": "test_search.py's killed sweep: its smoke (3 trials), resumed",
    "pbt_resnet_cifar10": (
        "test_supervised_pbt.py (slow) runs its smoke to 3 iterations and checks exploits; in "
        "CI test_supervised_runs.py restores a supervised trial from its Tune checkpoint (an "
        "exploit's path) and test_cluster.py's RL sweep exploits"
    ),
}


def smoke_matrix(paths: list[Path]) -> list[Any]:
    """`paths` as pytest parameters; those in SMOKE_COVERED_BY marked `slow`."""
    return [
        pytest.param(p, marks=pytest.mark.slow) if p.stem in SMOKE_COVERED_BY else p for p in paths
    ]
