"""`python -m rlsuite.serve`: real HTTP against a real Serve app, started as a user starts
it (a subprocess on 127.0.0.1 and a free port) and stopped with Ctrl-C (SIGINT).

Served actions equal the RLModule's greedy actions, single- and multi-agent, with torch
and ONNX; every bad request is one line with HTTP 400 and the next good request is still
answered; a path the server cannot serve is one line and exit 2 before Serve starts.
Classifiers (ResNet, BERT) on a running cluster: tests/test_serve_supervised.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from ray.serve._private import haproxy as serve_haproxy

from rlsuite.evaluation.locate import MODULES_DIR, locate
from rlsuite.evaluation.policy import load_module, module_ids
from rlsuite.rl import export
from rlsuite.serve import main as serve_main
from rlsuite.serving import inputs
from rlsuite.serving.inputs import BadRequest
from tests.ports import free_port
from tests.serve_client import post, refused, request, serving

OBSERVATIONS = 64
ACCESS_LINE = re.compile(r"-- POST /\S* 200 [\d.]+ms")  # Serve's access log line


@pytest.fixture
def cartpole(cartpole_run: Path) -> Path:
    return cartpole_run  # conftest's smoke PPO CartPole run, read only


def observations(checkpoint: Path) -> np.ndarray:
    return export.sample_observations(load_module(checkpoint), OBSERVATIONS, seed=1)


def test_actions_sessions_and_bad_input(cartpole: Path, tmp_path: Path) -> None:
    """Greedy actions, sessions, one line per bad request; stopped by SIGTERM twice in a
    row (a wrapper such as `timeout` forwards a signal it also got) and a third while it
    shuts Ray down: still one clean stop, exit 0 (the next test stops its server with
    Ctrl-C). RAY_ADDRESS names a cluster that is not there (as a shell left from
    cluster work would): the server starts a Ray of its own all the same, where joining it
    failed."""
    checkpoint = locate(cartpole).checkpoint
    obs = observations(checkpoint)
    expected = export.module_actions(load_module(checkpoint), obs).tolist()
    twice = (signal.SIGTERM, signal.SIGTERM)
    logs = tmp_path / "logs"
    with serving(
        cartpole,
        logs,
        "--max-batch-size",
        "8",
        env={**os.environ, "RAY_ADDRESS": "127.0.0.1:1"},
        stop_signals=twice,
        late_signal=signal.SIGTERM,
    ) as port:
        assert request(port, "GET", "/healthz") == (200, {"status": "ok"})
        assert post(port, {"observations": obs.tolist()}) == (200, {"actions": expected})
        one_by_one = [post(port, {"observations": [o]})[1]["actions"][0] for o in obs[:8].tolist()]
        assert one_by_one == expected[:8]
        # A session continues its episode; reset starts it anew; both act as the module.
        for i, o in enumerate(obs[:4].tolist()):
            answer = post(port, {"observations": [o], "session_id": "s1", "reset": i == 0})
            assert answer == (200, {"actions": [expected[i]]})
        assert post(port, {"session_id": "s1", "end": True}) == (200, {"ended": True})
        good = {"observations": [obs[0].tolist()]}
        bad_bodies: list[tuple[bytes, str]] = [
            (b'{"observations": [[0.1, ', "malformed JSON"),
            (b"[1, 2]", "expected a JSON object"),
            (json.dumps({"obs": [[0.0] * 4]}).encode(), 'missing "observations"'),
            (json.dumps({"observations": [[0.0] * 3]}).encode(), "shape (3,), expected (4,)"),
            (json.dumps({"observations": [["a", 0.0, 0.0, 0.0]]}).encode(), "non-numbers"),
            (json.dumps({"observations": [[True] * 4]}).encode(), "true/false"),
            (json.dumps({"observations": [[0.0, [1.0], 0.0, 0.0]]}).encode(), "ragged"),
            (json.dumps({"observations": [[0.0] * 4], "session_id": 7}).encode(), "session_id"),
            (json.dumps({"session_id": "s1", "end": 1}).encode(), '"end" must be true or false'),
            # A 500 before (NaN logits; Python's integer limit; json's recursion).
            (json.dumps({"observations": [[1e39, 0.0, 0.0, 0.0]]}).encode(), "float32 cannot hold"),
            (b'{"observations": [[' + b"1" * 5000 + b", 0, 0, 0]]}", "4300 digits"),
            (b'{"observations": ' + b"[" * 100_000, "nested too deeply"),
        ]
        for body, needle in bad_bodies:
            status, answer = request(port, "POST", "/act", body)
            assert status == 400 and needle in answer["error"], (body, answer)
            assert "\n" not in answer["error"]
            assert post(port, good) == (200, {"actions": expected[:1]})
        assert request(port, "GET", "/predict")[0] == 404
    replica_logs = "".join(p.read_text() for p in (tmp_path / "logs/ray/serve").glob("replica_*"))
    assert "400 /act: malformed JSON" in replica_logs  # one line per refused request, kept
    assert not ACCESS_LINE.search(replica_logs), "--no-access-log (the default) logged a request"


def test_onnx_backend_behind_haproxy_acts_like_the_module(cartpole: Path, tmp_path: Path) -> None:
    """`--backend onnx --proxy haproxy` (one server start for both, CI time): the exported
    network answers through Serve's HAProxy ingress, and Ctrl-C leaves no HAProxy running
    and HAProxy's own logs in --logs-dir. `--access-log` logs every request."""
    checkpoint = locate(cartpole).checkpoint
    obs = observations(checkpoint)
    expected = export.module_actions(load_module(checkpoint), obs).tolist()
    flags = ("--backend", "onnx", "--proxy", "haproxy", "--access-log")
    with serving(cartpole, tmp_path / "logs", *flags) as port:
        assert request(port, "GET", "/ready")[1]["kind"] == "policy (onnx)"
        assert post(port, {"observations": obs.tolist()}) == (200, {"actions": expected})
        status, answer = post(port, {"observations": [[0.0] * 5]})
        assert status == 400 and "shape (5,)" in answer["error"]
        assert post(port, {"observations": obs[:2].tolist()}) == (200, {"actions": expected[:2]})
        assert post(port, {"session_id": "s1", "end": True}) == (200, {"ended": True})
        haproxies = _haproxies()
        assert haproxies, "no HAProxy runs for the server"
    assert not set(haproxies) & set(_haproxies()), "HAProxy outlived the server"
    assert list((tmp_path / "logs").glob("haproxy-*.stderr.log")), "HAProxy's logs were not kept"
    replica_logs = "".join(p.read_text() for p in (tmp_path / "logs/ray/serve").glob("replica_*"))
    assert len(ACCESS_LINE.findall(replica_logs)) >= 3, "--access-log logged no requests"
    # Serve's throughput mode (haproxy.THROUGHPUT) buffers request-path lines by default.
    assert "400 /act: observations[0]: shape (5,)" in replica_logs, "the refusal's line was lost"


