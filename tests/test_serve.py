"""`python -m rlsuite.serve`: real HTTP against a real Serve app, started as a user starts
it (a subprocess on 127.0.0.1 and a free port) and stopped with Ctrl-C (SIGINT).

Served actions equal the RLModule's greedy actions, single- and multi-agent, with torch
and ONNX; a classifier's probabilities equal the restored model's; every bad request is
one line with HTTP 400 and the next good request is still answered; a path the server
cannot serve is one line and exit 2 before Serve starts.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray.train
import torch

from rlsuite.evaluation.locate import MODULES_DIR, locate
from rlsuite.evaluation.policy import load_module, module_ids
from rlsuite.rl import export
from rlsuite.serve import main as serve_main
from rlsuite.supervised.checkpoint import load_model
from rlsuite.supervised.vision import cifar_transforms
from tests.helpers import ROOT, free_port, run_cli

START_TIMEOUT_S = 240  # a local Ray plus Serve on a busy 2-CPU machine
STOP_TIMEOUT_S = 90
REQUEST_TIMEOUT_S = 30
OBSERVATIONS = 64


def train(storage: Path, experiment: str) -> Path:
    run = run_cli(ROOT / "experiments" / f"{experiment}.py", "--smoke", storage=storage)
    assert run.returncode == 0, run.stderr[-2000:]
    return storage / experiment


def request(
    port: int, method: str, path: str, body: bytes = b"", content_type: str = "application/json"
) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": content_type})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def post(port: int, payload: Any) -> tuple[int, Any]:
    return request(port, "POST", "/act", json.dumps(payload).encode())


@pytest.fixture
def cartpole(cartpole_run: Path) -> Path:
    return cartpole_run  # conftest's smoke PPO CartPole run, read only


@contextlib.contextmanager
def serving(path: Path, logs: Path, *flags: str) -> Iterator[int]:
    """The server's port while it serves `path`; stopped with SIGINT afterwards."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "rlsuite.serve",
        str(path),
        "--port",
        str(port),
        "--logs-dir",
        str(logs),
        *flags,
    ]
    printed_file = logs.parent / f"{logs.name}.out"
    with open(printed_file, "w") as child_out:  # the child's own offset: reads don't move it
        server = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=child_out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    out = open(printed_file)  # noqa: SIM115 (closed below)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _ready(port):
            out.seek(0)
            assert server.poll() is None, (
                f"the server ended (exit {server.returncode}): {out.read()[-2000:]}"
            )
            assert time.monotonic() < deadline, (
                f"not ready after {START_TIMEOUT_S} s: {out.read()[-2000:]}"
            )
            time.sleep(1)
        yield port
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        out.seek(0)
        printed = out.read()
        out.close()
    assert server.returncode == 0, printed[-2000:]
    assert "rlsuite.serve: stopped" in printed


def _ready(port: int) -> bool:
    try:
        return request(port, "GET", "/ready")[0] == 200
    except (OSError, http.client.HTTPException, json.JSONDecodeError):
        return False


def observations(checkpoint: Path) -> np.ndarray:
    return export.sample_observations(load_module(checkpoint), OBSERVATIONS, seed=1)


def test_actions_sessions_and_bad_input(cartpole: Path, tmp_path: Path) -> None:
    checkpoint = locate(cartpole).checkpoint
    obs = observations(checkpoint)
    expected = export.module_actions(load_module(checkpoint), obs).tolist()
    with serving(cartpole, tmp_path / "logs", "--max-batch-size", "8") as port:
        assert request(port, "GET", "/healthz") == (200, {"status": "ok"})
        assert post(port, {"observations": obs.tolist()}) == (200, {"actions": expected})
        one_by_one = [post(port, {"observations": [o]})[1]["actions"][0] for o in obs[:8].tolist()]
        assert one_by_one == expected[:8]
        # A session continues its episode; reset starts it anew; both act as the module.
        for i, o in enumerate(obs[:4].tolist()):
            answer = post(port, {"observations": [o], "session_id": "s1", "reset": i == 0})
            assert answer == (200, {"actions": [expected[i]]})
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
        ]
        for body, needle in bad_bodies:
            status, answer = request(port, "POST", "/act", body)
            assert status == 400 and needle in answer["error"], (body, answer)
            assert "\n" not in answer["error"]
            assert post(port, good) == (200, {"actions": expected[:1]})
        assert request(port, "GET", "/predict")[0] == 404


