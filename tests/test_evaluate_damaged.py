"""`python -m rlsuite.evaluate` on damaged, incomplete or foreign checkpoints and on outputs
it cannot write: one line on stderr, exit 2, nothing changed on disk. A bug in the suite
itself keeps its traceback (exit 1). The env's own failures and Ctrl-C:
test_evaluate_env_failures.py.

In this process for speed, on copies of one real smoke run (two checkpoints).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rlsuite import envs
from rlsuite.evaluate import main as evaluate_main
from tests.helpers import EARLIER, LATEST, ROOT

MODULE = Path("learner_group/learner/rl_module/default_policy")


def files(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes: what a refused evaluation must not change."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def assert_refused(
    capsys: pytest.CaptureFixture[str], root: Path, args: list[str | Path], *needles: str
) -> str:
    """Evaluate `args`: exit 2, one line on stderr holding `needles`, nothing played, no
    file under `root` changed, added or removed."""
    before = files(root)
    code = evaluate_main([str(a) for a in args])
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("rlsuite.evaluate: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert "episodes" not in out, out  # refused before anything played
    assert files(root) == before
    return lines[0]


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def garbage(path: Path) -> None:
    """A pickle's header, then noise."""
    path.write_bytes(b"\x80\x04\x95" + random.Random(0).randbytes(64))


@pytest.mark.parametrize("damage", [truncate, garbage])
def test_damaged_module_names_the_file_and_the_earlier_checkpoint(
    trial: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[Path], None],
) -> None:
    damaged = trial / LATEST / MODULE / "module_state.pkl"
    damage(damaged)
    line = assert_refused(
        capsys, tmp_path, [trial.parent, "--episodes", "1"], f"{damaged} is damaged"
    )
    assert line.endswith(
        f"the trial's previous checkpoint {EARLIER} is intact: add --checkpoint {EARLIER}"
    )


def test_checkpoint_flag_evaluates_the_earlier_checkpoint(
    trial: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truncate(trial / LATEST / MODULE / "module_state.pkl")
    code = evaluate_main([str(trial.parent), "--checkpoint", EARLIER, "--episodes", "1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith(f"checkpoint {trial / EARLIER} (trial {trial.name}")


def test_missing_file_is_named(
    trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = trial / LATEST / "env_runner/env_to_module_connector/state.pkl"
    missing.unlink()
    assert_refused(capsys, tmp_path, [trial, "--episodes", "1"], f"{missing} is missing", EARLIER)


def test_checkpoint_given_directly_points_to_the_earlier_one(
    trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for checkpoint in (LATEST, EARLIER):
        truncate(trial / checkpoint / MODULE / "class_and_ctor_args.pkl")
    line = assert_refused(capsys, tmp_path, [trial / LATEST, "--episodes", "1"], "is damaged")
    assert line.endswith(f"no earlier checkpoint of trial {trial.name} is intact")


def test_incomplete_checkpoint_directory(
    trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (trial / "checkpoint_000002").mkdir()  # a checkpoint cut off before its first file
    assert_refused(
        capsys, tmp_path, [trial], "checkpoint_000002 is incomplete", f"add --checkpoint {LATEST}"
    )


def test_unknown_checkpoint_name(
    trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_refused(
        capsys, tmp_path, [trial, "--checkpoint", "7"], "--checkpoint checkpoint_000007", LATEST
    )


def test_results_of_another_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Stable-Baselines3's layout: TensorBoard runs and zipped models, no Tune files."""
    results = tmp_path / "logs"
    (results / "PPO_1").mkdir(parents=True)
    (results / "PPO_1" / "events.out.tfevents.1.host").write_bytes(b"\x00" * 32)
    (results / "best_model.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    assert_refused(capsys, tmp_path, [results], "no trials or checkpoints here")


def test_checkpoint_of_another_rllib_stack(
    trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """RLlib's old API stack: policies/ instead of RLModules under learner_group/."""
    old = trial / "checkpoint_000002"
    (old / "policies" / "default_policy").mkdir(parents=True)
    shutil.copy(trial / LATEST / "rllib_checkpoint.json", old)
    (old / "policies" / "default_policy" / "policy_state.pkl").write_bytes(b"\x80\x04N.")
    assert_refused(capsys, tmp_path, [trial], "no RLModules in learner_group/learner/rl_module")


def test_video_that_cannot_be_written(
    trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_refused(capsys, tmp_path, [trial, "--video", "/proc/x.mp4"], "--video /proc/x.mp4")
    (tmp_path / "clip.mp4").mkdir()
    assert_refused(capsys, tmp_path, [trial, "--video", tmp_path / "clip.mp4"], "is a directory")


def test_no_episodes_without_an_export(
    trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It printed the checkpoint's line and exited 0, having done nothing."""
    assert_refused(capsys, tmp_path, [trial, "--episodes", "0"], "--episodes 0 plays nothing")


def test_export_directory_that_is_a_file(
    trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "exported").write_text("not a directory")
    assert_refused(
        capsys,
        tmp_path,
        [trial, "--export", "onnx", tmp_path / "exported"],
        "it is a file, not a directory",
    )


def test_recurrent_policy_export_is_refused(
    trial: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trained module replaced by a real LSTM one, as `--set
    rl_module.model_config.use_lstm=True` trains it."""
    env = envs.make("classic/cartpole")
    lstm = RLModuleSpec(
        module_class=DefaultPPOTorchRLModule,
        observation_space=env.observation_space,
        action_space=env.action_space,
        model_config=DefaultModelConfig(use_lstm=True),
    ).build()
    shutil.rmtree(trial / LATEST / MODULE)
    lstm.save_to_path(trial / LATEST / MODULE)
    out = tmp_path / "onnx"
    assert_refused(capsys, tmp_path, [trial, "--export", "onnx", out], "the policy is recurrent")
    assert not out.exists()


@pytest.mark.parametrize(
    "function",
    ["rlsuite.evaluation.policy.restore_connectors", "rlsuite.evaluation.rollout.play_episode"],
)
def test_a_bug_in_the_suite_keeps_its_traceback(
    trial: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], function: str
) -> None:
    """A RuntimeError while restoring (where damaged files are looked for) or playing is
    the suite's: it propagates instead of becoming a one-line usage error."""

    def bug(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the suite")

    monkeypatch.setattr(function, bug)
    with pytest.raises(RuntimeError, match="a bug in the suite"):
        evaluate_main([str(trial), "--episodes", "1"])
    assert "error:" not in capsys.readouterr().err


def test_a_bug_in_the_suite_exits_1_with_a_traceback(trial: Path) -> None:
    script = (
        "import sys, rlsuite.evaluation.rollout as rollout\n"
        "def bug(*args, **kwargs): raise RuntimeError('a bug in the suite')\n"
        "rollout.play_episode = bug\n"
        "from rlsuite.evaluate import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(trial), "--episodes", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "RuntimeError: a bug in the suite" in done.stderr
