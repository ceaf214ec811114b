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
    # Results on a file system every node mounts (EFS), seen inside each node's container.
    assert any("mount -t nfs4" in c for c in spec["initialization_commands"])
    assert "-v /mnt/results:/mnt/results" in spec["docker"]["run_options"]


def test_kuberay_files_use_token_auth_and_a_private_head() -> None:
    cluster = yaml.safe_load((CLUSTER / "kuberay-raycluster.yaml").read_text())["spec"]
    job = yaml.safe_load((CLUSTER / "kuberay-rayjob.yaml").read_text())["spec"]
    for spec in (cluster, job["rayClusterSpec"]):
        assert spec["authOptions"]["mode"] == "token"
        assert spec["rayVersion"].startswith("2.60")
        assert spec["headGroupSpec"]["serviceType"] == "ClusterIP"
    assert "rlsuite.run experiments/pbt_ppo_atari.py" in job["entrypoint"]
    assert "--storage-path /mnt/results/" in job["entrypoint"]  # where every pod mounts:
    for group in (
        job["rayClusterSpec"]["headGroupSpec"],
        *job["rayClusterSpec"]["workerGroupSpecs"],
    ):
        pod = group["template"]["spec"]
        assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "rlsuite-results"
        assert pod["containers"][0]["volumeMounts"][0]["mountPath"] == "/mnt/results"
