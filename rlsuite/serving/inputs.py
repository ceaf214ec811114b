"""Request bodies read and checked: anything a client can get wrong is a `BadRequest`,
one line naming the problem, which the deployment answers with HTTP 400.

Observations are checked against the space the checkpoint's env-to-module connectors take
(the env's observation space): the shape and the kind of number, not the bounds (the
network acts on any finite input, and clients send what their env emitted), and that the
numbers fit the space's dtype (1e39 is inf in float32, 300 wraps to 44 in uint8).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import gymnasium as gym
import numpy as np

MAX_SESSION_ID = 200  # characters


class BadRequest(ValueError):
    """A request the server cannot answer: the message is the one line the client gets."""


def json_object(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object."""
    try:
        value = json.loads(body)
    except UnicodeDecodeError:
        raise BadRequest("malformed JSON: the body is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise BadRequest(f"malformed JSON: {error.msg} at character {error.pos}") from None
    except RecursionError:  # json's decoder recurses once per level of nesting
        raise BadRequest(
            "malformed JSON: nested too deeply; nest lists only as deep as the observation's shape"
        ) from None
    except ValueError:  # Python's limit on int() of a long digit string, CVE-2020-10735
        raise BadRequest(
            f"malformed JSON: an integer of more than {sys.get_int_max_str_digits()} digits; send shorter numbers"
        ) from None
    if not isinstance(value, dict):
        raise BadRequest(f"expected a JSON object, got a JSON {type(value).__name__}")
    return value


def field(body: dict[str, Any], name: str, example: str) -> Any:
    if name not in body:
        raise BadRequest(f'missing "{name}"; send e.g. {example}')
    return body[name]


def session(body: dict[str, Any]) -> tuple[str | None, bool]:
    """(`session_id` or None, `reset`): a session keeps the episode between requests."""
    session_id, reset = body.get("session_id"), body.get("reset", False)
    if session_id is not None and (
        not isinstance(session_id, str) or not 0 < len(session_id) <= MAX_SESSION_ID
    ):
        raise BadRequest(f'"session_id" must be a string of 1 to {MAX_SESSION_ID} characters')
    if not isinstance(reset, bool):
        raise BadRequest('"reset" must be true or false')
    if reset and session_id is None:
        raise BadRequest('"reset": true needs the "session_id" of the session to start anew')
    return session_id, reset


def ends_session(body: dict[str, Any]) -> bool:
    """Whether the request is `{"session_id": ID, "end": true}`: the replica forgets the
    session (its episode ended) instead of acting."""
    end = body.get("end", False)
    if not isinstance(end, bool):
        raise BadRequest('"end" must be true or false')
    if not end:
        return False
    if body.get("session_id") is None:
        raise BadRequest('"end": true needs the "session_id" of the session to end')
    if "observations" in body or body.get("reset", False):
        raise BadRequest('"end": true ends a session: send it without "observations" or "reset"')
    return True


def observation(value: Any, space: gym.Space, where: str) -> Any:
    """`value` (JSON) as an observation of `space`; BadRequest naming `where` if it is not one."""
    if isinstance(space, gym.spaces.Dict):
        if not isinstance(value, dict) or set(value) != set(space.spaces):
            raise BadRequest(f"{where}: expected an object with keys {sorted(space.spaces)}")
        return {key: observation(value[key], s, f"{where}.{key}") for key, s in space.items()}
    if isinstance(space, gym.spaces.Tuple):
        if not isinstance(value, list) or len(value) != len(space.spaces):
            raise BadRequest(f"{where}: expected a list of {len(space.spaces)} parts")
        return tuple(
            observation(v, s, f"{where}[{i}]")
            for i, (v, s) in enumerate(zip(value, space.spaces, strict=True))
        )
    if isinstance(space, gym.spaces.Discrete):
        start, end = int(space.start), int(space.start) + int(space.n)
        # Compared as Python ints: space.contains converts to int64, which overflows.
        if isinstance(value, bool) or not isinstance(value, int) or not start <= value < end:
            raise BadRequest(f"{where}: expected a whole number in [{start}, {end})")
        return np.int64(value)
    if isinstance(space, gym.spaces.Box | gym.spaces.MultiDiscrete | gym.spaces.MultiBinary):
        return _array(value, space, where)
    raise BadRequest(f"{where}: observations of {type(space).__name__} spaces are not served")


def _array(value: Any, space: gym.Space, where: str) -> np.ndarray:
    try:
        array = np.asarray(value)
    except ValueError:
        raise BadRequest(f"{where}: a ragged nested list; expected shape {space.shape}") from None
    if array.dtype == object and all(type(x) in (int, float) for x in array.flat):
        array = _wide_numbers(array, where)  # integers past int64: JSON has no limit on them
    if array.dtype.kind not in "iuf":
        kind = "true/false" if array.dtype.kind == "b" else "non-numbers"
        raise BadRequest(
            f"{where}: {kind} in the observation; expected numbers of shape {space.shape}"
        )
    if array.shape != space.shape:
        raise BadRequest(f"{where}: shape {array.shape}, expected {space.shape}")
    assert space.dtype is not None
    if np.issubdtype(space.dtype, np.integer) and not np.array_equal(array, np.round(array)):
        raise BadRequest(
            f"{where}: fractional numbers; the space holds whole numbers ({space.dtype})"
        )
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise BadRequest(f"{where}: NaN or infinite numbers in the observation")
    with np.errstate(over="ignore", invalid="ignore"):
        cast = array.astype(space.dtype)
    fits = np.isfinite(cast).all() if cast.dtype.kind == "f" else np.array_equal(cast, array)
    if not fits:
        info = np.finfo(cast.dtype) if cast.dtype.kind == "f" else np.iinfo(cast.dtype)
        whole = "" if cast.dtype.kind == "f" else "whole numbers "
        raise BadRequest(
            f"{where}: numbers the space's {cast.dtype} cannot hold ({whole}{info.min:g} to {info.max:g})"
        )
    return cast


def _wide_numbers(array: np.ndarray, where: str) -> np.ndarray:
    try:
        return array.astype(np.float64)
    except OverflowError:
        raise BadRequest(f"{where}: numbers beyond what float64 holds (about ±1.8e308)") from None
