"""`python -m rlsuite.serve PATH [flags]`: a trained policy or classifier behind HTTP on Ray Serve.

PATH is an experiment results directory (the best trial's latest checkpoint, or `--trial`
and `--checkpoint`), a trial directory or a checkpoint directory. RL policies answer
`POST /act`, classifiers `POST /predict`; `GET /healthz` and `GET /ready` report the
server's state. Requests are batched dynamically (`--max-batch-size`, `--batch-wait-ms`).
Ctrl-C stops it. Exit 2 on bad input, before Serve starts; exit 1 when Serve does not come
to serve the model (its proxy does not start, its replicas fail, or `--start-timeout`
passes).

A thin parser over `rlsuite.serving.command.serve`, which Python code calls with a
`ServeOptions`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlsuite.errors import ServeStartFailed, UsageError
from rlsuite.flags import (
    Parser,
    exit_with,
    non_negative_float,
    port,
    positive_float,
    positive_int,
    quiet_restore_logs,
)
from rlsuite.serving.options import BACKENDS, PROXIES, ServeOptions

EXIT_BAD_INPUT = 2
EXIT_NOT_SERVING = 1
EXIT_INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C
DEFAULTS = ServeOptions(path=Path())


def build_parser() -> Parser:
    parser = Parser(prog="python -m rlsuite.serve", description=__doc__.split("\n\n")[1])
    add = parser.add_argument
    add(
        "path",
        type=Path,
        help="experiment results directory, trial directory or checkpoint_NNNNNN directory",
    )
    add("--trial", help="trial directory name or id (default: the best by the experiment's metric)")
    add("--checkpoint", metavar="NAME", help="checkpoint of the trial (default: its latest)")
    _add_server_flags(parser)
    return parser


def _add_server_flags(parser: Parser) -> None:
    """Where and how the model is served."""
    add = parser.add_argument
    add("--host", default=DEFAULTS.host, help="address to listen on (default 127.0.0.1)")
    add("--port", type=port, default=DEFAULTS.port, help="HTTP port (default 8000)")
    add(
        "--replicas",
        type=positive_int,
        default=DEFAULTS.replicas,
        help="replicas of the model (default 1)",
    )
    add(
        "--num-cpus",
        type=positive_float,
        default=DEFAULTS.num_cpus,
        help="CPUs per replica (default 1)",
    )
    add(
        "--num-gpus",
        type=non_negative_float,
        default=DEFAULTS.num_gpus,
        help="GPUs per replica (default 0)",
    )
    add(
        "--max-batch-size",
        type=positive_int,
        default=DEFAULTS.max_batch_size,
        help="requests per forward pass at most (default 32; 1: no batching)",
    )
    add(
        "--batch-wait-ms",
        type=non_negative_float,
        default=DEFAULTS.batch_wait_ms,
        help="how long a batch waits for more requests (default 2 ms)",
    )
    add(
        "--explore",
        action=argparse.BooleanOptionalAction,
        default=DEFAULTS.explore,
        help="sample actions (default: --no-explore, greedy)",
    )
    add(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=DEFAULTS.access_log,
        help="a line per request in the replicas' logs (default: --no-access-log, a line per refused request only)",
    )
    add(
        "--backend",
        choices=BACKENDS,
        default=DEFAULTS.backend,
        help="torch (the RLModule with its connectors) or onnx (the exported network on onnxruntime)",
    )
    add(
        "--proxy",
        choices=PROXIES,
        default=DEFAULTS.proxy,
        help="serve (Serve's HTTP proxy actor) or haproxy (Serve's HAProxy ingress: "
        "3.7-4.0x the batched requests/s on 2 CPUs; docs/serving.md)",
    )
    add("--address", help="Ray cluster to deploy on (auto, ray://HOST:10001); default: a local Ray")
    add(
        "--start-timeout",
        type=positive_float,
        default=DEFAULTS.start_timeout_s,
        dest="start_timeout_s",
        metavar="SECONDS",
        help=f"how long the replicas may take to start serving (default {DEFAULTS.start_timeout_s:g})",
    )
    add(
        "--logs-dir",
        type=Path,
        help="where Ray's and Serve's own output goes (default: a new temporary directory)",
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    quiet_restore_logs()
    from rlsuite.serving.command import serve

    try:
        serve(ServeOptions.from_args(args))
    except UsageError as error:
        print(f"rlsuite.serve: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ServeStartFailed as error:
        print(f"rlsuite.serve: error: {error}", file=sys.stderr)
        return EXIT_NOT_SERVING
    except KeyboardInterrupt:  # Ctrl-C before the server's own stop handling was in place
        print("rlsuite.serve: interrupted before serving", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


if __name__ == "__main__":
    exit_with(main())
