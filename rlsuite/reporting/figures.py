"""PNG figures of a report: learning curves, returns per policy, final scores, PBT
hyperparameter schedules, a sweep's best-so-far curve."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display on servers and CI

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from rlsuite import metrics
from rlsuite.reporting import stats
from rlsuite.reporting.runs import ENV_STEPS, Config, Progress

DPI = 120


def learning_curves(configs: list[Config], progress: Progress, path: Path) -> Path:
    """The metric against `progress` (env steps, epochs) on the left and wall time on the
    right: mean over seeds, 95% band."""
    return _save(learning_curves_figure(configs, progress), path)


def learning_curves_figure(configs: list[Config], progress: Progress) -> Figure:
    """The figure `learning_curves` saves, open (the caller closes it)."""
    x_axes = ((progress.key, progress.label), (metrics.TIME_TOTAL_S, "wall time (s)"))
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True, layout="constrained")
    for color, config in zip(_colors(len(configs)), configs, strict=True):
        for axis, (x_key, _) in zip(axes, x_axes, strict=True):
            xs = [trial.series(x_key) for trial in config.trials]
            ys = [trial.series(config.metric) for trial in config.trials]
            grid, mean, low, high = stats.curve_band(xs, ys)
            label = f"{config.label} ({_seeds(len(config.trials))})"
            axis.plot(grid, mean, color=color, label=label)
            axis.fill_between(grid, low, high, color=color, alpha=0.2, linewidth=0)
    for axis, (_, label) in zip(axes, x_axes, strict=True):
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    if progress.key == ENV_STEPS.key:
        axes[0].xaxis.set_major_formatter(FuncFormatter(_thousands))  # 40k, not 0.4 with "1e5"
    else:
        axes[0].xaxis.set_major_locator(MaxNLocator(integer=True))  # epoch 3, not 2.5
    axes[0].set_ylabel(_metric_label(configs[0].metric))
    axes[0].legend(loc="best", fontsize="small", frameon=False)
    figure.suptitle(
        f"{configs[0].workload}: mean over seeds, shaded 95% bootstrap CI (curves end with the shortest run)",
        fontsize="medium",
    )
    return figure


def _seeds(count: int) -> str:
    return f"{count} seed" if count == 1 else f"{count} seeds"


def policy_curves(config: Config, policies: list[str], path: Path) -> Path:
    """Each policy's return against env steps: mean over the trials it played in, 95% band."""
    figure, axis = plt.subplots(figsize=(7, 3.8), layout="constrained")
    x_key = metrics.ENV_STEPS_SAMPLED_LIFETIME
    for color, policy in zip(_colors(len(policies)), policies, strict=True):
        key = metrics.policy_return_mean(policy)
        played = [t for t in config.trials if np.isfinite(t.series(key)).any()]
        xs = [trial.series(x_key) for trial in played]
        grid, mean, low, high = stats.curve_band(xs, [trial.series(key) for trial in played])
        axis.plot(grid, mean, color=color, label=f"{policy} ({_seeds(len(played))})")
        axis.fill_between(grid, low, high, color=color, alpha=0.2, linewidth=0)
    axis.set_xlabel("env steps")
    axis.xaxis.set_major_formatter(FuncFormatter(_thousands))
    axis.set_ylabel("policy's episode return")
    axis.grid(alpha=0.3)
    axis.legend(loc="best", fontsize="small", frameon=False)
    axis.set_title(f"{config.label}: returns per policy, mean and 95% CI", fontsize="medium")
    return _save(figure, path)


def final_scores(configs: list[Config], finals: list[np.ndarray], path: Path) -> Path:
    """IQM of the final score per config with its 95% stratified-bootstrap interval; dots
    are the seeds."""
    figure, axis = plt.subplots(figsize=(6, 0.7 + 0.6 * len(configs)), layout="constrained")
    for row, (color, scores) in enumerate(zip(_colors(len(configs)), finals, strict=True)):
        low, high = stats.stratified_bootstrap_ci(scores)
        axis.plot(
            [low, high], [row, row], color=color, linewidth=6, alpha=0.35, solid_capstyle="butt"
        )
        axis.plot([stats.iqm(scores)], [row], "|", color=color, markersize=18, markeredgewidth=2)
        axis.plot(scores, np.full(len(scores), row), "o", color=color, markersize=4)
    axis.set_yticks(range(len(configs)), [c.label for c in configs])
    axis.set_ylim(-0.6, len(configs) - 0.4)
    axis.set_xlabel(
        f"final {_metric_label(configs[0].metric)}: IQM (bar), 95% CI (band), seeds (dots)"
    )
    axis.grid(axis="x", alpha=0.3)
    return _save(figure, path)


def hyperparameter_schedules(config: Config, keys: list[str], path: Path) -> Path:
    """Each mutated hyperparameter of each PBT trial over training iterations."""
    figure, axes = plt.subplots(
        len(keys), 1, figsize=(7, 2.4 * len(keys)), sharex=True, layout="constrained", squeeze=False
    )
    for axis, key in zip(axes[:, 0], keys, strict=True):
        for color, trial in zip(_colors(len(config.trials)), config.trials, strict=True):
            values = [_number(r.get("config", {}).get(key)) for r in trial.results]
            axis.step(
                trial.series(metrics.TRAINING_ITERATION),
                values,
                where="post",
                color=color,
                label=trial.name,
            )
        axis.set_ylabel(key)
        axis.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("training iteration")
    axes[0, 0].legend(fontsize="x-small", frameon=False, ncols=2)
    figure.suptitle(f"{config.label}: PBT hyperparameter schedules", fontsize="medium")
    return _save(figure, path)


def best_so_far(label: str, metric: str, best: np.ndarray, path: Path) -> Path:
    """A sweep's best metric after each finished trial."""
    figure, axis = plt.subplots(figsize=(6, 3.4), layout="constrained")
    trials = np.arange(1, len(best) + 1)
    axis.step(trials, best, where="post", marker="o", markersize=3)
    axis.set_xlabel("trials finished")
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_ylabel(f"best {_metric_label(metric)}")
    axis.grid(alpha=0.3)
    axis.set_title(f"{label}: best so far", fontsize="medium")
    return _save(figure, path)


def _metric_label(metric: str) -> str:
    names = {
        metrics.EPISODE_RETURN_MEAN: "episode return",
        metrics.EVALUATION_RETURN_MEAN: "evaluation return",
    }
    return names.get(metric, metric)


def _thousands(value: float, _position: int) -> str:
    return f"{value / 1000:g}k" if value else "0"


def _colors(count: int) -> list[Any]:
    return [plt.get_cmap("tab10")(i % 10) for i in range(count)]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else np.nan


def _save(figure: Any, path: Path) -> Path:
    figure.savefig(path, dpi=DPI)
    plt.close(figure)
    return path
