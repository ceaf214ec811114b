"""MADDPG and MASAC configs the suite refuses: one line, exit 2, before Ray starts, through
the launcher's `main` (a real process's one line: test_bad_input.py; the algorithms' unit
tests: test_maddpg.py). In process: six CLI processes took 33 s of CI."""

from __future__ import annotations

from pathlib import Path

import pytest
import ray

from tests.helpers import assert_rejected, run_main, write

EXPERIMENT = '''"""{CONFIG} on {ENV}."""
from rlsuite import Experiment, metrics
from rlsuite.multiagent.maddpg import MADDPGConfig, MASACConfig, joint

experiment = Experiment(
    config={CONFIG}().environment({ENVIRONMENT}){TRAINING},
    stop={{metrics.TRAINING_ITERATION: 2}},
)
'''


@pytest.mark.parametrize(
    ("config_class", "environment", "training", "needles"),
    [
        ("MADDPGConfig", "**joint('classic/connect_four')", "", ("turn-based",)),
        ("MADDPGConfig", "**joint('butterfly/pistonball')", "", ("image observations",)),
        ("MASACConfig", "**joint('mpe/simple_spread')", "", ("continuous actions only",)),
        ("MADDPGConfig", "'mpe/simple_spread'", "", ("joint(",)),
        (
            "MADDPGConfig",
            "**joint('mpe/simple_tag')",
            ".training(agent_policies=('a', 'b'))",
            ("agent_policies names 2 policies", "4 agents"),
        ),
        (
            "MADDPGConfig",
            "**joint('mpe/simple_spread')",
            ".training(local_critics=['adversary'])",
            ("local_critics names 'adversary'", "(shared)"),
        ),
        (
            "MADDPGConfig",
            "**joint('mpe/simple_tag')",
            ".training(actor_output_reg=-0.001)",
            ("actor_output_reg=-0.001", "weight >= 0"),
        ),
        (
            "MASACConfig",
            "**joint('sisl/multiwalker')",
            ".training(transition_replay=False, store_buffer_in_checkpoints=True)",
            ("store_buffer_in_checkpoints keeps the suite's replay from arrays only",),
        ),
    ],
)
def test_bad_input_is_refused_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    config_class: str,
    environment: str,
    training: str,
    needles: tuple[str, ...],
) -> None:
    text = EXPERIMENT.format(
        CONFIG=config_class, ENV=environment, ENVIRONMENT=environment, TRAINING=training
    )
    path = write(tmp_path, "maddpg_bad.py", text)
    storage = tmp_path / "results"
    ray_was_up = ray.is_initialized()  # another file's test in this worker may have left one
    code = run_main(path, "--smoke", storage=storage)
    assert_rejected(capsys, code, storage, *needles)
    assert ray.is_initialized() == ray_was_up, "refused after starting Ray"
