"""The two programs `overhead.py` times: a hand-written RLlib script and `rlsuite.run` with
marks around its calls into Ray and Tune. Each prints `BENCH_MARK name time [value]` where one
phase ends and the next begins (the phases are in overhead.py's `PHASES`).
"""

from __future__ import annotations

MARK = "BENCH_MARK"

# Both programs start with it. One write per mark: Ray's threads print to the same stream.
# The marks go to a copy of fd 1 taken first: while a run goes, rlsuite.run points fd 1
# and 2 at the run's driver.log (rlsuite/launcher/console.py).
_MARK_FUNCTION = f"""
import os, sys, time

_marks = os.fdopen(os.dup(1), "w")

def mark(name, value=""):
    _marks.write(f"{MARK} {{name}} {{time.time()!r}} {{value}}\\n")
    _marks.flush()
"""

# The hand-written baseline: what a user writes with RLlib alone. It trains the same
# config for the same iterations and saves checkpoints at the same cadence.
HAND_WRITTEN = (
    _MARK_FUNCTION
    + """
import ray
from rlsuite import envs
from rlsuite.launcher.loader import load_experiment

mark("imported")
iterations, every, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
config = load_experiment(sys.argv[4]).config
mark("ray_init_start")
# "local": a Ray of its own, as rlsuite.run starts, even while a `ray start` cluster runs.
ray.init(address="local", runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
mark("ray_init_end")
envs.register(config.env)
algo = config.build_algo()
for i in range(1, iterations + 1):
    result = algo.train()
    mark("iteration", result["time_this_iter_s"])
    if i % every == 0 or i == iterations:
        algo.save(f"{out}/checkpoint_{i:06d}")
algo.stop()
mark("stopped")
ray.shutdown()
"""
)

# `python -m rlsuite.run ARGS` with marks: its `main`, with Ray's and Tune's calls wrapped.
SUITE = (
    _MARK_FUNCTION
    + """
from rlsuite.run import main  # what `python -m rlsuite.run` imports

mark("imported")

import ray
from ray.tune import Tuner
from ray.tune.callback import CallbackList


def marked(owner, name, before, after):
    original = getattr(owner, name)

    def call(*args, **kwargs):
        mark(before)
        try:
            return original(*args, **kwargs)
        finally:
            mark(after)

    setattr(owner, name, call)


tune_on_trial_result = CallbackList.on_trial_result


def on_trial_result(self, **info):
    mark("iteration", info["result"]["time_this_iter_s"])
    return tune_on_trial_result(self, **info)


marked(ray, "init", "ray_init_start", "ray_init_end")
marked(Tuner, "fit", "fit_start", "stopped")
CallbackList.on_trial_result = on_trial_result
code = main(sys.argv[1:])
mark("summary_done")
sys.exit(code)
"""
)
