"""The benchmark table (scripts/benchmark.py): its rows cover experiments/, its page shows
only what was measured, `--only` keeps the other records, the `--check` gate's verdicts,
and its refusals. No test here trains: runs are fabricated trial folders or measurements."""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import benchmark
from benchmarks import experiment_file, table_run
from benchmarks.common import EXPERIMENTS, ROOT, scripts_on_path
from benchmarks.table import BY_NAME, ROWS, commands, fast_rows, plan
from benchmarks.table_records import (
    VERSION,
    CheckOutcome,
    Measurement,
    Records,
    Scores,
    missing_checks,
)
from benchmarks.table_render import render
from rlsuite.errors import UsageError
from rlsuite.reporting import runs

MACHINE = {"cpus": 2, "cpu_model": "AMD EPYC", "processor": "x86_64", "gpus": []}
VERSIONS = {"python": "3.11.9", "ray": "2.60.0", "torch": "2.15.0"}


def measurement(
    scores: list[float], stop: list[str], command: str = "python -m rlsuite.run x"
) -> Measurement:
    return Measurement(
        command=command,
        stop=stop,
        metric="env_runners/episode_return_mean",
        window="last 5 iterations",
        seeds=list(range(len(scores))),
        scores=scores,
        steps=[64_000.0] * len(scores),
        steps_unit="env steps",
        throughput=1234.5,
        throughput_unit="env steps/s",
        train_s=[30.0] * len(scores),
        wall_s=95.0,
        figure="benchmarks/ppo_cartpole.png",
        machine=MACHINE,
        versions=VERSIONS,
        date="2026-11-24",
        summary=Scores.of(scores),
    )


def table_line(page: str, name: str, table: int = 0) -> list[str]:
    """A row's cells in the page's main table (0) or in the gate's (1)."""
    lines = [line for line in page.splitlines() if line.startswith(f"| `{name}` |")]
    return [cell.strip() for cell in lines[table].strip("|").split(" | ")]


def run_script(*args: str) -> tuple[int, list[str], bool]:
    """The script as a user runs it: exit code, stderr lines, whether Ray was imported."""
    program = (
        "import runpy, sys\n"
        f"sys.argv = ['scripts/benchmark.py', *{list(args)!r}]\n"
        "try:\n"
        "    runpy.run_path('scripts/benchmark.py', run_name='__main__')\n"
        "except SystemExit as end:\n"
        "    print('ray' in sys.modules, end.code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=scripts_on_path(),
    )
    imported_ray, code = done.stdout.split()[-2:]
    return int(code), done.stderr.strip().splitlines(), imported_ray == "True"


def test_every_experiment_file_is_exactly_one_row() -> None:
    assert sorted(row.name for row in ROWS) == sorted(p.stem for p in EXPERIMENTS.glob("*.py"))
    assert len(BY_NAME) == len(ROWS)


def test_every_row_reads_its_stop_and_the_fast_rows_check_a_fixed_budget() -> None:
    for row in ROWS:
        assert row.measured_stop() and all("=" in value for value in row.measured_stop())
    assert experiment_file.stop("ppo_cartpole") == ("episode_return_mean=450", "env_steps=500000")
    assert experiment_file.stop("bert_mnli") == ("epoch=4",)  # a module constant, resolved
    fast = fast_rows()
    assert {row.name for row in fast} >= {
        "ppo_cartpole",
        "dqn_cartpole",
        "sac_pendulum",
        "mappo_spread",
    }
    for row in fast:  # a return threshold would stop every seed at the same score
        assert row.cpu_ok and not row.population
        assert [value.split("=")[0] for value in row.check_stop] == ["env_steps"]


