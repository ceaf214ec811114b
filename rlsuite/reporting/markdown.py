"""The report: figures plus a final-score table over seeds, per config and per trial."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from rlsuite import metrics
from rlsuite.reporting import figures, policies, stats, sweep
from rlsuite.reporting.runs import Config, FinalWindow, Trial

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
    curves = figures.learning_curves(configs, output / "learning_curves.png")
    scores = figures.final_scores(
        configs, [f[np.isfinite(f)] for f in finals], output / "final_scores.png"
    )
    lines += [f"![learning curves]({curves.name})", "", f"![final scores]({scores.name})", ""]
    lines += _score_table(configs, finals, window)
    for config in configs:
        lines += _trial_table(config, window)
        lines += policies.section(config, output, window)
        lines += _pbt_section(config, output)
        if not config.lineage and not mutated_keys(config):  # a PBT population is no sweep
            lines += sweep.section(config, output)
    path = output / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path, [output / name for line in lines for name in IMAGE_LINK.findall(line)]


def _score_table(configs: list[Config], finals: list[np.ndarray], window: FinalWindow) -> list[str]:
    lines = [
        "## Final scores over seeds",
        "",
        f"Final score: mean `{configs[0].metric}` over each trial's {window.describe()}. "
        "IQM: mean of the middle 50% of seeds; CI: 95% stratified bootstrap (as rliable).",
        "",
        "| config | env | seeds | IQM | 95% CI | mean | std | env steps | env steps/s | wall time (s) |",
        "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for config, scores in zip(configs, finals, strict=True):
        scores = scores[np.isfinite(scores)]
        low, high = stats.stratified_bootstrap_ci(scores) if len(scores) else (np.nan, np.nan)
        steps = [_last(t, metrics.ENV_STEPS_SAMPLED_LIFETIME) for t in config.trials]
        lines.append(
            f"| {config.label} | {config.env} | {len(scores)} | {stats.iqm(scores):.1f} | [{low:.1f}, {high:.1f}] "
            f"| {scores.mean():.1f} | {scores.std():.1f} | {np.nanmean(steps):,.0f} | {_throughput(config.trials):,.0f} "
            f"| {np.nanmean([_last(t, metrics.TIME_TOTAL_S) for t in config.trials]):.1f} |"
        )
    return [*lines, ""]


def _trial_table(config: Config, window: FinalWindow) -> list[str]:
    lines = [
        f"### {config.label}: trials",
        "",
        "| trial | seed | final | best | env steps | env steps/s | wall time (s) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    best_of = np.nanmin if config.mode == "min" else np.nanmax
    for trial in config.trials:
        series = trial.series(config.metric)
        best = best_of(series) if np.isfinite(series).any() else np.nan
        lines.append(
            f"| {trial.name} | {trial.seed if trial.seed is not None else '-'} | {trial.final_score(config.metric, window):.1f} | {best:.1f} "
            f"| {_last(trial, metrics.ENV_STEPS_SAMPLED_LIFETIME):,.0f} | {_throughput([trial]):,.0f} | {_last(trial, metrics.TIME_TOTAL_S):.1f} |"
        )
    return [*lines, ""]


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
            f"{key} {_short(exploit.source_config.get(key))} -> {_short(exploit.new_config.get(key))}"
            for key in keys
            if key in exploit.new_config
        )
        lines.append(
            f"- iteration {exploit.iteration}: {exploit.trial} copied {exploit.source} "
            f"(its iteration {exploit.source_iteration}); {changes or 'config unchanged'}"
        )
    return [*lines, ""]


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


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


def _throughput(trials: list[Trial]) -> float:
    """Median env steps per second over all iterations (robust to a slow first one)."""
    values = np.concatenate([t.series(metrics.ENV_STEPS_PER_SECOND) for t in trials])
    values = values[np.isfinite(values)]
    return float(np.median(values)) if len(values) else np.nan
