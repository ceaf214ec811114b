"""MADDPG's and MASAC's learners in a group of two (`num_learners=2`): each steps on the
mean of both learners' gradients, as DDP gives RLlib's other learners. Two processes on
a gloo process group, the way RLlib's learner actors run, without Ray; one pair of
processes builds both algorithms' learners in turn (their start-up, importing RLlib and
torch, was most of the time when each algorithm had a pair of its own)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

WORKER = """
import sys
import torch
import torch.distributed as dist
sys.path.insert(0, {tests!r})
from test_maddpg_learner import _learner_and_spread_batch, critic_loss_and_learner_gradients
from rlsuite.multiagent.maddpg import MADDPGConfig, MASACConfig

rank = int(sys.argv[1])
dist.init_process_group("gloo", init_method={store!r}, rank=rank, world_size=2)
gradients = {{}}
for name, config_class in (("MADDPG", MADDPGConfig), ("MASAC", MASACConfig)):
    learner, env, batch = _learner_and_spread_batch(config_class, num_learners=2)
    generator = torch.Generator().manual_seed(rank + 1)  # each learner its own batch
    batch["actions"] = torch.rand(batch["actions"].shape, generator=generator) * 2 - 1
    module, _, local, by_param = critic_loss_and_learner_gradients(learner, batch)
    critic = list(module.critics.parameters())
    gradients[name] = {{"local": list(local), "group": [by_param[id(p)] for p in critic]}}
    env.close()
torch.save(gradients, sys.argv[2])
dist.destroy_process_group()
"""


@pytest.fixture(scope="module")
def gradients(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, dict[str, list]]]:
    """Per learner process (rank 0, then 1): each algorithm's critic gradients, of its own
    loss alone (`local`) and as the learner group steps on them (`group`)."""
    tmp_path = tmp_path_factory.mktemp("learner_group")
    script = tmp_path / "worker.py"
    tests = str(Path(__file__).parent)
    script.write_text(WORKER.format(tests=tests, store=f"file://{tmp_path / 'store'}"))
    outputs = [tmp_path / f"rank{rank}.pt" for rank in range(2)]
    workers = [
        subprocess.Popen(
            [sys.executable, str(script), str(rank), str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank, out in enumerate(outputs)
    ]
    for worker in workers:
        try:
            text, _ = worker.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            for w in workers:
                w.kill()
            pytest.fail("a learner process did not finish within 240 s")
        assert worker.returncode == 0, text[-3000:]
    return [torch.load(out) for out in outputs]


@pytest.mark.parametrize("algorithm", ["MADDPG", "MASAC"])
def test_two_learners_step_on_the_mean_of_their_gradients(
    gradients: list[dict[str, dict[str, list]]], algorithm: str
) -> None:
    first, second = (by_algorithm[algorithm] for by_algorithm in gradients)
    for local_0, local_1, group_0, group_1 in zip(
        first["local"], second["local"], first["group"], second["group"], strict=True
    ):
        torch.testing.assert_close(group_0, group_1)
        torch.testing.assert_close(group_0, (local_0 + local_1) / 2)
    assert any(
        not torch.allclose(a, b) for a, b in zip(first["local"], second["local"], strict=True)
    )  # the two batches did give the learners different gradients