def test_onnx_backend_acts_like_the_module(cartpole: Path, tmp_path: Path) -> None:
    checkpoint = locate(cartpole).checkpoint
    obs = observations(checkpoint)
    expected = export.module_actions(load_module(checkpoint), obs).tolist()
    with serving(cartpole, tmp_path / "logs", "--backend", "onnx") as port:
        assert request(port, "GET", "/ready")[1]["kind"] == "policy (onnx)"
        assert post(port, {"observations": obs.tolist()}) == (200, {"actions": expected})
        status, answer = post(port, {"observations": [[0.0] * 5]})
        assert status == 400 and "shape (5,)" in answer["error"]
        assert post(port, {"observations": obs[:2].tolist()}) == (200, {"actions": expected[:2]})


@pytest.mark.slow  # trains its own multi-agent checkpoint and starts a server: minutes
def test_multi_agent_actions(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    spread = train(tmp_path_factory.mktemp("results"), "ppo_shared_spread")
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


@pytest.mark.slow  # trains a ResNet smoke and starts a server: minutes
def test_image_classifier(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    from PIL import Image

    resnet = train(tmp_path_factory.mktemp("results"), "resnet_cifar10")
    checkpoint = locate(resnet).checkpoint
    model, config = load_model(ray.train.Checkpoint.from_directory(str(checkpoint)))
    side = config.image_size
    pixels = np.random.default_rng(0).integers(0, 256, (2, side, side, 3), dtype=np.uint8)
    pngs = []
    for image in pixels:
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="PNG")
        pngs.append(buffer.getvalue())
    inputs = torch.stack(
        [
            cifar_transforms(config, train=False)(torch.from_numpy(p).permute(2, 0, 1))
            for p in pixels
        ]
    )
    with torch.no_grad():
        expected = torch.softmax(model(inputs), dim=-1).numpy()
    with serving(resnet, tmp_path / "logs") as port:
        status, answer = request(port, "POST", "/predict", pngs[0], "image/png")
        assert status == 200
        np.testing.assert_allclose(answer["probabilities"], expected[:1], atol=1e-5)
        b64 = {"images": [base64.b64encode(p).decode() for p in pngs]}
        status, answer = request(port, "POST", "/predict", json.dumps(b64).encode())
        assert status == 200 and answer["classes"] == expected.argmax(-1).tolist()
        np.testing.assert_allclose(answer["probabilities"], expected, atol=1e-5)
        for body, needle in (
            (b"not an image", "not a decodable PNG or JPEG"),
            (b'{"images": []}', "non-empty list"),
            (b'{"images": ["***"]}', "not valid base64"),
        ):
            status, answer = request(
                port,
                "POST",
                "/predict",
                body,
                "application/octet-stream" if body[:1] != b"{" else "application/json",
            )
            assert status == 400 and needle in answer["error"], answer
            assert request(port, "POST", "/predict", pngs[0], "image/png")[0] == 200


def refused(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    code = serve_main([*map(str, args), "--port", str(free_port())])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_unservable_paths_exit_2(
    capsys: pytest.CaptureFixture[str], cartpole: Path, tmp_path: Path
) -> None:
    assert "no trials or checkpoints" in refused(capsys, tmp_path)
    damaged = tmp_path / "damaged"
    shutil.copytree(locate(cartpole).checkpoint, damaged)
    state = next((damaged / MODULES_DIR / "default_policy").glob("module_state.*"))
    state.write_bytes(state.read_bytes()[:20])
    assert "damaged" in refused(capsys, damaged)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        code = serve_main([str(cartpole), "--port", str(taken.getsockname()[1])])
    assert code == 2 and "cannot listen there" in capsys.readouterr().err
