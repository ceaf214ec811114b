"""`python -m rlsuite.evaluate` where the user's env fails (its constructor, reset or step),
never ends, or the user presses Ctrl-C: the env's traceback and one line naming it (exit
1), one line for the rest, and an earlier video left as it was.

In this process for speed, on copies of one real smoke run (conftest's `trial`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlsuite.evaluate import main as evaluate_main


@pytest.mark.parametrize("method", ["reset", "step"])
def test_an_env_that_raises_ends_with_a_line_naming_it(
    trial: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], method: str
) -> None:
    """The user's env failing (here CartPole's own reset or step) is not a bug in the suite:
    its traceback, then one line saying where it failed, exit 1."""
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("the cart fell off")

    monkeypatch.setattr(CartPoleEnv, method, broken)
    code = evaluate_main([str(trial), "--episodes", "1"])
    *traceback, last = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and "KeyError: 'the cart fell off'" in traceback, traceback
    called = "reset(seed=0)" if method == "reset" else "step() of the episode seeded 0"
    assert last.startswith(f"rlsuite.evaluate: the env raised in {called}: KeyError: ")
    assert last.endswith(f"(at {__file__}:{broken.__code__.co_firstlineno + 1})"), last


def test_an_env_that_raises_while_built_ends_with_a_line_naming_it(
    trial: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was a traceback alone, and any TypeError said "cannot render RGB frames; drop
    --video" though no video was asked for."""
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    for error in (KeyError("no such pole"), TypeError("a bad length")):

        def broken(*args: object, raised: Exception = error, **kwargs: object) -> None:
            raise raised

        monkeypatch.setattr(CartPoleEnv, "__init__", broken)
        code = evaluate_main([str(trial), "--episodes", "1"])
        *traceback, last = capsys.readouterr().err.strip().splitlines()
        assert code == 1 and "Traceback (most recent call last):" in traceback, traceback
        assert last.startswith("rlsuite.evaluate: env ") and "raised while it was built" in last
        assert f"{type(error).__name__}: " in last and "drop --video" not in last, last


def test_an_env_config_key_the_env_refuses_is_one_line_and_exit_2(
    trial: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's env_config no longer fitting the env (its code changed since): said as
    `rlsuite.run` says it before Ray, through the same translation."""
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    def refuses(*args: object, **kwargs: object) -> None:
        raise TypeError("CartPoleEnv.__init__() got an unexpected keyword argument 'gravity'")

    monkeypatch.setattr(CartPoleEnv, "__init__", refuses)
    code = evaluate_main([str(trial), "--episodes", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert (
        err[0].startswith("rlsuite.evaluate: error: env ")
        and "does not take env_config key 'gravity'" in err[0]
    )


def test_ctrl_c_while_it_plays_is_one_line_and_exit_130(
    trial: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long evaluation stopped by Ctrl-C ended in torch's or numpy's traceback."""
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    step, calls = CartPoleEnv.step, iter(range(1_000_000))

    def ctrl_c_later(self: CartPoleEnv, action: object) -> object:
        if next(calls) == 5:
            raise KeyboardInterrupt
        return step(self, action)

    monkeypatch.setattr(CartPoleEnv, "step", ctrl_c_later)
    video = tmp_path / "clip.mp4"
    code = evaluate_main([str(trial), "--episodes", "3", "--video", str(video)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and len(err) == 1, err
    assert err[0].startswith("rlsuite.evaluate: interrupted") and not video.exists()


def test_an_episode_that_never_ends_is_an_error_not_a_hang(
    trial: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An env without a time limit (a class, or a `register_env` creator) played on and on;
    here CartPole registered without its 500-step limit, and the bound lowered below its
    shortest episodes (8 steps)."""
    import gymnasium as gym

    from rlsuite.evaluation import rollout

    monkeypatch.setattr(rollout, "MAX_EPISODE_STEPS", 3)
    entry_point = "gymnasium.envs.classic_control.cartpole:CartPoleEnv"
    monkeypatch.setitem(
        gym.registry,
        "EndlessCartPole-v0",
        gym.envs.registration.EnvSpec("EndlessCartPole-v0", entry_point=entry_point),
    )
    code = evaluate_main([str(trial), "--episodes", "1", "--env", "EndlessCartPole-v0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "the episode seeded 0 did not end in 3 steps" in err[0] and "TimeLimit" in err[0]


def test_a_video_whose_episodes_fail_leaves_the_earlier_video_as_it_was(
    trial: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The frames go to a partial file that replaces the named one only once every episode
    played: an env that fails midway keeps an earlier video whole and leaves no partial."""
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    from rlsuite.evaluation.video import count_frames

    video = tmp_path / "clip.mp4"
    video.write_bytes(b"an earlier video")
    step = CartPoleEnv.step
    calls = iter(range(1_000_000))

    def failing_later(self: CartPoleEnv, action: object) -> object:
        if next(calls) == 5:  # some frames are written first
            raise KeyError("the cart fell off")
        return step(self, action)

    monkeypatch.setattr(CartPoleEnv, "step", failing_later)
    assert evaluate_main([str(trial), "--episodes", "1", "--video", str(video)]) == 1
    assert video.read_bytes() == b"an earlier video"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4", "results"]

    monkeypatch.setattr(CartPoleEnv, "step", step)
    assert evaluate_main([str(trial), "--episodes", "1", "--video", str(video)]) == 0
    assert count_frames(video) > 1  # replaced by the new recording
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clip.mp4", "results"]
