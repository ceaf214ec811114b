"""The Serve deployment: routes, dynamic batching and one log line per bad request.

`POST /act` (RL) or `POST /predict` (supervised) parse and check the request in the
replica's event loop, so a bad one is answered 400 before it joins a batch and never
fails the requests batched with it. Checked requests wait for `@serve.batch` to gather up
to `max_batch_size` of them (or `batch_wait_s`), and one forward pass answers them all.
`GET /healthz`: the replica answers. `GET /ready`: the model is loaded and serving (Serve
routes to a replica only once its constructor, which loads the model, returned).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ray import serve
from starlette.requests import Request
from starlette.responses import JSONResponse

from rlsuite.serving.inputs import BadRequest

logger = logging.getLogger("ray.serve")
ROUTES = ("/healthz", "/ready")
MAX_ONGOING = 64  # requests a replica takes at once (Serve's default, 5, would cap batches)


class Servable(Protocol):
    """What the deployment serves: a policy or a classifier, loaded in the replica."""

    route: str

    def describe(self) -> dict[str, Any]: ...

    def parse(self, body: bytes, content_type: str) -> list[Any]:
        """The request's items (observations, images, texts); BadRequest if malformed."""
        ...

    def predict(self, items: list[Any]) -> list[Any]:
        """One result per item, in one forward pass."""
        ...

    def answer(self, results: list[Any]) -> dict[str, Any]:
        """The JSON response to one request from its items' results."""
        ...


@dataclass(frozen=True)
class Model:
    """What a replica loads (plain values: shipped to every replica)."""

    checkpoint: Path
    kind: str
    """rl, onnx or supervised."""
    explore: bool = False
    onnx_file: Path | None = None
    observation_space: Any = None
    """onnx: the observation space requests are checked against."""

    def load(self) -> Servable:
        if self.kind == "onnx":
            from rlsuite.serving.onnx_policy import OnnxPolicy

            assert self.onnx_file is not None
            return OnnxPolicy(self.onnx_file, self.observation_space)
        if self.kind == "rl":
            from rlsuite.serving.policies import ServedPolicy

            return ServedPolicy(self.checkpoint, self.explore)
        from rlsuite.serving import classifiers

        return classifiers.load(self.checkpoint)


class Endpoint:
    """The ingress deployment (one class for every kind of model)."""

    def __init__(self, model: Model, max_batch_size: int, batch_wait_s: float) -> None:
        self.model = model.load()
        self.checkpoint = str(model.checkpoint)
        batcher: Any = self.batched  # serve.batch's wrapper: its settings are per replica
        batcher.set_max_batch_size(max_batch_size)
        batcher.set_batch_wait_timeout_s(batch_wait_s)

    async def __call__(self, request: Request) -> JSONResponse:
        path = request.url.path.rstrip("/") or "/"
        if path in ROUTES and request.method == "GET":
            return JSONResponse({"status": "ok", **self._status(path)})
        if path != self.model.route:
            routes = ", ".join([f"POST {self.model.route}", *(f"GET {r}" for r in ROUTES)])
            return self._error(
                404, path, f"no route {request.method} {path}; this server has {routes}"
            )
        if request.method != "POST":
            return self._error(405, path, f"{path} takes POST requests")
        try:
            items = self.model.parse(await request.body(), request.headers.get("content-type", ""))
        except BadRequest as error:
            return self._error(400, path, str(error))
        if not items:  # a request with nothing to act on (a session's end)
            return JSONResponse(self.model.answer([]))
        results = await self.batched(items)
        return JSONResponse(self.model.answer(results))

    def _status(self, path: str) -> dict[str, Any]:
        return {**self.model.describe(), "checkpoint": self.checkpoint} if path == "/ready" else {}

    def _error(self, status: int, path: str, message: str) -> JSONResponse:
        logger.warning("%s %s: %s", status, path, message)
        return JSONResponse({"error": message}, status_code=status)

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.002)
    async def batched(self, requests: list[list[Any]]) -> list[list[Any]]:
        """Every item of the batched requests in one forward pass, split back per request."""
        flat = [item for items in requests for item in items]
        results = self.model.predict(flat)
        answers, start = [], 0
        for items in requests:
            answers.append(results[start : start + len(items)])
            start += len(items)
        return answers


def build(
    model: Model,
    replicas: int,
    num_cpus: float,
    num_gpus: float,
    max_batch_size: int,
    batch_wait_s: float,
    access_log: bool = False,
) -> Any:
    """The Serve application, ready for `serve.run`."""
    deployment = serve.deployment(
        name="rlsuite",
        num_replicas=replicas,
        ray_actor_options={"num_cpus": num_cpus, "num_gpus": num_gpus},
        max_ongoing_requests=max(2 * max_batch_size, MAX_ONGOING),
        # Serve logs every request by default; a policy served to a control loop at
        # hundreds of requests/s would fill the disk, and a busy replica spent 11% of its
        # CPU on it. Refused requests keep their own line (Endpoint._error).
        logging_config={"enable_access_log": access_log},
    )(Endpoint)
    return deployment.bind(model, max_batch_size, batch_wait_s)
