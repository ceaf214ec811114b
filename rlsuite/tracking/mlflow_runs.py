"""`--mlflow URI`: one MLflow run per trial, through Tune's `MLflowLoggerCallback`.

Tune's callback logs every result key as a metric (the config too, as `config/...`, one
request per key) and the config as params again on each restart, which MLflow refuses
once PBT changed a value. This one logs the trial's flattened config as params once, the
suite's named metrics per iteration in one batch, each PBT exploit, and at the end the
final checkpoint's path as the tag `checkpoint`. A `--resume`d trial continues its run.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable

from mlflow.entities import Metric, Param
from ray.air.integrations.mlflow import MLflowLoggerCallback
from ray.tune.experiment import Trial

from rlsuite import metrics
from rlsuite.tracking.pbt_events import PbtEvents, numeric_values
from rlsuite.tracking.selection import config_params, tracked_metrics

PARAMS_PER_REQUEST = 100  # MLflow's limit for one log_batch
MAX_PARAM_CHARS = 6000  # MLflow's limit for a param value
GIT_COMMIT_TAG = "mlflow.source.git.commit"  # the MLflow UI shows it on the run page
_NOT_IN_NAMES = re.compile(r"[^\w./\- ]")  # MLflow refuses other characters in a name


class MlflowTracking(MLflowLoggerCallback):
    def __init__(
        self,
        tracking_uri: str,
        experiment_name: str,
        tags: dict[str, str],
        names: frozenset[str],
    ):
        if "git_commit" in tags:
            tags = {**tags, GIT_COMMIT_TAG: tags["git_commit"]}
        super().__init__(tracking_uri, experiment_name=experiment_name, tags=tags)
        self._names = names
        self._pbt = PbtEvents()

    def log_trial_start(self, trial: Trial) -> None:
        if trial in self._trial_runs:  # restarted after a PBT exploit or a failure
            return
        client = self.mlflow_util._get_client()
        experiment_id = str(self.mlflow_util.experiment_id)
        resumed = client.search_runs(
            [experiment_id],
            filter_string=f"tags.trial_id = '{trial.trial_id}'",
            max_results=1,
        )
        if resumed:
            self._trial_runs[trial] = resumed[0].info.run_id
            return
        tags = {
            **(self.tags or {}),
            "trial_name": str(trial),
            "trial_id": trial.trial_id,
            "seed": str(trial.config.get("seed")),
        }
        run = client.create_run(experiment_id, run_name=str(trial), tags=tags)
        self._trial_runs[trial] = run.info.run_id
        params = [
            Param(_NOT_IN_NAMES.sub("_", key), value[:MAX_PARAM_CHARS])
            for key, value in config_params(trial.config).items()
        ]
        for start in range(0, len(params), PARAMS_PER_REQUEST):
            client.log_batch(run.info.run_id, params=params[start : start + PARAMS_PER_REQUEST])

    def log_trial_result(self, iteration: int, trial: Trial, result: dict) -> None:
        if trial not in self._trial_runs:
            self.log_trial_start(trial)
        run_id = self._trial_runs[trial]
        step = int(result.get(metrics.TRAINING_ITERATION, iteration))
        values = tracked_metrics(result, self._names)
        client = self.mlflow_util._get_client()
        for exploit in self._pbt.take(trial):
            record = self._pbt.record(exploit, step)
            values.update(numeric_values(record))
            client.set_tag(run_id, f"pbt/exploit_at_{step}", json.dumps(record, default=str))
        client.log_batch(run_id, metrics=list(_metrics(values.items(), step)))

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        if trial not in self._trial_runs:
            return
        run_id = self._trial_runs.pop(trial)
        client = self.mlflow_util._get_client()
        if trial.checkpoint is not None:
            client.set_tag(run_id, "checkpoint", trial.checkpoint.path)
        client.set_terminated(run_id, "FAILED" if failed else "FINISHED")


def _metrics(values: Iterable[tuple[str, float]], step: int) -> Iterable[Metric]:
    now_ms = int(time.time() * 1000)
    return (Metric(key, value, now_ms, step) for key, value in values)
