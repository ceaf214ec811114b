"""Everything that is not the experiment: loading its file, checks, `--smoke`, Ray start-up
or joining a cluster, the Tuner, progress and failure messages, the Python entry point
(`api.launch`). Workload-specific steps go through `rlsuite.workload.Workload`."""
