"""Runs in every Ray worker process of a supervised run (Ray's worker_process_setup_hook).

Ray Train V2 removes the placement group of a Train run whose controller died (a Tune
trial stopped for a PBT exploit, ASHA or Ctrl-C) from a `PlacementGroupCleaner` actor,
which looks the controller up through Ray's state API. Without an address that API
searches the machine for a Ray cluster and fails when it finds several (other users'
sessions, parallel test runs); the run's workers' resources then stay reserved and the
next Train run waits for them. Pinning RAY_ADDRESS to this process's own cluster fixes
the lookup.
"""

from __future__ import annotations

import os


def pin_ray_address() -> None:
    import ray

    os.environ.setdefault("RAY_ADDRESS", ray.get_runtime_context().gcs_address)