def test_a_population_runs_once_per_seed_and_a_single_config_once() -> None:
    single = commands(BY_NAME["ppo_cartpole"], 3)
    [argv] = single.argvs
    assert shlex.split(single.line) == ["python", *argv]
    assert argv[argv.index("--seeds") + 1] == "3" and single.names == ["ppo_cartpole"]
    population = commands(BY_NAME["pbt_ppo_cartpole"], 2)
    assert population.names == ["pbt_ppo_cartpole-seed0", "pbt_ppo_cartpole-seed1"]
    assert [argv[argv.index("--seed") + 1] for argv in population.argvs] == ["0", "1"]
    assert population.line.startswith("for s in 0 1; do python -m rlsuite.run")
    check = commands(BY_NAME["mappo_spread"], 3, check=True)
    assert check.names == ["mappo_spread-check"] and "env_steps=64000" in check.argvs[0]


def test_the_plan_leaves_out_rows_over_the_budget_or_beyond_two_cpus() -> None:
    chosen = plan(None, seeds=3, budget_minutes=60)
    names = {row.name for row in chosen.rows}
    assert "ppo_cartpole" in names and "ppo_atari" not in names
    assert all(row.cpu_ok and row.minutes * 3 <= 60 for row in chosen.rows)
    assert len(chosen.rows) + len(chosen.skipped) == len(ROWS)
    assert any(line.startswith("skipped ppo_atari: needs a GPU machine") for line in chosen.skipped)
    assert plan(["ppo_atari"], seeds=1, budget_minutes=None).rows == [BY_NAME["ppo_atari"]]


def test_a_measured_row_shows_its_figures_command_and_machine() -> None:
    measured = measurement(
        [400.0, 450.0, 500.0], ["episode_return_mean=450"], "python -m rlsuite.run a b"
    )
    page = render(Records({"ppo_cartpole": measured}, {}))
    cells = table_line(page, "ppo_cartpole")
    low, high = measured.summary.ci
    assert cells[4] == f"{measured.summary.iqm:.4g} [{low:.4g}, {high:.4g}]"
    assert cells[5] == f"450 ± {measured.summary.std:.4g}"
    assert cells[6] == "64,000 / 64,000 / 64,000 env steps" and cells[7] == "1,234 env steps/s"
    assert cells[8] == "30 / 30 / 30 s training; 95 s wall"
    assert cells[9] == "[png](benchmarks/ppo_cartpole.png)"
    assert cells[10] == "2026-11-24 (A)" and cells[11] == "`python -m rlsuite.run a b`"
    assert "- A: 2 CPUs (AMD EPYC), no GPU; Ray 2.60.0, torch 2.15.0" in page


def test_unmeasured_rows_show_their_command_and_no_number() -> None:
    page = render(Records({}, {}))
    assert sum(line.startswith("| `") for line in page.splitlines()) == len(ROWS) + len(fast_rows())
    for name, status in [
        ("ppo_atari", "not measured here: needs a GPU machine (10M Atari steps: days on 2 CPUs)"),
        ("dqn_cartpole", "not measured here"),
    ]:
        cells = table_line(page, name)
        assert cells[4] == status
        assert cells[2:4] == ["", ""] and cells[5:11] == [""] * 6
        assert cells[11] == f"`{commands(BY_NAME[name], 3).line}`"
    assert "Machines:" not in page


def test_a_run_of_one_row_keeps_the_other_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "docs" / "benchmarks.md"
    kept = measurement([-60.0, -65.0, -70.0], ["env_steps=2000000"])
    Records({"mappo_spread": kept}, {"mappo_spread": kept}).save(output.with_suffix(".json"))
    fresh = measurement([480.0, 490.0, 500.0], ["episode_return_mean=450"])
    monkeypatch.setattr(table_run, "measure", lambda row, seeds, **_: fresh)
    assert benchmark.main(["--only", "ppo_cartpole", "--output", str(output)]) == 0
    records = Records.load(output.with_suffix(".json"))
    assert records.rows == {"mappo_spread": kept, "ppo_cartpole": fresh}
    assert records.checks == {"mappo_spread": kept, "ppo_cartpole": fresh}  # a fast row's
    page = output.read_text()
    assert table_line(page, "ppo_cartpole")[3] == "3" and table_line(page, "mappo_spread")[3] == "3"
    assert json.loads(output.with_suffix(".json").read_text())["version"] == 1


