"""The cluster files parse and keep token authentication on and the dashboard private."""

from __future__ import annotations

import yaml

from tests.helpers import ROOT

CLUSTER = ROOT / "scripts" / "cluster"


def test_ray_up_file_starts_every_node_with_token_auth() -> None:
    spec = yaml.safe_load((CLUSTER / "aws.yaml").read_text())
    commands = spec["head_start_ray_commands"] + spec["worker_start_ray_commands"]
    starts = [c for c in commands if "ray start" in c]
    assert starts and all("RAY_AUTH_MODE=token" in c for c in starts)
    assert "--dashboard-host=127.0.0.1" in " ".join(spec["head_start_ray_commands"])
    assert {"head", "cpu_rollout", "gpu_learner"} <= set(spec["available_node_types"])
    assert any("auth_token" in target for target in spec["file_mounts"])


def test_kuberay_files_use_token_auth_and_a_private_head() -> None:
    cluster = yaml.safe_load((CLUSTER / "kuberay-raycluster.yaml").read_text())["spec"]
    job = yaml.safe_load((CLUSTER / "kuberay-rayjob.yaml").read_text())["spec"]
    for spec in (cluster, job["rayClusterSpec"]):
        assert spec["authOptions"]["mode"] == "token"
        assert spec["rayVersion"].startswith("2.60")
        assert spec["headGroupSpec"]["serviceType"] == "ClusterIP"
    assert "rlsuite.run experiments/pbt_ppo_atari.py" in job["entrypoint"]
    assert "--storage-path s3://" in job["entrypoint"]
