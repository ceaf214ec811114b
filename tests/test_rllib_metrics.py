"""What RLlib's `episode_return_mean` averages over, which the suite's stops rely on and
docs/performance.md ("CartPole to 450 in 5 s") states: in Ray 2.60 the env runner clears its
windowed stats each time it reports, so the mean covers the episodes finished since the last
report (at most `metrics_num_episodes_for_smoothing` of them), not the last 100 overall."""

import pytest
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.utils.metrics import EPISODE_RETURN_MEAN


@pytest.fixture
def runner():
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=1)
        .debugging(seed=0)  # episode lengths fixed: the last assertion cannot hold by chance
    )
    runner = SingleAgentEnvRunner(config=config)
    yield runner
    runner.stop()


def test_episode_return_mean_covers_only_the_episodes_since_the_last_report(runner):
    first = runner.sample(num_episodes=5, random_actions=True)
    first_mean = float(runner.get_metrics()[EPISODE_RETURN_MEAN])
    second = runner.sample(num_episodes=2, random_actions=True)
    second_mean = float(runner.get_metrics()[EPISODE_RETURN_MEAN])

    returns = [episode.get_return() for episode in second]
    assert len(returns) == 2 and all(episode.is_done for episode in second)
    assert second_mean == pytest.approx(sum(returns) / 2)
    both = [episode.get_return() for episode in (*first, *second)]
    assert first_mean == pytest.approx(sum(both[:5]) / 5)
    # Random CartPole episodes differ in length, so a mean over all seven would differ too.
    assert sum(both) / 7 != pytest.approx(second_mean)
