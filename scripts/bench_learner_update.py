"""A PPO learner's gradient step on Pong's frames, by precision and memory layout: where an
Atari learner's CPU time goes once sampling is fast (docs/performance.md).

Times forward, loss, backward and Adam on one minibatch of random frames with the network
of `experiments/ppo_atari.py` (`--network suite`) or RLlib's default PPO network for 84x84x4
frames (`--network rllib`), on one torch thread as every Ray actor of the suite runs. The
variants alternate round by round: float32 or bf16 autocast, each with the weights in
torch's default (NCHW) or the channels-last layout (RLlib's CNN encoder already hands the
frames to its first convolution as a channels-last view). The bf16 variants run only on a
CPU with native bf16 (AVX512-BF16 or AMX), the CPUs on which `rlsuite.rl.mixed_precision`'s
learners use it; elsewhere the learners run float32 and the report says bf16 was left out.

python scripts/bench_learner_update.py [--network suite|rllib] [--minibatch N] [--steps N]
    [--rounds R] [--json]
"""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import dataclass
from typing import Any

from benchmarks.common import (
    bench_parser,
    emit,
    load_line,
    machine,
    ratio_of_medians,
    ratio_text,
    rounds_title,
    spread_note,
)
from rlsuite.flags import positive_int

VARIANTS = ("float32", "float32 channels_last", "bf16", "bf16 channels_last")


def build_module(network: str) -> Any:
    import gymnasium as gym
    import numpy as np
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
        DefaultPPOTorchRLModule,
    )
    from ray.rllib.core.rl_module import RLModuleSpec
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    from benchmarks.common import EXPERIMENTS
    from rlsuite.launcher.loader import load_experiment

    if network == "suite":  # uint8 frames, scaled inside the module
        config = load_experiment(EXPERIMENTS / "ppo_atari.py").config
        module_class = config.rl_module_spec.module_class
        model_config = config.model_config
        frames = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    else:  # PPOConfig()'s defaults on the float frames of RLlib's Atari wrappers
        module_class = DefaultPPOTorchRLModule
        model_config = DefaultModelConfig()
        frames = gym.spaces.Box(0.0, 1.0, (84, 84, 4), np.float32)
    spec = RLModuleSpec(
        module_class=module_class,
        observation_space=frames,
        action_space=gym.spaces.Discrete(6),
        model_config=model_config,
    )
    # Building logs RLlib's notice about its own deprecated module constructor: not this
    # benchmark's output (as rlsuite/rl/module_build.py builds before Ray starts).
    logging.disable(logging.WARNING)
    try:
        return spec.build()
    finally:
        logging.disable(logging.NOTSET)


def seconds_per_step(module: Any, variant: str, minibatch: int, steps: int) -> float:
    """Median seconds of one gradient step of `module` under `variant`, after 2 warm-up
    steps (oneDNN picks and caches its kernels on the first calls)."""
    import torch
    from ray.rllib.core.columns import Columns

    layout = torch.channels_last if variant.endswith("channels_last") else torch.contiguous_format
    module.to(memory_format=layout)
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-4)
    generator = torch.Generator().manual_seed(0)
    obs = torch.randint(0, 256, (minibatch, 84, 84, 4), dtype=torch.uint8, generator=generator)
    if module.observation_space.dtype != "uint8":
        obs = obs.float() / 255.0
    actions = torch.randint(0, 6, (minibatch,), generator=generator)
    targets = torch.randn(minibatch, generator=generator)
    batch = {Columns.OBS: obs}
    timings = []
    for step in range(steps + 2):
        start = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=variant.startswith("bf16")):
            out = module.forward_train(batch)
            values = module.compute_values(batch, embeddings=out.get(Columns.EMBEDDINGS))
        # PPO's surrogate and value losses cost next to nothing beside the CNN; these two
        # take the same gradients' shapes through the same network.
        logits = out[Columns.ACTION_DIST_INPUTS].float()
        loss = torch.nn.functional.cross_entropy(logits, actions)
        loss = loss + 0.5 * (values.float() - targets).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step >= 2:
            timings.append(time.perf_counter() - start)
    return statistics.median(timings)


@dataclass
class Result:
    network: str
    minibatch: int
    seconds: dict[str, list[float]]
    before: dict[str, Any]
    after: dict[str, Any]
    native_bf16: bool = True

    def speedup(self, variant: str) -> float | None:
        return ratio_of_medians(self.seconds["float32"], self.seconds[variant])

    def report(self) -> str:
        rounds = len(self.seconds["float32"])
        lines = [
            f"{self.network} network, minibatch {self.minibatch}, one torch thread; "
            f"{rounds_title(rounds)}; {load_line(self.before, self.after)}",
            "seconds per gradient step (forward, loss, backward, Adam):",
        ]
        if not self.native_bf16:
            lines.insert(
                1, "no native bf16 on this CPU: bf16 not measured (the learners run float32)"
            )
        for variant, values in self.seconds.items():
            figure = f"{statistics.median(values):.3f}{spread_note(values, '{:.3f}'.format)}"
            ratio = self.speedup(variant)
            speedup = "" if ratio is None else "x float32's speed"
            lines.append(f"  {variant:22s} {figure:22s} {ratio_text(ratio, '.2f')}{speedup}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "network": self.network,
            "minibatch": self.minibatch,
            "seconds_per_step": self.seconds,
            "speedup_vs_float32": {variant: self.speedup(variant) for variant in self.seconds},
            "machine_before": self.before,
            "machine_after": self.after,
            "native_bf16": self.native_bf16,
        }


def main() -> int:
    parser = bench_parser("bench_learner_update.py", __doc__)
    parser.add_argument("--network", choices=("suite", "rllib"), default="suite")
    parser.add_argument("--minibatch", type=positive_int, default=256, help="frames a step")
    parser.add_argument("--steps", type=positive_int, default=10, help="timed steps a round")
    parser.add_argument("--rounds", type=positive_int, default=3)
    args = parser.parse_args()
    import torch

    from rlsuite.rl.mixed_precision import fast_bf16

    torch.set_num_threads(1)
    native_bf16 = fast_bf16(torch.device("cpu"))
    variants = [v for v in VARIANTS if native_bf16 or not v.startswith("bf16")]
    module = build_module(args.network)
    before = machine()
    seconds: dict[str, list[float]] = {variant: [] for variant in variants}
    for _ in range(args.rounds):
        for variant in variants:
            seconds[variant].append(seconds_per_step(module, variant, args.minibatch, args.steps))
    result = Result(args.network, args.minibatch, seconds, before, machine(), native_bf16)
    emit(result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
