"""Learning tests: slow, real, short. Run with `pytest -m slow`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from ray.rllib.core.rl_module.rl_module import RLModule

from rlsuite import envs, metrics
from rlsuite.evaluation import rollout
from rlsuite.evaluation.locate import locate
from rlsuite.evaluation.multiagent import MultiAgentEpisodeResult
from rlsuite.evaluation.options import EvaluateOptions
from rlsuite.evaluation.rl import prepare
from rlsuite.multiagent.matches import module_player, play_games, scripted_player
from rlsuite.multiagent.opponents import heuristic_move
from tests.helpers import ROOT, run_cli


@pytest.mark.slow
def test_ppo_cartpole_reaches_150(storage: Path) -> None:
    run = run_cli(
        ROOT / "experiments" / "ppo_cartpole.py",
        "--stop",
        "episode_return_mean=150",
        "--stop",
        "env_steps=200000",
        "--as-test",
        storage=storage,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (trial,) = run.summary("ppo_cartpole")["trials"]
    assert trial["best_episode_return_mean"] >= 150


# --as-test's exit 1 on a missed return: test_tracking.py's run (one run for both, CI time).


SELFPLAY_FRESH_WINS = 80  # measured: see the docstring


@pytest.mark.slow
def test_selfplay_connect4_beats_the_heuristic_player(storage: Path) -> None:
    """Self-play with the heuristic in the pool to the file's own stop (the callback's 200
    greedy games against it reach 0.92; it checks after iterations 1, 5, 10, ...), within
    120k env steps here (the file allows 500k), then 100 fresh games against it. Seeds 0-2
    of the file with the landing-square head (the benchmark table's run, 2026-11-29)
    stopped at 40k, 40k and 60k steps and won 0.95, 0.92 and 0.95 of 400 fresh games;
    this test's command and games, replayed by hand the same day beside two other runs:
    stopped at 0.95 at 60k steps, then 95 fresh wins of 100."""
    run = run_cli(
        ROOT / "experiments" / "selfplay_connect4.py",
        *("--seed", "0", "--stop", "win_rate_vs_heuristic=0.92", "--stop", "env_steps=120000"),
        storage=storage,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (trial,) = run.summary("selfplay_connect4")["trials"]
    modules = Path(trial["checkpoint"]) / "learner_group" / "learner" / "rl_module"
    learner = module_player(RLModule.from_checkpoint(modules / "main"))
    games = play_games(
        lambda: envs.make("classic/connect_four"),
        learner,
        scripted_player(heuristic_move),
        games=100,
        seed=2024,
    )
    assert games.wins >= SELFPLAY_FRESH_WINS, games


MADDPG_SPREAD_STEPS = 120_000
MADDPG_SPREAD_GAIN = 7.0  # about half the smallest measured gain (15.9, 20.7, 14.6)


@pytest.mark.slow
def test_maddpg_improves_simple_spreads_team_return(storage: Path) -> None:
    """MADDPG on continuous simple_spread for 120k env steps: the team return over its
    last 10k steps beats the one before learning starts (25.6k steps of exploration,
    a random policy's) by MADDPG_SPREAD_GAIN. Measured here with this command: seed 0
    -75.0 -> -59.1, seed 1 -78.2 -> -57.5, seed 2 -73.5 -> -58.9 (9-11 minutes of
    training each on one core)."""
    run = run_cli(
        ROOT / "experiments" / "maddpg_spread.py",
        *("--seed", "0", "--stop", f"env_steps={MADDPG_SPREAD_STEPS}"),
        storage=storage,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (trial,) = run.summary("maddpg_spread")["trials"]
    progress = pd.read_csv(storage / "maddpg_spread" / trial["trial"] / "progress.csv")
    steps = progress[metrics.ENV_STEPS_SAMPLED_LIFETIME]
    returns = progress[metrics.EPISODE_RETURN_MEAN]
    before = returns[steps < 25_600].mean()
    last = returns[steps > steps.iloc[-1] - 10_000].mean()
    assert last >= before + MADDPG_SPREAD_GAIN, (before, last)


VALUE_DECOMPOSITION_STEPS = 50_000
# About half the smaller gain measured at 50k steps (QMIX 20.5, VDN 17.8; seed 0 only).
VALUE_DECOMPOSITION_GAIN = 9.0


@pytest.mark.slow
@pytest.mark.parametrize("experiment", ["qmix_spread", "vdn_spread"])
def test_value_decomposition_improves_simple_spreads_team_return(
    experiment: str, storage: Path
) -> None:
    """QMIX and VDN on simple_spread for 50k env steps: the team return over the last 10k
    steps beats the first 5k (epsilon still above 0.9: nearly random actions) by
    VALUE_DECOMPOSITION_GAIN. Measured with `--seed 0 --stop env_steps=100000` (the two
    runs side by side on one core, ~23 minutes each): first 5k steps -81.5 (QMIX) and
    -81.7 (VDN); steps 40k-50k -59.7 and -63.3; the last 10k of 100k -60.4 and -54.5."""
    run = run_cli(
        ROOT / "experiments" / f"{experiment}.py",
        *("--seed", "0", "--stop", f"env_steps={VALUE_DECOMPOSITION_STEPS}"),
        storage=storage,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (trial,) = run.summary(experiment)["trials"]
    progress = pd.read_csv(storage / experiment / trial["trial"] / "progress.csv")
    steps = progress[metrics.ENV_STEPS_SAMPLED_LIFETIME]
    returns = progress[metrics.EPISODE_RETURN_MEAN]
    before = returns[steps <= 5_000].mean()
    last = returns[steps > steps.iloc[-1] - 10_000].mean()
    assert last >= before + VALUE_DECOMPOSITION_GAIN, (before, last)


MADDPG_TAG_STEPS = 1_000_000  # Lowe et al.'s budget: 40,000 episodes of 25 steps
TAG_EPISODES = 1_000
TAG_REWARD = 10.0  # every adversary's reward for one tag
TAG_TIMEOUT = 3 * 3600  # a run took 58 minutes here beside the other; alone it is faster


@pytest.mark.slow
def test_maddpg_hunters_tag_maddpg_prey_more_often_than_ddpg_hunters(storage: Path) -> None:
    """Lowe et al.'s predator-prey comparison: MADDPG hunters (centralized critics) and
    independent-DDPG hunters (`local_critics=['adversary']`), each trained 1M env steps
    against its own MADDPG prey (seed 0), then both played for 1,000 greedy episodes
    against the MADDPG run's prey (`rlsuite.evaluate --policy adversary=...`).

    It runs without the actors' output penalty (`actor_output_reg=0`), the config these
    figures were measured with: there the comparison holds (0.461 tags per episode, std
    0.88, against 0.352, std 0.84, 1.31x, two runs side by side, 58 minutes each; this
    test passed in 4,385 s with 0.452 against 0.307, 1.47x), but every hunter actor
    saturates. With the penalty, the default since, the DDPG hunters tagged the
    penalized MADDPG prey as often or more than MADDPG's in each of seeds 0-2 (1.10x,
    1.31x, 1.03x; docs/multiagent.md): the paper's comparison does not hold there, so this
    test pins the configuration where it was measured to. The margin is the issue's: more often.
    (The first pair was interrupted near 1M and resumed, which starts the replay buffer
    empty again, so the pairs differ.)"""
    flags = (
        *("--seed", "0", "--stop", f"env_steps={MADDPG_TAG_STEPS}"),
        *("--set", "training.actor_output_reg=0"),
    )
    experiment = ROOT / "experiments" / "maddpg_tag.py"
    maddpg = run_cli(experiment, *flags, "--name", "maddpg", storage=storage, timeout=TAG_TIMEOUT)
    assert maddpg.returncode == 0, maddpg.stdout[-2000:] + maddpg.stderr[-2000:]
    local = ("--set", "training.local_critics=['adversary']", "--name", "ddpg")
    ddpg = run_cli(experiment, *flags, *local, storage=storage, timeout=TAG_TIMEOUT)
    assert ddpg.returncode == 0, ddpg.stdout[-2000:] + ddpg.stderr[-2000:]
    maddpg_tags = _tags_per_episode(storage / "maddpg")
    ddpg_tags = _tags_per_episode(storage / "maddpg", f"adversary={storage / 'ddpg'}")
    assert maddpg_tags > ddpg_tags, (maddpg_tags, ddpg_tags)


def _tags_per_episode(run: Path, *policies: str) -> float:
    """Tags per greedy episode: one adversary's mean return over the reward of a tag."""
    options = EvaluateOptions(path=run, episodes=TAG_EPISODES, policies=policies)
    evaluation = prepare(options, locate(run))
    results = rollout.play(evaluation.policy, evaluation.env, TAG_EPISODES, False, seed=0)
    agents, _ = rollout.summarize_agents(
        [r for r in results if isinstance(r, MultiAgentEpisodeResult)]
    )
    return agents["adversary_0"].mean / TAG_REWARD
