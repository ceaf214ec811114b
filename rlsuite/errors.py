"""Errors the suite reports to the user in its own words."""


class UsageError(Exception):
    """Bad input: the message names the problem and the fix (one line, exit code 2)."""


class PerturbationIgnoredError(RuntimeError):
    """A PBT trial trains with other values than its (perturbed) config: the learner or
    optimizer kept the exploited checkpoint's values (see rlsuite.rl.pbt_check)."""


class EnvFailed(Exception):
    """The user's env raised while the suite built it (`rlsuite.run`'s checks before Ray,
    `rlsuite.evaluate`) or played it (`rlsuite.evaluate`); its own error is the cause.
    Said apart from the suite's own errors, which keep their traceback alone (a bug to
    report)."""


class ServeStartFailed(Exception):
    """`rlsuite.serve`'s Serve did not start (its proxy, e.g. an HAProxy that could not
    bind a port) or did not come to serve the deployed model: the message names the
    proxy's or the replicas' own error, or the state Serve stuck in, and where its logs
    are (one line, exit code 1)."""
