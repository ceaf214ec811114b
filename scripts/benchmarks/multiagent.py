"""Multi-agent throughput: env steps per second on MPE simple_spread, three ways in one run.

1. the raw PettingZoo parallel env alone, random actions (the ceiling; its episodes' mean
   team return is also the random baseline the experiments' docstrings quote);
2. RLlib's default multi-agent path: plain `PPOConfig` on `ParallelPettingZooEnv` with one
   shared policy and RLlib's defaults otherwise, as RLlib's PettingZoo example sets it up;
3. the suite's `experiments/ppo_shared_spread.py` through `python -m rlsuite.run`.

(2) and (3) train for the same env-step budget, each in a fresh process, and are read the
same way: env steps sampled over the trial's training time (`time_total_s`, sampling and
learning, without Ray's start-up). One env step is one parallel step of all three agents.
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import EXPERIMENTS, load_line, machine, run_child
from rlsuite import metrics
from rlsuite.results import lookup, read_results

SUITE_EXPERIMENT = EXPERIMENTS / "ppo_shared_spread.py"
PETTINGZOO_MODULE = "mpe2.simple_spread_v3"

# What a user writes with RLlib alone (RLlib's PettingZoo example, one shared policy).
# Prints the last training result (its env steps, training time and timers) as JSON.
RLLIB_DEFAULT = """
import json, sys
import ray
from mpe2 import simple_spread_v3
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.tune.registry import register_env

budget = int(sys.argv[1])
ray.init(address="local")  # a fresh local Ray, as on a machine without a cluster
register_env("spread", lambda _: ParallelPettingZooEnv(simple_spread_v3.parallel_env()))
config = (
    PPOConfig()
    .environment("spread")
    .multi_agent(policies={"p"}, policy_mapping_fn=lambda *args, **kwargs: "p")
)
algo = config.build_algo()
result = algo.train()
while result["env_runners"]["num_env_steps_sampled_lifetime"] < budget:
    result = algo.train()
keys = ("env_runners", "time_total_s", "timers", "training_iteration")
print(json.dumps({key: result[key] for key in keys}, default=float))
algo.stop()
ray.shutdown()
"""


@dataclass(frozen=True)
class TrainingFigures:
    """Throughput of one training run and where its iterations' time went."""

    env_steps_per_s: float
    """Env steps sampled over training seconds (`time_total_s`)."""
    iterations: int
    sampling_s: float
    """Seconds per iteration spent sampling (RLlib's timer, smoothed)."""
    learning_s: float
    """Seconds per iteration spent in the learner update."""

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> TrainingFigures:
        return cls(
            env_steps_per_s=_number(result, metrics.ENV_STEPS_SAMPLED_LIFETIME)
            / _number(result, metrics.TIME_TOTAL_S),
            iterations=int(_number(result, metrics.TRAINING_ITERATION)),
            sampling_s=_number(result, metrics.SAMPLING_TIME_S),
            learning_s=_number(result, metrics.LEARNING_TIME_S),
        )


@dataclass(frozen=True)
class RawEnvFigures:
    """The PettingZoo env alone with uniformly random actions."""

    env_steps_per_s: float
    team_return_mean: float | None
    """Mean over the finished episodes of the sum of every agent's rewards (None: none
    finished)."""
    episodes: int

    def text(self) -> str:
        if self.team_return_mean is None:
            return "no episode finished"
        return f"team return {self.team_return_mean:.1f}, mean of {self.episodes} episodes"


@dataclass(frozen=True)
class MultiAgentBench:
    env_steps_budget: int
    raw: RawEnvFigures
    rllib_default: TrainingFigures
    """RLlib's default multi-agent PPO."""
    rlsuite: TrainingFigures
    """ppo_shared_spread.py through rlsuite.run."""
    machine_before: dict[str, Any]
    machine_after: dict[str, Any]

    @property
    def ratio(self) -> float:
        """rlsuite over RLlib's default path (the issue's goal: at least 10)."""
        return self.rlsuite.env_steps_per_s / self.rllib_default.env_steps_per_s

    def report(self) -> str:
        def line(name: str, rate: float) -> str:
            return f"  {name:<44} {rate:8.0f}  ({rate / self.raw.env_steps_per_s:6.1%} of raw)"

        def split(name: str, figures: TrainingFigures) -> str:
            return (
                f"  {name:<44} {figures.iterations:3d} iterations, per iteration "
                f"{figures.sampling_s:.1f} s sampling, {figures.learning_s:.1f} s learning"
            )

        return "\n".join(
            [
                "MPE simple_spread (3 agents), env steps per second; "
                f"training runs of {self.env_steps_budget:,} env steps:",
                f"  {'raw PettingZoo parallel env, random actions':<44} "
                f"{self.raw.env_steps_per_s:8.0f}  ({self.raw.text()})",
                line(
                    "RLlib default multi-agent PPO, shared policy",
                    self.rllib_default.env_steps_per_s,
                ),
                line("rlsuite ppo_shared_spread.py", self.rlsuite.env_steps_per_s),
                f"  ratio rlsuite / RLlib default {self.ratio:22.1f}x  (goal >= 10x; 1 round: no spread)",
                "where the time goes:",
                split("RLlib default", self.rllib_default),
                split("rlsuite", self.rlsuite),
                f"  {load_line(self.machine_before, self.machine_after)}",
            ]
        )

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio}


def measure(env_steps: int, raw_steps: int = 5_000) -> MultiAgentBench:
    # One round of each: the ratio is as good as the machine was quiet, so its load is kept.
    before = machine()
    raw = raw_env_run(raw_steps)
    rllib_default = rllib_default_run(env_steps)
    rlsuite = rlsuite_run(env_steps)
    return MultiAgentBench(env_steps, raw, rllib_default, rlsuite, before, machine())


def raw_env_run(steps: int, seed: int = 0) -> RawEnvFigures:
    """PettingZoo's simple_spread (the registry's `mpe/simple_spread`, its defaults) with
    uniformly random actions: parallel steps per second and the episodes' team return."""
    env = importlib.import_module(PETTINGZOO_MODULE).parallel_env()
    env.reset(seed=seed)
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed)
    returns: list[float] = []
    episode_return = 0.0
    start = time.perf_counter()
    for _ in range(steps):
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        _, rewards, _, _, _ = env.step(actions)
        episode_return += sum(rewards.values())
        if not env.agents:  # episode over (PettingZoo empties the agent list)
            returns.append(episode_return)
            episode_return = 0.0
            env.reset()
    rate = steps / (time.perf_counter() - start)
    env.close()
    mean = sum(returns) / len(returns) if returns else None
    return RawEnvFigures(rate, mean, len(returns))


def rllib_default_run(env_steps: int) -> TrainingFigures:
    child = run_child([sys.executable, "-c", RLLIB_DEFAULT, str(env_steps)])
    return TrainingFigures.from_result(json.loads(child.stdout.strip().splitlines()[-1]))


def rlsuite_run(env_steps: int) -> TrainingFigures:
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "rlsuite.run", str(SUITE_EXPERIMENT)]
        run_child([*command, "--stop", f"env_steps={env_steps}", "--storage-path", out])
        (result_file,) = Path(out).glob(f"{SUITE_EXPERIMENT.stem}/*/result.json")
        return TrainingFigures.from_result(read_results(result_file)[-1])


def _number(result: dict[str, Any], key: str) -> float:
    """A `/`-separated key of a training result, which must be there."""
    value = lookup(result, key)
    if value is None:
        raise KeyError(f"the training result has no {key}")
    return float(value)
