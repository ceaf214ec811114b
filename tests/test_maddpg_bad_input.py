"""MADDPG and MASAC configs the suite refuses: one line, exit 2, before Ray starts,
through the real CLI (the algorithms' unit tests are in test_maddpg.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_cli, write

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
    ],
)
def test_bad_input_is_refused_in_one_line(
    tmp_path: Path, config_class: str, environment: str, training: str, needles: tuple[str, ...]
) -> None:
    text = EXPERIMENT.format(
        CONFIG=config_class, ENV=environment, ENVIRONMENT=environment, TRAINING=training
    )
    path = write(tmp_path, "maddpg_bad.py", text)
    storage = tmp_path / "results"
    run = run_cli(path, "--smoke", storage=storage, timeout=300)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 2, run.stderr[-2000:]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not storage.exists(), "bad input must not create the results directory"
