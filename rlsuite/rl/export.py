"""Export a policy's inference network to ONNX or TorchScript, and check it still acts the same.

The exported network maps a batch of RLModule inputs (the observations after the
env-to-module connectors; with RLlib's default connectors, the env's observations) to
`(actions, action_dist_inputs)`: the greedy actions of `forward_inference` and the
distribution inputs they come from. Actions are the module's actions, before RLlib's
module-to-env connectors unsquash or clip continuous ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from rlsuite.errors import UsageError

Format = Literal["onnx", "torchscript"]
FORMATS: tuple[Format, ...] = ("onnx", "torchscript")
SUFFIX: dict[Format, str] = {"onnx": ".onnx", "torchscript": ".pt"}
OUTPUTS = ("actions", Columns.ACTION_DIST_INPUTS)
EXAMPLE_BATCH = 4  # the traced batch size; the batch axis stays dynamic in both formats


def check_exportable(module: RLModule) -> None:
    """Refuse (UsageError) what `export` cannot write: a recurrent policy, whose state
    would be inputs and outputs of the exported network."""
    if module.is_stateful():
        raise UsageError(
            "the policy is recurrent (stateful, e.g. use_lstm); exporting recurrent policies is not supported yet; evaluate it without --export"
        )


class InferenceNetwork(torch.nn.Module):
    """`forward_inference` of an RLModule as a plain tensor-in, tensors-out network."""

    def __init__(self, module: RLModule) -> None:
        super().__init__()
        check_exportable(module)
        assert isinstance(module, torch.nn.Module)
        self.module = module
        self.dist_class = module.get_inference_action_dist_cls()

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        inputs: torch.Tensor = self.module.forward_inference({Columns.OBS: obs})[
            Columns.ACTION_DIST_INPUTS
        ]
        actions = self.dist_class.from_logits(inputs).to_deterministic().sample()
        assert isinstance(actions, torch.Tensor)  # torch distributions sample tensors
        return actions, inputs


def export(module: RLModule, fmt: Format, directory: Path, name: str, example: np.ndarray) -> Path:
    """Write `directory/<name>.onnx` or `.pt`, traced on a batch of `example` observations."""
    network = InferenceNetwork(module).eval()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}{SUFFIX[fmt]}"
    obs = torch.as_tensor(example[:EXAMPLE_BATCH])
    with torch.no_grad():
        if fmt == "onnx":
            batch = torch.export.Dim("batch")
            torch.onnx.export(
                network,
                (obs,),
                str(path),
                input_names=["obs"],
                output_names=list(OUTPUTS),
                dynamic_shapes={"obs": {0: batch}},
                dynamo=True,
                external_data=False,
                verbose=False,
            )
        else:
            torch.jit.trace(network, (obs,)).save(str(path))
    return path


def exported_outputs(path: Path, observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(actions, action_dist_inputs) the exported file computes for a batch of observations."""
    if path.suffix == SUFFIX["onnx"]:
        import onnxruntime

        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        actions, inputs = session.run(list(OUTPUTS), {"obs": observations})
        return np.asarray(actions), np.asarray(inputs)
    network = torch.jit.load(str(path))
    with torch.no_grad():
        actions, inputs = network(torch.as_tensor(observations))
    return actions.numpy(), inputs.numpy()


def exported_actions(path: Path, observations: np.ndarray) -> np.ndarray:
    """Actions the exported file computes for a batch of observations."""
    return exported_outputs(path, observations)[0]


def module_actions(module: RLModule, observations: np.ndarray) -> np.ndarray:
    """Greedy actions of the RLModule itself, for comparison with an export."""
    with torch.no_grad():
        return InferenceNetwork(module).eval()(torch.as_tensor(observations))[0].numpy()


def sample_observations(module: RLModule, count: int, seed: int) -> np.ndarray:
    """A batch of observations from the module's observation space (to trace and compare)."""
    space = module.observation_space
    assert space is not None
    space.seed(seed)
    # Unbounded Box dimensions sample from a unit normal: ordinary-sized inputs.
    return np.stack([space.sample() for _ in range(count)]).astype(space.dtype)


def matches(module: RLModule, path: Path, observations: np.ndarray) -> bool:
    """Whether the exported network's actions equal the module's on `observations`."""
    expected, got = module_actions(module, observations), exported_actions(path, observations)
    if np.issubdtype(expected.dtype, np.integer):
        return bool(np.array_equal(expected, got))
    return bool(np.allclose(expected, got, atol=1e-5))
