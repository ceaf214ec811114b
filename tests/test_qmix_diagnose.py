"""The QMIX mixer breakdown (rlsuite/multiagent/qmix/diagnose.py) against its definitions,
and scripts/qmix_mixer_gain.py's refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from rlsuite.multiagent.qmix.diagnose import mixer_breakdown
from tests.test_qmix import N_AGENTS, _module, _observations

ROOT = Path(__file__).resolve().parents[1]


def test_breakdown_matches_the_mixer_written_out() -> None:
    torch.manual_seed(0)
    module = _module("qmix")
    obs = _observations(64)
    found = mixer_breakdown(module, obs)
    mixer, state = module.mixer, obs["state"]
    with torch.no_grad():  # the mixer's definitions, written out
        greedy = module.compute_q_values({"obs": obs})["qf_preds"].max(-1).values.detach()
        w1 = torch.abs(mixer.hyper_w1(state)).view(64, N_AGENTS, mixer.embed_dim)
        b1 = mixer.hyper_b1(state)
        w2 = torch.abs(mixer.hyper_w2(state))
        hidden = torch.einsum("ba,bak->bk", greedy, w1) + b1
        slope = torch.where(hidden > 0, torch.ones_like(hidden), torch.exp(hidden))  # elu'
        gain = torch.einsum("bak,bk,bk->ba", w1, slope, w2)
        value = mixer.hyper_v(state).squeeze(-1)
        state_only = (nn.functional.elu(b1) * w2).sum(-1) + value
        expected = {
            "agent_q": greedy.mean(),
            "q_tot": ((nn.functional.elu(hidden) * w2).sum(-1) + value).mean(),
            "state_only": state_only.mean(),
            "v": value.mean(),
            "gain": gain.mean(),
        }
    for key, value_ in expected.items():
        assert found[key] == pytest.approx(value_.item(), rel=1e-4, abs=1e-5), key


def test_vdn_has_no_mixer_to_break_down() -> None:
    with pytest.raises(ValueError, match="not QMIX's"):
        mixer_breakdown(_module("vdn"), _observations(4))


def test_script_refuses_a_path_without_a_run_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "scripts/qmix_mixer_gain.py", str(tmp_path / "nothing")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("python scripts/qmix_mixer_gain.py: error: ")
    assert "nothing" in lines[0]
