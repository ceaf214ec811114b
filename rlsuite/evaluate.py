"""`python -m rlsuite.evaluate PATH [flags]`: play a trained policy and report its returns, or score a trained classifier on validation data.

PATH is an experiment results directory (the best trial's latest checkpoint by the
experiment's metric, or `--trial`), a trial directory, or a checkpoint directory.
`--video out.mp4` records the first episodes, `--export onnx|torchscript DIR` writes
the inference network and checks it acts like the RLModule. Supervised checkpoints are
scored on the validation split they trained with, or on `--dataset`/`--data-path`.
Exit 2 on bad input.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
from ray.rllib.core import DEFAULT_MODULE_ID

from rlsuite import envs
from rlsuite.errors import UsageError
from rlsuite.evaluation import rollout, supervised
from rlsuite.evaluation.locate import Target, is_supervised_checkpoint, locate
from rlsuite.evaluation.multiagent import MultiAgentPolicy
from rlsuite.evaluation.policy import SingleAgentPolicy, module_ids
from rlsuite.evaluation.rollout import Stats
from rlsuite.evaluation.video import Mp4Writer
from rlsuite.flags import Parser, non_negative_int, positive_int
from rlsuite.multiagent.matches import module_player, play_games, scripted_player
from rlsuite.multiagent.opponents import OPPONENTS
from rlsuite.multiagent.selfplay import OpponentPool
from rlsuite.rl import export

EXIT_BAD_INPUT = 2
QUIET_LOGGERS = ("ray.rllib", "ray._common.deprecation")
EXPORT_CHECK_BATCH = 256  # observations on which an export must act like the RLModule


def build_parser() -> Parser:
    parser = Parser(prog="python -m rlsuite.evaluate", description=__doc__.split("\n\n")[1])
    parser.add_argument(
        "path",
        help="experiment results directory (results/<name>), trial directory or checkpoint_NNNNNN directory",
    )
    parser.add_argument(
        "--trial",
        help="trial directory name or id in an experiment directory (default: the best by the experiment's metric)",
    )
    parser.add_argument(
        "--episodes",
        type=non_negative_int,
        default=10,
        help="episodes to play (default 10; 0 with --export only exports)",
    )
    parser.add_argument(
        "--explore",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="sample actions from the policy's distribution (default: --no-explore, greedy actions)",
    )
    parser.add_argument(
        "--seed",
        type=non_negative_int,
        default=0,
        help="episode i resets the env with seed SEED+i (default 0)",
    )
    parser.add_argument(
        "--env", help="registry env name to play on (default: the env the trial trained on)"
    )
    parser.add_argument(
        "--video", type=Path, metavar="OUT.mp4", help="record the first episodes to this MP4 file"
    )
    parser.add_argument(
        "--video-episodes", type=positive_int, default=1, help="episodes in the video (default 1)"
    )
    parser.add_argument(
        "--export",
        nargs=2,
        metavar=("FORMAT", "DIR"),
        help="write the inference network as onnx or torchscript into DIR",
    )
    supervised = parser.add_argument_group("supervised checkpoints (ResNet, BERT)")
    supervised.add_argument(
        "--dataset",
        help="data set registry name to score on (default: the one the trial trained on)",
    )
    supervised.add_argument(
        "--data-path",
        help="directory of that data set (default: the trial's); its validation split is scored",
    )
    supervised.add_argument(
        "--batch-size", type=positive_int, help="examples per forward pass (default: the trial's)"
    )
    return parser


RL_ONLY_FLAGS = {"video": "--video", "export": "--export", "env": "--env", "explore": "--explore"}
SUPERVISED_ONLY_FLAGS = {
    "dataset": "--dataset",
    "data_path": "--data-path",
    "batch_size": "--batch-size",
}


@dataclass
class Evaluation:
    """Everything checked and built before anything runs or is written."""

    target: Target
    env_name: str
    env: gym.Env
    policy: SingleAgentPolicy | MultiAgentPolicy


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # RLlib logs deprecation warnings about its own checkpoint code on restore: not the
    # user's business, and they would break the one-line error contract on stderr. A
    # filter, not a level: restoring an AlgorithmConfig resets RLlib's logger level.
    for name in QUIET_LOGGERS:
        logging.getLogger(name).addFilter(lambda record: record.levelno >= logging.ERROR)
    try:
        target = locate(Path(args.path), args.trial)
        if is_supervised_checkpoint(target.checkpoint):
            return _score_supervised(target, args)
        evaluation = prepare(args, target)
    except UsageError as error:
        print(f"rlsuite.evaluate: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(
        f"checkpoint {target.checkpoint} (trial {target.trial or 'unknown'}, env {evaluation.env_name})"
    )
    if args.export:
        assert isinstance(evaluation.policy, SingleAgentPolicy)  # prepare() refuses others
        _export(evaluation.policy, args.export[0], Path(args.export[1]), args.seed)
    if args.episodes:
        _evaluate(evaluation, args)
    if args.episodes and isinstance(evaluation.policy, MultiAgentPolicy):
        _win_rates(evaluation, args)
    return 0


def prepare(args: argparse.Namespace, target: Target) -> Evaluation:
    _refuse(args, SUPERVISED_ONLY_FLAGS, "they choose the data of supervised checkpoints")
    if args.export and args.export[0] not in export.FORMATS:
        raise UsageError(
            f"--export {args.export[0]}: unknown format; use one of {', '.join(export.FORMATS)}"
        )
    if args.video and args.video.suffix != ".mp4":
        raise UsageError(f"--video {args.video}: the file must end in .mp4")
    if args.video and args.video_episodes > args.episodes:
        raise UsageError(
            f"--video-episodes {args.video_episodes} is more than --episodes {args.episodes}; play at least as many episodes as the video shows"
        )
    env_name = args.env or target.env
    if env_name is None:
        raise UsageError(
            f"{target.checkpoint}: no params.json next to it names its env; pass --env NAME"
        )
    env_config = dict(target.env_config) if env_name == target.env else {}
    env = _make_env(env_name, env_config, render=args.video is not None)
    policy = _restore(target.checkpoint)
    if args.export and isinstance(policy, MultiAgentPolicy):
        raise UsageError(
            f"--export: {target.checkpoint} holds the multi-agent policies {', '.join(policy.policy_ids)}; only single-agent policies export so far"
        )
    policy.check_env(env_name, env)
    return Evaluation(target, env_name, env, policy)


def _score_supervised(target: Target, args: argparse.Namespace) -> int:
    _refuse(args, RL_ONLY_FLAGS, "they play RL policies; a classifier is scored on data")
    supervised.evaluate(target, args.dataset, args.data_path, args.batch_size)
    return 0


def _refuse(args: argparse.Namespace, flags: dict[str, str], why: str) -> None:
    given = [flag for name, flag in flags.items() if getattr(args, name) not in (None, False)]
    if given:
        verb, pronoun = ("does", "it") if len(given) == 1 else ("do", "them")
        raise UsageError(
            f"{', '.join(given)} {verb} not apply to this checkpoint: {why}; drop {pronoun}"
        )


def _restore(checkpoint: Path) -> SingleAgentPolicy | MultiAgentPolicy:
    """The checkpoint's policy: `default_policy` alone is a single-agent run."""
    ids = module_ids(checkpoint)
    if ids and ids != [DEFAULT_MODULE_ID]:
        return MultiAgentPolicy.from_checkpoint(checkpoint)
    return SingleAgentPolicy.from_checkpoint(checkpoint)


