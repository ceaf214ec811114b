"""The league comes back with a checkpoint restored into an Algorithm built from the
experiment's config: `--resume`, PBT's exploit and a script's `Algorithm.restore_from_path`.

RLlib restores only the modules an Algorithm already has. Frozen copies join the league
with `Algorithm.add_module` after the config was made, so an Algorithm built from the
experiment's config lacks them, and RLlib skips their weights and keeps the config's
first pool (the random player). `Algorithm.from_checkpoint` does not meet this: it builds
from the checkpoint's own config, which lists every copy. Before the restore, this adds
the copies the checkpoint's config lists and the Algorithm lacks (empty modules of their
source's spec, as the league made them) and takes the checkpoint's pool mapping; RLlib's
restore then fills every module's weights, and the added copies' go to the env runners.

RLlib has no hook before a restore (`on_checkpoint_loaded` runs after it, when the
copies' weights were already skipped), so `SelfPlayCallback.on_algorithm_init` wraps the
Algorithm's own `restore_from_path`; that keeps it working in RLlib scripts as well as
under the launcher.
"""

from __future__ import annotations

import functools
import logging
import pathlib
import pickle
from typing import Any

import pyarrow.fs
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.utils.checkpoints import Checkpointable

from rlsuite.multiagent.league import set_mapping
from rlsuite.multiagent.pool import OpponentPool, is_copy
from rlsuite.rl.weights_sync import push_weights

logger = logging.getLogger(__name__)


def restore_league_first(algorithm: Any) -> None:
    """Make `algorithm.restore_from_path` bring back the checkpoint's league first."""
    restore = algorithm.restore_from_path
    if getattr(restore, "restores_league", False):
        return  # a second callback instance, or a second on_algorithm_init

    @functools.wraps(restore)
    def restore_from_path(path: Any, *args: Any, **kwargs: Any) -> None:
        added = []
        if kwargs.get("component") is None:  # a whole Algorithm's checkpoint
            added = add_league_from(algorithm, path, kwargs.get("filesystem"))
        restore(path, *args, **kwargs)
        if added:  # RLlib syncs the env runners after a local restore only
            push_weights(algorithm, {name: name for name in added})

    restore_from_path.restores_league = True  # type: ignore[attr-defined]
    algorithm.restore_from_path = restore_from_path


def add_league_from(algorithm: Any, path: Any, filesystem: Any = None) -> list[str]:
    """Add the frozen copies of the checkpoint at `path` that `algorithm` lacks, oldest
    first, and take its pool mapping; returns the copies added. Copies `algorithm` has
    and the checkpoint lacks stay, unplayed (a restore into a live Algorithm)."""
    saved = _saved_config(path, filesystem)
    if saved is None:
        return []
    mapping = saved.get("policy_mapping_fn")
    current = algorithm.config.policy_mapping_fn
    if not (isinstance(mapping, OpponentPool) and isinstance(current, OpponentPool)):
        return []
    if (mapping.seats, mapping.learner) != (current.seats, current.learner):
        return []  # another game's league: not this run's to take
    have = set(algorithm.config.policies)
    copies = {name: _copy_of(name) for name in set(saved["policies"]) - have}
    missing = sorted(copies, key=lambda name: copies[name] or (name, 0))  # oldest first
    sources = {name: _source(copies[name], have) for name in missing}
    played = {mapping.learner, *mapping.members, *mapping.exploiters}
    unknown = sorted(played - have - {name for name, source in sources.items() if source})
    if unknown:
        logger.warning(
            "the checkpoint's pool plays %s, which this Algorithm cannot rebuild (no frozen "
            "copies of its policies): its league is not restored",
            ", ".join(unknown),
        )
        return []
    added = []
    for name, source in sources.items():
        if source is None:  # unplayed, and no copy: its weights stay in the checkpoint
            continue
        algorithm.add_module(
            module_id=name,
            module_spec=RLModuleSpec.from_module(algorithm.get_module(source)),
            new_agent_to_module_mapping_fn=mapping,
            new_should_module_be_updated=mapping.trained,
        )
        added.append(name)
    if mapping != algorithm.config.policy_mapping_fn:  # PFSP's weights, a renewed pool
        set_mapping(algorithm, mapping)
    return added


def _saved_config(path: Any, filesystem: Any = None) -> dict[str, Any] | None:
    """The config state an Algorithm checkpoint was written with; None where `path` holds
    none or it does not load (RLlib's restore, which does not read it, goes on)."""
    if filesystem is None:
        try:
            filesystem, where = pyarrow.fs.FileSystem.from_uri(str(path))
        except pyarrow.ArrowInvalid:  # a plain local path
            filesystem, where = pyarrow.fs.LocalFileSystem(), str(pathlib.Path(path).resolve())
    else:
        where = str(path)
    file = f"{where}/{Checkpointable.CLASS_AND_CTOR_ARGS_FILE_NAME}"
    try:
        if filesystem.get_file_info(file).type != pyarrow.fs.FileType.File:
            return None
        with filesystem.open_input_stream(file) as stream:
            saved = pickle.load(stream)
    # What RLlib's from_checkpoint meets in a checkpoint of another version or code.
    except (OSError, ValueError, AttributeError, ImportError, TypeError, pickle.UnpicklingError):
        logger.warning("%s does not load: the league is not restored", file, exc_info=True)
        return None
    args = saved.get("ctor_args_and_kwargs", ((), {}))[0] if isinstance(saved, dict) else ()
    config = args[0] if args else None
    return config if isinstance(config, dict) and "policies" in config else None


def _copy_of(name: str) -> tuple[str, int] | None:
    """(source, version) of a frozen copy's name (`main_v3`: ("main", 3)), else None."""
    source, _, version = name.rpartition("_v")
    return (source, int(version)) if source and is_copy(name, source) else None


def _source(copy: tuple[str, int] | None, policies: set[str]) -> str | None:
    return copy[0] if copy and copy[0] in policies else None
