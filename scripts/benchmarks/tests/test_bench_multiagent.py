"""The multi-agent benchmark's arithmetic, and its raw-env side on the real env."""

from __future__ import annotations

import json
import sys
import types

import gymnasium
import pytest

from benchmarks import multiagent
from benchmarks.multiagent import (
    MultiAgentBench,
    RawEnvFigures,
    Round,
    TrainingFigures,
    raw_env_run,
)


def _round(raw: float, default: float, shared: float, mappo: float) -> Round:
    return Round(
        raw=RawEnvFigures(env_steps_per_s=raw, team_return_mean=-81.96, episodes=200),
        batched_env_steps_per_s=4 * raw,
        rllib_default=TrainingFigures(default, 3, 9.0, 71.0),
        suite={
            "ppo_shared_spread": TrainingFigures(shared, 4, 1.0, 0.5),
            "mappo_spread": TrainingFigures(mappo, 4, 1.2, 0.6),
        },
    )


def test_multiagent_bench_reports_medians_shares_and_ratios() -> None:
    before, after = {"cpus": 2, "load_average_1m": 0.4}, {"cpus": 2, "load_average_1m": 2.1}
    rounds = [
        _round(3000.0, 50.0, 2400.0, 2100.0),
        _round(2500.0, 60.0, 2600.0, 2000.0),  # the medians: 2,500 / 55 / 2,400 / 2,000
        _round(2400.0, 55.0, 2300.0, 1900.0),
    ]
    bench = MultiAgentBench(12_000, rounds, before, after)
    assert bench.rates("raw") == [3000.0, 2500.0, 2400.0]
    assert bench.share_of_raw("ppo_shared_spread") == 2400.0 / 2500.0
    assert bench.share_of_raw("batched") == 4.0
    assert bench.ratio("mappo_spread") == 2000.0 / 55.0
    report = bench.report()
    assert "3 rounds (medians, spread min-max)" in report
    assert "2400  (2300-2600)  (96% of raw)" in report
    assert "36.4x" in report and "43.6x" in report
    assert "per iteration 9.0 s sampling, 71.0 s learning" in report
    assert "(team return -82.0, mean of 200 episodes)" in report
    assert report.endswith("load average before 0.4, after 2.1 on 2 CPUs")
    figures = json.loads(json.dumps(bench.to_json()))
    assert figures["share_of_raw"]["ppo_shared_spread"] == 0.96
    assert figures["rounds"][0]["suite"]["mappo_spread"]["learning_s"] == 0.6
    assert figures["rounds"][0]["raw"] == {
        "env_steps_per_s": 3000.0,
        "team_return_mean": -81.96,
        "episodes": 200,
    }


def test_rounds_too_far_apart_give_no_share_or_ratio() -> None:
    rounds = [_round(3000.0, 50.0, 2400.0, 2100.0), _round(1500.0, 50.0, 2400.0, 2100.0)]
    bench = MultiAgentBench(12_000, rounds, {"cpus": 2, "load_average_1m": 0.4}, {})
    assert bench.share_of_raw("ppo_shared_spread") is None  # raw: 1,500-3,000
    assert bench.ratio("ppo_shared_spread") == 48.0  # RLlib's and the suite's rounds agree
    report = bench.report()
    assert report.count("(rounds differ >25%: no share of raw)") == 4  # every side but raw
    assert "48.0x" in report
    slow_suite = [_round(3000.0, 50.0, 2400.0, 2100.0), _round(3000.0, 50.0, 1700.0, 2100.0)]
    report = MultiAgentBench(12_000, slow_suite, {"cpus": 2, "load_average_1m": 0.4}, {}).report()
    assert "rounds differ >25%: no ratio  (goal >= 10x)" in report


def test_one_round_shows_no_spread() -> None:
    bench = MultiAgentBench(
        12_000, [_round(3000.0, 50.0, 2400.0, 2100.0)], {"cpus": 2, "load_average_1m": 0.4}, {}
    )
    assert "1 round: no spread" in bench.report()
    assert "2400  (80% of raw)" in bench.report()


def test_batched_env_rate_steps_the_suites_env() -> None:
    assert multiagent.batched_env_rate(64, num_envs=8) > 0


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
