"""Evaluate an RL checkpoint: restore its policy with its connectors, check the env and
every output path, then export the network, play episodes and print their returns (and,
for self-play checkpoints, win rates against the fixed opponents).

Everything that can refuse runs in `prepare`, before anything plays or is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import gymnasium as gym
from ray.rllib.core import DEFAULT_MODULE_ID

from rlsuite import envs
from rlsuite.errors import UsageError
from rlsuite.evaluation import rollout, tables
from rlsuite.evaluation.acting import ConnectedPolicy
from rlsuite.evaluation.crossplay import apply_swaps, parse_swaps
from rlsuite.evaluation.damage import DamagedCheckpointError
from rlsuite.evaluation.joint import JointPolicy, is_joint, register_joint_name
from rlsuite.evaluation.locate import MODULES_DIR, Target
from rlsuite.evaluation.multiagent import MultiAgentPolicy
from rlsuite.evaluation.options import EvaluateOptions
from rlsuite.evaluation.policy import SingleAgentPolicy, module_ids
from rlsuite.evaluation.video import Mp4Writer
from rlsuite.multiagent.matches import MatchResults, against_fixed_players, module_player
from rlsuite.multiagent.opponents import plays_connect_four
from rlsuite.multiagent.selfplay import OpponentPool
from rlsuite.outputs import check_output_dir, check_output_file
from rlsuite.rl import export
from rlsuite.rl.validate import raise_env_failure, unexpected_key

EXPORT_CHECK_BATCH = 256  # observations on which an export must act like the RLModule


@dataclass
class Evaluation:
    """Everything checked and built before anything runs or is written."""

    target: Target
    env_name: str
    env: gym.Env
    policy: ConnectedPolicy
    swapped: list[str]
    """Where `--policy` took each swapped policy from."""


def prepare(options: EvaluateOptions, target: Target) -> Evaluation:
    _check_outputs(options)
    swaps = parse_swaps(options.policies)
    env_name = options.env or target.env
    if env_name is None:
        raise UsageError(
            f"{target.checkpoint}: no params.json next to it names its env; pass --env NAME"
        )
    trained = _trained_env(target, env_name)
    register_joint_name(trained)
    env = make_env(trained, _env_config(target, env_name), render=options.video is not None)
    policy = restore_policy(target.checkpoint)
    swapped = apply_swaps(policy, swaps)
    if options.export:
        _check_exportable(policy, target.checkpoint)
    policy.check_env(env_name, env)
    return Evaluation(target, env_name, env, policy, swapped)


def run(evaluation: Evaluation, options: EvaluateOptions) -> None:
    target = evaluation.target
    print(
        f"checkpoint {target.checkpoint} (trial {target.trial or 'unknown'}, env {evaluation.env_name})"
    )
    for line in evaluation.swapped:
        print(line)
    if options.export:
        fmt, directory = options.export
        _export(evaluation.policy, cast(export.Format, fmt), Path(directory), options.seed)
    if options.episodes:
        _play(evaluation, options)
    if options.episodes and isinstance(evaluation.policy, MultiAgentPolicy):
        _win_rates(evaluation, options)


def restore_policy(checkpoint: Path) -> ConnectedPolicy:
    """The checkpoint's policy: `default_policy` alone is a single-agent run, or a team
    trained as one agent (MADDPG, MASAC)."""
    ids = module_ids(checkpoint)
    if not ids:
        raise DamagedCheckpointError(
            f"{checkpoint}: no RLModules in {MODULES_DIR}; not a checkpoint of RLlib's new API stack as rlsuite.run writes them (another tool's or RLlib version's?), or an incomplete one",
            checkpoint,
        )
    if ids != [DEFAULT_MODULE_ID]:
        return MultiAgentPolicy.from_checkpoint(checkpoint)
    policy = SingleAgentPolicy.from_checkpoint(checkpoint)
    return JointPolicy.of(policy) if is_joint(policy) else policy


def _trained_env(target: Target, env_name: str) -> str | type:
    """The env as the run knew it. A name the run's experiment file registered with
    `register_env`, or an env class (params.json keeps only its repr), comes back by
    loading that file again, as the run did."""
    source = target.experiment_file
    if env_name != target.env or source is None or not source.is_file():
        return env_name
    try:
        envs.creator(env_name)
        return env_name
    except envs.UnknownEnvError:
        pass
    from rlsuite.launcher.loader import load_experiment

    trained = getattr(load_experiment(source).config, "env", None)
    if isinstance(trained, type) and str(trained) == env_name:
        return trained
    return env_name


def make_env(name: str | type, env_config: dict, render: bool) -> gym.Env:
    if render:
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")  # pygame renderers need no sound card
        env_config = {**env_config, "render_mode": "rgb_array"}
    try:
        env = envs.make(name, env_config)
    except envs.UnknownEnvError as error:
        raise UsageError(f"--env: {error}") from None
    except Exception as error:
        if render and unexpected_key(error) == "render_mode":
            raise UsageError(f"env {name} cannot render RGB frames; drop --video") from None
        raise_env_failure(
            error,
            envs.display_name(name),
            "; the run's env_config (its params.json) passes it: has the env changed since the run?",
        )
    if render and env.render_mode != "rgb_array":
        raise UsageError(f"env {name} cannot render RGB frames; drop --video")
    return env


def _check_outputs(options: EvaluateOptions) -> None:
    """Flags that name outputs: refused before anything plays or is written."""
    if options.export and options.export[0] not in export.FORMATS:
        raise UsageError(
            f"--export {options.export[0]}: unknown format; use one of {', '.join(export.FORMATS)}"
        )
    if options.export:
        check_output_dir(Path(options.export[1]), f"--export {options.export[0]}")
    if options.video and options.video.suffix != ".mp4":
        raise UsageError(f"--video {options.video}: the file must end in .mp4")
    if options.video and options.video_episodes > options.episodes:
        raise UsageError(
            f"--video-episodes {options.video_episodes} is more than --episodes {options.episodes}; play at least as many episodes as the video shows"
        )
    if options.video:
        check_output_file(options.video, "--video")


def _check_exportable(policy: ConnectedPolicy, checkpoint: Path) -> None:
    refusal = policy.export_refusal()
    if refusal:
        raise UsageError(f"--export: {checkpoint} {refusal}")
    export.check_exportable(policy.module)


def _env_config(target: Target, env_name: str) -> dict:
    """The trial's env config, for the env it trained on (another env gets none)."""
    return dict(target.env_config) if env_name == target.env else {}


