"""The benchmark table (scripts/benchmark.py): its rows cover experiments/, its page shows
only what was measured, `--only` keeps the other records, and its refusals (the `--check`
gate: test_benchmark_check.py). No test here trains: runs are fabricated trial folders or
measurements."""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
from pathlib import Path

import pytest

import benchmark
from benchmarks import experiment_file, table_render, table_run
from benchmarks.common import EXPERIMENTS, ROOT
from benchmarks.table import BY_NAME, ROWS, commands, fast_rows, plan
from benchmarks.table_records import VERSION, Measurement, Records
from benchmarks.table_render import list_lines, render
from benchmarks.tests.table_helpers import measurement, run_script, table_line
from rlsuite.errors import UsageError
from rlsuite.reporting import runs


def test_every_experiment_file_is_exactly_one_row_under_its_own_name() -> None:
    stems = sorted(p.stem for p in EXPERIMENTS.glob("*.py"))
    assert sorted(row.name for row in ROWS if row.name == row.stem) == stems
    assert {row.stem for row in ROWS} == set(stems)  # the other rows run one of those files
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


def test_a_row_measured_before_its_file_changed_says_so(monkeypatch) -> None:
    changed = dataclasses.replace(BY_NAME["ppo_cartpole"], changed_since="a larger model")
    rows = tuple(changed if row.name == "ppo_cartpole" else row for row in ROWS)
    monkeypatch.setattr(table_render, "ROWS", rows)
    measured = measurement([400.0, 450.0, 500.0], ["episode_return_mean=450"])
    cells = table_line(render(Records({"ppo_cartpole": measured}, {})), "ppo_cartpole")
    assert cells[10] == "2026-11-24 (A); the file changed since: a larger model"
    assert cells[4].startswith(f"{measured.summary.iqm:.4g} [")  # the figures stay


def test_unmeasured_rows_show_their_command_and_no_number() -> None:
    page = render(Records({}, {}))
    assert sum(line.startswith("| `") for line in page.splitlines()) == len(ROWS) + len(fast_rows())
    for name, status in [
        (
            "ppo_atari",
            "not measured here: needs a GPU machine (10M Atari steps); other runs, not in this "
            "table: 1M steps on 2 vCPUs, seeds 0 and 1, unpadded and padded CNN: "
            "[performance.md](performance.md"
            "#pong-the-nature-cnn-unpadded); 1.35M on an H200 with the padded CNN, seed 0: "
            "[performance.md](performance.md"
            "#on-an-h200-does-it-learn-at-scale-pong-at-the-experiments-own-settings); 793k "
            "on an H200 with sampling overlapped, seed 0: [performance.md](performance.md"
            "#on-an-h200-2026-11-30-ppo-with-sampling-overlapped-10000-env-stepss-met)",
        ),
        ("dqn_cartpole", "not measured here"),
        (
            "qmix_spread",
            "not measured here; other runs, not in this table: "
            "50k steps and 500k: [multiagent.md](multiagent.md#qmix-and-vdn)",
        ),
    ]:
        cells = table_line(page, name)
        assert cells[4] == status
        assert cells[2:4] == ["", ""] and cells[5:11] == [""] * 6
        assert cells[11] == f"`{commands(BY_NAME[name], 3).line}`"
    assert "Machines:" not in page


def test_the_committed_page_is_what_its_records_and_rows_render() -> None:
    """docs/benchmarks.md is written, never edited: a change to the rows shows in it."""
    page = ROOT / "docs" / "benchmarks.md"
    assert page.read_text() == render(Records.load(page.with_suffix(".json")))


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


def test_list_shows_a_rows_recorded_minutes_and_the_estimate_otherwise() -> None:
    cartpole, shared = BY_NAME["ppo_cartpole"], BY_NAME["ppo_shared_spread"]
    recorded = measurement([400.0, 420.0, 410.0], list(cartpole.measured_stop()))
    recorded = dataclasses.replace(recorded, train_s=[19.5, math.nan, 27.4])  # NaN: not read
    stale = measurement([-70.0, -66.0], ["env_steps=64000"])  # not the stop the row measures
    records = Records({"ppo_cartpole": recorded, "ppo_shared_spread": stale}, {})
    cartpole_line, shared_line = list_lines([cartpole, shared], records)
    expected = "measured 2026-11-24: 0.3-0.5 min of training a seed, 1.6 min wall for 3 seeds"
    assert expected in cartpole_line
    assert "(estimate)" not in cartpole_line and "--check at env_steps=8000" in cartpole_line
    assert shared_line.endswith(f"about {shared.minutes:g} min a seed (estimate)")
    pbt = BY_NAME["pbt_ppo_cartpole"]
    population = measurement([450.0], list(pbt.measured_stop()))
    (pbt_line,) = list_lines([pbt], Records({"pbt_ppo_cartpole": population}, {}))
    assert "0.5 min of the best trial's training a seed, 1.6 min wall for 1 seed" in pbt_line
    long = dataclasses.replace(population, train_s=[1768.3, 1790.6], wall_s=3602.1)
    (long_line,) = list_lines([pbt], Records({"pbt_ppo_cartpole": long}, {}))
    assert "29-30 min of the best trial's training a seed, 60 min wall" in long_line
    no_times = dataclasses.replace(population, train_s=[math.nan])
    (no_times_line,) = list_lines([pbt], Records({"pbt_ppo_cartpole": no_times}, {}))
    assert no_times_line.endswith(f"about {pbt.minutes:g} min a seed (estimate)")


def test_list_runs_nothing_and_reads_the_records_the_page_was_written_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, stderr, ray_imported = run_script("--list", "--only", "ppo_shared_spread")
    assert (code, stderr, ray_imported) == (0, [], False)
    assert benchmark.main(["--list", "--only", "ppo_shared_spread"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    recorded = Records.load(ROOT / "docs" / "benchmarks.json").rows["ppo_shared_spread"]
    assert line.startswith("ppo_shared_spread ") and f"measured {recorded.date}: " in line
