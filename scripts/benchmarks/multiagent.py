"""Multi-agent throughput: env steps per second on MPE simple_spread, side by side.

1. the raw PettingZoo parallel env alone, random actions (the ceiling issue 21 measures
   against; its episodes' mean team return is also the random baseline the experiments'
   docstrings quote);
2. the suite's batched simple_spread alone (envs/spread_vector.py, 128 envs), random
   actions: what the suite's runners step instead of PettingZoo's env, same task;
3. RLlib's default multi-agent path: plain `PPOConfig` on `ParallelPettingZooEnv` with one
   shared policy and RLlib's defaults otherwise, as RLlib's PettingZoo example sets it up;
4. the suite's `experiments/ppo_shared_spread.py` and `mappo_spread.py` through
   `python -m rlsuite.run`.

(3) and (4) train for the same env-step budget, each in a fresh process, and are read the
same way: env steps sampled over the trial's training time (`time_total_s`, sampling and
learning, without Ray's start-up). One env step is one parallel step of all three agents.
Each round runs every side once, in that order; the report gives medians over rounds
with their spread, and no ratio where a side's rounds differ by more than 25%.
"""

from __future__ import annotations

import importlib
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import (
    EXPERIMENTS,
    WITHHELD,
    load_line,
    machine,
    ratio_of_medians,
    rounds_title,
    run_child,
    spread_note,
)
from rlsuite import envs, metrics
from rlsuite.results import lookup, read_results

SUITE_EXPERIMENTS = ("ppo_shared_spread", "mappo_spread")
BATCHED_ENVS = 128  # the experiments' num_envs_per_env_runner
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
class Round:
    """One round: each side once, in this order, each in a fresh process but the raw envs."""

    raw: RawEnvFigures
    """PettingZoo's env alone: the ceiling the issue measures against."""
    batched_env_steps_per_s: float
    """The suite's batched simple_spread (envs/spread_vector.py) alone, random actions."""
    rllib_default: TrainingFigures
    suite: dict[str, TrainingFigures]
    """By experiment file stem (SUITE_EXPERIMENTS)."""


