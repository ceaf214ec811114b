"""The report: figures plus a final-score table over seeds, per config and per trial."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from rlsuite import metrics
from rlsuite.reporting import figures, policies, runs, stats, sweep
from rlsuite.reporting.formatting import number, setting
from rlsuite.reporting.runs import Config, FinalWindow, Progress, Trial

IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def write(
    configs: list[Config], output: Path, window: FinalWindow | None = None
) -> tuple[Path, list[Path]]:
    """Write `output/report.md` and its PNGs; returns the markdown path and the figures it
    shows (not any other PNG already in `output`). `window`: what final scores average."""
    window = window or FinalWindow()
    output.mkdir(parents=True, exist_ok=True)
    finals = [np.array([t.final_score(c.metric, window) for t in c.trials]) for c in configs]
    lines = [f"# Report: {', '.join(c.label for c in configs)}", ""]
    axis = runs.progress(configs)
    curves = figures.learning_curves(configs, axis, output / "learning_curves.png")
    scores = figures.final_scores(
        configs, [f[np.isfinite(f)] for f in finals], output / "final_scores.png"
    )
    lines += [f"![learning curves]({curves.name})", "", f"![final scores]({scores.name})", ""]
    lines += _score_table(configs, finals, window, axis)
    for config in configs:
        lines += _trial_table(config, window, axis)
        lines += policies.section(config, output, window)
        lines += _pbt_section(config, output)
        if not config.lineage and not mutated_keys(config):  # a PBT population is no sweep
            lines += sweep.section(config, output)
    path = output / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path, [output / name for line in lines for name in IMAGE_LINK.findall(line)]


def _score_table(
    configs: list[Config], finals: list[np.ndarray], window: FinalWindow, axis: Progress
) -> list[str]:
    # Trials that count env steps are RL's, whose column is the env; others (supervised)
    # name a model and data set.
    workload = "env" if axis.key == runs.ENV_STEPS.key else "workload"
    lines = [
        "## Final scores over seeds",
        "",
        f"Final score: mean `{configs[0].metric}` over each trial's {window.describe()}. "
        "IQM: mean of the middle 50% of seeds; CI: 95% stratified bootstrap (as rliable).",
        "",
        f"| config | {workload} | seeds | IQM | 95% CI | mean | std |{_progress_header(axis)}",
        f"| --- | --- | ---: | ---: | --- | ---: | ---: |{_progress_rule(axis)}",
    ]
    for config, scores in zip(configs, finals, strict=True):
        scores = scores[np.isfinite(scores)]
        low, high = stats.stratified_bootstrap_ci(scores) if len(scores) else (np.nan, np.nan)
        lines.append(
            f"| {config.label} | {config.workload} | {len(scores)} | {number(stats.iqm(scores))} "
            f"| [{number(low)}, {number(high)}] | {number(_mean(scores))} "
            f"| {number(float(np.std(scores)) if len(scores) else np.nan)} "
            f"|{_progress_cells(config.trials, axis)}"
        )
    return [*lines, ""]


def _trial_table(config: Config, window: FinalWindow, axis: Progress) -> list[str]:
    lines = [
        f"### {config.label}: trials",
        "",
        f"| trial | seed | final | best |{_progress_header(axis)}",
        f"| --- | ---: | ---: | ---: |{_progress_rule(axis)}",
    ]
    best_of = np.nanmin if config.mode == "min" else np.nanmax
    for trial in config.trials:
        series = trial.series(config.metric)
        best = best_of(series) if np.isfinite(series).any() else np.nan
        final = trial.final_score(config.metric, window)
        lines.append(
            f"| {trial.name} | {trial.seed if trial.seed is not None else '-'} "
            f"| {number(final)} | {number(best)} |{_progress_cells([trial], axis)}"
        )
    return [*lines, ""]


def _progress_header(axis: Progress) -> str:
    rate = f" {axis.rate_label} |" if axis.rate_key else ""
    return f" {axis.label} |{rate} wall time (s) |"


def _progress_rule(axis: Progress) -> str:
    return " ---: |" * (3 if axis.rate_key else 2)


def _progress_cells(trials: list[Trial], axis: Progress) -> str:
    """The trials' mean last count (env steps, epochs), median throughput, mean wall time."""
    done = _mean([_last(t, axis.key) for t in trials])
    rate = f" {_whole(_throughput(trials, axis.rate_key))} |" if axis.rate_key else ""
    seconds = _mean([_last(t, metrics.TIME_TOTAL_S) for t in trials])
    return f" {_whole(done)} |{rate} {'-' if np.isnan(seconds) else f'{seconds:.1f}'} |"


def _pbt_section(config: Config, output: Path) -> list[str]:
    keys = mutated_keys(config)
    lineage = config.lineage
    if not keys and not lineage:
        return []
    lines = [f"### {config.label}: PBT", ""]
    if keys:
        figure = figures.hyperparameter_schedules(config, keys, output / f"pbt_{config.label}.png")
        lines += [f"![hyperparameter schedules]({figure.name})", ""]
    for exploit in lineage:
        changes = ", ".join(
            f"{key} {setting(exploit.source_config.get(key))} -> {setting(exploit.new_config.get(key))}"
            for key in keys
            if key in exploit.new_config
        )
        lines.append(
            f"- iteration {exploit.iteration}: {exploit.trial} copied {exploit.source} "
            f"(its iteration {exploit.source_iteration}); {changes or 'config unchanged'}"
        )
    return [*lines, ""]


def mutated_keys(config: Config) -> list[str]:
    """Numeric config keys whose value changed during some trial: PBT's mutations."""
    keys: set[str] = set()
    for trial in config.trials:
        seen: dict[str, set[Any]] = {}
        for result in trial.results:
            for key, value in (result.get("config") or {}).items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    seen.setdefault(key, set()).add(value)
        keys |= {key for key, values in seen.items() if len(values) > 1}
    return sorted(keys)


def _last(trial: Trial, key: str) -> float:
    values = trial.series(key)
    values = values[np.isfinite(values)]
    return float(values[-1]) if len(values) else np.nan


def _mean(values: list[float] | np.ndarray) -> float:
    """Mean of the finite values; NaN, without numpy's "Mean of empty slice" warning on
    stderr, when there are none (no trial reports the key)."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    return float(finite.mean()) if len(finite) else np.nan


def _whole(value: float) -> str:
    """A count or a rate: 46,702 env steps, 160 env steps/s, 10 epochs."""
    return "-" if np.isnan(value) else f"{value:,.0f}"


def _throughput(trials: list[Trial], key: str) -> float:
    """Median per-second rate over all iterations (robust to a slow first one)."""
    values = np.concatenate([t.series(key) for t in trials])
    values = values[np.isfinite(values)]
    return float(np.median(values)) if len(values) else np.nan
