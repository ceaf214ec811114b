"""Loads an experiment file by path: import it, take its `experiment` attribute."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import cloudpickle
import ray.cloudpickle

from rlsuite.errors import UsageError
from rlsuite.experiment import Experiment

PICKLERS = (cloudpickle, ray.cloudpickle)


def load_experiment(path: str | Path) -> Experiment:
    """The `experiment` of the file at `path`; UsageError naming the problem otherwise."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path}: no such file; pass the path of a file in experiments/")
    if path.is_dir() or path.suffix != ".py":
        raise UsageError(f"{path}: not a Python file; an experiment is a .py file")
    module = _import(path)
    if not hasattr(module, "experiment"):
        raise UsageError(
            f"{path}: defines no `experiment`; add `experiment = Experiment(...)` at module level"
        )
    experiment = module.experiment
    if not isinstance(experiment, Experiment):
        raise UsageError(
            f"{path}: `experiment` is a {type(experiment).__name__}, not an rlsuite.Experiment; "
            "build it with `Experiment(config=..., stop=...)`"
        )
    return experiment


def _import(path: Path) -> ModuleType:
    source = _read(path)
    try:
        compile(source, str(path), "exec")
    except SyntaxError as error:
        raise UsageError(f"{path}:{error.lineno}: syntax error: {error.msg}") from None
    name = f"rlsuite_experiment_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # Ray workers cannot import this module by name: ship its functions by value. Before
    # it runs, so that what it registers at import (an env creator given to Tune's
    # `register_env`, pickled there and then) travels by value too. Ray pickles with its
    # own copy of cloudpickle (ray.cloudpickle), Tune's registry among others.
    for pickler in PICKLERS:
        pickler.register_pickle_by_value(module)
    try:
        spec.loader.exec_module(module)
    # The file's own code failed: its problem. SystemExit too (a file that parses its own
    # arguments or calls exit()): it would end the launcher silently, argparse's message
    # held back with the file's other output.
    except (Exception, SystemExit) as error:
        del sys.modules[name]
        for pickler in PICKLERS:
            pickler.unregister_pickle_by_value(module)
        raise UsageError(f"{path}{_line_in(path, error)}: {_explain(error)}") from None
    return module


def _explain(error: BaseException) -> str:
    if isinstance(error, UsageError):  # an rlsuite class refused a value: its own words
        return str(error)
    if isinstance(error, SystemExit):
        return (
            f"exited while loading (SystemExit: {error.code}); an experiment file only "
            "defines `experiment`: no argument parsing or exit() (rlsuite.run reads the flags)"
        )
    return f"{type(error).__name__}: {error}"


def _read(path: Path) -> str:
    try:
        source: str | None = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        source = None
    # UTF-16 without a byte-order mark decodes as UTF-8, with a NUL beside every letter.
    if source is None or "\x00" in source:
        raise UsageError(f"{path}: not a Python file (not UTF-8 text); save it as UTF-8")
    return source


def _line_in(path: Path, error: BaseException) -> str:
    """`:N` for the deepest frame of the traceback that is in the experiment file."""
    line = ""
    tb = error.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == path.resolve():
            line = f":{tb.tb_lineno}"
        tb = tb.tb_next
    return line
