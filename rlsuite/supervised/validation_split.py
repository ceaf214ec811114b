"""Ray Data validation splits in which every example counts once.

Ray Train's `DataConfig` splits each data set with `streaming_split(equal=True)`, which
gives every worker the same number of rows by leaving up to workers - 1 of them out: the
summed validation totals would miss those examples. Training keeps Ray's equal split (DDP
steps in lockstep, so every worker needs the same number of batches); validation runs
outside DDP (`loop._validation_model`), so its shares may differ, even be empty.
"""

from __future__ import annotations

from typing import Any

import ray.train

VALIDATION = "validation"


class ExactValidation(ray.train.DataConfig):
    """Ray Train's DataConfig, with the validation split `streaming_split(equal=False)`."""

    def configure(
        self,
        datasets: dict[str, Any],
        world_size: int,
        worker_handles: Any,
        worker_node_ids: Any,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        others = {name: data for name, data in datasets.items() if name != VALIDATION}
        output = super().configure(others, world_size, worker_handles, worker_node_ids, **kwargs)
        if VALIDATION not in datasets:
            return output
        data = datasets[VALIDATION]
        if data.name is None:
            data.set_name(VALIDATION)
        data = data.copy(data)
        # As Ray's own configure does for the sets it splits (private: no public getter).
        data.context.execution_options = self._resolve_execution_options(VALIDATION)
        hints = worker_node_ids if self._enable_shard_locality else None
        shards = data.streaming_split(world_size, equal=False, locality_hints=hints)
        for rank, shard in enumerate(shards):
            output[rank][VALIDATION] = shard
        return output
