"""Ray for a run: started or joined, kept for the process's next run where it serves it, and
checked before Tune starts a trial.

Ray is initialized once per process and keeps what it was initialized with: its CPUs, the
cluster it joined, the runtime env with the workload's worker_process_setup_hook. A second
`rlsuite.launch` in a notebook used to take the first one's Ray as it was, past every
check: one that needed more CPUs than it had waited forever with its trials PENDING, one
with another `address` ran on the old cluster, a supervised run after an RL one went
without its setup hook. What the suite started or joined Ray with is recorded here; a run
it does not serve restarts it (`init_ray` says why), and the cluster checks run every time.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

import ray

from rlsuite.errors import UsageError
from rlsuite.launcher import cluster

if TYPE_CHECKING:
    from rlsuite.experiment import Experiment
    from rlsuite.launcher.tuner import Launch
    from rlsuite.workload import Workload

# One torch/BLAS thread per Ray actor: with two, RLlib's sampling on a 2-core machine
# became erratic (up to 25x slower); env runners and learners scale by actors instead.
ACTOR_ENV_VARS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class RaySetup:
    """What Ray is initialized with for a run."""

    address: str | None
    """The cluster joined (`address`); None for a local Ray of the suite's own."""
    setup_hook: str
    """The workload's worker_process_setup_hook, in every worker's runtime env."""
    log_to_driver: bool
    """Workers' output forwarded to this process (`verbose`)."""
    num_cpus: int | None = None
    """A local Ray's CPUs; None on a cluster, which has its own."""

    def serves(self, wanted: RaySetup) -> bool:
        """Whether a Ray initialized with these settings runs `wanted`'s run as asked."""
        same = (self.address, self.setup_hook, self.log_to_driver) == (
            wanted.address,
            wanted.setup_hook,
            wanted.log_to_driver,
        )
        return same and (self.num_cpus or 0) >= (wanted.num_cpus or 0)


@dataclass(frozen=True)
class _Initialized:
    setup: RaySetup
    session: tuple[str, str] | None
    """Its GCS and this driver's job: still that Ray, not one the user initialized since."""
    thread: int


_initialized: _Initialized | None = None


def init_ray(experiment: Experiment, launch: Launch, workload: Workload) -> None:
    """Start or join Ray for this run, or keep the one up where it serves the run; then
    refuse (UsageError) a trial that needs more than the cluster has (the workload's
    `check_cluster` too, on a joined cluster or a Ray the user started), and results on one
    host's disk where the cluster spans several.

    A Ray the suite started or joined that does not serve the run is restarted rather than
    the run refused: runs of a process go one at a time (api) and leave their results in
    files, so nothing of the suite's holds that Ray between them, and a restart is what a
    fresh process does, where a refusal would leave the user to shut down a Ray they never
    started. A Ray the user initialized (their actors, their settings) is theirs: used as
    it is, or refused with the fix where the run asks for another cluster."""
    needed = workload.trial_resources(experiment)
    wanted = RaySetup(launch.address, workload.worker_setup_hook, launch.verbose)
    if not launch.address:
        # On a small machine a trial may reserve more CPUs than exist (e.g. PPO's main
        # process plus two env runners on 2 cores); oversubscribe rather than wait forever.
        cpus = max(os.cpu_count() or 1, int(needed.get("CPU", 0.0) + 0.999))
        wanted = RaySetup(None, wanted.setup_hook, wanted.log_to_driver, cpus)
    users = False
    if ray.is_initialized():
        ours = _ours()
        if ours is None:
            users = True
            _check_users_ray(wanted.address)
        elif not ours.setup.serves(wanted):
            shutdown()
    if not ray.is_initialized():
        _start(wanted)
    resources = ray.cluster_resources()
    cluster.check_resources(needed, resources, workload.scaling_flags)
    nodes = cluster.alive_nodes()
    cluster.check_bundles_fit(workload.trial_bundles(experiment), nodes)
    # A local run's `check` saw this machine's CPUs before Ray started; a Ray the user
    # started (`ray.init(num_cpus=2)`) may have fewer, and a cluster's are known only now.
    if launch.address or users:
        workload.check_cluster(experiment, nodes)
    cluster.check_shared_storage(str(launch.storage_path))


def shutdown() -> None:
    """End the Ray the suite started (or leave the cluster it joined)."""
    global _initialized
    _initialized = None
    ray.shutdown()


def shutdown_if_started_in_this_thread() -> None:
    """`shutdown` where this thread started or joined the Ray that is up."""
    ours = _ours()
    if ours is not None and ours.thread == threading.get_ident():
        shutdown()


def _ours() -> _Initialized | None:
    """What the suite initialized the Ray that is up with; None for one the user did."""
    if _initialized is None or not ray.is_initialized():
        return None
    return _initialized if _initialized.session == _session() else None


def _check_users_ray(address: str | None) -> None:
    session = _session()
    # The address as ray.init resolves it (`auto`: Ray's address file), against the GCS.
    if address is None or session is None or cluster._resolved(address) == session[0]:
        return
    raise UsageError(
        f"address={address!r}: this process is already connected to another Ray (GCS at "
        f"{session[0]}), initialized outside rlsuite.launch; call ray.shutdown() first, or "
        "leave out address to run on that one"
    )


def _start(wanted: RaySetup) -> None:
    global _initialized
    if wanted.address:
        cluster.connect(
            wanted.address,
            ACTOR_ENV_VARS,
            wanted.setup_hook,
            log_to_driver=wanted.log_to_driver,
        )
    else:
        # "local": a Ray of our own even while a `ray start` cluster runs on this machine
        # (plain ray.init() would join that one, and refuses num_cpus when it does).
        # With Ray's dashboard, though it costs ~2.5 s of CPU per start: it serves the
        # State API, through which rlsuite.launcher.failures reads a crashed env runner's
        # error and Ray Train's PlacementGroupCleaner frees the workers of a TorchTrainer
        # that Tune stopped (a PBT exploit; without it the next trial waits for them).
        cluster.ensure_auth_token()
        ray.init(
            address="local",
            num_cpus=wanted.num_cpus,
            runtime_env={
                "env_vars": ACTOR_ENV_VARS,
                "worker_process_setup_hook": wanted.setup_hook,
            },
            log_to_driver=wanted.log_to_driver,  # else workers' output stays in Ray's logs
            # Ray prestarts an idle worker per CPU when the driver connects; a trial's
            # actors each start a process of their own (a run's logs show the prestarted
            # ones never running anything), so they only take CPU from the start-up.
            # Measured, smoke of ppo_cartpole.py, 5 alternating rounds: median 21.1 s
            # with them, 19.9 s without.
            _system_config={"prestart_worker_first_driver": False},
        )
    _initialized = _Initialized(wanted, _session(), threading.get_ident())


def _session() -> tuple[str, str] | None:
    try:
        context = ray.get_runtime_context()
        return str(context.gcs_address), str(context.get_job_id())
    except Exception:  # Ray Client's context has no GCS address: the record alone decides
        return None
