"""Ray Serve's own cost per request, for bench_serve's floor: an app that answers
`POST /act` with a fixed action after reading the JSON body, and `POST /predict` with a
fixed class after reading the image's bytes (not decoding them), and nothing else (no
model, no connectors, no batching), behind the same HTTP proxy, with the same
`max_ongoing_requests` and access log setting as `rlsuite.serve`, deployed and waited for
as `rlsuite.serve` does (`startup.deploy`), then says "serving". What it cannot exceed, no model server on
Serve exceeds on this machine. Runs until SIGINT.

python scripts/benchmarks/serve_floor.py --port PORT [--proxy serve|haproxy]
"""

from __future__ import annotations

import argparse
import json
import signal
import threading

import ray
from ray import serve
from ray.serve.config import HTTPOptions
from starlette.requests import Request
from starlette.responses import JSONResponse

from rlsuite.serving import haproxy, startup
from rlsuite.serving.app import MAX_ONGOING
from rlsuite.serving.options import PROXIES, ServeOptions

START_TIMEOUT_S = 240


class Floor:
    async def __call__(self, request: Request) -> JSONResponse:
        if request.method == "GET":
            return JSONResponse({"status": "ok"})
        body = await request.body()
        if request.url.path.endswith("/predict"):
            return JSONResponse({"classes": [0], "probabilities": [[1.0]]})
        return JSONResponse({"actions": [0] * len(json.loads(body)["observations"])})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--proxy", choices=PROXIES, default="serve")
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with haproxy.for_proxy(haproxy.ports_for(args.proxy, args.port), None):
        ray.init(log_to_driver=False)
        serve.start(http_options=HTTPOptions(host="127.0.0.1", port=args.port))
        app = serve.deployment(
            name="floor",
            max_ongoing_requests=MAX_ONGOING,
            logging_config={"enable_access_log": ServeOptions.access_log},
        )(Floor).bind()
        startup.deploy(app, "floor", START_TIMEOUT_S, "Ray's logs", ("127.0.0.1", args.port))
        print(f"serving the floor at http://127.0.0.1:{args.port}", flush=True)
        stop.wait()
        ray.shutdown()


if __name__ == "__main__":
    main()