def _play(evaluation: Evaluation, options: EvaluateOptions) -> None:
    video = options.video
    writer = Mp4Writer(video, _fps(evaluation.env)) if video else None
    try:
        results = rollout.play(
            evaluation.policy,
            evaluation.env,
            options.episodes,
            options.explore,
            options.seed,
            frame_sink=lambda i: writer.add if writer and i < options.video_episodes else None,
        )
    except BaseException:
        if writer:
            writer.discard()  # an earlier video at the path stays as it was
        raise
    if writer:
        writer.close()
    tables.print_episodes(results, options.explore, options.seed)
    if writer:
        print(
            f"video {writer.path}: {writer.frames} frames of {options.video_episodes} episode(s) at {writer.fps} fps"
        )


def _win_rates(evaluation: Evaluation, options: EvaluateOptions) -> None:
    """Self-play checkpoints: the learner's games against the fixed opponents."""
    policy = evaluation.policy
    assert isinstance(policy, MultiAgentPolicy)
    mapping = policy.policy_mapping_fn
    if not isinstance(mapping, OpponentPool):
        return
    module = policy.module[mapping.learner]
    config = _env_config(evaluation.target, evaluation.env_name)
    matches = against_fixed_players(
        lambda: envs.make(evaluation.env_name, config),
        module,
        module_player(module, explore=options.explore),
        options.episodes,
        options.seed,
    )
    tactics_counted = plays_connect_four(module.observation_space, module.action_space)
    for name, games in matches.items():
        print(
            f"{mapping.learner} vs {name}: win rate {games.win_rate:.2f} ({games.games} games: {games.wins} won, {games.draws} drawn, {games.losses} lost)"
        )
        print(_seats_and_tactics(games, tactics_counted))


def _seats_and_tactics(games: MatchResults, tactics_counted: bool = True) -> str:
    """Where the games were won and lost: by seat, and (on connect four) in the positions
    with a one-move answer (a learner that misses its own wins or single blocks loses to
    the heuristic)."""
    seats = f"  moving first {games.first_win_rate:.2f}, second {games.second_win_rate:.2f}"
    if not tactics_counted:
        return seats
    tactics = games.tactics
    return (
        f"{seats}; took {tactics.wins_taken} of {tactics.wins_open} wins on the board, "
        f"blocked {tactics.blocks_made} of {tactics.blocks_open} single threats"
    )


def _export(policy: ConnectedPolicy, fmt: export.Format, directory: Path, seed: int) -> None:
    """Write and check each policy's network; a network that acts otherwise than its
    RLModule fails the command (exit 1), its file kept to inspect."""
    observations = export.sample_observations(policy.module, EXPORT_CHECK_BATCH, seed)
    differing = []
    for policy_id in policy.policy_ids:
        path = export.export(policy.module, fmt, directory, policy_id, observations)
        wrong = export.mismatches(policy.module, path, observations)
        verdict = (
            f"ACTIONS DIFFER from the RLModule on {wrong} of"
            if wrong
            else "same actions as the RLModule on"
        )
        print(f"exported {policy_id} to {path} ({verdict} {len(observations)} observations)")
        if wrong:
            differing.append(str(path))
    if differing:
        raise export.ExportMismatchError(
            f"the exported network acts otherwise than its RLModule: {', '.join(differing)} (kept to inspect); a bug in the export (rlsuite.rl.export or torch's exporter) to report"
        )


def _fps(env: gym.Env) -> int:
    return int(env.metadata.get("render_fps") or 30)
