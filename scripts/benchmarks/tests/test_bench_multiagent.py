"""The multi-agent benchmark's arithmetic, and its raw-env side on the real env."""

from __future__ import annotations

import json
import sys
import types

import gymnasium
import pytest

from benchmarks import multiagent
from benchmarks.multiagent import MultiAgentBench, RawEnvFigures, TrainingFigures, raw_env_run


def test_multiagent_bench_reports_ratios_against_rllibs_default_path() -> None:
    default = TrainingFigures(env_steps_per_s=50.0, iterations=3, sampling_s=9.0, learning_s=71.0)
    suite = TrainingFigures(env_steps_per_s=600.0, iterations=4, sampling_s=4.5, learning_s=0.5)
    before, after = {"cpus": 2, "load_average_1m": 0.4}, {"cpus": 2, "load_average_1m": 2.1}
    raw = RawEnvFigures(env_steps_per_s=3000.0, team_return_mean=-81.96, episodes=200)
    bench = MultiAgentBench(12_000, raw, default, suite, before, after)
    assert bench.ratio == 12.0
    report = bench.report()
    assert "1 round: no spread" in report  # one run each: no spread to invent
    assert report.endswith("load average before 0.4, after 2.1 on 2 CPUs")
    assert "12.0x" in report and "20.0% of raw" in report and "1.7% of raw" in report
    assert "9.0 s sampling, 71.0 s learning" in report
    assert "(team return -82.0, mean of 200 episodes)" in report
    figures = json.loads(json.dumps(bench.to_json()))
    assert figures["rllib_default"]["learning_s"] == 71.0
    assert figures["raw"] == {
        "env_steps_per_s": 3000.0,
        "team_return_mean": -81.96,
        "episodes": 200,
    }


def test_multiagent_figures_read_a_nested_training_result() -> None:
    result = {
        "env_runners": {"num_env_steps_sampled_lifetime": 3200},
        "time_total_s": 8.0,
        "training_iteration": 1,
        "timers": {"env_runner_sampling_timer": 6.5, "learner_update_timer": 1.0},
    }
    figures = TrainingFigures.from_result(result)
    assert figures == TrainingFigures(400.0, 1, 6.5, 1.0)


def test_raw_env_run_steps_the_real_env_through_episode_ends() -> None:
    raw = raw_env_run(60)  # simple_spread episodes last 25 steps: two end, the third is cut
    assert raw.env_steps_per_s > 0 and raw.episodes == 2
    again = raw_env_run(60)  # seeded: the same episodes, the same team return
    assert (again.team_return_mean, again.episodes) == (raw.team_return_mean, raw.episodes)


class _ThreeStepEnv:
    """Two agents rewarded -1 and -2 a step; episodes of three steps."""

    possible_agents = ("a", "b")

    def __init__(self) -> None:
        self.agents: list[str] = []
        self.steps = 0

    def reset(self, seed: int | None = None) -> None:
        self.agents, self.steps = list(self.possible_agents), 0

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return gymnasium.spaces.Discrete(2)

    def step(self, actions: dict[str, int]) -> tuple[dict, dict, dict, dict, dict]:
        assert sorted(actions) == self.agents  # every live agent acts
        self.steps += 1
        if self.steps == 3:
            self.agents = []
        return {}, {"a": -1.0, "b": -2.0}, {}, {}, {}

    def close(self) -> None:
        pass


def test_raw_env_run_sums_every_agents_rewards_over_whole_episodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = types.ModuleType("fake_spread")
    fake.parallel_env = _ThreeStepEnv  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_spread", fake)
    monkeypatch.setattr(multiagent, "PETTINGZOO_MODULE", "fake_spread")
    raw = multiagent.raw_env_run(7)  # two whole episodes; the third's one step is not counted
    assert (raw.team_return_mean, raw.episodes) == (-9.0, 2)
    assert raw.text() == "team return -9.0, mean of 2 episodes"
    none = multiagent.raw_env_run(2)
    assert (none.team_return_mean, none.episodes, none.text()) == (None, 0, "no episode finished")
