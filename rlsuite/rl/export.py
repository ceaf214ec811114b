"""Export a policy's inference network to ONNX or TorchScript, and check it still acts the same.

The exported network maps a batch of RLModule inputs (the observations after the
env-to-module connectors; with RLlib's default connectors, the env's observations) to
`(actions, action_dist_inputs)`: the greedy actions of `forward_inference` and the
distribution inputs they come from. Actions are the module's actions, before RLlib's
module-to-env connectors unsquash or clip continuous ones.

DQN's `forward_inference` gives only its actions, the argmax of its Q-values; those
Q-values are the logits of the categorical distribution it takes the argmax of, so for a
Q network (RLlib's `QNetAPI`) they are the exported `action_dist_inputs`. The check
(`matches`) compares with the actions `forward_inference` itself gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, cast

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.dqn.default_dqn_rl_module import QF_PREDS
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import QNetAPI
from ray.rllib.core.rl_module.rl_module import RLModule

from rlsuite.errors import UsageError

Format = Literal["onnx", "torchscript"]
FORMATS: tuple[Format, ...] = ("onnx", "torchscript")
SUFFIX: dict[Format, str] = {"onnx": ".onnx", "torchscript": ".pt"}
OUTPUTS = ("actions", Columns.ACTION_DIST_INPUTS)
EXAMPLE_BATCH = 4  # the traced batch size; the batch axis stays dynamic in both formats
DistInputs = Literal["forward_inference", "q_values"]
"""Where the exported `action_dist_inputs` come from: `forward_inference`'s output, or
the Q values of a Q network (DQN), whose `forward_inference` gives actions only."""


class ExportMismatchError(RuntimeError):
    """An exported network whose actions differ from its RLModule's: a failed check (exit
    1, one line), its file kept to inspect."""


def check_exportable(module: RLModule) -> None:
    """Refuse (UsageError) what `export` cannot write: a recurrent policy (its state would
    be inputs and outputs of the exported network), observations that are not one array,
    and a module whose `forward_inference` gives no distribution inputs and has no Q values."""
    dist_inputs(module)


def dist_inputs(module: RLModule) -> DistInputs:
    """Where the exported network takes its `action_dist_inputs` from (see `DistInputs`);
    UsageError for a module `export` cannot write."""
    if module.is_stateful():
        raise UsageError(
            "the policy is recurrent (stateful, e.g. use_lstm); exporting recurrent policies is not supported yet; evaluate it without --export"
        )
    space = module.observation_space
    if not isinstance(space, gym.spaces.Box):
        # The network takes one tensor `obs`; a Dict (MADDPG's and QMIX's team
        # observations) would be several inputs, and sampling it gives dicts.
        raise UsageError(
            f"the policy's observations are a {type(space).__name__} space, not one array (Box); only policies with Box observations export so far; evaluate it without --export"
        )
    # What forward_inference returns is only known by calling it: one observation.
    with torch.no_grad():
        output = module.forward_inference(
            {Columns.OBS: torch.as_tensor(sample_observations(module, 1, 0))}
        )
    if Columns.ACTION_DIST_INPUTS in output:
        return "forward_inference"
    if isinstance(module, QNetAPI):
        return "q_values"
    raise UsageError(
        f"the policy's forward_inference ({type(module).__name__}) gives actions without the distribution inputs they come from and the module has no Q values; exporting it is not supported yet; evaluate it without --export"
    )


class InferenceNetwork(torch.nn.Module):
    """`forward_inference` of an RLModule as a plain tensor-in, tensors-out network."""

    def __init__(self, module: RLModule) -> None:
        super().__init__()
        self.dist_inputs = dist_inputs(module)
        assert isinstance(module, torch.nn.Module)
        self.module = module
        self.dist_class = module.get_inference_action_dist_cls()

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch: dict[str, Any] = {Columns.OBS: obs}
        inputs: torch.Tensor
        if self.dist_inputs == "q_values":
            # One pass through the Q network: the actions are the deterministic sample of
            # the categorical over the Q values, as DQN's forward_inference takes them.
            inputs = cast(Any, self.module).compute_q_values(batch)[QF_PREDS]
        else:
            inputs = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return greedy(self.dist_class, inputs), inputs


def greedy(dist_class: Any, inputs: torch.Tensor) -> torch.Tensor:
    """The deterministic sample of the distribution `dist_class` over `inputs`."""
    actions = dist_class.from_logits(inputs).to_deterministic().sample()
    assert isinstance(actions, torch.Tensor)  # torch distributions sample tensors
    return actions


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
    """Greedy actions of the RLModule itself, for comparison with an export: as RLlib's
    GetActions connector takes them, `forward_inference`'s own actions where it gives them
    (DQN's), else the deterministic sample of its action distribution."""
    with torch.no_grad():
        output = module.forward_inference({Columns.OBS: torch.as_tensor(observations)})
        if Columns.ACTIONS in output:
            return torch.as_tensor(output[Columns.ACTIONS]).numpy()
        dist_class = module.get_inference_action_dist_cls()
        return greedy(dist_class, output[Columns.ACTION_DIST_INPUTS]).numpy()


def sample_observations(module: RLModule, count: int, seed: int) -> np.ndarray:
    """A batch of observations from the module's observation space (to trace and compare)."""
    space = module.observation_space
    assert space is not None
    space.seed(seed)
    # Unbounded Box dimensions sample from a unit normal: ordinary-sized inputs.
    return np.stack([space.sample() for _ in range(count)]).astype(space.dtype)


def mismatches(module: RLModule, path: Path, observations: np.ndarray) -> int:
    """On how many of `observations` the exported network's actions differ from the module's."""
    expected, got = module_actions(module, observations), exported_actions(path, observations)
    if expected.shape != got.shape:
        return len(observations)
    if np.issubdtype(expected.dtype, np.integer):
        same = expected == got
    else:
        same = np.isclose(expected, got, atol=1e-5)
    return int((~same.reshape(len(observations), -1).all(axis=1)).sum())


def matches(module: RLModule, path: Path, observations: np.ndarray) -> bool:
    """Whether the exported network's actions equal the module's on `observations`."""
    return mismatches(module, path, observations) == 0
