"""The RL workload: an RLlib `AlgorithmConfig` run by its own Algorithm class under Tune."""

from __future__ import annotations

import dataclasses
from typing import Any

from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.tune import CheckpointConfig
from ray.tune.execution.placement_groups import PlacementGroupFactory

from rlsuite import envs
from rlsuite.domains import mutation_domains
from rlsuite.experiment import PB2, PBT, Experiment
from rlsuite.multiagent.env_runner import BatchedCountsMultiAgentEnvRunner
from rlsuite.multiagent.validate import check_multi_agent
from rlsuite.options import RunOptions
from rlsuite.rl import pbt_check, ranges, smoke, validate
from rlsuite.rl.overrides import apply_sets
from rlsuite.rl.seeding import with_seeded_replay
from rlsuite.rl.stop_keys import check_stop_keys
from rlsuite.rl.weights_sync import with_weights_pushed_after_restore


class RLWorkload:
    name = "RL"
    # Each Ray worker of the run imports RLlib as it starts (rlsuite/launcher/warmup.py).
    worker_setup_hook = "rlsuite.launcher.warmup.import_rllib"
    scaling_flags = (
        "--num-env-runners, --num-learners, --num-gpus-per-learner or "
        "--num-cpus-per-env-runner/--num-cpus-per-learner"
    )

    def apply_flags(self, experiment: Experiment, options: RunOptions) -> Experiment:
        config = apply_sets(_config(experiment), list(options.sets))
        runners: dict[str, Any] = {
            "num_env_runners": options.num_env_runners,
            "num_envs_per_env_runner": options.num_envs_per_env_runner,
            "num_cpus_per_env_runner": options.num_cpus_per_env_runner,
        }
        learners: dict[str, Any] = {
            "num_learners": options.num_learners,
            "num_gpus_per_learner": options.num_gpus_per_learner,
            "num_cpus_per_learner": options.num_cpus_per_learner,
        }
        config.env_runners(**{k: v for k, v in runners.items() if v is not None})
        config.learners(**{k: v for k, v in learners.items() if v is not None})
        if options.seed is not None and not options.seeds:
            config.debugging(seed=options.seed)
        return dataclasses.replace(experiment, config=config)

    def param_keys(self, path: str) -> tuple[str, ...]:
        # Paths are GROUP.KEY[.sub] (the group is the config method's name, absent from the
        # param space), and the config's dict names `lambda_` `lambda`.
        key = path.split(".")[1] if "." in path else path
        return tuple(dict.fromkeys((key, key.rstrip("_"))))

    def smoke_config(self, config: Any) -> Any:
        return smoke.smoke_config(config)

    def check(self, experiment: Experiment, address: str | None) -> None:
        config = _config(experiment)
        spaces = validate.check_env(config)
        validate.check_config(config)
        ranges.check_ranges(config)
        ranges.check_search(config, experiment.search)
        ranges.check_search(config, mutation_domains(experiment.scheduler))
        check_multi_agent(config)
        validate.check_scaling(config)
        validate.check_gpus(config, address)
        validate.check_evaluation_results(config, experiment.stop, experiment.metric)
        check_stop_keys(config, experiment.stop)
        validate.check_module_builds(config, spaces)

    def param_space(self, experiment: Experiment) -> dict[str, Any]:
        """The RLlib config as Tune's param space, with the experiment's search on top."""
        config = with_seeded_replay(_config(experiment).copy(copy_frozen=False))
        # PBT and PB2 restore checkpoints into running trials: their env runners must act
        # with the restored weights (weights_sync.py says why RLlib's own sync skips them).
        config = with_weights_pushed_after_restore(config)
        if isinstance(experiment.scheduler, PBT | PB2):
            config = pbt_check.with_check(config)
        if experiment.max_failures == 0:
            # Otherwise RLlib restarts a crashed env runner after a minute and returns
            # results without env-runner metrics; fail the trial with the env's error.
            config.fault_tolerance(restart_failed_env_runners=False)
        if config.is_multi_agent and config.env_runner_cls is None:
            # RLlib's sampling with its per-step metric calls batched: same results, ~15%
            # faster on MPE spread (see rlsuite/multiagent/env_runner.py).
            config.env_runners(env_runner_cls=BatchedCountsMultiAgentEnvRunner)
        if (
            isinstance(config.env, str)
            and envs.is_registered(config.env)
            and envs.is_multi_agent(config.env)
        ):
            # RLlib's env check resets every sub-env with seed=42, so without --seed all
            # vector sub-envs and env runners replay the same episodes (ray issue 46986).
            # Registry envs pass the same check in tests/test_multiagent_envs.py instead.
            config.environment(disable_env_checking=True)
        return {**config.to_dict(), **experiment.search}

    def trainable(self, experiment: Experiment) -> Any:
        """The Algorithm class, with a registry env registered with Tune first."""
        config = _config(experiment)
        if isinstance(config.env, str):
            envs.register(config.env)
        return algorithm_class(experiment)

    def trial_resources(self, experiment: Experiment) -> dict[str, float]:
        total: dict[str, float] = {}
        for bundle in self.trial_bundles(experiment):
            for name, amount in bundle.items():
                total[name] = total.get(name, 0.0) + amount
        return total

    def trial_bundles(self, experiment: Experiment) -> list[dict[str, float]]:
        request = algorithm_class(experiment).default_resource_request(_config(experiment))
        assert isinstance(request, PlacementGroupFactory)
        return [dict(bundle) for bundle in request.bundles]

    def max_concurrent_trials(
        self, experiment: Experiment, cluster_resources: dict[str, float]
    ) -> int | None:
        return None  # Tune places RL trials' placement groups as resources free up

    def check_cluster(self, experiment: Experiment, nodes: list[dict[str, float]]) -> None:
        """Nothing: an RL trial's actors all sit in its bundles, which `init_ray` checks."""
        return None

    def checkpoint_config(self, experiment: Experiment) -> CheckpointConfig:
        return CheckpointConfig(
            checkpoint_frequency=experiment.checkpoint_every,
            checkpoint_at_end=True,
            num_to_keep=experiment.keep_checkpoints,
        )


def algorithm_class(experiment: Experiment) -> type[Algorithm]:
    algo_class = _config(experiment).algo_class
    assert isinstance(algo_class, type) and issubclass(algo_class, Algorithm)
    return algo_class


def _config(experiment: Experiment) -> AlgorithmConfig:
    config = experiment.config
    assert isinstance(config, AlgorithmConfig), "the RL workload runs AlgorithmConfigs"
    return config
