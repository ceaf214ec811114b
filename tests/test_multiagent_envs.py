"""Every registered multi-agent env passes RLlib's MultiAgentEnv check and ours."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from pettingzoo.utils.wrappers import ClipOutOfBoundsWrapper, OrderEnforcingWrapper
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from rlsuite import envs
from rlsuite.envs.multiagent import make_parallel

MULTI_AGENT = [name for name in envs.names() if envs.is_multi_agent(name)]
AGENTS = {
    "mpe/simple_spread": [f"agent_{i}" for i in range(3)],
    "mpe/simple_tag": [*(f"adversary_{i}" for i in range(3)), "agent_0"],
    "sisl/multiwalker": [f"walker_{i}" for i in range(3)],
    "butterfly/pistonball": [f"piston_{i}" for i in range(20)],
    "classic/connect_four": ["player_0", "player_1"],
    "classic/tictactoe": ["player_1", "player_2"],
}


def test_registry_lists_the_multi_agent_families() -> None:
    assert set(AGENTS) <= set(MULTI_AGENT)
    assert not envs.is_multi_agent("classic/cartpole")


@pytest.mark.parametrize("name", MULTI_AGENT)
def test_multi_agent_env_passes_checks(name: str) -> None:
    env = envs.make(name)
    assert isinstance(env, MultiAgentEnv)
    check_multiagent_environments(env)
    if name in AGENTS:
        assert env.possible_agents == AGENTS[name]  # PettingZoo's order, every process alike
    observations, _ = env.reset(seed=0)
    for _ in range(5):
        _check_agent_dict(env, observations)
        actions = {agent: env.get_action_space(agent).sample() for agent in observations}
        observations, rewards, terminateds, truncateds, _ = env.step(actions)
        assert set(rewards) <= set(env.possible_agents)
        assert all(np.isscalar(r) for r in rewards.values())
        assert "__all__" in terminateds and "__all__" in truncateds
        if terminateds["__all__"] or truncateds["__all__"]:
            observations, _ = env.reset()
    env.close()


def _check_agent_dict(env: MultiAgentEnv, observations: dict) -> None:
    assert observations and set(observations) <= set(env.possible_agents)
    for agent, observation in observations.items():
        assert env.get_observation_space(agent).contains(observation), agent


@pytest.mark.parametrize("name", ["mpe/simple_spread", "sisl/multiwalker"])
def test_max_episode_steps_ends_the_episode(name: str) -> None:
    env = envs.make(name, {"max_episode_steps": 3})
    observations, _ = env.reset(seed=0)
    ends = []
    for _ in range(3):
        actions = {agent: env.get_action_space(agent).sample() for agent in observations}
        observations, _, terminateds, truncateds, _ = env.step(actions)
        ends.append(terminateds["__all__"] or truncateds["__all__"])
    assert ends == [False, False, True]


def test_mpe_time_limit_is_a_truncation() -> None:
    # (multiwalker reports its time limit as termination: PettingZoo's own choice)
    env = envs.make("mpe/simple_spread", {"max_episode_steps": 1})
    observations, _ = env.reset(seed=0)
    actions = {agent: env.get_action_space(agent).sample() for agent in observations}
    _, _, terminateds, truncateds, _ = env.step(actions)
    assert truncateds["__all__"] and not terminateds["__all__"]


def test_env_config_reaches_pettingzoo() -> None:
    env = envs.make("mpe/simple_spread", {"N": 4})
    assert env.possible_agents == [f"agent_{i}" for i in range(4)]


def test_pistonball_frames_are_84x84_grey_in_unit_range() -> None:
    env = envs.make("butterfly/pistonball")
    observations, _ = env.reset(seed=0)
    frame = observations["piston_0"]
    assert frame.shape == (84, 84, 1) and frame.dtype == np.float32
    assert 0.0 <= frame.min() < frame.max() <= 1.0
    assert env.get_observation_space("piston_0").shape == (84, 84, 1)


def test_continuous_envs_keep_box_actions() -> None:
    env = envs.make("sisl/multiwalker")
    space = env.get_action_space("walker_0")
    assert space.shape == (4,) and np.issubdtype(space.dtype, np.floating)


def test_connect_four_takes_turns_and_masks_full_columns() -> None:
    env = envs.make("classic/connect_four")
    observations, _ = env.reset(seed=0)
    movers = []
    for _ in range(6):  # fill column 0, the players alternating
        (agent,) = observations
        movers.append(agent)
        observations, *_ = env.step({agent: 0})
    assert movers == ["player_0", "player_1"] * 3
    (agent,) = observations
    mask = observations[agent]["action_mask"]
    assert list(mask) == [0, 1, 1, 1, 1, 1, 1]
    assert envs.is_turn_based("classic/connect_four")


def test_move_limit_truncates_a_turn_based_game() -> None:
    env = envs.make("classic/connect_four", {"max_episode_steps": 3})
    observations, _ = env.reset(seed=0)
    ends = []
    for column in (0, 1, 2):
        (agent,) = observations
        observations, _, terminateds, truncateds, _ = env.step({agent: column})
        ends.append((terminateds["__all__"], truncateds["__all__"]))
    assert ends == [(False, False), (False, False), (False, True)]


def test_sub_envs_of_a_launched_run_play_different_episodes() -> None:
    # RLlib's env check reseeds every sub-env with 42 (ray issue 46986); the launcher
    # turns it off for registry envs so unseeded runs do not replay one episode N times.
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

    from rlsuite.launcher import tuner as launcher
    from rlsuite.launcher.loader import load_experiment
    from tests.helpers import ROOT

    experiment = load_experiment(ROOT / "experiments" / "ppo_shared_spread.py")
    config = PPOConfig().update_from_dict(launcher.param_space(experiment))
    config.env_runners(num_env_runners=0, num_envs_per_env_runner=4)
    assert config.seed is None
    envs.register(config.env)
    runner = MultiAgentEnvRunner(config=config)
    episodes = runner.sample(num_episodes=8, random_actions=True)
    runner.stop()
    starts = {tuple(e.agent_episodes["agent_0"].get_observations(0).round(5)) for e in episodes}
    assert len(starts) == len(episodes)


@pytest.mark.parametrize("name", MULTI_AGENT)
def test_multi_agent_env_renders_rgb_frames(name: str) -> None:
    # RLlib's PettingZoo wrappers pass a render mode to PettingZoo's render(), which takes
    # none; envs/multiagent.py fixes that, and evaluation videos rely on it.
    env = envs.make(name, {"render_mode": "rgb_array"})
    env.reset(seed=0)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.ndim == 3 and frame.shape[-1] == 3
    assert env.metadata.get("render_fps")  # videos play at the env's own frame rate
    env.close()


def test_turn_based_observations_are_what_rllibs_masking_module_reads() -> None:
    env = envs.make("classic/connect_four")
    space = env.get_observation_space("player_0")
    assert set(space.spaces) == {"observations", "action_mask"}
    observations, _ = env.reset(seed=0)
    observation = observations["player_0"]
    assert observation["observations"].dtype == np.float32
    assert observation["action_mask"].dtype == np.float32 and space.contains(observation)


def test_checking_wrappers_are_dropped_and_others_kept() -> None:
    spread = make_parallel("mpe2.simple_spread_v3").par_env.aec_env
    assert not isinstance(spread.env, OrderEnforcingWrapper)
    assert spread.env is spread.unwrapped
    walker = make_parallel("pettingzoo.sisl.multiwalker_v9").par_env.aec_env
    chain = []
    inner = walker.env
    while inner is not inner.unwrapped:
        chain.append(type(inner))
        inner = inner.env
    assert ClipOutOfBoundsWrapper in chain  # continuous actions are still clipped


def test_rendered_frames_leave_torchs_compiler_importable() -> None:
    """A rendered pygame env (multiwalker) with SDL's default video driver made a later
    `import triton` (torch's compiler; transformers imports it) die with SIGSEGV."""
    code = (
        "from rlsuite import envs\n"
        "env = envs.make('sisl/multiwalker', {'render_mode': 'rgb_array'})\n"
        "env.reset(seed=0)\n"
        "assert env.render().shape == (400, 600, 3)\n"
        "import triton\n"
    )
    environ = {k: v for k, v in os.environ.items() if k != "SDL_VIDEODRIVER"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=environ
    )
    assert done.returncode == 0, done.stderr[-2000:]