def test_records_of_another_version_are_refused_not_misread(tmp_path: Path) -> None:
    path = tmp_path / "benchmarks.json"
    Records({}, {}).save(path)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "version": VERSION + 1}))
    expected = rf"version {VERSION + 1}, this script writes {VERSION}\); restore it from git"
    with pytest.raises(UsageError, match=expected):
        Records.load(path)


def test_a_run_within_no_row_budget_writes_the_page_of_unmeasured_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "benchmarks.md"
    assert benchmark.main(["--budget-minutes", "0.5", "--output", str(output)]) == 0
    skipped = [line for line in capsys.readouterr().out.splitlines() if line.startswith("skipped")]
    assert len(skipped) == len(ROWS)
    page = output.read_text()
    assert all("not measured here" in table_line(page, row.name)[4] for row in ROWS)
    assert Records.load(output.with_suffix(".json")) == Records({}, {})


def test_the_check_passes_inside_the_recorded_interval_and_fails_outside() -> None:
    recorded = measurement([10.0, 15.0, 20.0], ["env_steps=64000"])
    low, high = recorded.summary.ci
    assert 10.0 <= low < high <= 20.0
    inside = CheckOutcome("ppo_cartpole", (low + high) / 2, recorded)
    assert inside.passed and inside.line().startswith("PASS ppo_cartpole: IQM")
    for iqm, side in [(low - 1, "below"), (high + 1, "above"), (math.nan, "no final score")]:
        outcome = CheckOutcome("ppo_cartpole", iqm, recorded)
        assert not outcome.passed and outcome.line().startswith("FAIL") and side in outcome.line()


def test_the_gate_exits_1_when_a_fresh_run_falls_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "benchmarks.md"
    recorded = measurement([10.0, 15.0, 20.0], ["env_steps=64000"])
    Records({}, {"ppo_cartpole": recorded}).save(output.with_suffix(".json"))
    for scores, code in [([14.0, 15.0, 16.0], 0), ([30.0, 31.0, 32.0], 1)]:
        fresh = measurement(scores, ["env_steps=64000"])
        monkeypatch.setattr(table_run, "measure", lambda row, seeds, fresh=fresh, **_: fresh)
        assert (
            benchmark.main(["--check", "--only", "ppo_cartpole", "--output", str(output)]) == code
        )


