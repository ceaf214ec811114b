"""scripts/bench_scale.py's report, on runs built by hand (no training)."""

from __future__ import annotations

import pytest

from benchmarks import scale
from benchmarks.scale import ScaleResult, ScaleRun, Setting

MACHINE = {"cpus": 2, "load_average_1m": 0.5}


def _run(steady: float) -> ScaleRun:
    return ScaleRun(20_000, 100.0, steady, steady * 4, 1.0, 2.0, 3.0, 120.0, -20.0)


def test_scale_prints_a_spread_over_rounds_and_none_for_one_round() -> None:
    ppo, appo = Setting("ppo", 1, 0), Setting("appo", 1, 0)
    result = ScaleResult(20_000, "cmd", MACHINE, {ppo: [_run(80), _run(90)]}, MACHINE)
    report = result.report()
    assert "2 rounds (medians, spread min-max)" in report and "80-90" in report
    assert "load average before 0.5, after 0.5 on 2 CPUs" in report
    one = ScaleResult(20_000, "cmd", MACHINE, {appo: [_run(350)]}, MACHINE)
    assert "1 round: no spread" in one.report() and one.spread(appo) == "-"


def test_overlapped_ppo_is_ppo_atari_with_the_overlap_on(monkeypatch: pytest.MonkeyPatch) -> None:
    commands: list[list[str]] = []

    def child(command: list[str]) -> None:
        commands.append(command)
        raise RuntimeError("not run")

    monkeypatch.setattr(scale, "run_child", child)
    for algo in ("ppo", "ppo-overlapped"):
        with pytest.raises(RuntimeError, match="not run"):
            scale.run_one(Setting(algo, 14, 0.25), 1000, ["--set", "training.minibatch_size=64"])
    plain, overlapped = commands
    assert plain[3].endswith("ppo_atari.py") and overlapped[3] == plain[3]
    assert "training.overlap_sampling=True" not in plain
    flag = overlapped.index("training.overlap_sampling=True")
    assert overlapped[flag - 1] == "--set"
    # The user's own --set flags still reach both runs.
    assert (
        overlapped[-3:]
        == plain[-3:]
        == ["training.minibatch_size=64", "--num-gpus-per-learner", "0.25"]
    )
