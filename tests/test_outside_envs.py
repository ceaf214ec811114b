"""Envs as an RLlib user brings them: a Gymnasium id, a name registered with `register_env`
in the experiment file (sampled by a remote env runner), an env class, and a PettingZoo
parallel env registered in the file. Each runs through `--smoke` as RLlib would run it,
joining one Ray started for the module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_cli, write
from tests.ray_nodes import RayCluster

CORRIDOR = '''
import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    """Walk right to the end of a corridor: RLlib's own example env, written out."""

    def __init__(self, config=None):
        self.length = int((config or {}).get("corridor_length", 5))
        self.observation_space = gym.spaces.Box(0.0, float(self.length), (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.position, self.steps = 0, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position, self.steps = 0, 0
        return np.array([self.position], np.float32), {}

    def step(self, action):
        self.position = max(0, self.position + (1 if action == 1 else -1))
        self.steps += 1
        done = self.position >= self.length
        truncated = self.steps >= 20  # a time limit, as a well-formed env has
        return np.array([self.position], np.float32), 1.0 if done else -0.1, done, truncated, {}
'''

REGISTERED = (
    '"""PPO on an env registered in this file, sampled by a remote env runner."""\n'
    + CORRIDOR
    + """
from ray.rllib.algorithms.ppo import PPOConfig
from ray.tune.registry import register_env

from rlsuite import Experiment, metrics

register_env("my_corridor", lambda config: Corridor(config))

experiment = Experiment(
    config=PPOConfig()
    .environment("my_corridor", env_config={"corridor_length": 4})
    .env_runners(num_env_runners=1),
    stop={metrics.TRAINING_ITERATION: 2},
)
"""
)

ENV_CLASS = (
    '"""PPO on an env class, as RLlib takes one."""\n'
    + CORRIDOR
    + """
from ray.rllib.algorithms.ppo import PPOConfig

from rlsuite import Experiment, metrics

experiment = Experiment(
    config=PPOConfig().environment(Corridor, env_config={"corridor_length": 3}),
    stop={metrics.TRAINING_ITERATION: 2},
)
"""
)

PETTINGZOO = '''"""PPO with one shared policy on a PettingZoo parallel env registered in this file."""
from mpe2 import simple_spread_v3
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.tune.registry import register_env

from rlsuite import Experiment, metrics
from rlsuite.multiagent import shared

register_env(
    "my_spread", lambda config: ParallelPettingZooEnv(simple_spread_v3.parallel_env(max_cycles=25))
)

experiment = Experiment(
    config=PPOConfig().environment("my_spread").multi_agent(**shared("my_spread")),
    stop={metrics.TRAINING_ITERATION: 2},
)
'''


def _smoke(path: Path, tmp_path: Path, cluster: RayCluster, *flags: str) -> dict:
    """`--smoke` joining the module's one Ray rather than starting one per run (CI time);
    the file's envs then reach the cluster's workers by value, as on a real cluster."""
    join = ("--address", cluster.address)
    run = run_cli(path, "--smoke", *join, *flags, storage=tmp_path / "results", env=cluster.env)
    assert run.returncode == 0, run.stderr + run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    summary = run.summary(path.stem)
    assert [t["status"] for t in summary["trials"]] == ["OK"]
    assert summary["trials"][0]["iterations"] == 2
    return summary


def test_gymnasium_id_through_set(tmp_path: Path, ray_cluster: RayCluster) -> None:
    experiment = ROOT / "experiments" / "ppo_cartpole.py"
    _smoke(experiment, tmp_path, ray_cluster, "--set", "environment.env=Acrobot-v1")
    params = next((tmp_path / "results" / "ppo_cartpole").glob("PPO_*/params.json"))
    assert '"env": "Acrobot-v1"' in params.read_text()


def _evaluate(results: Path) -> str:
    """`rlsuite.evaluate` on the run, in a fresh process: it must find the env again."""
    done = subprocess.run(
        [sys.executable, "-m", "rlsuite.evaluate", str(results), "--episodes", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_env_registered_in_the_file_with_a_remote_env_runner(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    """Through --address: the file's creator and env class reach the cluster's workers by
    value (no worker imports the experiment file)."""
    path = write(tmp_path, "ppo_corridor.py", REGISTERED)
    _smoke(path, tmp_path, ray_cluster)
    assert "my_corridor" in _evaluate(tmp_path / "results" / "ppo_corridor")


def test_env_class(tmp_path: Path, ray_cluster: RayCluster) -> None:
    _smoke(write(tmp_path, "ppo_corridor_class.py", ENV_CLASS), tmp_path, ray_cluster)
    assert "Corridor" in _evaluate(tmp_path / "results" / "ppo_corridor_class")


def test_pettingzoo_env_registered_in_the_file(tmp_path: Path, ray_cluster: RayCluster) -> None:
    _smoke(write(tmp_path, "ppo_my_spread.py", PETTINGZOO), tmp_path, ray_cluster)


@pytest.mark.parametrize("policy", ["independent", "by_type"])
def test_multi_agent_checks_inspect_the_registered_env(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str
) -> None:
    """A mapping that names the wrong agents is refused for a `register_env` env too."""
    from tests.helpers import assert_rejected, run_main

    text = PETTINGZOO.replace(
        'multi_agent(**shared("my_spread"))',
        'multi_agent(policies={"p"}, policy_mapping_fn=lambda agent, *a, **k: "q")',
    )
    storage = tmp_path / "results"
    code = run_main(write(tmp_path, f"bad_{policy}.py", text), storage=storage)
    assert_rejected(capsys, code, storage, "my_spread")
