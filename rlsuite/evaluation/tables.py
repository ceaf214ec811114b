"""The returns table `python -m rlsuite.evaluate` prints: per policy, per agent and of
the team for multi-agent episodes, and episode lengths."""

from __future__ import annotations

from collections.abc import Sequence

from rlsuite.evaluation import rollout
from rlsuite.evaluation.acting import EpisodeResult
from rlsuite.evaluation.multiagent import MultiAgentEpisodeResult
from rlsuite.evaluation.rollout import Stats


def print_episodes(results: Sequence[EpisodeResult], explore: bool, seed: int) -> None:
    mode = "exploring" if explore else "greedy"
    print(f"{len(results)} episodes, {mode} actions, seeds {seed}..{seed + len(results) - 1}")
    returns, lengths = rollout.summarize(results)
    print_table("policy", returns)
    multi = [r for r in results if isinstance(r, MultiAgentEpisodeResult)]
    if multi:
        agents, team = rollout.summarize_agents(multi)
        print_table("agent", agents)
        print_row("team return", team)
    print_row("episode length", lengths, digits=1)


def print_table(kind: str, stats: dict[str, Stats]) -> None:
    print(f"{kind:<20} {'return mean':>12} {'std':>9} {'min':>9} {'max':>9}")
    for name, row in stats.items():
        print_row(name, row)


def print_row(name: str, stats: Stats, digits: int = 2) -> None:
    low_high = 0 if digits == 1 else digits  # lengths are whole steps
    print(
        f"{name:<20} {stats.mean:>12.{digits}f} {stats.std:>9.{digits}f} {stats.min:>9.{low_high}f} {stats.max:>9.{low_high}f}"
    )