def _make_env(name: str, env_config: dict, render: bool) -> gym.Env:
    if render:
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")  # pygame renderers need no sound card
        env_config = {**env_config, "render_mode": "rgb_array"}
    try:
        env = envs.make(name, env_config)
    except envs.UnknownEnvError as error:
        raise UsageError(f"--env: {error}") from None
    except TypeError:
        raise UsageError(f"env {name} cannot render RGB frames; drop --video") from None
    if render and env.render_mode != "rgb_array":
        raise UsageError(f"env {name} cannot render RGB frames; drop --video")
    return env


def _evaluate(evaluation: Evaluation, args: argparse.Namespace) -> None:
    mode = "exploring" if args.explore else "greedy"
    writer = Mp4Writer(args.video, _fps(evaluation.env)) if args.video else None
    try:
        results = rollout.play(
            evaluation.policy,
            evaluation.env,
            args.episodes,
            args.explore,
            args.seed,
            frame_sink=lambda i: writer.add if writer and i < args.video_episodes else None,
        )
    finally:
        if writer:
            writer.close()
    returns, lengths = rollout.summarize(results)
    print(
        f"{len(results)} episodes, {mode} actions, seeds {args.seed}..{args.seed + len(results) - 1}"
    )
    _print_table("policy", returns)
    multi = [r for r in results if isinstance(r, rollout.MultiAgentEpisodeResult)]
    if multi:
        agents, team = rollout.summarize_agents(multi)
        _print_table("agent", agents)
        _print_row("team return", team)
    _print_row("episode length", lengths, digits=1)
    if writer:
        print(
            f"video {writer.path}: {writer.frames} frames of {args.video_episodes} episode(s) at {writer.fps} fps"
        )


def _print_table(kind: str, stats: dict[str, Stats]) -> None:
    print(f"{kind:<20} {'return mean':>12} {'std':>9} {'min':>9} {'max':>9}")
    for name, row in stats.items():
        _print_row(name, row)


def _print_row(name: str, stats: Stats, digits: int = 2) -> None:
    low_high = 0 if digits == 1 else digits  # lengths are whole steps
    print(
        f"{name:<20} {stats.mean:>12.{digits}f} {stats.std:>9.{digits}f} {stats.min:>9.{low_high}f} {stats.max:>9.{low_high}f}"
    )


def _win_rates(evaluation: Evaluation, args: argparse.Namespace) -> None:
    """Self-play checkpoints: the learner's games against the fixed opponents."""
    policy = evaluation.policy
    assert isinstance(policy, MultiAgentPolicy)
    mapping = policy.policy_mapping_fn
    if not isinstance(mapping, OpponentPool):
        return
    player = module_player(policy.module[mapping.learner], explore=args.explore)
    target = evaluation.target
    config = dict(target.env_config) if evaluation.env_name == target.env else {}
    for name, move in OPPONENTS.items():
        games = play_games(
            lambda: envs.make(evaluation.env_name, config),
            player,
            scripted_player(move),
            args.episodes,
            args.seed,
        )
        print(
            f"{mapping.learner} vs {name}: win rate {games.win_rate:.2f} ({games.games} games: {games.wins} won, {games.draws} drawn, {games.losses} lost)"
        )


def _export(policy: SingleAgentPolicy, fmt: export.Format, directory: Path, seed: int) -> None:
    observations = export.sample_observations(policy.module, EXPORT_CHECK_BATCH, seed)
    for policy_id in policy.policy_ids:
        path = export.export(policy.module, fmt, directory, policy_id, observations)
        same = export.matches(policy.module, path, observations)
        verdict = "same actions as the RLModule" if same else "ACTIONS DIFFER from the RLModule"
        print(f"exported {policy_id} to {path} ({verdict} on {len(observations)} observations)")


def _fps(env: gym.Env) -> int:
    return int(env.metadata.get("render_fps") or 30)


if __name__ == "__main__":
    sys.exit(main())
