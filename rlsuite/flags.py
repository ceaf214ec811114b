"""The command-line toolkit of every entry point: a parser whose errors are one line with
exit code 2, checked number types, and `PATH=VALUE` values read as Python literals."""

from __future__ import annotations

import argparse
import ast
import atexit
import logging
import math
import sys
from typing import Any, NoReturn

from rlsuite.errors import UsageError

MAX_SEED = 2**32 - 1
"""The largest seed: numpy takes 0 to 2**32 - 1."""


class Parser(argparse.ArgumentParser):
    """argparse that reports bad input as one line on stderr, exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def non_negative_float(text: str) -> float:
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_float(text: str) -> float:
    value = finite_float(text)
    if value <= 0:  # a negative value is refused for what the flag needs, not "0 or more"
        raise argparse.ArgumentTypeError(f"must be more than 0, got {value:g}")
    return value


def finite_float(text: str) -> float:
    """A number; nan and inf are refused: no resource, stop or window is infinite, and
    every comparison with nan is False (a check would let it through)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def port(text: str) -> int:
    value = _int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 to 65535, got {value}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


class ObjectAssignment(str):
    """`PATH=VALUE` for a Python object no literal spells (`rlsuite.launch(overrides=
    {"rl_module.model_config": DefaultModelConfig(...)})`): the text `PATH=repr(value)`
    wherever a `--set` is shown, and the object itself where it is applied."""

    path: str
    value: Any

    def __new__(cls, path: str, value: Any) -> ObjectAssignment:
        self = super().__new__(cls, f"{path}={value!r}")
        self.path, self.value = path, value
        return self

    def __getnewargs__(self) -> tuple[str, Any]:  # type: ignore[override]
        return self.path, self.value


def parse_assignment(text: str, flag: str = "--set") -> tuple[str, Any]:
    """`PATH=VALUE` -> (PATH, VALUE): the value's text, or an `ObjectAssignment`'s object."""
    if isinstance(text, ObjectAssignment):
        return text.path, text.value
    path, sep, value = text.partition("=")
    if not sep or not path.strip():
        raise UsageError(f"{flag} {text!r}: expected PATH=VALUE, e.g. {flag} training.lr=1e-4")
    return path.strip(), value.strip()


def parse_literal(raw: Any) -> Any:
    """A Python literal (`1e-4`, `[64, 64]`, `True`); anything else is the string itself,
    and a Python object (an `ObjectAssignment`'s) is itself."""
    if not isinstance(raw, str):
        return raw
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    if raw.lower() in ("none", "null"):
        return None
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        # TypeError: a literal that cannot be built (`{[]: 1}`, an unhashable key)
        return raw


def exit_with(code: int) -> NoReturn:
    """`sys.exit(code)` without the colour reset Ray leaves for a terminal: Ray's autoscaler
    logger calls colorama.init() when it is imported, and colorama's exit handler then
    prints ESC[0m after the program's last line (the suite prints no colours to reset)."""
    colorama = sys.modules.get("colorama.initialise")
    if colorama is not None:
        atexit.unregister(colorama.reset_all)
    sys.exit(code)


QUIET_LOGGERS = ("ray.rllib", "ray._common.deprecation")


def quiet_restore_logs() -> None:
    """RLlib logs deprecation warnings about its own checkpoint code on restore: not the
    user's business, and they would break the one-line error contract on stderr. A
    filter, not a level: restoring an AlgorithmConfig resets RLlib's logger level."""
    for name in QUIET_LOGGERS:
        logging.getLogger(name).addFilter(lambda record: record.levelno >= logging.ERROR)