def test_a_check_without_a_usable_record_names_the_command_that_records_it() -> None:
    stale = measurement([10.0, 15.0, 20.0], ["env_steps=50000"])
    line = missing_checks(
        [("mappo_spread", ("env_steps=64000",))], Records({}, {"mappo_spread": stale})
    )
    assert line is not None and "recorded at env_steps=50000" in line
    assert line.endswith("python scripts/benchmark.py --only mappo_spread --record-check")
    both = missing_checks([("a", ("env_steps=1",)), ("b", ("env_steps=1",))], Records({}, {}))
    assert both is not None and "--only a --only b --record-check" in both


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--only", "ppo_cartpol"],
            "argument --only: invalid choice: 'ppo_cartpol' (choose from 'appo_atari'",
        ),
        (["--check", "--only", "ppo_atari"], "--check: ppo_atari has no check run (the fast rows:"),
        (["--check", "--output", "README.md/b.md"], "--output README.md/b.md: README.md is a file"),
        (["--seeds", "0"], "argument --seeds: must be at least 1"),
        (["--record-check", "--budget-minutes", "5"], "--record-check runs the fast rows' short"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_ray_loads(args: list[str], message: str) -> None:
    code, lines, imported_ray = run_script(*args)
    assert code == 2 and len(lines) == 1 and not imported_ray, lines
    assert lines[0].startswith("python scripts/benchmark.py: error: ") and message in lines[0]


def test_check_without_records_is_one_line_naming_the_record_command(tmp_path: Path) -> None:
    code, lines, imported_ray = run_script("--check", "--output", str(tmp_path / "b.md"))
    assert code == 2 and len(lines) == 1 and not imported_ray, lines
    assert "have no usable recorded check run" in lines[0] and "--record-check" in lines[0]


def write_trial(
    folder: Path, seed: int, returns: list[float], steps_per_iteration: int = 1000
) -> None:
    """A trial folder as Tune writes it: params.json and one result.json line per iteration."""
    folder.mkdir(parents=True)
    (folder / "params.json").write_text(json.dumps({"seed": seed}))
    lines = []
    for i, value in enumerate(returns, start=1):
        runners = {
            "episode_return_mean": value,
            "num_env_steps_sampled_lifetime": i * steps_per_iteration,
            "num_env_steps_sampled_lifetime_throughput": {"throughput_since_last_reduce": 500.0},
        }
        lines.append(
            json.dumps({"training_iteration": i, "time_total_s": 2.0 * i, "env_runners": runners})
        )
    (folder / "result.json").write_text("\n".join(lines) + "\n")


def test_a_population_scores_its_best_trial_and_draws_the_curve(tmp_path: Path) -> None:
    populations = []
    for seed, best in [(0, 300.0), (1, 400.0)]:
        run = tmp_path / f"pbt_ppo_cartpole-seed{seed}"
        write_trial(run / "PPO_a_00000", seed, [10.0] * 6)
        write_trial(run / "PPO_a_00001", seed, [best] * 6)
        populations.append(runs.load(run))
    row = BY_NAME["pbt_ppo_cartpole"]
    measured = table_run.score(
        row, populations, "cmd", row.measured_stop(), 12.0, tmp_path / "figs"
    )
    assert measured.scores == [300.0, 400.0] and measured.seeds == [0, 1]
    assert measured.steps == [6000.0, 6000.0] and measured.throughput == 500.0
    assert measured.summary.mean == 350.0 and measured.train_s == [12.0, 12.0]
    assert (
        measured.figure == "figs/pbt_ppo_cartpole.png"
        and (tmp_path / measured.figure).stat().st_size
    )
    assert Measurement.from_json(json.loads(json.dumps(measured.to_json()))) == measured


def test_a_single_config_scores_each_seed_over_its_last_iterations(tmp_path: Path) -> None:
    run = tmp_path / "ppo_cartpole"
    write_trial(run / "PPO_a_00001", 1, [0.0] * 5 + [100.0] * 5)
    write_trial(run / "PPO_a_00000", 0, [0.0] * 5 + [200.0] * 5)
    row = BY_NAME["ppo_cartpole"]
    measured = table_run.score(row, [runs.load(run)], "cmd", row.measured_stop(), 5.0)
    assert measured.seeds == [0, 1] and measured.scores == [200.0, 100.0]
    assert measured.figure is None and measured.stop == [
        "episode_return_mean=450",
        "env_steps=500000",
    ]


def test_the_gate_checks_the_recorded_rows_and_names_the_unrecorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --only, fast rows with no record are named (with the command that records
    them) and the recorded ones are gated; with --only naming an unrecorded row, exit 2."""
    output = tmp_path / "benchmarks.md"
    recorded = measurement([10.0, 15.0, 20.0], ["env_steps=64000"])
    Records({}, {"ppo_cartpole": recorded}).save(output.with_suffix(".json"))
    checked = []

    def fake_measure(row: object, seeds: int, **_: object) -> Measurement:
        checked.append(row.name)
        return measurement([14.0, 15.0, 16.0], ["env_steps=64000"])

    monkeypatch.setattr(table_run, "measure", fake_measure)
    assert benchmark.main(["--check", "--output", str(output)]) == 0
    assert checked == ["ppo_cartpole"]
    out = capsys.readouterr().out.splitlines()
    ungated = [line for line in out if line.startswith("not gated: ")]
    assert len(ungated) == len(fast_rows()) - 1, out
    assert any(
        "sac_pendulum has no recorded check run" in line
        and "--only sac_pendulum --record-check" in line
        for line in ungated
    )
    assert any(line.startswith("PASS ppo_cartpole") for line in out)
    assert benchmark.main(["--check", "--only", "sac_pendulum", "--output", str(output)]) == 2
