"""`--backend onnx`: the policy's inference network exported (`rlsuite.rl.export`), checked
at start to act like the RLModule, and served on onnxruntime.

The exported network runs no connector, so only a stateless single-agent policy with
discrete actions and RLlib's default env-to-module connectors exports; anything else is
refused at start with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from rlsuite.errors import UsageError
from rlsuite.rl import export
from rlsuite.serving import inputs
from rlsuite.serving.policies import (
    DEFAULT_ENV_TO_MODULE,
    SINGLE_EXAMPLE,
    ServedPolicy,
    Step,
    single_agent_steps,
    to_json,
)

CHECK_BATCH = 256  # observations on which the exported network must act like the RLModule


def export_checked(served: ServedPolicy, logs_dir: Path, explore: bool) -> Path:
    """The policy's inference network exported under `logs_dir` and checked to act like
    the RLModule; UsageError for a policy it cannot stand for."""
    policy = served.policy
    if served.multi_agent:
        raise UsageError(
            "--backend onnx: only single-agent policies export so far; use --backend torch"
        )
    if explore:
        raise UsageError(
            "--backend onnx serves greedy actions; drop --explore or use --backend torch"
        )
    export.check_exportable(policy.module)
    extra = [type(c).__name__ for c in policy.env_to_module.connectors]
    extra = [name for name in extra if name not in DEFAULT_ENV_TO_MODULE]
    if extra:
        raise UsageError(
            f"--backend onnx: the checkpoint's env-to-module connectors include {', '.join(extra)}, which the exported network does not run; use --backend torch"
        )
    if not isinstance(served.action_space, gym.spaces.Discrete | gym.spaces.MultiDiscrete):
        raise UsageError(
            "--backend onnx: continuous actions are unsquashed and clipped by connectors the exported network does not run; use --backend torch"
        )
    observations = export.sample_observations(policy.module, CHECK_BATCH, seed=0)
    path = export.export(policy.module, "onnx", logs_dir / "onnx", "default_policy", observations)
    if not export.matches(policy.module, path, observations):
        raise UsageError(
            f"--backend onnx: the exported network {path} acts unlike the RLModule; use --backend torch"
        )
    return path


class OnnxPolicy:
    """The exported inference network on onnxruntime: greedy actions of a stateless
    single-agent policy whose connectors are RLlib's defaults."""

    route = "/act"

    def __init__(self, path: Path, observation_space: Any) -> None:
        import onnxruntime

        self.session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        self.observation_space = observation_space

    def describe(self) -> dict[str, Any]:
        return {"kind": "policy (onnx)", "route": self.route}

    def parse(self, body: bytes, content_type: str) -> list[Step]:
        request = inputs.json_object(body)
        session_id, reset = inputs.session(request)
        if inputs.ends_session(request):  # nothing kept per session: nothing to forget
            return []
        given = inputs.field(request, "observations", SINGLE_EXAMPLE)
        return single_agent_steps(given, self.observation_space, session_id, reset)

    def answer(self, results: list[Any]) -> dict[str, Any]:
        return {"actions": [to_json(r) for r in results]} if results else {"ended": True}

    def predict(self, steps: list[Step]) -> list[Any]:
        observations = np.stack([step.observation for step in steps])
        actions = self.session.run([export.OUTPUTS[0]], {"obs": observations})[0]
        return list(actions)