@dataclass(frozen=True)
class MultiAgentBench:
    env_steps_budget: int
    rounds: list[Round]
    machine_before: dict[str, Any]
    machine_after: dict[str, Any]

    def rates(self, side: str) -> list[float]:
        """env steps/s of "raw", "batched", "rllib_default" or a suite experiment, by round."""
        if side == "raw":
            return [r.raw.env_steps_per_s for r in self.rounds]
        if side == "batched":
            return [r.batched_env_steps_per_s for r in self.rounds]
        if side == "rllib_default":
            return [r.rllib_default.env_steps_per_s for r in self.rounds]
        return [r.suite[side].env_steps_per_s for r in self.rounds]

    def share_of_raw(self, side: str) -> float | None:
        """A side over PettingZoo's raw env (issue 21's goal for the suite: at least 0.8)."""
        return ratio_of_medians(self.rates(side), self.rates("raw"))

    def ratio(self, experiment: str) -> float | None:
        """A suite experiment over RLlib's default path (the goal: at least 10)."""
        return ratio_of_medians(self.rates(experiment), self.rates("rllib_default"))

    def report(self) -> str:
        def rate(name: str, side: str, note: str) -> str:
            values = self.rates(side)
            figure = f"{statistics.median(values):8.0f}{spread_note(values, '{:.0f}'.format)}"
            return f"  {name:<46} {figure}  {note}"

        def share(side: str) -> str:
            value = self.share_of_raw(side)
            return f"({WITHHELD}: no share of raw)" if value is None else f"({value:.0%} of raw)"

        def split(name: str, runs: list[TrainingFigures]) -> str:
            return (
                f"  {name:<46} per iteration {statistics.median(f.sampling_s for f in runs):.1f} s "
                f"sampling, {statistics.median(f.learning_s for f in runs):.1f} s learning"
            )

        raws = [r.raw for r in self.rounds]
        lines = [
            "MPE simple_spread (3 agents), env steps per second; training runs of "
            f"{self.env_steps_budget:,} env steps; {rounds_title(len(self.rounds))}:",
            rate("raw PettingZoo parallel env, random actions", "raw", f"({raws[0].text()})"),
            rate("the suite's batched env alone, random actions", "batched", share("batched")),
            rate(
                "RLlib default multi-agent PPO, shared policy",
                "rllib_default",
                share("rllib_default"),
            ),
        ]
        for experiment in SUITE_EXPERIMENTS:
            lines.append(rate(f"rlsuite {experiment}.py", experiment, share(experiment)))
        for experiment in SUITE_EXPERIMENTS:
            ratio = self.ratio(experiment)
            figure = f"{ratio:8.1f}x" if ratio is not None else f"  {WITHHELD}: no ratio"
            lines.append(f"  {f'{experiment} / RLlib default':<46} {figure}  (goal >= 10x)")
        lines.append("where the time goes (medians):")
        lines.append(split("RLlib default", [r.rllib_default for r in self.rounds]))
        for experiment in SUITE_EXPERIMENTS:
            lines.append(split(experiment, [r.suite[experiment] for r in self.rounds]))
        lines.append(f"  {load_line(self.machine_before, self.machine_after)}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        sides = ["raw", "batched", "rllib_default", *SUITE_EXPERIMENTS]
        return {
            **asdict(self),
            "median_env_steps_per_s": {s: statistics.median(self.rates(s)) for s in sides},
            "share_of_raw": {s: self.share_of_raw(s) for s in sides[1:]},
            "ratio_to_rllib_default": {e: self.ratio(e) for e in SUITE_EXPERIMENTS},
        }


def measure(env_steps: int, rounds: int, raw_steps: int = 20_000) -> MultiAgentBench:
    """`rounds` rounds, the sides alternating within each, so that a change in the machine's
    load falls on all of them alike. The raw envs step `raw_steps` (about 10 s for
    PettingZoo's here: 5,000 steps, 2.5 s, moved 27% between rounds)."""
    before = machine()
    done = [
        Round(
            raw=raw_env_run(raw_steps),
            batched_env_steps_per_s=batched_env_rate(raw_steps),
            rllib_default=rllib_default_run(env_steps),
            suite={e: rlsuite_run(e, env_steps) for e in SUITE_EXPERIMENTS},
        )
        for _ in range(rounds)
    ]
    return MultiAgentBench(env_steps, done, before, machine())


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


def batched_env_rate(steps: int, num_envs: int = BATCHED_ENVS, seed: int = 0) -> float:
    """env steps/s of the batched simple_spread with `num_envs` envs and random actions
    (each env's step counts as one, as in the training runs)."""
    env = envs.batched_multi_agent("mpe/simple_spread", num_envs, {})
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    vector_steps = max(1, steps // num_envs)
    start = time.perf_counter()
    for _ in range(vector_steps):
        moves = rng.integers(5, size=(num_envs, len(env.agents))).tolist()
        env.step([dict(zip(env.agents, row, strict=True)) for row in moves])
    rate = vector_steps * num_envs / (time.perf_counter() - start)
    env.close()
    return rate


def rlsuite_run(experiment: str, env_steps: int) -> TrainingFigures:
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "rlsuite.run", str(EXPERIMENTS / f"{experiment}.py")]
        run_child([*command, "--stop", f"env_steps={env_steps}", "--storage-path", out])
        (result_file,) = Path(out).glob(f"{experiment}/*/result.json")
        return TrainingFigures.from_result(read_results(result_file)[-1])


def _number(result: dict[str, Any], key: str) -> float:
    """A `/`-separated key of a training result, which must be there."""
    value = lookup(result, key)
    if value is None:
        raise KeyError(f"the training result has no {key}")
    return float(value)