BOX = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)


@pytest.mark.parametrize(
    ("read", "needle"),
    [
        # Each was a ValueError, RecursionError or OverflowError other than BadRequest
        # (HTTP 500), or an observation the policy acted on as inf or a wrapped integer.
        (lambda: inputs.json_object(b'{"x": ' + b"7" * 5000 + b"}"), "more than 4300 digits"),
        (lambda: inputs.json_object(b"[" * 100_000), "nested too deeply"),
        (lambda: inputs.observation(10**400, gym.spaces.Discrete(3), "o"), "in [0, 3)"),
        (lambda: inputs.observation([1e39, 0.0], BOX, "o"), "the space's float32 cannot hold"),
        (lambda: inputs.observation([10**400, 0], BOX, "o"), "what float64 holds"),
        (lambda: inputs.observation([10**20, 0], gym.spaces.MultiDiscrete([3, 3]), "o"), "int64"),
        (
            lambda: inputs.observation([300, 0], gym.spaces.Box(0, 255, (2,), np.uint8), "o"),
            "the space's uint8 cannot hold (whole numbers 0 to 255)",
        ),
    ],
)
def test_numbers_json_or_the_space_cannot_hold_are_bad_requests(read: Any, needle: str) -> None:
    with pytest.raises(BadRequest) as refused:
        read()
    assert needle in str(refused.value) and "\n" not in str(refused.value)


def test_numbers_within_the_space_dtype_pass() -> None:
    assert inputs.observation([10**20, 0], BOX, "o").tolist() == [np.float32(1e20), 0.0]  # > int64
    assert inputs.observation([3.0e38, -1], BOX, "o").dtype == np.float32


def _haproxies() -> list[int]:
    """HAProxy processes started by `rlsuite.serve --proxy haproxy` (their config is in an
    rlsuite-haproxy- directory)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:  # not a process, or one that just ended
            continue
        if (
            command
            and command[0].endswith(b"haproxy")
            and b"rlsuite-haproxy-" in b" ".join(command)
        ):
            found.append(int(proc.name))
    return found


@pytest.mark.slow  # one more server start (31 s alone): CI serves the single-agent ones above
def test_multi_agent_actions(spread_run: Path, tmp_path: Path) -> None:
    spread = spread_run  # conftest's smoke ppo_shared_spread run, read only
    checkpoint = locate(spread).checkpoint
    (policy_id,) = module_ids(checkpoint)  # one policy shared by every agent
    module = load_module(checkpoint, policy_id)
    obs = export.sample_observations(module, 3, seed=2)
    agents = [f"agent_{i}" for i in range(3)]
    expected = dict(zip(agents, export.module_actions(module, obs).tolist(), strict=True))
    payload = {"observations": dict(zip(agents, obs.tolist(), strict=True))}
    with serving(spread, tmp_path / "logs") as port:
        assert post(port, payload) == (200, {"actions": expected})
        partial = {"observations": {"agent_1": obs[1].tolist()}}
        assert post(port, partial) == (200, {"actions": {"agent_1": expected["agent_1"]}})
        status, answer = post(port, {"observations": {"agent_9": obs[0].tolist()}})
        assert status == 400 and "unknown agent id 'agent_9'" in answer["error"]
        status, answer = post(port, {"observations": {"agent_0": [0.0, 1.0]}})
        assert status == 400 and "shape (2,), expected (18,)" in answer["error"]
        assert post(port, payload) == (200, {"actions": expected})


def test_ctrl_c_while_the_model_loads_is_one_line_and_leaves_nothing(
    capsys: pytest.CaptureFixture[str],
    cartpole: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before Serve's own stop handling is in place, a Ctrl-C printed a traceback and left
    the logs folder behind."""
    from rlsuite.serving import command

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "prepare", interrupted)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = serve_main([str(cartpole), "--port", str(free_port())])
    err = capsys.readouterr().err
    assert code == 130 and err == "rlsuite.serve: interrupted before serving\n", err
    assert not list(tmp_path.iterdir())


def test_unservable_paths_exit_2(
    capsys: pytest.CaptureFixture[str],
    cartpole: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "no trials or checkpoints" in refused(capsys, tmp_path)
    damaged = tmp_path / "damaged"
    shutil.copytree(locate(cartpole).checkpoint, damaged)
    state = next((damaged / MODULES_DIR / "default_policy").glob("module_state.*"))
    state.write_bytes(state.read_bytes()[:20])
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert "damaged" in refused(capsys, damaged)
    # Replicas Ray could never place: serve.run waited for them for ever, saying nothing.
    assert "need 1000 CPUs but this machine has" in refused(capsys, cartpole, "--num-cpus", "1000")
    assert not list(scratch.iterdir())  # the logs folders went with the refusals
    # Served, its logs lost, before.
    assert "--logs-dir /proc/x: /proc is not writable" in refused(
        capsys, cartpole, "--logs-dir", "/proc/x"
    )
    with pytest.raises(SystemExit) as exited:
        serve_main([str(cartpole), "--port", "70000"])
    assert exited.value.code == 2 and "a port is 1 to 65535" in capsys.readouterr().err
    code = serve_main([str(cartpole), "--host", "localhost:8000"])
    assert code == 2 and "--host localhost:8000: not a host name" in capsys.readouterr().err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = serve_main([str(cartpole), "--port", str(port)])
    assert code == 2 and "cannot listen there" in capsys.readouterr().err
    # Ray retried an address where nothing listens (that port, closed now) for minutes.
    assert "nothing answers" in refused(capsys, cartpole, "--address", f"127.0.0.1:{port}")
    code = serve_main([str(cartpole), "--proxy", "haproxy", "--address", "auto"])
    assert code == 2 and "RAY_SERVE_ENABLE_HA_PROXY=1" in capsys.readouterr().err
    # Serve's own override of where HAProxy is, pointing nowhere: refused before Ray starts.
    monkeypatch.setattr(serve_haproxy, "RAY_SERVE_HAPROXY_BINARY_PATH", "/nonexistent/haproxy")
    assert "--proxy haproxy: RAY_SERVE_HAPROXY_BINARY_PATH" in refused(
        capsys, cartpole, "--proxy", "haproxy"
    )
